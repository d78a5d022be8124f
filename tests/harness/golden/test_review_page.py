"""python -m harness review: the goldens that differ from git HEAD as one static page,
checked in headless Chromium (Debian's /usr/bin/chromium; skipped without it unless
HARNESS_REQUIRE_BROWSER=1). Screenshots go to test-artifacts/."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from harness.cli import main
from tests.harness.browser_support import ARTIFACTS, PNG_SIGNATURE, tab_reaching_only

ROOT = Path(__file__).resolve().parents[3]
TOOL_USE = (ROOT / "golden" / "scenarios" / "tool_use.golden").read_text()
SIMPLE = (ROOT / "golden" / "scenarios" / "simple_message.golden").read_text()


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True, capture_output=True
    )


@pytest.fixture
def review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A repository whose goldens changed since HEAD: one edited, one new, one deleted."""
    folder = tmp_path / "golden" / "scenarios"
    folder.mkdir(parents=True)
    (folder / "tool_use.golden").write_text(TOOL_USE)
    (folder / "simple_message.golden").write_text(SIMPLE)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "goldens")
    (folder / "tool_use.golden").write_text(
        TOOL_USE.replace('content="I found the entities."', 'content="I found three entities."')
    )
    (folder / "simple_message.golden").unlink()
    (folder / "hello.golden").write_text(SIMPLE.replace("simple_message", "hello"))
    monkeypatch.chdir(tmp_path)
    assert main(["review", "--static", "--output", "review.html"]) == 0
    assert capsys.readouterr().out == "harness review: 3 goldens differ from git HEAD; wrote review.html\n"
    return tmp_path / "review.html"


def test_the_page_is_static_and_lists_every_changed_golden(review: Path) -> None:
    page = review.read_text()
    assert "<script" not in page and "http://" not in page and "https://" not in page
    for path, status in (
        ("golden/scenarios/hello.golden", "new"),
        ("golden/scenarios/simple_message.golden", "deleted"),
        ("golden/scenarios/tool_use.golden", "changed"),
    ):
        assert f'data-path="{path}" data-status="{status}"' in page


def test_nothing_to_review_and_outside_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "golden").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["review"]) == 2
    assert "harness review: " in capsys.readouterr().err
    git(tmp_path, "init", "-q")
    assert main(["review"]) == 2
    assert "has no commit yet: commit the goldens" in capsys.readouterr().err
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "start")
    assert main(["review", "--static", "pages"]) == 0
    assert capsys.readouterr().out.endswith("wrote pages/golden-review.html\n")
    assert "No golden differs from git HEAD." in (tmp_path / "pages" / "golden-review.html").read_text()
    assert main(["review"]) == 0
    assert capsys.readouterr().out == "harness review: No golden differs from git HEAD; nothing to review.\n"


def test_the_static_page_goes_outside_the_repository_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "golden").mkdir()
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "start")
    (tmp_path / "golden" / "one.golden").write_text(SIMPLE)
    monkeypatch.chdir(tmp_path)
    assert main(["review", "--static"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("harness review: 1 golden differs from git HEAD; wrote ")
    written = Path(out.rsplit("wrote ", 1)[1].strip())
    assert written.exists() and not written.resolve().is_relative_to(tmp_path.resolve())
    assert 'data-path="golden/one.golden" data-status="new"' in written.read_text()


@pytest.fixture
def page(shared_tab: Page) -> Iterator[Page]:
    """The test process's shared tab (tests/harness/conftest.py); the page may load nothing but files."""
    with tab_reaching_only(shared_tab, {"width": 1400, "height": 900}, "file://") as page:
        yield page


def test_the_page_renders_a_known_diff_side_by_side(review: Path, page: Page) -> None:
    page.goto(review.as_uri())
    expect(page.locator("header p")).to_have_text("3 goldens differ from git HEAD.")
    section = page.locator("section[data-path='golden/scenarios/tool_use.golden']")
    expect(section.locator("h2 .status")).to_have_text("changed")

    # the folded chunks and the message: both rows changed, their changed field marked
    changed = section.locator("tr[data-state='changed']")
    expect(changed).to_have_count(2)
    expect(changed.locator("td.seq")).to_have_text(["*", "*", "4", "4"])
    expect(changed.locator("td.type.after")).to_have_text(["message_chunk ×4", "message"])
    expect(changed.locator("td.fields.before mark")).to_have_text(['content="I found the entities."'] * 2)
    expect(changed.locator("td.fields.after mark")).to_have_text(['content="I found three entities."'] * 2)
    expect(section.locator("tr[data-state='same']")).to_have_count(6)

    # persistence states and sequence numbers, both sides
    first = section.locator("tbody tr").first
    expect(first.locator("td.seq")).to_have_text(["0", "0"])
    expect(first.locator(".badge.persisted")).to_have_count(2)
    expect(section.locator("td.after .badge.transient")).to_have_count(3)

    # tool_use links to its tool_result and back
    to_result = section.locator("td.fields.after a.to-result")
    expect(to_result).to_have_text("→ tool_result (seq 3)")
    to_result.click()
    target = page.locator(":target")
    expect(target).to_have_text("3")
    expect(section.locator("td.fields.after a.to-use")).to_have_text("← tool_use (seq 2)")

    new = page.locator("section[data-status='new']")
    expect(new.locator("tr[data-state='added']")).to_have_count(4)
    deleted = page.locator("section[data-status='deleted']")
    expect(deleted.locator("tr[data-state='removed']")).to_have_count(4)

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "golden-review.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes().startswith(PNG_SIGNATURE)
