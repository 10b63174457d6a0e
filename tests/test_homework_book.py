"""The book's own homework notebooks: validate, release, rehearse (``make release``).

Every ``book/homework/*.ipynb`` is tested, plus the fixture teacher notebook, so the
tests never run on an empty set. nbval (run twice by ``make homework``) checks that the
teacher versions run and reproduce their outputs; these tests check the student side.
"""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from booktools import homework as hw

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "homework" / "teacher" / "fixture1.ipynb"
NOTEBOOKS = sorted((ROOT / "book" / "homework").glob("*.ipynb")) + [FIXTURE]
IDS = [p.stem for p in NOTEBOOKS]

pytestmark = pytest.mark.homework


def toc_files():
    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                yield node["file"]
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    return list(walk(yaml.safe_load((ROOT / "_toc.yml").read_text())))


def test_every_homework_in_the_toc_is_tested():
    listed = [f for f in toc_files() if f.startswith("book/homework/")]
    for name in listed:
        assert (ROOT / f"{name}.ipynb") in NOTEBOOKS, f"{name}.ipynb is missing"


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """Release every notebook twice, each into a folder of its own (a release replaces
    its output folder)."""
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    out = {}
    for path in NOTEBOOKS:
        out[path] = (hw.release(path, first / path.stem)[0],
                     hw.release(path, second / path.stem)[0])
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_teacher_version_passes_check(path):
    assert [str(e) for e in hw.validate(path)] == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_student_version_passes_check_and_release_is_idempotent(path, released):
    first, second = released[path]
    assert [str(e) for e in hw.validate(first)] == []
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_student_version_has_no_solution_and_no_output(path, released):
    """No solution or hidden-test line reaches the student file.

    A line that the teacher version also shows outside every solution region (say,
    inside the exercise's text) is public, and is not searched for.
    """
    teacher = nbformat.read(path, as_version=4)
    assert any(hw.is_solution_cell(c) for c in teacher.cells), "a homework without exercises"
    public = "\n".join(hw.public_lines(teacher))
    secret = {ln.strip() for ln in hw.solution_lines(teacher) if len(ln.strip()) > 4}
    secret = {ln for ln in secret if ln not in public}
    text = released[path][0].read_text()
    student = nbformat.read(released[path][0], as_version=4)
    sources = "\n".join(c.source for c in student.cells)
    for line in secret:
        assert line not in sources, f"{path.name}: solution line in student version: {line}"
        assert json.dumps(line)[1:-1] not in text, f"{path.name}: in student file: {line}"
    for cell in student.cells:
        assert not cell.get("outputs") and cell.get("execution_count") is None


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_student_version_runs_except_for_the_exercises(path):
    results = hw.rehearse(path)
    answers = [r for r in results if r["role"] == "answer"]
    assert answers, "no answer cells"
    for r in results:
        where = f"{path.name} cell {r['cell'] + 1} ({r['role']})"
        if r["role"] == "answer":
            assert r["error"] in (None, "NotImplementedError"), where
            assert r["teacher_error"] is None, where
        else:
            assert r["error"] is None, where
    # a stub that does not raise at once must sit inside a function body
    student = hw.release_notebook(nbformat.read(path, as_version=4))
    for r in answers:
        if r["error"] is None:
            src = student.cells[r["cell"]].source
            assert re.search(r"^\s+raise NotImplementedError\(\)", src, re.M), src


def test_grading_versions_keep_calls_and_their_values_files_the_values():
    """``make release`` wrote grading versions: their hidden tests call ``expected`` as
    the teacher notebooks do (the grading kernel receives no value of the teacher's) and
    use no lincls name; the values file beside each holds a value for every key."""
    grading = ROOT / "_build" / "release" / "grading"
    if not grading.is_dir():
        pytest.fail("run `python -m booktools release ... --grading` first (make release)")
    from booktools.homework import grading as rules
    from booktools.homework.notebook import hidden_sources

    paths = sorted(grading.glob("*.ipynb"))
    assert [p.name for p in paths] == [p.name for p in NOTEBOOKS if p != FIXTURE]
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        teacher = nbformat.read(ROOT / "book" / "homework" / path.name, as_version=4)
        assert hidden_sources(nb) == hidden_sources(teacher), path.name
        banned = rules.lincls_names(nb)
        keys = set()
        for index, text in hidden_sources(nb).items():
            keys |= set(rules._expected_calls(text))
            outside = {n.id for n in rules._outside_expected(rules._parse(text))
                       if isinstance(n, ast.Name)}
            assert not (outside & banned), f"{path.name} cell {index + 1}"
        values = rules.read_values(rules.values_path(path))
        assert set(values) == keys, path.name
        # no value of the teacher's in what the grading kernel receives: the sources
        sources = "\n".join(c.source for c in nb.cells)
        fractions = [x for x in re.findall(r"-?\d+\.\d{6,}", json.dumps(values))]
        assert fractions and not [x for x in fractions if x in sources], path.name


# --- homework 3's hidden tests against wrong answers ------------------------------
HOMEWORK3 = ROOT / "book" / "homework" / "homework3.ipynb"
#: An answer that keeps the last of equal minima (pocket without ratchet). With seed 2
#: no prefix the hidden tests also try (5, 20, 80 updates) has two equal minima.
LAST_MINIMUM = {"hw3-q2-solution": (
    "def pocket_index(weights, Xa, y):\n"
    "    errors = [count_errors(w, Xa, y) for w in weights]\n"
    "    return len(errors) - 1 - int(np.argmin(errors[::-1]))\n")}
#: A count one too high, and question 4's pocket errors computed with it (and with
#: the student's own pocket_index) rather than by fitting the pocket.
OWN_COUNT = {
    "hw3-q1-solution": ("def count_errors(w, Xa, y):\n"
                        "    return int(np.sum((Xa @ w > 0) != (y > 0))) + 1\n"),
    "hw3-q4-solution": (
        "def compare_errors():\n"
        "    ref = Perceptron(shuffle=False, max_iter=30).fit(X_train, y_train)\n"
        "    runs, _ = perceptron_trace(X_train, y_train, max_iter=30)\n"
        "    w = runs[pocket_index(runs, Xa_train, y_train)]\n"
        "    Xa_test = augment(X_test)\n"
        "    return {'perceptron': (float(1 - ref.score(X_train, y_train)),\n"
        "                           float(1 - ref.score(X_test, y_test))),\n"
        "            'pocket': (count_errors(w, Xa_train, y_train) / len(y_train),\n"
        "                       count_errors(w, Xa_test, y_test) / len(y_test))}\n"),
}


def _run_homework3(nb, seed, answers, values):
    """Run the code cells of ``nb`` up to question 4's tests with ``SEED = seed`` and the
    answer cells in ``answers`` replaced: ``{grade_id: outcome}`` of its test cells,
    "pass" or the part that failed, "visible" or "hidden". ``expected(key, v)`` records
    ``v`` in ``values`` if that is empty (the teacher's run), else publishes it, and the
    hidden part fails if a value it published differs from the one recorded, as grading
    does (``booktools.homework.scoring``)."""
    import matplotlib

    from booktools.homework.scoring import matches
    from lincls.homework.answers import _to_json

    matplotlib.use("Agg")
    record = not values
    outcome, ns, published = {}, {}, []

    def expected(key, value, rtol=1e-5, atol=1e-8):
        if record:
            values.setdefault(key, _to_json(value))
        else:
            published.append(matches(_to_json(value), values[key], rtol, atol))
        return value

    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type != "code" or gid.endswith("-check"):
            continue
        source = answers.get(gid, cell.source)
        if "parameters" in cell.metadata.get("tags", []):
            source = f"SEED = {seed}\nANSWERS = None"
        source = "\n".join(ln for ln in source.splitlines() if not ln.startswith("%"))
        visible, _, hidden = source.partition(hw.BEGIN_HIDDEN)
        outcome[gid] = "pass"
        published.clear()
        for part, text in (("visible", visible), ("hidden", hidden)):
            try:
                exec(text, ns)
            except AssertionError:
                outcome[gid] = part
                break
        if not all(published):
            outcome[gid] = "hidden"
        if gid == "hw3-setup":  # recording, then grading
            ns["expected"] = expected
        if gid == "hw3-q4-tests":
            break
    return {gid: out for gid, out in outcome.items() if gid.endswith("-tests")}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("wrong, failing", [(LAST_MINIMUM, "hw3-q2-tests"),
                                            (OWN_COUNT, "hw3-q4-tests")])
def test_homework3_hidden_tests_catch_wrong_answers(wrong, failing):
    """Question 2's hidden tests see a pocket that keeps the last minimum, whatever the
    seed's ties; question 4's compare with the teacher's E_in, not with the student's
    own count of errors. The visible tests pass both wrong answers."""
    nb = nbformat.read(HOMEWORK3, 4)
    values = {}
    teacher = _run_homework3(nb, 2, {}, values)
    assert "hw3.pocket_prefixes" in values and set(teacher.values()) == {"pass"}, teacher
    assert _run_homework3(nb, 2, wrong, values)[failing] == "hidden"
