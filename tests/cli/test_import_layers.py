"""The layers of ARCHITECTURE.md hold, and no module of sparkeval imports itself back.

The layers are import-linter contracts in pyproject.toml (``[tool.importlinter]``);
the second test builds the import graph with grimp (import-linter's graph: imports
inside functions and under ``TYPE_CHECKING`` count too) and names any cycle.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

import sparkeval

#: the source tree of the sparkeval imported here (its pyproject.toml holds the contracts)
ROOT = Path(sparkeval.__file__).resolve().parent.parent


def _lint_imports() -> str:
    """The ``lint-imports`` console script beside this interpreter (else on PATH)."""
    script = Path(sys.executable).with_name("lint-imports")
    found = str(script) if script.exists() else shutil.which("lint-imports")
    assert found, "import-linter is not installed (pip install -e '.[test]')"
    return found


def test_the_layers_of_the_architecture_hold() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [_lint_imports(), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    modules = sorted(graph.modules)
    successors = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(successors[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors[child])))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(graph: grimp.ImportGraph, component: list[str]) -> str:
    """The imports inside one cycle, with their lines."""
    members = set(component)
    lines = [f"a cycle of {len(component)} modules:"]
    for module in component:
        for imported in sorted(graph.find_modules_directly_imported_by(module) & members):
            for detail in graph.get_import_details(importer=module, imported=imported):
                lines.append(
                    f"  {module} -> {imported} (line {detail['line_number']}: "
                    f"{detail['line_contents']})"
                )
    return "\n".join(lines)


def test_no_module_imports_itself_back() -> None:
    graph = grimp.build_graph("sparkeval", cache_dir=None)
    cycles = _cycles(graph)
    assert not cycles, "\n".join(_describe(graph, component) for component in cycles)
