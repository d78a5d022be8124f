"""Hypothesis strategies for hostile requests to the mock's endpoints: random JSON, random
bytes, huge and non-finite numbers, deep nesting, lone surrogates, random headers, and
instruction blocks built from the same pieces. Shared by the fuzz test and
``bench/fuzz_server.py``."""

from __future__ import annotations

import json
import operator
import string
from typing import Any

from hypothesis import strategies as st

PATHS = (
    "/v1/chat/completions",
    "/v1/messages",
    "/v1/responses",
    "/v1beta/models/gemini-mock:generateContent",
    "/v1beta/models/gemini-mock:streamGenerateContent",
    "/openai/v1/chat/completions",
    "/api/chat",
    "/api/generate",
    "/model/anthropic.claude-mock-v1:0/converse",
    "/model/anthropic.claude-mock-v1:0/converse-stream",
    "/model/anthropic.claude-mock-v1:0/invoke",
    "/model/anthropic.claude-mock-v1:0/invoke-with-response-stream",
)

_odd_numbers = st.sampled_from([1e999, -1e999, float("nan"), "__HUGE_INT__", -(10**40), 1e308, 2**63, -0.0])
_odd_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", " edge ", "\r\n", "<|instruction_start|>", "<|instruction_end|>"]),
)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _odd_numbers, _odd_text)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_odd_text, inner, max_size=4)),
    max_leaves=20,
)


# The strategies are built once, here, not inside the composites below: a strategy built per
# draw is validated per draw (most of the fuzz test's CPU went there), and draws the same.
_message = st.one_of(
    st.fixed_dictionaries(
        {"text_message": st.fixed_dictionaries({"length": st.one_of(st.integers(-5, 200_000), _odd_numbers)})}
    ),
    st.fixed_dictionaries({"text_message": st.fixed_dictionaries({"text": _odd_text})}),
    st.fixed_dictionaries(
        {
            "tool_call": st.lists(
                st.fixed_dictionaries(
                    {"name": _odd_text, "args": st.dictionaries(st.text(max_size=5), _json, max_size=3)}
                ),
                max_size=3,
            )
        }
    ),
    _json,
)
_message_count = st.sampled_from([3, 300])
_messages = {count: st.lists(_message, max_size=count) for count in (3, 300)}
_instruction_fields = (
    ("id", _odd_text),
    ("timing", st.fixed_dictionaries({"chunk_ms": st.one_of(st.floats(0, 10), _odd_numbers)})),
    ("error", _json),
    ("chunk_words", st.integers(-2, 5)),
    ("stop_reason", _odd_text),
)


@st.composite
def _instruction(draw: st.DrawFn) -> Any:
    instruction: dict[str, Any] = {"messages": draw(_messages[draw(_message_count)])}
    for key, value in _instruction_fields:
        if draw(st.booleans()):
            instruction[key] = draw(value)
    return instruction


def _dumps(value: Any) -> str:
    # An integer too long for int() cannot be drawn (hypothesis reprs it): it is spliced in.
    return json.dumps(value, allow_nan=True, ensure_ascii=True).replace('"__HUGE_INT__"', "9" * 5000)


_content_kind = st.sampled_from(["plain", "script", "broken-script"])
_chain = st.lists(_instruction(), min_size=1, max_size=3)


@st.composite
def _content(draw: st.DrawFn) -> str:
    kind = draw(_content_kind)
    if kind == "plain":
        return draw(_odd_text)
    chain = draw(_chain)
    block = _dumps({"instruction_chain": chain} if draw(st.booleans()) else chain[0])
    if kind == "broken-script":
        block = block[: draw(st.integers(0, len(block)))]
    return f"<|instruction_start|>{block}<|instruction_end|>"


_body_kind = st.sampled_from(["valid", "json", "bytes", "deep"])
_any_bytes = st.binary(max_size=200)
_depth = st.integers(50, 200_000)
_any_content = _content()
_model = st.one_of(st.just("m"), _odd_text, _scalars)
_converse_role = st.sampled_from(["user", "assistant", None])
_gemini_role = st.sampled_from(["user", "model", None])


@st.composite
def _body(draw: st.DrawFn, path: str) -> bytes:
    kind = draw(_body_kind)
    if kind == "bytes":
        return draw(_any_bytes)
    if kind == "deep":
        depth = draw(_depth)
        return b"[" * depth + b"]" * depth
    if kind == "json":
        return _dumps(draw(_json)).encode("utf-8", "surrogatepass")
    content = draw(_any_content)
    model = draw(_model)
    if path.endswith("/responses"):
        body: dict[str, Any] = {"model": model, "input": content}
    elif "/converse" in path:
        role = draw(_converse_role)
        body = {"messages": [{"role": role, "content": [{"text": content}]}]}
    elif "/invoke" in path:
        body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64}
        body["messages"] = [{"role": "user", "content": content}]
    elif "/models/" in path:
        body = {"contents": [{"role": draw(_gemini_role), "parts": [{"text": content}]}]}
    else:
        body = {"model": model, "messages": [{"role": "user", "content": content}]}
        if path.endswith("/messages"):
            body["max_tokens"] = 64
    if draw(st.booleans()):
        body["stream"] = True
    raw = _dumps(body)
    if draw(st.booleans()):  # as raw bytes: lone surrogates as their (invalid) UTF-8 encoding
        return raw.encode().decode("unicode_escape", "replace").encode("utf-8", "surrogatepass")
    return raw.encode()


# Any header a client may send, but those that frame the message (the connection's business).
_FRAMING = {"content-length", "transfer-encoding", "host", "connection", "expect", "upgrade", "te", "trailer"}
_NAME_TAIL = st.text(alphabet=string.ascii_lowercase + string.digits + "-", max_size=20)
_header_name = st.one_of(
    st.sampled_from(
        [
            "x-stainless-retry-count",
            "content-type",
            "authorization",
            "x-api-key",
            "anthropic-version",
            "anthropic-beta",
            "openai-beta",
            "idempotency-key",
            "accept",
        ]
    ),
    # The names of ``[a-z][a-z0-9-]{0,20}``, drawn as two choices rather than one a character
    # (``from_regex`` drew each, and was about a third of drawing a request).
    st.builds(operator.add, st.sampled_from(string.ascii_lowercase), _NAME_TAIL).filter(
        lambda name: name not in _FRAMING
    ),
)
# Printable ASCII and Latin-1 (obs-text): what HTTP lets a header value carry.
_header_value = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=255, exclude_categories=["Cc"]), max_size=40),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["-1", "1e999", "NaN", " 3 ", "application/json"]),
)
_path = st.sampled_from(PATHS)
_headers = st.dictionaries(_header_name, _header_value, max_size=4)
_bodies = {path: _body(path) for path in PATHS}


@st.composite
def fuzz_request(draw: st.DrawFn) -> tuple[str, dict[str, str], bytes]:
    """(path, headers, body) of one hostile request."""
    path = draw(_path)
    headers = draw(_headers)
    return path, headers, draw(_bodies[path])


# The pieces, for fuzzing other JSON doors (the chain service's REST body).
odd_numbers = _odd_numbers
odd_text = _odd_text
json_values = _json
hostile_dumps = _dumps


def is_scripted_fault(headers: list[tuple[str, str]], body: bytes) -> bool:
    """Whether a 5xx reply is one an instruction's ``error`` scripted (it carries the
    instruction header), not a failure of the mock (which says "bug in mockllm")."""
    names = {name.lower() for name, _ in headers}
    return "x-mockllm-instruction" in names and b"bug in mockllm" not in body
