"""A request body that is not UTF-8 is recorded byte for byte (``body_base64``), as a
reply's is. Before, it was kept as text with U+FFFD for each bad byte: the recording
no longer held what was sent, and two different such bodies matched each other."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from mockllm import MockLLM
from mockllm._recording.capture import exchange_request
from mockllm._recording.format import Exchange, Recording, load_recording
from mockllm._recording.replay import RecordingLibrary
from mockllm._recording.store import write_recording

PATH = "/v1/chat/completions"
SENT = b'{"model": "m", "messages": [{"role": "user", "content": "caf\xe9"}]}'
OTHER = b'{"model": "m", "messages": [{"role": "user", "content": "caf\xe8"}]}'


def test_the_recording_keeps_the_bytes_and_replay_tells_them_apart(tmp_path: Path) -> None:
    request = exchange_request("POST", PATH, [], {}, SENT)
    assert request.body_text is None
    assert base64.b64decode(request.body_base64 or "") == SENT
    exchange = Exchange(request=request, response={"status": 400, "body": {"error": "bad"}})  # type: ignore[arg-type]
    path = write_recording(Recording(exchanges=[exchange]), tmp_path / "rec.json")
    (reloaded,) = load_recording(path).exchanges
    assert reloaded.request.body_bytes() == SENT
    mock = MockLLM(recordings=RecordingLibrary.from_directory(tmp_path))
    assert mock.handle("POST", PATH, {}, SENT).status == 400
    miss = mock.handle("POST", PATH, {}, OTHER)
    assert miss.status == 404
    assert "body_base64 differs" in json.loads(miss.body)["error"]["message"]
