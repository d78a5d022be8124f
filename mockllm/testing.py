"""What test tooling built on the mock needs beyond ``mockllm``'s own doors.

A stable, public API, for this project's pytest plugin and harness and for anyone's:
its names change only with a deprecation, as ``mockllm.__all__``'s do
(``tests/test_exported_members.py`` guards the list). Everything else of ``mockllm``
outside ``__all__`` is private and may change without notice.

::

    transport_for(mock, library)   the in-process transport for httpx or httpx2 clients
    import_httpx2(feature)         httpx2, or a MissingExtraError naming the extra
    MissingExtraError              an optional dependency is missing (names the extra)
    FileError                      a file that cannot be used, as ``path:line: reason``
                                   (RecordingError's base; a tool's own file errors too)
    as_chain(chain), as_match(m)   what MockLLM.script accepts, as its models
    with_stream(chain, stream, f)  the chain with a stream shape / stream faults on every step lacking one
    Selection                      what ``mockllm.explain`` returns
    INSTRUCTION_BLOCK              a compiled pattern matching one instruction block, tags included
    bind_socket(host, port)        a listening loopback socket (port 0: a free one), with a clear OSError
    run_until_signalled(server, s) run a uvicorn server on that socket until SIGINT/SIGTERM, quietly
    uvicorn_server(mock, metrics)  the uvicorn server ``serve`` runs for ``mock``, to run yourself
                                   (e.g. from a thread, on ``bind_socket``'s socket)
    Recording, load_recording      one recording file, read and checked (docs/recording.md)
    RecordedTurn, read_reply       what a recorded reply said (text, reasoning, tool calls, error)
    Upstreams, DEFAULT_IGNORE      where a recording proxy sends each protocol; the fields
                                   replay matching ignores by default
    failures(findings, allowances) the problems a verdict fails on, counted per kind
    FALLBACK_PREFIX                how a fallback reply's text starts (for text-only files: goldens)
"""

from __future__ import annotations

from mockllm._exceptions import FileError
from mockllm._instructions import INSTRUCTION_BLOCK
from mockllm._optional import MissingExtraError
from mockllm._plan_builder import FALLBACK_PREFIX
from mockllm._recording.format import Recording, load_recording
from mockllm._recording.matching import DEFAULT_IGNORE
from mockllm._recording.proxy import Upstreams
from mockllm._recording.replies import RecordedTurn, read_reply
from mockllm._registered import as_chain, as_match, with_stream
from mockllm._selection import Selection
from mockllm._serve import uvicorn_server
from mockllm._serving import bind_socket, run_until_signalled
from mockllm._transports import import_httpx2, transport_for
from mockllm._verdict import failures

__all__ = [
    "DEFAULT_IGNORE",
    "FALLBACK_PREFIX",
    "INSTRUCTION_BLOCK",
    "FileError",
    "MissingExtraError",
    "RecordedTurn",
    "Recording",
    "Selection",
    "Upstreams",
    "as_chain",
    "as_match",
    "bind_socket",
    "failures",
    "import_httpx2",
    "load_recording",
    "read_reply",
    "run_until_signalled",
    "transport_for",
    "uvicorn_server",
    "with_stream",
]
