"""Codec benchmark: each protocol's in-process cost on a 200-word stream, side by side
with the OpenAI Chat Completions codec's.

    python bench/bench_codecs.py [--rounds N] [--check]

For each protocol, one request of that protocol's own shape asks for a 200-word reply,
streamed (1 word per chunk); the cost measured is ``MockLLM.handle`` plus taking every
byte of the reply (``MockResponse.body``): the engine and the codec, no client, no
socket; in CPU time of this process (``time.process_time``). Protocols alternate in small rounds (order rotated each round) and each figure
is the median over rounds of the per-round ratio to ``openai-chat``. Target (issue 26):
every codec within 1.1x of ``openai-chat`` (Anthropic Messages, which InvokeModel's
stream re-frames, included). Exit status 0 (a report) unless ``--check``
is given and a target fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mockllm._engine import MockLLM
from mockllm._instructions import InstructionChain

TARGET = 1.1
PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"length": 200}}]}]).tagged(
    "Write two hundred words."
)

# protocol -> (path, query, body): a streamed request of the protocol's own shape.
REQUESTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "openai-chat": (
        "/v1/chat/completions",
        "",
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": PROMPT}]},
    ),
    "anthropic-messages": (
        "/v1/messages",
        "",
        {"model": "m", "max_tokens": 1024, "stream": True, "messages": [{"role": "user", "content": PROMPT}]},
    ),
    "gemini": (
        "/v1beta/models/m:streamGenerateContent",
        "alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]},
    ),
    "ollama": (
        "/api/chat",
        "",
        {"model": "m", "messages": [{"role": "user", "content": PROMPT}]},
    ),
    "bedrock-converse": (
        "/model/m/converse-stream",
        "",
        {"messages": [{"role": "user", "content": [{"text": PROMPT}]}]},
    ),
    "bedrock-invoke": (
        "/model/m/invoke-with-response-stream",
        "",
        {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": PROMPT}],
        },
    ),
}


def _run(mock: MockLLM, path: str, query: str, body: bytes, repeat: int) -> float:
    # The process's CPU time, not the wall clock: on a shared, loaded machine the time
    # this process waits for a core is no cost of the codec's, and it is most of the noise.
    start = time.process_time()
    for _ in range(repeat):
        reply = mock.handle("POST", path, {}, body, query)
        assert reply.status == 200 and reply.body
    return (time.process_time() - start) / repeat


def measure(rounds: int, repeat: int) -> dict[str, tuple[float, float]]:
    """protocol -> (median seconds per request, median ratio to openai-chat)."""
    mock = MockLLM()
    encoded = {name: (path, query, json.dumps(body).encode()) for name, (path, query, body) in REQUESTS.items()}
    times: dict[str, list[float]] = {name: [] for name in encoded}
    ratios: dict[str, list[float]] = {name: [] for name in encoded}
    names = list(encoded)
    for name in names:  # warm up
        _run(mock, *encoded[name], repeat=5)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        this_round: dict[str, float] = {}
        for name in order:
            this_round[name] = _run(mock, *encoded[name], repeat=repeat)
            mock.reset()
        for name, seconds in this_round.items():
            times[name].append(seconds)
            ratios[name].append(seconds / this_round["openai-chat"])
    return {name: (statistics.median(times[name]), statistics.median(ratios[name])) for name in names}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--check", action="store_true", help="exit 1 when a codec is past the target")
    args = parser.parse_args(argv)
    results = measure(args.rounds, args.repeat)
    report: Callable[[str], None] = print
    report(f"| protocol | per request (us) | ratio to openai-chat (target <= {TARGET}x) |")
    report("|---|---:|---:|")
    failed = False
    for name, (seconds, ratio) in results.items():
        ok = ratio <= TARGET
        failed = failed or not ok
        report(f"| {name} | {seconds * 1e6:.0f} | {ratio:.2f}x{'' if ok else ' (over)'} |")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
