"""The served review: accept / reject in headless Chromium writes exactly what was
accepted; the CLI serves on loopback behind a token and stops on "finish"."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from harness.golden.review.changes import GoldenChange
from harness.golden.review.decisions import open_decisions
from harness.golden.review.server import ReviewServer
from tests.harness.browser_support import tab_at, tab_reaching_only

ROOT = Path(__file__).resolve().parents[3]
TOOL_USE = (ROOT / "golden" / "scenarios" / "tool_use.golden").read_text()
SIMPLE = (ROOT / "golden" / "scenarios" / "simple_message.golden").read_text()
CHUNKS_BEFORE = '*    message_chunk ×4         transient    content="I found the entities." blockIndex=0'
MESSAGE_BEFORE = '4    message                  persisted    content="I found the entities."'


def _proposed(text: str) -> str:
    return text.replace('content="I found the entities."', 'content="I found three entities."')


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ReviewServer, Path, Path]]:
    """A review of two goldens as a pytest run reports them: the files hold the golden
    compared, the changes the text the run asserted."""
    tool_use, simple = tmp_path / "tool_use.golden", tmp_path / "simple.golden"
    tool_use.write_text(TOOL_USE)
    simple.write_text(SIMPLE)
    changes = [
        GoldenChange("golden/tool_use.golden", TOOL_USE, _proposed(TOOL_USE), tool_use),
        GoldenChange("golden/simple.golden", SIMPLE, SIMPLE.replace("success", "failed"), simple),
    ]
    server = ReviewServer(open_decisions(changes))
    server.start()
    try:
        yield server, tool_use, simple
    finally:
        server.stop()


@pytest.fixture
def page(shared_tab: Page) -> Iterator[Page]:
    """The test process's shared tab (tests/harness/conftest.py); the page may load nothing but the review server."""
    with tab_reaching_only(shared_tab, {"width": 1500, "height": 900}, "http://127.0.0.1:") as page:
        yield page


def test_reject_one_row_accept_another_writes_exactly_the_accepted_one(
    served: tuple[ReviewServer, Path, Path], page: Page
) -> None:
    server, tool_use, simple = served
    page.goto(server.url)
    expect(page.locator("header p").first).to_have_text("2 goldens differ.")
    section = page.locator("section[data-path='golden/tool_use.golden']")
    changed = section.locator("tr[data-state='changed']")
    expect(changed).to_have_count(2)

    changed.nth(0).locator("button.reject").click()
    expect(changed.nth(0)).to_have_attribute("data-decision", "reject")
    changed.nth(1).locator("button.accept").click()
    expect(changed.nth(1)).to_have_attribute("data-decision", "accept")
    expect(page.locator("#status")).to_have_text("golden/tool_use.golden: row-6 accepted; golden written.")

    written = tool_use.read_text()
    assert written == TOOL_USE.replace(MESSAGE_BEFORE, _proposed(MESSAGE_BEFORE))
    assert CHUNKS_BEFORE in written  # the rejected row kept its golden text
    assert simple.read_text() == SIMPLE  # nothing decided there: untouched

    # A whole golden at once; then finishing stops the server.
    other = page.locator("section[data-path='golden/simple.golden']")
    other.locator("h2 button.accept").click()
    expect(other.locator("h2")).to_have_attribute("data-decision", "accept")
    assert simple.read_text() == SIMPLE.replace("success", "failed")
    page.locator("#finish").click()
    expect(page.locator("#status")).to_have_text("Review finished: 4 changes decided. You can close this tab.")


def test_a_fallback_reply_cannot_be_accepted(tmp_path: Path, shared_tab: Page) -> None:
    golden = tmp_path / "g.golden"
    golden.write_text(SIMPLE)
    fallback = SIMPLE.replace('content="', 'content="mockllm fallback reply: turn index 1 is past the end. ', 1)
    server = ReviewServer(open_decisions([GoldenChange("g.golden", SIMPLE, fallback, golden)]))
    server.start()
    try:
        with tab_at(shared_tab, {"width": 1280, "height": 720}) as page:
            page.goto(server.url)
            row = page.locator("tr[data-state='changed']")
            expect(row.locator("button.accept")).to_be_disabled()
            expect(page.locator("h2 button.accept")).to_be_disabled()
            answer = httpx.post(server.url + "decide", json={"path": "g.golden", "key": "golden", "decision": "accept"})
            assert answer.status_code == 422
            assert "records the mock's fallback reply" in answer.json()["message"]
            assert golden.read_text() == SIMPLE
    finally:
        server.stop()


def test_the_token_guards_every_route(served: tuple[ReviewServer, Path, Path]) -> None:
    server, tool_use, _ = served
    wrong = server.url.replace(server.token, "not-the-token")
    assert httpx.get(wrong).status_code == 404
    assert httpx.post(wrong + "decide", json={"path": "golden/tool_use.golden", "key": "golden"}).status_code == 404
    assert tool_use.read_text() == TOOL_USE
    assert httpx.get(server.url).status_code == 200
    bad = httpx.post(
        server.url + "decide", json={"path": "golden/tool_use.golden", "key": "row-99", "decision": "accept"}
    )
    assert bad.status_code == 400 and "has no change 'row-99'" in bad.json()["message"]


def test_the_cli_serves_on_loopback_until_finished(tmp_path: Path) -> None:
    folder = tmp_path / "golden"
    folder.mkdir()
    run = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*run, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*run, "commit", "-q", "--allow-empty", "-m", "start"], cwd=tmp_path, check=True)
    (folder / "new.golden").write_text(SIMPLE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "review"], cwd=tmp_path, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "harness review: 1 golden differs from git HEAD; review them at\n"
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "/review/" in url
        reject = httpx.post(url + "decide", json={"path": "golden/new.golden", "key": "golden", "decision": "reject"})
        assert reject.status_code == 200
        assert not (folder / "new.golden").exists()  # a rejected new golden is not kept
        assert httpx.post(url + "finish").status_code == 200
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
