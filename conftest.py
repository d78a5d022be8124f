"""Root conftest: only what the repository's own test run needs."""

# The plugin's own tests drive pytest through pytester.
pytest_plugins = ["pytester"]
