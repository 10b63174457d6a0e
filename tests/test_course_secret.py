"""The course secret: generated, read from a file or the environment (never the command
line), at least 128 bits by a rough estimate, stretched with scrypt."""

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
    MIN_SECRET_BITS,
    SECRET_ENV,
    check_secret,
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
    path = tmp_path / "secret"
    path.write_text(STRONG + "\n")
    path.chmod(0o600)
    assert read_secret(path, environ={}) == STRONG
    assert read_secret(environ={SECRET_ENV: f" {STRONG}\n"}) == STRONG
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
    monkeypatch.setenv(SECRET_ENV, STRONG)
    src = ROOT / "book" / "homework" / "homework1.ipynb"
    assert cli.main(["release", str(src), str(tmp_path / "out"), "--seed"]) == 0
    nb = nbformat.read(tmp_path / "out" / src.name, 4)
    params = nb.cells[hw.variants.parameters_index(nb)].source
    assert f"SEED = {hw.derive_seed(STRONG, src.stem)}\n" in params
    for p in (tmp_path / "out").rglob("*"):
        assert STRONG.encode() not in p.read_bytes()
    assert os.environ[SECRET_ENV] == STRONG  # read, not consumed
