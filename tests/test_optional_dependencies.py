"""The core install imports no extra, and a missing extra fails with its install command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from harness.plugin.fixtures import MockLLMFixture
from harness.systems.llm import model_client
from mockllm import HTTPX2Transport, InstructionChain, MockLLM, intercept

EXTRAS = (
    "openai",
    "anthropic",
    "httpx2",
    "mcp",
    "mcp_types",
    "websockets",
    "respx",
    "scim2_models",
    "agents",
    "redis",
)
SCENARIO = Path(__file__).parent.parent / "scenarios" / "simple_message.yaml"


def test_the_core_imports_no_extra(fresh_imports: dict[str, set[str]]) -> None:
    # In a fresh interpreter (tests/conftest.py): the plugin module, then the core's modules.
    assert sorted(fresh_imports["core"] & set(EXTRAS)) == []


def test_the_plugin_module_imports_neither_the_mock_nor_syrupy_nor_pydantic_at_startup(
    fresh_imports: dict[str, set[str]],
) -> None:
    # What pytest imports in every run of every project that has the package installed
    # (pydantic alone is some 40 ms of a project's startup), in a fresh interpreter.
    assert sorted(fresh_imports["plugin"] & {"mockllm", "syrupy", "pydantic"}) == []


def test_httpx2_transport_without_httpx2_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx2", None)
    with pytest.raises(
        ImportError,
        match=r"HTTPX2Transport needs the \'httpx2\' package, which is not installed\. "
        r'Install it with: pip install "mockllm-harness\[httpx2\]"',
    ):
        HTTPX2Transport(MockLLM())


def test_intercept_without_httpx2_still_serves_httpx_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx2", None)
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "httpx2" else object())
    chain = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "Served."}}]}])
    with intercept() as mock, httpx.Client() as client:
        reply = client.post(
            "https://api.openai.com/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": chain.tagged("hi")}]},
        )
    assert reply.json()["choices"][0]["message"]["content"] == "Served."
    assert len(mock.journal) == 1
    with pytest.raises(ImportError, match=r'pip install "mockllm-harness\[httpx2\]"'), intercept(clients=("httpx2",)):
        pass


@pytest.mark.parametrize(("sdk", "protocol"), [("openai", "openai-chat"), ("anthropic", "anthropic-messages")])
def test_a_missing_sdk_names_the_agent_extra(monkeypatch: pytest.MonkeyPatch, sdk: str, protocol: str) -> None:
    monkeypatch.setitem(sys.modules, sdk, None)
    extra = (
        rf"needs the '{sdk}' package, which is not installed\. "
        r'Install it with: pip install "mockllm-harness\[agent\]"'
    )
    with pytest.raises(ImportError, match=rf"harness.systems.llm's {protocol} client {extra}"):
        model_client(protocol)
    fixture = MockLLMFixture(MockLLM())
    with pytest.raises(ImportError, match=rf"mockllm.{sdk}\(\) {extra}"):
        getattr(fixture, sdk)()


def test_a_scenario_whose_runner_needs_the_agent_extra_fails_its_item_with_the_command(
    strict_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    strict_pytester.makefile(".scenario.yaml", simple=SCENARIO.read_text(encoding="utf-8"))
    monkeypatch.setitem(sys.modules, "anthropic", None)
    result = strict_pytester.runpytest("--mockllm-protocol", "anthropic-messages", "--snapshot-update")
    result.assert_outcomes(failed=1)
    assert (
        "scenario 'simple.scenario' under anthropic-messages: runner 'agent': harness.systems.llm's anthropic-messages "
        "client needs the 'anthropic' package, which is not installed. "
        'Install it with: pip install "mockllm-harness[agent]"'
    ) in result.stdout.str()
    assert "During handling" not in result.stdout.str()


# As if the golden extra were not installed: syrupy cannot be imported, and the modules
# that import it are not loaded either (the inner run shares this session's process, which
# has them; pytester puts them back when the run ends).
_WITHOUT_SYRUPY = """
import sys

NEED_SYRUPY = ("harness.golden.assertion", "harness.golden.extension", "harness.plugin.scenario_item")
for name in [name for name in sys.modules if name.partition(".")[0] == "syrupy" or name in NEED_SYRUPY]:
    del sys.modules[name]
sys.modules["syrupy"] = None
"""


def test_without_the_golden_extra_a_golden_test_errors_with_the_command(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makeconftest(_WITHOUT_SYRUPY)
    strict_pytester.makepyfile(
        test_plain="def test_plain():\n    assert True\n", test_snap="def test_snap(golden):\n    assert golden == []\n"
    )
    # syrupy is neither loaded as a plugin nor importable.
    result = strict_pytester.runpytest_inprocess("-p", "no:syrupy")
    result.assert_outcomes(passed=1, errors=1)
    assert (
        "the golden fixture needs the 'syrupy' package, which is not installed. "
        'Install it with: pip install "mockllm-harness[golden]"'
    ) in result.stdout.str()


def test_without_the_golden_extra_a_scenario_file_is_a_collection_error_with_the_command(
    strict_pytester: pytest.Pytester,
) -> None:
    strict_pytester.makeconftest(_WITHOUT_SYRUPY)
    strict_pytester.makefile(".scenario.yaml", simple=SCENARIO.read_text(encoding="utf-8"))
    result = strict_pytester.runpytest_inprocess("-p", "no:syrupy")
    result.assert_outcomes(errors=1)
    assert (
        "simple.scenario.yaml: a scenario file (its golden) needs the 'syrupy' package, "
        'which is not installed. Install it with: pip install "mockllm-harness[golden]"'
    ) in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


def test_strategies_without_hypothesis_name_the_extra() -> None:
    probe = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "import mockllm\n"
        "try:\n    mockllm.strategies\nexcept ImportError as exc:\n    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == (
        "mockllm.strategies needs the 'hypothesis' package, which is not installed. "
        'Install it with: pip install "mockllm-harness[hypothesis]"'
    )


def test_a_redis_state_without_redis_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from mockllm._optional import MissingExtraError
    from mockllm._state import open_state

    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(MissingExtraError, match=r'--state redis://.*pip install "mockllm-harness\[redis\]"'):
        open_state("redis://127.0.0.1:6379/0")


def test_without_google_genai_the_runners_do_not_speak_gemini_and_its_client_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.systems.llm import installed_protocols

    monkeypatch.setitem(sys.modules, "google.genai", None)
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "google.genai" else object())
    assert installed_protocols() == ("anthropic-messages", "openai-chat")
    with pytest.raises(
        ImportError,
        match=r"harness.systems.llm's gemini client needs the 'google-genai' package, which is not installed\. "
        r'Install it with: pip install "mockllm-harness\[gemini\]"',
    ):
        model_client("gemini")


def test_with_google_genai_the_runners_speak_gemini() -> None:
    pytest.importorskip("google.genai", reason="google-genai is not installed (the gemini extra)")
    from harness.scenarios.contract import spoken_protocols
    from harness.scenarios.runners import MODEL_CLIENT_PROTOCOLS, run_agent_scenario

    assert "gemini" in MODEL_CLIENT_PROTOCOLS
    assert spoken_protocols(run_agent_scenario) == MODEL_CLIENT_PROTOCOLS
