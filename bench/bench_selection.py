"""Benchmark: discovery + counting (``mockllm.select``) against ``json.loads``.

Run it with ``python bench/bench_selection.py``. It is a measurement, not a test.

For Chat Completions request bodies of 10, 1,000 and 10,000 messages — the tagged user
message first, then an agent loop of assistant tool calls and tool results — it times,
in the same run and interleaved round by round, ``select(body_dict, "openai-chat")`` and
``json.loads(body_text)`` of the same request, and prints the medians.

Targets (from issue 2): the selection cost grows linearly with the conversation, and on
10,000 messages it stays under half the cost of ``json.loads`` of the body. The script
exits with status 1 if either target is missed.
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mockllm import InstructionChain, select

SIZES = (10, 1_000, 10_000)
ROUNDS = 15
TARGET_RATIO = 0.5  # selection / json.loads on the largest body
LINEARITY_TOLERANCE = 2.0  # per-message cost may grow at most this much from 1,000 to 10,000

CHAIN = InstructionChain(instruction_chain=[
    {"id": f"step-{i}", "reasoning": {"length": 20},
     "messages": [{"tool_call": [{"name": "search_documents", "args": {"query": f"topic {i}"}}]}]}
    for i in range(8)
] + [{"id": "report", "messages": [{"text_message": {"length": 100}}]}])


def build_body(n_messages: int) -> dict[str, Any]:
    """A request whose history holds ``n_messages`` messages."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a research assistant. Use the tools to answer."},
        {"role": "user", "content": CHAIN.tagged("Find out what changed in the Q3 report and summarise it.")},
    ]
    turn = 0
    while len(messages) < n_messages:
        call_id = f"call_{turn:06d}AbCdEfGhIjKlMnOpQr"
        messages.append({
            "role": "assistant",
            "content": None,
            "tool_calls": [{
                "id": call_id,
                "type": "function",
                "function": {"name": "search_documents",
                             "arguments": json.dumps({"query": f"quarterly revenue segment {turn}",
                                                      "limit": 5})},
            }],
        })
        if len(messages) < n_messages:
            messages.append({
                "role": "tool",
                "tool_call_id": call_id,
                "content": json.dumps({
                    "results": [
                        {"title": f"Q3 report section {turn}.{k}", "score": round(0.9 - k / 10, 2),
                         "snippet": "Revenue in the segment grew while operating costs stayed flat."}
                        for k in range(2)
                    ],
                }),
            })
        turn += 1
    return {"model": "gpt-4o", "stream": True, "tools": [], "messages": messages[:n_messages]}


def _time_ns(fn: Any, arg: Any, reps: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(reps):
        fn(arg)
    return (time.perf_counter_ns() - start) / reps


def measure() -> list[dict[str, float]]:
    cases = []
    for n in SIZES:
        body = build_body(n)
        text = json.dumps(body)
        assert json.loads(text) == body
        selection = select(body, "openai-chat")
        assert selection.chain_found and selection.message_index == 1, selection
        reps = max(1, 20_000 // n)
        cases.append((n, body, text, reps))

    select_ns: dict[int, list[float]] = {n: [] for n in SIZES}
    loads_ns: dict[int, list[float]] = {n: [] for n in SIZES}
    for _ in range(ROUNDS):  # interleaved: drift in machine speed hits both alike
        for n, body, text, reps in cases:
            select_ns[n].append(_time_ns(lambda b: select(b, "openai-chat"), body, reps))
            loads_ns[n].append(_time_ns(json.loads, text, reps))

    rows = []
    for n, _, text, _ in cases:
        sel = statistics.median(select_ns[n]) / 1000
        loads = statistics.median(loads_ns[n]) / 1000
        rows.append({"messages": n, "bytes": len(text), "select_us": sel, "loads_us": loads,
                     "ratio": sel / loads, "select_us_per_message": sel / n})
    return rows


def main() -> int:
    rows = measure()
    print(f"Python {platform.python_version()} on {platform.machine()} ({platform.system()}), "
          f"medians of {ROUNDS} interleaved rounds")
    print(f"{'messages':>9} {'body bytes':>11} {'selection µs':>13} {'json.loads µs':>14} "
          f"{'ratio':>6} {'µs/message':>11}")
    for r in rows:
        print(f"{r['messages']:>9,} {r['bytes']:>11,} {r['select_us']:>13.1f} {r['loads_us']:>14.1f} "
              f"{r['ratio']:>6.3f} {r['select_us_per_message']:>11.4f}")

    by_n = {int(r["messages"]): r for r in rows}
    largest, middle = by_n[SIZES[-1]], by_n[SIZES[-2]]
    growth = largest["select_us_per_message"] / middle["select_us_per_message"]
    linear = growth <= LINEARITY_TOLERANCE
    fast = largest["ratio"] < TARGET_RATIO
    print(f"linear growth: per-message cost x{growth:.2f} from {SIZES[-2]:,} to {SIZES[-1]:,} "
          f"messages (limit x{LINEARITY_TOLERANCE}): {'ok' if linear else 'FAILED'}")
    print(f"selection / json.loads at {SIZES[-1]:,} messages: {largest['ratio']:.3f} "
          f"(target < {TARGET_RATIO}): {'ok' if fast else 'FAILED'}")
    return 0 if linear and fast else 1


if __name__ == "__main__":
    sys.exit(main())
