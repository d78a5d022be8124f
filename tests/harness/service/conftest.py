"""The chain service door tests' fixtures; what they build is in ``service_support``."""

from tests.harness.service.service_support import bench, client, live

__all__ = ["bench", "client", "live"]  # fixtures for the tests here
