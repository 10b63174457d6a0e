"""``python -m booktools release`` (and ``validate``, ``describe``) read the teacher's
folder and the roster through the gate (``booktools.homework.untrusted``): a link, FIFO,
device, hard link, huge or deeply nested file there, or a hostile roster id, is a
ValueError naming the file; nothing hangs, follows a link, or is written outside ``out``.
"""

import os
import shutil
from pathlib import Path

import pytest

from booktools.homework import cli
from booktools.homework.notebook import describe
from booktools.homework.release import _read, _write_atomically, release
from booktools.homework.untrusted import Untrusted
from booktools.homework.validation import validate
from booktools.homework.variants import read_roster

pytestmark = pytest.mark.timeout(60)  # a FIFO that is opened would block forever

TEACHER = Path(__file__).parent / "fixtures" / "homework" / "teacher" / "fixture1.ipynb"
SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f00123456789abcdeffedcba9876543210"


def _symlink_outside(path, tmp):
    shutil.copy(TEACHER, tmp / "outside.ipynb")  # a notebook that would release fine
    path.symlink_to(tmp / "outside.ipynb")


def _hard_link(path, tmp):
    shutil.copy(TEACHER, tmp / "outside.ipynb")
    os.link(tmp / "outside.ipynb", path)


def _deep(path, tmp):
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)


def _sparse(path, tmp):
    with open(path, "wb") as f:
        f.truncate(300 << 20)  # 300 MB of holes: nothing on disk, all of it to read


#: Each hostile kind of file, made at ``path`` (``tmp`` is a folder beside the source),
#: and the words the refusal must say.
HOSTILE = {
    "symlink-outside": (_symlink_outside, "symbolic link"),
    "symlink-dev-zero": (lambda path, tmp: path.symlink_to("/dev/zero"), "symbolic link"),
    "fifo": (lambda path, tmp: os.mkfifo(path), "FIFO"),
    "hard-link": (_hard_link, "hard link"),
    "deep-json": (_deep, "nested deeper"),
    "sparse-300MB": (_sparse, "larger than"),
}


@pytest.fixture
def course(tmp_path):
    """``src/`` with a valid teacher notebook, ``elsewhere/`` beside it."""
    (tmp_path / "src").mkdir()
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(TEACHER, tmp_path / "src" / TEACHER.name)
    return tmp_path


def _plant(course, kind, name="evil.ipynb"):
    make, words = HOSTILE[kind]
    path = course / "src" / name
    make(path, course / "elsewhere")
    return path, words


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_release_refuses_a_hostile_file_in_the_teacher_folder(course, kind, capsys):
    path, words = _plant(course, kind)
    out = course / "out"
    with pytest.raises(ValueError) as caught:
        release(course / "src", out, grading=course / "grading")
    assert str(path) in str(caught.value) and words in str(caught.value)
    assert [type(e.__cause__) for e in caught.value.errors] == [Untrusted]  # the gate's
    assert not out.exists() and not (course / "grading").exists()
    # the command line: one message naming the file, exit status 1, nothing written
    assert cli.main(["release", str(course / "src"), str(out)]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and words in err and "Traceback" not in err
    assert not out.exists()
    # validate says the same and writes nothing
    errors = validate(course / "src")
    assert any(str(path) in str(e) and words in str(e) for e in errors)
    assert cli.main(["validate", str(course / "src")]) == 1
    assert str(path) in capsys.readouterr().err


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_describe_refuses_a_hostile_notebook(course, kind):
    path, words = _plant(course, kind)
    before = sorted((p.name, p.stat().st_size) for p in (course / "elsewhere").iterdir())
    with pytest.raises(ValueError, match=words):
        describe(path, "a summary", ["perceptron"], 30)
    assert sorted((p.name, p.stat().st_size)
                  for p in (course / "elsewhere").iterdir()) == before


def test_describe_replaces_the_file_it_read(course):
    path = course / "src" / TEACHER.name
    describe(path, "Something else.", ["perceptron"], 45)
    assert "Something else." in path.read_text()
    assert not path.is_symlink() and os.stat(path).st_nlink == 1
    assert sorted(p.name for p in path.parent.iterdir()) == [TEACHER.name]


def test_a_symlinked_folder_inside_the_source_is_not_followed(course):
    (course / "elsewhere" / "sub").mkdir()
    shutil.copy(TEACHER, course / "elsewhere" / "sub" / "hw.ipynb")
    (course / "src" / "sub").symlink_to(course / "elsewhere" / "sub")
    written = release(course / "src", course / "out")
    assert written == [course / "out" / TEACHER.name]
    assert not (course / "out" / "sub").exists()
    with pytest.raises(ValueError, match="symbolic link"):
        _read(course / "src" / "sub" / "hw.ipynb", root=course / "src")


@pytest.mark.parametrize("where", ["out", "grading"])
def test_a_symlink_at_the_output_is_refused_not_followed(course, where):
    victim = course / "elsewhere" / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    (course / where).symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link"):
        release(course / "src", course / "out", grading=course / "grading")
    assert [p.name for p in victim.iterdir()] == ["keep.txt"]
    assert (victim / "keep.txt").read_text() == "mine"
    assert (course / where).is_symlink()


def test_links_planted_inside_an_earlier_release_are_not_followed(course):
    release(course / "src", course / "out", grading=course / "grading")
    victim = course / "elsewhere" / "victim.ipynb"
    victim.write_text("mine")
    for folder in ("out", "grading"):
        planted = course / folder / TEACHER.name
        planted.unlink()
        planted.symlink_to(victim)
        (course / folder / "sub").symlink_to(course / "elsewhere")
    release(course / "src", course / "out", grading=course / "grading")
    assert victim.read_text() == "mine"
    assert sorted(p.name for p in (course / "elsewhere").iterdir()) == ["victim.ipynb"]
    for folder in ("out", "grading"):
        written = course / folder / TEACHER.name
        assert not written.is_symlink() and written.stat().st_nlink == 1
        assert not (course / folder / "sub").exists()
    # no temporary folder is left beside them
    assert sorted(p.name for p in course.iterdir()) == ["elsewhere", "grading", "out", "src"]


#: Rosters whose ids, or whose file, a release must refuse: (file content or maker, words)
ROSTERS = {
    "dotdot": ("id\n../x\n", "student id"),
    "dotdot-deeper": ("id\ns01\n../../etc\n", "student id"),
    "nul": ("id\na\x00b\n", "student id"),
    "newline": ('id\n"a\nb"\n', "student id"),
    "slash": ("id\na/b\n", "student id"),
    "fifo": (lambda path: os.mkfifo(path), "FIFO"),
    "symlink-dev-zero": (lambda path: path.symlink_to("/dev/zero"), "symbolic link"),
}


@pytest.mark.parametrize("kind", sorted(ROSTERS))
def test_a_hostile_roster_is_refused(course, kind, capsys, monkeypatch):
    roster = course / "roster.csv"
    content, words = ROSTERS[kind]
    if callable(content):
        content(roster)
    else:
        roster.write_text(content, newline="")
    with pytest.raises(ValueError) as caught:
        read_roster(roster)
    assert str(roster) in str(caught.value) and words in str(caught.value)
    assert isinstance(caught.value, Untrusted) == callable(content)  # the file: the gate's
    monkeypatch.setenv("BOOKTOOLS_COURSE_SECRET", SECRET)
    status = cli.main(["release", str(course / "src"), str(course / "out"), "--seed",
                       "--students", str(roster)])
    assert status == 1
    err = capsys.readouterr().err
    assert str(roster) in err and words in err
    assert sorted(p.name for p in course.iterdir()) == ["elsewhere", "roster.csv", "src"]


@pytest.mark.parametrize("sid", ["..", ".", "../x", "a/../..", ".hidden", "-rf", "a\nb",
                                 "a\x00b", "x" * 300])
def test_a_hostile_id_given_to_release_writes_nothing(course, sid):
    with pytest.raises(ValueError, match="student id"):
        release(course / "src", course / "out", grading=course / "grading",
                        seed=SECRET, students=["s01", sid])
    assert sorted(p.name for p in course.iterdir()) == ["elsewhere", "src"]


@pytest.mark.parametrize("name", ["../x.ipynb", "s01/../../x.ipynb", "/tmp/x.ipynb",
                                  "../s01/x.ipynb", ".hidden/x.ipynb", "-rf/x.ipynb"])
def test_every_path_written_per_student_stays_in_its_folder(tmp_path, name):
    with pytest.raises(ValueError):
        _write_atomically([(Path("s01/hw.ipynb"), "{}"), (Path(name), "{}")],
                          tmp_path / "out", per_student=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
