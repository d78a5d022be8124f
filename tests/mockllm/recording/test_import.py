"""vcrpy / pytest-recording cassettes and aimock fixture files, imported and replayed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
import yaml

from mockllm import HTTPX2Transport, InstructionChain, MockLLM
from mockllm._cli import main
from mockllm._recording.format import RecordingError
from mockllm._recording.importers import load_scripts
from mockllm._recording.replay import RecordingLibrary

httpx2 = pytest.importorskip("httpx2")
KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"


def prompt(*steps: dict[str, Any]) -> str:
    return InstructionChain(instruction_chain=list(steps)).tagged("Hi")


def interaction(path: str, body: dict[str, Any], *, compress: bool = False) -> dict[str, Any]:
    """One interaction as vcrpy's httpx/httpcore stubs write it, the reply made by the mock."""
    sent = json.dumps(body).encode()
    reply = MockLLM().handle("POST", path, {}, sent)
    headers: dict[str, list[str]] = {}
    for name, value in reply.headers:
        headers.setdefault(name, []).append(value)
    content: Any = reply.body.decode()
    if compress:
        content = gzip.compress(reply.body)
        headers["content-encoding"] = ["gzip"]
    return {
        "request": {
            "body": sent.decode(),
            "headers": {"authorization": [f"Bearer {KEY}"], "content-type": ["application/json"]},
            "method": "POST",
            "uri": f"https://api.example.com{path}?api_key={KEY}",
        },
        "response": {
            "status": {"code": reply.status, "message": "OK"},
            "headers": headers,
            "body": {"string": content},
        },
    }


CHAT = {
    "model": "gpt-x",
    "stream": True,
    "messages": [{"role": "user", "content": prompt({"messages": [{"text_message": {"length": 30}}]})}],
}
MESSAGES = {
    "model": "claude-x",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": prompt({"messages": [{"tool_call": [{"name": "f", "args": {"a": 1}}]}]})}],
}


def direct(http: Any) -> tuple[list[Any], Any]:
    oai = openai.OpenAI(api_key="x", base_url="http://mockllm.test/v1", http_client=http, max_retries=0)
    ant = anthropic.Anthropic(api_key="x", base_url="http://mockllm.test", http_client=http, max_retries=0)
    chunks = [c.model_dump() for c in oai.chat.completions.create(**CHAT)]
    return chunks, ant.messages.create(**MESSAGES).model_dump()


@pytest.mark.parametrize("serializer", ["yaml", "json"])
def test_a_vcrpy_cassette_replays_exactly(tmp_path: Path, serializer: str) -> None:
    cassette = {
        "interactions": [
            interaction("/v1/chat/completions", CHAT),
            interaction("/v1/messages", MESSAGES, compress=serializer == "yaml"),
        ],
        "version": 1,
    }
    source = tmp_path / f"test_agent.{serializer}"
    source.write_text(yaml.dump(cassette) if serializer == "yaml" else json.dumps(cassette, indent=4))
    assert main(["import", str(source), "--out", str(tmp_path / "out")]) == 0
    (written,) = (tmp_path / "out").glob("*.json")
    assert KEY not in written.read_text()
    events = json.loads(written.read_text())["exchanges"][0]["response"]["events"]
    assert events[-1]["text"] == "[DONE]" and len(events) > 30  # the stream is events again

    with httpx2.Client(transport=HTTPX2Transport(MockLLM())) as http:
        expected = direct(http)
    replaying = MockLLM(recordings=RecordingLibrary.from_directory(tmp_path / "out"))
    with httpx2.Client(transport=HTTPX2Transport(replaying)) as http:
        assert direct(http) == expected
    assert [e.script_id for e in replaying.journal] == ["recording test_agent.json#0", "recording test_agent.json#1"]


def test_an_older_httpx_cassette_form_is_read(tmp_path: Path) -> None:
    modern = interaction("/v1/messages", MESSAGES)
    response = modern["response"]
    modern["response"] = {
        "status_code": 200,
        "headers": response["headers"],
        "content": response["body"]["string"],
        "http_version": "HTTP/1.1",
    }
    source = tmp_path / "old.yaml"
    source.write_text(yaml.dump({"interactions": [modern], "version": 1}))
    assert main(["import", str(source), "--out", str(tmp_path / "out")]) == 0
    replaying = MockLLM(recordings=RecordingLibrary.from_directory(tmp_path / "out"))
    reply = replaying.handle("POST", "/v1/messages", {}, json.dumps(MESSAGES).encode())
    assert json.loads(reply.body)["content"][0]["name"] == "f"


AIMOCK = {
    "fixtures": [
        {
            "match": {"userMessage": "weather in Paris", "hasToolResult": False},
            "response": {"toolCalls": [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]},
        },
        {
            "match": {"userMessage": "weather in Paris", "toolResultContains": "sunny"},
            "response": {"content": "It is sunny in Paris."},
        },
        {
            "match": {"userMessage": "overloaded"},
            "response": {"error": {"message": "Try later", "type": "rate_limit_error"}, "status": 429},
        },
    ]
}


def test_an_aimock_fixture_file_becomes_scripts_that_run_a_tool_loop(tmp_path: Path) -> None:
    source = tmp_path / "agent.json"
    source.write_text(json.dumps(AIMOCK))
    assert main(["import", str(source), "--out", str(tmp_path / "out")]) == 0
    mock = MockLLM()
    assert len(load_scripts(tmp_path / "out" / "agent.scripts.json", mock)) == 2
    with httpx2.Client(transport=HTTPX2Transport(mock)) as http:
        client = openai.OpenAI(api_key="x", base_url="http://mockllm.test/v1", http_client=http, max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "What is the weather in Paris?"}]
        first = client.chat.completions.create(model="m", messages=messages).choices[0].message
        (call,) = first.tool_calls or []
        assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})
        messages += [first.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": "sunny"}]
        assert (
            client.chat.completions.create(model="m", messages=messages).choices[0].message.content
            == "It is sunny in Paris."
        )
        with pytest.raises(openai.RateLimitError, match="Try later"):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "overloaded?"}])


def test_a_file_of_neither_kind_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "other.json"
    source.write_text('{"items": []}')
    assert main(["import", str(source), "--out", str(tmp_path / "out")]) == 2
    assert "neither a vcrpy cassette" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text("interactions:\n- request: {uri: [\n")
    with pytest.raises(RecordingError, match=r"broken.yaml:\d+: not valid YAML"):
        from mockllm._recording.importers import import_file

        import_file(broken, tmp_path / "out")
