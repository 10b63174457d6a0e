"""The Binder/JupyterLab side of the book that needs no browser: the math macros.

``_config.yml`` holds the macros; each chapter and homework notebook carries a copy in
the front matter of its first markdown cell, for jupyterlab-myst
(``python -m booktools.sphinxext.binder macros .`` writes them).
"""

import json
from pathlib import Path

import pytest
import yaml

from booktools.sphinxext.binder import (
    BLOCK,
    cell_text,
    config_macros,
    first_markdown,
    front_matter,
    split_md,
)

ROOT = Path(__file__).resolve().parents[1]


def notebooks():
    chapters = [p for p in sorted((ROOT / "book").glob("*.md")) if split_md(p.read_text())]
    return chapters + sorted((ROOT / "book" / "homework").glob("*.ipynb"))


def block_of(path):
    if path.suffix == ".md":
        return split_md(path.read_text())[1]
    match = BLOCK.match(cell_text(first_markdown(json.loads(path.read_text()))))
    return match.group(0) if match else ""


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_notebook_carries_the_config_macros(path):
    assert block_of(path) == front_matter(config_macros(ROOT)), (
        f"{path.name}: run `python -m booktools.sphinxext.binder macros .`")


def test_front_matter_defines_every_macro():
    macros = config_macros(ROOT)
    block = front_matter(macros)
    math = yaml.safe_load(block.strip().strip("-"))["math"]
    assert math == {"\\" + name: value for name, value in macros.items()}
    assert "\\norm" in math and "#1" in math["\\norm"]  # arguments survive
