"""The agent runner: the event flows of seed 002, against a model over HTTP.

``AgentRunner.run(prompt, session_id, on_event, user_id, options)`` sends the
prompt, streams the model's turn, runs the tools it asks for (pausing for approval on
write tools), sends the results back, and loops until the model stops::

    user_message_sent                         persisted
    thinking_chunk* thinking_complete          transient   (extended thinking)
    message_chunk*                             transient
    thinking, message(stopReason)              persisted
    tool_use [approval_requested (pending), approval_resolved] tool_result   per call
    ... next model turn ...
    complete                                   transient   (success only)
    error                                      persisted   (instead of complete)
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from harness.events import Event, Listener
from harness.systems.agent.approvals import ApprovalManager, ApprovalRequest
from harness.systems.agent.emitter import EventEmitter
from harness.systems.agent.files import FileAccessDenied, FileStore, StoredFile
from harness.systems.agent.store import EventStore, InMemoryMessageQueue, MessageQueue, SQLiteEventStore
from harness.systems.agent.tools import ToolError, ToolRegistry
from harness.systems.llm import (
    AssistantTurn,
    ConversationItem,
    ModelClient,
    ModelError,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolResults,
    TurnComplete,
    UserMessage,
)

__all__ = ["AgentOptions", "AgentResult", "AgentRunner", "REJECTED"]

REJECTED = "User rejected"

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _blocking(run: Callable[_P, Coroutine[Any, Any, _R]]) -> Callable[_P, _R]:
    """``run`` as a blocking call, with its signature: the coroutine run to its end."""

    def run_sync(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return asyncio.run(run(*args, **kwargs))

    return run_sync


@dataclass(frozen=True)
class AgentOptions:
    enable_thinking: bool = False
    thinking_budget: int = 1024
    attachments: Sequence[str] = ()
    max_turns: int = 10
    system: str | None = None
    max_tokens: int = 4096


@dataclass
class AgentResult:
    success: bool
    error: str | None
    events: list[Event] = field(default_factory=list)
    final_text: str | None = None
    session_id: str = ""


def _file_context(prompt: str, files: Sequence[StoredFile]) -> str:
    if not files:
        return prompt
    blocks = "\n".join(f'<file name="{f.name}">\n{f.content}\n</file>' for f in files)
    return f"{prompt}\n\nAttached files:\n{blocks}"


def _citations(text: str, files: Sequence[StoredFile]) -> list[str]:
    return [f.name for f in files if re.search(re.escape(f.name), text)]


class AgentRunner:
    """Runs agent turns against ``client`` with its tools, store, queue and approvals."""

    def __init__(
        self,
        client: ModelClient,
        *,
        tools: ToolRegistry | None = None,
        store: EventStore | None = None,
        queue: MessageQueue | None = None,
        approvals: ApprovalManager | None = None,
        files: FileStore | None = None,
    ) -> None:
        self.client = client
        self.tools = tools if tools is not None else ToolRegistry()
        self._owned_store: SQLiteEventStore | None = None  # closed by close(); a given store is the caller's
        if store is None:
            store = self._owned_store = SQLiteEventStore()
        self.store: EventStore = store
        self.queue = queue if queue is not None else InMemoryMessageQueue()
        self.approvals = approvals if approvals is not None else ApprovalManager()
        self.files = files if files is not None else FileStore()

    def close(self) -> None:
        """Close the event store the runner created (a store passed in is the caller's)."""
        if self._owned_store is not None:
            self._owned_store.close()

    def __enter__(self) -> AgentRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def run(
        self,
        prompt: str,
        session_id: str,
        on_event: Listener[Event] | None = None,
        user_id: str = "user",
        options: AgentOptions | None = None,
    ) -> AgentResult:
        """Run the agent on ``prompt`` until the model stops; see the module docstring."""
        options = options or AgentOptions()
        try:
            files = [self.files.open_for(file_id, user_id) for file_id in options.attachments]
        except FileAccessDenied as exc:
            # Checked before anything is sent or stored.
            return AgentResult(False, str(exc), session_id=session_id)
        emitter = EventEmitter(session_id, self.store, self.queue, on_event)
        await emitter.emit(
            "user_message_sent",
            content=prompt,
            **({"attachments": list(options.attachments)} if options.attachments else {}),
        )
        conversation: list[ConversationItem] = [UserMessage(_file_context(prompt, files))]
        seen_tool_ids: set[str] = set()
        final_text: str | None = None
        try:
            for _ in range(options.max_turns):
                turn = await self._model_turn(emitter, conversation, options)
                citations = _citations(turn.text, files)
                message = await emitter.emit(
                    "message",
                    content=turn.text,
                    messageId=turn.message_id,
                    stopReason=turn.stop_reason,
                    **({"citations": citations} if citations else {}),
                )
                conversation.append(turn)
                final_text = turn.text
                for stored in files:
                    self.files.record_usage(stored.file_id, session_id, message.data.get("messageId"))
                calls = [c for c in turn.tool_calls if c.id not in seen_tool_ids]
                if not calls:
                    await emitter.emit("complete", reason="success")
                    return AgentResult(True, None, emitter.events, final_text, session_id)
                seen_tool_ids.update(c.id for c in calls)
                results = [await self._run_tool(emitter, c.id, c.name, c.arguments) for c in calls]
                conversation.append(ToolResults(tuple(results)))
            raise ModelError(
                f"the model asked for tools on more than {options.max_turns} turns "
                "(AgentOptions.max_turns); the run was stopped.",
                kind="limit",
            )
        except ModelError as exc:
            await emitter.emit("error", error=exc.message, code=exc.status if exc.status is not None else exc.kind)
            return AgentResult(False, exc.message, emitter.events, final_text, session_id)

    run_sync = _blocking(run)
    """``run`` from synchronous code."""

    async def _model_turn(
        self, emitter: EventEmitter, conversation: list[ConversationItem], options: AgentOptions
    ) -> AssistantTurn:
        thinking: list[str] = []
        thinking_block = 0
        switched = False
        turn: AssistantTurn | None = None
        async for event in self.client.stream_turn(
            conversation,
            system=options.system,
            tools=self.tools.specs,
            max_tokens=options.max_tokens,
            thinking_budget=options.thinking_budget if options.enable_thinking else None,
        ):
            if isinstance(event, ThinkingDelta):
                thinking.append(event.text)
                thinking_block = event.block_index
                await emitter.emit("thinking_chunk", content=event.text, blockIndex=event.block_index)
            elif isinstance(event, TextDelta):
                if thinking and not switched:
                    switched = True
                    await emitter.emit("thinking_complete", content="".join(thinking), blockIndex=thinking_block)
                await emitter.emit("message_chunk", content=event.text, blockIndex=event.block_index)
            elif isinstance(event, TurnComplete):
                turn = event.turn
        if turn is None:
            raise ModelError("the model's stream ended without a complete turn", kind="stream")
        if thinking and not switched:
            await emitter.emit("thinking_complete", content="".join(thinking), blockIndex=thinking_block)
        if turn.thinking is not None:
            await emitter.emit("thinking", content=turn.thinking, messageId=turn.message_id)
        return turn

    async def _run_tool(self, emitter: EventEmitter, tool_id: str, name: str, arguments: dict[str, Any]) -> ToolResult:
        await emitter.emit("tool_use", toolUseId=tool_id, toolName=name, args=arguments)
        tool = self.tools.get(name)
        if tool is None:
            error = f"Unknown tool {name!r}."
            await emitter.emit("tool_result", toolUseId=tool_id, toolName=name, result=None, success=False, error=error)
            return ToolResult(tool_id, error, is_error=True)
        if tool.needs_approval:
            approval_id = f"approval-{tool_id}"
            description = f"{name} with {arguments}"
            await emitter.emit(
                "approval_requested",
                approvalId=approval_id,
                toolUseId=tool_id,
                toolName=name,
                description=description,
                args=arguments,
            )
            decision = await self.approvals.wait(ApprovalRequest(approval_id, name, tool_id, arguments, description))
            await emitter.emit(
                "approval_resolved", approvalId=approval_id, approved=decision.approved, reason=decision.reason
            )
            if not decision.approved:
                await emitter.emit(
                    "tool_result", toolUseId=tool_id, toolName=name, result=None, success=False, error=REJECTED
                )
                return ToolResult(tool_id, REJECTED, is_error=True)
        try:
            output = await tool.run(arguments)
        except (ToolError, Exception) as exc:  # a failing tool is reported, never fatal
            error = str(exc) or type(exc).__name__
            await emitter.emit("tool_result", toolUseId=tool_id, toolName=name, result=None, success=False, error=error)
            return ToolResult(tool_id, error, is_error=True)
        await emitter.emit("tool_result", toolUseId=tool_id, toolName=name, result=output, success=True)
        return ToolResult(tool_id, output)
