"""MCP context blocks: the chain's one format for structured context (seed 001, Phase 6).

A block wraps JSON (or plain text) in a tag that names what it is::

    <mcp:context type="resource" uri="am7://vector/citations/plan-1-2" ephemeral="true">
    {"schema": "urn:am7:vector:search-result", "query": "...", "results": [...]}
    </mcp:context>

RAG step output, the saved chain context (``plan.chainContextJson``) and the context an
LLM step is given are all written with ``McpContextBuilder`` and read back with
``parse_context``; ``filter_context`` is what a display uses to show a message without
its citations and reasoning traces.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CITATION_SCHEMA",
    "FilteredContext",
    "McpContextBlock",
    "McpContextBuilder",
    "ParsedContext",
    "filter_context",
    "parse_context",
]

CITATION_SCHEMA = "urn:am7:vector:search-result"
STEP_OUTPUT_SCHEMA = "urn:am7:chain:step-output"

_BLOCK = re.compile(r"<mcp:context\b([^>]*)>(.*?)</mcp:context>", re.S)
_ATTRIBUTE = re.compile(r'([\w:-]+)="([^"]*)"')


@dataclass(frozen=True)
class McpContextBlock:
    """One block: its ``type`` (``resource``, ``reasoning``…), ``uri``, body (parsed
    JSON when the body is JSON, else the text) and whether it is ``ephemeral``."""

    type: str
    data: Any
    uri: str | None = None
    ephemeral: bool = False

    @property
    def schema(self) -> str | None:
        return self.data.get("schema") if isinstance(self.data, dict) else None

    def render(self) -> str:
        attributes = f'type="{html.escape(self.type)}"'
        if self.uri is not None:
            attributes += f' uri="{html.escape(self.uri)}"'
        if self.ephemeral:
            attributes += ' ephemeral="true"'
        if isinstance(self.data, str):
            body = self.data.replace("</mcp:context", "<\\/mcp:context")
        else:
            # "</" is escaped so a value can never close the block early; JSON reads it back.
            body = json.dumps(self.data, ensure_ascii=False, default=str).replace("</", "<\\/")
        return f"<mcp:context {attributes}>\n{body}\n</mcp:context>"


class McpContextBuilder:
    """Collects blocks and renders them, one after the other."""

    def __init__(self) -> None:
        self.blocks: list[McpContextBlock] = []

    def add_resource(self, uri: str, schema: str, data: dict[str, Any], ephemeral: bool = False) -> McpContextBuilder:
        self.blocks.append(McpContextBlock("resource", {"schema": schema, **data}, uri, ephemeral))
        return self

    def add_reasoning(self, text: str) -> McpContextBuilder:
        self.blocks.append(McpContextBlock("reasoning", text, ephemeral=True))
        return self

    def build(self) -> str:
        return "\n".join(block.render() for block in self.blocks)


@dataclass(frozen=True)
class ParsedContext:
    """``content`` is the text outside the blocks; ``blocks`` are in document order."""

    content: str
    blocks: list[McpContextBlock]


def _parse_body(raw: str) -> Any:
    body = raw.strip()
    try:
        return json.loads(body)
    except ValueError:
        return body.replace("<\\/mcp:context", "</mcp:context")


def parse_context(text: str) -> ParsedContext:
    """Split ``text`` into its MCP context blocks and the rest. Never raises: a body
    that is not JSON is kept as text."""
    blocks: list[McpContextBlock] = []
    for match in _BLOCK.finditer(text):
        attributes = {k: html.unescape(v) for k, v in _ATTRIBUTE.findall(match.group(1))}
        blocks.append(
            McpContextBlock(
                attributes.get("type", "resource"),
                _parse_body(match.group(2)),
                attributes.get("uri"),
                attributes.get("ephemeral") == "true",
            )
        )
    content = re.sub(r"\n{3,}", "\n\n", _BLOCK.sub("", text)).strip()
    return ParsedContext(content, blocks)


@dataclass(frozen=True)
class FilteredContext:
    """What a display shows (``content``) and what it set aside, by kind."""

    content: str
    citations: list[McpContextBlock] = field(default_factory=list)
    reasoning: list[McpContextBlock] = field(default_factory=list)
    resources: list[McpContextBlock] = field(default_factory=list)


def filter_context(text: str, *, show_ephemeral: bool = False, show_reasoning: bool = False) -> FilteredContext:
    """``text`` as a user should read it: citation and other ephemeral blocks and
    reasoning traces are taken out (kept in the result's lists) unless asked for."""
    parsed = parse_context(text)
    citations = [b for b in parsed.blocks if b.schema == CITATION_SCHEMA]
    reasoning = [b for b in parsed.blocks if b.type == "reasoning"]
    resources = [b for b in parsed.blocks if b.type == "resource" and b.schema != CITATION_SCHEMA]
    shown = [
        b
        for b in parsed.blocks
        if (b.type == "reasoning" and show_reasoning) or (b.type != "reasoning" and show_ephemeral)
    ]
    content = parsed.content
    if shown:
        content = "\n".join([content, *(b.render() for b in shown)]).strip()
    return FilteredContext(content, citations, reasoning, resources)
