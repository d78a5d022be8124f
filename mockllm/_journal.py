"""The request journal: what the mock received and what it answered, one entry a request.

Each ``JournalEntry`` carries typed fields a reader tests, never prose to parse:

- ``outcome`` (an ``Outcome``): scripted, scripted error, fallback, rejected (a 4xx no
  script asked for), mock failure (the mock's own 500) or served (an endpoint that is
  not a model call: models, token counting, embeddings).
- ``request``: the parsed request (``RecordedRequest``: model, messages, tools and the
  other parameters), as respx's ``calls[i].request`` lets a test assert what was sent.
- ``reply``: the reply's text and tool calls (``RecordedReply``).
- ``undeclared_tool_calls``: the reply's scripted tool calls that the request did not
  declare, or whose arguments break the declared JSON schema.
- ``impossible_reply``: how the scripted reply is one no provider could give to the
  request (over its output-token limit, breaking its structured output).

``Journal`` is the list ``MockLLM.journal`` returns (newest last) with a small query API:
``journal.requests(model=...)``, ``journal.tool_calls(name=...)``. The journal is a ring
(bounded by count and bytes); what strictness needs is counted apart
(``mockllm._verdict``), so a test's verdict never depends on the ring's size. What an
entry keeps of a request, and what it weighs in the ring, is ``mockllm._journal_ring``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from mockllm._attempts import AttemptRule
from mockllm._reply_breach import ImpossibleReply
from mockllm._state import Codec

__all__ = [
    "JOURNAL_CODEC",
    "Journal",
    "JournalEntry",
    "Outcome",
    "RecordedReply",
    "RecordedRequest",
    "RecordedToolCall",
    "RejectionCause",
    "UndeclaredToolCall",
]


class Outcome(str, Enum):
    """How the mock answered one request."""

    SCRIPTED = "scripted"
    """A scripted step answered (an instruction chain or a registered script)."""
    SCRIPTED_ERROR = "scripted_error"
    """A scripted fault: an HTTP error or an error cut into the stream."""
    FALLBACK = "fallback"
    """No step answered: the mock's fallback reply (``fallback_reason`` says why)."""
    REJECTED = "rejected"
    """A 4xx that no script asked for: what a real provider would refuse."""
    MOCK_FAILURE = "mock_failure"
    """The mock failed on the request (a 500 naming a bug in mockllm)."""
    SERVED = "served"
    """An endpoint that is not a model call (models, token counts, embeddings)."""

    @property
    def scripted(self) -> bool:
        """Whether a script chose this answer."""
        return self in (Outcome.SCRIPTED, Outcome.SCRIPTED_ERROR)


class RejectionCause(str, Enum):
    """Why a request was ``REJECTED`` when a recording, not the provider's checks, refused
    it: what tells the verdict to advise recording rather than fixing the request."""

    REPLAY_MISS = "replay_miss"
    """No recorded exchange matches the request (``mockllm._recording.replay``)."""
    RECORDING_MISSING = "recording_missing"
    """The test has no recording file yet, and its record mode replays only."""
    NO_UPSTREAM = "no_upstream"
    """The request was to be recorded, and no upstream was named for it."""


# Built on first use, not at import: a server that has answered nothing needs none.
_BUILT_ON_FIRST_USE = ConfigDict(defer_build=True)


class RecordedToolCall(BaseModel):
    """One tool call of a reply: ``arguments`` parsed from its JSON text."""

    model_config = _BUILT_ON_FIRST_USE

    id: str
    name: str
    arguments: Any = None
    request_index: int = -1
    """The journal index of the request whose reply made it."""


class UndeclaredToolCall(BaseModel):
    """A scripted tool call the request did not allow: ``reason`` says how (the name
    is not among ``declared``, the arguments break the declared schema, the tool choice
    forbids it). ``name`` is empty for a reply that makes no call where the request's
    tool choice requires one."""

    model_config = _BUILT_ON_FIRST_USE

    name: str
    reason: str
    declared: list[str] = []


class RecordedRequest(BaseModel):
    """What the app sent, parsed: ``messages`` is the request's message list (``input``
    for the Responses API, a string made one user message), ``tools`` its declared
    tools as sent, ``parameters`` every other field (``temperature``, ``stream``,
    ``system``, ``tool_choice``...)."""

    model_config = _BUILT_ON_FIRST_USE

    model: str | None = None
    messages: list[Any] = []
    tools: list[Any] = []
    parameters: dict[str, Any] = {}

    @property
    def tool_names(self) -> list[str]:
        """The names of the declared tools, in order."""
        names = []
        for tool in self.tools:
            if isinstance(tool, dict):
                function = tool.get("function")
                inner = function if isinstance(function, dict) else tool
                name = inner.get("name")
                if isinstance(name, str):
                    names.append(name)
        return names


class RecordedReply(BaseModel):
    """What the reply said: its text and its tool calls."""

    model_config = _BUILT_ON_FIRST_USE

    text: str = ""
    tool_calls: list[RecordedToolCall] = []


class JournalEntry(BaseModel):
    """What the mock received and what it chose, for one request."""

    model_config = _BUILT_ON_FIRST_USE

    index: int
    method: str
    path: str
    protocol: str | None
    outcome: Outcome = Outcome.SERVED
    """How the request was answered: the field strictness reads."""
    model: str | None = None
    stream: bool = False
    status: int
    attempt: int = 0
    attempt_rule: AttemptRule | None = None
    """How ``attempt`` was counted: ``header`` (``x-stainless-retry-count``) or ``repeat``
    (the Nth identical request); see ``mockllm._attempts``."""
    chain_id: str | None = None
    chain_length: int = 0
    turn_index: int | None = None
    instruction_id: str | None = None
    fallback_reason: str | None = None
    error: str | None = None
    """Why the request was rejected, or which scripted fault it got (for reading)."""
    rejection: RejectionCause | None = None
    """Why a recording refused the request; None for a provider's own 4xx."""
    warnings: list[str] = []
    script_id: str | None = None
    """The registered script that answered (``MockLLM.script``), if one did."""
    explanation: str | None = None
    """``explain()``'s report, for a request that got the fallback reply."""
    rebuilt_from: str | None = None
    """The held id whose history the request was rebuilt from (an Anthropic thread's
    ``previous_message_id``, a Responses ``previous_response_id`` or ``conversation``);
    None when the client sent the whole history. See ``mockllm._held``."""
    request: RecordedRequest | None = None
    """The parsed request, for a model call whose body was JSON."""
    reply: RecordedReply | None = None
    """The reply's text and tool calls, for a reply that was not an error."""
    response_id: str | None = None
    """The reply's id, whence its wire ids (``mockllm._wire.ids``); None with no reply."""
    undeclared_tool_calls: list[UndeclaredToolCall] = []
    """Scripted tool calls the request did not declare or whose arguments break the schema."""
    impossible_reply: list[ImpossibleReply] = []
    """How the scripted reply breaks what the request lets a provider say (``mockllm._reply_breach``)."""
    _weight: int = PrivateAttr(default=0)


class Journal(list[JournalEntry]):
    """The journal's entries, newest last, with queries a test asserts on."""

    def requests(
        self, *, model: str | None = None, protocol: str | None = None, path: str | None = None
    ) -> list[RecordedRequest]:
        """The parsed requests of the model calls, oldest first, of ``model``,
        ``protocol`` and ``path`` where given."""
        return [
            entry.request
            for entry in self
            if entry.request is not None
            and (model is None or entry.model == model)
            and (protocol is None or entry.protocol == protocol)
            and (path is None or entry.path == path)
        ]

    def tool_calls(self, name: str | None = None) -> list[RecordedToolCall]:
        """The tool calls the mock's replies made, oldest first (those named ``name``)."""
        return [
            call
            for entry in self
            if entry.reply is not None
            for call in entry.reply.tool_calls
            if name is None or call.name == name
        ]

    def with_outcome(self, *outcomes: Outcome) -> list[JournalEntry]:
        """The entries answered with one of ``outcomes``."""
        return [entry for entry in self if entry.outcome in outcomes]


JOURNAL_CODEC: Codec[JournalEntry] = Codec(
    lambda entry: entry.model_dump_json(exclude_defaults=True), JournalEntry.model_validate_json
)
"""How a shared state (``mockllm._state``) writes a journal entry and reads it back."""
