"""The teachers' tables: ``{homework-table}`` and ``{self-check-table}``.

A Sphinx extension (listed in ``_config.yml``). Defined in chapter "For teachers"
(``book/teachers.md``).
"""

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList

from booktools.homework import HomeworkError, homework_table
from lincls.homework.answers import ANSWERS, FLAG_SECONDS, brute_force_cost


def _parse(directive, text):
    env = directive.state.document.settings.env
    container = nodes.container(classes=["homework-table"])
    directive.state.nested_parse(
        StringList(text.splitlines(), source=env.docname), directive.content_offset, container
    )
    return [container]


class HomeworkTable(Directive):
    """``{homework-table} homework``: the table of the notebooks in a directory.

    The directory is relative to the page. With the ``:binder:`` flag a column of
    Binder links is added, from the book's ``_config.yml`` (none when it names no
    repository). The page is rebuilt whenever a notebook in the directory changes, or
    one is added or removed (:func:`notebooks_changed`: Sphinx takes a dependency that is
    not a file, such as the directory, for a missing one and would reread the page on
    every build).
    """

    required_arguments = 1
    option_spec = {"binder": directives.flag}

    def run(self):
        env = self.state.document.settings.env
        page_dir = Path(env.doc2path(env.docname)).parent
        directory = (page_dir / self.arguments[0]).resolve()
        config = Path(env.srcdir) / "_config.yml" if "binder" in self.options else None
        env.homework_tables = getattr(env, "homework_tables", {})
        env.homework_tables.setdefault(env.docname, {})[str(directory)] = _notebooks(directory)
        for path in sorted(directory.glob("*.ipynb")):
            env.note_dependency(str(path))
        if config is not None:
            env.note_dependency(str(config))
        try:
            text = homework_table(directory, self.arguments[0], config)
        except (HomeworkError, ValueError) as exc:
            raise self.error(f"homework-table: {exc}") from exc
        return _parse(self, text)


def _notebooks(directory):
    return sorted(path.name for path in directory.glob("*.ipynb"))


def notebooks_changed(app, env, added, changed, removed):
    """env-get-outdated: the pages whose table's directory gained or lost a notebook."""
    tables = getattr(env, "homework_tables", {})
    return [doc for doc, dirs in tables.items() if doc not in removed
            and any(_notebooks(Path(d)) != names for d, names in dirs.items())]


def purge_tables(app, env, docname):
    getattr(env, "homework_tables", {}).pop(docname, None)


def merge_tables(app, env, docnames, other):
    tables = getattr(other, "homework_tables", {})
    env.homework_tables = getattr(env, "homework_tables", {})
    env.homework_tables.update({doc: tables[doc] for doc in docnames if doc in tables})


def _duration(seconds):
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600),
                       ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:,.3g} {unit}"
    return f"{seconds:.2g} seconds"


def self_check_table(registry=ANSWERS, seconds=None):
    """Markdown: every self-check, its answer space, and the time a brute force takes."""
    rows = brute_force_cost(registry, seconds)
    per_hash = rows[0]["seconds_per_hash"] if rows else 0.0
    lines = [
        "| Self-check | Values to try | Expected hashes | Brute force on one core | |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        flag = "**under a minute**" if row["flag"] else ""
        lines.append(
            f"| `{row['name']}` | {row['space']:.3g} | {row['hashes']:.3g} | "
            f"{_duration(row['seconds'])} | {flag} |"
        )
    flagged = sum(row["flag"] for row in rows)
    lines += [
        "",
        f"One hash took {per_hash:.3g} s on the machine that built this page; "
        f"{flagged} of {len(rows)} self-checks can be inverted in under "
        f"{FLAG_SECONDS:.0f} seconds.",
    ]
    return "\n".join(lines)


class SelfCheckTable(Directive):
    """``{self-check-table}``: the brute-force cost of every shipped self-check.

    Left out of the student edition (``lincls_student_edition``): the table is for
    teachers deciding which questions get a self-check.
    """

    def run(self):
        env = self.state.document.settings.env
        env.note_dependency(str(ANSWERS))
        if env.config.lincls_student_edition:
            return _parse(self, "*This table is not part of the student edition.*")
        return _parse(self, self_check_table())


def setup(app):
    """Sphinx extension: the directives of the teachers' chapter."""
    app.add_config_value("lincls_student_edition", False, "env")
    app.add_directive("homework-table", HomeworkTable)
    app.add_directive("self-check-table", SelfCheckTable)
    app.connect("env-get-outdated", notebooks_changed)
    app.connect("env-purge-doc", purge_tables)
    app.connect("env-merge-info", merge_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
