"""Scenario files: their model and loader, the runners that play them, and replay."""
