"""lincls.quiz: the questions it refuses, and the markup every reader's quiz is made of.

The quizzes answered in a browser: tests/test_browser.py (test_page, quiz_checks)."""

import json
import re

import pytest

from lincls.quiz import quiz

CHOICE = """
- kind: choice
  question: 'Pick $a$ <b>'
  options:
    - text: 'right `code`'
      correct: true
      feedback: 'why'
    - text: 'wrong'
      feedback: 'the misconception'
"""
MANY = """
- kind: many
  question: 'Which are true?'
  options:
    - text: 'A'
      correct: true
      feedback: 'a'
    - text: 'B'
      feedback: 'b'
"""
NUMBER = """
- kind: number
  question: 'How much?'
  answer: 0.5
  tol: 0.01
  feedback: 'half'
  wrong: 'hint'
  traps:
    - value: 2
      tol: 0.01
      feedback: 'inverted'
"""


def test_the_markup_is_labelled_and_escaped():
    text = quiz(CHOICE + MANY + NUMBER)._repr_html_()
    assert text.count("<fieldset>") == text.count("<legend>") == 3
    assert text.count('role="status"') == text.count("<button") == 3
    for ident in re.findall(r'<input[^>]* id="([^"]+)"', text):  # every input has its label
        assert f'<label for="{ident}">' in text
    assert "&lt;b&gt;" in text and "<b>" not in text  # text is text, not markup
    assert r'<span class="math notranslate nohighlight">\(a\)</span>' in text
    assert "<code>code</code>" in text
    key = json.loads(re.search(r'class="lincls-quiz-key">(.*?)</script>', text)[1])
    assert key == [{"kind": "choice", "correct": [True, False]},
                   {"kind": "many", "correct": [True, False]},
                   {"kind": "number", "answer": 0.5, "tol": 0.01, "traps": [[2, 0.01]]}]
    for item in ['data-fb="0"', 'data-fb="1"', 'data-fb="right"', 'data-fb="trap0"',
                 'data-fb="wrong"']:
        assert item in text


def test_the_id_is_the_source_s():
    assert quiz(MANY).id == quiz(MANY).id != quiz(NUMBER).id


@pytest.mark.parametrize("text, message", [
    ("not: [a list", "not valid YAML"),
    ("[]", "non-empty YAML list"),
    ("- kind: essay\n  question: 'x'", "'kind' must be one of"),
    (CHOICE.replace("      correct: true\n", ""), "one correct option, not 0"),
    (CHOICE.replace("      feedback: 'the misconception'\n", ""), "option 2: 'feedback'"),
    (MANY.replace("correct: true", "correct: 'yes'"), "'correct' is true or false"),
    (NUMBER.replace("tol: 0.01\n  feedback", "tol: 0\n  feedback"), "'tol' must be > 0"),
    (NUMBER.replace("answer: 0.5", "answer: .nan"), "'answer' must be a finite number"),
    (NUMBER.replace("  wrong: 'hint'\n", ""), "'wrong' must be a non-empty text"),
    (NUMBER.replace("value: 2", "value: 0.505"), "meets the right answer's"),
    (NUMBER.replace("How much?", "How much? (two decimals)"), "at most 0.005, not 0.01"),
    (NUMBER.replace("How much?", "How much? Give 3 decimals."), "at most 0.0005, not 0.01"),
])
def test_a_mistake_in_a_quiz_is_named(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        quiz(text)


def test_no_quiz_names_an_equation_by_its_label():
    """A quiz is plain text, where a MyST reference does not resolve: "eq. (gardner-capacity)"
    would show the label, not the number the page gives the equation. Quizzes name it."""
    from pathlib import Path

    book = Path(__file__).resolve().parents[1] / "book"
    sources = {p: p.read_text() for p in book.glob("*.md")}
    labels = {label for text in sources.values() for label in  # :label: x, (x)=, $$ (x)
              re.findall(r"^(?::label:\s*|\(|\$\$\s*\()([\w-]+)\)?=?\s*$", text, re.M)}
    assert len(labels) > 50
    found = [f"{path.name}: ({label})" for path, text in sources.items()
             for block in re.findall(r'quiz\(r?f?"""(.*?)"""\)', text, re.S)
             for label in labels if f"({label})" in block]
    assert found == [], found
