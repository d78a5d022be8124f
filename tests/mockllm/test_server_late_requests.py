"""The server keeps a model call to a deleted session: a late request, its test had ended."""

from __future__ import annotations

import httpx

from harness.plugin.fixtures import MockLLMServer


def test_a_model_call_to_a_deleted_session_is_refused_and_kept(mock_server_url: str) -> None:
    ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with MockLLMServer(mock_server_url).session() as session:
        gone = session.base_url
    session_id = gone.rsplit("/", 1)[-1]
    with httpx.Client() as http:
        refused = http.post(f"{gone}/v1/chat/completions", json=ask)
        never_given = http.post(f"{mock_server_url}/_mockllm/sessions/s999999/v1/chat/completions", json=ask)
        journal_read = http.get(f"{gone}/_mockllm/requests")  # tooling, not the app: not late
        late = http.get(f"{mock_server_url}/_mockllm/late").json()
    message = refused.json()["error"]["message"]
    assert refused.status_code == 404 and "its test had ended" in message and "POST /v1/chat/completions" in message
    assert never_given.status_code == 404 and journal_read.status_code == 404
    mine = [(r["session"], r["method"], r["path"]) for r in late if r["session"] in (session_id, "s999999")]
    assert mine == [(session_id, "POST", "/v1/chat/completions")]
