"""Putting the book online: a website on a ``gh-pages`` branch, the student repository,
and the edition's number wherever it is written.

Defined in chapter "For teachers" (``book/teachers.md``).

- :func:`publish_site` pushes a built website to the ``gh-pages`` branch of any git
  remote with ghp-import (``make publish``), replacing what was there;
- :func:`publish_sources` pushes the student sources of ``make student-book`` to the
  branch Binder builds from (``make student-repo``), as one more commit;
- :func:`stage_site` copies a website into the folder GitHub's Pages actions upload
  (``make pages``);
- :func:`edition_problems` checks that the edition's number agrees everywhere (``make
  edition-check``), and :func:`release_notes` reads its section of ``CHANGELOG.md``.

Both pushes work in a scratch repository in a temporary folder: the book's own repository
gets no branch and no commit from them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .notebook import STUDENT_SOLUTION_NOTE
from .site import chapter_solution_lines

#: what an edition's number looks like: the year and the term, 2026.1
EDITION = re.compile(r"^\d{4}\.\d+$")
_CHANGELOG_HEADING = re.compile(r"^## (?P<edition>\S+) \((?P<date>\d{4}-\d{2}-\d{2})\)\s*$", re.M)
_MARKERS = re.compile(r"###\s*BEGIN\s+(SOLUTION|HIDDEN\s+TESTS?)", re.I)


class PublishError(ValueError):
    """The site or the sources cannot be published as asked (one line, for the terminal)."""


def _tool(name):
    return shutil.which(name, path=str(Path(sys.executable).parent)) or name


def _git(*args, cwd, check=True):
    return subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True, text=True)


def _scratch(remote, branch, folder, identity_from="."):
    """A scratch repository in ``folder`` with ``remote`` as origin and its ``branch``
    fetched (if it has one); the committer is the one of the book's repository."""
    _git("init", "-q", cwd=folder)
    _git("remote", "add", "origin", str(remote), cwd=folder)
    fetched = _git("fetch", "-q", "origin", branch, cwd=folder, check=False)
    if fetched.returncode and "couldn't find remote ref" not in fetched.stderr:
        if _git("ls-remote", "origin", cwd=folder, check=False).returncode:
            raise PublishError(f"cannot reach the git remote {remote}: {fetched.stderr.strip()}")
    for key in ("user.name", "user.email"):
        value = _git("config", key, cwd=identity_from, check=False).stdout.strip()
        if value:
            _git("config", key, value, cwd=folder)
    return fetched.returncode == 0


def check_site(site, pdf=None):
    """Raise :class:`PublishError` unless ``site`` is a built website (with ``pdf``)."""
    site = Path(site)
    if not (site / "index.html").is_file():
        raise PublishError(f"no website in {site}: build it first (make book, or make "
                           "student-book for the student edition)")
    if pdf and not (site / pdf).is_file():
        raise PublishError(f"{site} has no {pdf}, which its pages link: run make pdf (or make "
                           "student-pdf) first")
    return site


def publish_site(site, remote, branch="gh-pages", pdf=None, message=None):
    """Push the website ``site`` to ``branch`` of the git ``remote`` with ghp-import.

    The branch then holds the site and a ``.nojekyll`` file (GitHub Pages serves the
    folders whose names start with ``_`` as they are), in one commit without history: a
    second publish replaces the first, so the branch does not grow with every PDF.
    Returns the commit pushed.
    """
    site = check_site(site, pdf).resolve()
    message = message or f"Publish the website from {site.name}"
    with tempfile.TemporaryDirectory(prefix="lincls-publish-") as tmp:
        _scratch(remote, branch, tmp)
        cmd = [_tool("ghp-import"), "--no-jekyll", "--no-history", "--push", "--force",
               "--remote", "origin", "--branch", branch, "--message", message, str(site)]
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if done.returncode:
            raise PublishError(f"ghp-import failed: {(done.stderr or done.stdout).strip()}")
        commit = _git("rev-parse", branch, cwd=tmp).stdout.strip()
    print(f"published {site} to the {branch} branch of {remote} ({commit[:12]})")
    return commit


def student_source_problems(src):
    """Why ``src`` is not student sources written by ``make student-book`` (or [])."""
    src = Path(src)
    if not (src / "_config.yml").is_file():
        return [f"{src} holds no book: run make student-book (or make student-sources) first"]
    problems = []
    if "(student edition)" not in (src / "_config.yml").read_text(encoding="utf-8"):
        problems.append(f"{src}/_config.yml is not the student edition's: publish the "
                        "sources that make student-book writes (_build/student/src)")
    for name in ("requirements.txt", "runtime.txt", "postBuild", "pyproject.toml"):
        if not (src / name).is_file():
            problems.append(f"{src} has no {name}: Binder needs it")
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".md", ".ipynb") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb" and _MARKERS.search(text):
            problems.append(f"{path.relative_to(src)} holds a solution or hidden-test marker")
        elif path.suffix == ".md" and any(line.strip() not in ("", STUDENT_SOLUTION_NOTE)
                                          for line in chapter_solution_lines(text)):
            problems.append(f"{path.relative_to(src)} holds the text of a solution")
    return problems


def publish_sources(src, remote, branch="main", message=None):
    """Push the student sources ``src`` to ``branch`` of ``remote``, as one more commit.

    ``src`` must be what ``make student-book`` wrote (its ``_config.yml`` names the student
    edition, the Binder files are there, and no chapter or homework holds a solution or a
    hidden test): anything else is refused. The commit goes on top of the branch's
    history, so a diff shows what changed since the last release; when nothing changed,
    nothing is pushed. Returns the branch's commit.
    """
    src = Path(src).resolve()
    problems = student_source_problems(src)
    if problems:
        raise PublishError("will not publish these sources:\n  " + "\n  ".join(problems))
    message = message or "Release the student edition"
    with tempfile.TemporaryDirectory(prefix="lincls-student-repo-") as tmp:
        had_branch = _scratch(remote, branch, tmp)
        cmd = [_tool("ghp-import"), "--remote", "origin", "--branch", branch,
               "--message", message, str(src)]
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if done.returncode:
            raise PublishError(f"ghp-import failed: {(done.stderr or done.stdout).strip()}")
        commit = _git("rev-parse", branch, cwd=tmp).stdout.strip()
        tree = _git("rev-parse", f"{branch}^{{tree}}", cwd=tmp).stdout.strip()
        before = _git("rev-parse", f"origin/{branch}^{{tree}}", cwd=tmp, check=False)
        if had_branch and before.stdout.strip() == tree:
            commit = _git("rev-parse", f"origin/{branch}", cwd=tmp).stdout.strip()
            print(f"the {branch} branch of {remote} already holds these sources: nothing pushed")
            return commit
        pushed = _git("push", "-q", "origin", branch, cwd=tmp, check=False)
        if pushed.returncode:
            raise PublishError(f"git push to {remote} failed: {pushed.stderr.strip()}")
    print(f"published the student sources {src} to the {branch} branch of {remote} "
          f"({commit[:12]})")
    return commit


def stage_site(site, dest, pdf=None):
    """Copy the website ``site`` (checked as by :func:`check_site`) to ``dest``, replaced."""
    site, dest = check_site(site, pdf).resolve(), Path(dest).resolve()
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(site, dest)
    (dest / ".nojekyll").touch()
    print(f"staged {site} in {dest}")
    return dest


# ---------------------------------------------------------------------------------
# The edition
# ---------------------------------------------------------------------------------
def editions(root="."):
    """``{where: number}`` for every place that writes the edition's number."""
    import yaml

    root = Path(root)
    found = {}
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    found["_config.yml (sphinx: config: release)"] = str(
        ((config.get("sphinx") or {}).get("config") or {}).get("release", ""))
    init = (root / "lincls" / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__ = "([^"]*)"', init, re.M)
    found["lincls/__init__.py (__version__)"] = m[1] if m else ""
    tools = root / "tools" / "booktools" / "__init__.py"
    if tools.exists():  # the sibling package, versioned with the book
        m = re.search(r'^__version__ = "([^"]*)"', tools.read_text(encoding="utf-8"), re.M)
        found["tools/booktools/__init__.py (__version__)"] = m[1] if m else ""
    cff = yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8"))
    found["CITATION.cff (version)"] = str(cff.get("version", ""))
    found["CITATION.cff (preferred-citation: edition)"] = str(
        (cff.get("preferred-citation") or {}).get("edition", ""))
    m = _CHANGELOG_HEADING.search((root / "CHANGELOG.md").read_text(encoding="utf-8"))
    found["CHANGELOG.md (newest edition)"] = m["edition"] if m else ""
    return found


def edition_problems(root=".", tag=None):
    """Why the edition cannot be released as it is (``[]`` when it can).

    Every place of :func:`editions` must hold the same number, of the form 2026.1; the
    newest section of ``CHANGELOG.md`` must carry the date of ``CITATION.cff``'s
    ``date-released``; and a ``tag`` must be ``v`` followed by the number.
    """
    import yaml

    root = Path(root)
    found = editions(root)
    numbers = set(found.values())
    problems = [f"{where}: {number!r} is not a number like 2026.1"
                for where, number in found.items() if not EDITION.match(number)]
    if len(numbers) > 1:
        problems.append("the edition differs: " + ", ".join(f"{w} {n!r}" for w, n in found.items()))
    m = _CHANGELOG_HEADING.search((root / "CHANGELOG.md").read_text(encoding="utf-8"))
    released = str(yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8"))
                   .get("date-released", ""))
    if m and m["date"] != released:
        problems.append(f"CHANGELOG.md dates {m['edition']} {m['date']}, CITATION.cff's "
                        f"date-released is {released}")
    if tag is not None and len(numbers) == 1 and tag != "v" + next(iter(numbers)):
        problems.append(f"the tag {tag} does not name the edition {next(iter(numbers))}: "
                        f"tag it v{next(iter(numbers))}")
    return problems


def release_notes(root=".", edition=None):
    """The section of ``CHANGELOG.md`` for ``edition`` (default: the newest), its body only."""
    text = (Path(root) / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = list(_CHANGELOG_HEADING.finditer(text))
    for i, m in enumerate(headings):
        if edition in (None, m["edition"]):
            end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
            return text[m.end():end].strip() + "\n"
    raise PublishError(f"CHANGELOG.md has no section for the edition {edition}")


def write_release_notes(path, root="."):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(release_notes(root), encoding="utf-8")
    return path
