"""The ``golden`` fixture, driven through pytester: goldens of dicts, pydantic models
and dataclasses fail on any changed field; a mock fallback reply is refused."""

from __future__ import annotations

import sys

import pytest

EVENTS = """
import dataclasses
from pydantic import BaseModel

@dataclasses.dataclass
class Call:
    name: str
    args: dict

class Reply(BaseModel):
    type: str = "reply"
    text: str
    call: Call | None = None

def test_dicts(golden):
    assert [{"type": "message", "content": "%(content)s"}] == golden

def test_models(golden):
    assert [Reply(text="done", call=Call("lookup", {"city": "%(city)s"}))] == golden

def test_dataclasses(golden):
    assert [Call("lookup", {"nested": {"depth": %(depth)d}})] == golden
"""
FIRST = {"content": "hi", "city": "Oslo", "depth": 1}


def test_goldens_of_dicts_models_and_dataclasses_fail_on_any_changed_field(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(test_shapes=EVENTS % FIRST)
    strict_pytester.runpytest("--snapshot-update").assert_outcomes(passed=3)
    folder = strict_pytester.path / "golden" / "test_shapes"
    assert 'content="hi"' in (folder / "test_dicts.golden").read_text()
    assert 'call={"args":{"city":"Oslo"},"name":"lookup"}' in (folder / "test_models.golden").read_text()
    strict_pytester.runpytest().assert_outcomes(passed=3)

    for field, value in (("content", "bye"), ("city", "Bergen"), ("depth", 2)):
        strict_pytester.makepyfile(test_shapes=EVENTS % {**FIRST, field: value})
        result = strict_pytester.runpytest()
        result.assert_outcomes(passed=2, failed=1)
        assert f"{value}" in result.stdout.str()


def test_a_golden_test_without_a_mock_does_not_load_the_mock_fixtures(
    strict_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The mock fixtures' module brings their clients (httpx, the engine: about 0.3 s of CPU a
    # process); a project's golden tests that use no mock do not pay for it. Here it cannot load.
    monkeypatch.setitem(sys.modules, "harness.plugin.fixtures", None)
    strict_pytester.makepyfile(test_shapes=EVENTS % FIRST)
    strict_pytester.runpytest("--snapshot-update").assert_outcomes(passed=3)


FALLBACK_TEST = """
import pytest
from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "one"}}]}]).tagged("Go")

def ask(mockllm):
    client = mockllm.openai()
    messages = [{"role": "user", "content": PROMPT}]
    events = []
    for _ in range(2):  # the second call is past the script's end: the fallback reply
        text = client.chat.completions.create(model="m", messages=messages).choices[0].message.content
        events.append({"type": "message", "content": text})
        messages.append({"role": "assistant", "content": text})
    return events

def test_refused(mockllm, golden):
    assert ask(mockllm) == golden

@pytest.mark.mockllm(allow_fallback=True)
def test_allowed(mockllm, golden):
    assert ask(mockllm) == golden

def test_refused_from_the_journal_alone(mockllm, golden):
    ask(mockllm)
    assert [{"type": "message", "content": "only the first"}] == golden
"""


def test_a_golden_that_would_record_a_fallback_reply_is_refused(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(test_fallback=FALLBACK_TEST)
    result = strict_pytester.runpytest("--snapshot-update")
    # Each refused test also fails strict mode at teardown (the fallback request): an error.
    result.assert_outcomes(passed=1, failed=2, errors=2)
    out = result.stdout.str()
    assert "golden refused: the run got the mock's fallback reply" in out
    # The evidence is the mock's typed record (the findings), never the reply's text.
    assert (
        "POST /v1/chat/completions (request 1, turn 1): fallback reply, the script has 1 step and this is turn 2: "
        "turn index 1 is past" in out
    )
    assert "@pytest.mark.mockllm(allow_fallback=True)" in out
    goldens = strict_pytester.path / "golden" / "test_fallback"
    assert sorted(p.name for p in goldens.iterdir()) == ["test_allowed.golden"]


ORDER_TEST = """
from harness import volatile

ORDER = {"type": "order", "order_id": "%(order)s", "customer_id": "%(customer)s", "ship_time": "%(time)s",
         "elapsed_ms": %(ms)d}

def test_order(golden):
    assert [ORDER] == golden

def test_order_opted_in(golden):
    assert [ORDER] == golden(matcher=volatile(ids=["order_id"], timestamps=["ship_time"], durations=["elapsed_ms"]))
"""


def test_a_golden_fails_when_a_users_business_data_changes_unless_opted_in(strict_pytester: pytest.Pytester) -> None:
    first = {"order": "A-1", "customer": "C-9", "time": "never", "ms": 12}
    strict_pytester.makepyfile(test_orders=ORDER_TEST % first)
    strict_pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    for key, value in (("order", "A-2"), ("customer", "C-7"), ("time", "2026-01-01T00:00:00Z"), ("ms", 99)):
        strict_pytester.makepyfile(test_orders=ORDER_TEST % {**first, key: value})
        result = strict_pytester.runpytest("-k", "test_order and not opted")
        result.assert_outcomes(failed=1)
    changed = {"order": "A-2", "customer": "C-9", "time": "today", "ms": 99}
    strict_pytester.makepyfile(test_orders=ORDER_TEST % changed)
    strict_pytester.runpytest("-k", "opted_in").assert_outcomes(passed=1)
