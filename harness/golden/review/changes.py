"""Which goldens differ from git HEAD, with both versions' text and the diff between them
(the one diff of goldens: ``python -m harness diff`` prints it, the review page shows it)."""

from __future__ import annotations

import difflib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.exceptions import HarnessError

__all__ = ["GitError", "GoldenChange", "changed_goldens"]


class GitError(HarnessError, RuntimeError):
    """git could not say what changed (not a repository, git missing)."""


@dataclass(frozen=True)
class GoldenChange:
    """One golden file: its path as shown (from the repository's top), its text before
    (at git HEAD, or when a pytest run compared it) and after (the working tree's, or the
    text the run asserted: what ``--snapshot-update`` writes), ``None`` when it did not
    exist, or would no longer; ``file`` is where the review writes what is accepted."""

    path: str
    before: str | None
    after: str | None
    file: Path | None = None

    @property
    def status(self) -> str:
        if self.before is None:
            return "new"
        return "deleted" if self.after is None else "changed"

    def diff(self) -> str:
        """The change as a unified diff, as ``git diff`` writes it; a new or deleted
        golden is headed by a line saying so."""
        head = f"{self.status} golden: {self.path}\n" if self.status != "changed" else ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(True),
            (self.after or "").splitlines(True),
            f"a/{self.path}" if self.before is not None else "/dev/null",
            f"b/{self.path}" if self.after is not None else "/dev/null",
        )
        return head + "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _git(top: Path | None, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=top, capture_output=True, text=True, check=True)
    except FileNotFoundError as exc:
        raise GitError("git is not installed; the review compares goldens with git HEAD") from exc
    except subprocess.CalledProcessError as exc:
        raise GitError(exc.stderr.strip() or f"git {' '.join(args)} failed") from exc
    return done.stdout


def changed_goldens(path: Path | str, *, suffix: str = ".golden") -> list[GoldenChange]:
    """Goldens under ``path`` that differ from HEAD: changed, new (untracked) and deleted."""
    path = Path(path).resolve()
    folder = path if path.is_dir() else path.parent
    top = Path(_git(folder if folder.is_dir() else None, "rev-parse", "--show-toplevel").strip())
    try:
        _git(top, "rev-parse", "--verify", "-q", "HEAD")
    except GitError:
        raise GitError(
            f"the repository at {top} has no commit yet: commit the goldens, then review what changes against them"
        ) from None
    where = str(path.relative_to(top)) if path.is_relative_to(top) else str(path)
    names = set(_git(top, "diff", "--name-only", "HEAD", "--", where).split("\n"))
    names |= set(_git(top, "ls-files", "--others", "--exclude-standard", "--", where).split("\n"))
    changes = []
    for name in sorted(n for n in names if n.endswith(suffix)):
        try:
            before: str | None = _git(top, "show", f"HEAD:{name}")
        except GitError:
            before = None
        file = top / name
        after = file.read_text(encoding="utf-8") if file.exists() else None
        if before != after:
            changes.append(GoldenChange(name, before, after, file))
    return changes
