"""The public surfaces of ``mockllm`` and ``harness`` (httpx's test_exported_members).

A name added to or dropped from either ``__all__`` fails here until this list changes
with it: the export lists are the API users import from.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import textwrap
import types

import pytest

import harness
import mockllm
import mockllm.testing
from harness import HarnessError
from harness.exceptions import MissingExtra, missing_extra

MOCKLLM_EXPORTS = [
    "INSTRUCTION_END",
    "INSTRUCTION_START",
    "PROTOCOLS",
    "Allowances",
    "ContentSpec",
    "ErrorSpec",
    "Findings",
    "HTTPX2Transport",
    "HTTPXTransport",
    "ImpossibleReply",
    "Instruction",
    "InstructionChain",
    "InvalidScript",
    "Journal",
    "JournalEntry",
    "Limits",
    "MintedIds",
    "MockLLM",
    "MockLLMError",
    "MockResponse",
    "Outcome",
    "Problem",
    "ProblemKind",
    "RecordedReply",
    "RecordedRequest",
    "RecordedToolCall",
    "Recorder",
    "RecordingError",
    "RecordingLibrary",
    "RecordingSession",
    "RegisteredScript",
    "ReplyBreach",
    "RequestMatcher",
    "RequestRejected",
    "ScriptLimitReached",
    "ScriptMatch",
    "ScriptValidationError",
    "SecretInRecording",
    "StrictnessError",
    "StreamFaults",
    "StreamShape",
    "TextMessage",
    "TimingSpec",
    "ToolCallMessage",
    "ToolCallSpec",
    "UndeclaredToolCall",
    "UnknownProtocol",
    "UnmockedRequestError",
    "UnusedStep",
    "__version__",
    "assert_trajectory",
    "create_app",
    "explain",
    "intercept",
    "refuse_hosts",
    "reject_unknown_keys",
    "serve",
    "validation_problems",
    "verify_findings",
]

# mockllm.testing: what test tooling needs beyond mockllm's doors (a stable API too).
TESTING_EXPORTS = [
    "DEFAULT_IGNORE",
    "FALLBACK_PREFIX",
    "INSTRUCTION_BLOCK",
    "FileError",
    "MissingExtraError",
    "PromptServer",
    "RecordedTurn",
    "Recording",
    "Selection",
    "Upstreams",
    "as_chain",
    "as_match",
    "bind_socket",
    "failures",
    "import_httpx2",
    "load_recording",
    "read_reply",
    "run_until_signalled",
    "transport_for",
    "uvicorn_server",
    "with_stream",
]

HARNESS_EXPORTS = [
    "AgentOptions",
    "AgentResult",
    "AgentRunner",
    "ChainEvent",
    "ChainExecutor",
    "ChainPlan",
    "FallbackRefused",
    "GoldenExtension",
    "HarnessError",
    "InMemoryVectorStore",
    "InvariantError",
    "MissingExtra",
    "MockClients",
    "ModelClient",
    "ModelError",
    "PlanExecutionError",
    "PlanStep",
    "Policy",
    "RunnerContext",
    "RunnerNotFound",
    "ScenarioError",
    "ScenarioGoldenExtension",
    "ScenarioRun",
    "ScenarioRunner",
    "TaskExecutor",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "UnscriptedRequestsError",
    "UnusedStepsError",
    "VectorStore",
    "check_approval_flow",
    "check_approval_ordering",
    "check_attachment_flow",
    "check_chain_flow",
    "check_common",
    "check_error_flow",
    "check_event_indexes",
    "check_extended_thinking_flow",
    "check_final_content_matches_chunks",
    "check_persistence_states",
    "check_sequence_numbers",
    "check_simple_message_flow",
    "check_terminal_event",
    "check_thinking_before_text",
    "check_tool_pairing",
    "check_tool_use_flow",
    "check_user_message_first",
    "model_client",
    "register_runner",
    "speaks",
    "volatile",
]

# Prompts and constants stay in their modules, out of the packages' ``__all__``.
CONSTANTS = {
    "harness.systems.agent": ["PERSISTENCE", "REJECTED"],
    "harness.systems.chain": [
        "ABSOLUTE_MAX_STEPS",
        "CITATION_SCHEMA",
        "MAX_INSERTED_PER_DECISION",
        "ROUTE_PROMPT",
        "TYPE_LABELS",
    ],
    "harness.systems.identity": ["AM7_TYPES"],
    "harness.systems.planner": ["fallback_planner_prompt", "planner_prompt"],
}

OPTIONAL_SDKS = ("openai", "anthropic", "mcp")


def _modules(package) -> list[str]:
    return [
        info.name
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
        if not info.name.endswith(".__main__")
    ]  # __main__ runs the CLI on import


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


# -- the lists -------------------------------------------------------------------------


def test_mockllm_exports_exactly_its_doors() -> None:
    assert mockllm.__all__ == sorted(MOCKLLM_EXPORTS)


def test_mockllm_testing_exports_exactly_its_doors() -> None:
    assert mockllm.testing.__all__ == sorted(TESTING_EXPORTS)


def test_mockllm_testing_binds_no_public_name_outside_its_exports() -> None:
    for name in mockllm.testing.__all__:  # its names load on first use (PEP 562)
        getattr(mockllm.testing, name)
    bound = {name for name in vars(mockllm.testing) if not name.startswith(("_", "@")) and name != "annotations"}
    assert bound == set(mockllm.testing.__all__)


def test_mockllm_testing_adds_to_the_doors_without_repeating_them() -> None:
    """Each name has one door: a name of ``mockllm.__all__`` is imported from ``mockllm``."""
    assert not set(mockllm.testing.__all__) & set(mockllm.__all__)


def test_harness_exports_exactly_its_doors() -> None:
    assert harness.__all__ == sorted(HARNESS_EXPORTS)


def test_mockllm_exports_every_public_name_it_binds() -> None:
    """httpx's check: what ``mockllm/__init__`` binds without a ``_`` is in ``__all__``
    (less ``annotations`` from the future import, pytest's ``@py_`` rewrite helpers, and
    ``testing`` and ``strategies``, which their imports bind on the package: modules, not
    doors of it)."""
    for name in mockllm.__all__:  # the doors load on first use (PEP 562)
        getattr(mockllm, name)
    bound = {name for name in vars(mockllm) if not name.startswith(("_", "@")) and name != "annotations"}
    assert bound - {"testing", "strategies"} | {"__version__"} == set(mockllm.__all__)


@pytest.mark.parametrize("package", [mockllm, mockllm.testing, harness], ids=["mockllm", "mockllm.testing", "harness"])
def test_every_export_resolves(package) -> None:
    for name in package.__all__:
        assert getattr(package, name) is not None, name
        namespace: dict[str, object] = {}
        exec(f"from {package.__name__} import {name}", namespace)
        assert namespace[name] is getattr(package, name)


def test_mockllm_exports_come_from_private_modules() -> None:
    """Each exported class and function is defined in a ``_``-private module (httpx's
    layout), so users have one door and the internals can move."""
    for name in mockllm.__all__:
        module = getattr(getattr(mockllm, name), "__module__", None)
        if isinstance(module, str) and module.startswith("mockllm"):
            assert module.split(".")[1].startswith("_"), f"mockllm.{name} is defined in public {module}"


def test_harness_exports_are_the_objects_their_modules_define() -> None:
    """A door is the object its module defines under the same name, not a copy or alias."""
    for name in harness.__all__:
        value = getattr(harness, name)
        module = importlib.import_module(value.__module__)
        assert value.__module__.startswith("harness"), name
        assert getattr(module, name) is value, f"harness.{name} is not {value.__module__}.{name}"


def test_type_checkers_see_the_doors_the_runtime_loads() -> None:
    """The ``X as X`` imports of ``harness/__init__`` (what editors and mypy, strict
    re-exports included, resolve) name the module that defines each door users run."""
    typed = _reexports(harness)
    lazy = {name: inspect.getmodule(getattr(harness, name)).__name__ for name in harness.__all__}
    assert typed == lazy


def test_type_checkers_see_the_mockllm_doors_the_runtime_loads() -> None:
    """The same for ``mockllm/__init__``: each door, less ``__version__``, is an ``X as X``
    import of the object the runtime gives, from the module it names."""
    typed = _reexports(mockllm)
    assert set(typed) | {"__version__"} == set(mockllm.__all__)
    for name, module in typed.items():
        assert _same(getattr(importlib.import_module(module), name), getattr(mockllm, name)), name


def test_type_checkers_see_the_mockllm_testing_names_the_runtime_loads() -> None:
    """And for ``mockllm.testing``, whose names load on first use too."""
    typed = _reexports(mockllm.testing)
    assert set(typed) == set(mockllm.testing.__all__)
    for name, module in typed.items():
        assert _same(getattr(importlib.import_module(module), name), getattr(mockllm.testing, name)), name


def _same(source: object, runtime: object) -> bool:
    """The same object; or, when its module was imported again, the same definition (a
    class or function) or an equal constant. An in-process pytester run puts
    ``sys.modules`` back as it was, so a module first imported inside it is imported anew
    afterwards, while the package keeps the object it loaded then."""
    if source is runtime:
        return True
    name = getattr(source, "__qualname__", None)
    if name is None:
        return source == runtime
    return (getattr(source, "__module__", None), name) == (
        getattr(runtime, "__module__", None),
        getattr(runtime, "__qualname__", None),
    )


def _reexports(package: types.ModuleType) -> dict[str, str | None]:
    """Each name the package's ``__init__`` imports as itself (``from m import X as X``),
    and its module: PEP 484's explicit re-exports."""
    tree = ast.parse(inspect.getsource(package))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    return {alias.name: node.module for node in imports for alias in node.names if alias.asname == alias.name}


def test_unknown_harness_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        harness.Nope  # noqa: B018
    assert set(harness.__all__) <= set(dir(harness))


@pytest.mark.parametrize("package_name", sorted(CONSTANTS))
def test_prompts_and_constants_stay_out_of_subpackage_exports(package_name: str) -> None:
    package = importlib.import_module(package_name)
    names = CONSTANTS[package_name]
    assert not set(names) & set(package.__all__)
    assert not set(names) & set(vars(package))
    for name in names:  # still importable from their own modules
        assert any(hasattr(importlib.import_module(module), name) for module in _modules(package)), name


def test_mockllm_has_no_public_module_but_init_main_testing_and_strategies() -> None:
    public = [name for name in _modules(mockllm) if not name.split(".")[1].startswith("_")]
    assert sorted(public) == ["mockllm.strategies", "mockllm.testing"]


# -- the exception trees -----------------------------------------------------------------


# -- import cost and optional extras ------------------------------------------------------


def test_import_harness_loads_nothing_but_the_standard_library() -> None:
    result = _run("""
        import sys
        before = set(sys.modules)
        import harness
        loaded = {name.partition(".")[0] for name in set(sys.modules) - before}
        print(sorted(loaded - set(sys.stdlib_module_names) - {"harness"}))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_harness_and_its_plugin_do_not_import_the_optional_sdks(fresh_imports: dict[str, set[str]]) -> None:
    # ``import pytest, harness.plugin.hooks`` in a fresh interpreter (tests/conftest.py).
    assert sorted(fresh_imports["plugin"] & set(OPTIONAL_SDKS)) == []


def test_every_harness_export_resolves_in_a_core_install_or_names_its_extra() -> None:
    """What a core install (no openai, anthropic, mcp or syrupy) can import from ``harness``:
    everything but the golden doors, which name the ``golden`` extra."""
    result = _run(f"""
        import sys
        for name in {OPTIONAL_SDKS + ("syrupy",)!r}:
            sys.modules[name] = None  # 'import openai' now fails as if not installed
        import harness
        for name in harness.__all__:
            try:
                getattr(harness, name)
            except harness.MissingExtra as exc:
                print(name, exc.name)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "GoldenExtension syrupy",
        "ScenarioGoldenExtension syrupy",
    ]


def test_a_door_whose_extra_is_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    (tmp_path / "needs_mcp_door.py").write_text("import mcp.server\nDoor = object\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.setitem(harness._doors.names, "Door", "needs_mcp_door")
    with pytest.raises(MissingExtra) as caught:
        harness.Door  # noqa: B018
    assert str(caught.value) == (
        "harness.Door needs the 'mcp' package, which is not installed. "
        'Install it with: pip install "mockllm-harness[service]"'
    )
    assert isinstance(caught.value, ModuleNotFoundError) and caught.value.name == "mcp"
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)


def test_missing_extra_names_the_extra_of_the_package() -> None:
    error = missing_extra("openai", needed_by="the OpenAI model client")
    assert str(error) == (
        "the OpenAI model client needs the 'openai' package, which is not installed. "
        'Install it with: pip install "mockllm-harness[agent]"'
    )
    assert isinstance(error, HarnessError) and isinstance(error, ModuleNotFoundError)


def test_a_golden_door_without_syrupy_names_the_golden_extra() -> None:
    result = _run("""
        import sys
        sys.modules["syrupy"] = None  # the core install: no golden extra
        import harness
        try:
            harness.GoldenExtension
        except harness.MissingExtra as exc:
            print(exc)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "harness.GoldenExtension needs the 'syrupy' package, which is not installed. "
        'Install it with: pip install "mockllm-harness[golden]"'
    )
