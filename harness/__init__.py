"""harness: what runs against the mock — chain executor, agent runner, planner,
invariants, golden snapshots, scenarios and the pytest plugin."""
