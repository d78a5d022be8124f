"""What test tooling built on the mock needs beyond ``mockllm``'s own doors.

A stable, public API, for this project's pytest plugin and harness and for anyone's:
its names change only with a deprecation, as ``mockllm.__all__``'s do
(``tests/test_exported_members.py`` guards the list). Everything else of ``mockllm``
outside ``__all__`` is private and may change without notice.

::

    transport_for(mock, library)   the in-process transport for httpx or httpx2 clients
    import_httpx2(feature)         httpx2, or a MissingExtraError naming the extra
    MissingExtraError              an optional dependency is missing (names the extra)
    as_chain(chain), as_match(m)   what MockLLM.script accepts, as its models
    with_stream(chain, stream, f)  the chain with a stream shape / stream faults on every step lacking one
    Selection                      what ``mockllm.explain`` returns
    INSTRUCTION_BLOCK              a compiled pattern matching one instruction block, tags included
    bind_socket(host, port)        a listening loopback socket (port 0: a free one), with a clear OSError
    run_until_signalled(server, s) run a uvicorn server on that socket until SIGINT/SIGTERM, quietly
"""

from __future__ import annotations

from mockllm._instructions import INSTRUCTION_BLOCK
from mockllm._optional import MissingExtraError
from mockllm._registered import as_chain, as_match, with_stream
from mockllm._selection import Selection
from mockllm._server import bind_socket, run_until_signalled
from mockllm._transports import import_httpx2, transport_for

__all__ = [
    "INSTRUCTION_BLOCK",
    "MissingExtraError",
    "Selection",
    "as_chain",
    "as_match",
    "bind_socket",
    "import_httpx2",
    "run_until_signalled",
    "transport_for",
    "with_stream",
]
