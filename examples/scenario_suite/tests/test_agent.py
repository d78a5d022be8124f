"""The agent tested directly, with the mockllm and golden fixtures."""

from my_agent.agent import run_agent

from mockllm import InstructionChain

PROMPT = InstructionChain(
    instruction_chain=[
        {"messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Cairo"}}]}]},
        {"messages": [{"text_message": {"text": "Cairo is hot: 31 °C."}}]},
    ]
).tagged("How warm is Cairo?")


def test_the_agent_calls_the_tool_then_answers(mockllm, golden):
    events = run_agent(mockllm.openai(), PROMPT)
    assert [e["type"] for e in events] == ["user", "tool_call", "tool_result", "answer"]
    assert events == golden
