"""Names the runner, so scenario files can say ``runner: my_agent``."""

from my_agent.runner import run


def pytest_mockllm_runners(config):
    return {"my_agent": run}
