"""The shape of the package (issue 12): few top-level modules, small files and functions, and
no import cycle between parts. Computed from the source's AST, so it cannot drift."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hub"
MAX_TOP_LEVEL = 8
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _part(path: Path) -> str:
    """The part a file belongs to: its folder under hub/, or its own name at the top."""
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imported_parts(tree: ast.AST) -> set[str]:
    """The parts of hub a module imports (at the top or inside functions)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = node.module.split(".")
            if names[0] != "hub":
                continue
            if len(names) > 1:
                out.add(names[1])
            else:  # from hub import x
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "hub" and len(names) > 1:
                    out.add(names[1])
    return out


def import_graph() -> dict[str, set[str]]:
    """part -> the other parts it imports."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in _sources():
        src = _part(path)
        for dst in _imported_parts(ast.parse(path.read_text(encoding="utf-8"))):
            if dst != src and not dst.startswith("__"):
                graph[src].add(dst)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one part (Tarjan 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_parts():
    assert cycles(import_graph()) == []


def test_bench_is_outside_the_runtime_import_graph():
    importers = sorted(p for p, dsts in import_graph().items() if "bench" in dsts)
    assert importers in ([], ["cli"]), importers


def test_few_modules_directly_in_hub():
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL, top


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_files_and_functions_stay_small(path):
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_FILE_LINES, f"{path.name}: {text.count(chr(10))} lines"
    long = [f"{n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []
