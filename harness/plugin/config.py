"""The plugin's settings: ini options, command-line flags and the ``mockllm`` marker.

Precedence, lowest first: the defaults, ``[tool.pytest.ini_options]`` (``mockllm_seed``,
``mockllm_lenient``, ``mockllm_allow_fallback``, ``mockllm_allow_unused_steps``,
``mockllm_allow_undeclared_tools``, ``mockllm_allow_impossible_replies``, ``mockllm_allow_real_providers``,
``mockllm_stream_shape``, ``mockllm_golden_dir``, ``mockllm_scenario_dirs``), the ``--mockllm-*`` flags, then the
marker on the test. Flags default to None so that an unset flag leaves the ini's value.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "MARKER",
    "SCENARIO_DIR_OPTION",
    "Settings",
    "add_options",
    "base_settings",
    "is_scenario_file",
    "scenario_roots",
    "settings_for",
]

MARKER = "mockllm"


@dataclass(frozen=True)
class Settings:
    """What one test's mock does and checks."""

    seed: int = 0
    lenient: bool = False
    allow_fallback: bool = False
    allow_unused_steps: bool = False
    record: bool = False
    allow_undeclared_tools: bool = False
    allow_real_providers: bool = False
    allow_impossible_replies: bool = False
    stream: Any = None
    """The default stream shape (a ``mockllm.StreamShape``, a mapping or its JSON text)."""

    def mock_options(self) -> dict[str, Any]:
        """The settings that are ``mockllm.MockLLM``'s own options, by its keyword names."""
        return {name: getattr(self, name) for name in _MOCK_OPTIONS}


_MOCK_OPTIONS = (
    "seed",
    "lenient",
    "allow_fallback",
    "allow_unused_steps",
    "allow_undeclared_tools",
    "allow_impossible_replies",
    "stream",
)
"""The fields ``MockLLM`` takes as they are; the others are the plugin's (recording,
the providers' hosts)."""


_HELP = {
    "seed": "seed for the words the mock generates (default 0)",
    "lenient": "accept tool calls and tool results that do not pair up",
    "allow_fallback": "do not fail a test whose requests got the fallback reply or an unscripted 4xx",
    "allow_unused_steps": "do not fail a test whose scripted instructions were not all used",
    "record": "answer tests from their recording files (see --mockllm-record-mode)",
    "allow_undeclared_tools": "do not fail a test whose script calls a tool the request did not declare "
    "(or with arguments its schema refuses)",
    "allow_impossible_replies": "do not fail a test whose scripted reply no provider could give to its request "
    "(longer than its output-token limit, or text breaking its strict structured output)",
    "allow_real_providers": "let requests to the providers' default hosts (OpenAI, Anthropic, Gemini, Azure, a local Ollama) "
    "through instead of refusing them",
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
            try:
                value = config.getini(f"mockllm_{field.name}")
            except (ValueError, pytest.UsageError) as exc:  # pytest's "invalid truth value 'flase'" names no option
                raise pytest.UsageError(f"ini option mockllm_{field.name} must be true or false: {exc}") from None
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
    """The settings of one test: ini, flags, then its ``@pytest.mark.mockllm(...)``;
    a ``pytest.UsageError`` naming the argument and what it takes for a wrong one."""
    settings = base_settings(node.config)
    marker = node.get_closest_marker(MARKER)
    if marker is None:
        return settings
    # Field types are strings here (``from __future__ import annotations``): "int", "bool".
    types = {f.name: str(f.type) for f in fields(Settings)}
    takes = ", ".join(f"{name}={_EXPECTED[kind]}" for name, kind in types.items())
    if marker.args:
        raise pytest.UsageError(
            f"@pytest.mark.{MARKER} takes keyword arguments only ({takes}), got the positional {marker.args!r}"
        )
    for name, value in marker.kwargs.items():
        if name not in types:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} got an unknown argument {name}={value!r}; it takes {takes}")
        if types[name] == "Any":  # the stream shape: mockllm checks it, naming the field
            continue
        wanted = int if types[name] == "int" else bool
        if type(value) is not wanted:  # a bool is an int to isinstance: seed=True is a mistake
            raise pytest.UsageError(
                f"@pytest.mark.{MARKER}({name}={value!r}): {name} takes {_EXPECTED[types[name]]}, "
                f"got {type(value).__name__}"
            )
    return replace(settings, **marker.kwargs)


SCENARIO_DIR_OPTION = "--mockllm-scenario-dir"

_EXPECTED = {"int": "a whole number (int)", "bool": "True or False", "Any": "a stream shape"}


def is_scenario_file(file_path: Path, config: pytest.Config) -> bool:
    """Whether the plugin collects ``file_path`` as a scenario.

    Only where the project opted in: a ``*.scenario.yaml`` (or ``.yml``) file anywhere,
    or a YAML file under one of the ini's ``mockllm_scenario_dirs`` or of the folders (or
    files) named with ``--mockllm-scenario-dir`` (``python -m harness replay DIR`` names
    its paths so). A project that never opted in keeps its own YAML files to itself.
    """
    name = file_path.name
    if name.endswith((".scenario.yaml", ".scenario.yml")):
        return True
    if file_path.suffix not in (".yaml", ".yml"):
        return False
    resolved = file_path.resolve()
    return any(resolved.is_relative_to(root) for root in scenario_roots(config))


def scenario_roots(config: pytest.Config) -> list[Path]:
    """The folders (and files) whose YAML files are scenarios: the ini's
    ``mockllm_scenario_dirs`` (relative to the rootdir), then ``--mockllm-scenario-dir``
    (relative to the invocation directory)."""
    roots = [(config.rootpath / folder).resolve() for folder in config.getini("mockllm_scenario_dirs")]
    named = config.getoption(SCENARIO_DIR_OPTION, default=None) or []
    return roots + [(config.invocation_params.dir / path).resolve() for path in named]
