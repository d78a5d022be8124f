"""``python -m mockllm``: serve the mock, or explain a request body.

    python -m mockllm serve [--host 127.0.0.1] [--port 8000] [--seed 0] [--lenient]
    python -m mockllm explain request.json [--protocol openai-chat]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from mockllm.engine import MockLLM
from mockllm.explain import explain
from mockllm.wire.registry import PROTOCOLS

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mockllm", description=__doc__.split("\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)

    serve = verbs.add_parser("serve", help="run the mock LLM server on loopback")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    serve.add_argument("--seed", type=int, default=0, help="seed for generated words (default 0)")
    serve.add_argument("--lenient", action="store_true",
                       help="accept tool results and tool calls that do not pair up")

    explain_ = verbs.add_parser("explain", help="say which instruction a request body would run")
    explain_.add_argument("body", help="a JSON request body file, or - for standard input")
    explain_.add_argument("--protocol", default="openai-chat",
                          help=f"one of {', '.join(PROTOCOLS)} (default openai-chat)")
    return parser


def _announce(base_url: str) -> None:
    print(f"mockllm serving on {base_url}", flush=True)
    print(f"  OpenAI (Chat Completions, Responses): base_url={base_url}/v1", flush=True)
    print(f"  Anthropic (Messages):                 base_url={base_url}", flush=True)
    print(f"  journal: {base_url}/_mockllm/requests   (Ctrl+C stops)", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.verb == "serve":
        from mockllm.server import serve

        try:
            serve(MockLLM(seed=args.seed, lenient=args.lenient), host=args.host, port=args.port,
                  on_ready=_announce)
        except OSError as exc:
            print(f"mockllm: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}. "
                  "Pick another --port (0 picks a free one).", file=sys.stderr)
            return 2
        print("mockllm stopped", flush=True)
        return 0
    text = sys.stdin.read() if args.body == "-" else Path(args.body).read_text(encoding="utf-8")
    try:
        print(explain(text, args.protocol))
    except ValueError as exc:
        print(f"mockllm: {exc}", file=sys.stderr)
        return 2
    return 0
