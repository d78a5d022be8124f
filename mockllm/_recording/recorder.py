"""Where the recording proxy puts what it captured: one file per distinct request.

An exchange goes to ``DIR/<protocol>-<signature>.json``: the first exchange of a request
in a run replaces an older file of that name, later identical requests (a retry) are
appended to it in order, unless their reply is the same as the last one's (timing aside):
replay repeats the last exchange anyway. Scrubbing, the secret scan and the write happen on one writer
thread, off the request's path; ``flush`` waits for them. A write the secret scan
refuses leaves no file and is reported on ``refused`` (and by the ``on_error`` callback).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mockllm._recording.capture import Captured
from mockllm._recording.format import Exchange, Recording
from mockllm._recording.matching import RequestMatcher
from mockllm._recording.scrub import Scrubber, SecretInRecording, scrub_exchange
from mockllm._recording.store import write_recording

__all__ = ["Recorder"]


def _same_reply(earlier: Exchange, later: Exchange) -> bool:
    """Whether two exchanges of one request got the same reply, timing aside."""
    timeless = {"events": {"__all__": {"delay_ms"}}}
    return earlier.response.model_dump(exclude=timeless) == later.response.model_dump(exclude=timeless)


class Recorder:
    """Writes captured exchanges into ``folder`` (see the module docstring)."""

    def __init__(
        self,
        folder: Path | str,
        *,
        scrubbers: Sequence[Scrubber] = (),
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.scrubbers = list(scrubbers)
        self.on_error = on_error
        self.refused: list[SecretInRecording] = []
        self.written: list[Path] = []
        self._this_run: dict[Path, Recording] = {}
        self._path_of_raw: dict[Any, Path] = {}  # a request as it came -> its file
        self._last_raw: dict[Path, Any] = {}  # a file -> its last exchange as it came
        self._matcher = RequestMatcher()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mockllm-recorder")
        self._pending: list[Future[None]] = []
        self._lock = threading.Lock()

    def path_for(self, exchange: Exchange) -> Path:
        request = exchange.request
        prefix = request.protocol or "http"
        return self.folder / f"{prefix}-{self._matcher.key_of(request)[:16]}.json"

    def add(self, exchange: Exchange | Callable[[], Exchange]) -> None:
        """Queue ``exchange`` (or what builds it, run on the writer thread) for writing;
        returns at once."""
        with self._lock:
            self._pending = [f for f in self._pending if not f.done()]
            self._pending.append(self._writer.submit(self._write, exchange))

    def _write(self, exchange: Exchange | Callable[[], Exchange]) -> None:
        try:
            raw = exchange.raw() if isinstance(exchange, Captured) else None
            if raw is not None and raw[0] in self._path_of_raw:
                path = self._path_of_raw[raw[0]]
                if self._last_raw.get(path) == raw:
                    return  # the very bytes of the last reply to the very same request: as below
            if not isinstance(exchange, Exchange):
                exchange = exchange()
            exchange = scrub_exchange(exchange, self.scrubbers)
            path = self.path_for(exchange)
            previous = self._this_run.get(path)
            if previous is None or not _same_reply(previous.exchanges[-1], exchange):
                exchanges = [*previous.exchanges, exchange] if previous is not None else [exchange]
                recording = Recording.model_construct(exchanges=exchanges)
                write_recording(recording, path)
                self._this_run[path] = recording
                self.written.append(path)
            # else a replay past the last exchange repeats it: a copy would add nothing
            if raw is not None:
                self._path_of_raw[raw[0]] = path
                self._last_raw[path] = raw
        except Exception as exc:  # reported, never raised into the request that caused it
            if isinstance(exc, SecretInRecording):
                self.refused.append(exc)
            if self.on_error is not None:
                self.on_error(exc)

    def flush(self) -> None:
        """Wait until every queued exchange is written (or refused)."""
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            future.result()

    def close(self) -> None:
        self.flush()
        self._writer.shutdown(wait=True)
