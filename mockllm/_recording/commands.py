"""The recording verbs of ``python -m mockllm``: record, import, drift (and the
``serve --recordings`` options). ``mockllm._cli`` parses; these run."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

# What a verb needs is imported when it runs: ``serve`` without ``--recordings`` loads
# none of the recording file models (a fresh process's start, ~3% of it).
if TYPE_CHECKING:
    from mockllm._recording.source import RecordedAnswers

__all__ = ["add_record_parsers", "add_replay_options", "library_from_args", "run_drift", "run_import", "run_record"]


def add_replay_options(serve: argparse.ArgumentParser) -> None:
    add_script_option(serve)
    serve.add_argument(
        "--recordings", metavar="DIR", help="answer requests from the recordings in DIR (a miss is a 404 with the diff)"
    )
    serve.add_argument(
        "--replay-speed",
        type=float,
        default=None,
        metavar="X",
        help="replay streams at the recorded pace times X (1 = as recorded; default: at once)",
    )
    serve.add_argument(
        "--match-ignore",
        action="append",
        default=None,
        metavar="FIELD",
        help="a body field left out of matching (dotted, * for list items); repeatable",
    )
    serve.add_argument(
        "--match-replace",
        action="append",
        default=[],
        nargs=2,
        metavar=("REGEX", "WITH"),
        help="replace REGEX in every string of a body before matching (volatile text); repeatable",
    )


def add_script_option(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--scripts",
        metavar="FILE",
        help="register the scripts of FILE (python -m mockllm import of aimock fixtures writes one)",
    )


def register_scripts(mock: object, args: argparse.Namespace) -> None:
    """Register ``serve --scripts FILE`` on ``mock`` (``ValueError`` for a bad file)."""
    if args.scripts is None:
        return
    from mockllm._recording.importers import load_scripts

    try:
        load_scripts(args.scripts, mock)
    except (OSError, KeyError, TypeError) as exc:
        raise ValueError(f"{args.scripts}: not a scripts file ({type(exc).__name__}: {exc})") from exc


def add_record_parsers(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    record = verbs.add_parser("record", help="a proxy that forwards to a real provider and records each exchange")
    record.add_argument(
        "--upstream",
        action="append",
        required=True,
        metavar="[PROTOCOL=]URL",
        help="where requests go: a URL for all, or PROTOCOL=URL for one protocol; repeatable",
    )
    record.add_argument("--out", required=True, metavar="DIR", help="the folder the recordings are written to")
    record.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    record.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    record.add_argument(
        "--scrub", action="append", default=[], metavar="REGEX", help="replace REGEX in bodies with [scrubbed]"
    )

    importing = verbs.add_parser("import", help="convert vcrpy / pytest-recording cassettes or aimock fixtures")
    importing.add_argument("file", help="a vcrpy cassette (YAML or JSON) or an aimock fixture file (JSON)")
    importing.add_argument("--out", required=True, metavar="DIR", help="the folder to write recordings into")

    drift = verbs.add_parser("drift", help="re-send recorded requests and report changes of shape")
    drift.add_argument("folder", metavar="DIR", help="the recordings to check")
    drift.add_argument("--upstream", action="append", required=True, metavar="[PROTOCOL=]URL", help="as for record")


def _fail(message: str) -> int:
    print(f"mockllm: {message}", file=sys.stderr)
    return 2


def library_from_args(args: argparse.Namespace) -> RecordedAnswers | None:
    """The ``RecordingLibrary`` that ``serve --recordings`` asks for, or None."""
    if args.recordings is None:
        if args.replay_speed is not None:
            raise ValueError("--replay-speed needs --recordings DIR")
        return None
    from mockllm._recording.matching import DEFAULT_IGNORE, RequestMatcher
    from mockllm._recording.replay import RecordingLibrary

    ignore = DEFAULT_IGNORE if args.match_ignore is None else tuple(args.match_ignore)
    matcher = RequestMatcher(ignore=ignore, replace=[tuple(pair) for pair in args.match_replace])
    return RecordingLibrary.from_directory(args.recordings, matcher=matcher, speed=args.replay_speed)


def run_record(args: argparse.Namespace) -> int:
    from mockllm._recording.proxy import Upstreams, serve_recording
    from mockllm._recording.recorder import Recorder

    try:
        upstreams = Upstreams.parse(args.upstream)
        recorder = Recorder(
            args.out, scrubbers=args.scrub, on_error=lambda exc: print(f"mockllm: {exc}", file=sys.stderr)
        )
    except ValueError as exc:
        return _fail(str(exc))

    def ready(base_url: str) -> None:
        print(f"mockllm recording on {base_url}", flush=True)
        print(f"  OpenAI: base_url={base_url}/v1   Anthropic: base_url={base_url}", flush=True)
        print(f"  into {args.out}   (Ctrl+C stops)", flush=True)

    try:
        serve_recording(upstreams, recorder, host=args.host, port=args.port, on_ready=ready)
    except OSError as exc:
        return _fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}. Pick another --port.")
    print(f"mockllm stopped; {len(set(recorder.written))} recording file(s) in {args.out}", flush=True)
    return 1 if recorder.refused else 0


def run_import(args: argparse.Namespace) -> int:
    from mockllm._recording.format import RecordingError
    from mockllm._recording.importers import import_file

    try:
        written = import_file(args.file, args.out)
    except (RecordingError, ValueError, OSError) as exc:
        return _fail(str(exc))
    for path in written:
        print(path)
    return 0


def run_drift(args: argparse.Namespace) -> int:
    from mockllm._recording.drift import check_drift
    from mockllm._recording.format import RecordingError
    from mockllm._recording.proxy import Upstreams

    try:
        report = check_drift(args.folder, Upstreams.parse(args.upstream))
    except (RecordingError, ValueError) as exc:
        return _fail(str(exc))
    print(report.describe())
    return 1 if report.drifted else 0
