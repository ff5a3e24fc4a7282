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
    long = [
        f"{n.name} ({n.end_lineno - n.lineno + 1} lines)"
        for n in ast.walk(ast.parse(text))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


ABOVE_THE_SEAM = ("core", "cli", "service", "wyoming", "satellites", "bench")
"""Parts that may hold the orchestrator (the Hub); everything else sits below the turn seam."""


def hub_leaks(path: Path, tree: ast.AST) -> list[str]:
    """Where a module below the seam takes the Hub (a parameter named ``hub``) or imports it
    (``hub.core.hub`` or the name ``Hub``)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            if "hub" in [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]:
                out.append(f"{path.name}:{node.lineno} {getattr(node, 'name', 'lambda')}(hub)")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "hub.core.hub" or (
                node.module.startswith("hub") and any(a.name == "Hub" for a in node.names)
            ):
                out.append(f"{path.name}:{node.lineno} imports the Hub")
        elif isinstance(node, ast.Import) and any(a.name == "hub.core.hub" for a in node.names):
            out.append(f"{path.name}:{node.lineno} imports the Hub")
    return out


def _below_the_seam(path: Path) -> bool:
    rel = path.relative_to(PACKAGE)
    return len(rel.parts) > 1 and rel.parts[0] not in ABOVE_THE_SEAM


def test_the_seam_check_finds_a_leak():
    leaky = ast.parse(
        "from hub.core.hub import Hub\ndef node(hub, state):\n    pass\n"
        "f = lambda hub: hub\nimport hub.core.hub\n"
    )
    assert len(hub_leaks(Path("x.py"), leaky)) == 4
    assert hub_leaks(Path("x.py"), ast.parse("def node(state, ctx):\n    pass\n")) == []
    assert _below_the_seam(PACKAGE / "graph" / "nodes.py")
    assert not _below_the_seam(PACKAGE / "core" / "hub.py")
    assert not _below_the_seam(PACKAGE / "settings.py")


def test_nothing_below_the_seam_takes_or_imports_the_hub():
    leaks = [
        leak
        for path in _sources()
        if _below_the_seam(path)
        for leak in hub_leaks(path, ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert leaks == []


# --- inside a part: modules, circles and lazy imports (issue 17) ----------------------------

KNOWN_CIRCLES: list[list[str]] = []
"""Module circles inside a part that another branch is removing (none left; keep it empty)."""


def _module(path: Path) -> str:
    """``intents.rules`` for hub/intents/rules.py, ``intents`` for hub/intents/__init__.py."""
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imported_modules(tree: ast.AST, known: set[str]) -> set[str]:
    """The hub modules (as :func:`_module` names them) a module imports, at the top or inside
    functions: ``from hub.a import b`` is ``a.b`` when that is a module, else ``a``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = node.module.split(".")
            if names[0] != "hub" or len(names) < 2:
                continue
            base = ".".join(names[1:])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in known else base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "hub" and len(names) > 1:
                    out.add(".".join(names[1:]))
    return out


def module_graph() -> dict[str, set[str]]:
    """module -> the other modules of the same part it imports (``a.b`` -> ``{a.c, ...}``)."""
    paths = {_module(p): p for p in _sources()}
    known = set(paths)
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in paths.items():
        part = name.split(".")[0]
        for dst in _imported_modules(ast.parse(path.read_text(encoding="utf-8")), known):
            if dst != name and dst.split(".")[0] == part and "." in name:
                graph[name].add(dst)
    return graph


def test_the_module_graph_sees_imports_inside_functions():
    graph = module_graph()
    assert "intents.match" in graph["intents.rules"]
    assert "asr.coverage" in graph["asr.confusion"]  # imported inside a function


def test_no_import_circle_inside_a_part():
    """No two modules of one part import each other, directly or round a longer circle (an
    import inside a function counts: it only hides the circle)."""
    found = [c for c in cycles(module_graph()) if c not in KNOWN_CIRCLES]
    assert found == [], f"import circles inside a part: {found}"


def _import_runs(fn: ast.AST):
    """Each import inside ``fn`` with the run of import statements it ends (the imports right
    before it in the same block, and itself)."""
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            run: list[ast.stmt] = []
            for stmt in block:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    run.append(stmt)
                    yield stmt, list(run)
                else:
                    run = []


def _lazy_comment(lines: list[str], run: list[ast.stmt]) -> bool:
    """True when a run of imports (see :func:`_import_runs`) carries ``# lazy: <reason>`` on
    one of its lines or on the comment line right above its first import."""
    first, last = run[0].lineno, run[-1].end_lineno or run[-1].lineno
    if any("# lazy:" in lines[i - 1] for i in range(first, last + 1)):
        return True
    return first >= 2 and lines[first - 2].strip().startswith("# lazy:")


def _unexplained(text: str) -> list[int]:
    """Lines of the imports inside functions of ``text`` that have no ``# lazy:`` comment."""
    lines = text.splitlines()
    out = set()
    for fn in ast.walk(ast.parse(text)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.update(
                node.lineno for node, run in _import_runs(fn) if not _lazy_comment(lines, run)
            )
    return sorted(out)


def lazy_imports_without_reason() -> list[str]:
    """``file:line`` of each import inside a function without a ``# lazy:`` comment."""
    return [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in _sources()
        for line in _unexplained(path.read_text(encoding="utf-8"))
    ]


def test_the_lazy_check_reads_comments():
    assert _unexplained("def f():\n    # lazy: heavy\n    import a\n    import b\n") == []
    assert _unexplained("def f():\n    x = 1\n    import a  # lazy: heavy\n    import b\n") == []
    assert _unexplained("def f():\n    x = 1\n    import a\n") == [3]
    assert _unexplained(
        "def f():\n    # lazy: heavy\n    import a\n    x = 1\n    import b\n"
        "    if x:\n        import c\n"
    ) == [5, 7]
    assert _unexplained("import a\n\n\ndef f():\n    return a\n") == []


def test_every_import_inside_a_function_says_why():
    """Imports go at the top of the module; one inside a function is there only when loading
    it lazily matters (a heavy engine, hub --help's start), said in a ``# lazy:`` comment."""
    assert lazy_imports_without_reason() == []
