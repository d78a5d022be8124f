"""A Bedrock ``converse_stream`` reply is AWS's binary event stream, not text: recorded
through the ``mockllm_server`` fixture, it replays byte for byte with the upstream
stopped, and boto3 reads the same events (its frames' checksums hold)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mockllm._recording.format import Exchange, ExchangeRequest, ExchangeResponse, Recording
from mockllm._recording.scrub import SecretInRecording, check_no_secrets
from tests.mockllm.recording.support import mock_upstream

pytest.importorskip("boto3", reason="boto3 is not installed (the test extra)")

TESTS = """
import json, os
from pathlib import Path
import boto3, pytest
from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[
    {"messages": [{"text_message": {"text": "Fjords and rain."}},
                  {"tool_call": [{"name": "lookup", "args": {"city": "Bergen"}}]}]},
]).tagged("Weather in Bergen?")
TOOLS = {"tools": [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}]}

@pytest.mark.mockllm(record=True)
def test_converse_stream(mockllm_server):
    bedrock = boto3.client("bedrock-runtime", endpoint_url=mockllm_server.base_url, region_name="us-east-1",
                           aws_access_key_id="AKIDMOCKLLM", aws_secret_access_key="not-a-secret")
    reply = bedrock.converse_stream(modelId="anthropic.claude-3-5-sonnet-20240620-v1:0", toolConfig=TOOLS,
                                    messages=[{"role": "user", "content": [{"text": PROMPT}]}])
    events = list(reply["stream"])
    assert any("contentBlockDelta" in event for event in events)
    Path(os.environ["SEEN_FILE"]).write_text(json.dumps(events, sort_keys=True, default=str))
"""


def test_a_bedrock_event_stream_records_and_replays_byte_for_byte(
    strict_pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    strict_pytester.makepyfile(test_bedrock=TESTS)
    with mock_upstream() as upstream:
        monkeypatch.setenv("SEEN_FILE", str(tmp_path / "recorded.json"))
        flags = ("--mockllm-record-mode", "once", "--mockllm-upstream", upstream)
        strict_pytester.runpytest("-p", "no:cacheprovider", *flags).assert_outcomes(passed=1)
    recording = json.loads(
        (strict_pytester.path / "recordings" / "test_bedrock" / "test_converse_stream.json").read_text()
    )
    response = recording["exchanges"][0]["response"]
    assert response["headers"]["content-type"] == "application/vnd.amazon.eventstream"
    # Kept whole: AWS event-stream frames, each with its length prefix and CRCs.
    frames = base64.b64decode(response["body_base64"])
    assert b":event-type" in frames and b"contentBlockDelta" in frames

    monkeypatch.setenv("SEEN_FILE", str(tmp_path / "replayed.json"))
    strict_pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    replayed = json.loads((tmp_path / "replayed.json").read_text())
    assert replayed == json.loads((tmp_path / "recorded.json").read_text())
    assert {"messageStop": {"stopReason": "tool_use"}} in replayed


def test_a_key_inside_a_binary_reply_is_refused_like_any_other() -> None:
    frames = b'\x00\x00\x00\x9b\xffcontentBlockDelta {"text":"sk-proj-abcdefghijklmnop0123"}\xfe'
    recording = Recording(
        exchanges=[
            Exchange(
                request=ExchangeRequest(path="/model/m/converse-stream"),
                response=ExchangeResponse(status=200, body_base64=base64.b64encode(frames).decode()),
            )
        ]
    )
    with pytest.raises(SecretInRecording, match=r"exchanges\[0\]\.response\.body_base64 holds .*OpenAI-style"):
        check_no_secrets(recording, "recordings/t.json")
