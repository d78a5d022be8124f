"""A request no script answers says why in the words a test author needs: a registered
script whose match fits nothing shows the first user message it was compared with, and
a script run past its end says how many steps it has and which turn this is. The reason
reaches the journal, the ``x-mockllm-fallback`` header and the strict-mode failure."""

from __future__ import annotations

from typing import Any

import pytest

from harness.plugin.fixtures import MockLLMFixture
from harness.plugin.strict import UnscriptedRequestsError
from mockllm import InstructionChain, MockLLM, explain
from tests.mockllm.doors_support import door_clients  # noqa: F401  (the fixture "clients")

ANSWER = [{"id": "answer", "messages": [{"text_message": {"text": "Sunny."}}]}]


def _ask(clients: Any, *messages: dict[str, str]) -> Any:
    return clients.httpx_client().post("/v1/chat/completions", json={"model": "gpt-mock", "messages": list(messages)})


def test_a_match_that_fits_nothing_shows_the_first_user_message(clients: Any) -> None:
    clients.script(ANSWER, match="weather")
    reply = _ask(clients, {"role": "system", "content": "Be brief."}, {"role": "user", "content": "What time is it?"})
    assert reply.status_code == 200
    reason = clients.journal[-1].fallback_reason
    assert reason == (
        "no user message holds an instruction block, and of the registered scripts none fits "
        "the first user message 'What time is it?' (model 'gpt-mock')"
    )
    assert "What time is it?" in reply.headers["x-mockllm-fallback"]
    with pytest.raises(UnscriptedRequestsError) as failure:
        clients.verify()
    assert "none fits the first user message 'What time is it?'" in str(failure.value)
    assert "match text='weather'" in str(failure.value)  # the candidates it was compared with


def test_a_long_first_message_is_shown_cut_short() -> None:
    mock = MockLLMFixture(MockLLM())
    mock.script(ANSWER, match="weather")
    _ask(mock, {"role": "user", "content": "word " * 100})
    reason = mock.journal[-1].fallback_reason or ""
    assert "'" + "word " * 40 + "…'" in reason and len(reason) < 400


def test_a_registered_script_run_past_its_end_says_so(clients: Any) -> None:
    clients.script(ANSWER)
    first = {"role": "user", "content": "Hi"}
    assert _ask(clients, first).json()["choices"][0]["message"]["content"] == "Sunny."
    again = _ask(clients, first, {"role": "assistant", "content": "Sunny."}, {"role": "user", "content": "More?"})
    reason = clients.journal[-1].fallback_reason or ""
    assert reason.startswith("the script has 1 step and this is turn 2: ")
    assert again.headers["x-mockllm-fallback"].startswith("the script has 1 step and this is turn 2")
    with pytest.raises(UnscriptedRequestsError, match="fallback reply, the script has 1 step and this is turn 2"):
        clients.verify()


def test_explain_says_a_tagged_chain_ran_past_its_end() -> None:
    tagged = InstructionChain(instruction_chain=ANSWER * 3).tagged("Go")
    history = [{"role": "user", "content": tagged}]
    for _ in range(3):
        history += [{"role": "assistant", "content": "Sunny."}, {"role": "user", "content": "And?"}]
    report = str(explain({"model": "m", "messages": history}, "openai-chat"))
    assert "runs: fallback (the script has 3 steps and this is turn 4: " in report
