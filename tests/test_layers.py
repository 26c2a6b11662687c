"""qola's layers, read from the AST of every import (function-level and type-only ones
included): a module imports only from its own layer or a lower one, nothing imports in a
circle, and a function-level import says why it is one. The layers: docs/development.md."""

from __future__ import annotations

import ast
import collections
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent

# Bottom to top. A package's modules import from their own package or one listed before it.
LAYERS = ["base", "repo", "gitrun", "manifest", "sync", "history", "output", "commands"]
# The entry points above every layer: `python -m qola`, `python -m qola.cli`, the no-op,
# and `python -m qola.explain_stamp` (its earlier spelling).
TOP = {"__main__", "cli", "cli_options", "noop", "explain_stamp"}


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
        for target, line in _by_name(ast.parse(text), modules):  # counted as function-level
            reason = "# lazy:" in lines[line - 1]
            found.append(Import(name.removeprefix("qola."), target.removeprefix("qola."), line,
                                True, False, reason))  # fmt: skip
    return found


def _by_name(tree: ast.AST, modules: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """Imports by a name in a string: importlib.import_module("qola.x"), __import__("qola.x"),
    runpy.run_module("qola.x") (and the package of each, which they import first)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        if called in ("import_module", "__import__", "run_module") and (
            isinstance(first, ast.Constant) and isinstance(first.value, str)
        ):
            dotted = first.value.split(".")
            for n in range(2, len(dotted) + 1):
                if ".".join(dotted[:n]) in modules:
                    yield ".".join(dotted[:n]), node.lineno


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


def _layer(module: str) -> int:
    package = module.split(".")[0]
    return LAYERS.index(package) if package in LAYERS else len(LAYERS)


def _edges(with_type_only: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for item in _imports():
        edges[item.module]  # every module is a node, importing or not
        if with_type_only or not item.type_only:
            edges[item.module].add(item.target)
            edges[item.target]
    return edges


def _where(item: Import) -> str:
    return f"qola/{item.module.replace('.', '/')}.py:{item.line} imports {item.target}"


def test_the_ast_reader_finds_each_kind_of_import():
    """The rules below could pass by reading nothing: known edges of each kind are found."""
    found = {(i.module, i.target, i.lazy, i.type_only) for i in _imports()}
    assert ("cli", "commands.checkout", True, False) in found  # in a function
    assert ("gitrun.queries", "gitrun.git", False, True) in found  # under TYPE_CHECKING
    assert ("noop", "commands.options", False, False) in found  # at the top


def test_an_import_by_name_in_a_string_counts_too():
    tree = ast.parse('import importlib\nimportlib.import_module("qola.commands.checkout")\n')
    assert list(_by_name(tree, _modules())) == [("qola.commands", 2), ("qola.commands.checkout", 2)]


def test_the_cycle_finder_finds_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(collections.defaultdict(set, edges)) == [{"a", "b", "c"}]


def test_every_module_sits_in_a_layer():
    loose = [m for m in _modules() if m != "qola"
             and m.removeprefix("qola.").split(".")[0] not in {*LAYERS, *TOP}]  # fmt: skip
    assert not loose, f"modules in no layer: {loose} (LAYERS, TOP, docs/development.md)"


def test_no_module_imports_from_a_higher_layer():
    """Type-only imports too: a type from above is a dependency on above."""
    upward = sorted(_where(i) for i in _imports() if _layer(i.target) > _layer(i.module))
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_no_import_cycle():
    """Function-level imports counted: none hides a circle. (A type-only import may point
    back inside its own layer — the runner's helpers name the runner's type — but never up.)"""
    assert _cycles(_edges(with_type_only=False)) == []


def test_function_level_imports_of_qola_say_why():
    """An import inside a function is there for speed (it loads only for the command or the
    case that needs it); its line says so with `# lazy: <reason>`."""
    silent = sorted(_where(i) for i in _imports() if i.lazy and not i.type_only and not i.reason)
    assert not silent, "function-level imports without a `# lazy:` reason:\n" + "\n".join(silent)


def test_the_layer_table_in_development_md_names_every_module():
    """docs/development.md's table is where a newcomer looks a module up: each module is
    named in its layer's row (in backticks)."""
    import re

    rows: dict[str, set[str]] = {}
    doc = (ROOT / "docs" / "development.md").read_text()
    for line in doc.splitlines():
        row = re.match(r"\| (?:`(\w+)/`|top) \| (.*) \|$", line)
        if row:
            rows[row.group(1) or "top"] = set(re.findall(r"`(\w+)(?:\.py)?`", row.group(2)))
    assert set(rows) == {*LAYERS, "top"}
    for layer in LAYERS:
        modules = {f.stem for f in (ROOT / "qola" / layer).glob("*.py") if f.stem != "__init__"}
        missing = modules - rows[layer]
        assert not missing, f"docs/development.md: the {layer}/ row names no {sorted(missing)}"
    top = {f.stem for f in (ROOT / "qola").glob("*.py") if f.stem != "__init__"}
    assert top <= rows["top"], f"the top row names no {sorted(top - rows['top'])}"
