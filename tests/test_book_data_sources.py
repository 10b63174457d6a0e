"""The data sets of the book: what chapter "Binary classification" says about where the
chapters and homework take their data from is what their code imports."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
INTRO = "binary_classification"   # imports scikit-learn's loaders only to check lincls'
IMPORT = re.compile(r"from sklearn\.datasets import ([\w ,]+)")


def _sklearn_imports(text):
    """The names a source imports from sklearn.datasets (aliases dropped)."""
    return {part.split(" as ")[0].strip() for match in IMPORT.finditer(text)
            for part in match.group(1).split(",")}


def _sources():
    """{place: code}: each chapter but the introduction, and each homework notebook."""
    places = {path.stem: path.read_text() for path in BOOK.glob("*.md") if path.stem != INTRO}
    for path in sorted((BOOK / "homework").glob("homework*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        places[path.stem] = "\n".join("".join(c["source"]) for c in cells
                                      if c["cell_type"] == "code")
    return places


def _claimed():
    """{(name, place)} from the sentence of the introduction: `name` ... ({doc}`chapter`,
    homework N)."""
    text = (BOOK / f"{INTRO}.md").read_text()
    start = text.index("A few chapters and homework take their data straight from")
    paragraph = text[start:text.index("\n\n", start)]
    claimed = set()
    for names, places in re.findall(r"((?:`\w+`(?:,| and)?\s*)+)\(([^)]*)\)", paragraph):
        where = set(re.findall(r"\{doc\}`(\w+)`", places))
        where |= {f"homework{n}" for n in re.findall(r"homework (\d+)", places)}
        claimed |= {(name, place) for name in re.findall(r"`(\w+)`", names) for place in where}
    return claimed


def test_introduction_names_every_sklearn_dataset_the_book_uses():
    found = {(name, place) for place, code in _sources().items()
             for name in _sklearn_imports(code)}
    assert found, "no chapter imports from sklearn.datasets: the test reads nothing"
    assert _claimed() == found
