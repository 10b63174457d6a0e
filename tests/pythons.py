"""The other supported Pythons and their venvs, with the standard library alone: ``make
test`` makes the older Pythons' venvs before the main venv exists (beside its install, which
keeps one core busy), and tests/test_pythons.py runs their tests in them.

``python3 tests/pythons.py FOLDER [--skip MINOR]...`` makes, for every supported Python
found but this interpreter's and those skipped, a venv in ``FOLDER/python3.<minor>/venv``
with requirements.txt and requirements-dev.txt installed, then the file ``ready`` beside it.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _makefile_range():
    text = (ROOT / "Makefile").read_text()
    lo = re.search(r"^PY_MIN := 3\.(\d+)$", text, re.M).group(1)
    hi = re.search(r"^PY_MAX := 3\.(\d+)$", text, re.M).group(1)
    return int(lo), int(hi)


PY_MIN, PY_MAX = _makefile_range()


def find_python(minor):
    """A working ``python3.<minor>``: on PATH, else one that pyenv installed."""
    candidates = [shutil.which(f"python3.{minor}")]
    pyenv_root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates += sorted(Path(pyenv_root).glob(f"versions/3.{minor}.*/bin/python3.{minor}"),
                         reverse=True)
    for exe in filter(None, candidates):
        probe = subprocess.run([str(exe), "-c", "import sys, venv; print(sys.version_info[1])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == str(minor):
            return str(exe)
    return None


def venv_commands(exe, venv):
    """The command lines that make a venv on ``exe`` at ``venv`` with the book's and the
    tests' requirements. pip byte-compiles what it installs: where PYTHONDONTWRITEBYTECODE
    is set (this machine kind's environment sets it), a venv installed with --no-compile
    never gets byte code, and every process (the tests start many) compiles its imports
    again: the older Pythons' lane took 217 CPU s so, 188 with pip's byte code (measured)."""
    py = str(Path(venv) / "bin" / "python")
    return [shlex.join([exe, "-m", "venv", str(venv)]),
            shlex.join([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "-r", "requirements.txt", "-r", "requirements-dev.txt"])]


def made_venv(folder, minor):
    """The venv that ``main`` made for ``minor`` in ``folder``, or None."""
    if not folder:
        return None
    tmp = Path(folder) / f"python3.{minor}"
    return tmp / "venv" if (tmp / "ready").exists() else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--skip", type=int, action="append", default=[])
    args = parser.parse_args(argv)
    for minor in range(PY_MIN, PY_MAX + 1):
        if minor in args.skip or minor == sys.version_info[1]:
            continue
        exe = find_python(minor)
        if exe is None:
            continue
        tmp = args.folder / f"python3.{minor}"
        tmp.mkdir(parents=True, exist_ok=True)
        for line in venv_commands(exe, tmp / "venv"):
            print(line, flush=True)
            subprocess.run(line, shell=True, cwd=ROOT, check=True)
        (tmp / "ready").touch()


if __name__ == "__main__":
    main()
