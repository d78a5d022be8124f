"""docs/testing-your-app.md's Bedrock example passes under pytest as written (boto3 against
the mockllm_server fixture)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing-your-app.md"


def _section_example() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Other providers: Bedrock through boto3, Gemini, Ollama", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return block


def test_the_bedrock_example_passes_under_pytest(strict_pytester: pytest.Pytester, shared_server_conftest: str) -> None:
    pytest.importorskip("boto3", reason="boto3 is not installed (the test extra)")
    strict_pytester.makeconftest(shared_server_conftest)  # mockllm_server on this session's server
    block = _section_example()
    strict_pytester.makepyfile(test_docs_bedrock=block)
    result = strict_pytester.runpytest()
    result.assert_outcomes(passed=block.count("def test_"))
