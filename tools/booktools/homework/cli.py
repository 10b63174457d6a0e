"""The command line, ``python -m booktools COMMAND``: one function per command.

Defined in chapter "For teachers" (``book/teachers.md``).

Every command returns an exit status; an expected failure (a malformed notebook, a
missing file, a failed build) is one message on stderr, not a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from lincls.homework import answers

from . import publish
from .autograde import NOTEBOOK_TIMEOUT, TIMEOUT, autograde
from .notebook import (
    HomeworkError,
    KernelDied,
    MalformedHomework,
    _notebooks,
    describe,
    execute,
)
from .release import rehearse, release
from .site import StudentSiteError, build_student_site, make_student_sources
from .validation import validate


def _record_notebooks(paths, registry):
    """Execute teacher notebooks with check() in recording mode."""
    import nbformat

    from ..kernels import notebook_client

    os.environ[answers.RECORD_ENV] = str(Path(registry).resolve())
    try:
        for path in paths:
            nb = nbformat.read(path, as_version=4)
            client = notebook_client(nb, Path(path).parent, timeout=600)
            execute(client, path, stderr=subprocess.DEVNULL)  # the kernel's own log lines
            print(f"recorded the answers of {path}")
    finally:
        del os.environ[answers.RECORD_ENV]


def cmd_release(args):
    from .table import ReleaseCosts
    from .variants import read_roster, read_secret

    students = read_roster(args.students) if args.students else None
    secret = None
    if args.seed or args.secret_file:
        secret = read_secret(args.secret_file)
    elif students is not None:
        raise ValueError("one variant per student (--students) needs --seed")
    costs = ReleaseCosts() if secret is not None else None
    for path in release(args.src, args.out, grading=args.grading, seed=secret,
                        students=students, costs=costs):
        print(f"wrote {path}")
    if costs is not None and costs.rows:  # for the teacher's eyes: never written out
        print("\nWhat a brute force of each self-check costs (the weakest variant):\n")
        print(costs.table())
    return 0


def cmd_autograde(args):
    from . import gradebook
    from .variants import read_roster

    titles = gradebook.parse_columns(args.column)  # before grading: a typo costs nothing
    roster = gradebook.read_roster(args.students) if args.students and args.format else None
    students = read_roster(args.students) if args.students else None
    rows, problems = autograde(args.grading, args.submitted, students=students,
                               notebooks=args.notebooks, out=args.out,
                               timeout=args.timeout, echo=print,
                               sandbox=not args.no_sandbox, workers=args.workers,
                               notebook_timeout=args.notebook_timeout,
                               feedback=args.feedback)
    for problem in problems:
        print(problem, file=sys.stderr)
    if rows:
        print(f"wrote {args.out}")
    if rows and args.format:  # the course platforms' import files, from the same rows
        paths, notes = gradebook.write_gradebooks(rows, args.out, args.format,
                                                  roster=roster, titles=titles)
        for note in notes:
            print(note, file=sys.stderr)
        for path in paths:
            print(f"wrote {path}")
    # a submission costs only its own rows: whatever it did is a zero and a note, and the
    # status is 0 once every row is written; 1 only when there was nothing to grade
    return 0 if rows else 1


def cmd_new_secret(args):
    from .variants import new_secret

    path = new_secret(args.path)
    print(f"wrote a new 256-bit course secret to {path} (only you may read it); keep it "
          "for the whole course, outside the repository")
    return 0


def cmd_validate(args):
    errors, count = [], 0
    for src in args.src:
        errors += validate(src)
        count += len(_notebooks(src)[1])
    for exc in errors:
        print(exc, file=sys.stderr)
    if errors:
        return 1
    print(f"{count} notebook(s) OK")
    return 0


def cmd_rehearse(args):
    failed = 0
    for src in args.src:
        for path in _notebooks(src)[1]:
            for r in rehearse(path):
                if r["role"] == "answer":
                    bad = r["error"] not in (None, "NotImplementedError") or r["teacher_error"]
                else:
                    bad = r["error"] is not None
                failed += bool(bad)
                if bad or r["role"] == "answer":
                    teacher = (
                        f", teacher {r['teacher_error'] or 'no error'}"
                        if r["role"] == "answer" else ""
                    )
                    print(
                        f"{'FAIL' if bad else 'ok':4} {path} cell {r['cell'] + 1} "
                        f"({r['role']}): student {r['error'] or 'no error'}{teacher}"
                    )
    return 1 if failed else 0


def cmd_describe(args):
    describe(args.notebook, args.summary, args.chapters, args.minutes)
    print(f"set the lincls metadata of {args.notebook}")
    return 0


def cmd_hash(args):
    value = json.loads(args.value)
    entry = answers.record_answer(
        args.name, value, atol=args.atol, normalized=args.normalized, bound=args.bound,
        registry=args.registry,
    )
    print(json.dumps({args.name: entry}, indent=1))
    return 0


def cmd_record(args):
    _record_notebooks(args.notebooks, args.registry)
    return 0


def cmd_cost(args):
    for row in answers.brute_force_cost(args.registry):
        flag = "  UNDER A MINUTE" if row["flag"] else ""
        print(f"{row['name']:32} {row['space']:>24,} values {row['seconds']:>14,.1f} s{flag}")
    return 0


def cmd_student_book(args):
    if args.sources_only:
        src = make_student_sources(args.root, Path(args.out) / "src", args.repository_url)
        print(f"student sources: {src}")
        return 0
    html = build_student_site(args.root, args.out, args.repository_url, builder=args.builder)
    print(f"student site: {html}/index.html")
    return 0


def cmd_publish(args):
    if args.stage:
        publish.stage_site(args.site, args.stage, pdf=args.pdf)
    elif args.remote:
        publish.publish_site(args.site, args.remote, branch=args.branch, pdf=args.pdf)
    else:
        raise publish.PublishError("name the git remote to publish to (or --stage DIR)")
    return 0


def cmd_student_repo(args):
    publish.publish_sources(args.src, args.remote, branch=args.branch)
    return 0


def cmd_edition(args):
    problems = publish.edition_problems(args.root, tag=args.tag)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return 1
    number = next(iter(publish.editions(args.root).values()))
    if args.notes:
        notes = publish.write_release_notes(args.notes, args.root)
        print(f"wrote the notes of edition {number}: {notes}")
    print(f"edition {number}: the same number in " + ", ".join(publish.editions(args.root))
          + (f"; the tag {args.tag} names it" if args.tag else ""))
    return 0


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m booktools",
        description="Homework tools of the Linear Classification book.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("release", help="write student versions of teacher notebooks")
    p.add_argument("src", help="a teacher notebook or a directory of them")
    p.add_argument("out", help="output directory (replaced as a whole, atomically)")
    p.add_argument("--grading", default=None, metavar="DIR",
                   help="also write grading versions (nbgrader's source) there: expected "
                        "values of hidden tests computed by running the teacher notebooks")
    p.add_argument("--seed", action="store_true",
                   help="write the course's variant: seeds derived from the course secret "
                        "(read from --secret-file, else from $BOOKTOOLS_COURSE_SECRET; never "
                        "typed on the command line), self-checks and expected values "
                        "computed for them")
    p.add_argument("--secret-file", default=None, metavar="PATH",
                   help="the file holding the course secret (implies --seed); make one with "
                        "`new-secret PATH`")
    p.add_argument("--students", default=None, metavar="ROSTER.CSV",
                   help="with --seed: one variant per student id (column 'id' of the CSV)")
    p.set_defaults(run=cmd_release)
    p = sub.add_parser("new-secret", help="write a new course secret (256 random bits) to a "
                                          "new file only you may read")
    p.add_argument("path")
    p.set_defaults(run=cmd_new_secret)
    p = sub.add_parser("autograde",
                       help="grade submissions with nbgrader, each against its own variant")
    p.add_argument("grading", help="the grading versions of the release (release --grading)")
    p.add_argument("submitted", help="the submissions, as SUBMITTED/ID/NAME/NAME.ipynb")
    p.add_argument("--students", default=None, metavar="ROSTER.CSV",
                   help="everyone to grade (column 'id'); a missing submission scores zero "
                        "(default: the students of the release, or of SUBMITTED)")
    p.add_argument("--notebooks", nargs="+", default=None, metavar="NAME",
                   help="the notebooks to grade (default: those someone submitted)")
    p.add_argument("--out", default="grades.csv",
                   help="the CSV file of scores per student, notebook and graded cell")
    p.add_argument("--timeout", type=int, default=TIMEOUT, metavar="SECONDS",
                   help=f"seconds a cell may run (nbgrader's Execute.timeout; {TIMEOUT})")
    p.add_argument("--notebook-timeout", type=int, default=NOTEBOOK_TIMEOUT, metavar="SECONDS",
                   help=f"seconds a submission may run in all ({NOTEBOOK_TIMEOUT}); the "
                        "cells left then are not run")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="nbgrader processes side by side (default: one per core it may run on)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run the submissions without the sandbox, with your rights "
                        "(said on stderr and in the grades' first row)")
    p.add_argument("--feedback", default=None, metavar="DIR",
                   help="also write each student's feedback, DIR/ID/NAME.html and .md: "
                        "points, visible failures and answers, never a hidden test")
    p.add_argument("--format", nargs="+", action="extend", default=[], metavar="PLATFORM",
                   choices=["canvas", "moodle"],
                   help="also write the gradebook-import CSV of these platforms beside "
                        "--out (grades.canvas.csv, grades.moodle.csv): a row per roster "
                        "student, a column per notebook, its maximum")
    p.add_argument("--column", action="append", default=[], metavar="NAME=TITLE",
                   help="with --format: the title of notebook NAME's column, e.g. "
                        "'homework2=Homework 2 (12345)' (Canvas's assignment 12345)")
    p.set_defaults(run=cmd_autograde)
    p = sub.add_parser("validate", help="validate notebooks without writing anything")
    p.add_argument("src", nargs="+")
    p.set_defaults(run=cmd_validate)
    p = sub.add_parser(
        "rehearse", help="run student versions with the answers filled in; report errors"
    )
    p.add_argument("src", nargs="+")
    p.set_defaults(run=cmd_rehearse)
    p = sub.add_parser("describe", help="set a notebook's lincls metadata block")
    p.add_argument("notebook")
    p.add_argument("--summary", required=True, help="one sentence: what it practises")
    p.add_argument("--chapters", required=True, nargs="+", help="page names in book/")
    p.add_argument("--minutes", required=True, type=int, help="expected working time")
    p.set_defaults(run=cmd_describe)
    p = sub.add_parser("hash", help="store the slow salted hash of an answer in the registry")
    p.add_argument("name")
    p.add_argument("value", help="a number or a JSON list, e.g. '[0.6, 0.8]'")
    p.add_argument("--atol", type=float, default=1e-6)
    p.add_argument("--normalized", action="store_true")
    p.add_argument("--bound", type=float, required=True,
                   help="what the question says about the size of every entry")
    p.add_argument("--registry", default=str(answers.ANSWERS))
    p.set_defaults(run=cmd_hash)
    p = sub.add_parser("record", help="run teacher notebooks; their check() calls record")
    p.add_argument("notebooks", nargs="+")
    p.add_argument("--registry", default=str(answers.ANSWERS))
    p.set_defaults(run=cmd_record)
    p = sub.add_parser("cost", help="what a brute force over the bound of every self-check "
                                   "costs here (release --seed prices each variant)")
    p.add_argument("--registry", default=str(answers.ANSWERS))
    p.set_defaults(run=cmd_cost)
    p = sub.add_parser("student-book", help="build the student site (no solutions)")
    p.add_argument("--root", default=".")
    p.add_argument("--out", default="_build/student")
    p.add_argument("--repository-url", default=None)
    p.add_argument("--builder", default="html", choices=["html", "singlehtml"],
                   help="singlehtml: the one page `make student-pdf` prints (into OUT/singlehtml)")
    p.add_argument("--sources-only", action="store_true",
                   help="write the sources (OUT/src, the student repository) and build nothing")
    p.set_defaults(run=cmd_student_book)
    p = sub.add_parser("publish", help="push a built website to the gh-pages branch of a git "
                                       "remote (or stage it for GitHub's Pages actions)")
    p.add_argument("site", help="the built website, e.g. _build/html")
    p.add_argument("remote", nargs="?", default=None, help="a git URL or path")
    p.add_argument("--branch", default="gh-pages")
    p.add_argument("--pdf", default=None, metavar="NAME",
                   help="the PDF the site must hold (its pages link it)")
    p.add_argument("--stage", default=None, metavar="DIR",
                   help="copy the website to DIR instead of pushing it")
    p.set_defaults(run=cmd_publish)
    p = sub.add_parser("student-repo", help="push the student sources to the branch Binder "
                                            "builds from, as one more commit")
    p.add_argument("src", help="the student sources, _build/student/src")
    p.add_argument("remote", help="a git URL or path: the public student repository")
    p.add_argument("--branch", default="main")
    p.set_defaults(run=cmd_student_repo)
    p = sub.add_parser("edition", help="check that the edition's number agrees everywhere")
    p.add_argument("--root", default=".")
    p.add_argument("--tag", default=None, help="the git tag of the release: v + the number")
    p.add_argument("--notes", default=None, metavar="FILE",
                   help="write the edition's section of CHANGELOG.md there (release notes)")
    p.set_defaults(run=cmd_edition)
    return parser


#: Errors that are the user's to fix, or the machine's (a kernel that died): one line (or
#: one list) on stderr, exit status 1.
EXPECTED_ERRORS = (
    MalformedHomework, HomeworkError, KernelDied, StudentSiteError, FileNotFoundError,
    ValueError,
    json.JSONDecodeError, OSError, subprocess.CalledProcessError,
)


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except EXPECTED_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
