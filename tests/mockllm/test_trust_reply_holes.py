"""Replies past what the request allows, in spellings the limit check once missed."""

from __future__ import annotations

from harness.plugin.fixtures import MockLLMFixture
from tests.mockllm.test_trust_impossible_replies import LONG, failure, mock, user

__all__ = ["mock"]  # the fixture, imported to be used here


def test_a_null_max_completion_tokens_leaves_max_tokens_the_limit(mock: MockLLMFixture) -> None:
    # A client that sends every field (null for the unset) still sets a limit by max_tokens.
    mock.openai().chat.completions.create(
        model="m", messages=user(LONG), max_tokens=10, extra_body={"max_completion_tokens": None}
    )
    assert "the request allows max_tokens=10" in failure(mock)
