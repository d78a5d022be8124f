"""The ids a later request continues from (OpenAI Responses' ``previous_response_id``,
Anthropic's thread ``previous_message_id``) name the conversation they answered: two
conversations one script answers at the same turn get two ids, and continuing either
rebuilds its own history; the same conversation gets the same id, run after run."""

from __future__ import annotations

from typing import Any

from harness.plugin.fixtures import MockLLMFixture
from mockllm import MockLLM
from tests.mockllm.doors_support import door_clients  # noqa: F401  (the fixture "clients")

OSLO = [{"messages": [{"text_message": {"text": "Sunny in Oslo."}}]}] * 2


def test_two_responses_conversations_answered_alike_get_two_ids(clients: Any) -> None:
    clients.script(OSLO, match={"text": "Oslo"})
    with clients.openai() as client:
        short = client.responses.create(model="gpt-mock", input="Oslo?")
        long = client.responses.create(model="gpt-mock", input="Oslo " + "word " * 200)
        assert short.id != long.id
        follow_up = client.responses.create(model="gpt-mock", input="follow-up", previous_response_id=short.id)
        whole = client.responses.create(
            model="gpt-mock",
            input=[
                {"role": "user", "content": "Oslo?"},
                *(item.model_dump(exclude_none=True) for item in short.output),
                {"role": "user", "content": "follow-up"},
            ],
            store=False,
        )
    # What the short conversation's true history counts, not the long one's.
    assert follow_up.usage is not None and whole.usage is not None
    assert follow_up.usage.input_tokens == whole.usage.input_tokens < long.usage.input_tokens


def test_the_same_responses_conversation_gets_the_same_id_in_another_mock() -> None:
    ids = []
    for _ in range(2):
        fixture = MockLLMFixture(MockLLM())
        fixture.script(OSLO, match={"text": "Oslo"})
        with fixture.openai() as client:
            ids.append(client.responses.create(model="gpt-mock", input="Oslo?").id)
        fixture.close()
    assert ids[0] == ids[1]


def _ask(client: Any, messages: list[dict[str, Any]], thread: dict[str, Any]) -> Any:
    return client.messages.create(
        model="claude-mock-1", max_tokens=100, messages=messages, extra_body={"thread": thread}
    )


def test_two_anthropic_threads_answered_alike_get_two_ids(clients: Any) -> None:
    clients.script(OSLO, match={"text": "Oslo"})
    create = {"type": "create"}
    with clients.anthropic() as client:
        short = _ask(client, [{"role": "user", "content": "Oslo?"}], create)
        long = _ask(client, [{"role": "user", "content": "Oslo " + "word " * 200}], create)
        assert short.id != long.id
        follow_up = [{"role": "user", "content": "follow-up"}]
        continued = _ask(client, follow_up, {"type": "continue", "previous_message_id": short.id})
        whole = _ask(
            client,
            [
                {"role": "user", "content": "Oslo?"},
                {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in short.content]},
                *follow_up,
            ],
            create,
        )
    assert continued.usage.input_tokens == whole.usage.input_tokens < long.usage.input_tokens
