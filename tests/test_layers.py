"""The layers of docs/architecture.md as import-linter states them in pyproject.toml, and the two
rules a layers contract cannot state: no module imports itself round a circle, and no module
imports another package's private (``_name``) module."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tests.test_architecture import ROOT, imports_of, modules_under

PACKAGES = ("shared", "services")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Each of our modules and the modules of ours it imports, under ``if TYPE_CHECKING:`` too:
    a type named from another module is an arrow a reader follows like any other."""
    modules = {module_name(p): p for package in PACKAGES for p in modules_under(package)}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for imported in _imports(path):
            # "from shared.model import tokens" names a module; "from shared.model import Memory"
            # names the package: take the longest module the name starts with.
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                found.add(imported)
        graph[name] = found
    return graph


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_the_layers_contract_is_kept() -> None:
    linter = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run(
        [str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_no_module_imports_itself_round_a_circle() -> None:
    assert circles(import_graph()) == []


def test_a_circle_is_found_when_there_is_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def outside_its_package(importer: str, imported: str) -> bool:
    """Whether ``imported`` is a private module (``_name``) of a package ``importer`` is outside."""
    parts = imported.split(".")
    private = next((i for i, part in enumerate(parts) if part.startswith("_")), None)
    if private is None or parts[private] == "__future__":
        return False
    holder = ".".join(parts[:private])
    return not (importer == holder or importer.startswith(holder + "."))


def test_no_module_imports_another_packages_private_module() -> None:
    offending = [
        f"{path.relative_to(ROOT)} imports {name}"
        for package in PACKAGES
        for path in modules_under(package)
        for name in imports_of(path)
        if outside_its_package(module_name(path), name)
    ]
    assert offending == []


def test_a_private_module_is_private_to_its_package() -> None:
    assert outside_its_package("shared.transfer.exporting", "shared.counters._reader")
    assert not outside_its_package("shared.counters.tracker", "shared.counters._cache")
    assert not outside_its_package("shared.embedding._graph", "shared.embedding._graph.fusion")


# The diagram's nodes (docs/architecture.md, "Layers") and the modules each stands for.
DIAGRAM = ROOT / "docs" / "architecture.md"
_NODE_OF_PACKAGE = {"errors": "base", "process": "base"}


def _node(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "services":
        return parts[1]
    if parts[1:3] in (["storage", "postgres"], ["storage", "s3"]):
        return "backends"
    return _NODE_OF_PACKAGE.get(parts[1], parts[1]) if len(parts) > 1 else "shared"


def drawn_arrows(text: str) -> set[tuple[str, str]]:
    """The arrows of the diagram's ``a & b --> c & d`` lines (a dotted one too)."""
    block = text.split("```mermaid", 1)[1].split("```", 1)[0]
    arrows: set[tuple[str, str]] = set()
    for line in block.splitlines():
        line = re.sub(r'-\. "[^"]*" \.->', "-->", line.strip())
        if "-->" not in line:
            continue
        sources, targets = (side.split("&") for side in line.split("-->"))
        arrows.update((a.strip(), b.strip()) for a in sources for b in targets)
    return arrows


def test_the_diagram_draws_the_imports_between_packages_as_they_stand() -> None:
    in_code = {
        (_node(module), _node(imported))
        for module, imports in import_graph().items()
        for imported in imports
        if _node(module) != _node(imported) and _node(imported) != "base"
    }
    drawn = drawn_arrows(DIAGRAM.read_text())
    assert in_code - drawn == set(), "imported but not drawn"
    assert drawn - in_code == set(), "drawn but not imported"


def test_the_diagram_is_read_arrow_by_arrow() -> None:
    text = '```mermaid\n    a & b --> c\n    c -. "why" .-> d\n    x["a label"]\n```'
    assert drawn_arrows(text) == {("a", "c"), ("b", "c"), ("c", "d")}
