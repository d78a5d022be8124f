"""Prometheus metrics of a mock server, named as vLLM names them where it has the metric.

``GET /metrics`` (``mockllm._server``) renders them in Prometheus' text format with
``prometheus-client`` (the ``metrics`` extra). Counting is a few counter increments per
request and one histogram observation per sent chunk, plain integers per protocol; the
metric families are made only when someone scrapes.

=========================================  =========  ==========================================
name                                       type       meaning
=========================================  =========  ==========================================
vllm:time_to_first_token_seconds           histogram  request received to first byte sent
vllm:inter_token_latency_seconds           histogram  between two sent events of a paced stream
vllm:e2e_request_latency_seconds           histogram  request received to last byte sent
vllm:num_requests_running                  gauge      streams being delivered now
vllm:num_requests_waiting                  gauge      always 0: the mock has no queue
vllm:prompt_tokens_total                   counter    prompt tokens of answered requests
vllm:generation_tokens_total               counter    tokens of the replies made
mockllm_fallbacks_total                    counter    replies that were the fallback
mockllm_scripted_errors_total              counter    scripted errors (HTTP and mid-stream)
mockllm_requests_total                     counter    provider requests answered, by status
=========================================  =========  ==========================================

Every metric but the two gauges carries a ``protocol`` label (``openai-chat``,
``anthropic-messages``, …; ``none`` for what no protocol answered).
"""

from __future__ import annotations

import importlib.util
import time
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from mockllm._delivery import deliver
from mockllm._mock_response import MockResponse
from mockllm._optional import require
from mockllm._plan import ReplyPlan

__all__ = ["ServerMetrics"]

# Seconds: from a fast mock reply (sub-millisecond) to a long simulated stream.
_LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0)
_ITL_BUCKETS = (0.001, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.2, 0.4, 0.8, 1.0, 2.5)


# The families labelled by protocol alone: (name, help, the field of the counts, whether
# it is a histogram, else a counter).
_BY_PROTOCOL = (
    ("vllm:time_to_first_token_seconds", "Time from the request to the reply's first byte.", "ttft", True),
    ("vllm:inter_token_latency_seconds", "Time between two sent events of a paced stream.", "itl", True),
    ("vllm:e2e_request_latency_seconds", "Time from the request to the reply's last byte.", "e2e", True),
    ("vllm:prompt_tokens", "Prompt tokens of answered requests.", "prompt", False),
    ("vllm:generation_tokens", "Tokens of the replies made.", "generation", False),
    ("mockllm_fallbacks", "Replies that were the fallback.", "fallbacks", False),
    ("mockllm_scripted_errors", "Scripted errors, HTTP and mid-stream.", "errors", False),
)


class _Histogram:
    """Counts per bucket and a sum: one C-speed bisect and two adds per observation."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    def buckets(self) -> list[tuple[str, float]]:
        total, out = 0, []
        for bound, count in zip((*map(repr, self.bounds), "+Inf"), self.counts, strict=True):
            total += count
            out.append((bound, float(total)))
        return out


class _ProtocolCounts:
    """One protocol's counts: plain numbers, read only when someone scrapes."""

    __slots__ = ("ttft", "itl", "e2e", "prompt", "generation", "fallbacks", "errors", "statuses")

    def __init__(self) -> None:
        self.ttft, self.e2e = _Histogram(_LATENCY_BUCKETS), _Histogram(_LATENCY_BUCKETS)
        self.itl = _Histogram(_ITL_BUCKETS)
        self.prompt = self.generation = self.fallbacks = self.errors = 0
        self.statuses: dict[int, int] = {}


class ServerMetrics:
    """The metrics of one server (its own registry, never the global one); raises
    ``MissingExtraError`` naming the ``metrics`` extra without ``prometheus-client``.

    Counting is plain integer arithmetic on the event loop's thread; the registry's
    collector turns the numbers into metric families when ``GET /metrics`` asks."""

    def __init__(self) -> None:
        # Whether prometheus-client is installed is told now; it is imported at the first
        # scrape (a server nobody scrapes never pays for importing it).
        if importlib.util.find_spec("prometheus_client") is None:
            require("prometheus_client", extra="metrics", feature="GET /metrics")  # raises, naming the extra
        self._registry: Any = None
        self.running = 0
        self._by_protocol: dict[str, _ProtocolCounts] = {}

    def _of(self, protocol: str) -> _ProtocolCounts:
        counts = self._by_protocol.get(protocol)
        if counts is None:
            counts = self._by_protocol[protocol] = _ProtocolCounts()
        return counts

    def planned(self, protocol: str, plan: ReplyPlan, fallback: bool) -> None:
        """Count a planned reply (``MockLLM.on_plan``)."""
        counts = self._of(protocol)
        counts.prompt += plan.usage.input_tokens
        if plan.error is None or plan.error.after_chunks is not None:
            counts.generation += plan.usage.output_tokens
        if plan.error is not None:
            counts.errors += 1
        if fallback:
            counts.fallbacks += 1

    def _answered(self, reply: MockResponse) -> _ProtocolCounts:
        counts = self._of(_protocol_of(reply))
        counts.statuses[reply.status] = counts.statuses.get(reply.status, 0) + 1
        return counts

    def answered_whole(self, reply: MockResponse, started: float) -> None:
        """Count a reply sent in one write: its first byte is its last."""
        counts = self._answered(reply)
        elapsed = time.perf_counter() - started
        counts.ttft.observe(elapsed)
        counts.e2e.observe(elapsed)

    def answered(self, reply: MockResponse, started: float) -> Iterator[tuple[float, bytes]]:
        """The reply's pieces as delivered (``mockllm._delivery.deliver``: its stream shape
        and faults applied), timed: each chunk counts as sent when the next is asked for."""
        counts = self._answered(reply)
        self.running += 1
        clock = time.perf_counter
        last = 0.0
        try:
            for pair in deliver(reply):
                yield pair
                now = clock()
                if last:
                    counts.itl.observe(now - last)
                else:
                    counts.ttft.observe(now - started)
                last = now
        finally:
            self.running -= 1
            counts.e2e.observe(clock() - started)

    def collect(self) -> Iterator[Any]:
        """The metric families, made from the counts (prometheus-client's collector protocol)."""
        core = require("prometheus_client.core", extra="metrics", feature="GET /metrics")
        yield core.GaugeMetricFamily("vllm:num_requests_running", "Streams being delivered.", value=self.running)
        yield core.GaugeMetricFamily("vllm:num_requests_waiting", "Requests queued (the mock has no queue).", value=0)
        for name, text, field, histogram in _BY_PROTOCOL:
            make = core.HistogramMetricFamily if histogram else core.CounterMetricFamily
            family = make(name, text, labels=["protocol"])
            for protocol, counts in self._by_protocol.items():
                value = getattr(counts, field)
                if histogram:
                    family.add_metric([protocol], value.buckets(), value.sum)
                else:
                    family.add_metric([protocol], value)
            yield family
        requests = core.CounterMetricFamily(
            "mockllm_requests", "Provider requests answered.", labels=["protocol", "status"]
        )
        for protocol, counts in self._by_protocol.items():
            for status, count in sorted(counts.statuses.items()):
                requests.add_metric([protocol, str(status)], count)
        yield requests

    def exposition(self) -> tuple[bytes, str]:
        """The metrics in Prometheus' text format, and its content type."""
        prom = require("prometheus_client", extra="metrics", feature="GET /metrics")
        if self._registry is None:
            self._registry = prom.CollectorRegistry(auto_describe=False)
            self._registry.register(self)
        return prom.generate_latest(self._registry), prom.CONTENT_TYPE_LATEST


def _protocol_of(reply: MockResponse) -> str:
    for name, value in reply.headers:
        if name == "x-mockllm-protocol":
            return value
    return "none"
