"""The two packages: lincls never imports booktools, and neither has an import cycle."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"lincls": ROOT / "lincls", "booktools": ROOT / "tools" / "booktools"}


def _module_name(path, package, top):
    parts = [package, *path.relative_to(top).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path, name, modules=()):
    """Absolute names of every module ``path`` imports, at any depth (lazy imports too).

    ``from package import submodule`` imports the submodule (and runs the package's
    ``__init__`` first, as every import of a submodule does): an edge to the submodule.
    """
    is_package = path.name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                module = ".".join(base[: len(base) - node.level + 1] + [node.module or ""])
            else:
                module = node.module
            module = module.rstrip(".")
            subs = {f"{module}.{a.name}" for a in node.names} & set(modules)
            found.update(subs)
            if len(subs) < len(node.names):
                found.add(module)
    return found


def graph(package):
    top = PACKAGES[package]
    modules = {_module_name(p, package, top): p for p in sorted(top.rglob("*.py"))}
    return {name: {m for m in _imports(path, name, modules) if m in modules and m != name}
            for name, path in modules.items()}


def cycles(edges):
    """Every module that lies on a cycle (depth-first search, colours)."""
    on_cycle, state = set(), {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in edges[node]:
            if state.get(nxt) == "open":
                on_cycle.update(stack[stack.index(nxt):])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in edges:
        if node not in state:
            visit(node, [])
    return on_cycle


def test_lincls_imports_nothing_of_booktools():
    top = PACKAGES["lincls"]
    offenders = {p.relative_to(ROOT).as_posix(): sorted(
        m for m in _imports(p, _module_name(p, "lincls", top)) if m.split(".")[0] == "booktools")
                 for p in top.rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycle(package):
    assert cycles(graph(package)) == set()


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {"a", "b", "c"}
    assert cycles({"a": {"b"}, "b": set()}) == set()


def test_the_graph_reads_relative_and_lazy_imports():
    edges = graph("booktools")
    assert "booktools.homework.notebook" in edges["booktools.homework.grading"]
    assert "booktools.homework.grading" in edges["booktools.homework.validation"]
    assert "booktools.homework.cli" in edges["booktools.homework"]
    assert edges["booktools.homework.cli"] >= {"booktools.homework.publish"}
    assert "booktools.homework" not in edges["booktools.homework.cli"]
