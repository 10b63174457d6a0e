"""Every chapter and label a lincls docstring names exists in the book, and every public
function and class says which chapter defines it (the docstring promise of DESIGN.md)."""

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
import yaml

import lincls

ROOT = Path(__file__).resolve().parents[1]
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
CHAPTERS = [ROOT / f"{c['file']}.md" for part in TOC["parts"] for c in part["chapters"]]
BOOK = {path: path.read_text() for path in CHAPTERS if path.exists()}
TITLES = {m.group(1) for text in BOOK.values() for m in re.finditer(r"^# (.+)$", text, re.M)}
DEFINITION = re.compile(r"\$\$ *\(([\w-]+)\)|:label: *([\w-]+)|^\(([\w-]+)\)=$", re.M)
LABELS = {label for text in BOOK.values() for match in DEFINITION.finditer(text)
          for label in match.groups() if label}

MODULES = [importlib.import_module(f"lincls.{m.name}")
           for m in pkgutil.iter_modules(lincls.__path__)
           if m.name not in ("homework", "sphinxext", "_site", "_blas")]
SOURCES = {module.__name__: inspect.getsource(module) for module in MODULES}

# chapter "Title" / chapters "A" ... and "B";  eq. (label), eqs. (a) and (b), eq. ``label``,
# Algorithm alg-x, Theorem thm-x
CHAPTER = re.compile(r'chapters? "([^"]+)"(?:[^"]{0,80}?and "([^"]+)")?')
EQUATION = re.compile(r"[Ee]qs?\.\s*(?:\(|``)([\w-]+)(?:\)|``)(?:\s*and\s*(?:\(|``)([\w-]+))?")
NAMED = re.compile(r"(?:Algorithm|Theorem|Definition)\s+((?:alg|thm|def|hk)-[\w-]+)")


def _public(module):
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        obj = getattr(obj, "py_func", obj)  # numba functions: the Python function
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__:
            yield name, obj


def test_the_book_has_titles_and_labels_to_check_against():
    assert "The perceptron" in TITLES and "perceptron-update" in LABELS and len(LABELS) > 100


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_chapter_and_label_named_in_the_source_exists(module):
    source = SOURCES[module.__name__]
    for match in CHAPTER.finditer(source):
        for title in filter(None, match.groups()):
            title = " ".join(title.split())  # a title may wrap in the source
            assert title in TITLES, f"{module.__name__} names chapter {title!r}"
    for pattern in (EQUATION, NAMED):
        for match in pattern.finditer(source):
            for label in filter(None, match.groups()):
                assert label in LABELS, f"{module.__name__} names label {label!r}"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_public_function_and_class_names_its_chapter_and_has_an_example(module):
    for name, obj in _public(module):
        doc = inspect.getdoc(obj) or ""
        assert re.search(r'Defined in chapters?\s+"', doc), f"{module.__name__}.{name}: chapter"
        if inspect.isfunction(obj):
            assert ">>>" in doc, f"{module.__name__}.{name}: no doctest"
