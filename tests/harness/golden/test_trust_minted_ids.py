"""A golden normalises only the ids this test's mock minted: a user's own value of the
same form (a database's 24-hex object id under ``messageId``, the user's ``msg_<24 hex>``)
is shown as it is, so a change to it fails the golden; the mock's own ids, read from its
journal (in process or over the server), are still ``<label:n>``."""

from __future__ import annotations

import pytest

USERS_IDS = """
from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "hi"}}]}]).tagged("Go")

def test_object_id(mockllm, golden):
    reply = mockllm.openai().chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
    events = [
        {"type": "reply", "messageId": reply.id, "content": reply.choices[0].message.content},
        {"type": "stored", "messageId": "5f1d7ac9e4b0a2c3d4e5f6%(tail)s"},
        {"type": "stored", "order": "msg_5f1d7ac9e4b0a2c3d4e5f6%(tail)s"},
    ]
    assert events == golden

def test_without_a_mock(golden):
    assert [{"type": "stored", "responseId": "5f1d7ac9e4b0a2c3d4e5f6%(tail)s"}] == golden
"""


def test_a_users_own_id_of_the_minted_form_is_shown_and_its_change_fails(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(test_ids=USERS_IDS % {"tail": "01"})
    strict_pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    folder = strict_pytester.path / "golden" / "test_ids"
    text = (folder / "test_object_id.golden").read_text()
    # The mock's reply id is numbered; the user's values of the same forms are not.
    assert 'messageId="<id:1>"' in text
    assert 'messageId="5f1d7ac9e4b0a2c3d4e5f601"' in text
    assert 'order="msg_5f1d7ac9e4b0a2c3d4e5f601"' in text
    assert 'responseId="5f1d7ac9e4b0a2c3d4e5f601"' in (folder / "test_without_a_mock.golden").read_text()
    strict_pytester.runpytest().assert_outcomes(passed=2)

    strict_pytester.makepyfile(test_ids=USERS_IDS % {"tail": "02"})
    result = strict_pytester.runpytest()
    result.assert_outcomes(failed=2)
    assert "5f1d7ac9e4b0a2c3d4e5f602" in result.stdout.str()


SERVER_IDS = """
from mockllm import InstructionChain

CHAIN = InstructionChain(instruction_chain=[{"messages": [{"tool_call": [{"name": "f", "args": {}}]}]}])

def test_server(mockllm_server, golden):
    client = mockllm_server.openai()
    reply = client.responses.create(model="m", input=CHAIN.tagged("Go"), tools=[
        {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}])
    call = reply.output[0]
    events = [{"type": "reply", "responseId": reply.id, "itemId": call.id, "call_id": call.call_id},
              {"type": "approval", "approvalId": "approval-" + call.call_id}]
    assert events == golden
"""


def test_the_ids_a_server_mock_minted_are_normalised(
    strict_pytester: pytest.Pytester, shared_server_conftest: str
) -> None:
    strict_pytester.makeconftest(shared_server_conftest)  # this session's server (tests/conftest.py)
    strict_pytester.makepyfile(test_server=SERVER_IDS)
    strict_pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    text = (strict_pytester.path / "golden" / "test_server" / "test_server.golden").read_text()
    assert 'call_id="<call:1>" itemId="<item:1>" responseId="<response:1>"' in text
    assert 'approvalId="<approval:1>"' in text
