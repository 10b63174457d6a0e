"""Validation of teacher notebooks: their format, and hidden tests that stand apart.

Defined in chapter "For teachers" (``book/teachers.md``). The format is
:mod:`.notebook`'s, the hidden-test rules :mod:`.grading`'s (``python -m booktools
validate SRC``).
"""

from __future__ import annotations

import re

from .grading import hidden_test_problems, unconfirmed_problems
from .notebook import (
    CODE_STUB,
    TEXT_STUB,
    HomeworkError,
    _check_cell,
    _check_metadata,
    _notebooks,
    _read,
    _regions,
    _source_lines,
    fold,
    hidden_sources,
    is_solution_cell,
    solution_lines,
)


def _check_notebook(nb, path, registry=None):
    """All problems of one parsed notebook, as a list of HomeworkError.

    Besides the format, the hidden tests must stand apart from lincls and from the
    self-checks (see :mod:`booktools.homework.grading`).
    """
    errors, grade_ids = [], {}
    try:
        _check_metadata(nb, path)
    except HomeworkError as exc:
        errors.append(exc)
    for index, cell in enumerate(nb.cells):
        try:
            _check_cell(cell, index, path, grade_ids)
        except HomeworkError as exc:
            exc.cell_id = cell.get("id")
            errors.append(exc)
    if errors:
        return errors
    errors += lincls_name_problems(nb, path)
    errors += markdown_cell_problems(nb, path)
    errors += shared_line_problems(nb, path)
    problems = hidden_test_problems(nb, hidden_sources(nb), registry)
    if not _is_student_version(nb, path):
        problems += unconfirmed_problems(nb, hidden_sources(nb))
    for index, message in problems:
        cell = nb.cells[index]
        errors.append(HomeworkError(path, message, index, cell.cell_type, cell.get("id")))
    return errors


def _is_student_version(nb, path):
    """True for a student version: no marker region in any cell, and every answer cell
    holds the stub (its test cells have no hidden tests to hold ``expected``)."""
    for cell in nb.cells:
        lines = _source_lines(cell)
        if _regions(lines, path, None, cell.cell_type):
            return False
        stub = [s.strip() for s in CODE_STUB] if cell.cell_type == "code" else [TEXT_STUB]
        if is_solution_cell(cell) and not set(stub) <= {line.strip() for line in lines}:
            return False
    return True


def validate_notebook(nb, path="<notebook>", registry=None):
    """Every problem of one parsed teacher notebook, as a list of HomeworkError.

    ``registry`` is the self-check registry that the hidden tests are compared with
    (default: the one shipped with lincls).
    """
    return _check_notebook(nb, path, registry)


def validate(src):
    """Check teacher (or student) notebooks without writing anything.

    Parameters
    ----------
    src : path-like
        A notebook or a directory searched recursively for ``*.ipynb``.

    Returns
    -------
    list of HomeworkError
        Every problem found; empty when all notebooks are well formed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "broken.ipynb").write_text("{not json")
    >>> [str(e).split(": ", 1)[1] for e in validate(d)]
    ['is not valid JSON (line 1, column 2: Expecting property name enclosed in double quotes)']
    """
    _, paths = _notebooks(src)
    errors = []
    for path in paths:
        try:
            nb = _read(path)
        except HomeworkError as exc:
            errors.append(exc)
            continue
        errors.extend(_check_notebook(nb, path))
    return errors


# ---------------------------------------------------------------------------------
# Allow-lists: what a student version may hold (DESIGN §10)
# ---------------------------------------------------------------------------------
#: MyST directives a homework's markdown may hold (names compared as docutils compares
#: them, ignoring case). The release copies a markdown cell as written, so a directive
#: meant to hide or remove something (``{solution}``, ``{dropdown}``, ``{toggle}``,
#: ``{admonition}`` with a title, ``{hint}``, an unknown one) would reach the students:
#: anything not named here is an error.
HOMEWORK_DIRECTIVES = frozenset({
    "note", "tip", "important", "warning", "caution", "attention", "seealso", "math",
    "figure", "image", "code-block", "code", "list-table", "table"})
#: Directives whose body is literal text (code or math), not markdown.
LITERAL_DIRECTIVES = frozenset({"math", "code-block", "code", "sourcecode", "literalinclude",
                                "code-cell", "raw"})
#: Options of a directive a homework's markdown may set (``:class:`` is not among them:
#: ``:class: dropdown`` folds a block away).
DIRECTIVE_OPTIONS = frozenset({
    "name", "label", "alt", "width", "height", "align", "scale", "figwidth", "header-rows",
    "stub-columns", "widths", "caption", "linenos", "lineno-start", "emphasize-lines",
    "nowrap", "enumerated", "number-lines"})
#: MyST roles a homework's markdown may use.
HOMEWORK_ROLES = frozenset({"math", "eq", "ref", "numref", "doc", "cite", "cite:p", "cite:t",
                            "sub", "sup", "kbd", "code", "term"})
#: HTML a markdown cell may hold: these inline tags, without attributes (an attribute
#: such as ``hidden`` or ``style`` can hide text); no comment, no other tag.
INLINE_HTML = frozenset({"br", "sub", "sup", "b", "i", "em", "strong", "code", "kbd", "u",
                         "s", "small"})
#: Keys of the front matter of a homework's first markdown cell (its math macros).
FRONT_MATTER_KEYS = frozenset({"math"})
#: Front matter keys allowed with exactly this value anywhere: the mark postBuild leaves
#: on Binder when it resolves a notebook's roles (booktools.sphinxext.binder), which says
#: nothing; the teachers' chapter releases the homework there.
FRONT_MATTER_MARKS = {"roles_resolved": True}
#: Math commands that hide what they typeset (an unescaped ``%`` starts a comment too).
HIDING_MATH = re.compile(r"\\(?:[hv]?phantom|color|textcolor|colorbox|style|class|cssId|"
                         r"require|unicode|href|toggle|texttip|mathtip)(?![A-Za-z])")

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[^{}\s]+)\}(?P<arg>.*)$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):(?P<value>.*)$")


def _closing(lines, n, fence):
    """Line number of the fence closing the one opened on line ``n`` (None: unclosed)."""
    for k in range(n + 1, len(lines)):
        s = lines[k].strip()
        if s and set(s) == {fence[0]} and len(s) >= len(fence):
            return k
    return None


def _front_matter(lines):
    """``(end line, text)`` of a YAML front matter opening ``lines``, or ``(None, None)``."""
    if not lines or lines[0].strip() != "---":
        return None, None
    for k in range(1, len(lines)):
        if lines[k].strip() == "---":
            return k, "\n".join(lines[1:k])
    return None, None


def markdown_problems(text, directives=HOMEWORK_DIRECTIVES, roles=HOMEWORK_ROLES,
                      front_matter=FRONT_MATTER_KEYS, options=DIRECTIVE_OPTIONS,
                      allow_breaks=False):
    """``[(line, problem)]``: what a markdown text holds that is not on the allow-lists.

    Outside code, the text may hold only the ``directives`` (with the ``options``, and
    their bodies searched the same way), the ``roles``, the tags of :data:`INLINE_HTML`
    without attributes, and a front matter of the ``front_matter`` keys (None: a
    leading ``---`` block is no front matter, but text). Everything
    that a renderer hides but the file keeps is refused: an HTML comment, any other HTML,
    a MyST comment (``% ...``), a block break (``+++``, unless ``allow_breaks``), a link
    reference or footnote definition (``[x]: # (...)``), a ``:::`` block that is not an
    allowed directive, and math that hides what it typesets (:data:`HIDING_MATH`, or a
    ``%`` comment). Code blocks and code spans are literal, so they are not searched.

    >>> markdown_problems("Hi <!-- the answer -->\\n```{Solution}\\nx\\n```")
    [(1, 'an HTML comment'), (2, 'the directive {Solution} is not allowed here')]
    >>> markdown_problems("Plain $a<b$, `<code>` and <br> pass.")
    []
    """
    lines = text.split("\n")
    problems, prose = [], [""] * len(lines)  # prose: the lines outside code, to search
    end, head = _front_matter(lines) if front_matter is not None else (None, None)
    n = 0
    if end is not None:
        problems += _front_matter_problems(head, front_matter)
        n = end + 1
        # a MyST notebook's first markdown cell may open with a front matter of its own
        blank = n
        while blank < len(lines) and not lines[blank].strip():
            blank += 1
        second, head = _front_matter(lines[blank:])
        if second is not None:
            problems += [(blank + line, p) for line, p in
                         _front_matter_problems(head, front_matter)]
            n = blank + second + 1
    stack = []  # fences of the open directives
    while n < len(lines):
        line = lines[n]
        if stack and _closes(line, stack[-1]):
            stack.pop()
            n += 1
            continue
        m = _FENCE.match(line)
        if not m:
            prose[n] = line
            n += 1
            continue
        fence, info = m["fence"], m["info"].strip()
        directive = _DIRECTIVE.match(info)
        close = _closing(lines, n, fence)
        if directive:
            name = directive["name"]
            if name.lower() not in directives:
                problems.append((n + 1, f"the directive {{{name}}} is not allowed here"))
            k = n + 1
            while k < len(lines) and _OPTION.match(lines[k]):
                key = _OPTION.match(lines[k])["key"]
                if options is not None and key.lower() not in options:
                    problems.append((k + 1, f"the option :{key}: of {{{name}}} is not "
                                            "allowed here"))
                k += 1
            if close is None:
                problems.append((n + 1, f"the {{{name}}} block is never closed"))
                break
            if name.lower() in LITERAL_DIRECTIVES:
                if name.lower() == "math":
                    problems += _math_problems("\n".join(lines[k:close]), k)
                n = close + 1
                continue
            stack.append(fence)
            n = k
            continue
        if fence[0] == ":":
            problems.append((n + 1, f"a {fence} block that is no allowed directive"))
        if close is None:
            problems.append((n + 1, "the code block is never closed"))
            break
        n = close + 1  # a code block: literal
    return sorted(problems + _prose_problems(prose, roles, allow_breaks))


def _closes(line, fence):
    s = line.strip()
    return bool(s) and set(s) == {fence[0]} and len(s) >= len(fence)


def _front_matter_problems(head, keys):
    import yaml

    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        return [(1, f"the front matter is not valid YAML ({type(exc).__name__})")]
    if data is None:
        return []
    if not isinstance(data, dict):
        return [(1, "the front matter is not a mapping")]
    return [(1, f"the front matter key {key!r} is not allowed here")
            for key, value in data.items()
            if key not in keys and not (key in FRONT_MATTER_MARKS
                                        and value is FRONT_MATTER_MARKS[key])]


# a role or a code span, whichever starts first; neither crosses a blank line
_SPAN_CHAR = r"(?:[^\n]|\n(?![ \t]*\n))"
_INLINE = re.compile(
    rf"(?P<role>\{{(?P<name>[^{{}}\s`]+)\}}(?P<rt>`+)(?:(?!(?P=rt)){_SPAN_CHAR})*?(?P=rt))"
    rf"|(?P<ct>`+)(?:(?!(?P=ct)){_SPAN_CHAR})+?(?P=ct)")
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)((?:\\.|[^$\\\n])+)\$")
_ENVIRONMENT = re.compile(r"\\begin\{(\w+\*?)\}(.*?)\\end\{\1\}", re.S)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s[^<>]*)?)(/?)>")


def _blank(match):
    """A match replaced by spaces, its newlines kept (so line numbers stay)."""
    return re.sub(r"[^\n]", " ", match.group(0))


def _line_of(text, pos, first=0):
    return first + text.count("\n", 0, pos) + 1


def _math_problems(math, first=0):
    """Problems of a piece of math (``first``: the 0-based line it starts on)."""
    found = []
    for m in HIDING_MATH.finditer(math):
        found.append((_line_of(math, m.start(), first),
                      f"math that hides what it typesets ({m.group(0)})"))
    for m in re.finditer(r"(?<!\\)%", math):
        found.append((_line_of(math, m.start(), first), "a comment (%) in math"))
    return found


def _prose_problems(prose, roles, allow_breaks):
    problems = []
    text = "\n".join(prose)
    for m in _INLINE.finditer(text):
        if m["role"] and m["name"].lower() not in roles:
            problems.append((_line_of(text, m.start()), f"the role {{{m['name']}}}"))
    text = _INLINE.sub(_blank, text)
    for pattern in (_DISPLAY_MATH, _ENVIRONMENT, _INLINE_MATH):
        for m in pattern.finditer(text):
            problems += _math_problems(m.group(0), _line_of(text, m.start()) - 1)
        text = pattern.sub(_blank, text)
    for m in re.finditer(r"<!--|<![A-Za-z\[]|<\?", text):
        what = "an HTML comment" if m.group(0) == "<!--" else "an HTML declaration"
        problems.append((_line_of(text, m.start()), what))
    for m in _TAG.finditer(text):
        closing, name, attrs, _ = m.groups()
        if name.lower() not in INLINE_HTML:
            problems.append((_line_of(text, m.start()), f"the HTML tag <{closing}{name}>"))
        elif attrs.strip():
            problems.append((_line_of(text, m.start()), f"the HTML tag <{name}> with "
                                                         "attributes"))
    for n, line in enumerate(prose):  # as written: a comment starts its line
        if re.match(r"^ {0,3}\[[^\]]+\]:", line):
            problems.append((n + 1, "a link reference or footnote definition (a renderer "
                                    "hides it)"))
        elif re.match(r"^\s*%", line):
            problems.append((n + 1, "a MyST comment (% ...)"))
        elif not allow_breaks and re.match(r"^\s*\+\+\+", line):
            problems.append((n + 1, "a MyST block break (+++)"))
    return problems


# ---------------------------------------------------------------------------------
# Text that reaches the students must not share a line with the solutions
# ---------------------------------------------------------------------------------
#: A line of the solutions or hidden tests is searched for, token by token (words, numbers,
#: punctuation marks), if it has at least this many tokens and letters or digits:
#: ``return w`` is too common to be told from a docstring's "Return w after ...".
MIN_TOKENS, MIN_LETTERS = 3, 4
#: ... and without its spaces (``#RETURNBOOL(Y*NP.DOT(W,X)<=0)``), and in a name (a
#: ``grade_id``, a tag) as letters and digits alone, if that keeps this many characters.
MIN_RUN = 10
_TOKEN = re.compile(r"\w+|[^\w\s]")


def _tokens(text):
    return _TOKEN.findall(fold(text))


def _letters(text):
    return re.sub(r"[\W_]+", "", fold(text))


def _unspaced(text):
    return re.sub(r"\s+", "", fold(text))


class _Secrets:
    """The lines of a notebook's solutions and hidden tests, ready to be searched for;
    a line the notebook also shows as code or prose (not in a comment, a string or the
    parameters cell) is no secret."""

    def __init__(self, nb):
        self.lines = []  # (tokens, unspaced, letters, line)
        shown = " " + " ".join(_tokens(_shown_text(nb))) + " "
        for line in solution_lines(nb):
            tokens = _tokens(line)
            if " " + " ".join(tokens) + " " in shown:
                continue
            self.lines.append((
                " " + " ".join(tokens) + " " if len(tokens) >= MIN_TOKENS
                and len(_letters(line)) >= MIN_LETTERS else None,
                _unspaced(line) if len(_unspaced(line)) >= MIN_RUN else None,
                _letters(line) if len(_letters(line)) >= MIN_RUN else None,
                line.strip()))

    def shared(self, text, names=False):
        """The solution line ``text`` holds, or None. Lines are compared after
        :func:`~.notebook.fold` (case, accents and look-alike letters do not matter),
        token by token and without spaces (spacing does not matter either); with
        ``names``, also as letters and digits alone (``hw2-return-bool-y``)."""
        hay = " " + " ".join(_tokens(text)) + " "
        unspaced = _unspaced(text)
        letters = _letters(text) if names else ""
        for tokens, plain, alnum, line in self.lines:
            if (tokens and tokens in hay) or (plain and plain in unspaced) or (
                    names and alnum and alnum in letters):
                return line
        return None


def _shown_text(nb):
    """What every student sees of a notebook as code or prose: its markdown and the
    public code of its code cells without comments and strings, the parameters cell
    left out."""
    import io
    import tokenize

    parts = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            lines = _source_lines(cell)
            regions = _regions(lines, "<notebook>", None, cell.cell_type)
            if regions or not is_solution_cell(cell):
                hidden = {n for _, b, e in regions for n in range(b, e + 1)}
                parts.append("\n".join(ln for n, ln in enumerate(lines) if n not in hidden))
            continue
        public = _public_code(cell) if cell.cell_type == "code" else None
        if public is None or "parameters" in (cell.get("metadata", {}).get("tags") or []):
            continue
        try:
            parts.append(" ".join(
                t.string for t in tokenize.generate_tokens(io.StringIO(public).readline)
                if t.type not in (tokenize.COMMENT, tokenize.STRING)))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            parts.append("\n".join(line.split("#", 1)[0] for line in public.split("\n")))
    return "\n".join(parts)


def _comments_and_strings(source):
    """The comments and string literals of Python code (a docstring is one); where the
    code does not tokenize, the part of each line after a ``#``."""
    import io
    import tokenize

    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                found.append(tok.string)
            elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", None):
                found.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [line.split("#", 1)[1] for line in source.split("\n") if "#" in line]
    return found


def _public_code(cell):
    """The lines of a code cell that its student version keeps (None: none, the whole
    cell is an answer)."""
    lines = _source_lines(cell)
    regions = _regions(lines, "<notebook>", None, cell.cell_type)
    if not regions and is_solution_cell(cell):
        return None
    hidden = {n for _, begin, end in regions for n in range(begin, end + 1)}
    return "\n".join(line for n, line in enumerate(lines) if n not in hidden)


def shared_line_problems(nb, path):
    """Text that reaches the students and holds a line of the solutions or hidden tests:
    a comment or docstring of a code cell (an answer cell's, the line just above
    ``### BEGIN SOLUTION`` included), any line of the ``parameters`` cell, and the text
    fields that survive a release (the ``lincls`` block, a kernel's names, a cell's
    ``grade_id``, tags and alt text). Returns a list of HomeworkError."""
    secrets, errors = _Secrets(nb), []

    def refuse(what, line, index=None):
        cell = nb.cells[index] if index is not None else None
        errors.append(HomeworkError(
            path, f"{what} holds the line {line!r} of the solutions or hidden tests, and "
                  "it reaches the students: reword it", index,
            cell.cell_type if cell else None, cell.get("id") if cell else None))

    meta = nb.metadata
    for block, fields in (("lincls", ("summary", "chapters", "fixed")),
                          ("kernelspec", ("name", "display_name", "language")),
                          ("language_info", ("name", "version", "mimetype", "file_extension",
                                             "pygments_lexer", "nbconvert_exporter",
                                             "codemirror_mode"))):
        values = meta.get(block) if isinstance(meta.get(block), dict) else {}
        for field in fields:
            for value in _texts_of(values.get(field)):
                line = secrets.shared(value, names=True)
                if line:
                    refuse(f"the notebook metadata {block}.{field}", line)
    for index, cell in enumerate(nb.cells):
        cmeta = cell.get("metadata", {})
        fields = [("its tags", t) for t in _texts_of(cmeta.get("tags"))]
        grade_id = (cmeta.get("nbgrader") or {}).get("grade_id") if isinstance(
            cmeta.get("nbgrader"), dict) else None
        fields += [("its grade_id", v) for v in _texts_of(grade_id)]
        image = (cmeta.get("mystnb") or {}).get("image") if isinstance(
            cmeta.get("mystnb"), dict) else None
        if isinstance(image, dict):
            fields += [("its alt text", v) for v in _texts_of(image.get("alt"))]
        fields += [("its id", v) for v in _texts_of(cell.get("id"))]
        for what, value in fields:
            line = secrets.shared(value, names=True)
            if line:
                refuse(what, line, index)
        if cell.cell_type != "code":
            continue
        public = _public_code(cell)
        if public is None:
            continue
        tags = cmeta.get("tags") or []
        if isinstance(tags, list) and "parameters" in tags:
            texts, what = [public], "the parameters cell"
        else:
            texts, what = _comments_and_strings(public), "a comment or string of the cell"
        for text in texts:
            line = secrets.shared(text)
            if line:
                refuse(what, line, index)
                break
    return errors


_PAGE = re.compile(r"[\w-]+(/[\w-]+){0,3}")
_CHECK_NAME = re.compile(r"[\w-]+(\.[\w-]+){0,3}")


def lincls_name_problems(nb, path):
    """The ``chapters`` and ``fixed`` of the ``lincls`` block are names (a page; a
    self-check or an expected value), not text. Returns a list of HomeworkError."""
    meta = nb.metadata.get("lincls", {})
    errors = []
    for key, pattern, what in (("chapters", _PAGE, "page"),
                               ("fixed", _CHECK_NAME, "self-check or expected-value")):
        for value in meta.get(key, []):
            if not (len(value) <= 80 and pattern.fullmatch(value)):
                errors.append(HomeworkError(path, f"lincls metadata {key!r} holds {value!r}, "
                                                  f"which is no {what} name"))
    return errors


def _texts_of(value):
    """The texts in a metadata value (a text, or texts in a list or mapping)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _texts_of(v)]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in [str(k), *_texts_of(v)]]
    return []


def markdown_cell_problems(nb, path):
    """Every markdown cell's student text (:func:`markdown_problems`): only allowed
    directives, roles and HTML, and front matter only in the first cell. Returns a list
    of HomeworkError."""
    errors = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        first = index == 0  # the front matter of a notebook is in its first cell
        lines = _source_lines(cell)
        regions = _regions(lines, path, index, cell.cell_type)
        if not regions and is_solution_cell(cell):
            continue  # replaced by the stub
        hidden = {n for _, begin, end in regions for n in range(begin, end + 1)}
        text = "\n".join("" if n in hidden else line for n, line in enumerate(lines))
        for line, problem in markdown_problems(text, front_matter=FRONT_MATTER_KEYS if first
                                               else None):
            errors.append(HomeworkError(
                path, f"line {line}: {problem}: the release copies a markdown cell as it is "
                      "written, so students would see it; a solution belongs in an answer "
                      "cell, between the markers", index, "markdown", cell.get("id")))
    return errors
