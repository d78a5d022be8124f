"""``python -m harness``: replay scenarios against their goldens, review golden changes,
serve the chain service.

    python -m harness replay scenarios/ [-k EXPR] [--update] [--protocol P] [--server] [pytest options]
    python -m harness diff [golden/]
    python -m harness review [PATH] [--output FILE]
    python -m harness serve [--host 127.0.0.1] [--port 8765] [--config service.yaml]
                            [--llm-base-url URL | --with-mock]
    python -m harness scenario from-recording RECORDING [--out FILE]
"""

from __future__ import annotations

import argparse
import secrets
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.scenarios import from_recording
from harness.scenarios.contract import PROTOCOLS

__all__ = ["main"]


def _replay(args: argparse.Namespace, pytest_args: Sequence[str]) -> int:
    """pytest on the scenario files, with this command's options mapped onto pytest's."""
    import pytest

    command = [*args.paths]
    if args.k:
        command += ["-k", args.k]
    if args.update:
        command.append("--snapshot-update")
    if args.protocol:
        command += ["--mockllm-protocol", args.protocol]
    if args.server:
        command.append("--mockllm-replay-server")
    if args.golden_dir:
        command += ["--mockllm-golden-dir", args.golden_dir]
    return int(pytest.main([*command, *pytest_args]))


def _diff(args: argparse.Namespace) -> int:
    """Goldens changed against git HEAD, as readable diffs (new and deleted included)."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print("harness diff: not inside a git repository; nothing to compare goldens with.", file=sys.stderr)
        return 2
    paths = args.paths or ["golden"]
    root = top.stdout.strip()
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "--", *paths], capture_output=True, text=True, cwd=root
    ).stdout.split()
    diff = subprocess.run(
        ["git", "diff", "--no-color", "HEAD", "--", *paths], capture_output=True, text=True, cwd=root
    ).stdout
    if not diff and not untracked:
        print("No golden changed against HEAD.")
        return 0
    if diff:
        print(diff, end="")
    for name in untracked:
        print(f"new golden: {name}")
        print("".join(f"+{line}" for line in (Path(root) / name).read_text(encoding="utf-8").splitlines(True)))
    return 0


def _review(args: argparse.Namespace) -> int:
    """A static HTML page of the goldens that differ from git HEAD, side by side."""
    from harness.golden.review import changed_goldens, render_review_page
    from harness.golden.review.changes import GitError

    try:
        changes = changed_goldens(args.path)
    except GitError as exc:
        print(f"harness review: {exc}", file=sys.stderr)
        return 2
    output = Path(args.output)
    output.write_text(render_review_page(changes), encoding="utf-8")
    print(f"harness review: {len(changes)} golden(s) differ from HEAD; wrote {output}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    """The chain service (REST, WebSocket, progress page, MCP) until SIGINT or SIGTERM."""
    import uvicorn

    from harness.systems.service.app import create_app
    from harness.systems.service.auth import TOKENS_ENV, TokenAuth, token_gate
    from harness.systems.service.config import load_service_config
    from harness.systems.service.core import ChainService
    from mockllm._server import bind_socket, run_until_signalled

    try:
        auth = TokenAuth.from_env()
    except (OSError, ValueError) as exc:
        print(f"harness serve: cannot read the tokens in {TOKENS_ENV}: {exc}", file=sys.stderr)
        return 2
    if not auth.tokens:
        print(
            f"harness serve: no tokens are configured, so nobody could use the service. Set {TOKENS_ENV} to "
            'JSON such as {"<token>": {"user": "ada", "organization": "acme"}}, or to the path of a JSON file.',
            file=sys.stderr,
        )
        return 2
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        print(
            f"harness serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}. "
            "Pick another --port (0 picks a free one).",
            file=sys.stderr,
        )
        return 2
    shown = f"[{args.host}]" if ":" in args.host else args.host
    base_url = f"http://{shown}:{sock.getsockname()[1]}"
    # The service reaches the mounted mock over loopback, whatever address it listens on.
    loopback = base_url.replace(shown, {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(args.host, shown), 1)
    llm_url = f"{loopback}/llm" if args.with_mock else args.llm_base_url
    # The mounted mock is behind the service's tokens; the service itself uses a key of
    # this process's own, never printed.
    mock_key = secrets.token_urlsafe(24) if args.with_mock else None
    try:
        config = load_service_config(args.config, base_url=llm_url, api_key=mock_key)
    except ValueError as exc:
        sock.close()
        print(f"harness serve: {exc}", file=sys.stderr)
        return 2
    app = create_app(ChainService(config), auth)
    if args.with_mock:
        from mockllm import MockLLM
        from mockllm._server import create_app as create_mock_app

        assert mock_key is not None
        app.mount("/llm", token_gate(create_mock_app(MockLLM()), auth, also=(mock_key,)))
    print(f"harness chain service on {base_url}", flush=True)
    print(f"  progress page: {base_url}/chain#token=<token>", flush=True)
    print(f"  MCP (streamable HTTP): {base_url}/mcp", flush=True)
    print(f"  model: {llm_url or 'an in-process mock LLM'}", flush=True)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            ws="websockets-sansio",
            timeout_graceful_shutdown=2,
        )
    )
    run_until_signalled(server, sock)
    print("harness chain service stopped", flush=True)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__.split("\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    replay = verbs.add_parser(
        "replay",
        help="replay scenarios, check invariants and goldens (pytest underneath)",
        description="Runs pytest on the scenario files; any other option is passed to pytest (e.g. -n 2, -v).",
    )
    replay.add_argument("paths", nargs="*", default=["scenarios"], help="scenario files or folders")
    replay.add_argument("-k", metavar="EXPR", help="pytest's -k: only items whose name matches")
    replay.add_argument("--update", action="store_true", help="write the goldens (pytest's --snapshot-update)")
    replay.add_argument("--protocol", choices=PROTOCOLS, help="only this protocol (--mockllm-protocol)")
    replay.add_argument(
        "--server", action="store_true", help="replay against a loopback mock server (--mockllm-replay-server)"
    )
    replay.add_argument(
        "--golden-dir", default=None, help="where goldens live (--mockllm-golden-dir; default: as pytest decides)"
    )
    diff = verbs.add_parser("diff", help="show goldens changed against git HEAD")
    diff.add_argument("paths", nargs="*", help="golden files or folders (default golden/)")
    review = verbs.add_parser("review", help="write an HTML page of the goldens changed against git HEAD")
    review.add_argument("path", nargs="?", default="golden", help="a golden file or folder (default golden/)")
    review.add_argument(
        "--output", "-o", default="golden-review.html", help="the page to write (default golden-review.html)"
    )
    serve = verbs.add_parser("serve", help="serve the chain service (tokens from HARNESS_CHAIN_TOKENS)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port (0 picks a free one; default 8765)")
    serve.add_argument("--config", help="the service's YAML configuration (default: built-in defaults)")
    model = serve.add_mutually_exclusive_group()
    model.add_argument("--llm-base-url", metavar="URL", help="the model server (e.g. python -m mockllm serve)")
    model.add_argument(
        "--with-mock",
        action="store_true",
        help="serve the mock LLM under /llm in the same process and use it (behind the same tokens)",
    )
    from_recording.add_parser(verbs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if args.verb == "replay":
        return _replay(args, extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    verbs = {"diff": _diff, "review": _review, "serve": _serve, "scenario": from_recording.run}
    return verbs[args.verb](args)
