"""The one gate through which a file from outside is opened: a student's submission, or
a file a course platform's archive unpacked into a teacher's folder.

Defined in chapter "For teachers" (``book/teachers.md``).

:func:`read_bytes` opens a file only if it is a regular file with a single name: every
folder from the trusted ``root`` down is opened without following a symbolic link
(``O_NOFOLLOW``), the file's ``lstat`` must show a regular file with one link (no
symbolic link, no hard link, FIFO, device, socket or folder), it is opened with
``O_NOFOLLOW | O_NONBLOCK`` (a FIFO put in its place after the ``lstat`` cannot block)
and its ``fstat`` must be the ``lstat``'s file; at most ``limit`` bytes are read.
:func:`parse_json` parses bytes in a separate process under limits on memory, CPU time
and wall time, and hands back only a value nested at most :data:`MAX_DEPTH` deep, so no
parser bomb (deep nesting, a huge document) reaches the caller's process;
:func:`read_notebook` does both, then validates the bounded value as a notebook with
nbformat.

Each refusal is an :class:`Untrusted` error whose ``note`` says why in a few words,
for a grades file or a message: it is never a traceback, and a caller gives the
student a zero with that note (``autograde``) or refuses the file (a release).

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "hw.ipynb").write_text('{"cells": []}')
>>> parse_json(read_bytes(folder / "hw.ipynb", 100, root=folder))
{'cells': []}
>>> (folder / "link.ipynb").symlink_to(folder / "hw.ipynb")
>>> read_bytes(folder / "link.ipynb", 100, root=folder)
Traceback (most recent call last):
...
booktools.homework.untrusted.Untrusted: a symbolic link in place of a file: not read
>>> parse_json(b"[" * 100_000 + b"]" * 100_000)
Traceback (most recent call last):
...
booktools.homework.untrusted.Untrusted: not readable: JSON nested deeper than 64 levels
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

#: How deep a JSON value may nest (a notebook needs about ten levels; outputs such as
#: ``application/json`` some more).
MAX_DEPTH = 64
#: Bytes of memory (address space), CPU seconds and wall seconds the parsing process may
#: use. The CPU limit stops a parse that computes too long; the wall limit only a child
#: that hangs, so it is ten times as long (a busy machine must not reach it by accident).
PARSE_MEMORY = 2 << 30
PARSE_CPU = 60
PARSE_WALL = 600

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


class Untrusted(ValueError):  # noqa: N818 (a refusal, said in words)
    """A file from outside that is not read: ``note`` says why, in a few words."""

    def __init__(self, note, path=None):
        super().__init__(note)
        self.note, self.path = note, path


def _kind(mode):
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _open_folder(root, parts):
    """A descriptor of the folder ``root/parts...``, each part opened without following
    a symbolic link; ``root`` itself is trusted (the teacher's)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                raise Untrusted(f"{part}: no such file or folder") from None
            if not stat.S_ISDIR(st.st_mode):
                raise Untrusted(f"{part} is {_kind(st.st_mode)}, not a folder: not read")
            new = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=fd)
            os.close(fd)
            fd = new
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path, limit, root=None, one_name=True):
    """The bytes of the regular file ``path`` (at most ``limit`` of them), or
    :class:`Untrusted`. With ``root`` (a folder ``path`` lies in, trusted), no folder
    between the two may be a symbolic link either. ``one_name=False`` accepts a file with
    other names (hard links): for a teacher's own file, which a student's hard link to it
    must not make unreadable for the whole class."""
    path = Path(path)
    if root is None:
        root, parts = path.parent, []
    else:
        root = Path(root)
        try:
            parts = list(path.parent.relative_to(root).parts)
        except ValueError:
            raise Untrusted(f"not under {root}: not read", path) from None
        if any(part in ("..", ".") for part in parts):
            raise Untrusted("a path that leaves its folder: not read", path)
    try:
        folder = _open_folder(root, parts)
    except Untrusted as exc:
        exc.path = path
        raise
    except OSError as exc:
        raise Untrusted(f"cannot be read: {exc.strerror}", path) from None
    try:
        try:
            st = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
        except OSError as exc:
            raise Untrusted(f"cannot be read: {exc.strerror}", path) from None
        if not stat.S_ISREG(st.st_mode):
            raise Untrusted(f"{_kind(st.st_mode)} in place of a file: not read", path)
        if one_name and st.st_nlink != 1:
            raise Untrusted(f"a file with {st.st_nlink} names (a hard link): not read", path)
        if st.st_size > limit:
            raise Untrusted(f"larger than {limit:,} bytes: not read", path)
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                         | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=folder)
        except OSError as exc:  # replaced by a link meanwhile: ELOOP
            raise Untrusted(f"cannot be read: {exc.strerror}", path) from None
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as f:
        now = os.fstat(f.fileno())
        if ((now.st_dev, now.st_ino) != (st.st_dev, st.st_ino)
                or not stat.S_ISREG(now.st_mode) or (one_name and now.st_nlink != 1)):
            raise Untrusted("changed while it was opened: not read", path)
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew meanwhile
        raise Untrusted(f"larger than {limit:,} bytes: not read", path)
    return data


# The parsing process: reads the bytes on stdin, sets its own limits first, and writes
# "ok" and the value (or "error" and why) as JSON on stdout. The value it writes is
# nested at most MAX_DEPTH deep, so the caller's json.loads of it is safe.
_CHILD = r"""
import json, resource, sys
memory, cpu, depth = (int(a) for a in sys.argv[1:4])
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

def deeper(value, limit):
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            items = item.values()
        elif isinstance(item, list):
            items = item
        else:
            continue
        if level > limit:
            return True
        stack.extend((x, level + 1) for x in items)
    return False

def main():
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return "not UTF-8 text (byte %d)" % exc.start, None
    try:
        value = json.loads(text)
    except RecursionError:
        return "JSON nested deeper than %d levels" % depth, None
    except ValueError as exc:
        return "not valid JSON (line %d, column %d: %s)" % (
            getattr(exc, "lineno", 0), getattr(exc, "colno", 0), getattr(exc, "msg", exc)), None
    if deeper(value, depth):
        return "JSON nested deeper than %d levels" % depth, None
    return None, value

try:
    why, value = main()
except MemoryError:
    why, value = "needs more than %d bytes of memory to read" % memory, None
except RecursionError:
    why, value = "JSON nested deeper than %d levels" % depth, None
out = sys.stdout.buffer
if why is None:
    out.write(b"ok\n" + json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
else:
    out.write(b"error\n" + why.encode("utf-8", "replace"))
"""


def parse_json(data, notebook=False, max_depth=MAX_DEPTH, memory=PARSE_MEMORY,
               cpu=PARSE_CPU, wall=PARSE_WALL):
    """The JSON value of ``data`` (bytes), parsed in a separate process limited to
    ``memory`` bytes of address space, ``cpu`` CPU seconds and ``wall`` seconds, and
    nested at most ``max_depth`` deep; with ``notebook``, a notebook that nbformat
    validates (as version 4), returned as a :class:`nbformat.NotebookNode`. Anything
    else is :class:`Untrusted`."""
    cmd = [sys.executable, "-I", "-c", _CHILD, str(int(memory)), str(int(cpu)),
           str(int(max_depth))]
    try:
        done = subprocess.run(cmd, input=data, capture_output=True, timeout=wall,
                              env={"PATH": os.defpath, "LANG": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        raise Untrusted(f"not readable within {wall} seconds") from None
    head, _, body = done.stdout.partition(b"\n")
    if done.returncode != 0 or head not in (b"ok", b"error"):
        why = ("needs more than its CPU time to read" if done.returncode == -9
               else f"cannot be read (the parser stopped, status {done.returncode})")
        raise Untrusted(f"not readable: {why}")
    if head == b"error":
        raise Untrusted("not readable: " + body.decode("utf-8", "replace"))
    text = body.decode("utf-8", "surrogatepass")  # a value at most max_depth deep
    if not notebook:
        return json.loads(text)
    # nbformat's reading and validation run here, on the bounded value the child wrote
    # (importing nbformat in every child would cost a second a file)
    import nbformat

    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several kinds
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise Untrusted("not readable: not a valid notebook: " + first[:200]) from None
    return nb


def read_notebook(path, limit, root=None, one_name=True, **limits):
    """:func:`read_bytes` then :func:`parse_json` (``notebook=True``): the notebook at
    ``path``, or :class:`Untrusted` (its ``path`` set)."""
    data = read_bytes(path, limit, root=root, one_name=one_name)
    try:
        return parse_json(data, notebook=True, **limits)
    except Untrusted as exc:
        exc.path = Path(path)
        raise
