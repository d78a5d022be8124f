"""The README's Python examples run as written (the server one against a loopback server)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
README_SERVER = "http://127.0.0.1:8000"
SCRIPTS = [b for b in BLOCKS if "def test_" not in b]
TEST_MODULES = [b for b in BLOCKS if "def test_" in b]


def test_readme_has_the_examples() -> None:
    assert len(SCRIPTS) >= 4, "the README lost a Python example"
    assert TEST_MODULES, "the README lost its pytest plugin example"


@pytest.mark.parametrize("block", TEST_MODULES, ids=[f"plugin-example-{i}" for i in range(len(TEST_MODULES))])
def test_readme_plugin_example_passes_under_pytest(
    block: str, strict_pytester: pytest.Pytester, shared_server_conftest: str
) -> None:
    strict_pytester.syspathinsert(README.parent / "examples" / "my_app")  # the app the README tests
    strict_pytester.makeconftest(shared_server_conftest)  # mockllm_server on this session's server
    strict_pytester.makepyfile(test_readme_plugin_example=block)
    result = strict_pytester.runpytest()
    result.assert_outcomes(passed=block.count("def test_"))


@pytest.mark.parametrize("block", SCRIPTS, ids=[f"example-{i}" for i in range(len(SCRIPTS))])
def test_readme_example_runs(block: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> None:
    if "import httpx2" in block:
        pytest.importorskip("httpx2", reason="this example needs httpx2 (the httpx2 extra), not installed here")
    if README_SERVER in block:
        block = block.replace(README_SERVER, request.getfixturevalue("mock_server_url"))
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - documentation that runs
    # Close what the example opened, as a user's process exit would.
    for value in namespace.values():
        close = getattr(value, "close", None)
        if callable(close) and type(value).__module__.split(".")[0] in {"openai", "anthropic", "httpx", "httpx2"}:
            close()
    printed = capsys.readouterr().out
    if "explain(" in block:
        assert "runs: instruction 'hello'" in printed
