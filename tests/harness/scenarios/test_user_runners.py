"""Scenario files played by a user's own runner: by ``package.module:function``, by a
``pytest_mockllm_runners`` hook, by an entry point; the contract's protocols."""

from __future__ import annotations

import importlib.metadata

import pytest

from harness.scenarios import registry
from harness.scenarios.registry import RunnerNotFound, resolve_runner

RUNNER = '''
from harness.scenarios.contract import RunnerContext, ScenarioRun, speaks

def reply(context):
    """Ask the mock once with the official SDK of the context's protocol: (text, reply id)."""
    prompt = context.scenario.tagged_prompt()
    if context.protocol == "anthropic-messages":
        reply = context.anthropic().messages.create(model="claude-mock", max_tokens=64,
                                                    messages=[{"role": "user", "content": prompt}])
        return reply.content[0].text, reply.id
    client = context.openai()
    if context.protocol == "openai-responses":
        reply = client.responses.create(model="gpt-mock", input=prompt)
        return reply.output_text, reply.id
    reply = client.chat.completions.create(model="gpt-mock", messages=[{"role": "user", "content": prompt}])
    return reply.choices[0].message.content, reply.id

SPOKEN = ("anthropic-messages", "openai-chat", "openai-responses")

@speaks(*SPOKEN)
def run(context: RunnerContext):
    text, reply_id = reply(context)
    return [{"type": "user", "content": context.scenario.prompt},
            {"type": "answer", "content": text, "id": reply_id}]

@speaks(*SPOKEN)
async def run_async(context: RunnerContext) -> ScenarioRun:
    return ScenarioRun(run(context), success=True)

@speaks("openai-chat")
def chat_only(context):
    return run(context)
'''

SCENARIO = """
runner: {runner}
protocols: {protocols}
prompt: Say hello
script:
  - messages: [{{text_message: {{text: Hello from the mock.}}}}]
"""


@pytest.fixture
def project(strict_pytester: pytest.Pytester) -> pytest.Pytester:
    strict_pytester.makepyfile(my_runners=RUNNER)
    strict_pytester.syspathinsert()
    (strict_pytester.path / "scenarios").mkdir()
    return strict_pytester


def scenario(project: pytest.Pytester, name: str, runner: str, protocols: str = "all") -> None:
    (project.path / "scenarios" / f"{name}.yaml").write_text(SCENARIO.format(runner=runner, protocols=protocols))


def test_a_runner_by_path_plays_every_protocol_it_speaks_openai_responses_included(project: pytest.Pytester) -> None:
    # (It speaks three: an item of a protocol it never spoke would fail, tests/harness/
    # scenarios/test_trust_unspoken_protocol.py.)
    scenario(project, "hello", "my_runners:run")
    scenario(project, "hello_async", "my_runners:run_async")
    result = project.runpytest("scenarios", "--snapshot-update", "-v")
    result.assert_outcomes(passed=2 * 3)
    result.stdout.fnmatch_lines(["*hello.yaml::hello[[]openai-responses[]] PASSED*"])
    golden = (project.path / "golden" / "scenarios" / "hello.golden").read_text()
    assert golden.splitlines()[:3] == ["# scenario: hello", "# runner: my_runners:run", "# outcome: success"]
    # one golden for every protocol: the reply id each protocol's form of is normalised.
    assert '-    answer                   -            content="Hello from the mock." id="<id:1>"' in golden
    project.runpytest("scenarios").assert_outcomes(passed=2 * 3)


def test_a_runner_from_a_conftest_hook(project: pytest.Pytester) -> None:
    project.makeconftest("""
        import my_runners

        def pytest_mockllm_runners(config):
            return {"my_agent": my_runners.run}
    """)
    scenario(project, "hooked", "my_agent", "[openai-chat]")
    project.runpytest("scenarios", "--snapshot-update").assert_outcomes(passed=1)
    assert (project.path / "golden" / "scenarios" / "hooked.golden").is_file()


def test_a_runner_says_which_protocols_it_speaks(project: pytest.Pytester) -> None:
    scenario(project, "chat", "my_runners:chat_only")
    result = project.runpytest("scenarios", "--snapshot-update", "-v")
    # protocols: all is every protocol the runner speaks, and only those.
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*chat.yaml::chat[[]openai-chat[]] PASSED*"])
    assert "anthropic-messages]" not in result.stdout.str()
    scenario(project, "chat", "my_runners:chat_only", "[openai-responses]")
    result = project.runpytest("scenarios")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*scenarios/chat.yaml:3: protocols: runner 'my_runners:chat_only' does not "
            "speak openai-responses; it speaks openai-chat*"
        ]
    )


def test_a_file_without_protocols_says_it_defaulted_and_how_to_name_them(project: pytest.Pytester) -> None:
    # A file that names no protocols asked for none: the error says which one it got by
    # default and the line that fixes it, not only what the runner does not speak.
    scenario(project, "chat", "my_runners:chat_only")
    path = project.path / "scenarios" / "chat.yaml"
    path.write_text(path.read_text().replace("protocols: all\n", ""))
    result = project.runpytest("scenarios")
    result.assert_outcomes(errors=1)
    assert (
        "protocols: runner 'my_runners:chat_only' does not speak anthropic-messages (the default: the file names "
        "no protocols); it speaks openai-chat. Name them with `protocols: [openai-chat]`, or `protocols: all` for "
        "every protocol it speaks"
    ) in result.stdout.str()


def test_a_runner_path_that_does_not_import_is_named(project: pytest.Pytester) -> None:
    scenario(project, "lost", "my_runners:nowhere")
    scenario(project, "gone", "no_such_package.agent:run")
    result = project.runpytest("scenarios", "--continue-on-collection-errors")
    result.assert_outcomes(errors=2)
    out = result.stdout.str()
    assert "scenarios/lost.yaml:2: runner: runner 'my_runners:nowhere': my_runners has no 'nowhere'" in out
    assert (
        "scenarios/gone.yaml:2: runner: runner 'no_such_package.agent:run': cannot import "
        "no_such_package.agent: No module named 'no_such_package'"
    ) in out


def test_entry_points_and_registered_runners_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    point = importlib.metadata.EntryPoint(
        name="packaged", value="harness.scenarios.runners:run_agent_scenario", group=registry.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(registry, "_entry_points", lambda: {"packaged": point})
    from harness.scenarios.runners import run_agent_scenario

    assert resolve_runner("packaged") is run_agent_scenario
    monkeypatch.setitem(registry._REGISTERED, "mine", len)
    assert resolve_runner("mine") is len
    with pytest.raises(RunnerNotFound, match="no runner named 'other'; known: agent, chain, mine, packaged, planner"):
        resolve_runner("other")
