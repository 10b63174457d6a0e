"""Course and student variants of the homework: one seed, set in a ``parameters`` cell.

Defined in chapter "For teachers" (``book/teachers.md``).

The book is open, so the solutions of its homework are public. Every homework therefore
takes the data of its graded questions from ``SEED``, set in the one code cell tagged
``parameters`` at the top (as papermill does); the book's copy uses a fixed public seed.
``release --seed`` gives a course its own variant, from a secret of its own:

* the secret is generated (``python -m booktools new-secret PATH``: 256 random bits,
  a file only its owner reads) and read from that file or the environment, never from
  the command line (:func:`read_secret`); a secret of under 128 bits by a rough
  estimate is refused (:func:`secret_bits`);
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
  it, and guessing SECRET costs 2**128 scrypt evaluations at least.

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


def check_secret(secret):
    """Raise ValueError unless ``secret`` is a string of at least
    :data:`MIN_SECRET_BITS` estimated bits (see :func:`secret_bits`)."""
    if not isinstance(secret, str) or not secret.strip():
        raise ValueError("the course secret must be a non-empty string")
    bits = secret_bits(secret)
    if bits < MIN_SECRET_BITS:
        raise ValueError(f"the course secret is too weak (about {bits:.0f} bits by a "
                         f"rough estimate; {MIN_SECRET_BITS} needed): make one with "
                         "`python -m booktools new-secret PATH`")


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


def read_secret(path=None, environ=None):
    """The course secret: the text of the file ``path`` (which only its owner may read),
    else the environment variable :data:`SECRET_ENV`; checked with :func:`check_secret`."""
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
    return secret


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
    return int.from_bytes(_hmac(secret, "seed", notebook, student or "")[:4], "big") >> 2


def variant_key(secret, notebook, student=None):
    """The hex key of a variant's registry salts and grids (see ``record_answer``)."""
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
    """Student ids from a CSV file: the column ``id`` (or the first column)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: the roster is empty")
    head = [h.strip().lower() for h in rows[0]]
    column = head.index("id") if "id" in head else 0
    ids = [row[column].strip() for row in rows[1:] if row and row[column].strip()]
    for sid in ids:
        if not re.fullmatch(r"[\w.\-]+", sid):
            raise ValueError(f"{path}: student id {sid!r}: use letters, digits, '.', '_', '-'")
    if not ids or len(set(ids)) != len(ids):
        raise ValueError(f"{path}: needs a header and unique student ids, one per row")
    return ids
