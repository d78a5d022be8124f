"""The registry of wire codecs: request path -> codec and protocol name -> codec.

Each codec says which paths it serves (``WireCodec.matches``): by suffix for most, so a
base URL with any prefix (``/v1``, ``/api/v1``) works; by pattern where the path carries
the model (Gemini, Bedrock, Azure deployments).
Adding a protocol is adding its codec to ``CODECS``; nothing else names protocols.
"""

from __future__ import annotations

from functools import lru_cache

from mockllm._exceptions import UnknownProtocol
from mockllm._wire.anthropic_messages import anthropic_messages
from mockllm._wire.azure_openai import azure_openai
from mockllm._wire.base import WireCodec
from mockllm._wire.bedrock import bedrock_converse
from mockllm._wire.bedrock_invoke import bedrock_invoke
from mockllm._wire.gemini import gemini
from mockllm._wire.ollama import ollama
from mockllm._wire.openai_chat import openai_chat
from mockllm._wire.openai_responses import openai_responses

__all__ = ["CODECS", "PROTOCOLS", "codec_for_path", "codec_named"]

CODECS: tuple[WireCodec, ...] = (
    openai_chat,
    anthropic_messages,
    openai_responses,
    gemini,
    azure_openai,
    ollama,
    bedrock_converse,
    bedrock_invoke,
)
PROTOCOLS: tuple[str, ...] = tuple(codec.name for codec in CODECS)

_BY_NAME: dict[str, WireCodec] = {name: codec for codec in CODECS for name in (codec.name, *codec.aliases)}


# Codecs whose routes are path patterns first: an Azure deployment's path also ends
# with ``/chat/completions``.
_MATCH_ORDER: tuple[WireCodec, ...] = (
    bedrock_converse,
    bedrock_invoke,
    gemini,
    azure_openai,
    openai_chat,
    anthropic_messages,
    openai_responses,
    ollama,
)


@lru_cache(maxsize=1024)
def codec_for_path(path: str) -> WireCodec | None:
    """The codec serving ``path``, or None (a server asks for the same few paths: the
    eight codecs' patterns are tried once a path)."""
    path = path.rstrip("/")
    for codec in _MATCH_ORDER:
        if codec.matches(path):
            return codec
    return None


def codec_named(protocol: str) -> WireCodec:
    """The codec of ``protocol`` (a name in ``PROTOCOLS`` or a codec's alias)."""
    try:
        return _BY_NAME[protocol]
    except (KeyError, TypeError):
        raise UnknownProtocol(f"unknown protocol {protocol!r}; use one of {list(PROTOCOLS)}") from None
