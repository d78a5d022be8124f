"""Where goldens live: the one place that decides it, for pytest and the CLI alike.

``--mockllm-golden-dir DIR`` (relative to the invocation directory), else the ini
option ``mockllm_golden_dir`` (relative to the ini file's folder), else
``<rootdir>/golden``. ``python -m harness replay`` runs pytest, so it finds the same
folder from any working directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["GOLDEN_DIR_INI", "GOLDEN_DIR_OPTION", "golden_dir"]

GOLDEN_DIR_OPTION = "--mockllm-golden-dir"
GOLDEN_DIR_INI = "mockllm_golden_dir"


def golden_dir(config: pytest.Config) -> Path:
    """The golden folder of this pytest run (see the module docstring)."""
    option = config.getoption(GOLDEN_DIR_OPTION, default=None)
    if option:
        return Path(option).resolve()
    ini = config.getini(GOLDEN_DIR_INI)
    if ini:
        base = config.inipath.parent if config.inipath else config.rootpath
        return (base / str(ini)).resolve()
    return config.rootpath / "golden"
