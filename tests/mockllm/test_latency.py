"""Latency profiles: seeded schedules, their distributions, per-model choice, the load
factor, scripts' ``timing: {profile: …}`` and the serve option's errors.

The distributions are checked on the schedules the mock's replies deliver
(``MockResponse.paced_chunks``), read without sleeping."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from mockllm import InstructionChain, MockLLM
from mockllm._cli import main
from mockllm._latency import LatencyProfile, LatencyProfiles, load_latency_profiles
from tests.mockllm.bulk_scripts import bulk_script

STREAMS = 1000
Z90 = statistics.NormalDist().inv_cdf(0.9)


def _body(prompt: str, *, model: str = "gpt-mock", instruction: dict[str, Any] | None = None) -> bytes:
    if instruction is not None:
        prompt = InstructionChain(instruction_chain=[instruction]).tagged(prompt)
    return json.dumps({"model": model, "stream": True, "messages": [{"role": "user", "content": prompt}]}).encode()


def _waits(mock: MockLLM, body: bytes) -> list[float]:
    reply = mock.handle("POST", "/v1/chat/completions", {}, body)
    assert reply.status == 200
    return [wait for wait, _ in reply.paced_chunks()]


def _profiles(**profile: Any) -> LatencyProfiles:
    return LatencyProfiles(default=LatencyProfile.model_validate(profile))


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another() -> None:
    profile = {"ttft_ms": {"distribution": "normal", "mean": 300, "stddev": 80}, "itl_ms": {"mean": 20}}
    first = _waits(MockLLM(latency=_profiles(**profile, seed=1)), _body("hello"))
    again = _waits(MockLLM(latency=_profiles(**profile, seed=1)), _body("hello"))
    other_seed = _waits(MockLLM(latency=_profiles(**profile, seed=2)), _body("hello"))
    other_request = _waits(MockLLM(latency=_profiles(**profile, seed=1)), _body("goodbye"))
    assert first == again
    assert first[0] != other_seed[0]
    assert first[0] != other_request[0]
    assert first[1:] == [0.02] * (len(first) - 1)


def _percentile90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


@pytest.mark.parametrize(
    ("distribution", "mean", "stddev"),
    [("normal", 400.0, 60.0), ("lognormal", 400.0, 200.0)],
)
def test_a_thousand_streams_follow_the_profile(distribution: str, mean: float, stddev: float) -> None:
    spec = {"distribution": distribution, "mean": mean, "stddev": stddev}
    mock = MockLLM(latency=_profiles(ttft_ms=spec, itl_ms={**spec, "mean": mean / 10, "stddev": stddev / 10}, seed=3))
    ttfts, itls = [], []
    for n in range(STREAMS):
        waits = _waits(mock, _body(bulk_script({"messages": [{"text_message": {"length": 4}}]}, prompt=f"request {n}")))
        ttfts.append(waits[0] * 1000)
        itls += [w * 1000 for w in waits[1:]]
    if distribution == "normal":
        expected_p90 = mean + Z90 * stddev
    else:
        sigma2 = math.log1p((stddev / mean) ** 2)
        expected_p90 = math.exp(math.log(mean) - sigma2 / 2 + Z90 * sigma2**0.5)
    for values, scale in ((ttfts, 1.0), (itls, 0.1)):
        assert statistics.fmean(values) == pytest.approx(mean * scale, rel=0.10)
        assert _percentile90(values) == pytest.approx(expected_p90 * scale, rel=0.10)


def test_prefill_cost_grows_the_first_wait_with_the_prompt() -> None:
    mock = MockLLM(latency=_profiles(ttft_ms=100, prefill_ms_per_token=1.0))
    short = _waits(mock, _body("hi"))[0]
    long = _waits(mock, _body("word " * 400))[0]
    more_tokens = _prompt_tokens(mock, "word " * 400) - _prompt_tokens(mock, "hi")
    assert short >= 0.1
    assert more_tokens > 300
    assert long - short == pytest.approx(more_tokens / 1000)  # 1 ms per prompt token


def _prompt_tokens(mock: MockLLM, prompt: str) -> int:
    body = json.loads(_body(prompt))
    body["stream"] = False
    reply = mock.handle("POST", "/v1/chat/completions", {}, json.dumps(body).encode())
    return int(json.loads(reply.body)["usage"]["prompt_tokens"])


def test_tokens_per_second_paces_each_event_by_its_words() -> None:
    mock = MockLLM(latency=_profiles(tokens_per_second=50))
    waits = _waits(mock, _body("x", instruction={"chunk_words": 5, "messages": [{"text_message": {"length": 20}}]}))
    assert waits[0] == 0
    assert set(waits[1:]) == {0.1}


def test_each_model_gets_its_own_profile_and_others_the_default() -> None:
    profiles = LatencyProfiles(
        default=LatencyProfile.model_validate({"ttft_ms": 100}),
        models={"slow-model": LatencyProfile.model_validate({"ttft_ms": 900})},
    )
    mock = MockLLM(latency=profiles)
    assert _waits(mock, _body("a", model="slow-model"))[0] == pytest.approx(0.9)
    assert _waits(mock, _body("a", model="gpt-mock"))[0] == pytest.approx(0.1)


def test_more_concurrent_streams_slow_every_wait_up_to_the_load_factor() -> None:
    mock = MockLLM(latency=_profiles(ttft_ms=100, itl_ms=10, load_factor=3, load_streams=5))
    body = _body("x", instruction={"messages": [{"text_message": {"length": 6}}]})
    alone = _waits(mock, body)
    streams = [mock.handle("POST", "/v1/chat/completions", {}, body).paced_chunks() for _ in range(5)]
    firsts = [next(stream)[0] for stream in streams]  # five streams being delivered at once
    assert alone[0] == pytest.approx(0.1)
    assert firsts[0] == pytest.approx(0.1)  # the first began alone
    assert firsts[-1] == pytest.approx(0.3)  # the fifth with five running: 3x
    assert next(streams[-1])[0] == pytest.approx(0.03)
    for stream in streams:
        stream.close()
    assert mock.stream_load.running == 0
    assert _waits(mock, body) == alone


def test_a_script_profile_paces_that_turn_over_the_server_default() -> None:
    mock = MockLLM(latency=_profiles(ttft_ms=100))
    scripted = {"timing": {"profile": {"ttft_ms": 250, "itl_ms": 5}}, "messages": [{"text_message": {"length": 3}}]}
    waits = _waits(mock, _body("x", instruction=scripted))
    assert waits[0] == pytest.approx(0.25)
    assert set(waits[1:]) == {0.005}
    plain = {"timing": {"first_chunk_ms": 40}, "messages": [{"text_message": {"length": 3}}]}
    assert _waits(mock, _body("x", instruction=plain))[0] == pytest.approx(0.04)  # its own timing wins
    assert _waits(MockLLM(), _body("x", instruction=scripted))[0] == pytest.approx(0.25)


def test_profile_delays_are_held_to_the_delay_cap() -> None:
    from mockllm import Limits

    mock = MockLLM(latency=_profiles(ttft_ms=5000, itl_ms=4000), limits=Limits(max_delay_ms=1000))
    waits = _waits(mock, _body("x"))
    assert max(waits) == pytest.approx(1.0)


def test_a_script_cannot_give_both_a_profile_and_fixed_delays() -> None:
    from mockllm import ScriptValidationError

    with pytest.raises(ScriptValidationError, match="either 'profile' or"):
        InstructionChain(
            instruction_chain=[
                {"timing": {"profile": {"ttft_ms": 5}, "chunk_ms": 3}, "messages": [{"text_message": {"length": 1}}]}
            ]
        )


def test_a_profile_file_in_yaml_or_json(tmp_path: Path) -> None:
    yaml_file = tmp_path / "p.yaml"
    yaml_file.write_text("default:\n  ttft_ms: {distribution: lognormal, mean: 300, stddev: 90}\nmodels:\n  m: {}\n")
    json_file = tmp_path / "p.json"
    json_file.write_text('{"ttft_ms": 12, "tokens_per_second": 40}')
    from_yaml = load_latency_profiles(yaml_file)
    assert from_yaml.default is not None and from_yaml.default.ttft_ms.distribution == "lognormal"
    assert set(from_yaml.models) == {"m"}
    from_json = load_latency_profiles(json_file)
    assert from_json.default is not None and from_json.default.tokens_per_second == 40


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"ttft_ms": -5}', "ttft_ms"),
        ('{"itl_ms": {"distribution": "gamma", "mean": 3}}', "itl_ms.distribution"),
        ('{"ttft_ms": {"mean": Infinity}}', "ttft_ms.mean"),
        ('{"load_factor": 0.5}', "load_factor"),
        ('{"ttft": 5}', "ttft"),
        ('{"default": {"ttft_ms": 1}, "models": {"m": {"itl_ms": -1}}}', "models.m.itl_ms"),
        ("{not json", "not valid JSON"),
    ],
)
def test_a_bad_profile_stops_serve_naming_the_option_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, says: str
) -> None:
    path = tmp_path / "profile.json"
    path.write_text(content)
    assert main(["serve", "--port", "0", "--latency-profile", str(path)]) == 2
    error = capsys.readouterr().err
    assert "--latency-profile" in error and str(path) in error and says in error, error
    assert "Traceback" not in error


def test_a_missing_profile_file_stops_serve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.yaml"
    assert main(["serve", "--port", "0", "--latency-profile", str(missing)]) == 2
    error = capsys.readouterr().err
    assert "--latency-profile" in error and "cannot read" in error and str(missing) in error
