"""Secrets never reach a recording file."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockllm._recording.capture import Capture, exchange_request
from mockllm._recording.format import Exchange, Recording
from mockllm._recording.recorder import Recorder
from mockllm._recording.scrub import SecretInRecording, kept_response_headers
from mockllm._recording.store import write_recording


def exchange(prompt: str, reply: str = "ok") -> Exchange:
    headers = {
        "authorization": "Bearer sk-live",
        "x-api-key": "k",
        "api-key": "k",
        "cookie": "c=1",
        "anthropic-version": "2023-06-01",
    }
    capture = Capture(
        exchange_request(
            "POST",
            "/v1/chat/completions",
            [("key", "AIza-secret"), ("api_key", "x"), ("access_token", "t"), ("sig", "s"), ("deployment", "d1")],
            headers,
            b'{"model":"m","messages":[{"role":"user","content":"%s"}]}' % prompt.encode(),
        )
    )
    capture.started(200, [("content-type", "application/json"), ("set-cookie", "s=1"), ("x-request-id", "req_1")])
    capture.chunk(b'{"choices":[{"message":{"content":"%s"}}]}' % reply.encode())
    return capture.finished()


def test_credential_headers_and_key_shaped_query_parameters_are_dropped() -> None:
    kept = exchange("hi")
    assert kept.request.headers == {"anthropic-version": "2023-06-01"}
    assert kept.request.query == {"deployment": "d1"}
    assert kept.response.headers == {"content-type": "application/json", "x-request-id": "req_1"}


def test_rate_limit_and_retry_headers_are_kept() -> None:
    headers = [
        ("x-ratelimit-remaining-requests", "9"),
        ("anthropic-ratelimit-tokens-reset", "t"),
        ("retry-after", "1"),
        ("retry-after-ms", "5"),
        ("openai-organization", "org-1"),
        ("request-id", "req_2"),
    ]
    assert list(kept_response_headers(headers)) == [
        "anthropic-ratelimit-tokens-reset",
        "request-id",
        "retry-after",
        "retry-after-ms",
        "x-ratelimit-remaining-requests",
    ]


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "Anthropic"),
        ("sk-proj-abcdefghijklmnopqrstuvwxyz", "OpenAI"),
        ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "Google"),
        ("AKIAIOSFODNN7EXAMPLE", "AWS"),
    ],
)
def test_a_key_in_a_prompt_refuses_the_write_naming_file_and_field(tmp_path: Path, secret: str, kind: str) -> None:
    path = tmp_path / "r.json"
    with pytest.raises(SecretInRecording) as refused:
        write_recording(Recording(exchanges=[exchange(f"my key is {secret}")]), path)
    message = str(refused.value)
    assert message.startswith(f"{path}: refusing to write the recording: exchanges[0].request.body.messages[0].content")
    assert kind in message and secret not in message
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_regex_and_callable_scrubbers_run_before_the_scan(tmp_path: Path) -> None:
    def no_emails(value: object) -> object:
        return value if not isinstance(value, dict) else {**value, "model": "m-scrubbed"} if "model" in value else value

    refused: list[Exception] = []
    recorder = Recorder(tmp_path, scrubbers=[r"sk-[A-Za-z0-9-]+", no_emails], on_error=refused.append)
    recorder.add(
        exchange("my key is sk-proj-abcdefghijklmnopqrstuvwxyz", reply="Dear sk-ant-api03-abcdefghijklmnopqrstuv")
    )
    recorder.close()
    assert refused == []
    (path,) = recorder.written
    text = path.read_text()
    assert "sk-" not in text
    assert "my key is [scrubbed]" in text and "Dear [scrubbed]" in text and "m-scrubbed" in text


def test_the_recorder_reports_a_refused_write_and_writes_nothing(tmp_path: Path) -> None:
    refused: list[Exception] = []
    recorder = Recorder(tmp_path, on_error=refused.append)
    recorder.add(exchange("AKIAIOSFODNN7EXAMPLE"))
    recorder.close()
    assert [type(e) for e in refused] == [SecretInRecording] and recorder.refused == refused
    assert list(tmp_path.iterdir()) == []
