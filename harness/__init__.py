"""harness: what runs against the mock — chain executor, agent runner, planner,
invariants, golden snapshots, scenarios and the pytest plugin.

PYTEST_DONT_REWRITE: ``python -m harness replay`` imports this package before it starts
pytest in the same process; this module has no assertions to rewrite, and the marker
keeps pytest from warning that it could not.
"""
