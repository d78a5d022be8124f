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
                                   (``on_ready=f``: f, a banner, is called once a signal would be)
    uvicorn_server(mock, metrics)  the uvicorn server ``serve`` runs for ``mock``, to run yourself
                                   (e.g. from a thread, on ``bind_socket``'s socket)
    PromptServer(config)           uvicorn's server, which stops as soon as ``should_exit`` is set
                                   (uvicorn's own looks every 0.1 s, then waits 0.1 s more)
    Recording, load_recording      one recording file, read and checked (docs/recording.md)
    RecordedTurn, read_reply       what a recorded reply said (text, reasoning, tool calls, error)
    Upstreams, DEFAULT_IGNORE      where a recording proxy sends each protocol; the fields
                                   replay matching ignores by default
    failures(findings, allowances) the problems a verdict fails on, counted per kind
    FALLBACK_PREFIX                how a fallback reply's text starts (for text-only files: goldens)
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from mockllm._lazy import door as _door
from mockllm._lazy import doors as _doors

if _TYPE_CHECKING:
    from mockllm._exceptions import FileError as FileError
    from mockllm._instructions import INSTRUCTION_BLOCK as INSTRUCTION_BLOCK
    from mockllm._optional import MissingExtraError as MissingExtraError
    from mockllm._plan_builder import FALLBACK_PREFIX as FALLBACK_PREFIX
    from mockllm._recording.format import Recording as Recording
    from mockllm._recording.format import load_recording as load_recording
    from mockllm._recording.matching import DEFAULT_IGNORE as DEFAULT_IGNORE
    from mockllm._recording.proxy import Upstreams as Upstreams
    from mockllm._recording.replies import RecordedTurn as RecordedTurn
    from mockllm._recording.replies import read_reply as read_reply
    from mockllm._registered import as_chain as as_chain
    from mockllm._registered import as_match as as_match
    from mockllm._registered import with_stream as with_stream
    from mockllm._selection import Selection as Selection
    from mockllm._serve import uvicorn_server as uvicorn_server
    from mockllm._serving import bind_socket as bind_socket
    from mockllm._serving import run_until_signalled as run_until_signalled
    from mockllm._serving_uvicorn import PromptServer as PromptServer
    from mockllm._transports import import_httpx2 as import_httpx2
    from mockllm._transports import transport_for as transport_for
    from mockllm._verdict import failures as failures

# The names are the imports above, loaded on first use (``mockllm._lazy``): the plugin's
# fixtures, which need the scripting models and a transport, do not import the server, the
# recording proxy or uvicorn.


def __getattr__(name: str) -> _Any:
    return _door(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_doors(__name__)))
