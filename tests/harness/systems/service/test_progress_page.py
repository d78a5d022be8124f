"""The progress page in headless Chromium, against the app served by uvicorn on
127.0.0.1: what a user sees while a chain runs (bar, spinner, icons, labels,
summaries) and after (the answer as an assistant message, citations and reasoning
filtered out); and the page's MCP context filter against the Python one.

Needs Debian's chromium at /usr/bin/chromium (never a downloaded browser). Without it
these tests skip, unless HARNESS_REQUIRE_BROWSER=1 (CI), where they fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Error, Locator, Page, ViewportSize, WebSocketRoute, expect

from harness.systems.chain import McpContextBuilder, filter_context
from harness.systems.chain.mcp_context import CITATION_SCHEMA
from tests.harness.browser_support import ARTIFACTS, PNG_SIGNATURE, tab_at
from tests.harness.systems.service.service_support import (
    ANSWER,
    ATLAS,
    REASONING,
    STALL,
    capital_chain,
    composed_answer,
    replies,
    stalling_chain,
    tool_chain,
)

VIEWPORT: ViewportSize = {"width": 900, "height": 1000}

if TYPE_CHECKING:
    from service_support import LiveServer, ServiceBench


@contextmanager
def without_errors(page: Page) -> Iterator[Page]:
    """``page``, failing the test if it logged an error meanwhile."""
    errors: list[str] = []

    def page_error(error: Error) -> None:
        errors.append(str(error))

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("pageerror", page_error)
    page.on("console", console)
    try:
        yield page
        assert errors == [], f"the page logged errors: {errors}"
    finally:
        page.remove_listener("pageerror", page_error)
        page.remove_listener("console", console)


@pytest.fixture
def page(shared_tab: Page) -> Iterator[Page]:
    """The test process's shared tab (tests/harness/conftest.py), each test opening its own
    server's page in it; left on about:blank, so this test's page and its WebSocket are
    gone before its server stops."""
    with tab_at(shared_tab, VIEWPORT) as tab, without_errors(tab):
        yield tab


@pytest.fixture
def own_page(browser: Browser) -> Iterator[Page]:
    """A tab of the test's own, for a test that routes the page's WebSocket (a route
    Playwright cannot take back)."""
    page = browser.new_page(viewport=VIEWPORT)
    try:
        with without_errors(page):
            yield page
    finally:
        page.close()


def open_page(page: Page, live: LiveServer, token: str = "tok-ada") -> None:
    page.goto(f"{live.base_url}/chain#token={token}")
    expect(page.locator("#send")).to_be_enabled()


def send(page: Page, request: dict[str, Any]) -> None:
    """Type the request into the form and send it, as a user would."""
    page.locator("#query").fill(request["planQuery"])
    page.locator("#chain-form details summary").click()
    page.locator("#steps-json").fill(json.dumps(request["steps"]) if request.get("steps") else "")
    page.locator("#max-steps").fill(str(request.get("maxSteps", 20)))
    page.locator("#chain-form details summary").click()
    page.locator("#send").click()


def step_row(scope: Page | Locator, number: int) -> Locator:
    return scope.locator(f"li[data-step='{number}']")


def expect_step(
    scope: Page | Locator, number: int, status: str, icon: str, label: str, summary: str | re.Pattern[str]
) -> None:
    row = step_row(scope, number)
    expect(row).to_have_attribute("data-status", status)
    expect(row.locator(".icon")).to_have_attribute("aria-label", icon)
    expect(row.locator(".label")).to_have_text(label)
    expect(row.locator(".summary")).to_have_text(summary)


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


def test_a_chain_shows_live_progress_then_the_filtered_answer(
    bench: ServiceBench, live: LiveServer, page: Page
) -> None:
    bench.lookup.hold()
    bench.compose.hold()
    open_page(page, live)
    assert page.url == f"{live.base_url}/chain"  # the token does not stay in the address bar
    send(page, capital_chain())
    expect(page.locator(".message.user .content")).to_have_text("What is the capital of France?")

    bench.lookup.wait_for_calls(1)
    progress, bar = page.locator("#progress"), page.locator("#progress-bar")
    expect(page.locator("#progress-text")).to_have_text("Step 1 of 5")
    expect(bar).to_have_js_property("value", 1)
    expect(bar).to_have_js_property("max", 5)
    expect(progress.locator(".spinner")).to_have_count(1)
    expect(step_row(progress, 1).locator(".spinner")).to_be_visible()
    expect_step(progress, 1, "EXECUTING", "running", "Tool", "look up facts")
    expect_step(progress, 2, "PENDING", "pending", "RAG", "search the atlas")
    expect_step(progress, 5, "PENDING", "pending", "Gate", "no secrets out")

    bench.lookup.release.set()
    bench.compose.wait_for_calls(1)
    expect(page.locator("#progress-text")).to_have_text("Step 4 of 5")
    expect(bar).to_have_js_property("value", 4)
    expect_step(progress, 1, "COMPLETED", "done", "Tool", "lookup returned facts about France: its capital is Paris")
    expect_step(progress, 2, "COMPLETED", "done", "RAG", "1 result(s) for 'capital of France'")
    expect_step(progress, 3, "COMPLETED", "done", "LLM", ANSWER)
    expect_step(progress, 4, "EXECUTING", "running", "Tool", "compose the reply")
    expect(step_row(progress, 4).locator(".spinner")).to_be_visible()
    expect(progress.locator(".spinner")).to_have_count(1)
    expect(step_row(progress, 1).locator(".icon")).to_have_text("✓")
    running = screenshot(page, "progress-page.png")
    assert running.read_bytes().startswith(PNG_SIGNATURE)

    bench.compose.release.set()
    answer = page.locator(".message.assistant")
    expect(answer).to_have_attribute("data-status", "completed")
    expect(progress).to_be_hidden()
    expect(answer.locator(".content")).to_have_text(f"Final answer: {ANSWER}")
    expect(answer.locator(".context-note")).to_have_text("2 citations · reasoning hidden")
    for hidden in ("mcp:context", CITATION_SCHEMA, REASONING):
        expect(answer).not_to_contain_text(hidden)
    answer.locator("details summary").click()
    expect(answer.locator("details summary")).to_have_text("5 steps (completed)")
    expect_step(answer, 4, "COMPLETED", "done", "Tool", "compose returned")  # the cut-off block is not shown
    expect_step(answer, 5, "COMPLETED", "done", "Gate", re.compile(r"^PERMIT by policy no-secrets: rule 1 "))
    assert screenshot(page, "progress-page-result.png").read_bytes().startswith(PNG_SIGNATURE)


def test_failed_gated_and_cancelled_chains_show_their_icons_and_say_why(
    bench: ServiceBench, live: LiveServer, page: Page
) -> None:
    open_page(page, live)
    answers = page.locator(".message.assistant")

    send(page, tool_chain("explode"))
    failed = answers.nth(0)
    expect(failed).to_have_attribute("data-status", "failed")
    expect(failed.locator(".content")).to_have_text(
        "The chain failed: step 1: tool 'explode' failed: RuntimeError: the archive is offline"
    )
    expect_step(
        failed, 1, "FAILED", "failed", "Tool", "step 1: tool 'explode' failed: RuntimeError: the archive is offline"
    )
    expect_step(failed, 2, "PENDING", "pending", "Gate", "no secrets out")

    send(page, tool_chain("leak"))
    gated = answers.nth(1)
    expect(gated).to_have_attribute("data-status", "gated")
    expect(gated.locator(".content")).to_have_text(
        "The chain was halted by a policy gate: halted: step 2 was gated by policy 'no-secrets'"
    )
    expect(step_row(gated, 2).locator(".icon")).to_have_text("⛔")
    expect_step(gated, 2, "GATED", "gated", "Gate", re.compile(r"^DENY by policy no-secrets: rule 1 "))

    bench.lookup.hold()
    send(page, tool_chain("lookup"))
    bench.lookup.wait_for_calls(1)
    expect(step_row(page.locator("#progress"), 1).locator(".spinner")).to_be_visible()
    page.locator("#cancel").click()
    cancelled = answers.nth(2)
    expect(cancelled).to_have_attribute("data-status", "cancelled")
    expect(cancelled.locator(".content")).to_have_text("The chain was cancelled.")
    expect_step(cancelled, 1, "SKIPPED", "skipped", "Tool", "cancelled while running")
    expect(page.locator("#progress")).to_be_hidden()


def test_steps_the_model_plans_and_inserts_appear_as_the_chain_runs(
    bench: ServiceBench, live: LiveServer, page: Page
) -> None:
    """A query without steps: the model plans one LLM step, whose routing inserts two
    TOOL steps after it (the page's onstepsInserted, for the plan and for the insertion)."""
    lookups = [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": topic}} for topic in ("France", "Paris")]
    query = replies(
        "What is the capital of France?",
        json.dumps({"steps": [{"stepType": "LLM", "inputs": {"prompt": "Answer."}}]}),
        ANSWER,
        json.dumps({"complete": False, "reason": "check the facts", "nextSteps": lookups}),
    )
    bench.lookup.hold()
    open_page(page, live)
    send(page, {"planQuery": query})
    bench.lookup.wait_for_calls(1)
    progress = page.locator("#progress")
    expect(page.locator("#progress-text")).to_have_text("Step 2 of 3")
    expect(page.locator("#progress-note")).to_have_text("2 step(s) inserted after step 1: check the facts")
    expect_step(progress, 1, "COMPLETED", "done", "LLM", ANSWER)
    expect_step(progress, 2, "EXECUTING", "running", "Tool", "inserted by the model")
    expect_step(progress, 3, "PENDING", "pending", "Step", "inserted by the model")
    expect(progress.locator(".spinner")).to_have_count(1)

    bench.lookup.release.set()
    answer = page.locator(".message.assistant")
    expect(answer).to_have_attribute("data-status", "completed")
    expect(answer.locator(".content")).to_have_text("facts about Paris: its capital is Paris")
    answer.locator("details summary").click()
    expect(answer.locator("details summary")).to_have_text("3 steps (completed)")
    expect_step(answer, 3, "COMPLETED", "done", "Tool", "lookup returned facts about Paris: its capital is Paris")


class HeldResults:
    """A proxy between the page and the service's WebSocket that holds the chainResult
    messages until ``release``: what the page shows after a chain's ending event and
    before its result can then be seen. (Its callbacks run on the test's thread, inside
    Playwright calls.)"""

    def __init__(self) -> None:
        self.route: WebSocketRoute | None = None
        self.held: list[str | bytes] = []
        self.holding = True

    def __call__(self, route: WebSocketRoute) -> None:
        self.route = route
        route.connect_to_server().on_message(self.from_server)

    def from_server(self, message: str | bytes) -> None:
        assert self.route is not None
        if self.holding and '"chainResult"' in str(message):
            self.held.append(message)
        else:
            self.route.send(message)

    def release(self) -> None:
        """Pass the held results on, and the next ones at once; ``hold`` to hold again."""
        assert self.route is not None
        self.holding = False
        for message in self.held:
            self.route.send(message)
        self.held.clear()

    def hold(self) -> None:
        self.holding = True


def test_a_chain_stopped_at_its_step_limit_or_stalled_says_how_it_ended(
    bench: ServiceBench, live: LiveServer, own_page: Page
) -> None:
    """The ending events (the page's onchainMaxSteps and onchainStalled) stop the
    progress view with the reason; the result then says it as the assistant's message."""
    page = own_page
    results = HeldResults()
    page.route_web_socket(re.compile(r"/chat/chain/ws$"), results)
    open_page(page, live)
    progress, answers = page.locator("#progress"), page.locator(".message.assistant")

    send(page, tool_chain("lookup", maxSteps=1))
    expect(page.locator("#progress-text")).to_have_text("Stopped at the step limit at step 1 of 2")
    expect(page.locator("#progress-note")).to_have_text("the chain stopped at 1 steps")
    expect(progress).to_be_visible()
    expect(progress.locator(".spinner")).to_have_count(0)
    expect(page.locator("#cancel")).to_be_hidden()
    expect_step(progress, 1, "COMPLETED", "done", "Tool", "lookup returned facts about lookup: its capital is Paris")
    expect_step(progress, 2, "PENDING", "pending", "Gate", "no secrets out")
    expect(answers).to_have_count(0)
    results.release()
    capped = answers.nth(0)
    expect(capped).to_have_attribute("data-status", "maxSteps")
    expect(capped.locator(".content")).to_have_text("The chain stopped at its step limit: the chain stopped at 1 steps")
    expect(progress).to_be_hidden()
    expect(page.locator("#status")).to_have_text("The chain ended: maxSteps.")

    results.hold()
    send(page, stalling_chain())
    expect(page.locator("#progress-text")).to_have_text("Stalled at step 2 of 3")
    expect(page.locator("#progress-note")).to_have_text(STALL)
    expect(progress.locator(".spinner")).to_have_count(0)
    expect_step(progress, 1, "COMPLETED", "done", "LLM", "Same answer.")
    expect_step(progress, 2, "COMPLETED", "done", "LLM", "Same answer.")
    expect_step(progress, 3, "PENDING", "pending", "Tool", "look up facts")
    expect(answers).to_have_count(1)
    results.release()
    stalled = answers.nth(1)
    expect(stalled).to_have_attribute("data-status", "stalled")
    expect(stalled.locator(".content")).to_have_text(f"The chain stalled: {STALL}")
    stalled.locator("details summary").click()
    expect(stalled.locator("details summary")).to_have_text("3 steps (stalled)")
    expect_step(stalled, 3, "PENDING", "pending", "Tool", "look up facts")
    expect(progress).to_be_hidden()
    expect(page.locator("#status")).to_have_text("The chain ended: stalled.")


def test_an_unknown_token_is_shown_as_an_error(live: LiveServer, page: Page) -> None:
    open_page(page, live, token="tok-nobody")
    send(page, tool_chain("lookup"))
    expect(page.locator("#status")).to_have_text("Error 401: unknown bearer token")
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator(".message.assistant")).to_have_count(0)


CONTEXT_SAMPLES = [
    composed_answer(ANSWER),
    "Plain text, no blocks at all.",
    McpContextBuilder()
    .add_resource(f"{ATLAS}#1", CITATION_SCHEMA, {"query": "q", "results": []}, ephemeral=True)
    .add_resource("am7://chain/p/context/x", "urn:am7:chain:step-output", {"name": "x", "value": "</b> & <i>"})
    .build()
    + "\n\n\n\nAfter the blocks.",
    'Before <mcp:context type="reasoning">not JSON: a < b</mcp:context> between '
    '<mcp:context type="resource" uri="am7://a/b/c?x=1&amp;y=&quot;2&quot;">{"schema": "other", "n": 1}'
    "</mcp:context> after",
    '<mcp:context type="resource">{"schema": "urn:am7:vector:search-result"}</mcp:context>',
]


def test_the_pages_filter_agrees_with_the_python_one(live: LiveServer, page: Page) -> None:
    open_page(page, live)
    seen = page.evaluate(
        """async (texts) => {
        const { filterContext } = await import("/chain/assets/mcp-context.js");
        return texts.map((text) => {
            const f = filterContext(text);
            return [f.content, f.citations.length, f.reasoning.length, f.resources.length,
                    f.resources.map((b) => b.uri ?? null)];
        });
    }""",
        CONTEXT_SAMPLES,
    )
    expected = []
    for text in CONTEXT_SAMPLES:
        f = filter_context(text)
        expected.append([f.content, len(f.citations), len(f.reasoning), len(f.resources), [b.uri for b in f.resources]])
    assert seen == expected
