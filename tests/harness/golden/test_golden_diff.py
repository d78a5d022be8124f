"""``python -m harness diff`` prints what the review reads: one list of goldens changed
against git HEAD (``harness.golden.review.changes``), each as a unified diff."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.golden.review import changed_goldens


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root, check=True, capture_output=True
    )


def test_diff_prints_changed_new_and_deleted_goldens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = tmp_path / "golden"
    golden.mkdir()
    (golden / "kept.golden").write_text("a\nb\n", encoding="utf-8")
    (golden / "gone.golden").write_text("x\n", encoding="utf-8")
    (golden / "notes.txt").write_text("not a golden\n", encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "goldens")
    (golden / "kept.golden").write_text("a\nc\n", encoding="utf-8")
    (golden / "gone.golden").unlink()
    (golden / "new.golden").write_text("n\n", encoding="utf-8")
    (golden / "notes.txt").write_text("changed, still not a golden\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    assert main(["diff"]) == 0
    out = capsys.readouterr().out
    assert out == "".join(change.diff() for change in changed_goldens("golden"))
    assert out == (
        "deleted golden: golden/gone.golden\n--- a/golden/gone.golden\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        "--- a/golden/kept.golden\n+++ b/golden/kept.golden\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        "new golden: golden/new.golden\n--- /dev/null\n+++ b/golden/new.golden\n@@ -0,0 +1 @@\n+n\n"
    )


def test_diff_outside_a_repository_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert main(["diff"]) == 2
    assert capsys.readouterr().err.startswith("harness diff: ")
