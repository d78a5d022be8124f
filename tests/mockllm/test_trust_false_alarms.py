"""A correct app's structured output is never called impossible.

The ``impossible_reply`` check holds a scripted reply to the request's schema; a schema
read wrongly fails a test whose app did nothing wrong. These are requests the providers'
own SDKs make, answered with what the provider could send.
"""

from __future__ import annotations

import json
from typing import Annotated

import pydantic
import pytest

from harness.plugin.fixtures import MockLLMFixture
from tests.mockllm.test_trust_impossible_replies import failure, gemini_client, mock, said

genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")

__all__ = ["mock"]  # the fixture, imported to be used here


class City(pydantic.BaseModel):
    name: str
    population: int | None = None


def test_a_gemini_null_where_the_schema_says_nullable_is_a_reply_gemini_gives(mock: MockLLMFixture) -> None:
    # google-genai sends Optional[int] as {"type": "INTEGER", "nullable": true}: null fits.
    config = genai.types.GenerateContentConfig(response_mime_type="application/json", response_schema=City)
    client = gemini_client(mock)
    reply = client.models.generate_content(
        model="g", contents=said('{"name": "Oslo", "population": null}'), config=config
    )
    assert reply.parsed == City(name="Oslo")
    schema = {
        "type": "OBJECT",
        "properties": {
            "kind": {"type": "STRING", "format": "enum", "enum": ["city"], "nullable": True},
            "nullable": {"type": "BOOLEAN"},  # a property of that name is a schema, not the keyword
        },
        "required": ["kind", "nullable"],
        "propertyOrdering": ["kind", "nullable"],
    }
    config = genai.types.GenerateContentConfig(response_mime_type="application/json", response_schema=schema)
    client.models.generate_content(
        model="g", contents=said(json.dumps({"kind": None, "nullable": True})), config=config
    )
    assert failure(mock) == ""
    client.models.generate_content(
        model="g", contents=said(json.dumps({"kind": None, "nullable": None})), config=config
    )
    assert "['nullable']: None is not of type 'boolean'" in failure(mock)


class Person(pydantic.BaseModel):
    name: str


@pytest.mark.parametrize("stream", [False, True])
def test_a_scripted_chat_refusal_reaches_the_apps_refusal_branch(mock: MockLLMFixture, stream: bool) -> None:
    # A refusal is exempt from the strict schema so that the app's refusal branch can be
    # tested: OpenAI sends its text as message.refusal, where parse() and LangChain look.
    refusal = said("I can't help with that.", stop_reason="refusal")
    messages = [{"role": "user", "content": refusal}]
    client = mock.openai()
    if stream:
        with client.chat.completions.stream(model="m", messages=messages, response_format=Person) as events:
            message = events.get_final_completion().choices[0].message
    else:
        message = client.chat.completions.parse(model="m", messages=messages, response_format=Person).choices[0].message
    assert (message.refusal, message.content, message.parsed) == ("I can't help with that.", None, None)
    assert failure(mock) == ""


class Tags(pydantic.BaseModel):
    tags: Annotated[list[str], pydantic.Field(max_length=2)]
    size: int | str


def test_a_gemini_schema_in_google_genais_snake_case_is_held_to(mock: MockLLMFixture) -> None:
    # google-genai sends any_of and max_items in snake_case; Gemini reads both spellings.
    config = genai.types.GenerateContentConfig(response_mime_type="application/json", response_schema=Tags)
    client = gemini_client(mock)
    client.models.generate_content(model="g", contents=said('{"tags": ["a", "b"], "size": "L"}'), config=config)
    assert failure(mock) == ""
    client.models.generate_content(model="g", contents=said('{"tags": ["a", "b", "c"], "size": 1}'), config=config)
    assert "['tags']: ['a', 'b', 'c'] is too long" in failure(mock)
    mock.mock.reset()
    client.models.generate_content(model="g", contents=said('{"tags": [], "size": [1]}'), config=config)
    assert "['size']: [1] is not valid under any of the given schemas" in failure(mock)
    mock.mock.reset()
    schema = {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": "1"}  # an int64 as protobuf JSON's string
    config = genai.types.GenerateContentConfig(response_mime_type="application/json", response_schema=schema)
    client.models.generate_content(model="g", contents=said('["a"]'), config=config)
    assert failure(mock) == ""
