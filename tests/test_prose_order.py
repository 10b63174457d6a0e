"""Every {eval}`prose['k']` of a chapter comes after a code cell that assigns prose['k'].

The build runs a chapter inline (myst-nb, ``execute_notebooks: inline``): an {eval} role is
evaluated when its markdown cell is reached, after the code cells above it and before the
ones below (``booktools.sphinxext.execution._eval_plan``). A key first assigned in a later
cell is not yet in ``prose`` there, and the page shows a blank where the number should be
(the portability layer cannot see it: the blank is the same on every CPU).

A static check, fast: each code cell is parsed (IPython syntax turned into Python) and these
ways of filling ``prose`` are recognized, in the cell where they run:

- ``prose["k"] = ...`` (also augmented and unpacking targets);
- ``prose[f"k-{x}"] = ...`` (an f-string: a pattern, ``{x}`` matches anything);
- ``prose[name] = ...`` inside ``for ... in <literal>``: every string in the loop's iterable;
- ``prose.update(k=..., **{"k": ...})``, ``prose.update({"k": ...})`` and
  ``prose.update({f"k-{x}": ... for x in ...})`` (its key as in the cases above);
- a helper ``def f(name, value): prose[name] = ...`` called as ``f("k", ...)`` (or with an
  f-string, or in a literal loop as above).

An assignment the check cannot read (a key from elsewhere) is an error of the check itself,
so a new way of filling ``prose`` is noticed rather than silently accepted.

Run as a script (``python tests/test_prose_order.py [book/x.md ...]``) it lists every use
before assignment.
"""

import ast
import re
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from IPython.core.inputtransformer2 import TransformerManager
from myst_nb.core.read import read_myst_markdown_notebook
from myst_parser.config.main import MdParserConfig

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))
ROLE = re.compile(r"\{eval\}`([^`]+)`")  # as booktools.sphinxext.execution.ROLE
USED_KEY = re.compile(r"""prose\[(["'])(.+?)\1\]""")


def _pattern(joined):
    """A regex for the keys an f-string can produce: its {...} parts match anything."""
    return "".join(re.escape(part.value) if isinstance(part, ast.Constant) else ".+"
                   for part in joined.values)


def _strings(node):
    return [n.value for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


class _Assigned(ast.NodeVisitor):
    """The keys (exact, and regex patterns) a cell puts into prose; `setters` maps a helper
    function's name to the position of its key parameter and is shared across cells."""

    def __init__(self, setters):
        self.setters, self.keys, self.patterns, self.unreadable = setters, set(), set(), []
        self._loops, self._function = [], None

    def _key(self, node, where):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.keys.add(node.value)
        elif isinstance(node, ast.JoinedStr):
            self.patterns.add(_pattern(node))
        elif (isinstance(node, ast.Name) and self._function is not None
              and node.id in self._function[1]):
            self.setters[self._function[0]] = self._function[1].index(node.id)
        elif isinstance(node, ast.Name) and self._loops:
            self.keys.update(s for loop in self._loops for s in _strings(loop.iter))
        else:
            self.unreadable.append(f"{where}: {ast.unparse(node)}")

    def visit_For(self, node):
        self._loops.append(node)
        self.generic_visit(node)
        self._loops.pop()

    def visit_FunctionDef(self, node):
        outer, self._function = self._function, (node.name, [a.arg for a in node.args.args])
        self.generic_visit(node)
        self._function = outer

    def visit_Subscript(self, node):
        if (isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
                and node.value.id == "prose"):
            self._key(node.slice, "prose[...] =")
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault")
                and isinstance(func.value, ast.Name) and func.value.id == "prose"):
            for kw in node.keywords:
                if kw.arg is not None:
                    self.keys.add(kw.arg)
                elif isinstance(kw.value, ast.Dict):
                    for key in kw.value.keys:
                        self._key(key, "prose.update(**{...})")
                else:
                    self.unreadable.append(f"prose.update(**{ast.unparse(kw.value)})")
            for arg in node.args[:1]:
                if func.attr == "setdefault":
                    self._key(arg, "prose.setdefault")
                elif isinstance(arg, ast.Dict):
                    for key in arg.keys:
                        self._key(key, "prose.update({...})")
                elif isinstance(arg, ast.DictComp):   # its generators act as literal loops
                    self._loops.extend(arg.generators)
                    self._key(arg.key, "prose.update({... for ...})")
                    del self._loops[len(self._loops) - len(arg.generators):]
                else:
                    self.unreadable.append(f"prose.update({ast.unparse(arg)})")
        elif isinstance(func, ast.Name) and func.id in self.setters:
            position = self.setters[func.id]
            if position < len(node.args):
                self._key(node.args[position], f"{func.id}(...)")
        self.generic_visit(node)


def code_cells_and_roles(path):
    """The chapter's cells as the build reads them: ("code", source) and ("role", expr)."""
    nb = read_myst_markdown_notebook(path.read_text(encoding="utf-8"), MdParserConfig(), path=path)
    for cell in nb.cells:
        if cell.cell_type == "code":
            yield "code", cell
        elif cell.cell_type == "markdown":
            for expr in ROLE.findall(cell.source):
                yield "role", expr


def uses_before_assignment(path):
    """[(expression, key, why)] for every {eval} that reads a prose key not yet assigned."""
    setters, keys, patterns, hits, later = {}, set(), set(), [], []
    transform = TransformerManager().transform_cell
    for kind, item in code_cells_and_roles(path):
        if kind == "code":
            if "skip-execution" in item.metadata.get("tags", []):
                continue
            visitor = _Assigned(setters)
            visitor.visit(ast.parse(transform(item.source)))
            if visitor.unreadable:
                raise AssertionError(f"{path.name}: cannot read which prose key "
                                     f"{visitor.unreadable} assigns")
            keys |= visitor.keys
            patterns |= visitor.patterns
            later.append((visitor.keys, visitor.patterns))
            continue
        for _, key in USED_KEY.findall(item):
            if key not in keys and not any(re.fullmatch(p, key) for p in patterns):
                hits.append((item, key))
    # say whether the key is assigned further down or nowhere
    result = []
    for expr, key in hits:
        anywhere = any(key in k or any(re.fullmatch(p, key) for p in ps) for k, ps in later)
        why = "assigned only in a later cell" if anywhere else "never assigned"
        result.append((expr, key, why))
    return result


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_eval_comes_after_its_prose_key(path):
    assert uses_before_assignment(path) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_prose_is_made_once(path):
    """One ``prose = ...`` per chapter: JupyterLab (and a reader's "Run all") evaluates the
    {eval} roles after every cell has run, and a second ``prose = {}`` would leave the
    roles above it without their keys (the teachers' chapter had two)."""
    transform = TransformerManager().transform_cell
    made = [item for kind, item in code_cells_and_roles(path) if kind == "code"
            for node in ast.walk(ast.parse(transform(item.source)))
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "prose" for t in node.targets)]
    assert len(made) <= 1, f"{path.name}: prose is made {len(made)} times"


#: the only {eval} expressions the build evaluates (_config.yml's eval_regex); any other is a
#: build warning, so it is refused here before a build
EVAL_REGEX = yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]["eval_regex"]


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_eval_is_one_the_build_evaluates(path):
    exprs = [item for kind, item in code_cells_and_roles(path) if kind == "role"]
    assert [e for e in exprs if not re.fullmatch(EVAL_REGEX, e)] == []


def test_the_check_sees_a_key_assigned_too_late(tmp_path):
    chapter = tmp_path / "x.md"
    chapter.write_text(textwrap.dedent("""\
        ---
        jupytext:
          text_representation:
            extension: .md
            format_name: myst
        kernelspec:
          name: python3
          display_name: Python 3
        ---

        ```{code-cell} ipython3
        prose = {}

        def keep(name, value):
            prose[name] = value
        ```

        Early {eval}`prose['a']`, {eval}`prose['b-1']`, {eval}`prose['c']`, {eval}`prose['d']`.

        ```{code-cell} ipython3
        prose['a'] = 1
        for i in [1]:
            prose[f'b-{i}'] = i
        keep('c', 3)
        ```

        Late {eval}`prose['a']`, {eval}`prose['b-1']`, {eval}`prose['c']`, {eval}`prose['e']`,
        {eval}`prose['f-x']`, {eval}`prose['zz']`.

        ```{code-cell} ipython3
        for name, v in [('d', 4)]:
            prose[name] = v
        prose.update(e=5)
        prose.update({f"f-{k}": v for k, v in {"x": 6}.items()})
        ```
        """))
    later = "assigned only in a later cell"
    assert uses_before_assignment(chapter) == [
        ("prose['a']", "a", later), ("prose['b-1']", "b-1", later), ("prose['c']", "c", later),
        ("prose['d']", "d", later), ("prose['e']", "e", later), ("prose['f-x']", "f-x", later),
        ("prose['zz']", "zz", "never assigned")]


if __name__ == "__main__":
    for chapter in [Path(p) for p in sys.argv[1:]] or CHAPTERS:
        for expr, key, why in uses_before_assignment(chapter):
            print(f"{chapter.name}: {{eval}}`{expr}` reads prose[{key!r}], {why}")
