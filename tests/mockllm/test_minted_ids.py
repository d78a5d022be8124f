"""The journal keeps each reply's ``response_id``, so ``MintedIds.of(journal)`` knows
every id a codec made from it — under each protocol, streamed or not, and after the
journal's round trip over the server — and nothing it did not mint."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.plugin.fixtures import MockLLMFixture
from mockllm import InstructionChain, JournalEntry, MintedIds
from mockllm._engine import MockLLM
from mockllm._journal import JOURNAL_CODEC

PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"length": 2}}]}] * 6).tagged("go")
USER = [{"role": "user", "content": PROMPT}]


@pytest.fixture
def mock() -> Iterator[MockLLMFixture]:
    fixture = MockLLMFixture(MockLLM())
    yield fixture
    fixture.close()


def wire_ids(mock: MockLLMFixture) -> list[tuple[str, str]]:
    """(the protocol, the id its reply carried), one reply a protocol and stream shape."""
    openai, anthropic = mock.openai(), mock.anthropic()
    found = [("openai-chat", openai.chat.completions.create(model="m", messages=USER).id)]
    found += [
        ("openai-chat stream", next(iter(openai.chat.completions.create(model="m", messages=USER, stream=True))).id)
    ]
    found += [("anthropic-messages", anthropic.messages.create(model="m", max_tokens=64, messages=USER).id)]
    response = openai.responses.create(model="m", input=PROMPT)
    found += [("openai-responses", response.id), ("openai-responses item", response.output[0].id)]
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    reply = mock.httpx_client().post("/v1beta/models/m:generateContent", json=body).raise_for_status().json()
    found += [("gemini", reply["responseId"])]
    return found


def test_every_wire_id_is_made_from_a_response_id_the_journal_kept(mock: MockLLMFixture) -> None:
    found = wire_ids(mock)
    minted = MintedIds.of(mock.journal)
    assert [entry.response_id is not None for entry in mock.journal] == [True] * 5  # one a reply
    assert [shown for shown, wire_id in found[:-1] if minted.made_from(wire_id) != wire_id] == []
    assert found[-1][1] in minted.response_ids  # Gemini's is the bare response id
    round_trip = [JOURNAL_CODEC.decode(JOURNAL_CODEC.encode(entry)) for entry in mock.journal]
    assert MintedIds.of(round_trip) == minted


def test_ids_of_the_minted_forms_the_mock_did_not_mint_are_not_minted(mock: MockLLMFixture) -> None:
    wire_ids(mock)
    minted = MintedIds.of(mock.journal)
    for value in ("chatcmpl-" + "5f" * 12, "msg_" + "5f" * 12, "fc_" + "5f" * 12 + "_0", "call_mk0123abcd_t0_0"):
        assert minted.made_from(value) is None, value
    assert (
        MintedIds.of([JournalEntry(index=0, method="GET", path="/v1/models", protocol=None, status=200)]) == MintedIds()
    )
