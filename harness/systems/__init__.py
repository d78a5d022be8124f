"""The systems the seeds describe, which the test tooling proves itself on.

- ``agent``: the agent runner of the golden flows (seed 002)
- ``chain``: the chain executor (seeds 000/001) and ``service``, its REST, WebSocket,
  MCP and SCIM doors; ``identity``: the SCIM store and identity tools
- ``planner``: the ADR-002 planner (seed 004)
- ``llm``: the one way these systems talk to a model, over HTTP through the official SDKs

They know nothing of the mock (``tests/test_import_rules.py`` enforces it: nothing here
imports ``mockllm``, and of the harness only ``harness.events``, ``harness.exceptions``
and ``harness.validation_problems``):
they talk to "an LLM" through the providers' wire protocols, exactly as a user's agent
does. If one of them needed the mock's help to pass, a user's agent would too.
"""
