"""``autograde --format canvas moodle``: the import files of the two course platforms,
read back with :mod:`csv` against their documented layouts (headers, UTF-8 without a
BOM, numbers with a ``.`` decimal point, the maxima), from a roster of odd names; the
roster goes through the one gate, and no name reaches a spreadsheet as a formula."""

import csv
import io
from pathlib import Path

import pytest
from grading_layout import per_student

from booktools import homework as hw
from booktools.homework import gradebook
from booktools.homework.untrusted import Untrusted

TEACHER = Path(__file__).parent / "fixtures" / "homework" / "teacher" / "fixture1.ipynb"
NAME = TEACHER.stem  # fixture1: autograded tests worth 2 + 1 points

ROSTER = (
    "ID,Name,Email,Section,SIS User ID\r\n"
    's01,"Doe, Jane",jane@example.org,"Sec 1, Mon",U-001\r\n'
    's02,"Dwayne ""The Rock"" Johnson",rock@example.org,Sec 2,\r\n'
    "s03,Zoë Ångström-Nüñez,zoe@example.org,,\r\n"
    's04,"=HYPERLINK(""http://evil.example"",""click"")",eve@example.org,+Sec,\r\n'
    "s05,@SUM(A1),,-3,\r\n"
)
ODD_NAMES = {"s01": "Doe, Jane", "s02": 'Dwayne "The Rock" Johnson',
             "s03": "Zoë Ångström-Nüñez",
             "s04": "'" + '=HYPERLINK("http://evil.example","click")', "s05": "'@SUM(A1)"}


def _row(sid, name, cell, score, top, note=""):
    return {"student": sid, "notebook": name, "cell": cell, "score": score,
            "max_score": top, "note": note}


# what autograde returns: cells, then a total per student and notebook; s03 submitted
# nothing in hw1 (a zero), s05 has no grading version of hw2 (not graded)
ROWS = [
    _row("", "", "", None, None, "--no-sandbox: ..."),
    *[r for sid, s1, s2 in (("s01", 2.5, 7.0), ("s02", 0.1 + 0.2, 12.0),
                            ("s03", 0.0, 12.0), ("s04", 1.0, 0.0), ("s05", 3.0, None))
      for r in (_row(sid, "hw1", "q1", s1, 3.0), _row(sid, "hw1", "total", s1, 3.0),
                _row(sid, "hw2", "total", s2, None if s2 is None else 12.0))],
]


@pytest.fixture
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes(ROSTER.encode("utf-8"))
    return path


def _read(path):
    data = path.read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")  # no BOM: neither importer needs one
    text = data.decode("utf-8")  # strict: the file is UTF-8
    assert "\r\n" in text and "\n" not in text.replace("\r\n", "")  # RFC 4180 lines
    return list(csv.reader(io.StringIO(text, newline="")))


def _no_formula(table):
    for row in table:
        for value in row:
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), value


def test_canvas_file_has_canvas_layout_points_possible_and_every_roster_row(roster, tmp_path):
    students = gradebook.read_roster(roster)
    paths, problems = gradebook.write_gradebooks(
        ROWS, tmp_path / "grades.csv", ["canvas"], roster=students,
        titles={"hw2": "Homework 2 (12345)"})
    assert paths == [tmp_path / "grades.canvas.csv"]
    table = _read(paths[0])
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "hw1",
                        "Homework 2 (12345)"]
    assert table[1] == ["Points Possible", "", "", "", "", "3", "12"]
    body = {row[2]: row for row in table[2:]}
    assert len(table) == 2 + 5
    assert [row[0] for row in table[2:]] == [ODD_NAMES[f"s0{i}"] for i in range(1, 6)]
    assert body["U-001"] == ["Doe, Jane", "", "U-001", "", "Sec 1, Mon", "2.5", "7"]
    assert body["s02"][5:] == ["0.3", "12"]  # 0.1 + 0.2, four decimals at most
    assert body["s03"][5:] == ["0", "12"]  # no submission: a zero, as autograde gives
    assert body["s04"][4] == "'+Sec"
    assert body["s05"][4:] == ["'-3", "3", ""]  # not graded: empty, and said
    assert any(p.startswith("s05 hw2: not graded") for p in problems)
    _no_formula(table)


def test_moodle_file_has_an_identifier_a_column_per_item_and_the_maxima(roster, tmp_path):
    students = gradebook.read_roster(roster)
    paths, problems = gradebook.write_gradebooks(ROWS, tmp_path / "out" / "g.csv",
                                                 ["moodle"], roster=students)
    assert paths == [tmp_path / "out" / "g.moodle.csv"]
    table = _read(paths[0])
    assert table[0] == ["ID number", "Full name", "Email address", "hw1", "hw2",
                        "hw1 (maximum)", "hw2 (maximum)"]
    assert len(table) == 1 + 5  # no row of maxima: Moodle would read it as a student
    assert [row[0] for row in table[1:]] == ["s01", "s02", "s03", "s04", "s05"]
    assert [row[1] for row in table[1:]] == [ODD_NAMES[f"s0{i}"] for i in range(1, 6)]
    assert table[1][2:] == ["jane@example.org", "2.5", "7", "3", "12"]
    assert table[3][3:5] == ["0", "12"] and table[5][3:5] == ["3", ""]
    for row in table[1:]:  # every grade a number Moodle's unformat_float reads
        for value in row[3:]:
            assert value == "" or (float(value) >= 0 and "," not in value and "e" not in value)
    assert any("no email address" in p for p in problems)  # s05 has none
    _no_formula(table)


def test_without_a_roster_the_graded_students_in_order(tmp_path):
    paths, _ = gradebook.write_gradebooks(ROWS, tmp_path / "grades.csv", ["moodle", "canvas"])
    assert [p.name for p in paths] == ["grades.moodle.csv", "grades.canvas.csv"]
    assert [r[2] for r in _read(paths[1])[2:]] == ["s01", "s02", "s03", "s04", "s05"]


def test_the_roster_goes_through_the_gate_and_must_be_utf8(roster, tmp_path):
    link = tmp_path / "link.csv"
    link.symlink_to(roster)
    with pytest.raises(Untrusted, match="symbolic link"):
        gradebook.read_roster(link)
    latin = tmp_path / "latin1.csv"
    latin.write_bytes(ROSTER.encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        gradebook.read_roster(latin)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + ROSTER.encode("utf-8"))
    assert [s["id"] for s in gradebook.read_roster(bom)] == ["s01", "s02", "s03", "s04", "s05"]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,name\n../x,Mallory\n")
    with pytest.raises(ValueError, match="student id"):
        gradebook.read_roster(bad)


def test_column_titles_are_name_equals_title():
    assert gradebook.parse_columns(["hw2.ipynb=Homework 2 (12345)"]) == {
        "hw2": "Homework 2 (12345)"}
    with pytest.raises(ValueError, match="NAME=TITLE"):
        gradebook.parse_columns(["hw2"])


def test_the_command_line_writes_both_files_beside_the_grades(tmp_path, capsys):
    """End to end, and cheap: nobody submitted, so nothing runs (no nbgrader, no
    sandbox); s01 and s02 score 0 of 3, s03 has no grading version (not graded)."""
    grading = per_student(TEACHER, tmp_path, ("s01", "s02"))
    (tmp_path / "submitted").mkdir()
    roster = tmp_path / "roster.csv"
    roster.write_text('id,name,email\ns01,"Lovelace, Ada",ada@example.org\n'
                      "s02,=1+1,b@example.org\ns03,Zoë,z@example.org\n", encoding="utf-8")
    out = tmp_path / "marks" / "grades.csv"
    status = hw.main(["autograde", str(grading), str(tmp_path / "submitted"),
                      "--students", str(roster), "--notebooks", NAME, "--out", str(out),
                      "--format", "canvas", "--format", "moodle",
                      "--column", f"{NAME}=Homework 1"])
    assert status == 0
    printed = capsys.readouterr()
    assert f"wrote {out.with_name('grades.canvas.csv')}" in printed.out
    assert f"s03 {NAME}: not graded" in printed.err
    canvas = _read(out.with_name("grades.canvas.csv"))
    assert canvas[:2] == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                           "Homework 1"], ["Points Possible", "", "", "", "", "3"]]
    assert canvas[2:] == [["Lovelace, Ada", "", "s01", "", "", "0"],
                          ["'=1+1", "", "s02", "", "", "0"], ["Zoë", "", "s03", "", "", ""]]
    moodle = _read(out.with_name("grades.moodle.csv"))
    assert moodle == [["ID number", "Full name", "Email address", "Homework 1",
                       "Homework 1 (maximum)"],
                      ["s01", "Lovelace, Ada", "ada@example.org", "0", "3"],
                      ["s02", "'=1+1", "b@example.org", "0", "3"],
                      ["s03", "Zoë", "z@example.org", "", "3"]]

