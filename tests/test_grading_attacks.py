"""A class of cheating students, graded for real (``make nbgrader``).

Homework 2 is released with one variant per student, and every attack that an
adversarial audit tried on the grader is one student's submission: the unanswered
notebook plus an attack cell (or, for the monkeypatch, wrong answers; for an attack on a
limit of the sandbox, which an honest student may also hit, the right answers plus the
attack cell, which must cost only that cell). All of them are
graded in one ``python -m booktools autograde`` run, by the real nbgrader, each kernel in
its own sandbox, beside an honest student (the teacher's solution) and a victim whose
files the attackers go after. Each attack scores what its answers are worth (zero, or full
marks for right answers beside an attack on a limit), the
honest and the victim students keep their full marks, and nothing outside the run
changes. Where an attack would gain only if it reached something it must not (a
solution on disk, the teacher's secret), the attack cell pastes in the teacher's
solution when it succeeds: its score of zero shows that it did not.

:class:`TestHostileClass` grades a class of the small fixture homework in which the
attacks are the files themselves (FIFOs, links, parser bombs, grading metadata changed)
or what the kernel sends (a message nested 100,000 deep), beside honest students: the
run ends with status 0, every roster row written, each attack a zero with a note (or
full marks, where only a message was hostile), the honest students full marks.
"""

import copy
import csv
import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from grading_layout import spread
from nbformat.v4 import new_code_cell

from booktools import homework as hw

ROOT = Path(__file__).resolve().parents[1]
HW2 = ROOT / "book" / "homework" / "homework2.ipynb"
SECRET = "4b7e1d9a3c5f0e2b8d6a4c1e7f3b9d5a0c2e4f6b8d1a3c5e7f9b0d2a4c6e8f1b"
MARKER = "TEACHERS-OWN-9f3c1a"  # in the grader's environment and command line
TIMEOUT = 30  # seconds a cell may run

pytestmark = pytest.mark.nbgrader


def solutions(teacher):
    """The source of the teacher's answer cells, in order."""
    return "\n\n".join(c.source for c in teacher.cells if hw.is_solution_cell(c)
                       and c.cell_type == "code")


def attacks(teacher, victim, grading, exfil):
    """``{student: attack cell source}``; ``victim`` is the victim's submitted notebook,
    ``grading`` the teacher's grading folder, ``exfil`` a folder outside the run."""
    reward = solutions(teacher)  # what an attack that succeeds pastes in
    steal = """
import os
found = []
for top, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if top + d not in ("/proc", "/sys", "/dev")]
    found += [os.path.join(top, f) for f in files if f.endswith((".ipynb", ".json", ".db"))]
"""
    steal = f"REWARD = {reward!r}\n" + steal
    return {
        # the audit's attacks
        "input-transformer": """
get_ipython().input_transformers_cleanup.append(
    lambda lines: [l for l in lines if not l.lstrip().startswith("assert")])""",
        "ast-transformer": """
import ast
class Swallow(ast.NodeTransformer):
    def visit_Module(self, node):
        handler = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None,
                                    body=[ast.Pass()])
        node.body = [ast.Try(body=node.body or [ast.Pass()], handlers=[handler], orelse=[],
                             finalbody=[])]
        return ast.fix_missing_locations(node)
get_ipython().ast_transformers.append(Swallow())""",
        "no-tracebacks": """
ip = get_ipython()
ip.showtraceback = ip._showtraceback = lambda *a, **k: None""",
        "read-solutions": steal + """
import json, re
if any(path.endswith(".expected.json") for path in found):  # the teacher's values
    exec(REWARD, globals())
for path in found:
    try:
        nb = json.load(open(path))
        for cell in nb["cells"]:
            text = "".join(cell["source"])
            if "BEGIN SOLUTION" in text and cell["cell_type"] == "code":
                exec(text, globals())
    except Exception:
        pass
from pathlib import Path
for rel in ("source/homework2/homework2.ipynb", "release/homework2/homework2.ipynb"):
    for up in Path.cwd().parents:
        if (up / rel).exists():
            for cell in json.load(open(up / rel))["cells"]:
                exec("".join(cell["source"]), globals())""",
        "overwrite-classmate": steal + f"""
import shutil
mine = os.path.abspath("homework2.ipynb")
for path in found + [{str(victim)!r}]:
    if path != mine:
        try:
            with open(path, "w") as f:
                f.write("{{}}")
        except Exception:
            pass
for path in [{str(grading)!r}]:
    try:
        shutil.rmtree(path)
    except Exception:
        pass""",
        "exfiltrate": steal + f"""
import shutil
for target in ({str(exfil)!r}, "/tmp/exfil"):
    try:
        os.makedirs(target, exist_ok=True)
        for i, path in enumerate(found):
            shutil.copy(path, os.path.join(target, str(i) + os.path.basename(path)))
    except Exception:
        pass""",
        "proc-secrets": """
import os
leaked = "BOOKTOOLS_COURSE_SECRET" in os.environ
for pid in os.listdir("/proc"):
    for what in ("environ", "cmdline"):
        try:
            text = open(f"/proc/{pid}/{what}", "rb").read().decode(errors="replace")
        except OSError:
            continue
        leaked |= "BOOKTOOLS_COURSE_SECRET" in text or "autograde" in text
if leaked:
""" + textwrap.indent(reward, "    "),
        "monkeypatch": None,  # wrong answers, below
        # the limits
        "fork-bomb": """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass""",
        "sleep-forever": "import time\ntime.sleep(10**6)",
        "allocate-20GiB": "hog = bytearray(20 * 2**30)\nhog[::4096] = b'x' * len(hog[::4096])",
        "output-100MB": "for _ in range(100):\n    print('x' * 10**6)",
        "iopub-bomb": IOPUB_BOMB,
    }


#: A message nested 100,000 deep, sent as the kernel's output (the grader's JSON parser
#: would exhaust its recursion on it).
IOPUB_BOMB = """
from ipykernel.kernelbase import Kernel
kernel = Kernel.instance()
kernel.session.send(kernel.iopub_socket, "display_data", b"[" * 100_000 + b"]" * 100_000,
                    parent=kernel.get_parent())"""


WRONG = {  # wrong answers for the monkeypatch attack (by grade id)
    "hw2-q1-solution": "def is_mistake(w, x, y):\n    return bool(y * np.dot(w, x) < 0)",
    "hw2-q2-solution": "def perceptron_epoch(w, X, y, eta=1.0):\n    return np.array(w, float), 0",
    "hw2-q3-solution": "def learnable_gates():\n    return ['and', 'or']",
    "hw2-q4-solution": "def updates_and_bound(X, y, eta=1.0):\n    return 0, 1.0",
}
PATCH = ("import lincls, numpy as np\n"
         "np.allclose = np.array_equal = np.isclose = lambda *a, **k: True\n"
         "lincls.homework.check = lambda *a, **k: True")


def with_answers(nb, answers):
    """``nb`` with its answer cells' sources replaced (``{grade id: source}``)."""
    out = copy.deepcopy(nb)
    for cell in out.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    return out


def with_cell(nb, source):
    """``nb`` with a cell of ``source`` after its setup cell (imports)."""
    out = copy.deepcopy(nb)
    at = 1 + next(i for i, c in enumerate(out.cells)
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "hw2-setup")
    out.cells.insert(at, new_code_cell(source))
    return out


def tree(path):
    """``{relative path: sha256}`` of every file under ``path``."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(path).rglob("*")) if p.is_file()}


#: Attacks on the sandbox's limits that a student with the right answers makes too: the
#: attack cell fails (time, output, memory), grading of the notebook goes on, and the
#: answers earn their marks.
HONEST_LIMITS = ("sleep-forever", "allocate-20GiB", "output-100MB", "iopub-bomb")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attacks")
    teacher = nbformat.read(HW2, 4)
    exfil = tmp / "exfil"
    victim_path = tmp / "submitted" / "victim" / "homework2" / "homework2.ipynb"
    plan = attacks(teacher, victim_path, tmp / "grading", exfil)
    roster = ["honest", "victim", *plan]
    (tmp / "roster.csv").write_text("id,name\n" + "".join(f"{s},{s}\n" for s in roster))
    hw.release(HW2, tmp / "student", grading=tmp / "grading", seed=SECRET,
               students=hw.read_roster(tmp / "roster.csv"))
    own = {s: nbformat.read(tmp / "student" / s / HW2.name, 4) for s in roster}
    solved = {c.metadata.nbgrader["grade_id"]: c.source for c in teacher.cells
              if hw.is_solution_cell(c)}
    subs = {"honest": with_answers(own["honest"], solved),
            "victim": with_answers(own["victim"], solved)}
    for sid, source in plan.items():
        if source is None:
            subs[sid] = with_cell(with_answers(own[sid], WRONG), PATCH)
        elif sid in HONEST_LIMITS:
            subs[sid] = with_cell(with_answers(own[sid], solved), source)
        else:
            subs[sid] = with_cell(own[sid], source)
    for sid, nb in subs.items():
        (tmp / "submitted" / sid / "homework2").mkdir(parents=True)
        nbformat.write(nb, tmp / "submitted" / sid / "homework2" / HW2.name)
    before = {"grading": tree(tmp / "grading"), "submitted": tree(tmp / "submitted"),
              "student": tree(tmp / "student")}
    out = tmp / f"grades-{MARKER}.csv"
    env = dict(os.environ, BOOKTOOLS_COURSE_SECRET=MARKER)
    run = subprocess.run(
        [sys.executable, "-m", "booktools", "autograde", str(tmp / "grading"),
         str(tmp / "submitted"), "--students", str(tmp / "roster.csv"), "--out", str(out),
         "--timeout", str(TIMEOUT)],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=1800)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    totals = {r["student"]: r for r in rows if r["cell"] == "total"}
    return {"tmp": tmp, "run": run, "rows": rows, "totals": totals, "before": before,
            "exfil": exfil, "attacks": list(plan)}


def score(row):
    return float(row["score"]) if row["score"] else None


def test_honest_and_victim_keep_full_marks(graded):
    for sid in ("honest", "victim"):
        total = graded["totals"][sid]
        assert score(total) == float(total["max_score"]) == 10.0, (total, graded["run"].stderr)


@pytest.mark.parametrize("attack", [
    "input-transformer", "ast-transformer", "no-tracebacks", "read-solutions",
    "overwrite-classmate", "exfiltrate", "proc-secrets", "monkeypatch", "fork-bomb"])
def test_attack_scores_zero(graded, attack):
    total = graded["totals"][attack]
    assert score(total) == 0.0, (total, graded["run"].stderr[-3000:])


@pytest.mark.parametrize("attack", HONEST_LIMITS)
def test_a_limit_stops_the_cell_and_grading_goes_on(graded, attack):
    total = graded["totals"][attack]
    assert score(total) == float(total["max_score"]) == 10.0, (
        total, graded["run"].stderr[-3000:])


def test_every_student_is_graded(graded):
    assert set(graded["totals"]) == {"honest", "victim", *graded["attacks"]}
    assert all(score(t) is not None for t in graded["totals"].values()), graded["run"].stderr


def test_nothing_outside_the_run_changed(graded):
    tmp, before = graded["tmp"], graded["before"]
    for name, files in before.items():
        assert tree(tmp / name) == files, name
    assert not graded["exfil"].exists()


def test_grades_file_holds_no_secret(graded):
    text = "".join(",".join(r.values()) for r in graded["rows"])
    assert SECRET not in text and "BEGIN SOLUTION" not in text


FIXTURE = ROOT / "tests" / "fixtures" / "homework" / "teacher" / "fixture1.ipynb"


class TestHostileClass:
    """Hostile files and a hostile kernel beside honest students, in one real run."""

    @pytest.fixture(scope="class")
    def run(self, tmp_path_factory):
        from test_autograde import metadata_attacks

        tmp = tmp_path_factory.mktemp("hostile")
        name = FIXTURE.stem
        teacher = nbformat.read(FIXTURE, 4)
        hw.release(FIXTURE, tmp / "student", grading=tmp / "grading")
        student = nbformat.read(tmp / "student" / FIXTURE.name, 4)
        solved = {c.metadata.nbgrader["grade_id"]: c.source for c in teacher.cells
                  if hw.is_solution_cell(c)}
        right = with_answers(student, solved)
        setup = next(i for i, c in enumerate(right.cells) if c.cell_type == "code")
        subs = {"honest": right, "honest-too": right}
        for sid, source in (("iopub-bomb", IOPUB_BOMB),
                            ("sleeper", "import time\ntime.sleep(10**6)")):
            subs[sid] = copy.deepcopy(right)
            subs[sid].cells.insert(setup + 1, new_code_cell(source))
        subs["duplicate-id"] = metadata_attacks(right)["duplicate-id"]
        files = ["fifo", "link-own", "hard-link", "deep-json", "dev-zero"]
        roster = [*subs, *files]
        grading = spread(tmp / "grading", FIXTURE, roster)
        for sid in roster:
            (tmp / "submitted" / sid / name).mkdir(parents=True)
        for sid, nb in subs.items():
            nbformat.write(nb, tmp / "submitted" / sid / name / FIXTURE.name)

        def place(sid):
            return tmp / "submitted" / sid / name / FIXTURE.name

        os.mkfifo(place("fifo"))
        place("link-own").symlink_to(grading / "link-own" / FIXTURE.name)
        os.link(grading / "hard-link" / FIXTURE.name, place("hard-link"))
        place("deep-json").write_bytes(b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
        place("dev-zero").symlink_to("/dev/zero")
        out = tmp / "grades.csv"
        done = subprocess.run(
            [sys.executable, "-m", "booktools", "autograde", str(grading),
             str(tmp / "submitted"), "--out", str(out), "--timeout", "300",
             "--notebook-timeout", "60", "--workers", "2"],
            cwd=tmp, capture_output=True, text=True, timeout=1800)
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        return {"done": done, "rows": rows, "roster": roster,
                "totals": {r["student"]: r for r in rows if r["cell"] == "total"}}

    def test_every_row_is_written_and_the_status_is_zero(self, run):
        assert run["done"].returncode == 0, run["done"].stderr[-3000:]
        assert sorted(run["totals"]) == sorted(run["roster"])
        assert len(run["rows"]) == 5 * len(run["roster"])
        assert all(score(t) is not None for t in run["totals"].values())

    @pytest.mark.parametrize("sid", ["honest", "honest-too", "iopub-bomb"])
    def test_honest_answers_keep_full_marks(self, run, sid):
        total = run["totals"][sid]
        assert score(total) == float(total["max_score"]) == 3.0, (
            total, run["done"].stderr[-3000:])

    @pytest.mark.parametrize("sid, note", [
        ("fifo", "a FIFO"), ("link-own", "a symbolic link"), ("hard-link", "hard link"),
        ("deep-json", "nested deeper"), ("dev-zero", "a symbolic link"),
        ("duplicate-id", "not gradable"), ("sleeper", "time limit")])
    def test_each_attack_is_a_zero_with_a_note(self, run, sid, note):
        total = run["totals"][sid]
        assert score(total) == 0.0 and note in total["note"], total
