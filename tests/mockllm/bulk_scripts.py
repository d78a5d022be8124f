"""Instruction blocks for the tests that script thousands of steps in one go.

``server_support.script`` builds the chain as ``InstructionChain`` models, checking every
step as a chain written in Python is checked, then writes them out; for a chain of
thousands of plain steps (no defaults, nothing None) that is most of a test's CPU. Here
the same block is written with ``json`` alone, tagged as ``tagged`` tags it (``test_a_bulk_script_is_the_text_script_writes``
holds the two to the same bytes).
"""

from __future__ import annotations

import json
from typing import Any

from mockllm._instructions import tag_block


def bulk_script(*instructions: dict[str, Any], prompt: str = "prompt") -> str:
    """The user-message text ``server_support.script(*instructions, prompt=prompt)`` makes."""
    return tag_block(
        json.dumps({"instruction_chain": list(instructions)}, separators=(",", ":"), ensure_ascii=False), prompt
    )
