"""The teachers' tables: the homework notebooks (used by ``booktools.sphinxext``) and
what inverting the self-checks of a release costs (:class:`ReleaseCosts`).

Defined in chapter "For teachers" (``book/teachers.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lincls.homework.answers import ATTACKER_CORES, FLAG_SECONDS, brute_force_cost, seconds_per_hash

from .notebook import _check_metadata, _nbgrader, _read, _title, is_grade_cell, is_solution_cell


@dataclass
class HomeworkInfo:
    """What the teacher's table says about one homework notebook."""

    path: Path
    title: str
    summary: str
    chapters: list
    minutes: int
    exercises: int
    points: float
    fixed: list


def homework_info(path):
    """Read the title, the ``lincls`` metadata block and nbgrader's points of a notebook."""
    nb = _read(path)
    _check_metadata(nb, path)
    meta = nb.metadata["lincls"]
    exercises = sum(1 for c in nb.cells if is_solution_cell(c))
    points = sum(float(_nbgrader(c).get("points", 0)) for c in nb.cells if is_grade_cell(c))
    return HomeworkInfo(
        Path(path), _title(nb), meta["summary"].strip(), list(meta["chapters"]),
        int(meta["minutes"]), exercises, points, list(meta.get("fixed", [])),
    )


def binder_url(config, notebook):
    r"""The Binder link that opens ``notebook`` in JupyterLab, from the book's config.

    ``config`` is the path of ``_config.yml``; its ``repository`` (url, branch) and
    ``launch_buttons.binderhub_url`` are used, so the link follows the one place where
    the repository is set. ``notebook`` is a path inside the repository.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "_config.yml").write_text(
    ...     "repository: {url: 'https://github.com/me/book', branch: main}\n"
    ...     "launch_buttons: {binderhub_url: 'https://mybinder.org'}\n")
    >>> binder_url(root / "_config.yml", root / "book/homework/homework1.ipynb")
    'https://mybinder.org/v2/gh/me/book/main?urlpath=lab/tree/book/homework/homework1.ipynb'
    """
    import yaml

    config = Path(config)
    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    repo = data.get("repository", {}) or {}
    url = str(repo.get("url", "")).rstrip("/")
    m = re.fullmatch(r"https?://github\.com/([^/]+)/([^/]+?)(\.git)?", url)
    if not m:
        raise ValueError(f"{config}: repository.url {url!r} is not a GitHub repository URL")
    branch = repo.get("branch", "main")
    hub = (data.get("launch_buttons", {}) or {}).get("binderhub_url", "https://mybinder.org")
    rel = Path(notebook).resolve().relative_to(config.resolve().parent).as_posix()
    return f"{hub.rstrip('/')}/v2/gh/{m[1]}/{m[2]}/{branch}?urlpath=lab/tree/{rel}"


def _repository_url(config):
    import yaml

    data = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    return str((data.get("repository") or {}).get("url") or "")


def homework_table(directory="homework", link_prefix=None, config=None):
    """A Markdown table of the homework notebooks in ``directory``.

    One row per notebook, from its title cell, its ``lincls`` metadata block (summary,
    chapters, minutes, and the answers that are the same for every seed) and its
    nbgrader cells (answer cells, points). Links use MyST's
    ``{doc}`` role relative to the page that shows the table. With ``config`` (the
    path of ``_config.yml``) a column of Binder links is added (see :func:`binder_url`).
    """
    directory = Path(directory)
    prefix = directory.as_posix() if link_prefix is None else link_prefix
    if config is not None and not _repository_url(config):
        config = None  # no repository (the student edition without one): no Binder links
    head = ("| Homework | What it practises | Chapters | Time | Answer cells | Points | "
            "Same for every seed |")
    rule = "|---|---|---|---|---|---|---|"
    if config is not None:
        head, rule = head + " Binder |", rule + "---|"
    rows = [head, rule]
    minutes = points = 0
    for path in sorted(directory.glob("*.ipynb")):
        info = homework_info(path)
        minutes, points = minutes + info.minutes, points + info.points
        doc = f"{prefix}/{path.stem}" if prefix else path.stem
        chapters = ", ".join(f"{{doc}}`{c}`" for c in info.chapters)
        row = (
            f"| {{doc}}`{info.title} <{doc}>` | {info.summary} | {chapters} | "
            f"{info.minutes} min | {info.exercises} | {info.points:g} | "
            f"{', '.join(f'`{name}`' for name in info.fixed) or 'none'} |"
        )
        if config is not None:
            row += f" [launch]({binder_url(config, path)}) |"
        rows.append(row)
    if len(rows) > 2:
        total = f"| **Total** | | | {minutes} min | | {points:g} | |"
        rows.append(total + (" |" if config is not None else ""))
    return "\n".join(rows)



def duration(seconds):
    """``seconds`` in the largest unit it fills, to three digits: ``'2.08 hours'``."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600),
                       ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:,.3g} {unit}"
    return f"{seconds:.2g} seconds"


class ReleaseCosts:
    """What a brute force of each self-check of a release costs (for the teacher only).

    ``release(..., costs=ReleaseCosts())`` adds every variant it records (:meth:`add`):
    its registry, and the teacher's answers and the values its notebook prints near
    them (``check(..., prior=...)``). :meth:`weakest` keeps, per self-check, the variant
    that costs least (with ``--students``, the student whose answer a search finds
    first); :meth:`table` writes that as Markdown. One hash is timed once, at the
    start, so every variant is priced alike.
    """

    def __init__(self, seconds=None, cores=ATTACKER_CORES):
        self.seconds = seconds_per_hash() if seconds is None else float(seconds)
        self.cores = cores
        self.rows = []  # one per variant and self-check

    def add(self, registry, checked, priors=None, student=None):
        """Price the self-checks of one variant: its ``registry`` file, its answers by
        name (``checked``) and the notebook's printed values near them (``priors``)."""
        priors = priors or {}
        values = {name: {"value": value, "priors": [priors[name]] if name in priors else []}
                  for name, value in checked.items()}
        for row in brute_force_cost(registry, self.seconds, values, self.cores):
            self.rows.append(dict(row, student=student))

    def weakest(self):
        """Per self-check (by name): the row of its cheapest variant, with ``variants``
        (how many were priced)."""
        best, count = {}, {}
        for row in self.rows:
            name = row["name"]
            count[name] = count.get(name, 0) + 1
            if name not in best or row["hashes"] < best[name]["hashes"]:
                best[name] = row
        return [dict(best[name], variants=count[name]) for name in sorted(best)]

    def cells(self):
        """``(head, rows, summary)``: the column titles, the cells of every self-check's
        cheapest variant (plain text) and the sentence on what is flagged, on one core
        and on :attr:`cores` cores."""
        rows = self.weakest()
        per_student = any(row["student"] for row in rows)
        head = ["Self-check", "Values to try", "Expected hashes, bound only",
                "Hashes, searching outward", "One core", f"{self.cores} cores"]
        head += ["Weakest variant"] * per_student + [""]
        body = []
        for row in rows:
            cells = [row["name"], f"{row['space']:.3g}", f"{row['uniform']:.3g}",
                     "" if row["search"] is None else f"{row['search']:,}",
                     duration(row["seconds"]), duration(row["cores_seconds"])]
            if per_student:
                cells.append(f"{row['student']} of {row['variants']}")
            cells.append("under a minute" if row["flag"] else
                         f"under a minute on {self.cores} cores" if row["cores_flag"] else "")
            body.append(cells)
        flagged = sum(row["flag"] for row in rows)
        many = sum(row["cores_flag"] for row in rows)
        summary = (
            f"One hash took {self.seconds:.3g} s on one core here. Of {len(rows)} "
            f"self-checks, {flagged} can be inverted in under {FLAG_SECONDS:.0f} seconds on "
            f"one core; an attacker with {self.cores} cores divides every time by "
            f"{self.cores}, and inverts {many} in under {FLAG_SECONDS:.0f} seconds.")
        return head, body, summary

    def table(self):
        """Markdown (for the terminal): :meth:`cells` as a table, then the summary."""
        head, body, summary = self.cells()
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join([f"`{row[0]}`", *row[1:]]) + " |" for row in body]
        return "\n".join([*lines, "", summary])

    def html(self):
        """HTML (for a page): :meth:`cells` as a table, then the summary."""
        from html import escape

        head, body, summary = self.cells()
        rows = ["<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"]
        rows += ["<tr><td><code>" + escape(row[0]) + "</code></td>"
                 + "".join(f"<td>{escape(c)}</td>" for c in row[1:]) + "</tr>" for row in body]
        return f"<table>{''.join(rows)}</table>\n<p>{escape(summary)}</p>"
