"""harness.systems.service: the chain service — REST, WebSocket progress, MCP tools and
resources, and a live progress page — over the chain executor."""
