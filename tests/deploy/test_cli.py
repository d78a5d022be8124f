"""The deploy files cannot drift from the CLI: the Dockerfile's ENTRYPOINT + CMD and the
Kubernetes container's args are a ``python -m mockllm serve`` command line whose every
option the real ``serve --help`` lists, and the paths they probe and scrape are the
ones the server answers."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess

import httpx
import pytest

from tests.deploy.deploy_support import (
    dockerfile_instructions,
    documents,
    exec_form,
    mock_container,
    options_in,
    serve_options,
)

HEALTH = "/_mockllm/health"
# Options of issue 28 that another branch adds to serve (many workers, shared state).
LANDING = {"--workers", "--state"}


@pytest.fixture(scope="module")
def accepted() -> set[str]:
    return serve_options()


def _docker_argv() -> list[str]:
    instructions = dockerfile_instructions()
    return exec_form(instructions, "ENTRYPOINT") + exec_form(instructions, "CMD")


def test_the_image_runs_serve_on_all_interfaces_with_options_serve_accepts(accepted: set[str]) -> None:
    argv = _docker_argv()
    assert argv[:4] == ["python", "-m", "mockllm", "serve"], argv
    assert argv[argv.index("--host") + 1] == "0.0.0.0"
    assert argv[argv.index("--port") + 1] == "8000"
    assert "--no-metrics" not in argv
    unknown = [option for option in options_in(argv) if option not in accepted]
    assert not unknown, f"deploy/Dockerfile passes {unknown} that serve --help does not list"


def test_the_image_checks_its_health_as_a_non_root_user() -> None:
    instructions = dockerfile_instructions()
    (healthcheck,) = [rest for name, rest in instructions if name == "HEALTHCHECK"]
    assert f"http://127.0.0.1:8000{HEALTH}" in healthcheck
    users = [rest for name, rest in instructions if name == "USER"]
    assert users and users[-1] not in {"root", "0"}
    (run,) = [rest for name, rest in instructions if name == "RUN"]
    assert '".[metrics' in run  # GET /metrics needs the metrics extra


def test_the_manifest_runs_serve_with_options_serve_accepts(accepted: set[str]) -> None:
    container = mock_container()
    args = container["args"]
    assert args[0] == "serve"
    port = int(args[args.index("--port") + 1])
    assert container["ports"][0]["containerPort"] == port
    unknown = [option for option in options_in(args) if option not in accepted and option not in LANDING]
    assert not unknown, f"deploy/kubernetes passes {unknown} that serve --help does not list"


def test_the_manifest_shares_state_through_redis_with_options_serve_accepts(accepted: set[str]) -> None:
    args = mock_container()["args"]
    assert args[args.index("--state") + 1].startswith("redis://redis:6379/")
    assert int(args[args.index("--workers") + 1]) >= 1
    missing = sorted(option for option in LANDING if option not in accepted)
    assert not missing, f"serve --help does not list {missing}"


def test_probes_and_scrape_point_at_paths_the_server_answers(mock_server_url: str) -> None:
    container = mock_container()
    paths = {container[probe]["httpGet"]["path"] for probe in ("readinessProbe", "livenessProbe")}
    assert paths == {HEALTH}
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["port"] == container["ports"][0]["name"]
    (deployment,) = [d for d in documents() if d["kind"] == "Deployment" and d["metadata"]["name"] == "mockllm"]
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == container["ports"][0]["containerPort"]
    with httpx.Client(base_url=mock_server_url, timeout=10) as client:
        assert client.get(HEALTH).status_code == 200
        scraped = client.get(annotations["prometheus.io/path"])
    if importlib.util.find_spec("prometheus_client") is None:
        # An environment without the metrics extra (the image installs it): the route says which.
        assert scraped.status_code == 501
        assert "mockllm-harness[metrics]" in scraped.text
        return
    assert scraped.status_code == 200
    assert "vllm:e2e_request_latency_seconds" in scraped.text


def test_the_mock_service_reaches_the_pods_and_redis_is_where_the_state_option_says() -> None:
    docs = documents()
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    container = mock_container()
    (mock_deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "mockllm"]
    labels = mock_deployment["spec"]["template"]["metadata"]["labels"]
    assert services["mockllm"]["spec"]["selector"].items() <= labels.items()
    assert services["mockllm"]["spec"]["ports"][0]["targetPort"] == container["ports"][0]["name"]
    assert container["resources"]["limits"] and container["resources"]["requests"]
    state = container["args"][container["args"].index("--state") + 1]
    host, _, port = state.removeprefix("redis://").split("/")[0].partition(":")
    assert host in services and services[host]["spec"]["ports"][0]["port"] == int(port)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_image_healthcheck_command_passes_on_a_serving_mock_and_fails_without_one(mock_server_url: str) -> None:
    (healthcheck,) = [rest for name, rest in dockerfile_instructions() if name == "HEALTHCHECK"]
    argv = json.loads(healthcheck[healthcheck.index("CMD") + 3 :])
    assert argv[0] == "python"
    served = mock_server_url.removeprefix("http://")

    def check(address: str) -> int:
        command = [arg.replace("127.0.0.1:8000", address) for arg in argv]
        return subprocess.run(command, capture_output=True, timeout=60).returncode

    assert check(served) == 0
    assert check(f"127.0.0.1:{_free_port()}") != 0
