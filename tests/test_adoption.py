"""A teacher adopts the book: the path of the teachers' chapter, against local repositories.

Two bare repositories stand in for GitHub: the teacher's fork (or private copy) of the book,
and the public student repository that Binder builds from. The test walks the chapter's
steps with ``make``: fork, set ``repository.url``, write the student sources for
``STUDENT_REPO`` (the first half of ``make student-book``: the site itself is the one
``make student-book`` built earlier in ``make test``), push them to the student
repository's ``main`` with ``make student-repo`` and the student site to its ``gh-pages``
with ``make publish EDITION=student``. Then:

- the student repository holds no line of any solution or hidden test (the teacher sources
  read by ``test_student_site``'s own parser), and its released homework;
- Binder's files are complete, as Binder reads them: ``jupyter-repo2docker --no-build
  --debug`` prints the Dockerfile it would build, for the teacher's and the student
  repository, with the Python of ``runtime.txt``, ``requirements.txt`` and ``postBuild``;
- ``make release-assets`` gathers the wheel, the sdist and both PDFs.

Run after ``make student-book student-pdf`` and ``make pdf`` (``make publishing`` in
``make test``); ``make`` runs in the teacher's clone with this checkout's ``.venv``.
"""

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from test_publishing import edition, git, git_env
from test_student_site import norm, secrets_and_pictures

from booktools.homework.notebook import STUDENT_SOLUTION_NOTE
from booktools.homework.publish import release_notes

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.executable).parent.parent
STUDENT_SITE = ROOT / "_build" / "student" / "html"
TEACHER_URL = "https://github.com/our-course/linear-classification"
STUDENT_URL = "https://github.com/our-course/linear-classification-student"

pytestmark = pytest.mark.publishing


def make(*args, cwd, check=True):
    """``make`` in a clone, with this checkout's .venv taken as installed (never reinstalled:
    its lincls stays this checkout's)."""
    stamps = [f"--assume-old={VENV}/.installed-book", f"--assume-old={VENV}/.installed-dev"]
    done = subprocess.run(["make", "--no-print-directory", *stamps, f"VENV={VENV}", *args],
                          cwd=cwd, env=git_env(), capture_output=True, text=True, timeout=900)
    if check and done.returncode:
        raise AssertionError(f"make {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def files_of_this_checkout():
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    return [f for f in listed if f and (ROOT / f).is_file()]


@pytest.fixture(scope="module")
def adopted(tmp_path_factory):
    """Fork, clone, set the repository URL, publish the student edition; the folders."""
    if not (STUDENT_SITE / "linear-classification-student.pdf").is_file():
        pytest.fail("the student site and PDF are missing: run `make student-book student-pdf`")
    tmp = tmp_path_factory.mktemp("adoption")
    fork, student = tmp / "fork.git", tmp / "student.git"
    # the book as it is published: this checkout's files, in one commit
    original = tmp / "original"
    for name in files_of_this_checkout():
        (original / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, original / name)
    git("init", "-q", "-b", "main", cwd=original)
    git("add", "-A", cwd=original)
    git("commit", "-q", "-m", "The book", cwd=original)
    # 1. fork (a private copy: a bare clone) and 2. clone it
    git("clone", "-q", "--bare", str(original), str(fork), cwd=tmp)
    git("init", "-q", "--bare", "-b", "main", str(student), cwd=tmp)
    teacher = tmp / "teacher"
    git("clone", "-q", str(fork), str(teacher), cwd=tmp)
    # 3. repository.url, the one place it is set
    config = teacher / "_config.yml"
    text = config.read_text()
    old = yaml.safe_load(text)["repository"]["url"]
    config.write_text(text.replace(f"url: {old}", f"url: {TEACHER_URL}", 1))
    git("commit", "-q", "-am", "Our course's repository", cwd=teacher)
    git("push", "-q", "origin", "main", cwd=teacher)
    # 4. the student edition for the student repository, 5. published there
    make("student-sources", f"STUDENT_REPO={STUDENT_URL}", cwd=teacher)
    shutil.copytree(STUDENT_SITE, teacher / "_build" / "student" / "html")  # make student-book
    first = make("student-repo", f"REMOTE={student}", cwd=teacher)
    again = make("student-repo", f"REMOTE={student}", cwd=teacher)
    make("publish", f"REMOTE={student}", "EDITION=student", cwd=teacher)
    checkout = tmp / "student"
    git("clone", "-q", str(student), str(checkout), cwd=tmp)
    return {"fork": fork, "teacher": teacher, "student": student, "checkout": checkout,
            "tmp": tmp, "first": first.stdout, "again": again.stdout}


def test_the_fork_holds_the_teachers_url(adopted):
    clone = adopted["tmp"] / "fork-checkout"
    git("clone", "-q", str(adopted["fork"]), str(clone), cwd=adopted["tmp"])
    assert yaml.safe_load((clone / "_config.yml").read_text())["repository"]["url"] == TEACHER_URL


def repository_text(repo):
    """Every file of a working tree (.git aside), letters and digits only."""
    return "\n".join(norm(p.read_text(encoding="utf-8", errors="ignore"))
                     for p in sorted(repo.rglob("*"))
                     if p.is_file() and ".git" not in p.relative_to(repo).parts)


def test_the_student_repository_holds_no_solution(adopted):
    checkout = adopted["checkout"]
    secrets, pictures = secrets_and_pictures()
    shipped = repository_text(checkout)
    leaked = [(src.name, line) for src, line in secrets if norm(line) in shipped]
    assert not leaked, leaked[:10]
    assert not [src.name for src, pic in pictures if pic[:200] in shipped]
    # as a control, the same search finds the solutions in the teacher's repository
    teacher = repository_text(adopted["teacher"] / "book")
    assert sum(norm(line) in teacher for _, line in secrets) == len(secrets)
    # the released homework is there, with its exercises left to do
    homework = sorted((checkout / "book" / "homework").glob("homework*.ipynb"))
    assert len(homework) == len(list((ROOT / "book" / "homework").glob("homework*.ipynb")))
    for path in homework:
        assert "NotImplementedError" in path.read_text(), path.name
    assert STUDENT_SOLUTION_NOTE in (checkout / "book" / "perceptron.md").read_text()


def test_the_student_repository_is_the_student_edition(adopted):
    checkout = adopted["checkout"]
    config = yaml.safe_load((checkout / "_config.yml").read_text())
    assert config["repository"]["url"] == STUDENT_URL
    assert config["title"].endswith("(student edition)")
    shipped = "\n".join(p.read_text(errors="ignore") for p in checkout.rglob("*")
                        if p.is_file() and ".git" not in p.relative_to(checkout).parts)
    assert not re.search(re.escape(TEACHER_URL) + r"(?![\w-])", shipped)
    for name in ("LICENSE", "LICENSE-content", "CITATION.cff", "CHANGELOG.md"):
        assert (checkout / name).read_text() == (ROOT / name).read_text(), name
    # one commit, and a second `make student-repo` with nothing new pushes nothing
    assert "published the student sources" in adopted["first"]
    assert "nothing pushed" in adopted["again"]
    assert git("rev-list", "--count", "main", cwd=adopted["student"]).strip() == "1"


def test_a_changed_edition_is_one_more_commit_on_the_student_repository(adopted, tmp_path):
    teacher, student = adopted["teacher"], adopted["student"]
    readme = teacher / "_build" / "student" / "src" / "README.md"
    readme.write_text(readme.read_text() + "\nWelcome to our course.\n")
    make("student-repo", f"REMOTE={student}", cwd=teacher)
    assert git("rev-list", "--count", "main", cwd=student).strip() == "2"
    assert git("diff", "--stat", "main~1", "main", cwd=student).count("|") == 1
    # the teacher's own tree (solutions in it) is refused
    refused = subprocess.run(
        [sys.executable, "-m", "booktools.homework", "student-repo", str(teacher), str(student)],
        cwd=teacher, env=git_env(), capture_output=True, text=True)
    assert refused.returncode == 1 and "will not publish" in refused.stderr
    assert "not the student edition" in refused.stderr


def test_the_student_site_is_on_gh_pages(adopted):
    student = adopted["student"]
    files = set(git("ls-tree", "-r", "--name-only", "gh-pages", cwd=student).split())
    assert {".nojekyll", "index.html", "linear-classification-student.pdf"} <= files
    assert "linear-classification.pdf" not in files
    assert any(f.startswith("_static/") for f in files)


def repo2docker(repo):
    """The Dockerfile Binder would build for ``repo`` (nothing is built)."""
    done = subprocess.run([str(VENV / "bin" / "jupyter-repo2docker"), "--no-build", "--debug",
                           str(repo)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.mark.parametrize("which", ["teacher", "checkout"])
def test_binder_builds_both_repositories_from_their_files(adopted, which):
    repo = adopted[which]
    dockerfile = repo2docker(repo)
    python = (repo / "runtime.txt").read_text().strip().removeprefix("python-")
    assert re.search(rf"conda environment for python={re.escape(python)}\b", dockerfile)
    steps = [line for line in dockerfile.splitlines() if line.startswith("RUN ")]
    order = [next(i for i, s in enumerate(steps) if pattern in s) for pattern in (
        'pip install --no-cache-dir -r "requirements.txt"', "pip install --no-cache-dir .",
        "./postBuild")]
    assert order == sorted(order), steps
    # what those steps read: the pinned requirements ending with lincls and booktools (the
    # site's extensions, in tools/), the postBuild that makes lincls editable again, the
    # Python range of pyproject.toml
    requirements = (repo / "requirements.txt").read_text().split("\n")
    assert [r for r in requirements if r and not r.startswith("#")][-2:] == ["-e .", "-e ./tools"]
    assert (repo / "tools" / "pyproject.toml").is_file()
    assert (repo / "requirements.txt").read_text() == (ROOT / "requirements.txt").read_text()
    assert "pip install --quiet --no-deps -e ." in (repo / "postBuild").read_text()
    assert (repo / "postBuild").stat().st_mode & 0o111
    assert (repo / "lincls" / "__init__.py").is_file()


def test_release_assets_hold_the_wheel_sdist_and_both_pdfs(tmp_path):
    assets, notes = tmp_path / "assets", tmp_path / "notes.md"
    for pdf in ("linear-classification.pdf", "linear-classification-student.pdf"):
        if not (ROOT / "_build" / "pdf" / pdf).is_file():
            pytest.fail(f"_build/pdf/{pdf} is missing: run `make pdf student-pdf`")
    subprocess.run(["make", "--no-print-directory", "release-assets", "RELEASE_BUILD=",
                    f"ASSETS={assets}", f"NOTES={notes}"], cwd=ROOT, check=True,
                   capture_output=True, timeout=600)
    number = edition()
    assert sorted(p.name for p in assets.iterdir()) == sorted([
        f"lincls-{number}-py3-none-any.whl", f"lincls-{number}.tar.gz",
        "linear-classification.pdf", "linear-classification-student.pdf"])
    with zipfile.ZipFile(assets / f"lincls-{number}-py3-none-any.whl") as wheel:
        names = wheel.namelist()
        metadata = wheel.read(f"lincls-{number}.dist-info/METADATA").decode()
    assert f"lincls-{number}.dist-info/licenses/LICENSE" in names
    assert "License-Expression: MIT" in metadata
    assert "lincls/homework/answers.json" in names  # the self-check's registry
    assert not [n for n in names if n.startswith("booktools")]  # the book's machinery stays out
    assert notes.read_text() == release_notes(ROOT)
