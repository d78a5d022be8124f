"""Latency profiles: how long a simulated model takes to start and to go on streaming.

A profile draws the time to first token (TTFT) and each inter-token latency (ITL, the
wait before every later streamed event) from a distribution, seeded::

    {"ttft_ms": {"distribution": "lognormal", "mean": 400, "stddev": 120},
     "itl_ms": {"distribution": "normal", "mean": 25, "stddev": 5},
     "prefill_ms_per_token": 0.05, "load_factor": 2.0, "load_streams": 32, "seed": 7}

- ``ttft_ms`` / ``itl_ms``: a number (constant) or ``{distribution, mean, stddev}``
  with ``distribution`` one of ``constant``, ``normal`` (clipped at 0), ``lognormal``
  (``mean`` and ``stddev`` are the delay's own, not its logarithm's);
- ``tokens_per_second``: instead of ``itl_ms``, a constant pace: each event waits its
  words (``chunk_words``) divided by this rate;
- ``prefill_ms_per_token``: added to the first wait per prompt token;
- ``load_factor`` (at least 1) and ``load_streams``: every wait is multiplied by a
  factor growing linearly from 1 (one stream being delivered) to ``load_factor``
  (``load_streams`` streams or more), as llm-d's simulator's time-factor-under-load;
- ``seed``: with the request's own key (its response id, which the mock's seed, the
  chain and the turn decide, and its body) it fixes every draw: the same request gets the same
  schedule in any process, and the global RNG is never touched.

A file for ``serve --latency-profile`` holds one profile, or ``{"default": profile,
"models": {"model-name": profile}}``; a script's ``timing: {"profile": …}`` holds one.
A streamed reply waits before each event; a complete (non-streamed) reply waits once,
before it is sent, as long as its stream would have taken (``whole_reply_wait``).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mockllm._plan import Pacing, ReplyPlan

__all__ = [
    "Delay",
    "LatencyProfile",
    "LatencyProfiles",
    "SampledPacing",
    "StreamLoad",
    "load_latency_profiles",
    "paced_by_profile",
    "whole_reply_wait",
]

_Ms = Field(default=0, ge=0, allow_inf_nan=False)


class Delay(BaseModel):
    """One delay's distribution, in milliseconds."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    distribution: Literal["constant", "normal", "lognormal"] = "constant"
    mean: float = _Ms
    stddev: float = _Ms

    @model_validator(mode="before")
    @classmethod
    def _number_is_constant(cls, data: Any) -> Any:
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return {"distribution": "constant", "mean": data}
        return data

    def sampler(self, rng: random.Random) -> Iterator[float]:
        """Endless draws in seconds from ``rng``."""
        mean, stddev = self.mean / 1000, self.stddev / 1000
        if self.distribution == "constant" or stddev == 0 or mean == 0:
            while True:
                yield mean
        if self.distribution == "normal":
            while True:
                yield max(0.0, rng.gauss(mean, stddev))
        sigma = math.sqrt(math.log1p((stddev / mean) ** 2))
        mu = math.log(mean) - sigma * sigma / 2
        while True:
            yield rng.lognormvariate(mu, sigma)


class LatencyProfile(BaseModel):
    """How a simulated model paces a stream (see the module docstring for each field)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    ttft_ms: Delay = Delay.model_construct()  # not Delay(): that would build Delay at import
    itl_ms: Delay | None = None
    tokens_per_second: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    prefill_ms_per_token: float = _Ms
    load_factor: float = Field(default=1.0, ge=1, allow_inf_nan=False)
    load_streams: int = Field(default=64, ge=2)
    seed: int = 0

    @model_validator(mode="after")
    def _one_pace(self) -> LatencyProfile:
        if self.itl_ms is not None and self.tokens_per_second is not None:
            raise ValueError("give either 'itl_ms' or 'tokens_per_second', not both")
        return self

    def load_multiplier(self, running: int) -> float:
        """How much slower every wait is with ``running`` streams being delivered."""
        if running <= 1 or self.load_factor == 1:
            return 1.0
        share = min(1.0, (running - 1) / (self.load_streams - 1))
        return 1.0 + (self.load_factor - 1.0) * share

    def base_waits(self, key: str, *, prompt_tokens: int = 0, chunk_words: int = 1) -> Iterator[float]:
        """The unloaded waits in seconds, first the TTFT then one ITL per later event,
        for the request whose key is ``key``: a pure function of the profile and the key."""
        digest = hashlib.blake2b(repr((self.seed, key, "latency")).encode(), digest_size=8).digest()
        rng = random.Random(int.from_bytes(digest, "big"))
        ttft = self.ttft_ms.sampler(rng)
        yield next(ttft) + prompt_tokens * self.prefill_ms_per_token / 1000
        if self.itl_ms is not None:
            yield from self.itl_ms.sampler(rng)
        pace = chunk_words / self.tokens_per_second if self.tokens_per_second else 0.0
        while True:
            yield pace


@dataclass
class StreamLoad:
    """How many profile-paced streams are being delivered right now (one per mock and
    its sessions; the deliveries change it on the event loop or the caller's thread)."""

    running: int = 0


@dataclass(frozen=True)
class SampledPacing(Pacing):
    """A stream's pacing drawn from a ``LatencyProfile``: ``first_chunk_s`` and
    ``chunk_s`` are the unloaded TTFT and first ITL; ``delays()`` gives every wait."""

    profile: LatencyProfile = field(default_factory=LatencyProfile)
    key: str = ""
    prompt_tokens: int = 0
    chunk_words: int = 1
    cap_s: float = math.inf
    load: StreamLoad = field(default_factory=StreamLoad)

    def delays(self) -> Generator[float, None, None]:
        load = self.load
        load.running += 1
        try:
            waits = self.profile.base_waits(self.key, prompt_tokens=self.prompt_tokens, chunk_words=self.chunk_words)
            for wait in waits:
                yield min(self.cap_s, wait * self.profile.load_multiplier(load.running))
        finally:
            load.running -= 1


class LatencyProfiles(BaseModel):
    """A server's profiles: ``default`` for every model, ``models`` by model name."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    default: LatencyProfile | None = None
    models: dict[str, LatencyProfile] = {}

    def for_model(self, model: str | None) -> LatencyProfile | None:
        if model is not None and model in self.models:
            return self.models[model]
        return self.default


def _is_profiles_file(data: Any) -> bool:
    return isinstance(data, Mapping) and bool({"default", "models"} & set(data))


def load_latency_profiles(path: str | Path, *, option: str = "--latency-profile") -> LatencyProfiles:
    """The profiles in a YAML or JSON file; a ``ValueError`` naming ``option``, the file
    and the field for a missing file or a bad profile."""
    where = f"{option} {str(path)!r}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{where}: cannot read the file ({exc.strerror or exc}).") from exc
    import yaml  # only for a profile file: a bare server reads none

    try:
        data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ValueError(f"{where}: not valid {'JSON' if str(path).endswith('.json') else 'YAML'}: {exc}") from exc
    try:
        if _is_profiles_file(data):
            return LatencyProfiles.model_validate(data)
        return LatencyProfiles(default=LatencyProfile.model_validate(data))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'profile'}: {error['msg']}" for error in exc.errors()
        )
        raise ValueError(
            f"{where}: {problems}. A profile's fields: ttft_ms, itl_ms, tokens_per_second, "
            "prefill_ms_per_token, load_factor, load_streams, seed (docs/simulation.md)."
        ) from exc


def paced_by_profile(
    plan: ReplyPlan,
    scripted: LatencyProfile | None,
    profiles: LatencyProfiles | None,
    *,
    model: str | None,
    body: bytes,
    cap_s: float,
    load: StreamLoad,
) -> ReplyPlan:
    """``plan`` paced by the script's profile, else (when the script set no ``timing``
    of its own) by the server's profile for ``model``; unchanged when neither applies."""
    profile = scripted
    if profile is None:
        if plan.pacing is not None or profiles is None:
            return plan
        profile = profiles.for_model(model)
        if profile is None:
            return plan
    # The response id alone is the same for every unscripted request of a turn.
    key = plan.response_id + hashlib.blake2b(body, digest_size=8).hexdigest()
    waits = profile.base_waits(key, prompt_tokens=plan.usage.input_tokens, chunk_words=plan.chunk_words)
    first, then = next(waits), next(waits)
    pacing = SampledPacing(
        min(first, cap_s),
        min(then, cap_s),
        profile=profile,
        key=key,
        prompt_tokens=plan.usage.input_tokens,
        chunk_words=plan.chunk_words,
        cap_s=cap_s,
        load=load,
    )
    return replace(plan, pacing=pacing)


def whole_reply_wait(plan: ReplyPlan) -> float:
    """Seconds to wait before sending ``plan`` as one complete (non-streamed) reply: when a
    profile paces it, the TTFT (prefill included) and one ITL per chunk of ``chunk_words``
    output tokens (TTFT + ITL x tokens), each under the load of that moment, the total held
    to the delay cap; 0 when no profile paces it (a script's fixed ``first_chunk_ms`` and
    ``chunk_ms`` pace streams only)."""
    pacing = plan.pacing
    if not isinstance(pacing, SampledPacing):
        return 0.0
    chunks = -(-plan.usage.output_tokens // max(1, plan.chunk_words))
    waits = pacing.delays()
    try:
        total = sum(next(waits) for _ in range(1 + chunks))
    finally:
        waits.close()
    return min(total, pacing.cap_s)
