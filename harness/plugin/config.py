"""The plugin's settings: ini options, command-line flags and the ``mockllm`` marker.

Precedence, lowest first: the defaults, ``[tool.pytest.ini_options]`` (``mockllm_seed``,
``mockllm_lenient``, ``mockllm_allow_fallback``, ``mockllm_allow_unused_steps``,
``mockllm_stream_shape``, ``mockllm_golden_dir``, ``mockllm_scenario_dirs``), the ``--mockllm-*`` flags, then the
marker on the test. Flags default to None so that an unset flag leaves the ini's value.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import pytest

__all__ = ["MARKER", "Settings", "add_options", "base_settings", "is_scenario_file", "settings_for"]

MARKER = "mockllm"


@dataclass(frozen=True)
class Settings:
    """What one test's mock does and checks."""

    seed: int = 0
    lenient: bool = False
    allow_fallback: bool = False
    allow_unused_steps: bool = False
    stream: Any = None
    """The default stream shape (a ``mockllm.StreamShape``, a mapping or its JSON text)."""


_HELP = {
    "seed": "seed for the words the mock generates (default 0)",
    "lenient": "accept tool calls and tool results that do not pair up",
    "allow_fallback": "do not fail a test whose requests got the fallback reply or an unscripted 4xx",
    "allow_unused_steps": "do not fail a test whose scripted instructions were not all used",
}


_FLAGGED = [field for field in fields(Settings) if field.name != "stream"]
_STREAM_HELP = (
    "the stream shape of every streamed reply whose script has none, as JSON, e.g. "
    '\'{"text": {"size": 1}}\' (docs/stream-shapes.md)'
)


def add_options(parser: pytest.Parser) -> None:
    """Register the ``--mockllm-*`` flags and the ``mockllm_*`` ini options."""
    group = parser.getgroup("mockllm", "mockllm: deterministic mock LLM and agent harness")
    for field in _FLAGGED:
        flag = "--mockllm-" + field.name.replace("_", "-")
        if field.type == "int":
            group.addoption(flag, type=int, default=None, metavar="N", help=_HELP[field.name])
            parser.addini(f"mockllm_{field.name}", _HELP[field.name], default=str(field.default))
        else:
            group.addoption(flag, action="store_true", default=None, help=_HELP[field.name])
            parser.addini(f"mockllm_{field.name}", _HELP[field.name], type="bool", default=False)
    group.addoption("--mockllm-stream-shape", default=None, metavar="JSON", help=_STREAM_HELP)
    parser.addini("mockllm_stream_shape", _STREAM_HELP)
    group.addoption(
        "--mockllm-golden-dir", default=None, metavar="DIR", help="where golden files live (default: <rootdir>/golden)"
    )
    parser.addini("mockllm_golden_dir", "where golden files live (default: <rootdir>/golden)")
    parser.addini(
        "mockllm_scenario_dirs",
        "folders (relative to the rootdir) whose *.yaml files are scenarios to collect",
        type="linelist",
        default=[],
    )


def base_settings(config: pytest.Config) -> Settings:
    """The run's settings: defaults, then the ini, then the flags."""
    values: dict[str, Any] = {
        "stream": config.getoption("--mockllm-stream-shape") or config.getini("mockllm_stream_shape") or None
    }
    for field in _FLAGGED:
        value = config.getoption("--mockllm-" + field.name.replace("_", "-"))
        if value is None:
            value = config.getini(f"mockllm_{field.name}")
            if field.type == "int":
                try:
                    value = int(value)
                except ValueError:
                    raise pytest.UsageError(
                        f"ini option mockllm_{field.name} must be a whole number, got {value!r}"
                    ) from None
        values[field.name] = value
    return Settings(**values)


def settings_for(node: pytest.Item) -> Settings:
    """The settings of one test: ini, flags, then its ``@pytest.mark.mockllm(...)``."""
    settings = base_settings(node.config)
    marker = node.get_closest_marker(MARKER)
    if marker is None:
        return settings
    if marker.args:
        raise TypeError(f"@pytest.mark.{MARKER} takes keyword arguments only, got {marker.args!r}")
    known = sorted(f.name for f in fields(Settings))
    unknown = set(marker.kwargs) - set(known)
    if unknown:
        raise TypeError(f"@pytest.mark.{MARKER} got unknown options {sorted(unknown)}; use {known}")
    return replace(settings, **marker.kwargs)


def is_scenario_file(file_path: Path, config: pytest.Config) -> bool:
    """Whether the plugin collects ``file_path`` as a scenario.

    Only where the project opted in: a ``*.scenario.yaml`` (or ``.yml``) file anywhere,
    or a YAML file under one of the ini's ``mockllm_scenario_dirs``. A project that never
    opted in keeps its own YAML files to itself.
    """
    name = file_path.name
    if name.endswith((".scenario.yaml", ".scenario.yml")):
        return True
    if file_path.suffix not in (".yaml", ".yml"):
        return False
    for folder in config.getini("mockllm_scenario_dirs"):
        root = (config.rootpath / folder).resolve()
        if file_path.resolve().is_relative_to(root):
            return True
    return False
