"""The pytest plugin, driven through pytester: fixtures, marker, options, goldens."""

from __future__ import annotations

import importlib.util

import pytest

SCRIPT = """
import json
from mockllm import InstructionChain

def script(*texts):
    return InstructionChain(instruction_chain=[
        {"id": f"step-{i}", "messages": [{"text_message": {"text": t}}]} for i, t in enumerate(texts)
    ]).tagged("Go")
"""


@pytest.fixture
def project(strict_pytester: pytest.Pytester) -> pytest.Pytester:
    strict_pytester.makepyfile(helpers=SCRIPT)
    return strict_pytester


def test_the_mockllm_fixture_serves_the_official_clients(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner_clients="""
        import asyncio
        import pytest
        from helpers import script

        def test_openai(mockllm):
            client = mockllm.openai()
            reply = client.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": script("hi")}])
            assert reply.choices[0].message.content == "hi"
            assert mockllm.journal[-1].instruction_id == "step-0"

        def test_anthropic_async(mockllm):
            async def main():
                client = mockllm.anthropic(is_async=True)
                return await client.messages.create(model="claude-mock-1", max_tokens=64,
                                                    messages=[{"role": "user", "content": script("hello")}])
            assert asyncio.run(main()).content[0].text == "hello"

        @pytest.mark.parametrize("library", ["httpx", "httpx2"])
        def test_plain_client(mockllm, library):
            pytest.importorskip(library)
            client = getattr(mockllm, f"{library}_client")()
            response = client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": script("raw")}]})
            assert response.json()["choices"][0]["message"]["content"] == "raw"
            assert response.headers["x-mockllm-instruction"] == "step-0"
    """
    )
    # httpx2 is optional (the lean CI run has none): without it, its client's test skips.
    has_httpx2 = importlib.util.find_spec("httpx2") is not None
    project.runpytest().assert_outcomes(passed=4 if has_httpx2 else 3, skipped=0 if has_httpx2 else 1)


def test_unused_scripted_steps_fail_the_test_at_teardown(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner_unused="""
        from helpers import script

        def test_calls_once(mockllm):
            mockllm.openai().chat.completions.create(
                model="gpt-mock", messages=[{"role": "user", "content": script("one", "two", "three")}])
    """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    chain = next(line.split()[3] for line in out.splitlines() if "- chain " in line)
    assert (
        "UnusedStepsError: 2 scripted instruction step(s) were never used:\n"
        f"E             - chain {chain} step 1 ('step-1')\n"
        f"E             - chain {chain} step 2 ('step-2')\n"
        "E           The code under test made fewer model calls than the script expects. Shorten the script, "
        "or allow this with @pytest.mark.mockllm(allow_unused_steps=True) (or --mockllm-allow-unused-steps, "
        "or the ini option mockllm_allow_unused_steps)."
    ) in out


def test_unused_steps_are_allowed_by_marker_or_option(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner_allowed="""
        import pytest
        from helpers import script

        @pytest.mark.mockllm(allow_unused_steps=True)
        def test_marked(mockllm):
            mockllm.openai().chat.completions.create(
                model="gpt-mock", messages=[{"role": "user", "content": script("one", "two")}])
    """
    )
    project.runpytest().assert_outcomes(passed=1)
    project.makepyfile(
        test_inner_allowed="""
        from helpers import script

        def test_unmarked(mockllm):
            mockllm.openai().chat.completions.create(
                model="gpt-mock", messages=[{"role": "user", "content": script("one", "two")}])
    """
    )
    project.runpytest("--mockllm-allow-unused-steps").assert_outcomes(passed=1)


def test_the_marker_sets_the_seed_and_rejects_unknown_options(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner_seed="""
        import pytest
        from mockllm import InstructionChain

        PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"length": 8}}]}]).tagged("x")
        WORDS = {}

        def ask(mockllm):
            reply = mockllm.openai().chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
            return reply.choices[0].message.content

        @pytest.mark.mockllm(seed=1)
        def test_a(mockllm):
            WORDS["a"] = ask(mockllm)

        @pytest.mark.mockllm(seed=1)
        def test_b(mockllm):
            assert ask(mockllm) == WORDS["a"]

        @pytest.mark.mockllm(seed=2)
        def test_c(mockllm):
            assert ask(mockllm) != WORDS["a"]

        @pytest.mark.mockllm(sead=2)
        def test_typo(mockllm):
            pass
    """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=3, errors=1)
    assert (
        "UsageError: @pytest.mark.mockllm got an unknown argument sead=2; it takes seed=a whole number (int), "
        "lenient=True or False, allow_fallback=True or False, allow_unused_steps=True or False, record=True or False, "
        "allow_undeclared_tools=True or False, allow_real_providers=True or False, "
        "allow_impossible_replies=True or False, stream=a stream shape"
    ) in result.stdout.str()


def test_the_lenient_option_reaches_the_mock(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner_lenient="""
        import pytest

        @pytest.mark.mockllm(allow_fallback=True)  # the 400 is what the test is after
        def test_orphan_result(mockllm):
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                               {"role": "tool", "tool_call_id": "nope", "content": "x"}]}
            status = mockllm.httpx_client().post("/v1/chat/completions", json=body).status_code
            assert status == (200 if mockllm.mock.lenient else 400)
    """
    )
    project.runpytest().assert_outcomes(passed=1)
    project.runpytest("--mockllm-lenient").assert_outcomes(passed=1)


def test_the_session_server_fixture_streams_over_loopback(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner_server="""
        from helpers import script

        def test_stream(mockllm_server):
            assert mockllm_server.base_url.startswith("http://127.0.0.1:")
            with mockllm_server.openai().chat.completions.stream(
                    model="m", messages=[{"role": "user", "content": script("over the wire")}]) as stream:
                assert stream.get_final_completion().choices[0].message.content == "over the wire"
            assert mockllm_server.journal[-1].stream is True
    """
    )
    project.runpytest().assert_outcomes(passed=1)


GOLDEN_TEST = """
import pytest
from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "Hi there"}}]}]).tagged("Hello")

@pytest.mark.mockllm(seed=%d)
def test_flow(mockllm, golden):
    reply = mockllm.anthropic().messages.create(
        model="m", max_tokens=64, messages=[{"role": "user", "content": PROMPT}])
    assert [
        {"type": "user_message_sent", "persistence": "persisted", "sequenceNumber": 0, "eventIndex": 0,
         "data": {"content": "Hello"}},
        {"type": "message_chunk", "persistence": "transient", "eventIndex": 1,
         "data": {"content": "Hi ", "blockIndex": 0}},
        {"type": "message_chunk", "persistence": "transient", "eventIndex": 2,
         "data": {"content": "there", "blockIndex": 0}},
        {"type": "message", "persistence": "persisted", "sequenceNumber": 1, "eventIndex": 3,
         "data": {"content": reply.content[0].text, "messageId": reply.id, "stopReason": "end_turn"}},
    ] == golden
"""


def test_goldens_are_written_under_golden_and_compared(project: pytest.Pytester) -> None:
    project.makepyfile(test_golden=GOLDEN_TEST % 1)
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(passed=1)
    golden_file = project.path / "golden" / "test_golden" / "test_flow.golden"
    text = golden_file.read_text()
    assert 'message_chunk ×2         transient    content="Hi there" blockIndex=0' in text
    assert 'messageId="<id:1>"' in text  # the id the mock minted is normalised

    # Another id the mock minted (another seed) is the same behaviour: still passes.
    project.makepyfile(test_golden=GOLDEN_TEST % 2)
    project.runpytest().assert_outcomes(passed=1)

    # A change of behaviour fails with a readable diff of the table.
    project.makepyfile(test_golden=(GOLDEN_TEST % 3).replace('"end_turn"', '"max_tokens"'))
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*- *stopReason="end_turn"*', '*+ *stopReason="max_tokens"*'])


def test_unused_goldens_are_reported(project: pytest.Pytester) -> None:
    project.makepyfile(test_golden=GOLDEN_TEST % 1)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    stale = project.path / "golden" / "test_golden" / "test_removed.golden"
    stale.write_text("old\n")
    result = project.runpytest()
    result.stdout.fnmatch_lines(["*1 snapshot unused*"])


def test_golden_dir_option(project: pytest.Pytester) -> None:
    project.makepyfile(test_golden=GOLDEN_TEST % 1)
    project.runpytest("--snapshot-update", "--mockllm-golden-dir", "elsewhere").assert_outcomes(passed=1)
    assert (project.path / "elsewhere" / "test_golden" / "test_flow.golden").is_file()


def test_the_agent_runner_fixture_and_golden_together(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner_agent="""
        from harness import invariants
        from harness.systems.agent import ToolRegistry
        from mockllm import InstructionChain

        def test_tool_flow(mockllm_agent, golden):
            tools = ToolRegistry()
            tools.register(description="List entities.")(lambda: ["Customer"])
            prompt = InstructionChain(instruction_chain=[
                {"messages": [{"tool_call": [{"name": "<lambda>", "args": {}}]}]},
                {"messages": [{"text_message": {"text": "One entity."}}]},
            ]).tagged("List them")
            result = mockllm_agent("openai-chat", tools=tools).run_sync(prompt, "s1")
            invariants.check_tool_use_flow(result.events)
            assert result.events == golden
    """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    table = (project.path / "golden" / "test_inner_agent" / "test_tool_flow.golden").read_text()
    assert 'content="One entity."' in table and "tool_result" in table
    # The ids the runner's mock minted (reached through mockllm_agent) are normalised.
    assert 'messageId="<id:1>"' in table and 'toolUseId="<tool:1>"' in table
    project.runpytest().assert_outcomes(passed=1)
