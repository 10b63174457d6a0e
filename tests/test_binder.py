"""The Binder/JupyterLab side of the book that needs no browser: the math macros, and the
citations and cross-references postBuild resolves.

``_config.yml`` holds the macros; each chapter and homework notebook carries a copy in
the front matter of its first markdown cell, for jupyterlab-myst
(``python -m booktools.sphinxext.binder macros .`` writes them). The same front matter
holds the markdown the website build resolved for each citation and cross-reference
(``xrefs``) and the entries the notebook cites (``bibliography``); the build writes them
and warns when they were out of date, and ``postBuild`` (``... binder resolve``) puts them
in place of the roles. See tools/booktools/sphinxext/xrefs.py.
"""

import re
import shutil
from pathlib import Path

import pytest
import yaml

from booktools.sphinxext.binder import (
    config_macros,
    front_matter,
    get_block,
    math_part,
    notebooks,
    read_front_matter,
    resolve_roles,
)
from booktools.sphinxext.xrefs import ROLE, replace_roles

ROOT = Path(__file__).resolve().parents[1]
CITE_LINK = re.compile(r"\]\(#(cite-[^)\s]+)\)")


def roles(text):
    """The roles of a notebook's markdown outside code blocks (what the rewrite replaces)."""
    marked = replace_roles(text, {r: f"\0{r}\0" for r in set(ROLE.findall(text))})
    return re.findall(r"\0(.*?)\0", marked, re.S)


@pytest.mark.parametrize("path", notebooks(ROOT), ids=lambda p: p.name)
def test_notebook_carries_the_config_macros(path):
    assert math_part(get_block(path)) == math_part(front_matter(config_macros(ROOT))), (
        f"{path.name}: run `python -m booktools.sphinxext.binder macros .`")


def test_front_matter_defines_every_macro():
    macros = config_macros(ROOT)
    block = front_matter(macros)
    math = yaml.safe_load(block.strip().strip("-"))["math"]
    assert math == {"\\" + name: value for name, value in macros.items()}
    assert "\\norm" in math and "#1" in math["\\norm"]  # arguments survive


@pytest.mark.parametrize("path", notebooks(ROOT), ids=lambda p: p.name)
def test_every_role_is_resolved_in_the_front_matter(path):
    """Each citation and cross-reference has its resolved markdown (a role added since the
    last build has none: `make book` writes it); the repository's notebooks are not the
    rewritten ones."""
    data = read_front_matter(get_block(path))
    assert not data.get("roles_resolved"), f"{path.name} was rewritten by postBuild"
    resolved = data.get("xrefs") or {}
    missing = sorted(set(roles(path.read_text())) - set(resolved))
    assert missing == [], f"{path.name}: not resolved (run make book): {missing}"
    for role, markdown in resolved.items():
        assert markdown and not ROLE.search(markdown), (role, markdown)
        for anchor in CITE_LINK.findall(markdown):
            assert anchor.removeprefix("cite-") in {k.lower() for k in data["bibliography"]}


def test_resolve_replaces_every_role_once(tmp_path):
    """`binder resolve` (postBuild) on a copy: no role is left, each citation links an entry
    of the references cell appended to its notebook, the math stays, and a second run
    changes nothing."""
    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("_build"))
    before = {p.name: p.read_text() for p in notebooks(tmp_path)}
    changed = resolve_roles(tmp_path)
    cited = 0
    for path in notebooks(tmp_path):
        text, data = path.read_text(), read_front_matter(get_block(path))
        assert data["roles_resolved"] is True
        assert math_part(get_block(path)) == math_part(front_matter(config_macros(ROOT)))
        assert roles(text) == [], path.name
        anchors = set(CITE_LINK.findall(text))
        targets = set(re.findall(r"^\((cite-[^)]+)\)=$", text, re.M))
        assert anchors == targets, path.name
        cited += len(targets)
        if roles(before[path.name]):
            assert path in changed
    assert cited > 50  # the book cites
    assert resolve_roles(tmp_path) == []


def test_resolve_leaves_code_alone():
    """Roles in code stay; in a directive's body (a MyST fence) they are replaced."""
    text = ("See {cite}`a`.\n\n```md\n{cite}`a`\n```\n\n"
            "````{note} On {cite}`a`\n{cite}`a`\n```{code-cell}\n{cite}`a`\n```\n````\n")
    assert replace_roles(text, {"{cite}`a`": "[A](#cite-a)"}) == (
        "See [A](#cite-a).\n\n```md\n{cite}`a`\n```\n\n"
        "````{note} On [A](#cite-a)\n[A](#cite-a)\n```{code-cell}\n{cite}`a`\n```\n````\n")


def test_resolved_homework_still_releases(tmp_path):
    """On Binder postBuild resolves the homework notebooks' roles too, and the teachers'
    chapter releases homework there: the mark it leaves in the front matter is allowed, so
    every homework still validates (it did not: JupyterLab's run of the teachers' chapter
    stopped at MalformedHomework)."""
    from booktools.homework.validation import validate

    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("_build"))
    resolve_roles(tmp_path)
    homework = sorted((tmp_path / "book" / "homework").glob("homework*.ipynb"))
    assert len(homework) >= 8
    for path in homework:
        assert read_front_matter(get_block(path)).get("roles_resolved") is True, path.name
        assert validate(path) == [], path.name
