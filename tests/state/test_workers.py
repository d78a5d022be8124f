"""``serve --workers 2``: two processes on one port, one SQLite state between them.
Connections are spread over both workers (``SO_REUSEPORT``), and whichever answers,
the mock is one: a script, a session, a Responses conversation and an attempt count
made through one worker hold on every other. SIGTERM stops them all; so does SIGINT."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from mockllm._cli import main
from mockllm._engine import MockLLM
from mockllm._state import open_state
from tests.mockllm.server_support import ServerProcess, SignalledAsAnnounced, launch, serve_signalled_as_announced

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

CHAT = "/v1/chat/completions"
CONNECTIONS = 24


def worker_pids(server: ServerProcess) -> list[int]:
    children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text().split()
    return [int(pid) for pid in children]


def established_on(pid: int, port: int) -> int:
    """How many established TCP connections to ``port`` process ``pid`` holds."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().as_posix()
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    count = 0
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "01" and int(fields[1].rpartition(":")[2], 16) == port and fields[9] in inodes:
            count += 1
    return count


@pytest.fixture(scope="module")
def shared_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One ``--workers 2`` server for the module's tests (a start costs three processes)."""
    server = launch(tmp_path_factory.mktemp("workers"), "--port", "0", "--workers", "2").wait_ready()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def workers(shared_workers: ServerProcess) -> ServerProcess:
    """The module's server, reset: each test starts on an empty journal and no scripts."""
    with httpx2.Client(timeout=30) as client:
        assert client.post(f"{shared_workers.base_url}/_mockllm/reset").status_code == 200
    return shared_workers


def chat_body(text: str) -> dict:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


def test_connections_spread_over_the_workers_and_all_serve_one_script(workers: ServerProcess) -> None:
    base = workers.base_url
    pids = worker_pids(workers)
    assert len(pids) == 2
    clients = [httpx2.Client(timeout=30) for _ in range(CONNECTIONS)]  # a connection each, kept open
    try:
        chain = {"instruction_chain": [{"id": "one", "messages": [{"text_message": {"text": "Everywhere."}}]}]}
        assert clients[0].post(f"{base}/_mockllm/scripts", json=chain).status_code == 201
        for client in clients:
            reply = client.post(f"{base}{CHAT}", json=chat_body("no tags here"))
            assert reply.json()["choices"][0]["message"]["content"] == "Everywhere."
        port = int(base.rpartition(":")[2])
        held = {pid: established_on(pid, port) for pid in pids}
        assert all(held.values()) and sum(held.values()) == CONNECTIONS, held
        entries = clients[-1].get(f"{base}/_mockllm/requests").json()
        assert [e["index"] for e in entries] == list(range(CONNECTIONS))
        assert clients[-2].get(f"{base}/_mockllm/findings").json()["counts"] == {}
    finally:
        for client in clients:
            client.close()


def test_sessions_conversations_and_attempts_hold_whichever_worker_answers(workers: ServerProcess) -> None:
    base = workers.base_url

    def fresh() -> httpx2.Client:  # a new connection: the kernel picks its worker
        return httpx2.Client(timeout=30)

    with fresh() as client:
        session = client.post(f"{base}/_mockllm/sessions", json={}).json()["path"]
        flaky = {
            "instruction_chain": [
                {"id": "flaky", "error": {"status": 503, "times": 2}, "messages": [{"text_message": {"text": "Up."}}]}
            ],
            "match": {"text": "hi"},
        }
        talk = {
            "instruction_chain": [
                {"id": "first", "messages": [{"text_message": {"text": "First turn."}}]},
                {"id": "next", "messages": [{"text_message": {"text": "Next turn."}}]},
            ],
            "match": {"text": "start"},
        }
        for chain in (flaky, talk):
            assert client.post(f"{base}{session}/_mockllm/scripts", json=chain).status_code == 201
    statuses = []
    for _ in range(3):
        with fresh() as client:
            statuses.append(client.post(f"{base}{session}{CHAT}", json=chat_body("hi")).status_code)
    assert statuses == [503, 503, 200]
    with fresh() as client:
        sdk = openai.OpenAI(api_key="t", base_url=f"{base}{session}/v1", http_client=client, max_retries=0)
        first = sdk.responses.create(model="gpt-4o", input="start")
    with fresh() as client:
        sdk = openai.OpenAI(api_key="t", base_url=f"{base}{session}/v1", http_client=client, max_retries=0)
        second = sdk.responses.create(model="gpt-4o", input="go on", previous_response_id=first.id)
    assert (first.output_text, second.output_text) == ("First turn.", "Next turn.")
    with fresh() as client:
        assert len(client.get(f"{base}{session}/_mockllm/requests").json()) == 5


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_every_worker(tmp_path: Path, sig: int) -> None:
    server = launch(tmp_path, "--port", "0", "--workers", "2").wait_ready()
    pids = worker_pids(server)
    assert server.stop(sig) == 0, server.errors
    assert "mockllm stopped" in server.output
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


@pytest.fixture(scope="module")
def workers_signalled_as_announced(tmp_path_factory: pytest.TempPathFactory) -> SignalledAsAnnounced:
    """One process serving with two workers twice, signalled the moment each is announced:
    SIGTERM, then SIGINT."""
    state = f"sqlite://{tmp_path_factory.mktemp('announced') / 'state.db'}"
    return serve_signalled_as_announced((signal.SIGTERM, signal.SIGINT), state=state, workers=2)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_the_moment_the_workers_are_announced_stops_them_cleanly(
    workers_signalled_as_announced: SignalledAsAnnounced, sig: signal.Signals
) -> None:
    # The supervisor printed the banner before installing its handlers: a signal sent on
    # reading it ended the supervisor (-15, or a KeyboardInterrupt traceback) instead.
    workers_signalled_as_announced.assert_stopped_cleanly(sig)


# The supervisor (mockllm._workers._supervise) over stand-in workers: forked children that
# sleep, one of them dying on its own, then two that ignore SIGTERM (the grace cut short).
_SUPERVISOR = """
import os, signal, sys, time
from mockllm import _workers

def sleeper():
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    return pid

def worker_dies():
    print("SIGALRM left alone:", signal.getsignal(signal.SIGALRM) is signal.SIG_DFL, flush=True)
    os.kill(first, signal.SIGKILL)

first, second = sleeper(), sleeper()
start = time.monotonic()
status = _workers._supervise([first, second], worker_dies)
print(status, time.monotonic() - start < 5, flush=True)

_workers.STOP_GRACE_S = 0.3
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited: ignored from the fork on
stubborn = [sleeper(), sleeper()]
signal.signal(signal.SIGTERM, signal.SIG_DFL)
start = time.monotonic()
status = _workers._supervise(stubborn, lambda: os.kill(os.getpid(), signal.SIGTERM))
print(status, 0.3 <= time.monotonic() - start < 5, flush=True)
put_back = [signal.getsignal(sig) is signal.SIG_DFL for sig in (signal.SIGTERM, signal.SIGALRM)]
print(put_back, signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0))
"""


def test_a_worker_that_dies_stops_the_others_and_a_stop_kills_what_outlives_its_grace() -> None:
    # Before each exit was polled for every 50 ms; now the supervisor sleeps until a
    # worker exits or a signal comes, and the grace is a timer.
    done = subprocess.run([sys.executable, "-c", _SUPERVISOR], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["SIGALRM left alone: True", "1 True", "0 True", "[True, True] True"], (
        done.stderr
    )
    assert "exited on its own (signal 9); stopping the other workers." in done.stderr
    assert done.stderr.count("exited on its own") == 1


def test_a_corrupt_sqlite_file_is_a_startup_error_naming_the_option(tmp_path: Path) -> None:
    corrupt = tmp_path / "state.db"
    corrupt.write_bytes(b"this is not a database, just some bytes" * 100)
    server = launch(tmp_path, "--port", "0", "--workers", "2", "--state", f"sqlite://{corrupt}")
    assert server.proc.wait(timeout=30) == 2
    assert f"--state sqlite://{corrupt}" in server.errors and "Traceback" not in server.errors


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--state", "postgres://db"], "not a state the mock knows"),
        (["--workers", "2", "--state", "memory"], "share no memory"),
        (["--workers", "0"], "--workers must be at least 1"),
    ],
)
def test_a_wrong_state_option_is_a_startup_error(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # In process: a startup error's exit from a process is the corrupt SQLite file's test.
    assert main(["serve", "--port", "0", *args]) == 2
    assert said in capsys.readouterr().err


def test_a_sqlite_file_given_keeps_the_state_for_the_next_start(tmp_path: Path) -> None:
    path = tmp_path / "kept.db"
    chain = {"instruction_chain": [{"id": "kept", "messages": [{"text_message": {"text": "Still here."}}]}]}
    first = launch(tmp_path, "--port", "0", "--workers", "2", "--state", f"sqlite://{path}").wait_ready()
    try:
        with httpx2.Client(timeout=30) as client:
            assert client.post(f"{first.base_url}/_mockllm/scripts", json=chain).status_code == 201
    finally:
        assert first.stop() == 0
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM kv WHERE space='scripts'").fetchone() == (1,)
    # The next start, in process: the mock `serve --state sqlite://PATH` builds, on the
    # state that URL opens (a process's own start is the other tests').
    state = open_state(f"sqlite://{path}")
    try:
        reply = MockLLM(state=state).handle("POST", CHAT, {}, json.dumps(chat_body("anything")).encode())
        assert json.loads(reply.body)["choices"][0]["message"]["content"] == "Still here."
    finally:
        state.close()
