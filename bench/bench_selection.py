"""Benchmark: discovery + counting (``mockllm.select``) against ``json.loads``.

    python bench/bench_selection.py [--baseline DIR]

It is a measurement, not a test. For Chat Completions request bodies of 10, 1,000 and
10,000 messages — the tagged user message first, then an agent loop of assistant tool
calls and tool results — it times, in the same run and interleaved round by round:

- ``select(body_dict, "openai-chat")``: the codec's reading of the body and the scan;
- ``json.loads(body_text)`` of the same request;
- ``MockLLM().handle`` of the request bytes (strict: parsing, validation with the
  tool-call pairing check, selection, and rendering the reply), the engine's whole cost.

and prints the medians. ``--baseline DIR`` also times ``select`` and ``handle`` of the
``mockllm`` package in DIR (another checkout, e.g. main's), interleaved with this one's,
so that a change is measured before and after in the same run.

Targets (from issue 2): the selection cost grows linearly with the conversation, and on
10,000 messages it stays under half the cost of ``json.loads`` of the body. The script
exits with status 1 if either target is missed.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _baseline import import_baseline

from mockllm import InstructionChain, MockLLM
from mockllm._explain import select

SIZES = (10, 1_000, 10_000)
ROUNDS = 15
TARGET_RATIO = 0.5  # selection / json.loads on the largest body
LINEARITY_TOLERANCE = 2.0  # per-message cost may grow at most this much from 1,000 to 10,000

CHAIN = InstructionChain(
    instruction_chain=[
        {
            "id": f"step-{i}",
            "reasoning": {"length": 20},
            "messages": [{"tool_call": [{"name": "search_documents", "args": {"query": f"topic {i}"}}]}],
        }
        for i in range(8)
    ]
    + [{"id": "report", "messages": [{"text_message": {"length": 100}}]}]
)


def build_body(n_messages: int) -> dict[str, Any]:
    """A request whose history holds ``n_messages`` messages."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a research assistant. Use the tools to answer."},
        {"role": "user", "content": CHAIN.tagged("Find out what changed in the Q3 report and summarise it.")},
    ]
    turn = 0
    while len(messages) < n_messages:
        call_id = f"call_{turn:06d}AbCdEfGhIjKlMnOpQr"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "search_documents",
                            "arguments": json.dumps({"query": f"quarterly revenue segment {turn}", "limit": 5}),
                        },
                    }
                ],
            }
        )
        if len(messages) < n_messages:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": json.dumps(
                        {
                            "results": [
                                {
                                    "title": f"Q3 report section {turn}.{k}",
                                    "score": round(0.9 - k / 10, 2),
                                    "snippet": "Revenue in the segment grew while operating costs stayed flat.",
                                }
                                for k in range(2)
                            ],
                        }
                    ),
                }
            )
        turn += 1
    return {"model": "gpt-4o", "stream": True, "tools": [], "messages": messages[:n_messages]}


Selector = Callable[[Any], Any]


def _time_ns(fn: Any, arg: Any, reps: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(reps):
        fn(arg)
    return (time.perf_counter_ns() - start) / reps


def _doors(select_fn: Any, mock: Any) -> dict[str, Selector]:
    """What is timed of one mockllm package: selection alone, and the engine."""
    path = "/v1/chat/completions"
    return {
        "select": lambda body: select_fn(body, "openai-chat"),
        "handle": lambda text: _whole(mock.handle("POST", path, {}, text)),
    }


def _whole(reply: Any) -> Any:
    """``reply`` once its every byte is made (a lazy stream renders as it is read)."""
    reply.body
    return reply


def load_baseline(root: Path) -> dict[str, Selector]:
    """``select`` and ``MockLLM`` of the mockllm package in ``root``, imported beside this one."""
    if (root / "mockllm" / "_explain.py").exists():  # the private layout (issue 15)
        package, explain = import_baseline(root, "mockllm._explain")
    else:
        (package,) = import_baseline(root)
        explain = package
    return _doors(explain.select, package.MockLLM())


def measure(baseline: dict[str, Selector] | None = None) -> list[dict[str, float]]:
    versions = {"": _doors(select, MockLLM())}
    if baseline is not None:
        versions["baseline "] = baseline
    cases = []
    for n in SIZES:
        body = build_body(n)
        text = json.dumps(body)
        assert json.loads(text) == body
        for doors in versions.values():
            selection = doors["select"](body)
            assert selection.chain_found and selection.message_index == 1, selection
            assert doors["handle"](text.encode()).status == 200
        reps = max(1, 20_000 // n)
        cases.append((n, body, text, reps))

    times: dict[tuple[int, str], list[float]] = {}
    for _ in range(ROUNDS):  # interleaved: drift in machine speed hits all alike
        for n, body, text, reps in cases:
            times.setdefault((n, "loads"), []).append(_time_ns(json.loads, text, reps))
            for label, doors in versions.items():
                times.setdefault((n, label + "select"), []).append(_time_ns(doors["select"], body, reps))
                times.setdefault((n, label + "handle"), []).append(_time_ns(doors["handle"], text.encode(), reps))

    rows = []
    for n, _, text, _ in cases:
        row: dict[str, float] = {"messages": n, "bytes": len(text)}
        loads = statistics.median(times[(n, "loads")]) / 1000
        row["loads_us"] = loads
        for label in versions:
            sel = statistics.median(times[(n, label + "select")]) / 1000
            handle = statistics.median(times[(n, label + "handle")]) / 1000
            row[label + "select_us"] = sel
            row[label + "ratio"] = sel / loads
            row[label + "select_us_per_message"] = sel / n
            row[label + "handle_us"] = handle
            row[label + "handle_ratio"] = handle / loads
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="also time the mockllm package in this checkout")
    args = parser.parse_args(argv)
    baseline = load_baseline(args.baseline) if args.baseline else None
    rows = measure(baseline)
    print(
        f"Python {platform.python_version()} on {platform.machine()} ({platform.system()}), "
        f"medians of {ROUNDS} interleaved rounds"
    )
    labels = [""] + (["baseline "] if baseline else [])
    for label in labels:
        print(f"{label or 'this checkout'}:")
        print(
            f"{'messages':>9} {'body bytes':>11} {'selection µs':>13} {'json.loads µs':>14} "
            f"{'ratio':>6} {'µs/message':>11} {'handle µs':>10} {'handle ratio':>13}"
        )
        for r in rows:
            print(
                f"{r['messages']:>9,} {r['bytes']:>11,} {r[label + 'select_us']:>13.1f} "
                f"{r['loads_us']:>14.1f} {r[label + 'ratio']:>6.3f} "
                f"{r[label + 'select_us_per_message']:>11.4f} {r[label + 'handle_us']:>10.1f} "
                f"{r[label + 'handle_ratio']:>13.3f}"
            )

    by_n = {int(r["messages"]): r for r in rows}
    largest, middle = by_n[SIZES[-1]], by_n[SIZES[-2]]
    growth = largest["select_us_per_message"] / middle["select_us_per_message"]
    linear = growth <= LINEARITY_TOLERANCE
    fast = largest["ratio"] < TARGET_RATIO
    print(
        f"linear growth: per-message cost x{growth:.2f} from {SIZES[-2]:,} to {SIZES[-1]:,} "
        f"messages (limit x{LINEARITY_TOLERANCE}): {'ok' if linear else 'FAILED'}"
    )
    print(
        f"selection / json.loads at {SIZES[-1]:,} messages: {largest['ratio']:.3f} "
        f"(target < {TARGET_RATIO}): {'ok' if fast else 'FAILED'}"
    )
    return 0 if linear and fast else 1


if __name__ == "__main__":
    sys.exit(main())
