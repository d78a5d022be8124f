"""The pytest plugin (entry point ``pytest11``): hooks, fixtures and scenario collection.

``harness.plugin.hooks`` holds the hooks pytest calls; ``fixtures`` the mock fixtures'
objects; ``scenario_items`` the collection of scenario files.
"""
