"""Tool-call / tool-result pairing, as the real providers check it.

Both OpenAI and Anthropic reject a conversation in which a tool result answers no
earlier tool call, or in which an assistant's tool calls are not all answered before
the conversation moves on. Codecs phrase the problem in their provider's words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mockllm._conversation import Conversation

__all__ = ["PairingProblem", "find_pairing_problem"]


@dataclass(frozen=True)
class PairingProblem:
    """``kind="orphan_result"``: a result for ``call_id`` with no matching call.
    ``kind="unanswered_call"``: the call ``call_id`` got no result before the next turn.
    ``message_index`` is the index of the offending message in the neutral conversation.
    """

    kind: Literal["orphan_result", "unanswered_call"]
    call_id: str
    message_index: int


def find_pairing_problem(conversation: Conversation) -> PairingProblem | None:
    """The first pairing problem in ``conversation``, or None.

    Every call must be answered before the next user or system message, and before
    the request ends: both providers reject a conversation that leaves one open.
    """
    issued: set[str] = set()
    pending: dict[str, int] = {}
    for index, (role, _, calls, results, _) in enumerate(conversation.rows):
        if role == "assistant":
            for call_id in calls:
                issued.add(call_id)
                pending[call_id] = index
        elif role == "tool":
            for call_id in results:
                if call_id not in issued:
                    return PairingProblem("orphan_result", call_id, index)
                pending.pop(call_id, None)
        elif pending:
            call_id, at = next(iter(pending.items()))
            return PairingProblem("unanswered_call", call_id, at)
    if pending:
        call_id, at = next(iter(pending.items()))
        return PairingProblem("unanswered_call", call_id, at)
    return None
