"""The verdict: a test that used the mock passes only if the app did what the test says.

Each test here names the way a test could pass wrongly (docs/strictness.md) and drives
it through the official SDKs, in process (``intercept()``, a bare ``MockLLM``); the
pytest fixtures' doors are in tests/harness/plugin/test_verdict_doors.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from mockllm import InstructionChain, MockLLM, Outcome, StrictnessError, _tool_check, intercept
from mockllm._steps import CHAIN_TABLE_SIZE
from tests.mockllm.bulk_scripts import bulk_script

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")
openai = pytest.importorskip("openai", minversion="3", reason="openai>=3 (built on httpx2) is not installed")
anthropic = pytest.importorskip("anthropic", minversion="1", reason="anthropic>=1 (built on httpx2) is not installed")

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
ORDER_CALL = [{"messages": [{"tool_call": [{"name": "lookup_order", "args": {"order_id": "A-1"}}]}]}]


@pytest.fixture(autouse=True)
def _schemas_checked_afresh() -> Iterator[None]:
    """Each test checks its schemas itself: the mock's caches would answer from an earlier
    test's request (and hide a broken check)."""
    _tool_check._VALIDATORS.clear()
    _tool_check._VERDICTS.clear()
    yield


def handle_ticket(text: str) -> str:
    """The app under test: a default OpenAI client (no base_url) classifying a ticket."""
    client = openai.OpenAI(api_key="sk-test", max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content or ""


def tagged(chain: list[dict[str, Any]], text: str = "Go") -> str:
    return InstructionChain(instruction_chain=chain).tagged(text)


# -- 1. host interception fails on what nobody scripted ---------------------------------


def test_intercept_with_nothing_scripted_fails_when_the_block_ends() -> None:
    with pytest.raises(StrictnessError) as info:
        with intercept():
            answer = handle_ticket("My parcel never arrived")
    assert answer.startswith("mockllm fallback reply:")  # what the app got, and the test would pass on
    message = str(info.value)
    assert message.startswith("1 request(s) to the mock got the fallback reply:\n")
    assert "  - POST /v1/chat/completions (request 0): fallback reply, no user message holds an instruction" in message
    assert "      chain: none (no user message holds an instruction block)" in message  # explain()'s report
    assert "or allow this with intercept(..., allow_fallback=True)" in message


def test_intercept_with_a_script_whose_match_does_not_fit_fails() -> None:
    mock = MockLLM()
    mock.script([{"messages": [{"text_message": {"text": "refund"}}]}], match="refund")
    with pytest.raises(StrictnessError) as info:
        with intercept(mock, block_unmocked=True):
            handle_ticket("Where is my parcel?")
    message = str(info.value)
    assert "1 request(s) to the mock got the fallback reply" in message
    assert "No registered script matched them, amongst:\n  - script script-1 (match text='refund')" in message
    assert "1 scripted instruction step(s) were never used" in message


def test_intercept_passes_when_every_call_was_scripted_and_used() -> None:
    mock = MockLLM()
    mock.script([{"messages": [{"text_message": {"text": "shipping"}}]}], match="parcel")
    with intercept(mock):
        assert handle_ticket("Where is my parcel?") == "shipping"
    assert mock.journal[-1].outcome is Outcome.SCRIPTED


def test_intercept_opt_outs_are_explicit() -> None:
    with intercept(allow_fallback=True):
        handle_ticket("anything")
    with intercept(MockLLM(allow_fallback=True)):
        handle_ticket("anything")


def test_an_exception_in_the_block_is_not_hidden_by_the_verdict() -> None:
    with pytest.raises(KeyError):
        with intercept():
            handle_ticket("unscripted")
            raise KeyError("the test's own failure")


def test_intercept_takes_the_pytest_fixture(mockllm: Any) -> None:
    mockllm.script([{"messages": [{"text_message": {"text": "ok"}}]}])
    with intercept(mockllm) as mock:
        assert handle_ticket("hello") == "ok"
    assert mock is mockllm.mock


def test_intercept_refuses_the_server_fixture_with_a_reason(mockllm_server: Any) -> None:
    with pytest.raises(TypeError, match="is a mock server on http://127.0.0.1:.*Point the client at its base_url"):
        with intercept(mockllm_server):
            pass


def test_a_bare_mock_verifies_as_a_context_manager_and_on_demand() -> None:
    with pytest.raises(StrictnessError, match="MockLLM\\(allow_fallback=True\\)"):
        with MockLLM() as mock:
            client = openai.OpenAI(api_key="k", base_url="http://mock/v1", http_client=_client(mock))
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    mock.verify(allow_fallback=True)  # the opt-out, said where the check is asked for
    with pytest.raises(StrictnessError):
        mock.verify()


def _client(mock: MockLLM) -> Any:
    from mockllm import HTTPX2Transport

    return httpx2.Client(transport=HTTPX2Transport(mock))


# -- 2. tool calls for tools the request never declared ---------------------------------


@pytest.mark.parametrize("tools", [None, [WEATHER_TOOL]], ids=["no-tools", "only-get_weather"])
def test_an_openai_tool_call_the_request_did_not_declare_fails(tools: list[Any] | None) -> None:
    client = openai.OpenAI(api_key="k", max_retries=0)
    extra = {"tools": tools} if tools else {}
    with pytest.raises(StrictnessError) as info:
        with intercept() as mock:
            reply = client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": tagged(ORDER_CALL)}], **extra
            )
    assert reply.choices[0].message.tool_calls[0].function.name == "lookup_order"  # served as scripted
    declared = "it declared 'get_weather'" if tools else "it declared no tools"
    assert (
        "1 scripted tool call(s) were not allowed by the request's declared tools:\n"
        f"  - POST /v1/chat/completions (request 0, turn 0) (instruction '0'): tool call 'lookup_order': "
        f"the request did not declare a tool named 'lookup_order' ({declared})"
    ) in str(info.value)
    assert [call.name for call in mock.journal[0].undeclared_tool_calls] == ["lookup_order"]


def test_an_anthropic_tool_use_the_request_did_not_declare_fails() -> None:
    client = anthropic.Anthropic(api_key="k", max_retries=0)
    weather = {"name": "get_weather", "input_schema": {"type": "object"}}
    with pytest.raises(StrictnessError, match="the request did not declare a tool named 'lookup_order'"):
        with intercept():
            reply = client.messages.create(
                model="claude-x",
                max_tokens=100,
                tools=[weather],
                messages=[{"role": "user", "content": tagged(ORDER_CALL)}],
            )
    assert reply.content[0].name == "lookup_order"


def test_a_responses_function_call_the_request_did_not_declare_fails() -> None:
    client = openai.OpenAI(api_key="k", max_retries=0)
    with pytest.raises(StrictnessError, match="the request did not declare a tool named 'lookup_order'"):
        with intercept():
            client.responses.create(model="gpt-4o", input=tagged(ORDER_CALL))


def test_arguments_that_break_the_declared_schema_fail() -> None:
    client = openai.OpenAI(api_key="k", max_retries=0)
    call = [{"messages": [{"tool_call": [{"name": "get_weather", "args": {"town": "Oslo"}}]}]}]
    with pytest.raises(StrictnessError) as info:
        with intercept():
            client.chat.completions.create(
                model="gpt-4o", tools=[WEATHER_TOOL], messages=[{"role": "user", "content": tagged(call)}]
            )
    assert "the arguments of 'get_weather' break its declared schema: (the arguments): 'city' is a required" in str(
        info.value
    )


@pytest.mark.parametrize(
    ("parameters", "args", "reason"),
    [
        (
            {"type": "object", "properties": {"city": {"type": "string"}}},
            {"city": 3},
            "break its declared schema: ['city']: 3 is not of type 'string'",
        ),
        ({"type": "objekt"}, {"city": "Oslo"}, "break its declared schema: the declared schema itself is invalid"),
    ],
)
def test_a_schema_problem_names_where_it_is(parameters: dict[str, Any], args: dict[str, Any], reason: str) -> None:
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": parameters}}
    call = [{"messages": [{"tool_call": [{"name": "get_weather", "args": args}]}]}]
    with pytest.raises(StrictnessError, match=re.escape(reason)):
        with intercept():
            openai.OpenAI(api_key="k", max_retries=0).chat.completions.create(
                model="m", tools=[tool], messages=[{"role": "user", "content": tagged(call)}]
            )


def test_each_call_is_judged_by_its_own_schema_and_arguments_however_often_it_comes() -> None:
    # The same arguments fit one tool's schema and break another's; a fitting call comes
    # first, the same breaking call twice: each breaking call is counted.
    loose = {"type": "function", "function": {"name": "loose", "parameters": {"type": "object"}}}
    strict = {
        "type": "function",
        "function": {"name": "strict", "parameters": {"type": "object", "required": ["city"]}},
    }
    client = openai.OpenAI(api_key="k", max_retries=0)

    def ask(name: str) -> None:
        call = [{"messages": [{"tool_call": [{"name": name, "args": {"town": "Oslo"}}]}]}]
        client.chat.completions.create(
            model="m", tools=[loose, strict], messages=[{"role": "user", "content": tagged(call)}]
        )

    with pytest.raises(StrictnessError, match=re.escape("2 scripted tool call(s) were not allowed")) as info:
        with intercept():
            ask("loose")
            ask("strict")
            ask("strict")
    assert "'loose'" not in str(info.value)


def test_a_declared_tool_with_fitting_arguments_passes_on_each_protocol() -> None:
    call = [{"messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Oslo"}}]}]}]
    schema = WEATHER_TOOL["function"]["parameters"]
    with intercept() as mock:
        openai.OpenAI(api_key="k", max_retries=0).chat.completions.create(
            model="m", tools=[WEATHER_TOOL], messages=[{"role": "user", "content": tagged(call)}]
        )
        anthropic.Anthropic(api_key="k", max_retries=0).messages.create(
            model="c",
            max_tokens=10,
            tools=[{"name": "get_weather", "input_schema": schema}],
            messages=[{"role": "user", "content": tagged(call)}],
        )
        openai.OpenAI(api_key="k", max_retries=0).responses.create(
            model="m",
            tools=[{"type": "function", "name": "get_weather", "parameters": schema}],
            input=tagged(call),
        )
    assert [c.arguments for c in mock.journal.tool_calls("get_weather")] == [{"city": "Oslo"}] * 3


def test_undeclared_tool_calls_can_be_allowed_explicitly() -> None:
    with intercept(allow_undeclared_tools=True) as mock:
        openai.OpenAI(api_key="k", max_retries=0).chat.completions.create(
            model="m", messages=[{"role": "user", "content": tagged(ORDER_CALL)}]
        )
    assert mock.journal[0].undeclared_tool_calls  # recorded all the same


# -- 3. the verdict never forgets; the journal keeps what was sent ----------------------


def _chat(mock: MockLLM, content: str, **fields: Any) -> int:
    body = {"model": "m", "messages": [{"role": "user", "content": content}], **fields}
    return mock.handle("POST", "/v1/chat/completions", {}, json.dumps(body).encode()).status


def test_one_unscripted_request_is_not_forgotten_after_a_thousand_scripted_ones() -> None:
    mock = MockLLM()
    _chat(mock, "nobody scripted this")
    for n in range(1000):
        _chat(mock, bulk_script({"messages": [{"text_message": {"text": f"reply {n}"}}]}, prompt="Go"))
    assert all(entry.outcome is Outcome.SCRIPTED for entry in mock.journal)  # the ring has moved on
    with pytest.raises(StrictnessError, match="request 0\\): fallback reply, no user message holds"):
        mock.verify()


def test_every_problem_is_counted_though_only_the_first_are_shown() -> None:
    mock = MockLLM(journal_size=5)
    for n in range(30):
        _chat(mock, f"unscripted {n}")
    message = str(pytest.raises(StrictnessError, mock.verify).value)
    assert message.startswith("30 request(s) to the mock got the fallback reply:")
    assert "  ... and 10 more (the first 20 are shown)" in message


def test_the_journal_carries_the_parsed_request_and_the_reply() -> None:
    mock = MockLLM()
    call = [{"messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Oslo"}}]}]}]
    _chat(mock, tagged(call), tools=[WEATHER_TOOL], temperature=0.2)
    _chat(mock, "untagged", model="other")
    [sent] = mock.journal.requests(model="m")
    assert sent.messages[0]["role"] == "user" and sent.tools == [WEATHER_TOOL] and sent.tool_names == ["get_weather"]
    assert sent.parameters == {"temperature": 0.2}
    assert [r.model for r in mock.journal.requests()] == ["m", "other"]
    [made] = mock.journal.tool_calls()
    assert (made.name, made.arguments, made.request_index) == ("get_weather", {"city": "Oslo"}, 0)
    assert [e.outcome for e in mock.journal] == [Outcome.SCRIPTED, Outcome.FALLBACK]
    assert mock.journal[1].reply is not None and mock.journal[1].reply.text.startswith("mockllm fallback reply:")


def test_outcomes_are_typed_for_scripted_errors_rejections_and_endpoints() -> None:
    mock = MockLLM()
    _chat(mock, tagged([{"error": {"status": 429}}]))
    mock.handle("POST", "/v1/chat/completions", {}, b"{not json")
    mock.handle("GET", "/v1/models", {}, b"")
    assert [e.outcome for e in mock.journal] == [Outcome.SCRIPTED_ERROR, Outcome.REJECTED, Outcome.SERVED]
    assert mock.findings().counts == {"rejected": 1}


def test_unused_steps_of_chains_dropped_from_the_table_still_count() -> None:
    mock = MockLLM()
    for n in range(CHAIN_TABLE_SIZE + 5):
        text = {"text_message": {"text": "x"}}
        _chat(mock, bulk_script({"id": f"s{n}", "messages": [text]}, {"id": "never", "messages": [text]}, prompt="Go"))
    assert len(mock.unused_steps()) == CHAIN_TABLE_SIZE  # the table is bounded...
    message = str(pytest.raises(StrictnessError, mock.verify).value)
    assert message.startswith(
        f"{CHAIN_TABLE_SIZE + 5} scripted instruction step(s) were never used:\n"
    )  # ...the count not


def test_the_server_serves_the_journal_with_the_request_and_the_findings(mock_server_url: str) -> None:
    import httpx

    from harness.plugin.fixtures import MockLLMServer

    with MockLLMServer(mock_server_url).session() as server, httpx.Client(base_url=server.base_url) as http:
        # A lone surrogate in a message is accepted (a fallback reply); the journal keeps it escaped.
        body = b'{"model": "m", "messages": [{"role": "user", "content": "hi \\ud800"}]}'
        assert http.post("/v1/chat/completions", content=body).status_code == 200
        [entry] = server.journal
        assert entry.outcome is Outcome.FALLBACK and entry.request is not None
        assert entry.request.messages == [{"role": "user", "content": "hi \\ud800"}]
        assert server.findings().counts == {"fallback": 1}


def test_every_undeclared_call_of_a_reply_is_listed_and_every_unused_step_counted() -> None:
    mock = MockLLM()
    calls = [
        {"name": "get_weather", "args": {}},  # declared, without a schema
        {"name": "lookup_order", "args": {}},
        {"name": "delete_account", "args": {}},
    ]
    text = {"text_message": {"text": "x"}}
    chain = [{"messages": [{"tool_call": calls}]}, {"messages": [text]}, {"messages": [text]}]
    weather = {"type": "function", "function": {"name": "get_weather"}}
    _chat(mock, tagged(chain), tools=[weather])
    assert [c.name for c in mock.journal[0].undeclared_tool_calls] == ["lookup_order", "delete_account"]
    message = str(pytest.raises(StrictnessError, mock.verify).value)
    assert "2 scripted instruction step(s) were never used:" in message
    assert "2 scripted tool call(s) were not allowed by the request's declared tools:" in message
