"""Registered scripts: a chain for conversations without instruction tags, registered in
process (``MockLLM.script``) or over HTTP (``/_mockllm/scripts``), answered alike."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from mockllm import InstructionChain, MockLLM
from tests.mockllm.doors_support import door_clients  # noqa: F401  (the fixture "clients")

TOOL_THEN_ANSWER = [
    {"id": "look-up", "messages": [{"tool_call": [{"name": "weather", "args": {"city": "Oslo"}}]}]},
    {"id": "answer", "messages": [{"text_message": {"text": "Sunny in Oslo."}}]},
]


def _app_turns(clients: Any, question: str, model: str = "gpt-mock") -> tuple[list[bytes], Any]:
    """What an app that templates its prompt does: ask, run the tool, ask again."""
    http = clients.httpx_client()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a weather assistant."},
        {"role": "user", "content": f"Question: {question}"},
    ]
    bodies = []
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
    first = http.post("/v1/chat/completions", json={"model": model, "messages": messages, "tools": tools})
    bodies.append(first.content)
    call = first.json()["choices"][0]["message"]["tool_calls"][0]
    messages += [
        first.json()["choices"][0]["message"],
        {"role": "tool", "tool_call_id": call["id"], "content": "sunny"},
    ]
    second = http.post("/v1/chat/completions", json={"model": model, "messages": messages, "tools": tools})
    bodies.append(second.content)
    return bodies, second.json()


def test_a_script_answers_an_untagged_app_turn_by_turn_and_the_journal_names_it(clients: Any) -> None:
    script_id = clients.script(TOOL_THEN_ANSWER, match="weather")
    bodies, last = _app_turns(clients, "What is the weather in Oslo?")
    assert last["choices"][0]["message"]["content"] == "Sunny in Oslo."
    assert [(e.script_id, e.instruction_id, e.turn_index) for e in clients.journal] == [
        (script_id, "look-up", 0),
        (script_id, "answer", 1),
    ]
    assert clients.unused_steps() == []
    clients.verify()


def test_the_same_request_gives_the_same_bytes_in_process_and_over_the_socket(mock_server_url: str) -> None:
    in_process = MockLLMFixture(MockLLM())
    in_process.script(TOOL_THEN_ANSWER)
    with MockLLMServer(mock_server_url).session() as server:
        server.script(TOOL_THEN_ANSWER)
        assert _app_turns(in_process, "Oslo?")[0] == _app_turns(server, "Oslo?")[0]
    in_process.close()


@pytest.mark.parametrize(
    "match, fits",
    [
        ("Oslo", True),
        ("Bergen", False),
        (re.compile(r"weather in \w+\?$"), True),
        (re.compile(r"^weather"), False),
        ({"model": "gpt-mock"}, True),
        ({"model": "gpt-4o"}, False),
        ({"header": ("X-Test-Case", "oslo")}, True),
        ({"header": ("x-test-case", "bergen")}, False),
        ({"text": "Oslo", "model": "gpt-4o"}, False),
    ],
)
def test_match_narrows_the_conversations_a_script_answers(match: Any, fits: bool) -> None:
    fixture = MockLLMFixture(MockLLM())
    fixture.script([{"messages": [{"text_message": {"text": "scripted"}}]}], match=match)
    reply = fixture.httpx_client().post(
        "/v1/chat/completions",
        headers={"x-test-case": "oslo"},
        json={"model": "gpt-mock", "messages": [{"role": "user", "content": "Question: weather in Oslo?"}]},
    )
    assert (reply.json()["choices"][0]["message"]["content"] == "scripted") is fits
    assert (fixture.journal[-1].fallback_reason is None) is fits
    fixture.close()


def test_tags_in_a_message_win_over_a_registered_script() -> None:
    mock = MockLLM()
    mock.script([{"messages": [{"text_message": {"text": "from the script"}}]}])
    fixture = MockLLMFixture(mock)
    tagged = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "from the tags"}}]}]).tagged(
        "Hi"
    )
    reply = fixture.openai().chat.completions.create(model="m", messages=[{"role": "user", "content": tagged}])
    assert reply.choices[0].message.content == "from the tags"
    assert mock.journal[-1].script_id is None
    fixture.close()


def test_the_first_fitting_script_in_registration_order_answers() -> None:
    mock = MockLLM()
    mock.script([{"messages": [{"text_message": {"text": "specific"}}]}], match="Oslo")
    mock.script([{"messages": [{"text_message": {"text": "general"}}]}])
    fixture = MockLLMFixture(mock)
    for question, expected in [("Oslo?", "specific"), ("Bergen?", "general")]:
        reply = fixture.openai().chat.completions.create(model="m", messages=[{"role": "user", "content": question}])
        assert reply.choices[0].message.content == expected
    fixture.close()


def test_scripts_over_http_list_delete_and_refuse_a_bad_chain(mock_server_url: str) -> None:
    with MockLLMServer(mock_server_url).session() as server, httpx.Client(base_url=server.base_url) as http:
        bad = http.post(
            "/_mockllm/scripts",
            json={
                "instruction_chain": [
                    {"messages": [{"text_message": {"text": "x"}}], "stop_reasn": "end_turn"},
                    {"messages": []},
                ],
                "match": {"modle": "gpt-4o"},
            },
        )
        assert bad.status_code == 400
        assert bad.json()["error"]["problems"] == [
            "instruction_chain[1].messages: List should have at least 1 item after validation, not 0",
            "match.modle: unknown key 'modle'; did you mean 'model'?",
        ]
        typo = http.post(
            "/_mockllm/scripts",
            json={"instruction_chain": [{"messages": [{"text_message": {"text": "x"}}], "stop_reasn": "end_turn"}]},
        )
        assert typo.json()["error"]["problems"] == [
            "instruction_chain[0].stop_reasn: unknown key 'stop_reasn'; did you mean 'stop_reason'?"
        ]
        assert http.post("/_mockllm/scripts", content=b"{nope").status_code == 400

        created = http.post(
            "/_mockllm/scripts", json={"instruction_chain": TOOL_THEN_ANSWER, "match": {"model": "gpt-mock"}}
        )
        assert created.status_code == 201
        script_id = created.json()["id"]
        listed = http.get("/_mockllm/scripts").json()
        assert [(s["id"], s["match"]) for s in listed] == [(script_id, {"model": "gpt-mock"})]
        assert listed[0]["instruction_chain"][1]["id"] == "answer"
        assert http.get(f"/_mockllm/scripts/{script_id}").json()["id"] == script_id
        assert http.delete(f"/_mockllm/scripts/{script_id}").status_code == 200
        missing = http.get(f"/_mockllm/scripts/{script_id}")
        assert missing.status_code == 404 and "GET /_mockllm/scripts lists them" in missing.text


def test_sessions_keep_their_journals_and_scripts_apart(mock_server_url: str) -> None:
    root = MockLLMServer(mock_server_url)
    with root.session() as a, root.session(seed=3) as b:
        a.script([{"messages": [{"text_message": {"length": 6}}]}])
        b.script([{"messages": [{"text_message": {"length": 6}}]}])
        ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        words_a = a.httpx_client().post("/v1/chat/completions", json=ask).json()
        words_b = b.httpx_client().post("/v1/chat/completions", json=ask).json()
        assert words_a["choices"][0]["message"]["content"] != words_b["choices"][0]["message"]["content"]
        assert len(a.journal) == 1 and len(b.journal) == 1
        gone = a.base_url
    with httpx.Client() as http:
        after = http.post(f"{gone}/v1/chat/completions", json=ask)
    assert after.status_code == 404 and "There is no mock session" in after.json()["error"]["message"]


def test_an_instruction_chain_built_in_python_rejects_unknown_keys() -> None:
    with pytest.raises(ValidationError) as info:
        InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "x"}}], "stop_reasn": "end_turn"}])
    assert "instruction_chain[0].stop_reasn: unknown key 'stop_reasn'; did you mean 'stop_reason'?" in str(info.value)
    with pytest.raises(ValidationError) as info:
        InstructionChain(instruction_chain=[{"messages": [{"text_message": {"lenght": 3}}]}])
    assert "(unknown key 'lenght'; did you mean 'length'?)" in str(info.value)


def test_the_wire_parser_warns_naming_the_nearest_key() -> None:
    fixture = MockLLMFixture(MockLLM())
    block = json.dumps(
        {"instruction_chain": [{"messages": [{"text_message": {"text": "x"}}], "stop_reasn": "end_turn"}]}
    )
    fixture.httpx_client().post(
        "/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": f"<|instruction_start|>{block}<|instruction_end|>"}],
        },
    )
    assert fixture.journal[-1].warnings == [
        "instruction_chain[0]: unknown key 'stop_reasn' ignored; did you mean 'stop_reason'?"
    ]
    fixture.close()
