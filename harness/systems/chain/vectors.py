"""Vector search for RAG_QUERY steps: a ``VectorStore`` protocol and an embedded default.

``InMemoryVectorStore`` needs no model and no download: a text's embedding is a sparse
bag of its normalised words (hashed with BLAKE2b, so the same on every machine), and a
query's score against a chunk is their cosine. Results are ordered by score, then URI
and chunk, so a search is deterministic.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.systems.camel_case import camel_case_json
from harness.systems.chain.uris import Am7Uri

__all__ = ["InMemoryVectorStore", "VectorHit", "VectorStore", "embed"]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class VectorHit:
    """One matching chunk of a document."""

    uri: str
    content: str
    score: float
    chunk: int
    source_type: str

    @property
    def vector_reference_object_id(self) -> str | None:
        try:
            return Am7Uri.parse(self.uri).object_id
        except ValueError:
            return None

    def as_json(self) -> dict[str, Any]:
        return {**camel_case_json(self), "vectorReferenceObjectId": self.vector_reference_object_id}


class VectorStore(Protocol):
    """What a RAG_QUERY step searches. ``scope`` is a document URI to search within."""

    def search(
        self, query: str, limit: int, scope: str | None = None
    ) -> Sequence[VectorHit] | Awaitable[Sequence[VectorHit]]: ...

    def contains(self, uri: str) -> bool: ...


def _token(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def embed(text: str) -> dict[int, float]:
    """The deterministic sparse embedding of ``text`` (unit length; empty for no words)."""
    counts = Counter(
        int.from_bytes(hashlib.blake2b(_token(w).encode(), digest_size=6).digest(), "big") for w in _WORD.findall(text)
    )
    weights = {k: 1.0 + math.log(n) for k, n in counts.items()}
    norm = math.sqrt(sum(w * w for w in weights.values()))
    return {k: w / norm for k, w in weights.items()} if norm else {}


def _cosine(a: dict[int, float], b: dict[int, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(k, 0.0) for k, w in a.items())


@dataclass(frozen=True)
class _Chunk:
    uri: str
    index: int
    text: str
    source_type: str
    vector: dict[int, float]


class InMemoryVectorStore:
    """Documents split into chunks of about ``chunk_words`` words, at sentence ends."""

    def __init__(self, *, chunk_words: int = 60, min_score: float = 0.05) -> None:
        if chunk_words < 1:
            raise ValueError(f"chunk_words must be at least 1, got {chunk_words!r}")
        self.chunk_words = chunk_words
        self.min_score = min_score
        self._chunks: list[_Chunk] = []
        self._uris: set[str] = set()

    def add_document(self, uri: str, text: str, source_type: str | None = None) -> int:
        """Index ``text`` under ``uri`` (an ``am7://`` URI names its source type);
        returns the number of chunks."""
        if source_type is None:
            try:
                source_type = Am7Uri.parse(uri).type
            except ValueError:
                source_type = "text"
        chunks, current = [], []
        for sentence in _SENTENCE.split(text.strip()):
            current.append(sentence)
            if sum(len(s.split()) for s in current) >= self.chunk_words:
                chunks.append(" ".join(current))
                current = []
        if current:
            chunks.append(" ".join(current))
        for index, chunk in enumerate(chunks):
            self._chunks.append(_Chunk(uri, index, chunk, source_type, embed(chunk)))
        self._uris.add(uri)
        return len(chunks)

    def contains(self, uri: str) -> bool:
        return uri in self._uris

    def search(self, query: str, limit: int, scope: str | None = None) -> list[VectorHit]:
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit!r}")
        vector = embed(query)
        hits = []
        for chunk in self._chunks:
            if scope is not None and chunk.uri != scope:
                continue
            score = round(_cosine(vector, chunk.vector), 4)
            if score >= self.min_score:
                hits.append(VectorHit(chunk.uri, chunk.text, score, chunk.index, chunk.source_type))
        hits.sort(key=lambda h: (-h.score, h.uri, h.chunk))
        return hits[:limit]
