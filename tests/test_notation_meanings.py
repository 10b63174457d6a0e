"""book/notation.md: "Within one chapter a symbol has one meaning, with N exceptions" names
exactly the (symbol, chapter) pairs that the notation tables give two meanings.

A symbol is a letter in one typeface with its accents; an index (a variable sub- or
superscript such as the j of mu_j) does not make a new symbol, a name (the min of
kappa_min) does. The scan reads every table row: its symbols, and the chapters in its
"where" column ("Part III", "everywhere", "everywhere except ...", and a parenthesis after
a chapter that restricts the row to some of its symbols there)."""

import re
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "book" / "notation.md").read_text()
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
NUMBERED = [Path(c["file"]).name for p in TOC["parts"] if p.get("numbered") for c in p["chapters"]]
PART3 = [Path(c["file"]).name for p in TOC["parts"] if p["caption"].startswith("Part III")
         for c in p["chapters"]]
DOC = re.compile(r"\{doc\}`([\w-]+)`")
# variable sub- and superscripts: indices, not names
INDEX = re.compile(
    r"[_^](?:[ijkltan]|N|\\mu|\\nu|\\alpha|\{ij\}|\{kl\}|\{ab\}|\{\(i\)\})(?![A-Za-z])")
WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

# Pairs of rows that give one meaning in two forms, not two meanings (checked by reading):
SAME = {
    ("\\vx", "an input vector", "the $i$-th"),                 # an input, and the i-th one
    ("\\vw", "the weight vector", "the weights after $t$"),   # the weights, and at step t
    ("\\eta", "the learning rate", "the step of iteration"),  # a step, and its schedule
    ("K", "a kernel", "the dual gradient"),                   # K_kl is the kernel's Gram matrix
    ("\\tilde\\vw", "the augmented weight", "the perceptron's $j$-th"),  # augmented weights
    ("i", "sample, class or step indices", "a repetition and a cell"),  # i_alpha: an index
    ("k", "a sample, class or step index", "the perceptron's $j$-th"),  # k: the last index
}


def _same(symbol, a, b):
    return any(symbol == s and ((a.startswith(x) and b.startswith(y))
                                or (a.startswith(y) and b.startswith(x))) for s, x, y in SAME)


def _split_top(text, sep=","):
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        else:
            depth += (ch in "([{") - (ch in ")]}")
    return parts + [text[start:]]


def heads(cell):
    """The symbols a cell of the symbol column (or a parenthesis) names."""
    found = set()
    for token in re.findall(r"\$(.+?)\$", cell):
        token = _split_top(token, "=")[0].strip()
        if token[:1] in "([" and token[-1:] in ")]":               # (i_a, i_N, r), [a, b]
            token = token[1:-1]
        for part in _split_top(token):
            part = part.strip()
            while part.endswith(")") and "(" in part:              # arguments: f(x), C(P,N)
                part = part[:part.rindex("(")].rstrip()
            part = INDEX.sub("", part)
            found |= {"D", "t"} if part == "Dt" else ({part} if part else set())
    return found


def chapters(where, row_heads):
    """{chapter: the row's symbols used there}."""
    used = {}
    head, _, rest = where.partition(";")
    if head.strip().startswith("everywhere"):
        excluded = set(DOC.findall(head)) | (set(PART3) if "Part III" in head else set())
        used = {ch: row_heads for ch in NUMBERED if ch not in excluded}
        where = rest
    elif "Part III" in where:
        used = {ch: row_heads for ch in PART3}
    for match in DOC.finditer(where):
        tail = where[match.end():].lstrip()
        only = row_heads
        if tail.startswith("($"):
            named = heads(_split_top(tail[1:], ")")[0])     # up to the closing parenthesis
            if named and named <= row_heads:
                only = named
        used[match[1]] = only
    return used


def rows():
    for line in TEXT.splitlines():
        if line.startswith("| $"):
            symbol, meaning, *where = [c.strip() for c in line.strip().strip("|").split("|")]
            yield symbol, meaning, "|".join(where)


def two_meanings():
    meanings = defaultdict(list)
    for symbol, meaning, where in rows():
        row_heads = heads(symbol)
        for chapter, used in chapters(where, row_heads).items():
            for h in used:
                meanings[h, chapter].append(meaning)
    found = set()
    for (h, chapter), ms in meanings.items():
        for i, a in enumerate(ms):
            for b in ms[i + 1:]:
                if not _same(h, a, b):
                    found.add((h, chapter))
    return found


def stated_exceptions():
    paragraph = TEXT[TEXT.index("**Within one chapter a symbol has one meaning**"):
                     TEXT.index("The tables list")]
    count = re.search(r"with (\w+) exceptions", paragraph)[1]
    pairs = set(re.findall(r"\$([^$]+)\$\s+in\s+\{doc\}`([\w-]+)`", paragraph))
    return WORDS[count], pairs


def test_the_scan_reads_the_tables():
    symbols = {h for s, _, _ in rows() for h in heads(s)}
    assert {"\\vw", "\\mu", "t", "D", "P", "\\kappa", "\\kappa_{\\min}"} <= symbols
    assert heads("$t$, $Dt$") == {"t", "D"} and heads("$\\mu_j$") == {"\\mu"}
    assert heads("$P_n(Q)$") == {"P"} and heads("$\\vw^*$") == {"\\vw^*"}
    assert chapters("{doc}`relaxation` ($\\vw(k)$)", {"\\vw"})["relaxation"] == {"\\vw"}
    where = "everywhere except Part III, {doc}`statmech`; in {doc}`cover` only in an exercise"
    used = chapters(where, {"x"})
    assert "cover" in used and "statmech" not in used and "minover" not in used
    assert chapters("{doc}`minover`, {doc}`svm` ($\\kappa_i$)", {"\\kappa"})["svm"] == {"\\kappa"}


def test_the_stated_exceptions_are_the_symbols_with_two_meanings_in_one_chapter():
    count, pairs = stated_exceptions()
    found = two_meanings()
    assert pairs == found, f"stated {sorted(pairs)}, tables {sorted(found)}"
    assert count == len(found)
