"""Recording files on disk: a folder of ``*.json`` recordings, written whole or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mockllm._recording.format import Recording, RecordingError, dump_recording, load_recording
from mockllm._recording.scrub import check_no_secrets

__all__ = ["load_directory", "write_recording"]


def load_directory(folder: Path | str) -> list[tuple[Path, Recording]]:
    """Every recording under ``folder`` (``*.json``, recursively, in name order); a
    single file is read on its own. A bad file is a ``RecordingError`` naming it."""
    folder = Path(folder)
    if folder.is_file():
        return [(folder, load_recording(folder))]
    if not folder.is_dir():
        raise RecordingError(folder, None, "no such recordings folder; record into it first (python -m mockllm record)")
    return [(path, load_recording(path)) for path in sorted(folder.rglob("*.json"))]


def write_recording(recording: Recording, path: Path | str) -> Path:
    """Write ``recording`` to ``path`` after the secret scan (``SecretInRecording`` and
    nothing written if it finds a key); the file is replaced in one step."""
    path = Path(path)
    check_no_secrets(recording, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dump_recording(recording)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
