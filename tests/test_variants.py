"""Course and student variants of the book's homework (``make release``).

Two course secrets, A and B: every question not listed as fixed gets different numbers;
the teacher's solution passes its own variant's self-checks and hidden tests and fails
the other's; a variant shows no number of the other and no trace of its secret; a
release with a secret is reproducible byte for byte.
"""

import json
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import numpy as np
import pytest

import lincls
from booktools import homework as hw
from booktools.homework import scoring
from booktools.homework.grading import read_values, self_check_names, values_path
from booktools.homework.table import ReleaseCosts
from booktools.homework.variants import ANSWERS_SUFFIX, with_parameters
from booktools.kernels import notebook_client
from lincls.homework.answers import GRADING_ENV, _diagnose, _load_registry

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book" / "homework"
HOMEWORK = sorted(BOOK.glob("*.ipynb"))
IDS = [p.stem for p in HOMEWORK]
# two course secrets as `python -m booktools new-secret` writes them (256 bits, hex)
SECRETS = {"A": "5b1f0c9e83d2a7461e9f03c2b8d57a6e0f4c1b9a2d8e7f3065a4c3b2e1d0f9a8",
           "B": "c47e2a90f1b3d85e6a0c9f7b2e4d1a3c8b5f0e9d7a6c4b2e1f3d5a7c9e0b2d4f"}

pytestmark = pytest.mark.homework


def release_variant(secret, out):
    """Release the homework with ``secret`` into ``out``/student and ``out``/grading; return
    ``{notebook: (seed, key, values)}`` of the teacher's solution as the release ran it (a
    spy on ``record_variant`` keeps its results: each notebook runs once per release)."""
    record_variant, ran = hw.variants.record_variant, {}

    def spy(nb, path, seed, key, *args, **kwargs):
        values = record_variant(nb, path, seed, key, *args, **kwargs)
        ran[Path(path).stem] = (seed, key, values)
        return values

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hw.variants, "record_variant", spy)
        hw.release(BOOK, out / "student", grading=out / "grading", seed=secret)
    return ran


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each secret released (student and grading versions; A twice, to compare), two
    releases side by side, and the values the teacher's solution computed for each."""
    tmp = tmp_path_factory.mktemp("variants")
    jobs = {"A": SECRETS["A"], "B": SECRETS["B"], "A2": SECRETS["A"]}
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = {name: pool.submit(release_variant, secret, tmp / name)
                for name, secret in jobs.items()}
        ran = {name: job.result() for name, job in done.items()}
    out = {"tmp": tmp}
    for name, secret in SECRETS.items():
        assert {stem: run[:2] for stem, run in ran[name].items()} == {
            p.stem: (hw.derive_seed(secret, p.stem), hw.variants.variant_key(secret, p.stem))
            for p in HOMEWORK}
        out[name] = {stem: run[2] for stem, run in ran[name].items()}
    return out


def files(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def as_array(value):
    value = value["ndarray"] if isinstance(value, dict) else value
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None


def same(a, b):
    x, y = as_array(a), as_array(b)
    if x is None or y is None or x.shape != y.shape:
        return a == b
    return bool(np.allclose(x, y, rtol=1e-9, atol=1e-12))


@pytest.mark.parametrize("path", HOMEWORK, ids=IDS)
def test_every_variable_question_changes_with_the_seed(runs, path):
    nb = nbformat.read(path, 4)
    fixed = set(hw.fixed_names(nb))
    (exp_a, chk_a), (exp_b, chk_b) = runs["A"][path.stem], runs["B"][path.stem]
    values_a, values_b = {**exp_a, **chk_a}, {**exp_b, **chk_b}
    assert set(values_a) == set(values_b)
    assert fixed <= set(values_a), f"fixed names nothing uses: {fixed - set(values_a)}"
    assert len(fixed) < len(values_a), "a homework whose every answer is fixed"
    for name in values_a:
        if name in fixed:
            assert same(values_a[name], values_b[name]), f"{name} is listed as fixed"
        else:
            assert not same(values_a[name], values_b[name]), f"{name} does not vary"


@pytest.mark.parametrize("path", HOMEWORK, ids=IDS)
def test_solution_passes_its_own_checks_and_fails_the_others(runs, path):
    fixed = set(hw.fixed_names(nbformat.read(path, 4)))
    for mine, other in (("A", "B"), ("B", "A")):
        reg = {v: _load_registry(runs["tmp"] / v / "student" / f"{path.stem}{ANSWERS_SUFFIX}")
               for v in (mine, other)}
        for name, value in runs[mine][path.stem][1].items():
            value = as_array(value)
            assert _diagnose(reg[mine]["kdf"], reg[mine]["answers"][name], name, value)[0]
            right = _diagnose(reg[other]["kdf"], reg[other]["answers"][name], name, value)[0]
            assert right == (name in fixed), f"{name}: {mine}'s answer against {other}'s check"


def execute(nb, path):
    """Run ``nb`` as grading does: ``expected`` publishes the values it compares. (In a
    process of the pool of `graded`, spawned for it: the variable stays there.)"""
    os.environ[GRADING_ENV] = "1"
    notebook_client(nb, path.parent, timeout=600, allow_errors=True,
                    record_timing=False).execute()
    return nb


@pytest.fixture(scope="module")
def graded(runs):
    """Each homework's grading version (variant A's expected values), run on A's data and
    on B's: ``{(notebook, "A" or "B"): executed notebook}``. Two run side by side: this
    module's tests run on one pytest worker (``--dist loadfile``), which would otherwise
    run these 16 notebooks one at a time while the other worker has nothing left to do."""
    jobs = {}
    for path in HOMEWORK:
        grading = runs["tmp"] / "A" / "grading" / path.name
        seed_b = hw.derive_seed(SECRETS["B"], path.stem)
        jobs[path.stem, "A"] = (nbformat.read(grading, 4), grading)
        jobs[path.stem, "B"] = (with_parameters(nbformat.read(grading, 4), grading, seed_b),
                                grading)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = {job: pool.submit(execute, *args) for job, args in jobs.items()}
        return {job: future.result() for job, future in done.items()}


def failed_cells(nb, grading):
    """The test cells that lose their points: an error (nbgrader's verdict), or values
    that differ from the teacher's in the values file of ``grading``."""
    errors = {c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.cell_type == "code"
              and any(o.get("output_type") == "error" for o in c.get("outputs", []))}
    version = nbformat.read(grading, 4)
    verdicts = scoring.confirm(nb, scoring.cell_tolerances(version),
                               read_values(values_path(grading)))
    return errors | {grade_id for grade_id, why in verdicts.items() if why}


@pytest.mark.parametrize("path", HOMEWORK, ids=IDS)
def test_solution_passes_its_own_hidden_tests_and_fails_the_others(runs, graded, path):
    grading = runs["tmp"] / "A" / "grading" / path.name
    nb = nbformat.read(grading, 4)
    own = graded[path.stem, "A"]
    assert failed_cells(own, grading) == set()
    assert all("wrong" not in "".join(o.get("text", "") for o in c.get("outputs", []))
               for c in own.cells if c.cell_type == "code")
    # the same grading version (A's expected values) on B's data
    other = graded[path.stem, "B"]
    fixed = set(hw.fixed_names(nb))
    teacher = nbformat.read(path, 4)
    variable = {c.metadata["nbgrader"]["grade_id"] for c in teacher.cells
                if hw.is_grade_cell(c) and c.cell_type == "code"
                and set(re.findall(r'expected\("([^"]+)"', c.source)) - fixed}
    assert variable <= failed_cells(other, grading), variable - failed_cells(other, grading)


@pytest.mark.parametrize("path", HOMEWORK, ids=IDS)
def test_a_variant_shows_no_number_of_the_other(runs, path):
    text = "".join(p.read_text() for p in (runs["tmp"] / "A" / "student").glob(f"{path.stem}*"))
    exp_b, chk_b = runs["B"][path.stem]
    fixed = set(hw.fixed_names(nbformat.read(path, 4)))
    for name, value in {**exp_b, **chk_b}.items():
        arr = as_array(value)
        if name in fixed or arr is None:
            continue
        for x in arr.ravel():
            if x != round(x):  # a fraction: its digits would be a leak
                assert repr(float(x)) not in text and f"{x:.6f}" not in text, (name, x)


def test_no_secret_in_the_release_or_the_package(runs):
    roots = [runs["tmp"] / v for v in ("A", "B", "A2")] + [Path(lincls.__file__).parent]
    for root in roots:
        for p in root.rglob("*"):
            if p.is_file():
                data = p.read_bytes()
                for secret in SECRETS.values():
                    assert secret.encode() not in data, p


def test_every_variant_holds_the_questions_bound(runs):
    """The registries of two course variants and the book's agree on everything but the
    salt, the grid and the digest: the bound is the question's, not the answer's."""
    public = ("kind", "atol", "shape", "normalized", "bound")
    shipped = _load_registry(hw.ANSWERS)["answers"]
    for path in HOMEWORK:
        a, b = (_load_registry(runs["tmp"] / v / "student" / f"{path.stem}{ANSWERS_SUFFIX}")
                ["answers"] for v in ("A", "B"))
        assert set(a) == set(b) and set(a) <= set(shipped)
        for name in a:
            stated = [{k: reg[name][k] for k in public} for reg in (a, b, shipped)]
            assert stated[0] == stated[1] == stated[2], name


def test_release_with_a_secret_is_reproducible(runs):
    tmp = runs["tmp"]
    for kind in ("student", "grading"):
        first, second = files(tmp / "A" / kind), files(tmp / "A2" / kind)
        assert first == second
        assert len([p for p in first if p.suffix == ".ipynb"]) == len(HOMEWORK)
    seeds = set()
    for path in HOMEWORK:
        nb = nbformat.read(tmp / "A" / "student" / path.name, 4)
        cell = nb.cells[hw.variants.parameters_index(nb)]
        assert f"ANSWERS = '{path.stem}{ANSWERS_SUFFIX}'" in cell.source
        seeds.add(int(re.search(r"SEED = (\d+)", cell.source)[1]))
    assert len(seeds) == len(HOMEWORK)  # each homework its own seed


def test_one_variant_per_student(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\ns01,Ada\ns02,Alan\n")
    ids = hw.read_roster(roster)
    assert ids == ["s01", "s02"]
    src = BOOK / "homework2.ipynb"
    costs = ReleaseCosts(seconds=0.1)
    written = hw.release(src, tmp_path / "out", grading=tmp_path / "grading",
                         seed=SECRETS["A"], students=ids, costs=costs)
    assert written == [tmp_path / "out" / sid / src.name for sid in ids]
    sources = [nbformat.read(p, 4) for p in written]
    params = [nb.cells[hw.variants.parameters_index(nb)].source for nb in sources]
    assert params[0] != params[1]
    for sid in ids:
        assert f"SEED = {hw.derive_seed(SECRETS['A'], 'homework2', sid)}\n" in (
            (tmp_path / "out" / sid / src.name).read_text().replace("\\n", "\n"))
        assert (tmp_path / "grading" / sid / f"homework2{ANSWERS_SUFFIX}").exists()
        # the teacher's values of the grading version's expected calls, never the student's
        assert read_values(values_path(tmp_path / "grading" / sid / src.name))
        assert not (tmp_path / "out" / sid / "homework2.expected.json").exists()
    # the teacher's cost table: per self-check, the cheaper of the two students' variants
    weakest = {row["name"]: row for row in costs.weakest()}
    assert set(weakest) == set(self_check_names(nbformat.read(src, 4)))
    for name, row in weakest.items():
        mine = [r for r in costs.rows if r["name"] == name]
        assert row["variants"] == 2 and row["hashes"] == min(r["hashes"] for r in mine)
        assert row["student"] in ids and row["search"] is not None
    # Novikoff's bound needs no answer (the prior), and the updates are a small count
    assert weakest["homework2.updates_and_bound"]["search"] < 10**4 < weakest[
        "homework2.updates_and_bound"]["uniform"]
    assert "Weakest variant" in costs.table()
    for bad in ("", "id\ns 01\n", "id\ns01\ns01\n"):
        roster.write_text(bad)
        with pytest.raises(ValueError):
            hw.read_roster(roster)
    with pytest.raises(ValueError, match="secret"):
        hw.release(src, tmp_path / "x", students=ids)


def test_the_book_keeps_the_public_seed():
    for path in HOMEWORK:
        nb = nbformat.read(path, 4)
        cell = nb.cells[hw.variants.parameters_index(nb, path)]
        assert "SEED = 0\n" in cell.source and "ANSWERS = None" in cell.source
        assert json.loads(json.dumps(nb.metadata["lincls"]))["fixed"] is not None
