"""A request the app makes after its test ended fails the run, naming that test.

An app that starts a thread (or a task, or a pool job) calling the model and returns
before it finishes passed: the fixture's teardown checked the mock, and the request came
after. Through ``mockllm_server`` it got a 404 that nobody failed on; through the
in-process ``mockllm`` it got a reply nobody checked (a fallback, a step used too late).
The late request is released by the next test (or by a test without the mock), so the
inner runs need no sleep to be late.
"""

from __future__ import annotations

import pytest

APP = """
import threading

from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "Hi."}}]}]).tagged("hi")
PENDING = []


def fire_and_forget(client):
    # The app's background job: it waits for a go, as a slow model call would.
    go = threading.Event()
    answers = []

    def job():
        go.wait()
        try:
            answers.append(ask(client, "unscripted"))
        except Exception as exc:  # the app swallows it, as background jobs often do
            answers.append(exc)
        finally:
            client.close()

    thread = threading.Thread(target=job)
    thread.start()
    PENDING.append((thread, go))
    return answers


def release():
    thread, go = PENDING.pop()
    go.set()
    thread.join()
"""

# How the app (and its tests) talk to the model: on the official openai SDK...
ON_OPENAI = """
import openai


def app_client(mock):
    # The app's own client, given the mock's URL.
    return openai.OpenAI(api_key="k", base_url=mock.openai_base_url, max_retries=0)


def fixture_client(mock, **options):
    return mock.openai(**options)


def ask(client, content):
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": content}])
    return reply.choices[0].message.content


async def ask_async(client, content):
    reply = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": content}])
    return reply.choices[0].message.content
"""

# ...or on plain httpx, the same requests to the same route.
ON_HTTPX = """
import httpx


def app_client(mock):
    # The app's own client, given the mock's URL.
    return httpx.Client(base_url=mock.base_url)


def fixture_client(mock, **options):
    return mock.httpx_client(**options)


def body(content):
    return {"model": "m", "messages": [{"role": "user", "content": content}]}


def ask(client, content):
    reply = client.post("/v1/chat/completions", json=body(content))
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]


async def ask_async(client, content):
    reply = await client.post("/v1/chat/completions", json=body(content))
    reply.raise_for_status()
    return reply.json()["choices"][0]["message"]["content"]
"""

SERVER_LATE = """
from app import PROMPT, app_client, ask, fire_and_forget, fixture_client, release


def test_returns_before_its_job_ends(mockllm_server):
    fire_and_forget(app_client(mockllm_server))


def test_next(mockllm_server):
    release()
    assert ask(fixture_client(mockllm_server), PROMPT) == "Hi."
"""

IN_PROCESS_LATE = """
from app import PROMPT, ask, fire_and_forget, fixture_client, release


def test_returns_before_its_job_ends(mockllm):
    fire_and_forget(fixture_client(mockllm))


def test_next(mockllm):
    release()
    assert ask(fixture_client(mockllm), PROMPT) == "Hi."
"""

AT_SESSION_END = """
from app import app_client, fire_and_forget, fixture_client, release


def test_returns_before_its_job_ends({fixture}):
    {client}
    fire_and_forget(client)


def test_without_the_mock():
    release()
"""

CORRECT_APP = """
import asyncio
import concurrent.futures
import threading

import pytest

from app import PROMPT, app_client, ask, ask_async, fixture_client


@pytest.mark.parametrize("i", range(3))
def test_joins_its_thread(mockllm_server, i):
    client = app_client(mockllm_server)
    thread = threading.Thread(target=ask, args=(client, PROMPT))
    thread.start()
    thread.join()
    client.close()


def test_waits_for_its_pool(mockllm):
    with concurrent.futures.ThreadPoolExecutor() as pool:
        assert pool.submit(ask, fixture_client(mockllm), PROMPT).result() == "Hi."


def test_awaits_its_task(mockllm_server):
    client = fixture_client(mockllm_server, is_async=True)

    async def main():
        task = asyncio.create_task(ask_async(client, PROMPT))
        return await task

    assert asyncio.run(main()) == "Hi."


def test_keeps_its_connection_open_past_the_test(mockllm_server):
    # A kept-alive connection of the app's own client, closed after teardown: no request.
    client = app_client(mockllm_server)
    assert ask(client, PROMPT) == "Hi."
    KEPT.append(client)


def test_closes_it_later(mockllm):
    KEPT.pop().close()


KEPT = []
"""


def late_message(text: str) -> None:
    assert "test_returns_before_its_job_ends" in text, text
    assert "POST /v1/chat/completions" in text, text
    assert "after the test ended" in text, text
    assert "join the thread" in text, text


def test_a_late_request_to_the_server_fails_the_run_naming_its_test(
    strict_pytester: pytest.Pytester, shared_server_conftest: str
) -> None:
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(app=APP + ON_OPENAI, test_app=SERVER_LATE)
    result = strict_pytester.runpytest()
    assert result.ret != 0
    result.assert_outcomes(passed=2, errors=1)
    late_message(result.stdout.str())


def test_a_late_request_to_the_in_process_mock_fails_the_run_naming_its_test(
    strict_pytester: pytest.Pytester,
) -> None:
    strict_pytester.makepyfile(app=APP + ON_OPENAI, test_app=IN_PROCESS_LATE)
    result = strict_pytester.runpytest()
    assert result.ret != 0
    result.assert_outcomes(passed=2, errors=1)
    late_message(result.stdout.str())


@pytest.mark.parametrize(
    ("fixture", "client"),
    [
        ("mockllm", "client = fixture_client(mockllm)"),
        ("mockllm_server", "client = fixture_client(mockllm_server)"),
        (
            "mockllm, monkeypatch",
            "import openai\n\n    mockllm.patch_env(monkeypatch)\n    client = openai.OpenAI(max_retries=0)",
        ),
        ("mockllm_server", "client = app_client(mockllm_server)"),
    ],
    ids=["in-process", "server-fixture-client", "in-process-patch-env", "server-app-client"],
)
def test_a_late_request_after_the_last_test_using_the_mock_fails_the_session(
    strict_pytester: pytest.Pytester, shared_server_conftest: str, fixture: str, client: str
) -> None:
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(app=APP + ON_OPENAI, test_app=AT_SESSION_END.format(fixture=fixture, client=client))
    result = strict_pytester.runpytest()
    assert result.ret != 0
    result.assert_outcomes(passed=2, errors=1)
    late_message(result.stdout.str())


def test_a_correct_app_stays_green(strict_pytester: pytest.Pytester, shared_server_conftest: str) -> None:
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(app=APP + ON_OPENAI, test_app=CORRECT_APP)
    result = strict_pytester.runpytest()
    result.assert_outcomes(passed=7)
    assert result.ret == 0


def test_under_xdist_a_late_request_fails_the_run_and_a_shared_server_raises_no_false_alarm(
    strict_pytester: pytest.Pytester, shared_server_conftest: str
) -> None:
    # Both workers' tests open sessions on one server; each worker hears only of its own.
    # The app is on httpx here: each worker is a process of its own, and the openai SDK's
    # import would cost each about a second of CPU; the tests above play it on openai.
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(app=APP + ON_HTTPX, test_server=SERVER_LATE, test_in_process=IN_PROCESS_LATE)
    last = "client = app_client(mockllm_server)"
    strict_pytester.makepyfile(
        test_correct=CORRECT_APP, test_last=AT_SESSION_END.format(fixture="mockllm_server", client=last)
    )
    result = strict_pytester.runpytest("-n", "2", "--dist", "loadfile")
    assert result.ret != 0
    result.assert_outcomes(passed=13, errors=3)
    out = result.stdout.str()
    assert "test_last.py::test_returns_before_its_job_ends: 1 request(s) reached its mock" in out, out
    assert "test_server.py::test_returns_before_its_job_ends: 1 request(s) reached its mock" in out, out
    assert "test_in_process.py::test_returns_before_its_job_ends: 1 request(s) reached its mock" in out, out
    assert "test_correct.py" not in out.split("short test summary info")[-1], out
