"""boto3 under the fixtures: a ``bedrock-runtime`` client nobody pointed at the mock is
refused before any connection (botocore sends through urllib3, which the httpx patches
never see), and ``mockllm_server.patch_env`` points the clients an app builds itself at
the mock. Real boto3 clients; no network: a proxy on a closed loopback port catches any
request the guard would let through."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("boto3", reason="boto3 is not installed (the test extra)")

GUARDED = """
import pytest
from mockllm import UnmockedRequestError

HOST = "bedrock-runtime.eu-west-1.amazonaws.com"

def converse():
    import boto3  # imported inside the test: after the fixture started
    from botocore.config import Config
    client = boto3.client("bedrock-runtime", region_name="eu-west-1", aws_access_key_id="AKIDEXAMPLE",
                          aws_secret_access_key="secret", config=Config(retries={"max_attempts": 1}))
    return client.converse(modelId="anthropic.claude-3-5-sonnet-20240620-v1:0",
                           messages=[{"role": "user", "content": [{"text": "Hi"}]}])

def test_first_import_in_process_fixture(mockllm):
    with pytest.raises(UnmockedRequestError) as refused:
        converse()
    message = str(refused.value)
    assert HOST in message and "mockllm_server.patch_env(monkeypatch)" in message
    assert "AWS_ENDPOINT_URL_BEDROCK_RUNTIME" in message

def test_botocore_already_loaded_server_fixture(mockllm_server):
    try:
        converse()
    except Exception:
        pass  # an app that swallows the error: the test still fails at teardown

@pytest.mark.mockllm(allow_real_providers=True)
def test_allowed(mockllm):
    with pytest.raises(Exception) as raised:
        converse()
    assert not isinstance(raised.value, UnmockedRequestError)  # the proxy refused it instead
"""

PATCHED = """
import boto3

def test_an_app_client_built_from_the_environment(mockllm_server, monkeypatch):
    mockllm_server.patch_env(monkeypatch)
    mockllm_server.script([{"messages": [{"text_message": {"text": "Sunny in Oslo."}}]}], match="Oslo")
    client = boto3.client("bedrock-runtime")  # what the app builds: no endpoint, region or keys
    reply = client.converse(modelId="anthropic.claude-3-5-sonnet-20240620-v1:0",
                            messages=[{"role": "user", "content": [{"text": "Weather in Oslo?"}]}])
    assert reply["output"]["message"]["content"] == [{"text": "Sunny in Oslo."}]
"""


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    """No AWS settings from this machine, and a dead proxy in place of the internet."""
    for name in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # the mock server is reached directly
    monkeypatch.delenv("no_proxy", raising=False)


@pytest.fixture
def botocore_unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """boto3 and botocore not imported yet, as in a fresh interpreter, whatever this session
    imported before: an in-process run then imports its own copy (which pytester forgets
    when the run ends, and this session gets its copy back)."""
    for name in list(sys.modules):
        if name.partition(".")[0] in ("boto3", "botocore", "s3transfer"):
            monkeypatch.delitem(sys.modules, name)


def test_a_bedrock_client_not_pointed_at_the_mock_is_refused(
    strict_pytester: pytest.Pytester, shared_server_conftest: str, offline: None, botocore_unloaded: None
) -> None:
    strict_pytester.makeconftest(shared_server_conftest)  # mockllm_server on this session's server
    strict_pytester.makepyfile(test_guarded=GUARDED)
    # botocore is first imported inside a test, while the guard is on (its import hook patches
    # it); in this process, which spares the start of a pytest process (about 1.4 s of CPU).
    assert "botocore.httpsession" not in sys.modules
    result = strict_pytester.runpytest_inprocess()
    # Refused even where the app swallowed the error: each fails at teardown, naming it.
    result.assert_outcomes(passed=3, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_first_import_in_process_fixture*",
            "*ERROR at teardown of test_botocore_already_loaded_server_fixture*",
            "*request(s) went to hosts the mock does not serve:",
            "*POST https://bedrock-runtime.eu-west-1.amazonaws.com/model/*/converse*",
        ]
    )


def test_patch_env_points_an_apps_own_boto3_client_at_the_mock(
    strict_pytester: pytest.Pytester, shared_server_conftest: str, offline: None
) -> None:
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(test_patched=PATCHED)
    strict_pytester.runpytest().assert_outcomes(passed=1)
