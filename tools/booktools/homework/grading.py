"""Graded hidden tests that stand apart from the self-checks and from lincls.

Defined in chapter "For teachers" (``book/teachers.md``).

Five rules, enforced by :func:`hidden_test_problems` (part of validation, so ``release``
refuses a notebook that breaks them; chapter "For teachers" states them):

1. a hidden test never uses a lincls function or class (other than the data loaders of
   :mod:`lincls.datasets`) outside :func:`expected`: a student has lincls too, and
   ``my_answer = lincls_function`` would pass a test that compares the two;
2. a hidden test never asserts a value that a self-check protects: whoever inverts the
   self-check (see :func:`lincls.homework.answers.brute_force_cost`) would also pass it;
3. a hidden test never uses a name that the visible cells computed with lincls, but as
   an argument of the student's own function;
4. a hidden test reaches no module by name (``importlib``, ``__import__``, ``sys``,
   ``eval`` and the like, or a string that holds ``lincls``);
5. every autograded test cell with points compares a value with :func:`expected` in its
   hidden tests (its ``rtol=`` and ``atol=``, if given, literal numbers): without one,
   nothing the student's code cannot forge decides its points.

Expected values come from the teacher's solution. In the teacher notebook a hidden test
writes ``expected("key", expression)``: run there, the expression is computed by the
teacher's own code. :func:`record_expected` (``release --grading DIR``) executes the
teacher notebook and records every such value; the *grading* version, the one nbgrader
uses as its source, keeps the calls as they are, and the values go to a file beside it,
``NAME.expected.json`` (:func:`values_path`), that never enters the kernel. While
grading, ``expected`` publishes the student's value of the same expression, and
:mod:`booktools.homework.scoring` compares it with the teacher's outside the kernel: a
student's code can forge nbgrader's verdict (drop the asserts, catch the errors), but not
a value it never sees. So a fifth rule: every test cell with points has at least one
``expected`` in its hidden tests. (Issue 19 builds on this: a parameters cell, set per
course or per student, changes the data the teacher's solution runs on, and these values
follow.)
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path

import numpy as np

from lincls.homework.answers import EXPECTED_ENV, _to_json  # noqa: F401

from .notebook import execute

#: lincls modules whose names a hidden test may use: data, not answers.
DATA_MODULES = ("lincls.datasets",)


def literal(value):
    """Python source of a recorded value (floats in their exact, round-trip ``repr``)."""
    if isinstance(value, dict):
        return f"np.array({literal(value['ndarray'])}, dtype={value['dtype']!r})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, float) and not np.isfinite(value):
        return f"float({str(value)!r})"
    return repr(value)


# ---------------------------------------------------------------------------------
# The rules
# ---------------------------------------------------------------------------------
def _parse(text):
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def lincls_names(nb):
    """Names a notebook binds from lincls (``import lincls`` binds ``lincls``), except
    the data loaders of :data:`DATA_MODULES`."""
    names = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = _parse("\n".join(line for line in cell.source.split("\n")
                                if not line.lstrip().startswith(("%", "!"))))
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lincls"):
                if node.module not in DATA_MODULES:
                    names.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.Import):
                names.update((a.asname or a.name).split(".")[0] for a in node.names
                             if a.name.startswith("lincls"))
    return names


def _outside_expected(tree):
    """The nodes of ``tree`` that are not inside an ``expected(...)`` call."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "expected":
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _compared(tree):
    """The operands a test compares: both sides of ``==``, ``<``, ..., and the
    arguments of calls such as ``np.allclose``, ``np.isclose``, ``np.array_equal``."""
    for node in _outside_expected(tree):
        if isinstance(node, ast.Compare):
            yield node.left
            yield from node.comparators
        elif isinstance(node, ast.Call):
            func = node.func
            name = getattr(func, "attr", None) or getattr(func, "id", "")
            if "close" in name or "equal" in name:
                yield from node.args


def _number_literals(tree):
    """Numbers and lists of numbers that a test compares with, outside ``expected``.

    (A seed or a loop bound is not an assertion, so only compared values count.)
    """
    found = []
    for node in _compared(tree):
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, (bool, str)):
            continue
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            continue
        if arr.size and np.all(np.isfinite(arr)):
            found.append(arr)
    return found


def self_check_names(nb):
    """Names of the answers the notebook's ``check("name", ...)`` calls protect."""
    names = []
    for cell in nb.cells:
        tree = _parse(cell.source) if cell.cell_type == "code" else None
        for node in ast.walk(tree) if tree else ():
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                names.append(node.args[0].value)
    return names


def protected_by(values, names, registry=None):
    """``(value, name)`` pairs where a value is what the self-check ``name`` accepts."""
    from lincls.homework.answers import ANSWERS, _diagnose, _load_registry

    data = _load_registry(ANSWERS if registry is None else registry)
    hits = []
    for name in dict.fromkeys(names):
        entry = data["answers"].get(name)
        if entry is None:
            continue
        shape = np.squeeze(np.empty(entry["shape"])).shape
        for value in values:
            arr = np.asarray(value, dtype=float)
            if np.squeeze(arr).shape != shape:
                continue
            if entry["kind"] == "integer" and not np.all(arr == np.round(arr)):
                continue
            if _diagnose(data["kdf"], entry, name, arr)[0]:
                hits.append((arr, name))
    return hits


#: lincls names a hidden test may use on data, like the loaders: they prepare data
#: (``augment`` adds the column of ones) and implement no answer.
DATA_NAMES = ("augment",)
#: Routes to a module that no name in the notebook binds: a hidden test may use none.
DYNAMIC = ("importlib", "__import__", "eval", "exec", "compile", "globals", "locals",
           "vars", "getattr", "setattr", "builtins", "__builtins__", "modules")


def _code(text):
    """Cell text as Python: IPython's magics and shell lines become blank lines."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in text.split("\n"))


def _cell_parts(nb):
    """``[(index, kind, tree)]`` of the code cells: ``kind`` is "answer" for an answer
    cell (the whole teacher cell), else "public" (its lines outside hidden regions)."""
    from .notebook import _regions, _source_lines, is_solution_cell

    parts = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        lines = _source_lines(cell)
        if is_solution_cell(cell):
            parts.append((index, "answer", _parse(_code("\n".join(lines)))))
            continue
        hidden = {n for kind, b, e in _regions(lines, "<notebook>", index, "code")
                  if kind == "hidden" for n in range(b, e + 1)}
        text = "\n".join(line for n, line in enumerate(lines) if n not in hidden)
        parts.append((index, "public", _parse(_code(text))))
    return parts


def _bound(node):
    """Names a statement binds (assignment and loop targets, definitions)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets = {ast.Assign: lambda n: n.targets, ast.AugAssign: lambda n: [n.target],
               ast.AnnAssign: lambda n: [n.target], ast.For: lambda n: [n.target],
               ast.NamedExpr: lambda n: [n.target],
               ast.With: lambda n: [i.optional_vars for i in n.items if i.optional_vars]}
    get = targets.get(type(node))
    if get is None:
        return set()
    return {n.id for t in get(node) for n in ast.walk(t) if isinstance(n, ast.Name)}


def _reached(node, names, student):
    """Names of ``names`` that ``node`` uses other than as an argument handed to a
    function of the student's (``student``): data passed to an answer is no answer."""
    found, todo = set(), [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "expected":
            continue
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id in student and n.func.id not in names):
            continue
        if isinstance(n, ast.Name) and n.id in names:
            found.add(n.id)
        todo.extend(ast.iter_child_nodes(n))
    return found


def lincls_results(nb):
    """``({cell index: names}, student names)``: the names that the public code above a
    cell's hidden tests (and that cell's own visible lines) holds computed from lincls
    (``pocket = Pocket().fit(...)``, and what is computed from those), except by handing
    them to the student's functions. A hidden test that uses one compares with lincls.

    Cells are read in order: a name rebound from something else, or in an answer cell,
    is the student's again; bindings inside loops, branches and functions only add.
    """
    parts = _cell_parts(nb)
    student = {name for _, kind, tree in parts if kind == "answer" and tree
               for node in ast.walk(tree) for name in _bound(node)}
    tainted = lincls_names(nb) - set(DATA_NAMES)
    at = {}
    for index, kind, tree in parts:
        for stmt in tree.body if tree else ():
            if kind == "answer":
                tainted -= {n for node in ast.walk(stmt) for n in _bound(node)}
                continue
            for top, node in [(True, stmt)] + [(False, n) for n in ast.walk(stmt)][1:] * 2:
                bound = _bound(node)
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                    base = node.value.func  # results.append(Pocket().fit(...))
                    while isinstance(base, (ast.Attribute, ast.Subscript)):
                        base = base.value
                    bound = {base.id} if isinstance(base, ast.Name) else set()
                if not bound:
                    continue
                body = node.iter if isinstance(node, ast.For) else getattr(node, "value", node)
                if body is not None and _reached(body, tainted, student):
                    tainted |= bound
                elif top and isinstance(node, (ast.Assign, ast.AnnAssign)):
                    tainted -= bound
        at[index] = tainted - lincls_names(nb)
    return at, student


def _dynamic(tree):
    """What in a hidden test reaches a module by a route no import shows."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in DYNAMIC:
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and (node.attr in DYNAMIC
                                                  or node.attr.startswith("__")):
            found.add("." + node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and "lincls" in node.value:
            found.add(repr(node.value))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [
                a.name for a in node.names]
            for module in modules:
                top = module.split(".")[0]
                if (top == "lincls" and module not in DATA_MODULES) or top in (
                        "importlib", "builtins", "sys"):
                    found.add(f"import {module}")
    return sorted(found)


def visible_expected(nb):
    """``[(cell index, message)]`` for each ``expected`` outside a hidden region: there it
    stays in the grading version, where it returns what it is given and always passes."""
    problems = []
    for index, _, tree in _cell_parts(nb):
        if tree is None:
            continue
        if any(isinstance(n, ast.Name) and n.id == "expected"
               or isinstance(n, ast.Attribute) and n.attr == "expected"
               for n in ast.walk(tree)):
            problems.append((index, "expected(...) outside a hidden-test region: the grading "
                                    "version keeps it, and it returns the student's own value "
                                    "(a test that always passes); move it between "
                                    "'### BEGIN HIDDEN TESTS' and '### END HIDDEN TESTS'"))
    return problems


def hidden_test_problems(nb, hidden_sources, registry=None):
    """Problems of the hidden tests of one notebook: ``[(cell index, message)]``.

    ``hidden_sources`` maps a cell index to the text of its hidden-test regions.
    """
    banned = lincls_names(nb)
    results_at, student = lincls_results(nb)
    checks = self_check_names(nb)
    problems = visible_expected(nb)
    for index, text in hidden_sources.items():
        tree = _parse(text)
        if tree is None:
            problems.append((index, "the hidden tests are not valid Python"))
            continue
        used = sorted({n.id for n in _outside_expected(tree)
                       if isinstance(n, ast.Name) and n.id in banned})
        if used:
            problems.append((index, (
                f"hidden tests compare against lincls ({', '.join(used)}), which students "
                "have too; compute the expected value from the teacher's solution with "
                'expected("key", ...)')))
        computed = sorted(_reached(tree, results_at.get(index, set()), student))
        if computed:
            problems.append((index, (
                f"hidden tests use {', '.join(computed)}, computed from lincls in lines the "
                "student sees; compare with expected(\"key\", ...) of the teacher's "
                "solution instead")))
        dynamic = _dynamic(tree)
        if dynamic:
            problems.append((index, (
                f"hidden tests may not reach a module by name ({', '.join(dynamic)}): "
                "import what they need in a visible cell, and never lincls")))
        for value, name in protected_by(_number_literals(tree), checks, registry):
            problems.append((index, (
                f"hidden tests assert {value.tolist()}, the answer the self-check {name!r} "
                "protects; whoever inverts that check would pass them")))
        try:
            expected_calls(text)
        except ValueError as exc:
            problems.append((index, str(exc)))
    return problems


def unconfirmed_problems(nb, hidden_sources):
    """Rule 5: ``[(cell index, message)]`` for each autograded test cell with points
    whose hidden tests call no :func:`expected`."""
    return [(index, (
        f"this test cell is worth {_points(nb.cells[index]):g} point(s) but its hidden tests "
        'compare no value with expected("key", ...): the student\'s code runs first in the '
        "same kernel and can make every assert pass, so grading gives a cell its points "
        "only when the values it publishes through expected match the teacher's"))
        for index in unconfirmed_test_cells(nb, hidden_sources)]


def unconfirmed_test_cells(nb, hidden_sources):
    """Indices of the autograded test cells with points whose hidden tests (in
    ``hidden_sources``, by cell index) call no :func:`expected`."""
    from .notebook import is_grade_cell, is_solution_cell

    found = []
    for index, cell in enumerate(nb.cells):
        if (cell.cell_type == "code" and is_grade_cell(cell) and not is_solution_cell(cell)
                and _points(cell) > 0):
            tree = _parse(hidden_sources.get(index, ""))
            if tree is None or not any(
                    isinstance(n, ast.Call) and getattr(n.func, "id", None) == "expected"
                    for n in ast.walk(tree)):
                found.append(index)
    return found


def _points(cell):
    try:
        return float(cell.metadata["nbgrader"].get("points", 0))
    except (TypeError, ValueError):
        return 0.0


# ---------------------------------------------------------------------------------
# Grading versions
# ---------------------------------------------------------------------------------
#: The teacher's values of a grading version's ``expected`` calls: ``NAME`` + this,
#: beside ``NAME.ipynb`` (never in a student's folder, nor in the grading kernel's).
VALUES_SUFFIX = ".expected.json"
VALUES_FORMAT = 1
#: The tolerances of ``np.allclose``: floats match within ``atol + rtol * |teacher's|``.
RTOL, ATOL = 1e-5, 1e-8


def values_path(notebook):
    """The file of the teacher's values beside the grading version ``notebook``."""
    notebook = Path(notebook)
    return notebook.with_name(notebook.stem + VALUES_SUFFIX)


def values_text(values):
    """The text of a values file holding ``{key: recorded value}``."""
    return json.dumps({"format": VALUES_FORMAT, "values": dict(sorted(values.items()))},
                      indent=1) + "\n"


def read_values(path):
    """``{key: recorded value}`` of a values file (:func:`values_text`)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != VALUES_FORMAT or not isinstance(
            data.get("values"), dict):
        raise ValueError(f"{path}: not a file of expected values (format {VALUES_FORMAT})")
    return data["values"]


def _expected_nodes(tree):
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "expected"]


def expected_calls(text):
    """``[(key, rtol, atol)]`` of the ``expected`` calls in ``text``, in order.

    Raises ValueError for a call the grader cannot read: a key that is not a string
    literal, or a tolerance that is not a literal number >= 0 (the grader reads them
    here, in the grading version, never from the kernel)."""
    tree = _parse(text)
    calls = []
    for node in sorted(_expected_nodes(tree) if tree else [],
                       key=lambda n: (n.lineno, n.col_offset)):
        if not (len(node.args) == 2 and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            raise ValueError('expected() takes a string key and a value: expected("key", '
                             "value)")
        tol = {"rtol": RTOL, "atol": ATOL}
        for kw in node.keywords:
            try:
                number = ast.literal_eval(kw.value)
            except (ValueError, TypeError, SyntaxError):
                number = None
            if kw.arg not in tol or isinstance(number, bool) or not isinstance(
                    number, (int, float)) or not number >= 0:
                raise ValueError(f"expected({node.args[0].value!r}): only rtol= and atol= "
                                 "may follow the value, each a literal number >= 0")
            tol[kw.arg] = float(number)
        calls.append((node.args[0].value, tol["rtol"], tol["atol"]))
    return calls


def _expected_calls(text):
    """The keys of the ``expected`` calls in ``text`` (empty if it is not Python)."""
    return [key for key, _, _ in expected_calls(text)]


def record_expected(nb, path, timeout=600):
    """Execute a teacher notebook; return ``{key: value}`` of its ``expected`` calls."""
    import tempfile

    import nbformat

    from ..kernels import notebook_client

    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "expected.jsonl"
        record.touch()
        old = os.environ.get(EXPECTED_ENV)
        os.environ[EXPECTED_ENV] = str(record)
        try:
            copy = nbformat.from_dict(json.loads(json.dumps(nb)))
            client = notebook_client(
                copy, Path(path).parent, timeout=timeout, record_timing=False,
                # every value is written when it is computed: stop the kernel at once
                # rather than wait a second or two for it to exit
                shutdown_kernel="immediate",
            )
            execute(client, path, stderr=subprocess.DEVNULL)  # the kernel's own log lines
        finally:
            if old is None:
                del os.environ[EXPECTED_ENV]
            else:
                os.environ[EXPECTED_ENV] = old
        values = {}
        for line in record.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item["key"] in values and values[item["key"]] != item["value"]:
                raise ValueError(f"{path}: expected({item['key']!r}) got two values")
            values[item["key"]] = item["value"]
    return values


def grading_notebook(nb, path, values, hidden_sources):
    """The grading version and its values file's text: the notebook with the cells its
    student version keeps (:func:`~.notebook.student_cells`: nbgrader's student version,
    made from it, must hold no other), otherwise unchanged (its ``expected`` calls stay,
    so the grading kernel receives no value of the teacher's), and the values of the keys
    its hidden tests name, each of which must have run."""
    import nbformat

    from .notebook import student_cells

    keys = {key for text in hidden_sources.values() for key in _expected_calls(text)}
    for index, text in hidden_sources.items():
        for key in _expected_calls(text):
            if key not in values:
                raise ValueError(f"{path}, cell {index + 1}: expected({key!r}) never ran")
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    out.cells = student_cells(out)
    return out, values_text({k: v for k, v in values.items() if k in keys})
