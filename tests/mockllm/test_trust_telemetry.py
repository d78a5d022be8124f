"""openai-agents' trace export is refused while a test runs, and does not fail it.

Its ``BatchTraceProcessor`` posts to ``api.openai.com/v1/traces/ingest`` from a thread,
every few seconds, whatever base URL the app's model client has: whether a post fell
inside a test was chance, so a correct agent's test failed or passed by its duration.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mockllm import UnmockedRequestError, refuse_hosts

processors = pytest.importorskip("agents.tracing.processors", reason="openai-agents is not installed (the dev extra)")


class _Trace:
    tracing_api_key = None

    def export(self) -> dict[str, Any]:
        return {"object": "trace", "id": "trace_0123456789abcdef0123456789abcdef", "workflow_name": "test"}


def test_the_agents_trace_export_is_refused_but_a_model_call_fails_the_test() -> None:
    exporter = processors.BackendSpanExporter(api_key="sk-from-the-environment", max_retries=0)
    with refuse_hosts(lambda shown: f"refused {shown}") as refused:
        with pytest.raises(UnmockedRequestError, match="trace export .* not a model call"):
            exporter.export([_Trace()])  # in the processor's thread: logged as non-fatal, and dropped
        with pytest.raises(UnmockedRequestError, match="refused POST https://api.openai.com/v1/chat/completions"):
            httpx.post("https://api.openai.com/v1/chat/completions", json={})
    assert refused == ["POST https://api.openai.com/v1/chat/completions"]
    exporter.close()
