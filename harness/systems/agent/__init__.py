"""harness.systems.agent: the agent runner of the golden flows (seed 002).

runner = AgentRunner(model_client("anthropic-messages", http_client=...), tools=tools)
result = await runner.run("List all BC entities", "session-1", on_event, "user-1")
"""

from harness.systems.agent.approvals import ApprovalDecision, ApprovalManager, ApprovalRequest
from harness.systems.agent.emitter import EventEmitter
from harness.systems.agent.files import FileAccessDenied, FileStore, StoredFile
from harness.systems.agent.runner import AgentOptions, AgentResult, AgentRunner
from harness.systems.agent.store import EventStore, InMemoryMessageQueue, MessageQueue, SQLiteEventStore
from harness.systems.agent.tools import Tool, ToolError, ToolRegistry

__all__ = [
    "AgentOptions",
    "AgentResult",
    "AgentRunner",
    "ApprovalDecision",
    "ApprovalManager",
    "ApprovalRequest",
    "EventEmitter",
    "EventStore",
    "FileAccessDenied",
    "FileStore",
    "InMemoryMessageQueue",
    "MessageQueue",
    "SQLiteEventStore",
    "StoredFile",
    "Tool",
    "ToolError",
    "ToolRegistry",
]
