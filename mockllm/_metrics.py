"""Prometheus metrics of a mock server, named as vLLM names them where it has the metric.

``GET /metrics`` (``mockllm._server``) renders them in Prometheus' text format with
``prometheus-client`` (the ``metrics`` extra). Counting is a few counter increments per
request and one histogram observation per sent chunk, on label children bound once per
protocol; nothing is rendered until someone scrapes.

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

import time
from collections.abc import Iterator
from typing import Any

from mockllm._mock_response import MockResponse
from mockllm._optional import require
from mockllm._plan import ReplyPlan

__all__ = ["ServerMetrics"]

# Seconds: from a fast mock reply (sub-millisecond) to a long simulated stream.
_LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0)
_ITL_BUCKETS = (0.001, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.2, 0.4, 0.8, 1.0, 2.5)


class _ProtocolChildren:
    """One protocol's bound metric children, made on its first request."""

    __slots__ = ("ttft", "itl", "e2e", "prompt", "generation", "fallbacks", "errors")

    def __init__(self, metrics: ServerMetrics, protocol: str) -> None:
        self.ttft = metrics.ttft.labels(protocol)
        self.itl = metrics.itl.labels(protocol)
        self.e2e = metrics.e2e.labels(protocol)
        self.prompt = metrics.prompt_tokens.labels(protocol)
        self.generation = metrics.generation_tokens.labels(protocol)
        self.fallbacks = metrics.fallbacks.labels(protocol)
        self.errors = metrics.scripted_errors.labels(protocol)


class ServerMetrics:
    """The metrics of one server (its own registry, never the global one); raises
    ``MissingExtraError`` naming the ``metrics`` extra without ``prometheus-client``."""

    def __init__(self) -> None:
        prom = require("prometheus_client", extra="metrics", feature="GET /metrics")
        self._prom = prom
        self.registry = prom.CollectorRegistry(auto_describe=False)
        histogram, counter, gauge = prom.Histogram, prom.Counter, prom.Gauge
        by_protocol: dict[str, Any] = {"labelnames": ("protocol",), "registry": self.registry}
        self.ttft = histogram(
            "vllm:time_to_first_token_seconds",
            "Time from the request to the reply's first byte.",
            buckets=_LATENCY_BUCKETS,
            **by_protocol,
        )
        self.itl = histogram(
            "vllm:inter_token_latency_seconds",
            "Time between two sent events of a paced stream.",
            buckets=_ITL_BUCKETS,
            **by_protocol,
        )
        self.e2e = histogram(
            "vllm:e2e_request_latency_seconds",
            "Time from the request to the reply's last byte.",
            buckets=_LATENCY_BUCKETS,
            **by_protocol,
        )
        self.running = gauge("vllm:num_requests_running", "Streams being delivered.", registry=self.registry)
        self.waiting = gauge(
            "vllm:num_requests_waiting", "Requests queued (the mock has no queue).", registry=self.registry
        )
        self.prompt_tokens = counter("vllm:prompt_tokens", "Prompt tokens of answered requests.", **by_protocol)
        self.generation_tokens = counter("vllm:generation_tokens", "Tokens of the replies made.", **by_protocol)
        self.fallbacks = counter("mockllm_fallbacks", "Replies that were the fallback.", **by_protocol)
        self.scripted_errors = counter(
            "mockllm_scripted_errors", "Scripted errors, HTTP and mid-stream.", **by_protocol
        )
        self.requests = counter(
            "mockllm_requests", "Provider requests answered.", labelnames=("protocol", "status"), registry=self.registry
        )
        self._children: dict[str, _ProtocolChildren] = {}
        self._requests: dict[tuple[str, int], Any] = {}

    def _of(self, protocol: str) -> _ProtocolChildren:
        children = self._children.get(protocol)
        if children is None:
            children = self._children[protocol] = _ProtocolChildren(self, protocol)
        return children

    def planned(self, protocol: str, plan: ReplyPlan, fallback: bool) -> None:
        """Count a planned reply (``MockLLM.on_plan``)."""
        children = self._of(protocol)
        children.prompt.inc(plan.usage.input_tokens)
        if plan.error is None or plan.error.after_chunks is not None:
            children.generation.inc(plan.usage.output_tokens)
        if plan.error is not None:
            children.errors.inc()
        if fallback:
            children.fallbacks.inc()

    def _answered(self, reply: MockResponse) -> _ProtocolChildren:
        protocol = _protocol_of(reply)
        key = (protocol, reply.status)
        counted = self._requests.get(key)
        if counted is None:
            counted = self._requests[key] = self.requests.labels(protocol, str(reply.status))
        counted.inc()
        return self._of(protocol)

    def answered_whole(self, reply: MockResponse, started: float) -> None:
        """Count a reply sent in one write: its first byte is its last."""
        children = self._answered(reply)
        elapsed = time.perf_counter() - started
        children.ttft.observe(elapsed)
        children.e2e.observe(elapsed)

    def answered(self, reply: MockResponse, started: float) -> Iterator[tuple[float, bytes]]:
        """``reply.paced_chunks()``, timed: each chunk counts as sent when the next is asked for."""
        children = self._answered(reply)
        self.running.inc()
        clock = time.perf_counter
        last = 0.0
        try:
            for pair in reply.paced_chunks():
                yield pair
                now = clock()
                if last:
                    children.itl.observe(now - last)
                else:
                    children.ttft.observe(now - started)
                last = now
        finally:
            self.running.dec()
            children.e2e.observe(clock() - started)

    def exposition(self) -> tuple[bytes, str]:
        """The metrics in Prometheus' text format, and its content type."""
        return self._prom.generate_latest(self.registry), self._prom.CONTENT_TYPE_LATEST


def _protocol_of(reply: MockResponse) -> str:
    for name, value in reply.headers:
        if name == "x-mockllm-protocol":
            return value
    return "none"
