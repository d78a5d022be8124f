"""Where goldens live: the one place that decides it, for pytest and the CLI alike.

``--mockllm-golden-dir DIR`` (relative to the invocation directory), else the ini
option ``mockllm_golden_dir`` (relative to the ini file's folder), else
``<rootdir>/golden``. ``python -m harness replay`` runs pytest, so it finds the same
folder from any working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from harness.golden.extension import GoldenExtension

__all__ = ["GOLDEN_DIR_INI", "GOLDEN_DIR_OPTION", "golden_dir", "golden_extension"]

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


_EXTENSIONS = pytest.StashKey[dict[type, type]]()


def golden_extension(config: pytest.Config, base: type[GoldenExtension] | None = None) -> type[GoldenExtension]:
    """``base`` (``GoldenExtension`` if None) pointed at this run's golden folder: a
    subclass per session, so two sessions in one process (pytester) never share one."""
    # Imported here: the plugin reads golden_dir at every pytest start, syrupy only when used.
    from harness.golden.extension import GoldenExtension

    base = GoldenExtension if base is None else base
    made = config.stash.setdefault(_EXTENSIONS, {})
    if base not in made:
        made[base] = type(base.__name__, (base,), {"snapshot_dirname": golden_dir(config), "rootdir": config.rootpath})
    return made[base]
