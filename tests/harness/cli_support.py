"""``python -m harness`` run in this process, for tests of what a verb does rather than of
its process (exit status, working directory, start-up: each verb keeps one test that
starts a real ``python -m harness``).

The verbs that run pytest (``replay``, ``migrate-goldens``) call ``pytest.main``; here that
call goes through pytester's in-process run, with the arguments the verb built. The run
shares this session's imports (pytest, the plugins, the SDKs: seconds of CPU a fresh
process pays again) and forgets what it imported when it ends.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Sequence

import pytest

from harness.cli import main


def run_harness(pytester: pytest.Pytester, *argv: str) -> pytest.RunResult:
    """``python -m harness *argv`` in ``pytester.path``, in this process: its exit code and
    what it printed, as pytester's ``run`` gives them for a process."""

    def inner_pytest(args: Sequence[str], plugins: Sequence[object] = ()) -> int:
        return int(pytester.inline_run(*args, plugins=list(plugins)).ret)

    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.setattr(pytest, "main", inner_pytest)
        ret = main(list(argv))
    return pytest.RunResult(ret, out.getvalue().splitlines(), err.getvalue().splitlines(), time.perf_counter() - start)
