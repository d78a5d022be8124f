"""Discovery and counting: which instruction answers this request, and why.

The scan walks the request's messages from newest to oldest and stops at the first
user message holding ``<|instruction_start|>``: the last tagged user message wins.
On the way it counts assistant turns — a run of consecutive assistant items (an
assistant message, a client's split of one, Responses-API output items) is one turn;
tool results never count and are not user messages, even when Anthropic carries them
in a ``role="user"`` message. The turn index selects the instruction.

The scan reads the neutral ``Conversation`` the request's codec made (the same reading
strict validation checks), so it knows no protocol: ``protocol`` only labels the result.

Placement by tool-call id: ids the mock makes encode their chain and turn (see
``mockllm._generation``). If the newest mock-made id in the history says turn ``t`` of
this chain and ``k`` assistant turns follow it, the index is at least ``t + 1 + k`` — a
client that trims assistant messages from its history is still placed correctly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockllm._conversation import Conversation
from mockllm._generation import TOOL_CALL_ID, turn_of_tool_call_id
from mockllm._instructions import INSTRUCTION_START, Instruction
from mockllm._parsing import InvalidInstruction, Script, ScriptFailure, extract_block, parse_script

__all__ = ["Selection", "select_in_conversation"]


@dataclass(frozen=True, init=False)
class Selection:
    """Which instruction answers a request, and why.

    ``instruction`` is None when the reply is the fallback; ``fallback_reason`` then
    says why. ``turn_index`` is None only when no chain was found.
    """

    protocol: str
    """The label of the reading (the codec's protocol name)."""
    chain_found: bool
    instruction: Instruction | None
    fallback_reason: str | None
    turn_index: int | None = None
    chain_length: int = 0
    chain_id: str | None = None
    legacy: bool = False
    message_index: int | None = None
    """Index of the tagged message in the request's own message list."""
    counted_turns: int = 0
    placed_by_tool_call_id: bool = False
    warnings: tuple[str, ...] = field(default=())
    step_labels: tuple[str, ...] = field(default=())
    """Each instruction's id (or position) in chain order, to report unused steps."""

    def __init__(
        self,
        protocol: str,
        chain_found: bool,
        instruction: Instruction | None,
        fallback_reason: str | None,
        turn_index: int | None = None,
        chain_length: int = 0,
        chain_id: str | None = None,
        legacy: bool = False,
        message_index: int | None = None,
        counted_turns: int = 0,
        placed_by_tool_call_id: bool = False,
        warnings: tuple[str, ...] = (),
        step_labels: tuple[str, ...] = (),
    ) -> None:
        # Filled at once, as ``ReplyPlan`` is (a frozen dataclass's own ``__init__``
        # costs about 1,500 instructions a field); a test holds this signature to the
        # fields' (tests/mockllm/test_plan.py).
        self.__dict__.update(
            {
                "protocol": protocol,
                "chain_found": chain_found,
                "instruction": instruction,
                "fallback_reason": fallback_reason,
                "turn_index": turn_index,
                "chain_length": chain_length,
                "chain_id": chain_id,
                "legacy": legacy,
                "message_index": message_index,
                "counted_turns": counted_turns,
                "placed_by_tool_call_id": placed_by_tool_call_id,
                "warnings": warnings,
                "step_labels": step_labels,
            }
        )

    @property
    def instruction_id(self) -> str | None:
        """The instruction's ``id``, or its position when it has none."""
        if self.instruction is None:
            return None
        return self.instruction.id if self.instruction.id is not None else str(self.turn_index)

    def describe(self) -> str:
        """A few lines a person can read to see why this reply was chosen."""
        lines = [f"protocol: {self.protocol}"]
        if not self.chain_found:
            lines.append(f"chain: none ({self.fallback_reason})")
        elif self.chain_id is None:
            lines.append(f"chain: unusable instruction block in message {self.message_index}")
            lines.append(f"runs: fallback ({self.fallback_reason})")
        else:
            kind = "legacy single instruction" if self.legacy else f"chain of {self.chain_length}"
            lines.append(f"chain: {kind} [{self.chain_id}] in message {self.message_index}")
            placed = " (placed by a tool-call id)" if self.placed_by_tool_call_id else ""
            lines.append(f"turn index: {self.turn_index} ({self.counted_turns} assistant turns counted){placed}")
            if self.instruction is not None:
                lines.append(f"runs: instruction {self.instruction_id!r}")
            else:
                lines.append(f"runs: fallback ({self.fallback_reason})")
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)

    __str__ = describe


def select_in_conversation(conversation: Conversation, protocol: str = "neutral") -> Selection:
    """Select the instruction for a request its codec read into ``conversation``.

    ``protocol`` only labels the result (``Selection.protocol``). Never raises.
    """
    messages = conversation.rows
    turns = 0
    in_run = False
    # The newest mock-made id, and how many assistant turns were counted after its turn.
    newest_mock: tuple[str, int] | None = None
    for index in range(len(messages) - 1, -1, -1):
        role, text, calls, results, position = messages[index]
        if role == "assistant":
            if not in_run:
                turns += 1
                in_run = True
        else:
            in_run = False
            if role == "user" and INSTRUCTION_START in text:
                return _resolve(protocol, text, position, turns, newest_mock)
        if newest_mock is None:
            for call_id in calls or results:
                if "_mk" in call_id and TOOL_CALL_ID.search(call_id):
                    newest_mock = (call_id, turns - 1 if role == "assistant" else turns)
                    break
    return Selection(
        protocol, chain_found=False, instruction=None, fallback_reason="no user message holds an instruction block"
    )


def _resolve(
    protocol: str, text: str, message_index: int | None, counted: int, newest_mock: tuple[str, int] | None
) -> Selection:
    block = extract_block(text)
    script = block if isinstance(block, ScriptFailure) else parse_script(block)
    if isinstance(script, ScriptFailure):
        return Selection(
            protocol,
            chain_found=True,
            instruction=None,
            fallback_reason=script.reason,
            turn_index=counted,
            message_index=message_index,
            counted_turns=counted,
        )
    return _pick(protocol, script, message_index, counted, newest_mock)


def _pick(
    protocol: str, script: Script, message_index: int | None, counted: int, newest_mock: tuple[str, int] | None
) -> Selection:
    turn = counted
    placed = False
    if newest_mock is not None:
        call_id, turns_after = newest_mock
        encoded = turn_of_tool_call_id(call_id, script.fingerprint)
        if encoded is not None and encoded + 1 + turns_after > turn:
            turn, placed = encoded + 1 + turns_after, True
    # Which instruction answers, or why none does; the selection is made once, with it.
    instruction: Instruction | None = None
    reason: str | None = None
    if not script.entries:
        reason = "the instruction chain is empty"
    elif turn >= len(script.entries):
        if script.legacy:
            reason = f"the legacy instruction was already answered ({turn} assistant turns follow it)"
        else:
            steps = len(script.entries)
            reason = (
                f"the script has {steps} step{'s' if steps != 1 else ''} and this is turn {turn + 1}: "
                f"turn index {turn} is past the end of the chain of {steps} instructions "
                "(script one more step, or find why the code asked the model once more)"
            )
    else:
        entry = script.entries[turn]
        if isinstance(entry, InvalidInstruction):
            reason = entry.reason
        else:
            instruction = entry
    return Selection(
        protocol,
        chain_found=True,
        instruction=instruction,
        fallback_reason=reason,
        turn_index=turn,
        chain_length=len(script.entries),
        chain_id=script.fingerprint,
        legacy=script.legacy,
        message_index=message_index,
        counted_turns=counted,
        placed_by_tool_call_id=placed,
        warnings=script.warnings,
        step_labels=script.step_labels,
    )
