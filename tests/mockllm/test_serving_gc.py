"""``python -m mockllm serve`` tunes the cyclic garbage collector for a long-running
server (docs/performance.md, "Load"); a process that only uses the library keeps
Python's own settings."""

from __future__ import annotations

import gc
import subprocess
import sys

from mockllm._serving import SERVING_GC_THRESHOLDS


def test_using_the_library_leaves_the_collector_as_python_set_it() -> None:
    code = (
        "import gc; before = gc.get_threshold()\n"
        "import mockllm, httpx\n"
        "from mockllm import MockLLM\n"
        "mock = MockLLM(); mock.handle('POST', '/v1/chat/completions', {}, b'{}')\n"
        "assert gc.get_threshold() == before, gc.get_threshold()\n"
        "assert gc.get_freeze_count() == 0\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_server_freezes_its_startup_objects_and_collects_less_often() -> None:
    code = (
        "import gc\n"
        "from mockllm._serving import SERVING_GC_THRESHOLDS, tune_gc_for_serving\n"
        "tune_gc_for_serving()\n"
        "assert gc.get_threshold() == SERVING_GC_THRESHOLDS\n"
        "assert gc.get_freeze_count() > 1000, gc.get_freeze_count()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    # Not applied to this test process (whose own tuning is the root conftest's).
    assert SERVING_GC_THRESHOLDS[0] > gc.get_threshold()[0]
