"""The import fences between the mock, the tooling and the systems (docs/architecture.md).

- ``harness/systems/`` (the systems the seeds describe) never imports ``mockllm``: they
  talk to "an LLM" over the wire, as a user's agent does. Of the harness they use only
  ``harness.events``, ``harness.exceptions`` and ``harness.validation_problems``.
- The tooling (``harness/`` outside ``systems/``) imports only mockllm's public API:
  ``mockllm`` and ``mockllm.testing``, and of those only the names in their ``__all__``.

Every import counts: module level or inside a function, ``import x`` or ``from x import
y``, absolute or relative; and an attribute ``mockllm._something`` too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import mockllm
import mockllm.testing

REPO = Path(__file__).resolve().parents[1]
HARNESS = REPO / "harness"
SYSTEMS = HARNESS / "systems"

PUBLIC_MOCKLLM = {"mockllm": set(mockllm.__all__), "mockllm.testing": set(mockllm.testing.__all__)}
SYSTEMS_MAY_USE = ("harness.systems", "harness.events", "harness.exceptions", "harness.validation_problems")


@dataclass(frozen=True)
class Import:
    """One import in a source file: the module it names, the names it takes (empty for
    ``import x``), and where it is."""

    module: str
    names: tuple[str, ...]
    where: str

    def __str__(self) -> str:
        taken = f" ({', '.join(self.names)})" if self.names else ""
        return f"{self.where}: {self.module}{taken}"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path = REPO) -> list[Import]:
    """Every import in the file at ``path`` (a module under ``root``), at any depth."""
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    relative = path.relative_to(root)  # once a file: per node it was most of the scan's time
    found = []
    for node in ast.walk(tree):
        where = f"{relative}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [Import(alias.name, (), where) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:  # relative: resolved against this module's package
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([target] if target else [])])
            found.append(Import(target, tuple(alias.name for alias in node.names), where))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "mockllm"
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(Import(f"mockllm.{node.attr}", (), where))  # mockllm._engine.X after `import mockllm`
    return found


def _is_mockllm(module: str) -> bool:
    return module == "mockllm" or module.startswith("mockllm.")


def systems_violations(paths: list[Path], root: Path = REPO) -> list[str]:
    """The imports of the systems' files that cross their fence."""
    bad = []
    for path in paths:
        for item in imports_of(path, root):
            if _is_mockllm(item.module):
                bad.append(f"{item}: a system imports the mock")
            elif item.module.startswith("harness") and not any(
                item.module == allowed or item.module.startswith(allowed + ".") for allowed in SYSTEMS_MAY_USE
            ):
                bad.append(f"{item}: a system imports the tooling (only {', '.join(SYSTEMS_MAY_USE)})")
    return bad


def tooling_violations(paths: list[Path], root: Path = REPO) -> list[str]:
    """The imports of the tooling's files that reach past mockllm's public API."""
    bad = []
    for path in paths:
        for item in imports_of(path, root):
            if not _is_mockllm(item.module):
                continue
            public = PUBLIC_MOCKLLM.get(item.module)
            if public is None:
                bad.append(f"{item}: not a public module (use mockllm or mockllm.testing)")
            elif not item.names:  # a public module, imported whole
                continue
            else:
                bad += [
                    f"{item}: {name!r} is not in {item.module}.__all__" for name in item.names if name not in public
                ]
    return bad


def _python_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _tooling_files() -> list[Path]:
    return [path for path in _python_files(HARNESS) if SYSTEMS not in path.parents]


# -- the rules, on this repository ------------------------------------------------------


def test_the_scan_sees_both_sides() -> None:
    """A guard of the guards: the scan finds the files and the imports it judges."""
    systems, tooling = _python_files(SYSTEMS), _tooling_files()
    assert len(systems) > 30 and len(tooling) > 20
    assert any(item.module == "harness.events" for path in systems for item in imports_of(path))
    assert any(item.module == "mockllm.testing" for path in tooling for item in imports_of(path))


def test_the_systems_never_import_the_mock_nor_the_tooling() -> None:
    assert systems_violations(_python_files(SYSTEMS)) == []


def test_the_tooling_imports_only_mockllms_public_api() -> None:
    assert tooling_violations(_tooling_files()) == []


# -- the rules catch what they should ---------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> list[Path]:
    paths = []
    for name, source in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        paths.append(path)
    return paths


@pytest.mark.parametrize(
    "source",
    [
        "import mockllm\n",
        "import mockllm._engine as engine\n",
        "from mockllm import MockLLM\n",
        "from mockllm.testing import transport_for\n",
        "def later():\n    from mockllm._server import bind_socket\n",
        "class Lazy:\n    def method(self):\n        import mockllm\n",
        "from harness.plugin import fixtures\n",
        "from harness.golden.table import event_table\n",
        "from ... import cli\n",  # harness.cli, relatively
    ],
    ids=[
        "import",
        "import-private",
        "from-import",
        "testing",
        "in-a-function",
        "in-a-method",
        "tooling",
        "tooling-module",
        "relative-tooling",
    ],
)
def test_a_system_importing_the_mock_or_the_tooling_is_caught(tmp_path: Path, source: str) -> None:
    paths = _package(tmp_path, {"harness/systems/agent/__init__.py": "", "harness/systems/agent/late.py": source})
    bad = systems_violations(paths, tmp_path)
    assert len(bad) == 1 and bad[0].startswith("harness/systems/agent/late.py:"), bad


def test_a_system_may_use_the_events_exceptions_and_its_siblings(tmp_path: Path) -> None:
    source = (
        "from harness.events import Event\nfrom harness.exceptions import HarnessError\n"
        "from harness.validation_problems import validation_problems\nfrom harness.systems.llm import model_client\n"
        "from ..llm import ModelClient\n"
    )
    paths = _package(tmp_path, {"harness/systems/agent/fine.py": source})
    assert systems_violations(paths, tmp_path) == []


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("from mockllm._engine import MockLLM\n", "not a public module"),
        ("import mockllm._server\n", "not a public module"),
        ("from mockllm import _engine\n", "'_engine' is not in mockllm.__all__"),
        ("from mockllm import MockLLM, Selection\n", "'Selection' is not in mockllm.__all__"),
        ("from mockllm.testing import MockLLM\n", "'MockLLM' is not in mockllm.testing.__all__"),
        ("def fixture():\n    from mockllm._intercept import intercept\n", "not a public module"),
        ("import mockllm\nENGINE = mockllm._engine.MockLLM\n", "not a public module"),
    ],
    ids=[
        "from-private",
        "import-private",
        "private-name",
        "unexported",
        "testing-unexported",
        "in-a-function",
        "attribute",
    ],
)
def test_tooling_reaching_past_the_public_api_is_caught(tmp_path: Path, source: str, reason: str) -> None:
    paths = _package(tmp_path, {"harness/plugin/extra.py": source})
    bad = tooling_violations(paths, tmp_path)
    assert len(bad) == 1 and reason in bad[0] and bad[0].startswith("harness/plugin/extra.py:"), bad


def test_the_tooling_may_use_the_public_api(tmp_path: Path) -> None:
    source = "import mockllm\nimport mockllm.testing\nfrom mockllm import MockLLM, explain\nfrom mockllm.testing import as_chain\n"
    assert tooling_violations(_package(tmp_path, {"harness/plugin/fine.py": source}), tmp_path) == []


# mockllm's core, as docs/architecture.md draws it: below the wire codecs, the engine and
# the doors, so none of those may be imported by it.
MOCKLLM_CORE = (
    "_instructions _parsing _selection _registered _generation _plan _plan_builder _conversation "
    "_pairing _usage _limits _attempts _held _exceptions _optional"
).split()
ABOVE_THE_CORE = ("mockllm._wire", "mockllm._engine", "mockllm._pipeline", "mockllm._exchange", "mockllm._server")


def test_mockllms_core_imports_nothing_above_it() -> None:
    found = [
        str(imported)
        for name in MOCKLLM_CORE
        for imported in imports_of(REPO / "mockllm" / f"{name}.py")
        if imported.module.startswith(ABOVE_THE_CORE)
    ]
    assert found == [], "mockllm's core imports a layer above it:\n" + "\n".join(found)
