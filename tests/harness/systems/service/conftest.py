"""The chain service door tests' fixtures; what they build is in ``service_support``."""

import pytest

# The service is the 'service' extra (mcp, websockets); the lean CI run leaves it out.
pytest.importorskip("mcp", reason="mcp is not installed (the service extra)")
pytest.importorskip("websockets", reason="websockets is not installed (the service extra)")

from tests.harness.systems.service.service_support import bench, client, live  # noqa: E402

__all__ = ["bench", "client", "live"]  # fixtures for the tests here
