"""What the journal's ring holds and what it weighs.

An entry keeps what a request sent clipped (``kept_fields``: the journal is bounded in
bytes, and its route must always render), the request parsed (``recorded_request``) and
the reply summed up (``recorded_reply``). A planned reply's entry is dear to make and
rarely read: it is kept as what it is made from (``PlannedEntry``, in the ring a
``PendingEntry``) until the journal is read. Each item weighs, for the ring's byte
budget, what its entry does once made (``entry_weight``, ``entry_bytes``). The entry
model itself is ``mockllm._journal``; ``MockLLM._record`` fills the ring.
"""

from __future__ import annotations

import json
import operator
import re
from typing import Any, NamedTuple

from mockllm._attempts import AttemptRule
from mockllm._journal import (
    JournalEntry,
    Outcome,
    RecordedReply,
    RecordedRequest,
    RecordedToolCall,
    UndeclaredToolCall,
)
from mockllm._limits import clip_text
from mockllm._plan import ReplyPlan
from mockllm._reply_breach import ImpossibleReply

__all__ = [
    "JOURNAL_TEXT_MAX",
    "JOURNAL_WARNINGS_MAX",
    "WEIGHED_FIELDS",
    "PendingEntry",
    "PlannedEntry",
    "entry_bytes",
    "entry_weight",
    "journal_entry",
    "kept_fields",
    "kept_text",
    "recorded_reply",
    "recorded_request",
    "texts_bytes",
]


JOURNAL_TEXT_MAX = 1000
"""The longest text the journal keeps of one field (a reply's text, an error)."""

_MESSAGE_FIELDS = ("messages", "input")


_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F]")


def _encodable(value: Any) -> Any:
    """``value`` with every string made encodable as UTF-8 (lone surrogates escaped)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    return value


def recorded_request(body: Any, raw: bytes = b"") -> RecordedRequest | None:
    """The ``RecordedRequest`` of a parsed JSON body (None if it is not an object);
    ``raw`` is its text, where a ``\\uD800``-style escape means a lone surrogate may
    hide inside, which the journal escapes so that it always renders."""
    if not isinstance(body, dict):
        return None
    if _SURROGATE_ESCAPE.search(raw):
        body = _encodable(body)
    messages: Any = []
    for field in _MESSAGE_FIELDS:
        if field in body:
            messages = body[field]
            break
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    tools = body.get("tools")
    model = body.get("model")
    return RecordedRequest.model_construct(
        model=model if isinstance(model, str) else None,
        messages=messages if isinstance(messages, list) else [],
        tools=tools if isinstance(tools, list) else [],
        parameters={k: v for k, v in body.items() if k not in ("model", "tools", *_MESSAGE_FIELDS)},
    )


def recorded_reply(plan: ReplyPlan, text_max: int) -> RecordedReply:
    """What the journal keeps of a reply: its text (clipped) and its tool calls."""
    calls = []
    for call in plan.tool_calls:
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            arguments = call.arguments
        calls.append(
            RecordedToolCall.model_construct(id=call.id, name=call.name, arguments=arguments, request_index=-1)
        )
    # Built from the plan's own typed fields: nothing to validate.
    return RecordedReply.model_construct(text=clip_text(plan.text, text_max), tool_calls=calls)


WEIGHED_FIELDS = (
    "method",
    "path",
    "model",
    "error",
    "fallback_reason",
    "instruction_id",
    "chain_id",
    "script_id",
    "explanation",
    "rebuilt_from",
)
"""The text fields of an entry its weight counts (``entry_bytes``), with its warnings."""


def texts_bytes(texts: list[str | None], body_bytes: int) -> int:
    """The weight of an entry of these texts (``WEIGHED_FIELDS``' and the warnings) and
    a kept request body of ``body_bytes``: its text and the object, roughly."""
    # A kept request body weighs its JSON text twice over: parsed, it takes more.
    present = list(filter(None, texts))
    return 1024 + 2 * body_bytes + sum(map(len, present)) + 64 * len(present)


JOURNAL_WARNINGS_MAX = 20
"""The most warnings an entry keeps."""


def kept_text(value: Any, limit: int) -> Any:
    """What the journal keeps of ``value``: a text clipped to ``limit`` characters (and
    made encodable); short ASCII text as it is (nothing to clip, no surrogate to escape)."""
    if isinstance(value, str) and (len(value) > limit or not value.isascii()):
        return clip_text(value, limit)
    return value


def kept_fields(fields: dict[str, Any], limit: int) -> dict[str, Any]:
    """``fields`` with everything a request sent clipped (``kept_text``), in place: the
    journal is bounded in bytes, and its route must always render."""
    for name, value in fields.items():
        fields[name] = kept_text(value, limit)
    if fields.get("warnings"):
        fields["warnings"] = [clip_text(w, limit) for w in fields["warnings"][:JOURNAL_WARNINGS_MAX]]
    return fields


class PlannedEntry(NamedTuple):
    """What the journal entry of a planned reply is made from, kept until the entry is
    read (most never are): the entry's own fields by their names, then what its parsed
    request (``sent``, ``raw``) and its reply's summary (``plan``; None: none) are made of."""

    method: str
    path: str
    protocol: str
    model: str | None
    stream: bool
    status: int
    error: str | None
    attempt: int
    attempt_rule: AttemptRule | None
    chain_id: str | None
    chain_length: int
    turn_index: int | None
    instruction_id: str | None
    fallback_reason: str | None
    warnings: list[str]
    script_id: str | None
    explanation: str | None
    rebuilt_from: str | None
    undeclared_tool_calls: list[UndeclaredToolCall]
    impossible_reply: list[ImpossibleReply]
    sent: Any
    raw: bytes
    plan: ReplyPlan | None

    def fields(self, text_max: int) -> dict[str, Any]:
        """The entry's fields, the reply's text clipped to ``text_max`` (the rest is
        clipped by ``kept_fields``)."""
        made = self._asdict()
        sent, raw, plan = made.pop("sent"), made.pop("raw"), made.pop("plan")
        made["request"] = recorded_request(sent, raw)
        if plan is not None:
            made["reply"], made["response_id"] = recorded_reply(plan, text_max), plan.response_id
        return made

    def weight(self, text_max: int, body_bytes: int) -> int:
        """What the entry will weigh (``entry_bytes``) once made: its texts as it keeps
        them (``WEIGHED_FIELDS``', then its warnings), a kept body of ``body_bytes``."""
        # Those present only (clipping keeps a text non-empty): ASCII texts within
        # ``text_max`` (as a scripted request's are) are kept as they are, which their
        # join tells in a few C calls.
        texts = list(filter(None, (*_weighed(self), *self.warnings[:JOURNAL_WARNINGS_MAX])))
        if "".join(texts).isascii() and max(map(len, texts), default=0) <= text_max:
            return texts_bytes(texts, body_bytes)
        return texts_bytes([kept_text(t, text_max) for t in texts], body_bytes)


_weighed = operator.attrgetter(*WEIGHED_FIELDS)


def entry_bytes(entry: JournalEntry) -> int:
    """A journal entry's weight for the byte budget (``texts_bytes``)."""
    return texts_bytes([*map(entry.__getattribute__, WEIGHED_FIELDS), *entry.warnings], entry._weight)


def journal_entry(index: int, outcome: Outcome, fields: dict[str, Any], body_bytes: int, outline: bool) -> JournalEntry:
    """The entry of one request, its kept ``fields`` (``kept_fields``); ``outline``: its
    request body is past a quarter of the journal's budget, so only its outline is kept."""
    entry = JournalEntry(index=index, outcome=outcome, **fields)
    if entry.reply is not None:
        for call in entry.reply.tool_calls:
            call.request_index = entry.index
    if entry.request is not None and outline:
        # A body this large would push the rest of the journal out: keep its outline.
        kept: dict[str, Any] = {"model": entry.model, "messages": [], "tools": [], "parameters": {}}
        entry.request = entry.request.model_copy(update=kept)
        entry.warnings.append(f"request body of {body_bytes} bytes not kept (over the journal's budget)")
    else:
        entry._weight = body_bytes
    return entry


class PendingEntry:
    """A journal entry of a scripted reply, kept as what it is made from until the journal
    is read: most entries never are, and making one (the parsed request, the reply's
    summary, pydantic's checks) was a third of ``handle``'s time. ``weight`` is what its
    entry will weigh (``MockLLM._record_planned``)."""

    __slots__ = ("_body_bytes", "_built", "_planned", "index", "outcome", "weight")

    def __init__(self, index: int, outcome: Outcome, planned: PlannedEntry, body_bytes: int, weight: int) -> None:
        self.index, self.outcome, self.weight = index, outcome, weight
        self._planned, self._body_bytes = planned, body_bytes
        self._built: JournalEntry | None = None

    def built(self) -> JournalEntry:
        """The entry (built once; the caller holds the journal's lock)."""
        if self._built is None:
            fields = kept_fields(self._planned.fields(JOURNAL_TEXT_MAX), JOURNAL_TEXT_MAX)
            self._built = journal_entry(self.index, self.outcome, fields, self._body_bytes, False)
        return self._built


def entry_weight(item: JournalEntry | PendingEntry) -> int:
    """What an item of the ring weighs for its byte budget: a pending entry's weight as
    made, a made entry's ``entry_bytes``."""
    return item.weight if type(item) is PendingEntry else entry_bytes(item)  # type: ignore[arg-type]
