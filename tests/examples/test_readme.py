"""The README's Python examples run as written (the server one against a loopback server)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
README_SERVER = "http://127.0.0.1:8000"


def test_readme_has_the_examples() -> None:
    assert len(BLOCKS) >= 4, "the README lost a Python example"


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(block: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> None:
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
