"""A client kept from an ended test fails the next one saying so, not "join the thread".

An app that builds its client once (at import, from ``OPENAI_BASE_URL``; a module-level
singleton) keeps the first test's URL: the next test's requests reach the ended test's
mock and are late. The run fails, as it must, but the advice spoke only of threads and
tasks, which the app has none of.
"""

from __future__ import annotations

import pytest

KEPT_CLIENT = """
import openai
import pytest

from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "Hi."}}]}]).tagged("hi")
CLIENTS = []


def client(url):
    if not CLIENTS:  # the app's singleton, built at first use
        CLIENTS.append(openai.OpenAI(api_key="k", base_url=url, max_retries=0))
    return CLIENTS[0]


@pytest.mark.parametrize("i", range(2))
def test_asks(mockllm_server, i):
    reply = client(mockllm_server.openai_base_url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": PROMPT}]
    )
    assert reply.choices[0].message.content == "Hi."
"""


def test_a_client_kept_from_an_ended_test_is_named_as_the_cause(
    strict_pytester: pytest.Pytester, shared_server_conftest: str
) -> None:
    strict_pytester.makepyfile(conftest=shared_server_conftest, test_app=KEPT_CLIENT)
    result = strict_pytester.runpytest()
    text = result.stdout.str()
    result.assert_outcomes(passed=1, failed=1, errors=1)  # the second test's 404, the first test's late request
    assert "test_app.py::test_asks[0]: 1 request(s) reached its mock after the test ended" in text, text
    assert "If a later test sent it, its client was built with the ended test's URL and kept" in text, text
    assert "if a later test sent it, build its client in that test" in text, text  # the 404 the app got
