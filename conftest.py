"""Root conftest: only what the repository's own test run needs."""
