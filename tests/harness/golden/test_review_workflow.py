"""The review workflow without a browser: the terminal flow with scripted answers, the
Markdown and JSON reports (the Markdown against a fixture file), ``--from`` a report,
and ``pytest --mockllm-review-report`` at the end of a run whose goldens differ."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import main
from harness.golden.review.changes import GoldenChange
from harness.golden.review.decisions import open_decisions
from harness.golden.review.terminal import review_in_terminal

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).with_name("fixtures")
TOOL_USE = (ROOT / "golden" / "scenarios" / "tool_use.golden").read_text()
SIMPLE = (ROOT / "golden" / "scenarios" / "simple_message.golden").read_text()
NEW_TOOL_USE = TOOL_USE.replace('content="I found the entities."', 'content="I found three entities."')
CHUNKS = '*    message_chunk ×4         transient    content="I found the entities." blockIndex=0'


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True, capture_output=True
    )


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Goldens updated in the working tree (as --snapshot-update leaves them): one
    changed (two rows), one new."""
    folder = tmp_path / "golden" / "scenarios"
    folder.mkdir(parents=True)
    (folder / "tool_use.golden").write_text(TOOL_USE)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "goldens")
    (folder / "tool_use.golden").write_text(NEW_TOOL_USE)
    (folder / "hello.golden").write_text(SIMPLE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def answers(*replies: str) -> Iterator[str]:
    yield from replies


def test_the_terminal_asks_per_change_and_writes_the_decisions(repo: Path) -> None:
    from harness.golden.review.changes import changed_goldens

    reviews = open_decisions(changed_goldens("golden"))
    replies = answers("a", "maybe", "r", "a")  # hello: accept; tool_use: (retry) reject row 1, accept row 2
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(replies)

    out = io.StringIO()
    assert review_in_terminal(reviews, ask=ask, out=out, against=" from git HEAD") == 1
    text = out.getvalue()
    assert text.startswith("2 goldens differ from git HEAD.\n")
    assert "golden/scenarios/tool_use.golden (changed, 2 changes)\nchange 1 of 2 (changed):\n" in text
    assert "  answer a, r, s or q\n" in text
    assert prompts == ["[a]ccept, [r]eject, [s]kip, [q]uit? "] * 4
    # HEAD plus the one accepted row: the rejected one reverted in the working tree.
    tool_use = (repo / "golden" / "scenarios" / "tool_use.golden").read_text()
    assert CHUNKS in tool_use
    assert tool_use == TOOL_USE.replace(
        'content="I found the entities." messageId', 'content="I found three entities." messageId'
    )
    assert (repo / "golden" / "scenarios" / "hello.golden").read_text() == SIMPLE
    assert "golden/scenarios/tool_use.golden: 1 accepted, 1 rejected of 2 changes" in text
    assert text.endswith("1 golden written.\n")


def test_skip_and_quit_leave_the_files_as_they_are(repo: Path) -> None:
    from harness.golden.review.changes import changed_goldens

    reviews = open_decisions(changed_goldens("golden"))
    replies = answers("r", "s", "q")
    out = io.StringIO()
    review_in_terminal(reviews, ask=lambda prompt: next(replies), out=out)
    assert not (repo / "golden" / "scenarios" / "hello.golden").exists()  # rejected new golden: gone
    assert (repo / "golden" / "scenarios" / "tool_use.golden").read_text() == NEW_TOOL_USE  # skipped, quit
    assert out.getvalue().endswith("1 golden written.\n")


def test_the_terminal_refuses_a_fallback_reply(tmp_path: Path) -> None:
    file = tmp_path / "g.golden"
    file.write_text(SIMPLE)
    fallback = SIMPLE.replace('content="', 'content="mockllm fallback reply: no chain. ', 1)
    reviews = open_decisions([GoldenChange("g.golden", SIMPLE, fallback, file)])
    replies = answers("a", "r")
    out = io.StringIO()
    review_in_terminal(reviews, ask=lambda prompt: next(replies), out=out)
    assert "(records the mock's fallback reply: it cannot be accepted)" in out.getvalue()
    assert "g.golden: not accepted, the change records the mock's fallback reply" in out.getvalue()
    assert file.read_text() == SIMPLE


def test_the_markdown_report_matches_its_fixture(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "--format", "markdown"]) == 0
    assert capsys.readouterr().out == (FIXTURES / "review-report.md").read_text()


def test_the_json_report_replays_on_a_reviewers_machine(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "--format", "json", "--output", "report.json"]) == 0
    report = json.loads((repo / "report.json").read_text())
    assert report["summary"] == "2 goldens differ from git HEAD"
    assert [(g["path"], g["status"], len(g["changes"])) for g in report["goldens"]] == [
        ("golden/scenarios/hello.golden", "new", 1),
        ("golden/scenarios/tool_use.golden", "changed", 2),
    ]
    # The reviewer's checkout holds the goldens before the change.
    git(repo, "checkout", "-q", "--", "golden")
    (repo / "golden" / "scenarios" / "hello.golden").unlink()
    assert main(["review", "--from", "report.json", "--terminal"]) == 0  # stdin: no answer is a quit
    assert (repo / "golden" / "scenarios" / "tool_use.golden").read_text() == TOOL_USE
    assert main(["review", "--from", str(FIXTURES / "review-report.md")]) == 2
    assert "is not a JSON review report" in capsys.readouterr().err


def test_a_review_loads_neither_syrupy_nor_pytest(repo: Path) -> None:
    """``python -m harness review`` is a reviewer's command, not a test run: it reports the
    changed goldens without importing syrupy or pytest (0.3 s of CPU a start)."""
    probe = (
        "import json, sys\n"
        "from harness.cli import main\n"
        "status = main(['review', '--format', 'json', '--output', 'report.json'])\n"
        "print(status, sorted(name for name in ('syrupy', 'pytest', '_pytest') if name in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["0", "[]"]
    assert json.loads((repo / "report.json").read_text())["summary"] == "2 goldens differ from git HEAD"


def test_a_report_must_not_write_outside_its_root(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = {"format": "mockllm-golden-review", "goldens": [{"path": "../x.golden", "before": None, "after": "x\n"}]}
    (repo / "evil.json").write_text(json.dumps(report))
    assert main(["review", "--from", "evil.json", "--format", "json"]) == 2
    assert "is outside" in capsys.readouterr().err


GOLDEN_TEST = """
def test_flow(golden):
    assert [{"type": "message", "content": CONTENT}] == golden
"""


def test_pytest_writes_the_report_when_goldens_differ(strict_pytester: pytest.Pytester) -> None:
    pytester = strict_pytester
    pytester.makepyfile(test_flow="CONTENT = 'hello'\n" + GOLDEN_TEST)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    golden = pytester.path / "golden" / "test_flow" / "test_flow.golden"
    before = golden.read_text()
    result = pytester.runpytest("--mockllm-review-report", "out/report.md")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "out").exists()  # nothing differs, no report

    pytester.makepyfile(test_flow="CONTENT = 'goodbye'\n" + GOLDEN_TEST)
    result = pytester.runpytest("--mockllm-review-report", "out/report.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*golden review report written to *report.json"])
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert report["summary"] == "1 golden differs"
    (entry,) = report["goldens"]
    assert entry["path"] == "golden/test_flow/test_flow.golden"
    assert entry["before"] == before and golden.read_text() == before  # the run wrote nothing
    # The asserted text is what --snapshot-update writes, byte for byte.
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert golden.read_text() == entry["after"]

    pytester.runpytest("--mockllm-review-report", "out/report.md").assert_outcomes(passed=1)
    golden.write_text(before)
    pytester.runpytest("--mockllm-review-report", "out/report.md").assert_outcomes(failed=1)
    markdown = (pytester.path / "out" / "report.md").read_text()
    assert markdown.startswith("## Golden review: 1 golden differs\n")
    assert '- -    message                  -            content="hello"' in markdown
    assert '+ -    message                  -            content="goodbye"' in markdown


def test_pytest_under_xdist_writes_one_report(strict_pytester: pytest.Pytester) -> None:
    pytester = strict_pytester
    pytester.makepyfile(test_a="CONTENT = 'a'\n" + GOLDEN_TEST, test_b="CONTENT = 'b'\n" + GOLDEN_TEST)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    pytester.makepyfile(test_a="CONTENT = 'A'\n" + GOLDEN_TEST, test_b="CONTENT = 'B'\n" + GOLDEN_TEST)
    # Two real workers; their controller in this process (it shares this session's imports).
    result = pytester.runpytest_inprocess("-n", "2", "--mockllm-review-report", "report.json")
    result.assert_outcomes(failed=2)
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["summary"] == "2 goldens differ"
    assert [g["path"] for g in report["goldens"]] == [
        "golden/test_a/test_flow.golden",
        "golden/test_b/test_flow.golden",
    ]


def test_the_page_pairs_the_users_own_id_fields_and_shows_only_their_columns() -> None:
    from harness.golden.extension import golden_text
    from harness.golden.review.page import render_review_page

    events = [
        {"type": "function_call", "name": "search", "call_id": "c-17"},
        {"type": "function_call_output", "call_id": "c-17", "output": "[]"},
    ]
    after = golden_text(events)
    page = render_review_page([GoldenChange("golden/mine.golden", None, after)])
    assert '<a class="link to-result" href="#golden-mine-golden-after-1">→ function_call_output</a>' in page
    assert '<a class="link to-use" href="#golden-mine-golden-after-0">← function_call</a>' in page
    assert 'class="golden hide-seq hide-state"' in page  # no sequence numbers, no persistence
