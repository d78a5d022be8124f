"""``mockllm_server`` is scoped to the test: its journal, scripts, marker and checks."""

from __future__ import annotations

import pytest


def test_each_test_sees_only_its_own_requests_and_settings(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(
        test_inner="""
        import pytest

        ASK = {"model": "m", "messages": [{"role": "user", "content": "Question: hi"}]}
        WORDS = {}

        def words(server):
            server.script([{"messages": [{"text_message": {"length": 8}}]}])
            return server.httpx_client().post("/v1/chat/completions", json=ASK).json()

        @pytest.mark.mockllm(seed=1)
        def test_a(mockllm_server):
            WORDS["a"] = words(mockllm_server)
            assert len(mockllm_server.journal) == 1

        @pytest.mark.mockllm(seed=2)
        def test_b(mockllm_server):
            assert mockllm_server.journal == [] and mockllm_server.scripts() == []
            assert words(mockllm_server) != WORDS["a"]

        @pytest.mark.mockllm(seed=1)
        def test_c(mockllm_server):
            assert words(mockllm_server) == WORDS["a"]

        def test_strict(mockllm_server):
            mockllm_server.openai().chat.completions.create(**ASK)

        def test_unused_script(mockllm_server):
            mockllm_server.script([{"id": "never", "messages": [{"text_message": {"text": "x"}}]}],
                                  match="nothing asks this")
    """
    )
    result = strict_pytester.runpytest()
    result.assert_outcomes(passed=5, errors=2)
    out = result.stdout.str()
    assert "UnscriptedRequestsError: 1 request(s) to the mock got the fallback reply:" in out
    assert "No registered script matched them" not in out
    result.stdout.fnmatch_lines(
        [
            "E*harness.plugin.strict.UnusedStepsError: 1 scripted instruction step(s) were never used:",
            "E*  - chain * step 0 ?'never'? of script-1",
        ]
    )


def test_the_fallback_lists_the_registered_scripts_as_candidates(strict_pytester: pytest.Pytester) -> None:
    strict_pytester.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.mockllm(allow_unused_steps=True)
        def test_misses(mockllm):
            mockllm.script([{"id": "w", "messages": [{"text_message": {"text": "x"}}]}], match="weather")
            mockllm.openai().chat.completions.create(
                model="m", messages=[{"role": "user", "content": "Question: stocks?"}])
    """
    )
    result = strict_pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "E*No registered script matched them, amongst:",
            "E*- script script-1 (match text='weather'): chain * of 1 step(s) ?'w'?",
        ]
    )
