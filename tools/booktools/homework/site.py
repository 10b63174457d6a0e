"""The student edition of the website: chapter solutions stripped, homework released.

Defined in chapter "For teachers" (``book/teachers.md``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .notebook import SOLUTION_ONLY_TAG, STUDENT_SOLUTION_NOTE, fold
from .release import release
from .validation import _closing, markdown_problems

# MyST fences: backticks, colons, and tildes (```` ~~~{solution} ```` is the directive too)
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,}|~{3,})\s*(?P<info>.*)$")
# a directive's name, compared as docutils compares it: {Solution} is {solution}
_DIRECTIVE = re.compile(r"^\{(?P<name>[^{}\s]+)\}")
_GATED = re.compile(r"^\s*(`{3,}|:{3,}|~{3,})\s*\{solution-(start|end)\}", re.I)
#: The class that marks an ``{admonition}`` or ``{dropdown}`` titled like a solution as
#: meant for teachers: the student edition drops it. Untagged, such a block is refused.
TEACHER_VISIBLE = "teacher-visible"
#: Words of a title that make an ``{admonition}`` read like a solution, in the languages a
#: course may be taught in (after :func:`~.notebook.fold`: capitals, no accents; plurals
#: too). A deny-list, an extra check only: the student edition's defence is
#: :data:`CHAPTER_DIRECTIVES`.
SOLUTION_WORDS = frozenset(fold(w) for w in (
    "solution", "soln", "answer", "lösung", "loesung", "antwort", "musterlösung", "solución",
    "respuesta", "réponse", "corrigé", "correction", "soluzione", "risposta", "oplossing",
    "antwoord", "rozwiązanie", "odpowiedź", "resposta", "solução", "řešení", "riešenie",
    "lösning", "løsning", "svar", "ratkaisu", "vastaus", "çözüm", "cevap", "megoldás",
    "válasz", "rješenje", "odgovor", "rešitev", "решение", "ответ", "відповідь", "розв'язок",
    "λύση", "απάντηση"))
#: The same in scripts without spaces between words: found anywhere in a title.
SOLUTION_SIGNS = ("解答", "答案", "解法", "答え", "解説", "해답", "정답", "풀이")


def titled_like_solution(title):
    """True if a block's title reads like a solution (:data:`SOLUTION_WORDS`, whole words,
    or a plural; :data:`SOLUTION_SIGNS` anywhere).

    >>> [titled_like_solution(t) for t in ("Lösung", "Answers", "Resolution", "解答")]
    [True, True, False, True]
    """
    words = re.findall(r"\w+", fold(title).replace("'", ""))
    return any(w in SOLUTION_WORDS or (w.endswith("S") and w[:-1] in SOLUTION_WORDS)
               for w in words) or any(sign in title for sign in SOLUTION_SIGNS)


def _solution_blocks(lines, start=0, stop=None):
    """Yield ``(open, body_start, close)`` line numbers of each ``{solution}`` block.

    Fences close the way MyST closes them (the first line holding only the fence
    character, at least as many times). Plain code blocks (```` ```python ````,
    ```` ````markdown ````) are skipped whole, so an example of the syntax shown in a
    code block is left alone; other directives are searched, because an ``{exercise}``
    may hold its ``{solution}``.
    """
    stop = len(lines) if stop is None else stop
    n = start
    while n < stop:
        m = _FENCE.match(lines[n])
        if not m or (m["fence"][0] == ":" and not _DIRECTIVE.match(m["info"])):
            n += 1
            continue
        fence, directive = m["fence"], _DIRECTIVE.match(m["info"])
        close = _closing(lines[:stop], n, fence)
        if close is None:
            what = f"{{{directive['name']}}} block" if directive else "code fence"
            raise ValueError(f"line {n + 1}: the {what} is never closed")
        if directive and directive["name"].lower() == "solution":
            body = n + 1
            while body < close and re.match(r"^\s*:[\w-]+:", lines[body]):
                body += 1
            yield n, body, close
        elif directive:
            yield from _solution_blocks(lines, n + 1, close)
        n = close + 1


def _titled_blocks(lines, start=0, stop=None):
    """Yield ``(open, close, teacher)`` of each ``{admonition}`` or ``{dropdown}`` block
    whose title reads like a solution (:func:`titled_like_solution`); ``teacher`` if its
    ``:class:`` holds
    :data:`TEACHER_VISIBLE`. Code blocks are skipped; other directives are searched."""
    stop = len(lines) if stop is None else stop
    n = start
    while n < stop:
        m = _FENCE.match(lines[n])
        directive = _DIRECTIVE.match(m["info"]) if m else None
        if not m or (m["fence"][0] == ":" and not directive):
            n += 1
            continue
        close = _closing(lines[:stop], n, m["fence"])
        if close is None:
            return
        if directive and directive["name"].lower() in ("admonition", "dropdown") and \
                titled_like_solution(m["info"][directive.end():]):
            options = []
            for line in lines[n + 1 : close]:
                if not re.match(r"^\s*:[\w-]+:", line):
                    break
                options.append(line)
            teacher = any(re.match(rf"^\s*:class:.*\b{TEACHER_VISIBLE}\b", o) for o in options)
            yield n, close, teacher
        elif directive:
            yield from _titled_blocks(lines, n + 1, close)
        n = close + 1


def strip_teacher_blocks(text):
    """Remove the ``{admonition}``/``{dropdown}`` blocks titled like a solution and
    tagged :data:`TEACHER_VISIBLE`; raise ValueError on one that is not tagged."""
    lines = text.split("\n")
    out, n = [], 0
    for start, close, teacher in _titled_blocks(lines):
        if not teacher:
            raise ValueError(f"line {start + 1}: {lines[start].strip()!r} is titled like a "
                             "solution: make it a {solution} block, or add ':class: "
                             f"{TEACHER_VISIBLE}' (the student edition then drops it)")
        out.extend(lines[n:start])
        n = close + 1
    out.extend(lines[n:])
    return "\n".join(out)


def strip_chapter_solutions(text, note=STUDENT_SOLUTION_NOTE):
    """Replace the body of every ``{solution}`` block of a MyST text by ``note``.

    The directive line and its options (``:label:``, ``:class: dropdown``) stay, so
    references to the solution still resolve; gated ``{solution-start}`` ...
    ``{solution-end}`` regions are removed with everything between them.

    Examples
    --------
    >>> text = "```{solution} ex1\\n:class: dropdown\\n\\nThe answer is 42.\\n```\\n"
    >>> print(strip_chapter_solutions(text, note="(omitted)"))
    ```{solution} ex1
    :class: dropdown
    <BLANKLINE>
    (omitted)
    ```
    <BLANKLINE>
    """
    lines = text.split("\n")
    out, n = [], 0
    for _open, body, close in _solution_blocks(lines):
        out.extend(lines[n:body])
        out.extend(["", note])
        out.append(lines[close])
        n = close + 1
    out.extend(lines[n:])
    result, gated, closing = [], False, None
    for line in out:
        g = _GATED.match(line)
        if closing and line.strip() == closing:
            closing = None  # the fence closing {solution-end}
        elif g and g[2].lower() == "start":
            gated = True
            result.append(f"*{note}*")
        elif g and g[2].lower() == "end":
            gated, closing = False, g[1]
        elif not gated:
            closing = None
            result.append(line)
    return "\n".join(result)


def chapter_solution_lines(text):
    """The lines inside ``{solution}`` blocks of a MyST text (what a student must not see)."""
    lines = text.split("\n")
    found = []
    for _, body, close in _solution_blocks(lines):
        found.extend(lines[body:close])
    gated = False
    for line in lines:  # gated {solution-start} ... {solution-end} regions
        g = _GATED.match(line)
        if g:
            gated = g[2].lower() == "start"
        elif gated and not re.fullmatch(r"\s*(`{3,}|:{3,}|~{3,})\s*", line):
            found.append(line)
    return found


# ---------------------------------------------------------------------------------
# The student site
# ---------------------------------------------------------------------------------
class StudentSiteError(ValueError):
    """The student edition cannot be made as asked (one line, for the command line)."""


def _code_cells(lines):
    """Yield ``(open, close, tags)`` of each MyST ``{code-cell}`` of a chapter's lines
    (plain code blocks, examples, are skipped whole). ``tags`` is the list of its
    ``:tags:`` option or of ``tags:`` in its ``---`` header."""
    n = 0
    while n < len(lines):
        m = _FENCE.match(lines[n])
        if not m or m["fence"][0] not in "`~":
            n += 1
            continue
        close = _closing(lines, n, m["fence"])
        is_cell = m["info"].strip().lower().startswith("{code-cell}")
        if close is None:
            if is_cell:
                raise ValueError(f"line {n + 1}: the {{code-cell}} block is never closed")
            return
        if is_cell:
            yield n, close, _cell_tags(lines[n + 1 : close], n + 1)
        n = close + 1


def _cell_options(body):
    """``(options, first line of code)`` of a ``{code-cell}`` body: its ``:key: value``
    lines or its ``---`` YAML header, as a dict."""
    import yaml

    try:
        if body and body[0].strip() == "---":
            end = next((k for k in range(1, len(body)) if body[k].strip() == "---"), None)
            if end is not None:
                options = yaml.safe_load("\n".join(body[1:end])) or {}
                return (options if isinstance(options, dict) else {"": options}), end + 1
        options, k = {}, 0
        while k < len(body) and re.match(r"^:[\w-]+:", body[k]):
            key, _, value = body[k][1:].partition(":")
            options[key] = yaml.safe_load(value.strip() or "null")
            k += 1
    except yaml.YAMLError as exc:
        raise ValueError(f"a code cell's options are not valid YAML ({type(exc).__name__})") \
            from exc
    return options, k


def _cell_tags(body, where=0):
    options, _ = _cell_options(body)
    tags = options.get("tags") or []
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",")]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError(f"line {where + 1}: the cell's tags are not a list of names")
    return tags


def strip_solution_only_cells(text):
    """Remove every MyST ``{code-cell}`` tagged ``solution-only`` from a chapter's text.

    Such a cell computes numbers quoted only in a solution (usually with ``glue``); with
    the solutions gone, the student edition has no use for it, and its source would show
    how the solution's numbers were obtained.
    """
    lines = text.split("\n")
    drop = set()
    for start, close, tags in _code_cells(lines):
        if SOLUTION_ONLY_TAG in tags:
            drop.update(range(start, close + 1))
    return "\n".join(line for n, line in enumerate(lines) if n not in drop)


def solution_only_lines(text):
    """The source lines of the ``solution-only`` code cells of a chapter's text."""
    kept = set(strip_solution_only_cells(text).split("\n"))
    return [ln for ln in text.split("\n") if ln not in kept]


# ---------------------------------------------------------------------------------
# Hidden cells: a cell that only a solution needs goes with the solutions
# ---------------------------------------------------------------------------------
#: Tags that hide a code cell's source on the website (its source still ships in the
#: student sources, ``_sources`` and the notebooks).
HIDING_TAGS = ("remove-cell", "remove-input")
_STORE = re.compile(r"""(?:\bprose\[\s*(?P<q1>["'])(?P<k1>[^"'\n]+)(?P=q1)\s*\]\s*=(?!=)|"""
                    r"""\b(?:store_number|glue)\(\s*(?P<q2>["'])(?P<k2>[^"'\n]+)(?P=q2))""")
_READ = re.compile(r"""\bprose\[\s*(?P<f>f?)(?P<q>["'])(?P<k>[^"'{\n]*)""")
_GLUE_READ = re.compile(r"\{glue(?::\w+)?\}`(?P<k>[^`]+)`")
#: Calls on an imported module that change what later cells do.
_STATEFUL = frozenset({"seed", "simplefilter", "filterwarnings", "resetwarnings", "use", "rc",
                       "rcdefaults", "update", "set_printoptions", "chdir", "setdefault",
                       "setenv", "putenv", "switch_backend", "style", "set_config",
                       "set_loglevel", "disable", "enable", "register"})


def _key_of(node):
    """``(key, prefix)`` of a subscript or first argument naming a number: a text gives
    its key, an f-string the text before its first field, anything else the prefix ""
    (any key)."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, None
    if isinstance(node, ast.JoinedStr):
        head = []
        for part in node.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            head.append(part.value)
        return None, "".join(head)
    return None, ""


def _stored_keys(code):
    """``(keys, prefixes)``: the numbers a cell stores for the text (``prose["k"] = ``,
    in a tuple too, ``store_number("k", ...)``, ``glue("k", ...)``) and the prefixes of
    those it names otherwise (an f-string; "" for any key: ``prose.update(...)``)."""
    import ast

    tree = _python(code)
    if tree is None:
        keys = {m["k1"] or m["k2"] for m in _STORE.finditer(code)}
        return keys, {""} if "prose" in code else set()
    keys, prefixes = set(), set()
    for node in ast.walk(tree):
        named = None
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del))
                and isinstance(node.value, ast.Name) and node.value.id == "prose"):
            named = node.slice
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("store_number", "glue") and node.args):
            named = node.args[0]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "prose"
              and node.func.attr in ("update", "setdefault", "__setitem__", "pop", "clear")):
            prefixes.add("")
        if named is not None:
            key, prefix = _key_of(named)
            if key is not None:
                keys.add(key)
            else:
                prefixes.add(prefix)
    return keys, prefixes


def _read_keys(text, code=False):
    """``(keys, prefixes)`` that a text or (``code``) a cell's code reads (``prose['k']``,
    ``{glue}`k```); in code that parses, ``prose`` used whole (passed on, say) reads any
    key (prefix "")."""
    import ast

    keys, prefixes = set(), set()
    tree = _python(text) if code else None
    if tree is not None:
        handled = set()
        for node in ast.walk(tree):
            if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                    and node.value.id == "prose"):
                handled.add(id(node.value))
                if isinstance(node.ctx, ast.Load):
                    key, prefix = _key_of(node.slice)
                    (keys.add(key) if key is not None else prefixes.add(prefix))
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "prose"):
                handled.add(id(node.value))
                if node.attr in ("get", "items", "values", "keys", "copy", "__getitem__"):
                    prefixes.add("")
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == "prose" and id(node) not in handled \
                    and isinstance(node.ctx, ast.Load):
                prefixes.add("")
        return keys, prefixes
    for m in _READ.finditer(text):
        tail = text[m.end():m.end() + 1]
        if m["f"]:
            prefixes.add(m["k"])
        elif tail == m["q"]:
            keys.add(m["k"])
    keys |= {m["k"] for m in _GLUE_READ.finditer(text)}
    return keys, prefixes


def _reads(keys, prefixes, read_keys, read_prefixes):
    """The stored ``keys`` (and f-string ``prefixes``) that the reads name."""
    found = {k for k in keys if k in read_keys or any(k.startswith(p) for p in read_prefixes)}
    if prefixes and (read_prefixes or any(k.startswith(p) for k in read_keys
                                          for p in prefixes)):
        found.add("<f-string>")
    return found


def _python(code):
    """The AST of a cell's code (IPython magics and shell lines as ``pass``), or None."""
    import ast

    lines = []
    for line in code.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("%%"):
            return None
        if stripped.startswith(("%", "!")):
            line = line[: len(line) - len(stripped)] + "pass"
        lines.append(line)
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _root(node):
    import ast

    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _names(tree):
    """``(bound, loaded, imported)`` names of a cell's code."""
    import ast

    bound, loaded, imported = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else loaded).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            name = (node.asname or node.name).split(".")[0]
            bound.add(name)
            imported.add(name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, loaded, imported


#: Methods that change the object they are called on (a random generator's draws among
#: them): a hidden cell calling one on an object of an earlier cell changes later cells.
_MUTATING = frozenset({
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault",
    "sort", "reverse", "add", "discard", "fit", "partial_fit", "fit_transform", "fit_predict",
    "resize", "fill", "put", "itemset", "setflags", "write", "writelines", "seek", "close",
    "savefig", "send", "throw", "normal", "standard_normal", "random", "integers", "choice",
    "uniform", "permutation", "permuted", "shuffle", "binomial", "poisson", "exponential",
    "beta", "gamma", "multivariate_normal", "rand", "randn", "randint", "random_sample",
    "bytes", "spawn", "advance", "laplace", "logistic", "lognormal", "multinomial",
    "negative_binomial", "standard_t", "triangular", "vonmises", "wald", "weibull", "zipf",
    "dirichlet", "geometric", "gumbel", "hypergeometric", "chisquare", "rayleigh", "pareto",
    "power", "standard_cauchy", "standard_exponential", "standard_gamma", "f", "sample",
    "rvs", "set_state", "bit_generator"})
_PURE_CALLS = frozenset({
    "print", "len", "range", "abs", "min", "max", "sum", "sorted", "round", "float", "int",
    "str", "list", "tuple", "set", "dict", "zip", "enumerate", "isinstance", "all", "any",
    "map", "filter", "repr", "format", "type", "iter", "next", "reversed", "divmod", "pow",
    "hash", "id", "bool", "frozenset", "complex", "slice", "hasattr", "getattr", "callable",
    "store_number", "glue", "display", "Markdown", "HTML", "Math", "Fraction"})
_UNSAFE_BUILTINS = frozenset({"exec", "eval", "setattr", "delattr", "open", "input",
                              "__import__", "globals", "vars", "locals", "compile",
                              "breakpoint", "exit", "quit"})
_RANDOM_MAKERS = frozenset({"default_rng", "Generator", "RandomState", "SeedSequence",
                            "PCG64", "MT19937", "Philox", "SFC64"})


def _changes_state(tree, bound, modules, pure=frozenset()):
    """True if a cell may change what a later cell sees other than by the names it binds:
    ``global``, a store into an object it did not create, a call of a method that
    changes its object (:data:`_MUTATING`: a random generator drawing, a list growing,
    an estimator refitted) on one it did not create, a stateful call on a module
    (:data:`_STATEFUL`, ``np.random.*``), or a call of a function neither imported, nor
    in :data:`_PURE_CALLS`, nor in ``pure`` (the chapter's own functions that declare
    nothing ``global``)."""
    import ast
    import builtins

    scoped = set()  # calls inside `with warnings.catch_warnings():` change nothing after it
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and any(
                isinstance(item.context_expr, ast.Call)
                and isinstance(item.context_expr.func, ast.Attribute)
                and item.context_expr.func.attr == "catch_warnings" for item in node.items):
            scoped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return True
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, (ast.Attribute, ast.Subscript)):
                    root = _root(t)
                    if root is not None and root not in bound and root != "prose":
                        return True
        if not isinstance(node, ast.Call):
            continue
        func, root = node.func, _root(node.func)
        if root is None or root in bound:
            continue
        if isinstance(func, ast.Name):
            builtin = hasattr(builtins, func.id) and func.id not in _UNSAFE_BUILTINS
            if not (builtin or func.id in _PURE_CALLS or func.id in modules or func.id in pure):
                return True
            continue
        chain = []
        part = func
        while isinstance(part, (ast.Attribute, ast.Subscript)):
            if isinstance(part, ast.Attribute):
                chain.append(part.attr)
            part = part.value
        if not isinstance(part, ast.Name):
            continue  # a method of an object made here (its making is a call of its own)
        if root in modules:  # a library's function (also one of a dict it exports)
            if not chain or not isinstance(func, ast.Attribute):
                continue
            if id(node) in scoped and chain[0] in ("simplefilter", "filterwarnings"):
                continue
            if chain[0] in _STATEFUL or ("random" in chain[1:] + [root]
                                         and chain[0] not in _RANDOM_MAKERS):
                return True
        elif not chain or not isinstance(func, ast.Attribute):
            return True  # a function kept in a list or a dict of the chapter's
        elif chain[0] in _MUTATING or chain[0].startswith("set_"):
            return True
    return False


def _pure_functions(tree):
    """The functions a cell defines that declare nothing ``global`` or ``nonlocal``."""
    import ast

    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(node))}


def hidden_solution_cells(cells, text, teacher_reads):
    """Which hidden code cells the student edition leaves out, and which it refuses.

    ``cells`` is a list of ``(tags, code)`` in order, ``text`` the student text around
    them (the solutions already stripped), ``teacher_reads`` the ``(keys, prefixes)``
    the teacher's text and cells read. A cell tagged ``remove-cell`` (not shown at all)
    is left out when nothing the student edition shows depends on it: it stores no
    number that the student text or a later cell kept reads, binds no name a later cell
    kept uses, and changes no state (:func:`_changes_state`). So are a cell that only
    computes the numbers a solution quotes and a cell of checks only. A hidden cell that
    stores a number only a solution quotes but is needed otherwise is refused: split it.

    Returns ``(dropped indices, [(index, problem)])``.
    """
    modules, pure, trees = set(), set(), []
    for _, code in cells:
        tree = _python(code)
        trees.append(tree)
        if tree is not None:
            modules |= _names(tree)[2]
            pure |= _pure_functions(tree)
    needed_keys, needed_prefixes = _read_keys(text)
    needed_names, dropped, problems = set(), set(), []
    for index in range(len(cells) - 1, -1, -1):
        tags, code = cells[index]
        tree = trees[index]
        keys, prefixes = _stored_keys(code)
        read = _reads(keys, prefixes, needed_keys, needed_prefixes)
        solution = {k for k in keys - read
                    if k in teacher_reads[0] or any(k.startswith(p) for p in teacher_reads[1])}
        hidden = [t for t in HIDING_TAGS if t in tags]
        if tree is None or not hidden:
            needs = ["it is shown"] if not hidden else ["its code is not plain Python"]
        else:
            bound, loaded, _ = _names(tree)
            needs = []
            if read:
                needs.append(f"the text or a later cell reads {', '.join(sorted(read))}")
            used = sorted(bound & needed_names - {"prose"})
            if used:
                needs.append(f"a later cell uses {', '.join(used[:5])}")
            if "remove-input" in hidden:
                needs.append("its output is shown (remove-input)")
            if _changes_state(tree, bound, modules, pure):
                needs.append("it may change what later cells see")
            if not needs:
                dropped.add(index)
                continue
        if solution and hidden:
            problems.append((index, f"the hidden cell stores {', '.join(sorted(solution))}, "
                                    f"which only a solution quotes, but {'; '.join(needs)}: "
                                    "move what only the solution needs into a cell tagged "
                                    f"{SOLUTION_ONLY_TAG!r}"))
        k, p = _read_keys(code, code=True)
        needed_keys |= k
        needed_prefixes |= p
        if tree is not None:
            needed_names |= _names(tree)[1]
        else:
            needed_names |= set(re.findall(r"[A-Za-z_]\w*", code))
    return dropped, problems


def strip_hidden_solution_cells(teacher, text):
    """Remove from a chapter's student ``text`` the hidden code cells of
    :func:`hidden_solution_cells` (``teacher``: the chapter's own text); raise
    ValueError on a cell it refuses."""
    lines = text.split("\n")
    found = list(_code_cells(lines))
    cells = [(tags, "\n".join(lines[start + 1 + _cell_options(lines[start + 1:close])[1]:close]))
             for start, close, tags in found]
    inside = {n for start, close, _ in found for n in range(start, close + 1)}
    around = "\n".join(line for n, line in enumerate(lines) if n not in inside)
    dropped, problems = hidden_solution_cells(cells, around, _read_keys(teacher))
    _refuse([(found[i][0] + 1, p) for i, p in problems], "a hidden cell")
    drop = {n for i in dropped for n in range(found[i][0], found[i][1] + 1)}
    return "\n".join(line for n, line in enumerate(lines) if n not in drop)


# ---------------------------------------------------------------------------------
# What the student edition renders: allow-lists
# ---------------------------------------------------------------------------------
#: Directives a chapter of the student edition may hold (compared ignoring case, as
#: docutils does). Any other (``{dropdown}``, ``{toggle}``, ``{hint}``, ``{raw}``, one
#: of another spelling) is an error: the student edition renders only what it knows.
#: ``{solution}`` blocks are stripped first, and an ``{admonition}`` titled like a
#: solution is refused or, if :data:`TEACHER_VISIBLE`, dropped.
CHAPTER_DIRECTIVES = frozenset({
    "code-cell", "solution", "exercise", "exercise-start", "exercise-end", "admonition",
    "note", "tip", "important", "warning", "caution", "attention", "seealso", "math",
    "figure", "image", "code-block", "code", "literalinclude", "list-table", "table",
    "include", "bibliography", "tableofcontents", "nb-exec-table", "homework-table",
    "epigraph", "margin", "glue:figure", "glue:math",
    "prf:algorithm", "prf:axiom", "prf:conjecture", "prf:corollary", "prf:criterion",
    "prf:definition", "prf:example", "prf:lemma", "prf:observation", "prf:proof",
    "prf:property", "prf:proposition", "prf:remark", "prf:theorem"})
#: Roles a chapter of the student edition may use.
CHAPTER_ROLES = frozenset({
    "doc", "ref", "numref", "eq", "math", "eval", "cite", "cite:p", "cite:t", "cite:ps",
    "cite:ts", "cite:ct", "cite:cp", "prf:ref", "download", "sub", "sup", "kbd", "code",
    "term", "abbr", "glue", "glue:text", "glue:any", "glue:md", "exercise", "solution",
    "homework-table", "py:func", "py:class", "py:mod", "py:meth", "py:attr", "py:data",
    "func", "class", "mod", "meth", "attr", "data"})
#: Keys of a chapter's front matter (and of its first cell's): the notebook's format and
#: kernel, math macros, substitutions, and the book's cross-reference texts.
CHAPTER_FRONT_MATTER = frozenset({"jupytext", "kernelspec", "math", "xrefs", "bibliography",
                                  "measured",
                                  "substitutions", "myst", "mystnb", "file_format",
                                  "title", "html_meta"})
#: Options of a directive in a chapter: any, but a ``:class:`` that folds the block away
#: (dropdown, toggle) only on a ``{solution}`` or ``{exercise}``.
_FOLDING = re.compile(r"\b(dropdown|toggle|toggle-hidden|hidden|hide|collapse|collapsed)\b",
                      re.I)
#: Tags a chapter's code cell may have (``solution-only`` cells are removed first).
CHAPTER_TAGS = frozenset({
    "remove-cell", "remove-input", "remove-output", "hide-input", "hide-output", "hide-cell",
    "skip-execution", "raises-exception", "solution-only", "full-width", "margin",
    "thebe-init", "scroll-output", "output_scroll", "nbval-ignore-output", "nbval-skip",
    "parameters", "remove-stderr", "remove-stdout", "slide"})
#: Options of a chapter's ``{code-cell}`` (a cell that ``:load:``s a file is not allowed:
#: the file would have to ship).
CODE_CELL_OPTIONS = frozenset({"tags", "mystnb"})


def chapter_problems(text, notebook=False):
    """``[(line, problem)]``: what a chapter's student text holds that the student
    edition does not render (see :data:`CHAPTER_DIRECTIVES`, :data:`CHAPTER_ROLES`,
    :data:`CHAPTER_TAGS`): an unknown directive or role, a directive folded away, HTML
    other than a few inline tags, an HTML or MyST comment, a link reference definition,
    front matter keys other than :data:`CHAPTER_FRONT_MATTER`, and a code cell with
    another tag or option. ``notebook``: ``text`` is one markdown cell of a notebook."""
    lines = text.split("\n")
    problems = markdown_problems(text, CHAPTER_DIRECTIVES, CHAPTER_ROLES,
                                 CHAPTER_FRONT_MATTER, options=None, allow_breaks=True)
    for n, line in enumerate(lines):
        m = _FENCE.match(line)
        directive = _DIRECTIVE.match(m["info"].strip()) if m else None
        if not directive:
            continue
        name = directive["name"].lower()
        for option in lines[n + 1 :]:
            o = re.match(r"^\s*:class:(.*)$", option)
            if not re.match(r"^\s*:[\w-]+:", option):
                break
            if o and _FOLDING.search(o[1]) and name not in ("solution", "exercise"):
                problems.append((n + 1, f"{{{directive['name']}}} is folded away "
                                        f"(:class:{o[1]})"))
    for n, line in enumerate(lines):
        m = re.match(r"^\+\+\+\s*(\{.*\})\s*$", line)
        if m:
            problems += _break_problems(m[1], n + 1)
    if not notebook:
        for start, close, tags in _code_cells(lines):
            options, _ = _cell_options(lines[start + 1 : close])
            problems += [(start + 1, f"the code cell's option {key!r}")
                         for key in options if key not in CODE_CELL_OPTIONS]
            problems += [(start + 1, f"the tag {tag!r}") for tag in tags
                         if tag not in CHAPTER_TAGS]
    return sorted(set(problems))


def _break_problems(meta, line):
    """A ``+++ {...}`` line's metadata: a markdown cell may be tagged only to be wider."""
    import json

    try:
        data = json.loads(meta)
    except ValueError:
        return [(line, "a +++ line whose metadata is not JSON")]
    if not isinstance(data, dict) or set(data) - {"tags"}:
        return [(line, "a +++ line with metadata other than tags")]
    tags = data.get("tags") or []
    return [(line, f"the markdown cell's tag {t!r}") for t in tags
            if t not in ("full-width", "margin")]


def _refuse(problems, what):
    if problems:
        raise ValueError("; ".join(f"line {n}: {p}" for n, p in problems[:10])
                         + f" ({what}: the student edition renders only what it allows)")


def student_chapter(text):
    """A MyST chapter's text as the student edition has it, or ValueError: teacher
    blocks dropped (:func:`strip_teacher_blocks`), solutions stripped
    (:func:`strip_chapter_solutions`), ``solution-only`` cells and the hidden cells of
    :func:`hidden_solution_cells` removed, and then nothing but what
    :func:`chapter_problems` allows."""
    student = strip_solution_only_cells(strip_chapter_solutions(strip_teacher_blocks(text)))
    student = strip_hidden_solution_cells(_removed(text, student), student)
    _refuse(chapter_problems(student), "not allowed")
    return student


def _removed(teacher, student):
    """The lines of ``teacher`` that ``student`` does not hold (what the stripping took)."""
    kept = set(student.split("\n"))
    return "\n".join(line for line in teacher.split("\n") if line not in kept)


def make_student_sources(root=".", dest="_build/student/src", repository_url=None):
    """Write the student edition's sources: the book with every solution removed.

    Only what a rule allows is written. The chapters are those of ``_toc.yml``, each
    through :func:`student_chapter` (``.md``) or :func:`student_notebook_chapter`
    (``.ipynb``): each ``{solution}`` body (of any spelling: ``{Solution}``, a ``~~~``
    fence, the gated ``{solution-start}`` ... ``{solution-end}`` form) is replaced by a
    short note, ``{admonition}`` and ``{dropdown}`` blocks titled like a solution go if
    tagged :data:`TEACHER_VISIBLE` and are refused otherwise, code cells tagged
    ``solution-only`` go, and so do hidden cells nothing shown depends on
    (:func:`hidden_solution_cells`); then a directive, role, tag, HTML or comment not on
    the allow-lists (:func:`chapter_problems`) is an error. The homework notebooks are
    replaced by their released versions (no outputs). Beside them, only the files the
    student chapters and notebooks name (:func:`referenced_files`: pictures, data, an
    included or imported file) are copied, never anything else of ``book/``: a helper
    ``.py`` or a teacher's notes beside a chapter stay out. The configuration is the
    book's own, except the title and the repository: with ``repository_url`` (a public
    student repository) the launch and repository buttons point there; without it the
    student edition has no Binder, repository or issue button at all, because the book's
    own repository holds the solutions. With ``requirements.txt``, ``pyproject.toml``,
    ``lincls`` and ``tools`` copied too, the tree can be published as that student
    repository. Every file is read through :func:`_read_regular` (a symbolic link, a
    hard link or a device is refused).

    :func:`build_student_site` builds it, executing every chapter again as the website
    does (inline execution, so the prose numbers come from the student edition's own run).
    """
    import yaml

    root, dest = Path(root).resolve(), Path(dest).resolve()
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    book = root / "book"
    homework_src = book / "homework"
    _copy_tree(root / "lincls", dest / "lincls")  # the package, and literalinclude
    if (root / "tools").is_dir():  # booktools: the site's Sphinx extensions
        _copy_tree(root / "tools", dest / "tools")
    # the files Binder needs to install the environment from the student repository, the
    # licenses and citation it is published under, and the changes (book/about.md shows them)
    for name in ("_toc.yml", "requirements.txt", "runtime.txt", "postBuild", "pyproject.toml",
                 "README.md", "jupytext.toml", "LICENSE", "LICENSE-content", "CITATION.cff",
                 "CHANGELOG.md", ".gitignore"):
        if (root / name).exists():
            _copy_regular(root / name, dest / name)
    chapters = toc_files(root)
    released = {}
    if homework_src.is_dir() and any(homework_src in p.parents for p in chapters):
        with tempfile.TemporaryDirectory() as tmp:
            for path in release(homework_src, Path(tmp) / "out"):
                released[homework_src / path.relative_to(Path(tmp) / "out")] = \
                    path.read_text(encoding="utf-8")
    written = set()
    for path in chapters:
        target = dest / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if path in released:
                text = released[path]
            elif path.suffix == ".ipynb":
                text = student_notebook_chapter(_read_regular(path))
            else:
                text = student_chapter(_read_regular(path))
        except ValueError as exc:
            raise ValueError(f"{path.relative_to(root)}: {exc}") from exc
        _write_as_old_as(target, text, path)
        written.add(path)
    for path in referenced_files(dest / "book", book, root):
        if path in written or path.suffix in (".ipynb",):
            continue
        target = dest / path.relative_to(root)
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".md":  # an {include}d text: a chapter's part, treated as one
            try:
                text = strip_chapter_solutions(strip_teacher_blocks(_read_regular(path)))
                _refuse(chapter_problems(text), "not allowed")
            except ValueError as exc:
                raise ValueError(f"{path.relative_to(root)}: {exc}") from exc
            _write_as_old_as(target, text, path)
        else:
            _copy_regular(path, target)
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = f"{config.get('title', 'Book')} (student edition)"
    if repository_url:
        config.setdefault("repository", {})["url"] = repository_url
    else:
        # no student repository: no link may lead to the teacher's repository
        config["repository"] = {"url": "", "branch": "main", "path_to_book": ""}
        html = config.setdefault("html", {})
        for button in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
            html[button] = False
        config["launch_buttons"] = {"binderhub_url": "", "jupyterhub_url": "",
                                    "colab_url": "", "deepnote_url": "", "thebe": False}
    for name in config.get("bibtex_bibfiles") or []:  # the bibliography the pages cite
        if (root / name).is_file() and not (dest / name).exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            _copy_regular(root / name, dest / name)
    (dest / "_config.yml").write_text(
        "# Generated by `python -m booktools student-book`; edit the book's own.\n"
        + yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return dest


def toc_files(root):
    """The sources ``_toc.yml`` lists (``root`` and every ``file``), as paths of files
    that exist (``.md``, ``.ipynb``), in order."""
    import yaml

    root = Path(root).resolve()
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8")) or {}
    names = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    names.append(node[key])
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(toc)
    found = []
    for name in names:
        # a homework is its notebook (a .md beside it is a jupytext pair); a chapter is
        # its MyST text
        order = (".ipynb", ".md") if Path(name).parent.name == "homework" else (".md", ".ipynb")
        for suffix in ("", *order):
            path = (root / (name + suffix)).resolve()
            if path.suffix in (".md", ".ipynb") and root in path.parents and path.is_file():
                if path not in found:
                    found.append(path)
                break
    return found


_PATH = re.compile(r"(?<![\w/.-])(?:\.{1,2}/|/)?[\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]{1,6}\b")
_IMPORT = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", re.M)


def referenced_files(book, book_src, root=None):
    """The files under ``book_src`` (the teacher's ``book/``) that the student chapters
    and notebooks under ``book`` name: a path written in their text (a picture, a data
    file, an ``{include}``, a ``{literalinclude}``), relative to the page or (starting
    with ``/``) to ``root`` (default: the parent of ``book_src``), and a module a code
    cell imports from beside the page. A file only a teacher's solution names (or no
    one) stays out, and so does anything outside ``book_src``."""
    book_src = Path(book_src).resolve()
    root = Path(root).resolve() if root is not None else book_src.parent
    book = Path(book)
    found = set()
    for page in sorted(book.rglob("*")):
        if page.suffix not in (".md", ".ipynb") or not page.is_file():
            continue
        here = book_src / page.parent.relative_to(book)
        text = page.read_text(encoding="utf-8")
        names = set(_PATH.findall(text))
        names |= {f"{m}.py" for m in _IMPORT.findall(text.replace("\\n", "\n"))}
        for name in names:
            for base in ((root, here) if name.startswith("/") else (here,)):
                target = Path(os.path.normpath(base / name.lstrip("/")))
                if (book_src in target.parents and not {"_build", ".ipynb_checkpoints"}
                        & set(target.relative_to(book_src).parts) and target.is_file()):
                    found.add(target)
    return sorted(found)


def _read_regular(path):
    """The text of a regular file of the teacher's folder, read without following a
    link: a symbolic link, a file with several hard links, a FIFO or a device is refused
    (an archive from elsewhere may hold one pointing at a solution)."""
    return _open_regular(path).decode("utf-8")


def _open_regular(path, limit=256 * 2**20):
    import stat

    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        kind = ("a symbolic link" if stat.S_ISLNK(info.st_mode) else
                "a file with several hard links" if stat.S_ISREG(info.st_mode) else
                "not a regular file")
        raise ValueError(f"{path}: {kind}; the student edition copies regular files only")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError(f"{path}: not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: larger than {limit} bytes")
    return data


def _copy_regular(src, dst):
    """Copy one regular file (:func:`_open_regular`), keeping its times."""
    Path(dst).write_bytes(_open_regular(src))
    shutil.copystat(src, dst, follow_symlinks=False)


def _copy_tree(src, dst):
    """Copy the regular files of a folder (no caches, no build output); a symbolic link
    or another special file in it is refused."""
    skip = {"__pycache__", ".ipynb_checkpoints", "_build", ".pytest_cache"}
    for folder, dirs, files in os.walk(src, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.endswith(".egg-info"))
        for d in dirs:
            if os.path.islink(os.path.join(folder, d)):
                raise ValueError(f"{os.path.join(folder, d)}: a symbolic link; the student "
                                 "edition copies regular files only")
        out = Path(dst) / Path(folder).relative_to(src)
        out.mkdir(parents=True, exist_ok=True)
        for name in sorted(files):
            if not name.endswith(".pyc"):
                _copy_regular(Path(folder) / name, out / name)


def student_notebook_chapter(text):
    """A chapter written as a notebook (``.ipynb`` text) as the student edition has it:
    the cells of a gated ``{solution-start}`` ... ``{solution-end}`` region go (a note
    in their place), and so do cells tagged ``solution-only`` and the hidden cells of
    :func:`hidden_solution_cells`; markdown cells as :func:`student_chapter` treats
    text; every output, execution count and attachment not named by its cell's text is
    removed; metadata is kept only from a short list (no saved widget state). A
    directive, role, tag or HTML not on the allow-lists is an error (ValueError)."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    teacher = "\n".join(c.source for c in nb.cells)
    cells, gated = [], False
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags") or []
        if cell.cell_type == "markdown":
            start = any(_GATED.match(ln) and _GATED.match(ln)[2].lower() == "start"
                        for ln in cell.source.split("\n"))
            end = any(_GATED.match(ln) and _GATED.match(ln)[2].lower() == "end"
                      for ln in cell.source.split("\n"))
            if gated and not end:
                continue
            if gated:  # the cell that closes the region: what follows its end stays
                rest = strip_chapter_solutions("```{solution-start} x\n```\n" + cell.source)
                cell.source = rest.split("\n", 1)[1] if "\n" in rest else ""
                gated = False
                if not cell.source.strip():
                    continue
            elif start:
                gated = not end
            cell.source = strip_chapter_solutions(strip_teacher_blocks(cell.source))
        elif gated or SOLUTION_ONLY_TAG in tags:
            continue
        cells.append(cell)
    if gated:
        raise ValueError("a {solution-start} region is never closed by {solution-end}")
    code = [(i, c) for i, c in enumerate(cells) if c.cell_type == "code"]
    around = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    dropped, problems = hidden_solution_cells(
        [(c.get("metadata", {}).get("tags") or [], c.source) for _, c in code], around,
        _read_keys(_removed(teacher, "\n".join(c.source for c in cells))))
    if problems:
        _refuse([(code[i][0] + 1, p) for i, p in problems], "cell")
    drop = {code[i][0] for i in dropped}
    nb.cells = [c for i, c in enumerate(cells) if i not in drop]
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            problems += [(index + 1, f"cell line {n}: {p}")
                         for n, p in chapter_problems(cell.source, notebook=True)]
        meta = cell.get("metadata", {})
        problems += [(index + 1, f"the tag {t!r}") for t in meta.get("tags") or []
                     if t not in CHAPTER_TAGS]
        cell.metadata = nbformat.from_dict({k: v for k, v in meta.items()
                                            if k in NOTEBOOK_CELL_METADATA})
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        names = set(re.findall(r"attachment:([^)\s\"']+)", cell.source))
        if "attachments" in cell:
            cell.attachments = {k: v for k, v in cell.attachments.items() if k in names}
            if not cell.attachments:
                del cell["attachments"]
    if problems:
        raise ValueError("; ".join(f"cell {n}: {p}" for n, p in problems[:10])
                         + " (not allowed: the student edition renders only what it allows)")
    nb.metadata = nbformat.from_dict({k: v for k, v in nb.metadata.items()
                                      if k in NOTEBOOK_METADATA})
    return nbformat.writes(nb) + "\n"


#: Metadata of a notebook chapter and of its cells that the student edition keeps.
NOTEBOOK_METADATA = frozenset({"kernelspec", "language_info", "jupytext", "myst", "mystnb"})
NOTEBOOK_CELL_METADATA = frozenset({"tags", "mystnb", "jupyter", "editable", "deletable",
                                    "collapsed", "scrolled"})


def _write_as_old_as(path, text, source):
    """Write ``text`` (``None``: keep the file) to ``path`` with the mtime of ``source``.

    A generated file is as new as what it was made from, so a second build (the student
    PDF after the student site) reuses Sphinx's doctrees of every unchanged chapter
    instead of reading, and executing, it again.
    """
    if text is not None:
        path.write_text(text, encoding="utf-8")
    if source.exists():
        stat = source.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))



def _execution_cache(root):
    """The book's execution cache folder (``_config.yml``), absolute, or None."""
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    folder = ((config.get("sphinx") or {}).get("config") or {}).get("lincls_execution_cache")
    return (root / folder).resolve() if folder else None


def build_student_site(root=".", out="_build/student", repository_url=None, flags=None,
                       builder="html"):
    """Build the student edition into ``out/html`` (sources in ``out/src``).

    ``builder="singlehtml"`` builds the one page that ``make student-pdf`` prints into
    ``out/singlehtml`` instead, from the same sources and doctrees.

    Uses ``jupyter-book config sphinx`` to turn the configuration into Sphinx's, then
    ``sphinx-build`` with the book's strict flags (``-n -W --keep-going``). The Sphinx
    configuration gets one more setting (``lincls_student_edition``, which hides the
    teacher-only tables) and the book's execution cache, absolute (chapters whose code
    the student edition keeps reuse the teacher build's outputs); it is removed after the
    build, so ``out/src`` stays a clean book that can be published as the student
    repository.
    """
    root, out = Path(root).resolve(), Path(out).resolve()
    src = make_student_sources(root, out / "src", repository_url)
    if repository_url:
        print(f"student edition: launch and repository buttons point to {repository_url}")
    else:
        print("student edition without a student repository (STUDENT_REPO unset): built "
              "without Binder, repository and issue buttons")
    bindir = Path(sys.executable).parent
    jb = shutil.which("jupyter-book", path=str(bindir)) or "jupyter-book"
    sb = shutil.which("sphinx-build", path=str(bindir)) or "sphinx-build"
    subprocess.run([jb, "config", "sphinx", str(src)], check=True, cwd=src)
    with open(src / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\nlincls_student_edition = True  # booktools.sphinxext: teacher-only tables\n")
        cache = _execution_cache(root)
        if cache is not None:  # the teacher build's: chapters whose code is the same reuse it
            conf.write(f"lincls_execution_cache = {str(cache)!r}\n")
    flags = ["-n", "-W", "--keep-going"] if flags is None else list(flags)
    cmd = [sb, *flags, "-b", builder, "-d", str(out / "doctrees"), str(src), str(out / builder)]
    try:
        subprocess.run(cmd, check=True, cwd=src)
    finally:
        (src / "conf.py").unlink()
    return out / builder

