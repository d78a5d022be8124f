"""Reading deploy/: the Dockerfile's instructions, the Kubernetes documents, the linters.

The linters (hadolint, kubernetes-validate) are PyPI wheels in the ``test`` extra.
Without one the tests that run it skip, unless HARNESS_REQUIRE_LINTERS=1 (CI), where
they fail."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))


def dockerfile_instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments left out."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        pending += " " + stripped.removesuffix("\\").strip() if pending else stripped.removesuffix("\\").strip()
        if not stripped.endswith("\\"):
            name, _, rest = pending.partition(" ")
            instructions.append((name.upper(), rest.strip()))
            pending = ""
    return instructions


def exec_form(instructions: list[tuple[str, str]], name: str) -> list[str]:
    """The last ``name`` instruction's exec form (a JSON array), as Docker takes it."""
    values = [rest for instruction, rest in instructions if instruction == name]
    assert values, f"deploy/Dockerfile has no {name}"
    argv = json.loads(values[-1])
    assert isinstance(argv, list) and all(isinstance(arg, str) for arg in argv), values[-1]
    return argv


def documents() -> list[dict[str, Any]]:
    """Every Kubernetes document under deploy/kubernetes/."""
    return [doc for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc]


def mock_container() -> dict[str, Any]:
    (deployment,) = [d for d in documents() if d["kind"] == "Deployment" and d["metadata"]["name"] == "mockllm"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def serve_options() -> set[str]:
    """The options ``python -m mockllm serve --help`` lists (the real CLI, this checkout):
    its ``main`` run in this process, which prints the same help a fresh one would, for
    none of the start a process costs (the CLI's own process is tested in
    tests/mockllm/test_server_http.py)."""
    from mockllm._cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), pytest.raises(SystemExit) as ended:
        main(["serve", "--help"])
    assert ended.value.code == 0
    help_text = printed.getvalue()
    return {word.strip("[],=") for word in help_text.split() if word.startswith(("--", "[--"))} | {"--help"}


def options_in(argv: list[str]) -> list[str]:
    return [arg.split("=", 1)[0] for arg in argv if arg.startswith("--")]


def linter(name: str, package: str) -> str:
    """The path of the ``name`` executable (installed by ``pip install package``)."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        reason = f"{name} is not installed: pip install {package} (it is in the test extra)"
        if os.environ.get("HARNESS_REQUIRE_LINTERS") == "1":
            pytest.fail(f"HARNESS_REQUIRE_LINTERS=1 but {reason}")
        pytest.skip(reason)
    return found
