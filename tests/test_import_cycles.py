"""No two modules of ``harness`` or ``mockllm`` import each other, however indirectly.

Every import counts: at the top, inside a function (a deferred import is still a
dependency) and under ``if TYPE_CHECKING:`` (a type is one too). A cycle is reported
with the modules in it, so the fix — a protocol in the lower module, or a split — is
plain to see (``harness.systems.chain.settings`` is one such protocol).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for file in sorted((root / package).rglob("*.py")):
            parts = list(file.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = file
    return found


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every statement of ``tree``, at any depth: an import is one, so the expressions (most
    of a module's nodes, which ``ast.walk`` would visit too) are skipped."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                todo += [v for v in value if isinstance(v, ast.stmt | ast.excepthandler | ast.match_case)]


def _imports(name: str, file: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``file`` imports anywhere in its body."""
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _statements(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            # ``from pkg import module`` depends on the module; ``from pkg import name``
            # on the package that defines it.
            submodules = {f"{base}.{alias.name}" for alias in node.names} & set(modules)
            out |= submodules or {base}
    return (out & set(modules)) - {name}


def import_cycles(root: Path, packages: tuple[str, ...]) -> list[list[str]]:
    """The groups of modules that import each other (Tarjan's strongly connected
    components of more than one module), each sorted."""
    modules = _modules(root, packages)
    graph = {name: sorted(_imports(name, file, modules)) for name, file in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        # Iterative depth-first search: (module, position in its imports).
        work = [(start, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
            edges = graph[node]
            if position < len(edges):
                work.append((node, position + 1))
                child = edges[position]
                if child not in index:
                    work.append((child, 0))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_no_module_of_harness_or_mockllm_imports_one_that_imports_it_back() -> None:
    assert import_cycles(ROOT, ("harness", "mockllm")) == []


def test_a_cycle_through_a_function_level_or_type_only_import_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import thing\n")
    (package / "b.py").write_text("def thing():\n    from pkg import c\n    return c\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (package / "d.py").write_text("import pkg.a\n")  # depends on the cycle, is not in it
    assert import_cycles(tmp_path, ("pkg",)) == [["pkg.a", "pkg.b", "pkg.c"]]
    (package / "c.py").write_text("")
    assert import_cycles(tmp_path, ("pkg",)) == []
