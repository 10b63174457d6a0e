"""Concept quizzes: a chapter's short self-checks, from one source for every reader.

A quiz is a notebook cell ``quiz(text)`` whose output is self-contained HTML (markup, its
style and a small script): the website shows it, and so do JupyterLab and Colab when the
cell runs there. ``text`` is YAML: a list of questions of three kinds,

- ``choice``: one right option among ``options`` (the one with ``correct: true``);
- ``many``: "which of these statements are true": ``correct: true`` marks each true one;
- ``number``: ``answer`` within the absolute tolerance ``tol``; ``wrong`` answers any other
  number, and ``traps`` (``value``, ``tol``, ``feedback``) answer likely mistakes. A
  question that asks for "k decimals" needs a ``tol`` of at most half a unit of the k-th
  decimal that the answer rounded to k decimals still meets (its neighbours then fail).
  A number at the edge of a tolerance counts as inside (a relative slack of 1e-9).

Every option has ``feedback``: why it is right, or the misconception it probes. The
feedback is in the page (under "Show the answer" too, which works without a script):
quizzes are formative. Text is plain, with ``$...$`` for inline TeX and backticks for code.

>>> q = quiz('''
... - kind: number
...   question: 'What is 1/4 as a decimal?'
...   answer: 0.25
...   tol: 0.001
...   feedback: 'One quarter.'
...   wrong: 'Divide 1 by 4.'
... ''')
>>> 'role="status"' in q._repr_html_()
True
"""

import hashlib
import html
import json
import math
import re
from importlib import resources

import yaml

__all__ = ["quiz"]

KINDS = ("choice", "many", "number")
_MATH = re.compile(r"\$([^$]+)\$")
_CODE = re.compile(r"`([^`]+)`")
_WORDS = ["zero", "one", "two", "three", "four", "five", "six"]
_DECIMALS = re.compile(r"\b(\d|" + "|".join(_WORDS) + r")\s+decimals?\b", re.I)


def _inline(text):
    """Escaped HTML of a question's text: ``$..$`` as MathJax's inline math, backticks as code."""
    parts = re.split(r"(\$[^$]+\$|`[^`]+`)", str(text))
    out = []
    for part in parts:
        if _MATH.fullmatch(part):
            out.append('<span class="math notranslate nohighlight">\\('
                       + html.escape(part[1:-1]) + "\\)</span>")
        elif _CODE.fullmatch(part):
            out.append("<code>" + html.escape(part[1:-1]) + "</code>")
        else:
            out.append(html.escape(part))
    return "".join(out)


def _text(item, key, where):
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: '{key}' must be a non-empty text")
    return value


def _number(item, key, where, positive=False):
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: '{key}' must be a finite number, not {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{where}: '{key}' must be > 0, not {value!r}")
    return float(value)


def _check(questions):
    """The questions, validated: a ValueError names the first mistake."""
    if not isinstance(questions, list) or not questions:
        raise ValueError("a quiz is a non-empty YAML list of questions")
    for i, q in enumerate(questions, 1):
        where = f"question {i}"
        if not isinstance(q, dict) or q.get("kind") not in KINDS:
            raise ValueError(f"{where}: 'kind' must be one of {', '.join(KINDS)}")
        _text(q, "question", where)
        if q["kind"] == "number":
            _number(q, "answer", where)
            tol = _number(q, "tol", where, positive=True)
            asked = _DECIMALS.search(q["question"])
            if asked:  # "(two decimals)": the right value rounded passes, a neighbour fails
                k = int(asked[1]) if asked[1].isdigit() else _WORDS.index(asked[1].lower())
                if tol > 0.5 * 10.0**-k * (1 + 1e-9):
                    raise ValueError(f"{where}: it asks for {k} decimals, so 'tol' must be at "
                                     f"most {0.5 * 10.0**-k:g}, not {tol:g}")
                if abs(round(q["answer"], k) - q["answer"]) > tol * (1 + 1e-9):
                    raise ValueError(f"{where}: the answer rounded to {k} decimals is outside "
                                     f"'tol' {tol:g}")
                q["decimals"] = k
            _text(q, "feedback", where)
            _text(q, "wrong", where)
            for j, trap in enumerate(q.get("traps") or [], 1):
                at = f"{where}, trap {j}"
                if not isinstance(trap, dict):
                    raise ValueError(f"{at}: a trap has 'value', 'tol' and 'feedback'")
                value, tol = _number(trap, "value", at), _number(trap, "tol", at, positive=True)
                _text(trap, "feedback", at)
                if abs(value - q["answer"]) <= tol + q["tol"]:
                    raise ValueError(f"{at}: its interval meets the right answer's")
            continue
        options = q.get("options")
        if not isinstance(options, list) or len(options) < 2:
            raise ValueError(f"{where}: 'options' must list at least two options")
        for j, option in enumerate(options, 1):
            at = f"{where}, option {j}"
            if not isinstance(option, dict):
                raise ValueError(f"{at}: an option has 'text' and 'feedback'")
            _text(option, "text", at)
            _text(option, "feedback", at)
            if not isinstance(option.get("correct", False), bool):
                raise ValueError(f"{at}: 'correct' is true or false")
        right = sum(bool(o.get("correct")) for o in options)
        if q["kind"] == "choice" and right != 1:
            raise ValueError(f"{where}: a choice question has one correct option, not {right}")
    return questions


def _asset(name):
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


class Quiz:
    """The questions of one quiz cell; displayed as HTML (``_repr_html_``).

    Defined in chapter "How to use this book", as :func:`quiz`, which makes one:

    >>> quiz("- kind: many\\n  question: 'x?'\\n  options: [{text: a, feedback: b},"
    ...      " {text: c, feedback: d}]").questions[0]["kind"]
    'many'
    """

    def __init__(self, questions, source):
        self.questions = _check(questions)
        self.id = "lincls-quiz-" + hashlib.sha256(source.encode()).hexdigest()[:12]

    def _question(self, i, q):
        name, kind = f"{self.id}-{i}", q["kind"]
        legend = (f'<legend><span class="lincls-quiz-n">Question {i + 1}.</span> '
                  f'{_inline(q["question"])}</legend>')
        fb = []  # the feedback, in the page once: under "Show the answer"; the script copies it
        if kind == "number":
            body = (f'<label for="{name}-in">Your answer</label> '
                    f'<input type="text" inputmode="decimal" autocomplete="off" id="{name}-in">')
            fb.append(f'<li data-fb="right"><strong>{html.escape(_fmt(q["answer"]))}</strong>'
                      f' (within {html.escape(_fmt(q["tol"]))}): {_inline(q["feedback"])}</li>')
            for j, trap in enumerate(q.get("traps") or []):
                fb.append(f'<li data-fb="trap{j}">If you found {html.escape(_fmt(trap["value"]))}:'
                          f' {_inline(trap["feedback"])}</li>')
            fb.append(f'<li data-fb="wrong">Another number: {_inline(q["wrong"])}</li>')
        else:
            box = "radio" if kind == "choice" else "checkbox"
            rows = []
            for j, o in enumerate(q["options"]):
                rows.append(f'<div class="lincls-quiz-option"><input type="{box}" name="{name}" '
                            f'id="{name}-{j}" value="{j}"><label for="{name}-{j}">'
                            f'{_inline(o["text"])}</label></div>')
                mark = "True" if kind == "many" and o.get("correct") else (
                    "False" if kind == "many" else ("Right" if o.get("correct") else "Wrong"))
                fb.append(f'<li data-fb="{j}"><strong>{mark}:</strong> {_inline(o["text"])}'
                          f' — {_inline(o["feedback"])}</li>')
            body = "".join(rows)
        return (f'<div class="lincls-quiz-q" data-kind="{kind}" data-index="{i}">'
                f'<fieldset>{legend}{body}</fieldset>'
                f'<button type="button" class="lincls-quiz-check">Check</button>'
                f'<div class="lincls-quiz-feedback" role="status" aria-live="polite"></div>'
                f'<details class="lincls-quiz-answer"><summary>Show the answer</summary>'
                f'<ul>{"".join(fb)}</ul></details></div>')

    def _key(self):
        """What the script needs to judge an answer (the feedback it copies from the page)."""
        key = []
        for q in self.questions:
            if q["kind"] == "number":
                key.append({"kind": "number", "answer": q["answer"], "tol": q["tol"],
                            "traps": [[t["value"], t["tol"]] for t in q.get("traps") or []],
                            **({"decimals": q["decimals"]} if "decimals" in q else {})})
            else:
                key.append({"kind": q["kind"],
                            "correct": [bool(o.get("correct")) for o in q["options"]]})
        return key

    def _repr_html_(self):
        key = json.dumps(self._key()).replace("</", "<\\/")
        body = "".join(self._question(i, q) for i, q in enumerate(self.questions))
        return (f'<div class="lincls-quiz mathjax_process tex2jax_process" id="{self.id}" '
                f'role="group" aria-label="Check your understanding">'
                f'<style>{_asset("quiz.css")}</style>'
                f'<p class="lincls-quiz-title">Check your understanding</p>{body}'
                f'<script type="application/json" class="lincls-quiz-key">{key}</script>'
                f'<script>{_asset("quiz.js")}</script></div>')

    def __repr__(self):
        lines = []
        for i, q in enumerate(self.questions, 1):
            lines.append(f"Question {i}. {q['question']}")
            lines += [f"  - {o['text']}" for o in q.get("options") or []]
        return "\n".join(lines)


def _fmt(x):
    return f"{x:.6g}"


def quiz(text):
    """A quiz from its YAML ``text`` (see the module's docstring); shown as the cell's output.

    Defined in chapter "How to use this book" (its paragraph on quizzes); every numbered
    chapter ends sections with one.

    >>> quiz("- kind: choice\\n  question: 'x?'\\n  options: []")
    Traceback (most recent call last):
    ...
    ValueError: question 1: 'options' must list at least two options
    """
    try:
        questions = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"the quiz is not valid YAML: {error}") from None
    return Quiz(questions, text)
