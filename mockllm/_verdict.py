"""The verdict: one rule, at every door, for when a test that used the mock may pass.

A mock that answers anything is a test that passes anything. A test that used the mock
fails when any of these happened, unless the test opted out explicitly:

====================  =========================================================  ======================
problem (``ProblemKind``)     what it means                                              opt-out
====================  =========================================================  ======================
``fallback``           a request got the fallback reply (nothing scripted it)      ``allow_fallback``
``rejected``           a 4xx no script asked for (a real provider refuses it)      ``allow_fallback``
``mock_failure``       the mock failed on a request (its own 500)                  ``allow_fallback``
``unused_step``        a scripted step no request reached                          ``allow_unused_steps``
``undeclared_tool``    a scripted tool call the request did not declare, or        ``allow_undeclared_tools``
                       whose arguments break the declared JSON schema
``impossible_reply``   a scripted reply no provider could give the request: past   ``allow_impossible_replies``
                       its output-token limit, or breaking its structured output
``unmocked_host``      a request to a provider host the mock does not serve        ``allow_real_providers``
====================  =========================================================  ======================

The engine counts problems as it answers (``Tally``, in the mock's state), apart from the journal's ring,
so a problem is never forgotten however many requests follow it; the first
``KEPT_PER_KIND`` of each kind are kept to show. ``MockLLM.findings()`` returns them
(``Findings``, JSON over the server's ``GET /_mockllm/findings``); ``verify_findings``
applies the rule and raises ``StrictnessError`` listing each problem with ``explain()``'s report, the
candidates, and the opt-out in the words of the door the test used (``OptOut``).

The doors: ``MockLLM.verify()`` and ``with MockLLM() as mock:``, ``intercept()``'s exit,
the pytest fixtures' teardown, scenario items and ``harness replay``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from pydantic import BaseModel, ConfigDict

from mockllm._exceptions import StrictnessError
from mockllm._journal import JournalEntry, Outcome, RejectionCause
from mockllm._reply_breach import ReplyBreach
from mockllm._state import Codec, MemoryState, State

__all__ = [
    "KEPT_PER_KIND",
    "Allowances",
    "Findings",
    "ProblemKind",
    "OptOut",
    "Problem",
    "StrictnessError",
    "Tally",
    "constructor_opt_out",
    "failures",
    "report",
    "verify_findings",
]

KEPT_PER_KIND = 20
"""How many problems of each kind are kept to show; every one is counted."""


class ProblemKind(str, Enum):
    """A way a test could pass without the app doing what the test says."""

    FALLBACK = "fallback"
    REJECTED = "rejected"
    MOCK_FAILURE = "mock_failure"
    UNUSED_STEP = "unused_step"
    UNDECLARED_TOOL = "undeclared_tool"
    IMPOSSIBLE_REPLY = "impossible_reply"
    UNMOCKED_HOST = "unmocked_host"

    @property
    def allowance(self) -> str:
        """The name of the opt-out that allows this kind."""
        return _ALLOWANCE[self]


_ALLOWANCE = {
    ProblemKind.FALLBACK: "allow_fallback",
    ProblemKind.REJECTED: "allow_fallback",
    ProblemKind.MOCK_FAILURE: "allow_fallback",
    ProblemKind.UNUSED_STEP: "allow_unused_steps",
    ProblemKind.UNDECLARED_TOOL: "allow_undeclared_tools",
    ProblemKind.IMPOSSIBLE_REPLY: "allow_impossible_replies",
    ProblemKind.UNMOCKED_HOST: "allow_real_providers",
}

_PROBLEM_OUTCOMES = {
    Outcome.FALLBACK: ProblemKind.FALLBACK,
    Outcome.REJECTED: ProblemKind.REJECTED,
    Outcome.MOCK_FAILURE: ProblemKind.MOCK_FAILURE,
}


# Built on first use, not at import: a server that has answered nothing needs none.
_BUILT_ON_FIRST_USE = ConfigDict(defer_build=True)


class Problem(BaseModel):
    """One problem: ``summary`` is one line naming the request or step; ``detail``
    holds more lines (``explain()``'s report for a fallback)."""

    model_config = _BUILT_ON_FIRST_USE

    kind: ProblemKind
    summary: str
    detail: str = ""
    request_index: int | None = None
    cause: RejectionCause | None = None
    """Why a recording refused the request (a ``rejected`` problem): its advice is to record."""
    breach: ReplyBreach | None = None
    """How the scripted reply breaks its request (an ``impossible_reply`` problem): its advice."""


class Findings(BaseModel):
    """What a mock saw that the rule judges: ``counts`` of every problem, the first
    ``KEPT_PER_KIND`` of each kind in ``problems``, and the registered scripts (the
    candidates a fallback request could have matched)."""

    model_config = _BUILT_ON_FIRST_USE

    counts: dict[ProblemKind, int] = {}
    problems: list[Problem] = []
    scripts: list[str] = []

    def plus(self, extra: Iterable[Problem]) -> Findings:
        """These findings and ``extra`` problems a door found itself (refused hosts)."""
        extra = list(extra)
        counts = Counter(self.counts)
        counts.update(p.kind for p in extra)
        return Findings(counts=dict(counts), problems=[*self.problems, *extra], scripts=self.scripts)


@dataclass(frozen=True)
class Allowances:
    """The opt-outs in force; each is off by default."""

    allow_fallback: bool = False
    allow_unused_steps: bool = False
    allow_undeclared_tools: bool = False
    allow_real_providers: bool = False
    allow_impossible_replies: bool = False

    def allows(self, kind: ProblemKind) -> bool:
        return bool(getattr(self, kind.allowance))

    def overridden(self, **given: bool | None) -> Allowances:
        """These opt-outs with those ``given`` (by name) that are not None."""
        return replace(self, **{name: bool(value) for name, value in given.items() if value is not None})


OptOut = Callable[[str], "str | None"]
"""How a door says an opt-out (given its name, ``allow_fallback``...) in a failure message;
None where the door has none (the message then gives only the fix)."""


def constructor_opt_out(name: str) -> str:
    """The opt-out as a bare ``MockLLM`` takes it."""
    return f"MockLLM({name}=True) (or mock.verify({name}=True))"


def _where(entry: JournalEntry) -> str:
    turn = f", turn {entry.turn_index}" if entry.turn_index is not None else ""
    return f"{entry.method} {entry.path} (request {entry.index}{turn})"


def problems_of(entry: JournalEntry) -> list[Problem]:
    """The problems one journal entry shows, read from its typed fields."""
    found = []
    kind = _PROBLEM_OUTCOMES.get(entry.outcome)
    if kind is ProblemKind.FALLBACK:
        found.append(
            Problem(
                kind=kind,
                summary=f"{_where(entry)}: fallback reply, {entry.fallback_reason}",
                detail=entry.explanation or "",
                request_index=entry.index,
            )
        )
    elif kind is not None:
        verb = "the mock failed with" if kind is ProblemKind.MOCK_FAILURE else "rejected with"
        found.append(
            Problem(
                kind=kind,
                summary=f"{_where(entry)}: {verb} {entry.status}: {entry.error}",
                request_index=entry.index,
                cause=entry.rejection,
            )
        )
    step = f" (instruction {entry.instruction_id!r})" if entry.instruction_id is not None else ""
    said: list[tuple[ProblemKind, str, ReplyBreach | None]]
    said = [
        (ProblemKind.UNDECLARED_TOOL, f"{f'tool call {c.name!r}: ' if c.name else ''}{c.reason}", None)
        for c in entry.undeclared_tool_calls
    ]
    said += [(ProblemKind.IMPOSSIBLE_REPLY, breach.reason, breach.breach) for breach in entry.impossible_reply]
    for kind, reason, breach in said:
        found.append(
            Problem(kind=kind, summary=f"{_where(entry)}{step}: {reason}", request_index=entry.index, breach=breach)
        )
    return found


class Tally:
    """The problems of the requests a mock answered, counted apart from the journal, in
    ``state`` (``mockllm._state``: shared by ``serve --workers``). Not thread-safe: the
    engine calls it under its lock."""

    def __init__(self, state: State | None = None) -> None:
        where = state if state is not None else MemoryState()
        self._counts = where.counters("problems")
        self._kept = {
            kind: where.log(f"problems-{kind.value}", count=KEPT_PER_KIND, codec=_PROBLEM_CODEC) for kind in ProblemKind
        }

    @property
    def counts(self) -> Counter[ProblemKind]:
        return Counter({ProblemKind(kind): n for kind, n in self._counts.items() if n})

    def note(self, entry: JournalEntry) -> None:
        if entry.outcome not in _PROBLEM_OUTCOMES and not entry.undeclared_tool_calls and not entry.impossible_reply:
            return
        for problem in problems_of(entry):
            self.add(problem)

    def add(self, problem: Problem) -> None:
        if self._counts.incr(problem.kind.value) <= KEPT_PER_KIND:
            self._kept[problem.kind].append(lambda _: problem)

    def findings(self, more: Iterable[Problem] = (), scripts: Sequence[str] = ()) -> Findings:
        """The findings so far, with ``more`` problems known elsewhere (unused steps)."""
        counts = self.counts
        problems = [p for kind in ProblemKind for p in self._kept[kind].items()]
        for problem in more:
            counts[problem.kind] += 1
            problems.append(problem)
        return Findings(counts=dict(counts), problems=problems, scripts=list(scripts))

    def clear(self) -> None:
        self._counts.clear()
        for kept in self._kept.values():
            kept.clear()


_PROBLEM_CODEC: Codec[Problem] = Codec(lambda p: p.model_dump_json(), Problem.model_validate_json)


# -- the rule --------------------------------------------------------------------------


def failures(findings: Findings, allowances: Allowances = Allowances()) -> dict[ProblemKind, int]:
    """The kinds of problem the rule fails on, with their counts."""
    return {kind: n for kind, n in findings.counts.items() if n and not allowances.allows(ProblemKind(kind))}


_ADVICE = {
    ProblemKind.FALLBACK: "Script every model call the code makes (an instruction chain in a user message, or "
    "mock.script(chain, match=...))",
    ProblemKind.REJECTED: "Fix the request the code sends (the mock answers what the real provider would refuse "
    "with a 4xx), or script the error ({'error': {'status': ...}})",
    ProblemKind.MOCK_FAILURE: "This is a bug in mockllm; please report it with the request id",
    ProblemKind.UNUSED_STEP: "The code under test made fewer model calls than the script expects. Shorten the script",
    ProblemKind.UNDECLARED_TOOL: "A real provider only calls a tool the request declares and its tool choice allows, "
    "with arguments that fit its schema. Declare the tool in the request's tools, or fix the script's tool calls "
    "or the request's tool_choice",
    ProblemKind.IMPOSSIBLE_REPLY: "A real provider gives no reply past the request's output-token limit and "
    "keeps its strict structured output",
    ProblemKind.UNMOCKED_HOST: "The request was refused before any connection. Point the client at the mock "
    "(patch_env, base_url, an http_client from the fixture, or intercept())",
}

# What fixes a rejection a recording made: the plugin's flags (docs/recording.md).
_RECORDING_ADVICE = {
    RejectionCause.REPLAY_MISS: "Re-record the test's file: run pytest with --mockllm-record-mode new (records "
    "the requests not recorded yet) or all (records everything again), and --mockllm-upstream URL; or normalise "
    "the field that changes from run to run (the 'ignore' or 'replace' of the mockllm_recording_config "
    "fixture). A directory served by mockllm serve --recordings is re-recorded with mockllm record",
    RejectionCause.RECORDING_MISSING: "Record the test's file: run pytest with --mockllm-record-mode once and "
    "--mockllm-upstream URL",
    RejectionCause.NO_UPSTREAM: "Name where recording sends requests: --mockllm-upstream URL (or PROTOCOL=URL), "
    "or the ini option mockllm_upstream",
}


# What fixes a scripted reply no provider could give (``mockllm._reply_breach``).
_BREACH_ADVICE = {
    ReplyBreach.OVER_OUTPUT_LIMIT: "A real provider cuts a reply at the request's output-token limit. Script a "
    "shorter reply, raise the request's limit, or script stop_reason: max_tokens to test how the code handles "
    "a truncated reply",
    ReplyBreach.BREAKS_OUTPUT_FORMAT: "A real provider's strict structured output always fits the request's "
    "format. Script text that fits the schema (JSON), fix the request's format, or script stop_reason: "
    "max_tokens (a cut reply) or refusal to test those branches",
}


def _advice(problem: Problem) -> str:
    if problem.cause is not None:
        return _RECORDING_ADVICE[problem.cause]
    return _BREACH_ADVICE[problem.breach] if problem.breach is not None else _ADVICE[problem.kind]


_HEADINGS = {
    ProblemKind.FALLBACK: "request(s) to the mock got the fallback reply",
    ProblemKind.REJECTED: "request(s) to the mock were rejected with a 4xx no script asked for",
    ProblemKind.MOCK_FAILURE: "request(s) made the mock fail",
    ProblemKind.UNUSED_STEP: "scripted instruction step(s) were never used",
    ProblemKind.UNDECLARED_TOOL: "scripted tool call(s) were not allowed by the request's declared tools",
    ProblemKind.IMPOSSIBLE_REPLY: "scripted reply(ies) were ones a real provider never gives to such a request",
    ProblemKind.UNMOCKED_HOST: "request(s) went to hosts the mock does not serve",
}


def report(findings: Findings, allowances: Allowances = Allowances(), *, opt_out: OptOut = constructor_opt_out) -> str:
    """The failure message for ``findings`` under ``allowances``; empty when the test may pass."""
    failing = failures(findings, allowances)
    sections = []
    for kind in ProblemKind:
        count = failing.get(kind)
        if not count:
            continue
        shown = [p for p in findings.problems if p.kind is kind]
        lines = [f"{count} {_HEADINGS[kind]}:"]
        for problem in shown:
            lines.append(f"  - {problem.summary}")
            lines.extend(f"      {line}" for line in problem.detail.splitlines())
        if count > len(shown):
            lines.append(f"  ... and {count - len(shown)} more (the first {len(shown)} are shown)")
        if kind is ProblemKind.FALLBACK:
            if findings.scripts:
                lines.append("No registered script matched them, amongst:")
                lines.extend(f"  - {s}" for s in findings.scripts)
            else:
                lines.append("No script is registered to answer requests without instruction tags.")
        # One line of advice per cause shown (a replay miss is fixed by recording, not in the code).
        advice = list(dict.fromkeys(_advice(p) for p in shown)) or [_ADVICE[kind]]
        lines.extend(f"{line}." for line in advice[:-1])
        door = opt_out(kind.allowance)
        lines.append(f"{advice[-1]}, or allow this with {door}." if door else f"{advice[-1]}.")
        sections.append("\n".join(lines))
    return "\n".join(sections)


def verify_findings(
    findings: Findings,
    allowances: Allowances = Allowances(),
    *,
    opt_out: OptOut = constructor_opt_out,
    error: type[StrictnessError] = StrictnessError,
) -> None:
    """Raise ``error`` (a ``StrictnessError``) listing every problem of ``findings`` that
    ``allowances`` does not allow, each opt-out said as ``opt_out`` says it."""
    __tracebackhide__ = True
    message = report(findings, allowances, opt_out=opt_out)
    if message:
        raise error(message)
