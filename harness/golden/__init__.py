"""Golden snapshots: the event table format and the syrupy extension that stores it."""
