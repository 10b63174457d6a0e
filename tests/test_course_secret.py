"""The course secret: generated, read from a file or the environment (never the command
line), at least 128 bits by a rough estimate, not found by a search of patterns, words
and hashes of words in under 2**80 guesses, written nowhere in the repository or its
website, and stretched with scrypt. Student ids are safe names of folders."""

import base64
import hashlib
import hmac
import os
import random
import re
import stat
import uuid
from pathlib import Path

import nbformat
import pytest

from booktools import homework as hw
from booktools.homework import cli
from booktools.homework.variants import (
    MIN_GUESS_BITS,
    MIN_SECRET_BITS,
    SECRET_ENV,
    check_secret,
    guess_bits,
    new_secret,
    read_secret,
    secret_bits,
)

ROOT = Path(__file__).resolve().parents[1]
STRONG = "5b1f0c9e83d2a7461e9f03c2b8d57a6e0f4c1b9a2d8e7f3065a4c3b2e1d0f9a8"
WEAK = ["ml2024", "correct horse battery staple 19", "another course, another year",
        "a known secret of the per-student round trip", "ab" * 40, "0" * 64,
        "CorrectHorseBatteryStaple2024!", "example secret: use a long random phrase of your own"]


def test_new_secret_is_256_bits_only_its_owner_reads(tmp_path):
    path = new_secret(tmp_path / "secret")
    text = path.read_text()
    assert re.fullmatch(r"[0-9a-f]{64}\n", text)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_secret(path) == text.strip() and secret_bits(text) == 256
    with pytest.raises(FileExistsError):  # a course's secret is never overwritten
        new_secret(path)
    assert new_secret(tmp_path / "other").read_text() != text


@pytest.mark.parametrize("secret", WEAK)
def test_weak_secrets_are_refused(secret, tmp_path):
    assert secret_bits(secret) < MIN_SECRET_BITS
    with pytest.raises(ValueError, match="too weak"):
        check_secret(secret)
    with pytest.raises(ValueError, match="too weak"):
        hw.derive_seed(secret, "homework1")
    with pytest.raises(ValueError, match="too weak"):
        read_secret(environ={SECRET_ENV: secret})


def test_random_tokens_pass():
    """Random keys in the usual encodings pass, 1000 of each (drawn from a fixed seed)."""
    rng = random.Random(0)
    for _ in range(1000):
        raw = rng.getrandbits(256).to_bytes(32, "big")
        for text in (raw.hex(), base64.urlsafe_b64encode(raw).decode().rstrip("="),
                     base64.b64encode(raw).decode()):
            assert secret_bits(text) >= MIN_SECRET_BITS, text
    assert secret_bits(rng.getrandbits(128).to_bytes(16, "big").hex()) == 128


def test_digits_uuids_and_short_base64_count_what_they_hold():
    """Digits are no hex (32 digits of pi: 106 bits), a UUID holds 122 random bits, and
    a 24-character base64 token (128 random bits) scores about 5 bits a character, so
    most are refused, as "For teachers" says; 64 hex characters pass."""
    pi = "31415926535897932384626433832795"
    assert abs(secret_bits(pi) - 32 * 3.321928) < 1e-3
    rng = random.Random(1)
    uuids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(100)]
    short = [base64.b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode()
             for _ in range(200)]
    for weak in (pi, *uuids):
        with pytest.raises(ValueError, match="too weak"):
            check_secret(weak)
    assert sum(secret_bits(s) < MIN_SECRET_BITS for s in short) > len(short) / 2
    assert 4.5 < sum(map(secret_bits, short)) / (24 * len(short)) < 5.5
    assert secret_bits(rng.getrandbits(256).to_bytes(32, "big").hex()) == 256


def test_read_secret_from_file_or_environment(tmp_path):
    import secrets

    strong = secrets.token_hex(32)  # STRONG is written here: published, so refused
    path = tmp_path / "secret"
    path.write_text(strong + "\n")
    path.chmod(0o600)
    assert read_secret(path, environ={}) == strong
    assert read_secret(environ={SECRET_ENV: f" {strong}\n"}) == strong
    with pytest.raises(ValueError, match=SECRET_ENV):
        read_secret(environ={})
    path.chmod(0o640)
    with pytest.raises(ValueError, match="chmod 600"):
        read_secret(path, environ={})


def test_seeds_come_from_scrypt_and_hkdf():
    """The seed is HKDF-Expand (HMAC-SHA256, one block) of the scrypt key of the secret."""
    key = hashlib.scrypt(STRONG.encode(), salt=b"booktools course secret v1", n=2**14, r=8,
                         p=1, dklen=32)
    info = "\0".join(("lincls-homework", "seed", "homework1", "s01")).encode() + b"\x01"
    block = hmac.new(key, info, hashlib.sha256).digest()
    assert hw.derive_seed(STRONG, "homework1", "s01") == int.from_bytes(block[:4], "big") >> 2
    assert hw.derive_seed(STRONG, "homework1", "s01") != hw.derive_seed(STRONG, "homework1")


def test_the_command_line_never_takes_the_secret(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    src = ROOT / "book" / "homework" / "homework1.ipynb"
    with pytest.raises(SystemExit) as exc:  # the old form: a secret as an argument
        cli.main(["release", str(src), str(tmp_path / "out"), "--seed", STRONG])
    assert exc.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err
    assert cli.main(["release", str(src), str(tmp_path / "out"), "--seed"]) == 1
    assert "no course secret" in capsys.readouterr().err
    weak = tmp_path / "weak"
    weak.write_text("ml2024\n")
    weak.chmod(0o600)
    assert cli.main(["release", str(src), str(tmp_path / "out"), "--secret-file",
                     str(weak)]) == 1
    assert "too weak" in capsys.readouterr().err
    assert cli.main(["new-secret", str(tmp_path / "new")]) == 0
    assert secret_bits((tmp_path / "new").read_text()) == 256
    assert not (tmp_path / "out").exists()


@pytest.mark.homework
def test_release_reads_the_secret_from_the_environment(tmp_path, monkeypatch):
    import secrets

    strong = secrets.token_hex(32)  # one written in the repository would be refused
    monkeypatch.setenv(SECRET_ENV, strong)
    src = ROOT / "book" / "homework" / "homework1.ipynb"
    assert cli.main(["release", str(src), str(tmp_path / "out"), "--seed"]) == 0
    nb = nbformat.read(tmp_path / "out" / src.name, 4)
    params = nb.cells[hw.variants.parameters_index(nb)].source
    assert f"SEED = {hw.derive_seed(strong, src.stem)}\n" in params
    for p in (tmp_path / "out").rglob("*"):
        assert strong.encode() not in p.read_bytes()
    assert os.environ[SECRET_ENV] == strong  # read, not consumed


def test_a_published_secret_is_refused(tmp_path):
    """The demonstration secret that "For teachers" prints, and any text of the
    repository, is no course secret: read_secret refuses it as written, in upper case,
    and as the hex of its bytes, though its characters look random."""
    demo = re.search(r'DEMO_SECRET = "([0-9a-f]{64})"',
                     (ROOT / "book" / "teachers.md").read_text())[1]
    assert secret_bits(demo) == 256
    check_secret(demo)  # random-looking: only its being published gives it away
    path = tmp_path / "secret"
    for text in (demo, demo.upper()):
        path.write_text(text + "\n")
        path.chmod(0o600)
        with pytest.raises(ValueError, match="published: .*teachers.md"):
            read_secret(path, environ={})
    with pytest.raises(ValueError, match="published"):
        read_secret(environ={SECRET_ENV: demo})
    phrase = "a secret written out in the book as its own hex, for a test only"
    planted = tmp_path / "repo"
    (planted / "notes").mkdir(parents=True)
    (planted / "notes" / "x.md").write_text(phrase.encode().hex())
    with pytest.raises(ValueError, match="published"):
        read_secret(environ={SECRET_ENV: phrase}, roots=[planted])
    fresh = new_secret(tmp_path / "fresh")
    assert read_secret(fresh) == fresh.read_text().strip()


@pytest.mark.parametrize("weak", [
    "0123456789abcdef" * 4,  # sequences, repeated
    "fedcba9876543210" * 4,
    "0f" * 32,
    hashlib.sha256(b"perceptron").hexdigest(),  # the digest of a word of the book
    hashlib.sha256(b"secret\n").hexdigest(),  # echo secret | sha256sum
    hashlib.sha256(b"ml").hexdigest(),  # a short text
    hashlib.md5(b"Homework").hexdigest(),
    hashlib.sha512(b"teacher").hexdigest(),
    hashlib.sha1(b"x9").hexdigest(),
])
def test_guessable_secrets_are_refused(weak):
    """Patterns, and hex digests of words or short texts (which look like 128 to 512
    random bits to a count of characters), are found by a search in far under 2**80
    guesses."""
    assert guess_bits(weak) < MIN_GUESS_BITS
    with pytest.raises(ValueError, match="too weak"):
        check_secret(weak)


def test_random_secrets_cost_far_more_than_the_floor():
    """Random keys in the usual encodings keep almost all their bits in the search's
    estimate: a pattern found by chance costs a few bits, never the floor's margin."""
    rng = random.Random(2)
    for _ in range(200):
        raw = rng.getrandbits(256).to_bytes(32, "big")
        assert guess_bits(raw.hex()) > 230
        assert guess_bits(base64.b64encode(raw).decode()) > 230
        assert guess_bits(raw[:16].hex()) > 100  # 128 random bits


def test_a_release_for_an_unsafe_id_writes_nothing(tmp_path):
    """Per-student folders are named by the id: a release whose roster holds ``..``
    stops before it writes anything, inside or outside its folder."""
    src = ROOT / "book" / "homework" / "homework1.ipynb"
    out = tmp_path / "course" / "student"
    with pytest.raises(ValueError, match="student id"):
        hw.release(src, out, grading=tmp_path / "course" / "grading", seed=STRONG,
                   students=["s01", ".."])
    assert not any(tmp_path.rglob("*.json")) and not any(tmp_path.rglob("*.ipynb"))


def test_student_paths_stay_in_their_folder(tmp_path):
    from booktools.homework.variants import student_path

    assert student_path(tmp_path, "s01", "hw.ipynb") == tmp_path / "s01" / "hw.ipynb"
    for sid, parts in ((".", ()), ("..", ()), ("s01", ("..", "s02")), ("s01", ("/etc",))):
        with pytest.raises(ValueError):
            student_path(tmp_path, sid, *parts)
    (tmp_path / "s03").symlink_to(tmp_path.parent)
    with pytest.raises(ValueError, match="leaves"):
        student_path(tmp_path, "s03", "x")
