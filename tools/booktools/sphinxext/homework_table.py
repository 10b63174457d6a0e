"""The teachers' table of the homework: ``{homework-table}``.

A Sphinx extension (listed in ``_config.yml``). Defined in chapter "For teachers"
(``book/teachers.md``).
"""

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList

from booktools.homework import HomeworkError, homework_table


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


def setup(app):
    """Sphinx extension: the directive of the teachers' chapter (and the config value
    ``lincls_student_edition`` the student edition sets)."""
    app.add_config_value("lincls_student_edition", False, "env")
    app.add_directive("homework-table", HomeworkTable)
    app.connect("env-get-outdated", notebooks_changed)
    app.connect("env-purge-doc", purge_tables)
    app.connect("env-merge-info", merge_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
