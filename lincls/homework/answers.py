"""Self-checks: a student checks a numerical answer against a slow salted hash of it.

Defined in chapter "For teachers" (``book/teachers.md``).

A check runs on the student's machine, so whoever has the registry and :func:`check`
can try every value of a small answer space. The design makes each try as expensive as
one whole brute-force step can be, and says what a brute force costs:

* the *whole* answer is hashed once (one digest per answer, not per entry), with scrypt,
  a deliberately slow key derivation, and a random salt per answer;
* nothing else about the value is stored: the registry holds the salt, the tolerance,
  the shape, the grid scale (see :func:`record_answer`), the public ``bound`` (what the
  question itself says about the size of the answer) and the digest;
* :func:`check` says "right" or "wrong" for the whole answer (and "wrong shape" or "not
  a number", which the question states anyway), never which entries differ;
* :func:`brute_force_cost` states, for every answer, how many hashes a brute force needs
  and how long that takes: over the whole answer space, or (given the answer and what
  the notebook prints, which only the teacher has) outward from zero or from a printed
  value, whichever is shorter.

The module also holds :func:`expected`, which marks the teacher's value inside a hidden
test (the release tools in ``booktools.homework.grading`` record it).
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import json
import math
import numbers
import os
import re
import secrets
import time
from pathlib import Path

import numpy as np

#: The registry of answer hashes shipped with lincls.
ANSWERS = Path(__file__).with_name("answers.json")
RECORD_ENV = "LINCLS_RECORD_ANSWERS"
#: While recording a course variant: the hex key its salts and grids derive from (so the
#: same course secret gives the same registry, byte for byte), and a file that collects
#: the recorded values for the release's own tests (never written to a release).
RECORD_KEY_ENV = "LINCLS_RECORD_KEY"
RECORD_VALUES_ENV = "LINCLS_RECORD_VALUES"
FORMAT = 2
#: scrypt's cost parameters: about 16 MiB of memory and a tenth of a second per hash.
KDF = {"name": "scrypt", "n": 2**14, "r": 8, "p": 1}
#: A self-check that a brute force inverts faster than this (seconds) is flagged.
FLAG_SECONDS = 60.0
#: The cores of the attacker the teachers' table also states (a brute force splits
#: evenly: each core tries its own values).
ATTACKER_CORES = 64


def _load_registry(path):
    path = Path(path)
    if not path.exists():
        return {"format": FORMAT, "kdf": dict(KDF), "answers": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT or not isinstance(data.get("answers"), dict):
        raise ValueError(f"{path}: not an answer registry (format {FORMAT})")
    return data


def _as_array(value):
    """The answer as a float array, or an error message for the student."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None, f"not a number or an array of numbers (got {type(value).__name__})"
    if not np.all(np.isfinite(arr)):
        return None, "contains NaN or infinity"
    return arr, None


def _digest(kdf, salt, name, shape, bins):
    """scrypt of the whole answer: its name, shape and the grid cell of every entry."""
    message = json.dumps([name, list(shape), [int(b) for b in bins]]).encode()
    key = hashlib.scrypt(
        message, salt=bytes.fromhex(salt), n=kdf["n"], r=kdf["r"], p=kdf["p"],
        maxmem=256 * kdf["n"] * kdf["r"] + 2**20, dklen=16,
    )
    return key.hex()


def _step(entry):
    return 4.0 * entry["atol"] * entry["scale"]


def _bins(entry, arr):
    """Grid cell of every entry: the nearest integer, or floor(x / step) for reals."""
    flat = arr.ravel()
    if entry["kind"] == "integer":
        return [math.floor(x + 0.5) for x in flat]
    step, offset = _step(entry), entry["offset"]
    return [math.floor(x / step - offset) for x in flat]


def _grid(flat, atol, rng):
    """A random grid (scale s in [1, 2), offset o in [0, 1)) that puts every entry in
    the middle half of its cell.

    With cells ``[(k + o) w, (k + 1 + o) w)`` of width ``w = 4 atol s``, every value
    within atol of the answer then falls in the answer's cell: the check accepts it.
    The grid is stored; it does not narrow the answer, because a brute force must still
    try every cell.
    """
    for _ in range(20_000):
        s, o = 1.0 + rng.random(), rng.random()
        frac = (flat / (4.0 * atol * s) - o) % 1.0
        if np.all((frac >= 0.25) & (frac <= 0.75)):
            return s, o
    raise ValueError(
        f"no grid puts all {flat.size} entries away from a cell edge; check fewer "
        "entries at once, or integers"
    )


def _keyed_random(key, name):
    """Salt and grid generator of one answer from a variant's key (HMAC-SHA256): the
    same key gives the same registry, and neither reveals the key."""
    digest = hmac.new(bytes.fromhex(key), name.encode(), hashlib.sha256).digest()
    return digest[:16].hex(), np.random.default_rng(int.from_bytes(digest[16:], "big"))


def record_answer(name, value, *, atol=1e-6, normalized=False, bound=None, registry=None,
                  key=None):
    """Store the slow salted hash of a correct answer under ``name`` (teachers only).

    An answer whose entries are all integers, with ``atol < 0.5``, is checked exactly
    after rounding to integers. Otherwise every entry is placed on a grid of cells of
    width ``4 * atol * s``, with a scale ``s`` in [1, 2) and an offset chosen so that each entry of
    the answer lies in the middle half of its cell: :func:`check` then accepts every
    answer within ``atol`` of this one, entry by entry (a ``normalized`` one only if its
    norm is also within ``atol`` of 1, which it tests first), and rejects every answer
    with an entry further than ``8 * atol``.

    ``bound`` (required) is what the question tells the student about the answer's size:
    every entry lies in ``[-bound, bound]``. It is stored and used for the brute-force
    cost, so it must be fixed per question, never derived from the value: in a course
    release every variant's registry holds the same bound, and a value-derived one would
    give away the order of magnitude of each student's answer.

    ``key`` (hex), given by a course release, makes the salt and the grid a keyed hash
    of ``name`` instead of random, so releasing twice writes the same registry.

    Returns the registry entry (a dict).
    """
    if not isinstance(name, str) or not re.fullmatch(r"[\w.\-]+", name):
        raise ValueError(f"answer name {name!r}: use letters, digits, '.', '_' or '-'")
    if not (isinstance(atol, (int, float)) and atol > 0 and math.isfinite(atol)):
        raise ValueError(f"atol must be a positive number, got {atol!r}")
    arr, problem = _as_array(value)
    if problem:
        raise ValueError(f"answer {name!r}: {problem}")
    if normalized and not math.isclose(float(np.linalg.norm(arr)), 1.0, abs_tol=atol):
        raise ValueError(f"answer {name!r} is declared normalized but its norm is not 1")
    largest = float(np.max(np.abs(arr))) if arr.size else 0.0
    if bound is None:
        raise ValueError(f"answer {name!r}: state bound=, what the question says about the "
                         "size of every entry (the same for every variant)")
    if not (isinstance(bound, numbers.Real) and math.isfinite(bound) and bound >= largest):
        raise ValueError(f"answer {name!r}: bound must be a number >= the largest entry "
                         f"({largest:g}), got {bound!r}")
    path = Path(registry) if registry is not None else ANSWERS
    data = _load_registry(path)
    integer = atol < 0.5 and bool(np.all(arr == np.round(arr)))
    entry = {
        "kind": "integer" if integer else "real",
        "atol": float(atol),
        "scale": 1.0,
        "offset": 0.0,
        "shape": list(arr.shape),
        "normalized": bool(normalized),
        "bound": float(bound),
        "salt": secrets.token_hex(16),
    }
    rng = secrets.SystemRandom()
    if key is not None:
        entry["salt"], rng = _keyed_random(key, name)
    if not integer:
        entry["scale"], entry["offset"] = _grid(arr.ravel(), atol, rng)
    entry["digest"] = _digest(data["kdf"], entry["salt"], name, arr.shape, _bins(entry, arr))
    data["answers"][name] = entry
    data["answers"] = dict(sorted(data["answers"].items()))
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return entry


def _diagnose(kdf, entry, name, value):
    """``(right, message)`` for a student's value: one hash, whole answer."""
    arr, problem = _as_array(value)
    if problem:
        return False, problem
    shape = tuple(entry["shape"])
    if arr.shape != shape:
        if np.squeeze(arr).shape != np.squeeze(np.empty(shape)).shape:
            return False, f"wrong shape: expected {shape}, got {arr.shape}"
        arr = arr.reshape(shape)  # (3,) for (1, 3) and the like: same answer
    if entry["normalized"]:
        norm = float(np.linalg.norm(arr))
        if not math.isclose(norm, 1.0, abs_tol=entry["atol"]):
            return False, f"not normalized: its norm is {norm:.4g}, it should be 1"
    right = _digest(kdf, entry["salt"], name, shape, _bins(entry, arr)) == entry["digest"]
    return right, "right" if right else "wrong"


def check(name, value, *, atol=1e-6, normalized=False, bound=None, prior=None, registry=None,
          quiet=False):
    """Check an answer against its slow salted hash and say whether it is right.

    The registry (``lincls/homework/answers.json``) holds one scrypt hash per answer,
    so a student can check without seeing the answer. An answer within its tolerance
    counts as right (a normalized one only if its norm is also within the tolerance of
    1). The message is "right" or "wrong" for the answer as a whole (or says that the
    shape or the type is wrong, or that the norm is not 1, which the question states
    anyway).

    Parameters
    ----------
    name : str
        The answer's name, e.g. ``"homework1.margin"``.
    value : float or array-like
        The student's answer.
    atol, normalized, bound : float, bool, float
        Used only when recording (see :func:`record_answer`); checking uses the
        values stored with the answer.
    prior : float or array-like, optional
        Used only when recording: what the notebook prints (or lets a student compute
        without solving) that lies near the answer, e.g. a theory value. It is never
        stored in the registry; a release uses it to state what a search outward from
        it costs (see :func:`brute_force_cost`).
    registry : path-like, optional
        Another registry file (default: the one shipped with lincls).
    quiet : bool
        Do not print the message.

    Returns
    -------
    bool
        True if the answer is right.

    Notes
    -----
    When the environment variable ``LINCLS_RECORD_ANSWERS`` names a registry file,
    ``check`` *records* ``value`` as the correct answer instead (see
    ``python -m booktools record``). Whoever holds the registry can still try
    every value of the answer space; :func:`brute_force_cost` says how long that takes.

    Examples
    --------
    >>> import tempfile, os
    >>> reg = os.path.join(tempfile.mkdtemp(), "answers.json")
    >>> _ = record_answer("demo.w", [0.6, 0.8], atol=1e-3, normalized=True, bound=1,
    ...                   registry=reg)
    >>> check("demo.w", [0.6, 0.8001], registry=reg)
    demo.w: right
    True
    >>> check("demo.w", [3, 4], registry=reg)
    demo.w: not normalized: its norm is 5, it should be 1
    False
    >>> check("demo.w", [0.8, 0.6], registry=reg)
    demo.w: wrong
    False
    """
    recording = os.environ.get(RECORD_ENV)
    if recording:
        record_answer(
            name, value, atol=atol, normalized=normalized, bound=bound, registry=recording,
            key=os.environ.get(RECORD_KEY_ENV),
        )
        values = os.environ.get(RECORD_VALUES_ENV)
        if values:
            item = {"key": name, "value": _to_json(value)}
            if prior is not None:
                item["prior"] = _to_json(prior)
            with open(values, "a", encoding="utf-8") as f:
                f.write(json.dumps(item) + "\n")
        if not quiet:
            print(f"{name}: recorded")
        return True
    path = Path(registry) if registry is not None else ANSWERS
    data = _load_registry(path)
    entry = data["answers"].get(name)
    if entry is None:
        raise ValueError(f"no answer named {name!r} in {path}")
    right, message = _diagnose(data["kdf"], entry, name, value)
    if not quiet:
        print(f"{name}: {message}")
    return right


def seconds_per_hash(registry=None, repeat=3):
    """The time of one hash with the registry's parameters on this machine (the best
    of ``repeat`` runs, so a busy machine does not overstate the cost)."""
    data = _load_registry(ANSWERS if registry is None else registry)
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        _digest(data["kdf"], "00" * 16, "timing", (), [0])
        best = min(best, time.perf_counter() - start)
    return best


def answer_space(entry):
    """How many values a brute force tries to cover the answer space of ``entry``.

    Every entry lies in ``[-bound, bound]``: an integer answer has ``2 bound + 1``
    values per entry, a real one ``2 bound / (4 atol scale)`` grid cells. A normalized
    answer has one free entry fewer (the last one's magnitude follows; its sign doubles).
    """
    size = int(np.prod(entry["shape"], dtype=np.int64)) if entry["shape"] else 1
    if entry["kind"] == "integer":
        per_entry = 2 * math.floor(entry["bound"]) + 1
    else:
        per_entry = max(1, math.ceil(2 * entry["bound"] / _step(entry)))
    free = size - 1 if entry["normalized"] and size > 1 else size
    return per_entry**free * (2 if free < size else 1)


def search_tries(entry, value, priors=()):
    """How many values a search outward from zero, or from each of ``priors``, tries
    before it meets ``value`` (the teacher's answer of ``entry``).

    Entry by entry, the search starts from the grid cell of zero or of the prior
    (whichever is nearer) and steps outward, one cell at a time on either side: ``d``
    cells away, it finds the entry after ``2 d + 1`` tries. Over the entries (all but
    the last of a normalized answer, whose sign doubles the count) the tries multiply:
    the box of cells as far from the start as the answer, which a search that knew the
    distances would sweep. That is a lower estimate of what the attacker needs, so a
    cost computed from it does not overstate the protection.
    """
    arr = np.asarray(value, dtype=float).reshape(entry["shape"]).ravel()
    starts = [np.zeros_like(arr)]
    for prior in priors:
        starts.append(np.broadcast_to(np.asarray(prior, dtype=float),
                                      np.shape(value)).ravel())
    here = np.array(_bins(entry, arr))
    dist = np.min([np.abs(here - np.array(_bins(entry, s))) for s in starts], axis=0)
    free = arr.size - 1 if entry["normalized"] and arr.size > 1 else arr.size
    tries = 2 if free < arr.size else 1
    for d in dist[:free]:
        tries *= 2 * int(d) + 1
    return tries


def brute_force_cost(registry=None, seconds=None, values=None, cores=ATTACKER_CORES):
    """For every answer: its space, the hashes a brute force needs, and the time.

    Returns a list of dicts with ``name``, ``space`` (values to try), ``uniform`` (half
    the space: the expected tries of a search that knows only the bound), ``search``
    (with ``values``: the tries of :func:`search_tries`, else None), ``hashes`` (the
    fewer of the two), ``seconds`` (that many hashes on one core of this machine, at
    ``seconds`` per hash, measured if not given), ``flag`` (True when that is under
    :data:`FLAG_SECONDS`), and ``cores_seconds`` and ``cores_flag``, the same on
    ``cores`` cores (the tries split evenly between them).

    ``values`` maps answer names to the teacher's answer, or to a dict with ``value``
    and optionally ``priors`` (a list of values the notebook prints near it); only the
    teacher has them, so without them the cost assumes a search over the whole space.
    """
    path = ANSWERS if registry is None else Path(registry)
    data = _load_registry(path)
    per_hash = seconds_per_hash(path) if seconds is None else seconds
    rows = []
    for name, entry in data["answers"].items():
        space = answer_space(entry)
        uniform = max(1, space // 2)
        search = None
        if values is not None and name in values:
            known = values[name]
            if not (isinstance(known, dict) and "value" in known):
                known = {"value": known}
            search = search_tries(entry, _from_json(known["value"]),
                                  [_from_json(p) for p in known.get("priors", [])])
        hashes = uniform if search is None else min(uniform, search)
        rows.append({
            "name": name, "space": space, "uniform": uniform, "search": search,
            "hashes": hashes, "seconds": hashes * per_hash,
            "flag": hashes * per_hash < FLAG_SECONDS, "seconds_per_hash": per_hash,
            "cores": cores, "cores_seconds": hashes * per_hash / cores,
            "cores_flag": hashes * per_hash / cores < FLAG_SECONDS,
        })
    return rows


def _from_json(value):
    """A value as :func:`_to_json` wrote it (arrays as ``{"ndarray": ...}``)."""
    return value["ndarray"] if isinstance(value, dict) and "ndarray" in value else value


# ---------------------------------------------------------------------------------
# The teacher's values inside hidden tests
# ---------------------------------------------------------------------------------
EXPECTED_ENV = "LINCLS_RECORD_EXPECTED"
#: Set (to any non-empty value) in the kernel that grades a submission: then
#: :func:`expected` publishes the student's value for the grader to compare outside the
#: kernel. The one place that names it: the grader's kernel manager sets it.
GRADING_ENV = "LINCLS_GRADING"
#: The MIME type of what :func:`expected` publishes while grading.
EXPECTED_MIME = "application/vnd.lincls.expected+json"


def expected(key, value, *, rtol=None, atol=None):
    """Mark ``value`` as what a hidden test expects: the teacher's value of an expression.

    Returns ``value``. Written in a hidden test of a teacher notebook, ``value`` is
    computed by the teacher's solution; in the grading version (the same call) by the
    student's. ``release --grading`` runs the teacher notebook with
    ``LINCLS_RECORD_EXPECTED`` naming a file, and ``expected`` records the value there
    under ``key``: the teacher's values go to a file beside the grading version that
    the grading kernel never sees. While grading (``LINCLS_GRADING`` set), ``expected``
    publishes the student's value as display data of type :data:`EXPECTED_MIME`; the
    grader compares it with the teacher's, outside the kernel. Floats match within
    ``rtol`` and ``atol`` (default those of ``np.allclose``; the grader reads them from
    the call in the grading version, so they must be literal numbers), everything
    else exactly.

    >>> expected("demo.answer", 2 + 2)
    4
    """
    if not isinstance(key, str):
        raise TypeError(f"expected(): the key must be a string, got {type(key).__name__}")
    path = os.environ.get(EXPECTED_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"key": key, "value": _to_json(value)}) + "\n")
    if os.environ.get(GRADING_ENV):
        # the kernel's own display publisher (lincls does not depend on IPython); the
        # value as JSON text: NaN and infinity survive, as they do when recorded
        shell = getattr(builtins, "get_ipython", lambda: None)()
        if shell is None:
            raise RuntimeError(f"expected(): {GRADING_ENV} is set, but this is not a "
                               "Jupyter kernel to publish the value in")
        shell.display_pub.publish(data={EXPECTED_MIME: {
            "key": key, "value": json.dumps(_to_json(value))}}, metadata={})
    return value


def _to_json(value):
    if isinstance(value, np.ndarray):
        return {"ndarray": _to_json(value.tolist()), "dtype": str(value.dtype)}
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, (int, float, str)) or value is None:
        return value
    raise TypeError(f"expected(): cannot record a {type(value).__name__}; use numbers, "
                    "strings, lists or arrays")
