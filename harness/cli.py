"""``python -m harness``: replay scenarios against their goldens, review golden changes,
move goldens to their current paths, serve the chain service.

    python -m harness replay scenarios/ [-k EXPR] [--update] [--protocol P] [--server] [pytest options]
    python -m harness diff [golden/]
    python -m harness review [PATH] [--from REPORT.json] [--terminal | --static [DIR] | --format markdown|json]
    python -m harness migrate-goldens [--dry-run] [pytest options and paths]
    python -m harness serve [--host 127.0.0.1] [--port 8765] [--config service.yaml]
                            [--llm-base-url URL | --with-mock]
    python -m harness scenario from-recording RECORDING [--out FILE]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Awaitable, Callable, Sequence
from types import ModuleType
from typing import Any

from harness.command_line import Arg, OneOf, Verb
from harness.exceptions import EXTRAS, MissingExtra, missing_extra, not_installed
from harness.golden.review.cli import REVIEW_ARGUMENTS, run_review
from harness.scenarios import from_recording

__all__ = ["main"]


def _replay(args: argparse.Namespace, pytest_args: Sequence[str]) -> int:
    """replay scenarios, check invariants and goldens (pytest underneath)

    Runs pytest on the scenario files and compares each run with its golden. The paths named here are
    collected as scenario files whatever the ini's mockllm_scenario_dirs says. Any other option is
    passed to pytest (e.g. -n 2, -v, -x).
    """
    import pytest

    # This command's options mapped onto pytest's.
    command = [*args.paths]
    # The paths named here are scenario files or folders of them, whatever the ini says.
    for path in args.paths:
        command += ["--mockllm-scenario-dir", path]
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
    """show goldens changed against git HEAD

    Prints the goldens that differ from git HEAD as unified diffs, new goldens included.
    """
    from harness.golden.review.changes import GitError, changed_goldens

    try:
        changes = [change for path in args.paths or ["golden"] for change in changed_goldens(path)]
    except GitError as exc:
        print(f"harness diff: {exc}", file=sys.stderr)
        return 2
    if not changes:
        print("No golden changed against HEAD.")
    for change in changes:
        print(change.diff(), end="")
    return 0


def _migrate_goldens(args: argparse.Namespace, pytest_args: Sequence[str]) -> int:
    """move goldens written before their paths were rootdir-relative

    Collects the tests (pytest --collect-only; any other option or path goes to pytest) and moves each
    golden from its old path (golden/<test file>/<test>.golden; golden/scenarios/<stem>.golden) to its
    path relative to the rootdir, with git mv. A golden two tests shared is copied to each: review them.
    """
    try:
        from harness.golden.migration import migrate_goldens
    except ModuleNotFoundError as exc:
        if not_installed(exc) != "syrupy":
            raise
        print(f"harness migrate-goldens: {missing_extra('syrupy', needed_by='goldens')}", file=sys.stderr)
        return 2
    return migrate_goldens(pytest_args, dry_run=args.dry_run)


_SERVICE_PACKAGES = ("mcp", "websockets")
"""The service extra's own packages, in the order a missing one is named."""


def _missing_service_extra(package: str) -> MissingExtra:
    # The service needs the service extra, which brings every package it uses.
    return missing_extra(package, needed_by="python -m harness serve", extra="service")


def _in_process_mock() -> Callable[[ModuleType], Any]:
    """The service's ``http_client`` factory for a model it names no server for: clients
    one mock answers in this process, which is imported and made with the first of them (a
    service whose models all have a URL never imports it)."""

    @functools.cache
    def clients() -> Callable[[ModuleType], Any]:
        from harness.in_process_mock import mock_http_clients

        return mock_http_clients()

    return lambda library: clients()(library)


def _mounted_mock() -> Callable[[Any, Any, Any], Awaitable[None]]:
    """``--with-mock``'s mock server as an ASGI app, imported and made with its first
    request (the service's first model call, as a rule), not before the banner."""

    @functools.cache
    def app() -> Callable[[Any, Any, Any], Awaitable[None]]:
        from mockllm import MockLLM
        from mockllm import create_app as create_mock_app

        return create_mock_app(MockLLM())

    async def mock(scope: Any, receive: Any, send: Any) -> None:
        await app()(scope, receive, send)

    return mock


def _serve(args: argparse.Namespace) -> int:
    """serve the chain service (tokens from HARNESS_CHAIN_TOKENS; needs the service extra)

    Serves the chain service (REST, WebSocket, progress page, MCP) until SIGINT or SIGTERM.
    Needs the service extra: pip install "mockllm-harness[service]".
    """
    # What is missing, then the tokens, before the service is imported (MCP, the SCIM
    # models, the mock: two seconds of CPU): a start that cannot serve ends at once.
    for name in _SERVICE_PACKAGES:
        if not_installed(ModuleNotFoundError(name=name)) is not None:
            print(f"harness serve: {_missing_service_extra(name)}", file=sys.stderr)
            return 2
    from harness.systems.service.auth import TOKENS_ENV, TokenAuth

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
        import uvicorn

        from harness.systems.service.app import create_app
        from harness.systems.service.auth import token_gate
        from harness.systems.service.config import load_service_config
        from harness.systems.service.core import ChainService
        from mockllm.testing import PromptServer, bind_socket, run_until_signalled

        # What uvicorn imports once it serves: imported now, so that a part of it missing is
        # named before anything runs. (MCP is imported by the first request to /mcp, a
        # model's SDK and the mock, core dependencies all, by the first model call.)
        importlib.import_module("websockets")
    except ModuleNotFoundError as exc:
        package = not_installed(exc)
        if isinstance(exc, MissingExtra):
            print(f"harness serve: {exc}", file=sys.stderr)
            return 2
        if package is None or package not in EXTRAS:
            raise
        print(f"harness serve: {_missing_service_extra(package)}", file=sys.stderr)
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
    import secrets  # here: hmac and its hashes are for serve alone, not every verb's start

    mock_key = secrets.token_urlsafe(24) if args.with_mock else None
    try:
        # A model the configuration names no server for is the mock, in this process.
        config = load_service_config(args.config, base_url=llm_url, api_key=mock_key, http_client=_in_process_mock())
    except ValueError as exc:
        sock.close()
        print(f"harness serve: {exc}", file=sys.stderr)
        return 2
    app = create_app(ChainService(config), auth)
    if args.with_mock:
        assert mock_key is not None
        app.mount("/llm", token_gate(_mounted_mock(), auth, also=(mock_key,)))

    def announce() -> None:
        print(f"harness chain service on {base_url}", flush=True)
        print(f"  progress page: {base_url}/chain#token=<token>", flush=True)
        print(f"  MCP (streamable HTTP): {base_url}/mcp", flush=True)
        print(f"  model: {llm_url or 'an in-process mock LLM'}", flush=True)

    server = PromptServer(  # stops as soon as it is signalled, not at uvicorn's next 0.1 s tick
        uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            ws="websockets-sansio",
            timeout_graceful_shutdown=2,
        )
    )
    run_until_signalled(server, sock, on_ready=announce)  # a signal from the banner on ends it quietly
    print("harness chain service stopped", flush=True)
    return 0


_VERBS = {
    "replay": Verb(
        _replay,
        (
            Arg("paths", nargs="*", default=["scenarios"], help="scenario files or folders (default scenarios)"),
            Arg("-k", metavar="EXPR", help="pytest's -k: only items whose name matches"),
            Arg("--update", action="store_true", help="write the goldens (pytest's --snapshot-update)"),
            # Checked by the plugin's --mockllm-protocol: importing mockllm here, before pytest
            # starts, would keep pytest from rewriting the asserts of the plugins it imports.
            Arg("--protocol", metavar="PROTOCOL", help="only this protocol (--mockllm-protocol)"),
            Arg(
                "--server", action="store_true", help="replay against a loopback mock server (--mockllm-replay-server)"
            ),
            Arg(
                "--golden-dir",
                default=None,
                help="where goldens live (--mockllm-golden-dir; default: as pytest decides)",
            ),
        ),
        passes_on=True,
    ),
    "diff": Verb(_diff, (Arg("paths", nargs="*", help="golden files or folders (default golden/)"),)),
    "review": Verb(run_review, REVIEW_ARGUMENTS),
    "migrate-goldens": Verb(
        _migrate_goldens,
        (Arg("--dry-run", action="store_true", help="say what would move, move nothing"),),
        passes_on=True,
    ),
    "serve": Verb(
        _serve,
        (
            Arg("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)"),
            Arg("--port", type=int, default=8765, help="port (0 picks a free one; default 8765)"),
            Arg("--config", help="the service's YAML configuration (default: built-in defaults)"),
            OneOf(
                Arg("--llm-base-url", metavar="URL", help="the model server (e.g. python -m mockllm serve)"),
                Arg(
                    "--with-mock",
                    action="store_true",
                    help="serve the mock LLM under /llm in the same process and use it (behind the same tokens)",
                ),
            ),
        ),
    ),
}
"""The subcommands, in the order the help lists them, but ``scenario`` (``harness.scenarios.from_recording``)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description=(
            "Replay scenario files against their goldens, show and review golden changes, move goldens to their "
            "current paths, serve the chain service."
        ),
        epilog="Each subcommand has its own --help.",
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="SUBCOMMAND")
    for name, verb in _VERBS.items():
        verb.add_to(verbs, name)
    from_recording.add_parser(verbs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    verb = _VERBS.get(args.verb)
    if verb is not None and verb.passes_on:
        return verb.run(args, extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return verb.run(args) if verb is not None else from_recording.run(args)
