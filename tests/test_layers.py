"""The shape of qola's imports, read from the AST of every module: a ratchet on import cycles
and on function-level imports of qola modules (issue 23), so the shape gets no worse while
the redesign makes it better."""

from __future__ import annotations

import ast
import collections
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent

# The import cycles of today, counting function-level imports (not TYPE_CHECKING ones).
# This list may only shrink, and must be empty when issue 23 is done: a module may leave a
# cycle, none may join one, and two cycles may not merge.
KNOWN_CYCLES: list[set[str]] = [
]

# Function-level imports of qola modules whose line carries no `# lazy: <reason>` comment,
# per module. These numbers may only shrink: a new function-level import needs its reason on
# its line (it buys speed), or it belongs at the top of the module.
KNOWN_LAZY: dict[str, int] = {
    "__main__": 3, "batch": 4, "checkout": 4, "cli": 14, "cmake_env": 4, "cmake_out": 3,
    "commands.bump": 8, "commands.checkout": 5, "commands.diff": 1,
    "commands.exec": 1, "commands.foreach": 1, "commands.freeze": 2, "commands.init": 7,
    "commands.outdated": 1, "commands.status": 3, "commands.verify": 6, "complete": 3,
    "console": 1, "demo": 2, "gitfiles": 1, "manifest": 1, "modules": 2,
    "noop": 10, "observe": 3, "patches": 2, "pending": 5, "platforms": 1, "queries": 2,
    "render": 3, "session": 7,
}


class Import(NamedTuple):
    module: str  # the importing module, without the "qola." prefix
    target: str  # the imported qola module, without the prefix
    line: int
    lazy: bool  # inside a function
    type_only: bool  # under `if TYPE_CHECKING:`
    reason: bool  # a `# lazy:` comment on one of its lines


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "qola").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(
    node: ast.AST, lazy: bool, type_only: bool
) -> Iterator[tuple[ast.stmt, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, lazy, type_only
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _statements(child, True, type_only)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for statement in child.body:
                yield from _statements(ast.Module([statement], []), lazy, True)
            for statement in child.orelse:
                yield from _statements(ast.Module([statement], []), lazy, type_only)
        else:
            yield from _statements(child, lazy, type_only)


def _targets(node: ast.stmt, name: str, modules: dict[str, Path]) -> set[str]:
    found = set()
    if isinstance(node, ast.ImportFrom):
        source = node.module or ""
        if node.level:  # relative: resolved from the importing module's package
            package = name.split(".")
            if modules[name].name != "__init__.py":
                package = package[:-1]
            package = package[: len(package) - node.level + 1]
            source = ".".join(package + ([node.module] if node.module else []))
        for alias in node.names:
            found.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source)
    elif isinstance(node, ast.Import):
        for alias in node.names:
            dotted = alias.name.split(".")  # `import qola.a.b` imports qola.a too
            found.update(".".join(dotted[:n]) for n in range(1, len(dotted) + 1))
    return {t for t in found if t in modules and t != name and t != "qola"}


def _imports() -> list[Import]:
    modules = _modules()
    found = []
    for name, path in modules.items():
        text = path.read_text()
        lines = text.splitlines()
        for node, lazy, type_only in _statements(ast.parse(text), False, False):
            end = node.end_lineno or node.lineno
            reason = any("# lazy:" in lines[n - 1] for n in range(node.lineno, end + 1))
            for target in sorted(_targets(node, name, modules)):
                found.append(Import(name.removeprefix("qola."), target.removeprefix("qola."),
                                    node.lineno, lazy, type_only, reason))
    return found


def _cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.add(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _runtime_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for item in _imports():
        edges[item.module]  # every module is a node, importing or not
        if not item.type_only:
            edges[item.module].add(item.target)
            edges[item.target]
    return edges


def test_the_ast_reader_finds_each_kind_of_import():
    """The ratchets below could pass by reading nothing: known edges of each kind are found."""
    found = {(i.module, i.target, i.lazy, i.type_only) for i in _imports()}
    assert ("cli", "commands.checkout", True, False) in found  # in a function
    assert ("queries", "git", False, True) in found  # under TYPE_CHECKING
    assert ("noop", "options", False, False) in found  # at the top


def test_the_cycle_finder_finds_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(collections.defaultdict(set, edges)) == [{"a", "b", "c"}]


def test_no_module_joins_an_import_cycle():
    """Every cycle today (function-level imports counted) lies inside one known cycle."""
    for cycle in _cycles(_runtime_edges()):
        known = [k for k in KNOWN_CYCLES if cycle <= k]
        assert known, f"a new import cycle, or two cycles merged: {sorted(cycle)}"


def test_function_level_imports_of_qola_give_a_reason_or_are_known():
    """A function-level import of a qola module carries `# lazy: <reason>` on its line, or
    counts against its module's known number, which may only shrink."""
    unexplained = collections.Counter(
        i.module for i in {i._replace(target="") for i in _imports()}
        if i.lazy and not i.type_only and not i.reason
    )
    grown = {m: n for m, n in unexplained.items() if n > KNOWN_LAZY.get(m, 0)}
    assert not grown, (
        f"function-level qola imports without a `# lazy:` reason grew: {grown} "
        "(known: " + ", ".join(f"{m} {KNOWN_LAZY.get(m, 0)}" for m in grown) + ")"
    )


# The modules that may know a CMake configure runs qola: the commands, their output, and
# the entry points. Below them an error carries both wordings of its hint (qola.hints).
CMAKE_AWARE = {
    "cli", "render", "render_diff", "render_outdated", "cmake_out", "cmake_calls", "noop", "session"
}


def test_only_the_edge_imports_cmake_env():
    """No module below the commands and their output asks whether CMake runs qola."""
    importers = {i.module for i in _imports() if i.target == "cmake_env"}
    assert importers, "the AST reader found no import of cmake_env at all"
    below = {m for m in importers if m not in CMAKE_AWARE and not m.startswith("commands.")}
    assert not below, f"below the edge, these import cmake_env: {sorted(below)}"
