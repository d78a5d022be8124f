"""The chain service door tests' fixtures; what they build is in ``service_support``."""

from tests.harness.service.service_support import bench, client, live  # noqa: F401 - fixtures for the tests here
