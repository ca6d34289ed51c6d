"""The package's shape: no import cycles, the library never imports the CLI, and no
module grows past what a reader can hold (read from the source, not by importing it)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "ragrail"
MAX_LINES = 450

# Modules allowed over MAX_LINES, each with the reason it is still one file.
LONG_MODULES: dict[str, str] = {
    "ragrail.calls.providers": "the Anthropic, OpenAI and HTTP-endpoint providers share one error "
    "classification and Retry-After reading; each provider class is about 60 lines",
}


@dataclass(frozen=True)
class Import:
    target: str  # a module of the package, e.g. "ragrail.judge.core"
    top_level: bool  # runs when the importing module loads (not in a function, not TYPE_CHECKING)
    line: int


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The package module ``name`` is, or is inside (``ragrail.judge.core.Judge``)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """Every import of a package module in ``path``, marked top-level or deferred."""
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            anchor = name.split(".") if is_package else name.split(".")[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]

    def visit(node: ast.AST, top_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                for target in targets(child):
                    resolved = _resolve(target, modules)
                    if resolved is not None and resolved != name:
                        found.append(Import(resolved, top_level, child.lineno))
            else:
                deferred = isinstance(
                    child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                ) or (isinstance(child, ast.If) and _is_type_checking(child))
                visit(child, top_level and not deferred)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


def import_graph(top_level_only: bool) -> dict[str, dict[str, int]]:
    """module -> {imported module: line}."""
    modules = package_modules()
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for imp in imports_of(name, path, modules):
            if imp.top_level or not top_level_only:
                edges.setdefault(imp.target, imp.line)
    return graph


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One cycle ``[a, b, ..., a]`` of the graph, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def is_cli(module: str) -> bool:
    return module == "ragrail.cli" or module.startswith("ragrail.cli.")


# ---------------------------------------------------------------- the checker itself


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def test_the_checker_sees_relative_deferred_and_type_checking_imports(tmp_path):
    _write(
        tmp_path / "ragrail",
        {
            "__init__.py": "",
            "a.py": "from ragrail import b\nfrom .sub import c\n",
            "b.py": "def f():\n    import ragrail.a\n",
            "sub/__init__.py": "from . import c\n",
            "sub/c.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ragrail.a import X\n"
                "from ..b import f\n"
            ),
        },
    )
    modules = {module_name(p, tmp_path): p for p in sorted((tmp_path / "ragrail").rglob("*.py"))}
    got = {
        name: sorted((i.target, i.top_level) for i in imports_of(name, path, modules))
        for name, path in modules.items()
    }
    assert got == {
        "ragrail": [],
        "ragrail.a": [("ragrail.b", True), ("ragrail.sub.c", True)],
        "ragrail.b": [("ragrail.a", False)],
        "ragrail.sub": [("ragrail.sub.c", True)],
        "ragrail.sub.c": [("ragrail.a", False), ("ragrail.b", True)],
    }


def test_the_checker_finds_a_cycle_and_only_a_real_one():
    assert find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": 1, "c": 1}, "b": {"c": 1}, "c": {}}) is None


# ---------------------------------------------------------------- the package


def test_no_import_cycles_among_top_level_imports():
    """A cycle of module-level imports works or breaks with import order; deferred
    imports (inside functions) are how a module reaches a heavier one, and are allowed."""
    cycle = find_cycle(import_graph(top_level_only=True))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_import_cycles_at_all():
    """Deferred and type-only imports count too: a loop through a function's import is a
    loop a reader has to untangle, and a type checker resolves TYPE_CHECKING ones."""
    cycle = find_cycle(import_graph(top_level_only=False))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# The floors, from the bottom: a module may import its own floor and those below, never
# one above (deferred and type-only imports included). The longest matching prefix names
# a module's floor.
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    (
        "ground: errors, text helpers, file reading",
        (
            "ragrail._version",
            "ragrail.errors",
            "ragrail.crash",
            "ragrail.exit_guard",
            "ragrail.text",
            "ragrail.fileio",
            "ragrail.jsonio",
            "ragrail.stats",
            "ragrail.gcpause",
        ),
    ),
    ("records every stage shares", ("ragrail.records",)),
    (
        "the stages: golden set, system, scoring, judge, stores, logs, importers",
        (
            "ragrail.project",
            "ragrail.scaffold",
            "ragrail.golden",
            "ragrail.calls",
            "ragrail.system",
            "ragrail.scoring",
            "ragrail.diagnose",
            "ragrail.judge",
            "ragrail.run",
            "ragrail.store",
            "ragrail.online",
            "ragrail.interop",
            "ragrail.shard_golden",
        ),
    ),
    (
        "the flow: settings, diffs, outputs, shards, sweeps, jobs and their backends",
        (
            "ragrail.settings",
            "ragrail.flags",
            "ragrail.diff",
            "ragrail.outputs",
            "ragrail.shards",
            "ragrail.sweep",
            "ragrail.jobs",
            "ragrail.backends",
        ),
    ),
    ("reports and the labelling page", ("ragrail.reports", "ragrail.label")),
    ("the application layer", ("ragrail.app",)),
    ("the faces", ("ragrail", "ragrail.api", "ragrail.pytest_plugin", "ragrail.cli", "ragrail.__main__")),
]


def floor_of(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (
                best is None or len(prefix) > best[1]
            ):
                best = (index, len(prefix))
    return None if best is None else best[0]


def test_the_floor_checker_takes_the_longest_prefix():
    assert floor_of("ragrail") == len(FLOORS) - 1
    assert floor_of("ragrail.records.results") == 1
    assert floor_of("ragrail.text.matching") == 0
    assert floor_of("ragrail.cli.run") == len(FLOORS) - 1


def test_every_module_has_a_floor():
    assert [m for m in package_modules() if floor_of(m) is None] == []


def test_no_import_runs_up_a_floor():
    upward = [
        f"{module} ({FLOORS[floor_of(module) or 0][0]}) imports {target} "
        f"({FLOORS[floor_of(target) or 0][0]}) at line {line}"
        for module, edges in import_graph(top_level_only=False).items()
        for target, line in edges.items()
        if (floor_of(target) or 0) > (floor_of(module) or 0)
    ]
    assert upward == []


def test_no_library_module_imports_the_cli():
    """The CLI parses flags and prints; the library (everything else) never reaches
    into it, not even inside a function."""
    graph = import_graph(top_level_only=False)
    offenders = [
        f"{module} imports {target} (line {line})"
        for module, edges in graph.items()
        if not is_cli(module) and module != "ragrail.__main__"
        for target, line in edges.items()
        if is_cli(target)
    ]
    assert offenders == []


def test_the_cli_is_reachable_from_its_entry_points():
    graph = import_graph(top_level_only=False)
    assert any(is_cli(m) for m in graph), "no ragrail.cli module"
    assert "ragrail.cli" in graph["ragrail.__main__"]


@pytest.mark.parametrize("name", sorted(package_modules()))
def test_no_module_is_longer_than_a_reader_can_hold(name):
    path = package_modules()[name]
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if name in LONG_MODULES:
        return
    assert lines <= MAX_LINES, f"{path.relative_to(SRC)} has {lines} lines (at most {MAX_LINES})"


def test_every_listed_long_module_is_still_long_and_still_there():
    """An exception outlives its reason otherwise."""
    modules = package_modules()
    for name in LONG_MODULES:
        assert name in modules, f"{name} is listed in LONG_MODULES but does not exist"
        lines = len(modules[name].read_text(encoding="utf-8").splitlines())
        assert lines > MAX_LINES, f"{name} has {lines} lines: take it off LONG_MODULES"
