"""Every id the mock mints, under each protocol, is one a golden normalises (given the
mock's ``MintedIds``) — so one golden serves every protocol — and nothing a user wrote is."""

from __future__ import annotations

from typing import Any

import pytest

from harness.golden.records import VolatileRules
from harness.plugin.fixtures import MockLLMFixture
from mockllm import InstructionChain, MintedIds
from mockllm._engine import MockLLM

CHAIN = InstructionChain(
    instruction_chain=[
        {
            "reasoning": {"length": 3},
            "messages": [{"text_message": {"length": 2}}, {"tool_call": [{"name": "f", "args": {}}]}],
        }
    ]
)


@pytest.fixture
def mock() -> Any:
    fixture = MockLLMFixture(MockLLM())
    yield fixture
    fixture.close()


def minted_ids(mock: MockLLMFixture) -> list[str]:
    prompt = CHAIN.tagged("go")
    chat = mock.openai().chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}])
    ids = [chat.id, *(call.id for call in chat.choices[0].message.tool_calls)]
    message = mock.anthropic().messages.create(model="m", max_tokens=64, messages=[{"role": "user", "content": prompt}])
    ids += [message.id, *(block.id for block in message.content if block.type == "tool_use")]
    response = mock.openai().responses.create(model="m", input=prompt)
    ids += [response.id]
    for item in response.output:
        ids += [item.id] + ([item.call_id] if item.type == "function_call" else [])
    return ids


def test_every_id_the_mock_mints_is_normalised(mock: MockLLMFixture) -> None:
    ids = minted_ids(mock)
    assert len(ids) == 9
    rules = VolatileRules(minted=MintedIds.of(mock.journal))
    assert [i for i in ids if not rules.is_minted(i)] == []
    assert rules.is_minted("approval-" + ids[1])  # an id the harness makes from one


@pytest.mark.parametrize(
    "value",
    ["A-1", "never", "msg_1", "chatcmpl-123", "a call_mk0123abcd_t0_0", "msg_" + "5f" * 12, "call_mk0123abcd_t0_0"],
)
def test_a_users_values_are_not_minted_ids(mock: MockLLMFixture, value: str) -> None:
    minted_ids(mock)  # the mock has minted ids of every form: a user's value is none of them
    assert not VolatileRules(minted=MintedIds.of(mock.journal)).is_minted(value)
