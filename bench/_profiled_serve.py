"""``python bench/_profiled_serve.py OUT serve ARGS``: ``python -m mockllm serve ARGS``
under cProfile timed by CPU (``time.process_time``: user and system time), so that a
profile taken on a shared, loaded machine counts the server's own work, not the time it
waited for a core. The stats go to OUT when the server stops (SIGTERM)."""

from __future__ import annotations

import cProfile
import runpy
import sys
import time

out, sys.argv = sys.argv[1], ["mockllm", *sys.argv[2:]]
profile = cProfile.Profile(time.process_time)
try:
    profile.runcall(runpy.run_module, "mockllm", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    profile.dump_stats(out)
