"""Trajectory assertions: did the app make the tool calls a test expects?

``assert_trajectory(actual, expected, mode=..., args=...)`` compares the tool calls of
``actual`` with ``expected``, in the match modes agentevals made popular:

- ``strict``: the same calls in the same order;
- ``unordered``: the same calls, in any order (each call used once);
- ``superset``: the app made at least the expected calls (others may come between);
- ``subset``: the app made no call outside the expected ones (it may make fewer).

Two calls match when their names are equal and their arguments match by ``args``:
``exact`` (equal), ``subset`` (every expected argument is present with an equal
value; the call may carry more), ``ignore``, or a function ``(expected_args,
actual_args) -> bool``. An expected call given as a bare name, or as a dict without
``args``, matches any arguments.

The modes form a lattice, for any one ``args``: ``strict`` implies ``unordered``, and
``unordered`` holds exactly when both ``superset`` and ``subset`` hold (a matching that
covers every expected call and one that covers every actual call give one that covers
both — Mendelsohn–Dulmage); no other implication holds. Across argument modes, a
match under ``exact`` is one under ``subset``, and that one under ``ignore``.

``actual`` is any of, duck-typed (mockllm imports nothing of the harness):

- the mock: a ``MockLLM``, the pytest ``mockllm`` fixture, anything with a
  ``journal``, or the journal's entries; read through ``journal.tool_calls()`` where
  it exists, else each entry's ``tool_calls`` (a journal that records no tool calls
  is a ``TypeError`` saying what to pass instead);
- events (or a run's result with an ``events`` attribute): dicts or objects whose ``type`` (``event_type``, ``kind``) is ``tool_use``,
  ``tool_call`` or ``function_call``, their fields at the top level or in ``data`` (the
  harness's ``Event``); the name from ``toolName``, ``tool_name``, ``name`` or ``tool``,
  the arguments from ``args``, ``arguments``, ``input`` or ``parameters`` (a JSON
  string is parsed); other events are skipped;
- calls of your own: ``{"name": ..., "args": ...}`` dicts, ``(name, args)`` pairs or
  objects with ``name`` and ``args``/``arguments``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ToolCall", "assert_trajectory", "tool_calls_of"]

Mode = Literal["strict", "unordered", "subset", "superset"]
ArgsMatcher = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
MODES = ("strict", "unordered", "subset", "superset")
ARGS_MODES = ("exact", "subset", "ignore")

_CALL_TYPES = frozenset({"tool_use", "tool_call", "function_call", "toolUse", "toolCall", "functionCall"})
_TYPE_KEYS = ("type", "event_type", "eventType", "kind")
_NAME_KEYS = ("toolName", "tool_name", "name", "tool")
_ARGS_KEYS = ("args", "arguments", "input", "parameters")
_ANY = object()


@dataclass(frozen=True)
class ToolCall:
    """One tool call: its name and arguments (``args`` is ``None`` in an expected call
    that matches any arguments)."""

    name: str
    args: Any = None

    def __str__(self) -> str:
        if self.args is None:
            return f"{self.name}(…)"
        return f"{self.name}({json.dumps(self.args, sort_keys=True, ensure_ascii=False, default=str)})"


def _field(item: Any, key: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(key, _ANY)
    return getattr(item, key, _ANY)


def _first(item: Any, keys: Iterable[str]) -> Any:
    for key in keys:
        value = _field(item, key)
        if value is not _ANY:
            return value
    return _ANY


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else {}
        except ValueError:
            return value
    if value is _ANY or value is None:
        return {}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def _call(item: Any, where: str) -> ToolCall | None:
    """The tool call ``item`` is (an event of another type: None)."""
    if isinstance(item, ToolCall):
        return item
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        return ToolCall(item[0], _arguments(item[1]))
    kind = _first(item, _TYPE_KEYS)
    data = _field(item, "data")
    body = data if kind is not _ANY and isinstance(data, Mapping) else item
    if kind is not _ANY and str(getattr(kind, "value", kind)) not in _CALL_TYPES:
        return None
    name = _first(body, _NAME_KEYS)
    if not isinstance(name, str):
        raise TypeError(
            f"{where} is not a tool call: {item!r} has no tool name ({', '.join(_NAME_KEYS)}). Pass the run's "
            'events, the mock (or its journal), or {"name": ..., "args": ...} dicts.'
        )
    return ToolCall(name, _arguments(_first(body, _ARGS_KEYS)))


def _journal_calls(source: Any) -> list[Any] | None:
    """The tool calls a mock's journal holds, None if ``source`` is no journal."""
    method = getattr(source, "tool_calls", None)
    if callable(method):
        return list(method())
    journal = getattr(source, "journal", None)
    if journal is not None and not isinstance(source, Mapping):
        entries = journal() if callable(journal) else journal
        tool_calls = getattr(entries, "tool_calls", None)
        if callable(tool_calls):
            return list(tool_calls())
        return _entry_calls(list(entries))
    return None


def _entry_calls(entries: list[Any]) -> list[Any] | None:
    # A journal entry has a method, path and status; an event or a call has none of these.
    if not entries or not all(hasattr(e, "status") and hasattr(e, "path") for e in entries):
        return None if entries else []
    # The journal's entries (``mockllm.JournalEntry``): each reply's tool calls, in order.
    return [call for e in entries for call in (e.reply.tool_calls if getattr(e, "reply", None) else [])]


def tool_calls_of(source: Any) -> list[ToolCall]:
    """The tool calls of ``source`` (see the module docstring), in order."""
    items = _journal_calls(source)
    if items is None and not isinstance(source, Mapping) and hasattr(source, "events"):
        source = source.events  # a run's result holding its events
    if items is None:
        if isinstance(source, (str, bytes, Mapping)) or not isinstance(source, Iterable):
            raise TypeError(
                f"assert_trajectory takes the mock, its journal, events or a list of tool calls; got "
                f"{type(source).__name__}"
            )
        items = list(source)
        entries = _entry_calls(items)
        if entries is not None:
            items = entries
    calls = [_call(item, f"item {i}") for i, item in enumerate(items)]
    return [call for call in calls if call is not None]


def _expected(items: Iterable[Any]) -> list[ToolCall]:
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append(ToolCall(item))
        elif isinstance(item, Mapping) and "args" not in item and "arguments" not in item:
            call = _call(item, f"expected call {i + 1}")
            if call is None:
                raise TypeError(f"expected call {i + 1} is not a tool call: {item!r}")
            out.append(ToolCall(call.name))
        else:
            call = _call(item, f"expected call {i + 1}")
            if call is None:
                raise TypeError(f"expected call {i + 1} is not a tool call: {item!r}")
            out.append(call)
    return out


def _args_matcher(args: str | ArgsMatcher) -> ArgsMatcher:
    if callable(args):
        return args
    if args == "exact":
        return lambda expected, actual: expected == actual
    if args == "subset":
        return lambda expected, actual: (
            (
                isinstance(expected, Mapping)
                and isinstance(actual, Mapping)
                and all(k in actual and actual[k] == v for k, v in expected.items())
            )
            or expected == actual
        )
    if args == "ignore":
        return lambda expected, actual: True
    raise ValueError(f"args must be one of {ARGS_MODES} or a function (expected, actual) -> bool; got {args!r}")


def _matching(expected: list[ToolCall], actual: list[ToolCall], same: Callable[[int, int], bool]) -> dict[int, int]:
    """A maximum matching expected index -> actual index (Kuhn's augmenting paths,
    expected calls taken in order, so the first ones are matched first)."""
    owner: dict[int, int] = {}

    def place(e: int, seen: set[int]) -> bool:
        for a in range(len(actual)):
            if a not in seen and same(e, a):
                seen.add(a)
                if a not in owner or place(owner[a], seen):
                    owner[a] = e
                    return True
        return False

    for e in range(len(expected)):
        place(e, set())
    return {e: a for a, e in owner.items()}


def _table(
    expected: list[ToolCall], actual: list[ToolCall], rows: list[tuple[int | None, int | None]], mark: int
) -> str:
    left = [str(expected[e]) if e is not None else "-" for e, _ in rows]
    width = max([len("expected"), *(len(t) for t in left)])
    lines = [f"    {'expected'.ljust(width)}  actual"]
    for i, ((_, a), text) in enumerate(zip(rows, left, strict=True)):
        right = str(actual[a]) if a is not None else "-"
        lines.append(f"{'>' if i == mark else ' '} {i + 1:>2} {text.ljust(width)}  {right}")
    return "\n".join(lines)


def assert_trajectory(
    actual: Any, expected: Iterable[Any], *, mode: Mode = "strict", args: str | ArgsMatcher = "exact"
) -> None:
    """Assert the tool calls of ``actual`` match ``expected`` (see the module docstring);
    an ``AssertionError`` shows both side by side, the first difference marked."""
    __tracebackhide__ = True
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    match_args = _args_matcher(args)
    made, wanted = tool_calls_of(actual), _expected(expected)

    def same(e: int, a: int) -> bool:
        want, got = wanted[e], made[a]
        return want.name == got.name and (want.args is None or bool(match_args(want.args, got.args)))

    how = f"mode={mode!r}, args={getattr(args, '__name__', args)!r}"
    if mode == "strict":
        first = next((i for i in range(min(len(wanted), len(made))) if not same(i, i)), None)
        if first is None and len(wanted) == len(made):
            return
        first = min(len(wanted), len(made)) if first is None else first
        rows: list[tuple[int | None, int | None]] = [
            (i if i < len(wanted) else None, i if i < len(made) else None) for i in range(max(len(wanted), len(made)))
        ]
        want = str(wanted[first]) if first < len(wanted) else "no more calls"
        got = str(made[first]) if first < len(made) else "no more calls"
        reason = f"call {first + 1} differs: expected {want}, got {got}"
        raise AssertionError(f"trajectory mismatch ({how}): {reason}\n{_table(wanted, made, rows, first)}")
    matched = _matching(wanted, made, same)
    missing = [e for e in range(len(wanted)) if e not in matched] if mode in ("unordered", "superset") else []
    used = set(matched.values())
    extra = [a for a in range(len(made)) if a not in used] if mode in ("unordered", "subset") else []
    if not missing and not extra:
        return
    rows = [(e, matched.get(e)) for e in range(len(wanted))]
    rows += [(None, a) for a in range(len(made)) if a not in used]
    if missing:
        mark = missing[0]
        reason = f"expected call {missing[0] + 1} was not made: {wanted[missing[0]]}"
    else:
        mark = rows.index((None, extra[0]))
        reason = f"call {extra[0] + 1} was not expected: {made[extra[0]]}"
    raise AssertionError(f"trajectory mismatch ({how}): {reason}\n{_table(wanted, made, rows, mark)}")
