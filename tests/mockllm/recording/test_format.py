"""The recording file: readable, stable, exact; a broken one names its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockllm._recording.format import Recording, RecordingError, dump_recording, load_recording
from mockllm._recording.sse import EventSplitter, event_bytes, event_record
from mockllm._recording.store import write_recording

EXCHANGE = {
    "request": {"method": "POST", "path": "/v1/messages", "protocol": "anthropic-messages", "body": {"model": "m"}},
    "response": {
        "status": 200,
        "headers": {"content-type": "text/event-stream", "request-id": "req_1"},
        "events": [
            {"delay_ms": 12.5, "event": "message_start", "data": {"type": "message_start"}},
            {"delay_ms": 0.5, "raw": ": ping\n\n"},
        ],
    },
}


def written(tmp_path: Path) -> Path:
    return write_recording(Recording.model_validate({"exchanges": [EXCHANGE, EXCHANGE]}), tmp_path / "r.json")


def test_a_recording_round_trips_and_is_stable(tmp_path: Path) -> None:
    path = written(tmp_path)
    text = path.read_text()
    assert json.loads(text)["format"] == "mockllm-recording" and json.loads(text)["version"] == 1
    assert dump_recording(load_recording(path)) == text
    # one line per event, keys in a fixed order
    assert '{"delay_ms": 12.5, "event": "message_start", "data": {"type": "message_start"}}' in text


def test_a_truncated_recording_names_the_file_and_line(tmp_path: Path) -> None:
    path = written(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:14]))
    with pytest.raises(RecordingError, match=rf"^{path}:\d+: not valid JSON .*truncated or hand-edited"):
        load_recording(path)


def test_a_hand_edited_field_names_its_line(tmp_path: Path) -> None:
    path = written(tmp_path)
    text = path.read_text().replace('"status": 200', '"status": "ok"', 2)
    path.write_text(text)
    expected_line = text.splitlines().index('      "response": {') + 2
    with pytest.raises(RecordingError) as error:
        load_recording(path)
    assert str(error.value).startswith(f"{path}:{expected_line}: exchanges[0].response.status:")


def test_an_event_with_two_payloads_is_refused_at_its_line(tmp_path: Path) -> None:
    path = written(tmp_path)
    text = path.read_text().replace(
        '{"delay_ms": 0.5, "raw": ": ping\\n\\n"}', '{"delay_ms": 0.5, "text": "x", "raw": "y"}', 1
    )
    path.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if '"text": "x"' in row)
    with pytest.raises(RecordingError, match=rf":{line}: exchanges\[0\]\.response\.events\[1\]: .*exactly one of"):
        load_recording(path)


def test_an_unknown_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"format": "mockllm-recording",\n "version": 7, "exchanges": []}')
    with pytest.raises(RecordingError, match=r"r.json:2: recording format version 7 is not one"):
        load_recording(path)


@pytest.mark.parametrize(
    "raw",
    [
        b'data: {"a":1}\n\n',
        b'event: message_start\ndata: {"type":"message_start"}\n\n',
        b"data: [DONE]\n\n",
        b'data: {"a": 1}\n\n',
        b'data: {"a":1}\r\n\r\n',
        b": comment\n\n",
        b"id: 3\nretry: 10\ndata: x\n\n",
        b"data: one\ndata: two\n\n",
        b'data: {"unterminated":',
    ],
)
def test_every_event_renders_back_to_its_bytes(raw: bytes) -> None:
    assert event_bytes(event_record(raw, 1.0)) == raw


def test_the_splitter_cuts_events_however_the_bytes_arrive() -> None:
    stream = b'data: {"a":1}\r\n\r\nevent: x\ndata: y\n\ndata: z\r\r'
    for size in (1, 2, 3, 7, len(stream)):
        splitter = EventSplitter()
        events = [e for i in range(0, len(stream), size) for e in splitter.feed(stream[i : i + size])]
        events += splitter.close()
        assert events == [b'data: {"a":1}\r\n\r\n', b"event: x\ndata: y\n\n", b"data: z\r\r"]


def test_serve_refuses_a_broken_recording_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mockllm._cli import main

    path = written(tmp_path)
    path.write_text(path.read_text()[:200])
    assert main(["serve", "--port", "0", "--recordings", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"mockllm: {path}:")
    assert main(["serve", "--port", "0", "--replay-speed", "2"]) == 2
    assert "--replay-speed needs --recordings DIR" in capsys.readouterr().err
