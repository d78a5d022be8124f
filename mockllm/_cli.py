"""``python -m mockllm``: serve the mock, or explain a request body.

python -m mockllm serve [--host 127.0.0.1] [--port 8000] [--seed 0] [--lenient]
                        [--max-output-bytes N] [--max-delay-ms MS] [--max-body-bytes N]
                        [--max-scripts N] [--max-scripts-bytes N] [--max-sessions N]
                        [--latency-profile FILE] [--no-metrics]
                        [--workers N] [--state memory|sqlite:///PATH|redis://HOST:PORT/DB]
                        [--recordings DIR [--replay-speed X] [--match-ignore FIELD] [--match-replace RE WITH]]
                        [--stream-shape JSON]
python -m mockllm explain request.json [--protocol openai-chat]
python -m mockllm record --upstream [PROTOCOL=]URL ... --out DIR [--host H] [--port P] [--scrub REGEX]
python -m mockllm import CASSETTE --out DIR
python -m mockllm drift DIR --upstream [PROTOCOL=]URL ...
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mockllm._engine import MockLLM
from mockllm._explain import explain
from mockllm._latency import load_latency_profiles
from mockllm._limits import Limits
from mockllm._optional import MissingExtraError
from mockllm._recording import commands as recording
from mockllm._shapes import as_stream_shape
from mockllm._state import State, StateConfigError, open_state, temporary_sqlite_url
from mockllm._wire.registry import PROTOCOLS

__all__ = ["main"]


@dataclass(frozen=True)
class _LimitFlag:
    """A ``serve`` flag that sets one field of ``Limits`` (its default is that field's)."""

    flag: str
    field: str
    type: type[int] | type[float]
    metavar: str
    least: int
    """The smallest value accepted (``--max-delay-ms`` is checked on its own: finite, 0 or more)."""
    help: str

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


_LIMIT_FLAGS = (
    _LimitFlag(
        "--max-output-bytes",
        "max_output_bytes",
        int,
        "N",
        1024,
        "largest reply one request may script; past it the reply is a fallback saying why (default 8 MiB)",
    ),
    _LimitFlag(
        "--max-delay-ms",
        "max_delay_ms",
        float,
        "MS",
        0,
        "longest scripted streaming delay; longer ones are shortened (default 30000)",
    ),
    _LimitFlag(
        "--max-body-bytes",
        "max_body_bytes",
        int,
        "N",
        1024,
        "largest request body; past it the reply is a 413 (default 4 MiB)",
    ),
    _LimitFlag(
        "--max-scripts",
        "max_scripts",
        int,
        "N",
        0,
        "most registered scripts a mock (or session) keeps; past it a 409 (default 1000)",
    ),
    _LimitFlag(
        "--max-scripts-bytes",
        "scripts_bytes",
        int,
        "N",
        0,
        "most bytes of registered scripts a mock (or session) keeps (default 8 MiB)",
    ),
    _LimitFlag(
        "--max-sessions", "max_sessions", int, "N", 0, "most sessions open at once; past it a 409 (default 256)"
    ),
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mockllm", description=__doc__.split("\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)

    serve = verbs.add_parser("serve", help="run the mock LLM server on loopback")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    serve.add_argument("--seed", type=int, default=0, help="seed for generated words (default 0)")
    serve.add_argument("--lenient", action="store_true", help="accept tool results and tool calls that do not pair up")
    for limit in _LIMIT_FLAGS:
        serve.add_argument(
            limit.flag, type=limit.type, default=getattr(Limits, limit.field), metavar=limit.metavar, help=limit.help
        )

    serve.add_argument(
        "--latency-profile",
        metavar="FILE",
        help="pace every stream by a latency profile (YAML or JSON; one profile, or default and models: "
        "docs/simulation.md); a script's own timing wins",
    )
    serve.add_argument(
        "--no-metrics",
        action="store_true",
        help="count nothing and answer GET /metrics with a 404 (metrics need the metrics extra)",
    )

    serve.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="serve from N processes on one port, sharing their state (SQLite by default; docs/simulation.md)",
    )
    serve.add_argument(
        "--state",
        default=None,
        metavar="URL",
        help="where the mock keeps scripts, sessions, held conversations, attempt counts and the journal: "
        "memory (the default of one process), sqlite:///PATH (the default with --workers: a temporary file) "
        "or redis://HOST:PORT/DB (shared by replicas; the redis extra)",
    )
    recording.add_replay_options(serve)
    serve.add_argument(
        "--stream-shape",
        default=None,
        metavar="JSON",
        help='the stream shape of every streamed reply whose instruction has none, e.g. \'{"text": {"size": 1}, '
        '"writes": {"seed": 3}}\' (docs/stream-shapes.md; default: the mock\'s usual shape)',
    )

    explain_ = verbs.add_parser("explain", help="say which instruction a request body would run")
    explain_.add_argument("body", help="a JSON request body file, or - for standard input")
    explain_.add_argument(
        "--protocol", default="openai-chat", help=f"one of {', '.join(PROTOCOLS)} (default openai-chat)"
    )
    recording.add_record_parsers(verbs)
    return parser


def _announce(base_url: str, workers: int | None = None, state: str = "") -> None:
    print(f"mockllm serving on {base_url}", flush=True)
    if workers is not None:
        print(f"  {workers} worker(s) sharing {state.removeprefix('--state ')}", flush=True)
    elif state and state != "--state memory":  # a replica: say which shared state it joined
        print(f"  state: {state.removeprefix('--state ')}", flush=True)
    print(f"  OpenAI (Chat Completions, Responses): base_url={base_url}/v1", flush=True)
    print(f"  Anthropic (Messages):                 base_url={base_url}", flush=True)
    print(f"  journal: {base_url}/_mockllm/requests   (Ctrl+C stops)", flush=True)


def _limits_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the limit flags, if anything."""
    if args.workers is not None and args.workers < 1:
        return f"--workers must be at least 1; got {args.workers}."
    if not 0 <= args.max_delay_ms < float("inf"):
        return f"--max-delay-ms must be a finite number of milliseconds, 0 or more; got {args.max_delay_ms}."
    for limit in _LIMIT_FLAGS:
        value = getattr(args, limit.dest)
        if limit.type is int and value < limit.least:
            return f"{limit.flag} must be at least {limit.least}; got {value}."
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    verbs = {"record": recording.run_record, "import": recording.run_import, "drift": recording.run_drift}
    if args.verb in verbs:
        return verbs[args.verb](args)
    if args.verb == "serve":
        problem = _limits_problem(args)
        if problem is not None:
            print(f"mockllm: {problem}", file=sys.stderr)
            return 2
        limits = Limits(**{limit.field: getattr(args, limit.dest) for limit in _LIMIT_FLAGS})
        try:
            stream_shape = as_stream_shape(args.stream_shape)
        except ValueError as exc:
            print(f"mockllm: --stream-shape: {exc}", file=sys.stderr)
            return 2
        try:
            state, temporary = _open_state(args)
        except (StateConfigError, MissingExtraError) as exc:
            print(f"mockllm: {exc}", file=sys.stderr)
            return 2
        try:
            return _serve(args, limits, stream_shape, state)
        finally:
            state.close()
            if temporary is not None:
                shutil.rmtree(temporary, ignore_errors=True)
    text = sys.stdin.read() if args.body == "-" else Path(args.body).read_text(encoding="utf-8")
    try:
        print(explain(text, args.protocol))
    except ValueError as exc:
        print(f"mockllm: {exc}", file=sys.stderr)
        return 2
    return 0


def _open_state(args: argparse.Namespace) -> tuple[State, str | None]:
    """The state ``--state`` names (``--workers``' default: a temporary SQLite file, whose
    folder is returned to be removed at the end)."""
    url, temporary = args.state, None
    if url is None and args.workers is not None:
        url = temporary_sqlite_url()
        temporary = os.path.dirname(url[len("sqlite://") :])
    if args.workers is not None and url == "memory":
        raise StateConfigError(
            "--state memory: the workers of --workers share no memory; use sqlite:///PATH (the default) or redis://…"
        )
    return open_state(url or "memory"), temporary


def _serve(args: argparse.Namespace, limits: Limits, stream_shape: Any, state: State) -> int:
    from mockllm._serve import serve
    from mockllm._serving import tune_gc_for_serving

    try:
        latency = load_latency_profiles(args.latency_profile) if args.latency_profile else None
        mock = MockLLM(
            seed=args.seed,
            lenient=args.lenient,
            limits=limits,
            recordings=recording.library_from_args(args),
            stream=stream_shape,
            latency=latency,
            state=state,
        )
        recording.register_scripts(mock, args)
    except ValueError as exc:  # a bad recording (RecordingError) or scripts file names its line
        print(f"mockllm: {exc}", file=sys.stderr)
        return 2
    tune_gc_for_serving()
    try:
        status = serve(
            mock,
            host=args.host,
            port=args.port,
            workers=args.workers,
            on_ready=lambda url: _announce(url, args.workers, state.where),
            metrics=not args.no_metrics,
        )
    except OSError as exc:
        print(
            f"mockllm: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}. "
            "Pick another --port (0 picks a free one).",
            file=sys.stderr,
        )
        return 2
    print("mockllm stopped", flush=True)
    return status
