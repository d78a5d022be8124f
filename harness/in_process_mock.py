"""The mock as the model of a system that names none, in process (tooling side).

The systems (``harness.systems``) know nothing of the mock: a service configured with no
model URL takes an ``http_client`` factory (``harness.systems.service.config``). This
module is the factory the tooling hands it — ``python -m harness serve`` and the tests —
so that such a model is the mock, spoken to over its wire protocols with no socket.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from mockllm import MockLLM
from mockllm.testing import transport_for

__all__ = ["mock_http_clients"]


def mock_http_clients(mock: MockLLM | None = None) -> Callable[[ModuleType], Any]:
    """An ``http_client`` factory: given ``httpx`` or ``httpx2``, an ``AsyncClient`` of it
    whose requests ``mock`` (a fresh ``MockLLM`` when None) answers in process."""
    served = mock if mock is not None else MockLLM()

    def build(library: ModuleType) -> Any:
        return library.AsyncClient(transport=transport_for(served, library))

    return build
