"""Course and student variants of the homework: one seed, set in a ``parameters`` cell.

Defined in chapter "For teachers" (``book/teachers.md``).

The book is open, so the solutions of its homework are public. Every homework therefore
takes the data of its graded questions from ``SEED``, set in the one code cell tagged
``parameters`` at the top (as papermill does); the book's copy uses a fixed public seed.
``release --seed`` gives a course its own variant, from a secret of its own:

* the secret is generated (``python -m booktools new-secret PATH``: 256 random bits,
  a file only its owner reads) and read from that file or the environment, never from
  the command line (:func:`read_secret`); a secret of under 128 bits by a rough
  estimate of its characters is refused (:func:`secret_bits`), and so is one that a
  search of patterns, words and hashes of words would find in under 2**80 guesses
  (:func:`guess_bits`), or that is written anywhere in the repository or its website
  (:func:`published_in`, for the secret :func:`read_secret` reads);
* the seed of each notebook is :func:`derive_seed`: a key stretched from SECRET with
  scrypt, expanded (HKDF-Expand, HMAC-SHA256) with the notebook's name and, with
  ``--students``, the student id; never SECRET itself;
* the teacher notebook is executed with that seed (:func:`record_variant`): its
  ``check`` calls record the self-check registry of the variant, a file written beside
  the notebook (salts and grids are keyed hashes too, so a release is reproducible), and
  its ``expected`` calls give the values of the grading version's hidden tests; its
  answers, and what it prints near them (``check(..., prior=...)``), price the variant's
  self-checks for the teacher (:class:`booktools.homework.table.ReleaseCosts`); a
  registry's bounds are the questions', the same in every variant;
* the student version's parameters cell holds the derived seed and the registry's file
  name: nothing else differs, and nothing in the output depends on SECRET but through
  the key derivation, so neither SECRET nor another variant's seed can be computed from
  it: guessing SECRET costs one scrypt evaluation a guess, and the checks above refuse
  the secrets they know to be guessable in under 2**80 of them (a secret from
  ``new-secret`` takes about 2**255). They are estimates: a secret made from a phrase
  or a name by a rule they do not know can be weaker than they say.

A question whose answer does not depend on the seed is listed in the notebook's
``lincls`` metadata under ``fixed`` (by the names of its self-checks and expected
values); the teachers' table shows the list, and the tests check it both ways.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import hmac
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

PARAMETERS_TAG = "parameters"
#: The name of a variant's self-check registry, beside its notebook.
ANSWERS_SUFFIX = ".answers.json"


#: The environment variable ``release --seed`` reads the course secret from (without
#: ``--secret-file``).
SECRET_ENV = "BOOKTOOLS_COURSE_SECRET"
#: The least estimated entropy of a course secret, in bits.
MIN_SECRET_BITS = 128
#: The least estimated cost of guessing a course secret, in bits (log2 of the number
#: of guesses, each one scrypt evaluation): see :func:`guess_bits`.
MIN_GUESS_BITS = 80
#: A student id: letters, digits, ``.``, ``_`` and ``-``, not starting with ``.`` or
#: ``-``, at most 64 characters.
STUDENT_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
# scrypt's cost: 16 MiB and about 0.05 s per guess on one core (RFC 7914's interactive
# setting); the salt separates this use of a secret from any other.
_SCRYPT = dict(salt=b"booktools course secret v1", n=2**14, r=8, p=1, dklen=32)


def secret_bits(secret):
    """A rough estimate of the entropy of ``secret``, in bits.

    Hexadecimal text (with at least one of the letters a-f) counts 4 bits a character,
    digits alone log2(10) bits a digit, a UUID 122 bits (the random part of a version 4
    one). Otherwise a character counts 6 bits (the base64 alphabet), except what makes
    text guessable: in a run of letters of the same case, the second counts log2(26)
    bits and each further one 1.2 bits (about what a letter of English carries); a digit
    after a digit log2(10) bits; punctuation 1 bit. Random base64 thus counts about 5
    bits a character: a token of 16 random bytes (24 characters) is mostly refused, one
    of 32 bytes (44 characters) passes. In a phrase (text with spaces) a word counts at
    most 13 bits, as if drawn from a list of 8192 words, and a space nothing. Text that
    compresses well (repetitions) counts no more than its compressed size.

    >>> secret_bits("0f1e2d3c4b5a69788796a5b4c3d2e1f00123456789abcdeffedcba9876543210")
    256.0
    >>> [secret_bits(s) < 128 for s in ("ml2024", "correct horse battery staple 19")]
    [True, True]
    >>> round(secret_bits("31415926535897932384626433832795"), 1)  # 32 digits of pi
    106.3
    """
    import math
    import zlib

    text = str(secret).strip()
    if not text:
        return 0.0
    if re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", text.lower()):
        bits = 122.0  # a UUID: at most the 122 random bits of a version 4 one
    elif re.fullmatch(r"[0-9]+", text):
        bits = math.log2(10) * len(text)
    elif re.fullmatch(r"(?=.*[a-f])[0-9a-f]+|(?=.*[A-F])[0-9A-F]+", text):
        bits = 4.0 * len(text)
    elif re.search(r"\s", text):  # a phrase: each word at most one of 8192 words
        bits = sum(min(_run_bits(word), 13.0) for word in text.split())
    else:
        bits = _run_bits(text)
    compressed = 8 * max(0, len(zlib.compress(text.encode(), 9)) - 8)
    return min(bits, float(compressed))


def _run_bits(text):
    """:func:`secret_bits` of text without spaces, character by character."""
    import math

    bits, prev, run = 0.0, None, 0
    for ch in text:
        kind = ("lower" if ch.islower() else "upper" if ch.isupper() else
                "digit" if ch.isdigit() else "punct" if ch in "-_.,;:'" else "other")
        run = run + 1 if kind == prev else 1
        bits += (1.0 if kind == "punct" else 6.0 if run == 1 else
                 math.log2(10) if kind == "digit" else
                 math.log2(26) if run == 2 and kind in ("lower", "upper") else 1.2)
        prev = kind
    return bits


#: Words a secret is made of, besides those of the repository (:func:`dictionary`).
COMMON_WORDS = """password passwd secret secrets letmein welcome admin root toor qwerty
azerty qwertz asdf zxcv iloveyou dragon monkey master shadow sunshine princess football
baseball soccer hockey hunter ranger killer trustno1 batman superman michael jessica
charlie thomas george summer winter spring autumn fall january february march april may
june july august september october november december monday tuesday wednesday thursday
friday saturday sunday course class classes lecture lectures teacher teachers student
students homework homeworks exam exams grade grades grading school college university
semester term year spring test tests example sample demo default changeme change me
key keys token seed seeds salt hash hidden private public secure security correct horse
battery staple hello world foo bar baz spam eggs python jupyter notebook nbgrader lincls
booktools linear classification classifier perceptron machine learning deep neural
network data science math maths""".split()


#: The files whose words :func:`dictionary` takes (prose and code, not notebooks'
#: outputs or pictures).
WORD_FILES = (".md", ".py", ".txt", ".bib", ".toml", ".yml", ".yaml", ".cfg")


def dictionary():
    """The words a dictionary search of a secret tries: :data:`COMMON_WORDS` and every
    word (3 to 24 letters, in lower case or capitalized) of the repository's prose and
    code (:data:`WORD_FILES`), where booktools lives in one: a secret a course makes
    from its own material is among the first guesses."""
    words = set(COMMON_WORDS)
    for path, text in _repository_texts(site=False):
        if path.suffix in WORD_FILES:
            words.update(w.decode().lower()
                         for w in re.findall(rb"\b[A-Z]?[a-z]{2,23}\b", text))
    return frozenset(words)


_dictionary = functools.lru_cache(maxsize=1)(dictionary)


def _alphabet(text):
    """The size of the alphabet ``text`` looks drawn from."""
    if re.fullmatch(r"[0-9]+", text):
        return 10
    if re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", text):
        return 16
    size = 0
    for pattern, n in ((r"[a-z]", 26), (r"[A-Z]", 26), (r"[0-9]", 10), (r"[^a-zA-Z0-9]", 33)):
        size += n if re.search(pattern, text) else 0
    return size


_HEX = "0123456789abcdef"
#: The hash functions, by the length of their hex digest, whose digests of a word
#: :func:`guess_bits` recognizes.
_DIGESTS = {32: ("md5",), 40: ("sha1",), 56: ("sha224", "sha3_224"),
            64: ("sha256", "sha3_256", "blake2s"), 96: ("sha384", "sha3_384"),
            128: ("sha512", "sha3_512", "blake2b")}


@functools.lru_cache(maxsize=16)
def _word_digests(length):
    """The hex digests of length ``length`` of every word of :func:`dictionary` (as
    written, capitalized, upper case, with a newline as ``echo WORD | sha256sum``
    hashes it) and of every text of up to 3 letters and digits."""
    import itertools

    short = ["".join(t) for n in range(1, 4)
             for t in itertools.product("abcdefghijklmnopqrstuvwxyz0123456789", repeat=n)]
    texts = set(short) | {text + "\n" for text in short}
    for word in _dictionary():
        texts.update((word, word.capitalize(), word.upper(), word + "\n"))
    found = {}
    for name in _DIGESTS.get(length, ()):
        for text in texts:
            found[hashlib.new(name, text.encode()).hexdigest()] = len(texts) * len(
                _DIGESTS[length])
    return found


def guess_bits(secret):
    """log2 of an estimate of how many guesses find ``secret``: the cheapest way to
    write it as pieces, each a random character of its alphabet, a repetition of an
    earlier piece, a run of characters in sequence (``abcd``, ``9876``, ``0123...ef``),
    a run of digits, or a word of :func:`dictionary` (any case); or, for hexadecimal
    text, the digest of a word or of a short text (MD5, SHA-1, SHA-2, SHA-3, BLAKE2).
    Only the first 256 characters are priced (a lower bound: enough to tell).

    >>> guess_bits("0123456789abcdef" * 4) < 30
    True
    >>> import hashlib
    >>> guess_bits(hashlib.sha256(b"perceptron").hexdigest()) < 30
    True
    >>> guess_bits("0f1e2d3c4b5a69788796a5b4c3d2e1f0a8c3e92b7d14f6052c9e7a3b1d8f0e46") > 200
    True
    """
    import math

    text = str(secret).strip()
    digests = _word_digests(len(text)) if re.fullmatch(r"[0-9a-fA-F]+", text) else {}
    if text.lower() in digests:
        return math.log2(digests[text.lower()])
    text = text[:256]
    n, alphabet = len(text), _alphabet(text)
    if n == 0:
        return 0.0
    char = math.log2(alphabet)
    words, lower = _dictionary(), text.lower()
    position = {c: i for i, c in enumerate(_HEX)} if alphabet == 16 else None
    cost = [0.0] + [math.inf] * n
    for i in range(1, n + 1):
        best = cost[i - 1] + char
        for j in range(max(0, i - 64), i - 2):  # pieces of 3 to 64 characters
            piece, length = text[j:i], i - j
            base = cost[j] + math.log2(length) + 1
            if 0 <= text.find(piece, 0, i - 1) < j:  # an earlier copy (overlap allowed)
                best = min(best, base + math.log2(max(j, 1)))
            if lower[j:i] in words:
                case = (0 if piece.islower() else 1 if piece.isupper()
                        or piece == piece.capitalize() else length)
                best = min(best, base + math.log2(len(words)) + case)
            if piece.isdigit():
                best = min(best, base + length * math.log2(10))
            ords = [position.get(c.lower(), -99) if position else ord(c) for c in piece]
            steps = {b - a for a, b in zip(ords, ords[1:])}
            if len(steps) == 1 and steps <= {-2, -1, 1, 2}:
                best = min(best, base + char + 2)
        cost[i] = best
    return cost[n] + 1  # which of the models


def check_secret(secret):
    """Raise ValueError unless ``secret`` is a string of at least
    :data:`MIN_SECRET_BITS` estimated bits (see :func:`secret_bits`) that a search
    would not find in under 2 ** :data:`MIN_GUESS_BITS` guesses (:func:`guess_bits`)."""
    if not isinstance(secret, str) or not secret.strip():
        raise ValueError("the course secret must be a non-empty string")
    bits = secret_bits(secret)
    if bits < MIN_SECRET_BITS:
        raise ValueError(f"the course secret is too weak (about {bits:.0f} bits by a "
                         f"rough estimate; {MIN_SECRET_BITS} needed): make one with "
                         "`python -m booktools new-secret PATH`")
    guesses = guess_bits(secret)
    if guesses < MIN_GUESS_BITS:
        raise ValueError(f"the course secret is too weak: a search of patterns, words "
                         f"and hashes of words finds it in about 2**{guesses:.0f} guesses "
                         f"(2**{MIN_GUESS_BITS} needed): make one with "
                         "`python -m booktools new-secret PATH`")


def _repository_root():
    """The repository booktools lives in (``tools/booktools`` of it), or None."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / ".git").exists() else None


def _repository_texts(roots=None, site=True):
    """``[(path, bytes)]`` of the text files of the repositories ``roots`` (default: the
    one booktools lives in): the files git tracks, and those of its website
    (``_build/html``), each of at most 16 MiB; binary files (a NUL byte) are left
    out."""
    roots = [_repository_root()] if roots is None else roots
    found = []
    for root in dict.fromkeys(r for r in roots if r is not None):
        root = Path(root)
        try:
            listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z"],
                                    capture_output=True, timeout=60, check=True).stdout
            paths = [root / p.decode() for p in listed.split(b"\0") if p]
        except (OSError, subprocess.SubprocessError):  # no git: its sources, not its venv
            paths = [p for p in root.rglob("*") if not any(
                part.startswith((".", "_build", "node_modules")) or part.endswith("venv")
                for part in p.relative_to(root).parts)]
        html = root / "_build" / "html"
        if site and html.is_dir():
            paths += sorted(html.rglob("*"))
        for path in paths:
            try:
                if path.is_symlink() or not path.is_file() or path.stat().st_size > 16 << 20:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if b"\0" not in data[:8192]:
                found.append((path, data))
    return found


def published_in(secret, roots=None):
    """The first file of the repository or its website (see :func:`_repository_texts`)
    that holds ``secret``, as it is written, in either case if it is hexadecimal, or as
    the hex of its bytes; None if none does."""
    text = str(secret).strip()
    forms = {text.encode(), text.encode().hex().encode()}
    if re.fullmatch(r"[0-9a-fA-F]+", text):
        forms |= {text.lower().encode(), text.upper().encode()}
    for path, data in _repository_texts(roots):
        low = data.lower() if re.fullmatch(r"[0-9a-fA-F]+", text) else data
        if any(form in data or form.lower() in low for form in forms):
            return path
    return None


@functools.lru_cache(maxsize=4)
def _key(secret):
    """The key stretched from the course secret with scrypt (once per secret)."""
    check_secret(secret)
    return hashlib.scrypt(secret.strip().encode(), **_SCRYPT)


def _hmac(secret, *parts):
    """HKDF-Expand (RFC 5869, one block) of the secret's key for ``parts``."""
    info = "\0".join(("lincls-homework", *parts)).encode()
    return hmac.new(_key(secret), info + b"\x01", hashlib.sha256).digest()


def new_secret(path):
    """Write a new course secret (256 random bits, hexadecimal) to ``path``, a new file
    that only its owner may read (mode 0600); an existing file is never overwritten."""
    import secrets

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_hex(32) + "\n")
    return Path(path)


def read_secret(path=None, environ=None, roots=None):
    """The course secret: the text of the file ``path`` (which only its owner may read),
    else the environment variable :data:`SECRET_ENV`; checked with :func:`check_secret`,
    and refused if it is written in the repository or its website (:func:`published_in`,
    over ``roots``: by default the repository booktools lives in, and the git
    repository of the current folder)."""
    environ = os.environ if environ is None else environ
    if path is not None:
        path = Path(path)
        if os.name == "posix" and path.stat().st_mode & 0o077:
            raise ValueError(f"{path}: others may read this course secret: "
                             f"run `chmod 600 {path}`")
        secret = path.read_text(encoding="utf-8").strip()
    elif environ.get(SECRET_ENV, "").strip():
        secret = environ[SECRET_ENV].strip()
    else:
        raise ValueError(f"no course secret: pass --secret-file PATH or set {SECRET_ENV} "
                         "(make one with `python -m booktools new-secret PATH`)")
    check_secret(secret)
    if roots is None:
        roots = [_repository_root(), _git_root(Path.cwd())]
    where = published_in(secret, roots)
    if where is not None:
        raise ValueError(f"the course secret is published: {where} holds it, so anyone "
                         "can derive every student's seeds; make one with "
                         "`python -m booktools new-secret PATH`")
    return secret


def _git_root(folder):
    for parent in [folder, *folder.parents]:
        if (parent / ".git").exists():
            return parent
    return None


def check_student_id(sid):
    """Raise ValueError unless ``sid`` is a safe student id (:data:`STUDENT_ID`): a
    folder of that name is always a folder of its own, never ``..`` or a hidden one, and
    never an option of a command."""
    if not isinstance(sid, str) or not STUDENT_ID.fullmatch(sid):
        raise ValueError(f"student id {str(sid)[:80]!r}: use letters, digits, '.', '_' "
                         "and '-', not starting with '.' or '-', at most 64 characters")
    return sid


def student_path(folder, sid, *parts):
    """``folder/sid/parts...`` for a safe student id, checked (resolved) to stay inside
    ``folder/sid``."""
    check_student_id(sid)
    for part in parts:
        if Path(part).is_absolute() or ".." in Path(part).parts:
            raise ValueError(f"{part!r}: not a name inside the folder of {sid}")
    base = (Path(folder) / sid).resolve()
    path = Path(folder, sid, *parts)
    if not (path.resolve() == base or path.resolve().is_relative_to(base)) or \
            base.parent != Path(folder).resolve():
        raise ValueError(f"{path}: leaves the folder {folder}")
    return path


def derive_seed(secret, notebook, student=None):
    """The seed of one notebook in a course (or of one student): 30 bits of a key
    derived from the secret (room to add small offsets and stay a valid NumPy and
    scikit-learn seed). A weak secret is refused (:func:`check_secret`).

    >>> SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f00123456789abcdeffedcba9876543210"
    >>> derive_seed(SECRET, "homework1") == derive_seed(SECRET, "homework1")
    True
    >>> derive_seed(SECRET, "homework1", "s01") != derive_seed(SECRET, "homework1", "s02")
    True
    """
    if student is not None:
        check_student_id(student)
    return int.from_bytes(_hmac(secret, "seed", notebook, student or "")[:4], "big") >> 2


def variant_key(secret, notebook, student=None):
    """The hex key of a variant's registry salts and grids (see ``record_answer``)."""
    if student is not None:
        check_student_id(student)
    return _hmac(secret, "answers", notebook, student or "").hex()


def parameters_index(nb, path="<notebook>"):
    """Index of the one code cell tagged ``parameters``."""
    from .notebook import HomeworkError

    found = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
             and PARAMETERS_TAG in (c.get("metadata", {}).get("tags") or [])]
    if len(found) != 1:
        raise HomeworkError(path, f"needs exactly one code cell tagged {PARAMETERS_TAG!r} "
                                  f"holding SEED (found {len(found)})")
    return found[0]


def parameters_source(seed, answers=None):
    """The source of a parameters cell."""
    return (
        "# The seed of this copy's data; a course release sets its own.\n"
        f"SEED = {int(seed)}\n"
        "# The self-check answers: None means those shipped with lincls.\n"
        f"ANSWERS = {answers!r}"
    )


def with_parameters(nb, path, seed, answers=None):
    """A copy of ``nb`` whose parameters cell holds ``seed`` and ``answers``."""
    import nbformat

    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    cell = out.cells[parameters_index(out, path)]
    cell.source = parameters_source(seed, answers)
    cell.outputs, cell.execution_count = [], None
    return out


def fixed_names(nb):
    """The names of the self-checks and expected values that do not depend on the seed."""
    return list(nb.metadata.get("lincls", {}).get("fixed", []))


def record_variant(nb, path, seed, key, registry, timeout=600, priors=None):
    """Execute the teacher notebook ``nb`` with ``seed``; its ``check`` calls record
    into ``registry`` (salts and grids keyed by ``key``).

    Returns ``(expected, checked)``: the values of its ``expected`` calls and of its
    self-checks, by name (the latter for tests and the teacher's cost table; a release
    never writes them). A dict given as ``priors`` receives, by self-check name, the
    ``prior=`` of its ``check`` call (what the notebook prints near the answer).
    """
    from lincls.homework.answers import RECORD_ENV, RECORD_KEY_ENV, RECORD_VALUES_ENV

    from .grading import record_expected

    registry = Path(registry).resolve()
    registry.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        values = Path(tmp) / "checked.jsonl"
        values.touch()
        env = {RECORD_ENV: str(registry), RECORD_KEY_ENV: key,
               RECORD_VALUES_ENV: str(values)}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            expected = record_expected(with_parameters(nb, path, seed), path, timeout)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        checked = {}
        for line in values.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            checked[item["key"]] = item["value"]
            if priors is not None and "prior" in item:
                priors[item["key"]] = item["prior"]
    return expected, checked


def read_roster(path):
    """Student ids from a CSV file: the column ``id`` (or the first column). The file is
    read through the gate (:func:`booktools.homework.untrusted.read_bytes`: a regular
    file, no link, FIFO or device, at most 16 MiB); any refusal names it."""
    import io

    from .untrusted import Untrusted, read_bytes

    try:
        rows = list(csv.reader(io.StringIO(read_bytes(path, 16 << 20).decode("utf-8"),
                                           newline="")))
    except Untrusted as exc:
        raise Untrusted(f"{path}: {exc.note}", Path(path)) from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: the roster cannot be read: {exc}") from None
    if not rows:
        raise ValueError(f"{path}: the roster is empty")
    head = [h.strip().lower() for h in rows[0]]
    column = head.index("id") if "id" in head else 0
    ids = [row[column].strip() for row in rows[1:] if row and row[column].strip()]
    for sid in ids:
        try:
            check_student_id(sid)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    if not ids or len(set(ids)) != len(ids):
        raise ValueError(f"{path}: needs a header and unique student ids, one per row")
    return ids
