"""The one gate for files from outside (``booktools.homework.untrusted``): only a regular
file with a single name is read, never through a link, at most ``limit`` bytes, and
parsed in a process of its own under limits, so that no file and no parser bomb reaches
the caller's memory, recursion or time."""

import os
import socket
import stat
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from booktools.homework import untrusted
from booktools.homework.untrusted import Untrusted, parse_json, read_bytes, read_notebook


@pytest.fixture
def folder(tmp_path):
    """A submissions folder: ``s01/hw/hw.ipynb`` a valid notebook, and a grading version
    of it elsewhere (the target of the links)."""
    (tmp_path / "sub" / "s01" / "hw").mkdir(parents=True)
    (tmp_path / "grading").mkdir()
    nb = new_notebook(cells=[new_code_cell("x = 1")])
    nbformat.write(nb, tmp_path / "sub" / "s01" / "hw" / "hw.ipynb")
    nbformat.write(nb, tmp_path / "grading" / "hw.ipynb")
    return tmp_path


def refused(path, root, limit=1 << 20):
    with pytest.raises(Untrusted) as caught:
        read_bytes(path, limit, root=root)
    return caught.value.note


def test_a_regular_file_is_read_and_parsed(folder):
    path = folder / "sub" / "s01" / "hw" / "hw.ipynb"
    nb = read_notebook(path, 1 << 20, root=folder / "sub")
    assert nb.cells[0].source == "x = 1" and nb.nbformat == 4


def test_links_fifos_devices_and_folders_are_not_read(folder):
    """A symbolic link (absolute or relative, to the student's own grading version or
    to /dev/zero), a hard link, a FIFO (the read would block for ever), a folder, a unix
    socket or a device node in the notebook's place: each is refused at once, with a
    note that says what it is."""
    sub, place = folder / "sub", folder / "sub" / "s01" / "hw" / "hw.ipynb"
    place.unlink()
    grading = folder / "grading" / "hw.ipynb"
    cases = {
        "symbolic link": lambda: place.symlink_to(grading),
        "relative link": lambda: place.symlink_to(os.path.relpath(grading, place.parent)),
        "/dev/zero": lambda: place.symlink_to("/dev/zero"),
        "hard link": lambda: os.link(grading, place),
        "FIFO": lambda: os.mkfifo(place),
        "folder": lambda: place.mkdir(),
        "socket": lambda: bound.append(bind(place)),
    }
    if os.geteuid() == 0:  # a device node (/dev/zero's numbers)
        cases["device"] = lambda: os.mknod(place, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    bound = []

    def bind(path):  # by a relative name: a run's temporary folder can be too deep for
        server = socket.socket(socket.AF_UNIX)  # a socket's path (108 bytes)
        here = os.getcwd()
        os.chdir(path.parent)
        try:
            server.bind(path.name)
        finally:
            os.chdir(here)
        return server

    notes = {}
    for what, make in cases.items():
        make()
        start = time.monotonic()
        notes[what] = refused(place, sub)
        assert time.monotonic() - start < 5, what
        place.rmdir() if place.is_dir() and not place.is_symlink() else place.unlink()
    assert notes["symbolic link"] == notes["relative link"] == notes["/dev/zero"] == (
        "a symbolic link in place of a file: not read")
    assert notes["hard link"] == "a file with 2 names (a hard link): not read"
    assert notes["FIFO"] == "a FIFO (named pipe) in place of a file: not read"
    assert notes["folder"] == "a folder in place of a file: not read"
    assert notes["socket"] == "a socket in place of a file: not read"
    assert notes.get("device", "a device in place of a file: not read") == (
        "a device in place of a file: not read")
    for server in bound:
        server.close()


def test_a_linked_folder_on_the_way_is_not_followed(folder):
    """``s02 -> s01`` (or ``s02/hw -> /elsewhere``): every folder below the trusted root
    is opened without following a link."""
    sub = folder / "sub"
    (sub / "s02").symlink_to(sub / "s01")
    assert refused(sub / "s02" / "hw" / "hw.ipynb", sub) == (
        "s02 is a symbolic link, not a folder: not read")
    (sub / "s03").mkdir()
    (sub / "s03" / "hw").symlink_to(folder / "grading")
    assert "hw is a symbolic link" in refused(sub / "s03" / "hw" / "hw.ipynb", sub)
    assert refused(sub / ".." / "grading" / "hw.ipynb", sub).startswith("a path that")


def test_a_huge_file_is_not_read(folder):
    """A file over the limit (here a sparse 64 GiB one) is refused from its size, before
    a byte of it is read."""
    huge = folder / "sub" / "s01" / "hw" / "hw.ipynb"
    with open(huge, "r+b") as f:
        f.truncate(64 << 30)
    start = time.monotonic()
    assert refused(huge, folder / "sub", limit=64 << 20) == "larger than 67,108,864 bytes: not read"
    assert time.monotonic() - start < 2


def test_a_fifo_put_in_place_after_the_check_cannot_block(folder, monkeypatch):
    """Between the ``lstat`` and the ``open`` the file is replaced by a FIFO: the open
    does not block (``O_NONBLOCK``) and the ``fstat`` tells another file."""
    place = folder / "sub" / "s01" / "hw" / "hw.ipynb"
    real_stat = os.stat

    def stat_then_swap(path, *args, **kwargs):
        found = real_stat(path, *args, **kwargs)
        if path == "hw.ipynb" and place.is_file():
            place.unlink()
            os.mkfifo(place)
        return found

    monkeypatch.setattr(untrusted.os, "stat", stat_then_swap)
    start = time.monotonic()
    note = refused(place, folder / "sub")
    assert note == "changed while it was opened: not read"
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("bomb, why", [
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than"),
    (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "nested deeper than"),
    (b"[" * 65 + b"]" * 65, "nested deeper than"),
    (b"1" * 100_000, "not valid JSON"),  # an integer of 100,000 digits
    (b'{"cells": [}', "not valid JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
])
def test_parser_bombs_are_refused_in_their_own_process(bomb, why):
    """Nesting that would exhaust a recursion (100,000 deep), or a mere 65 levels where
    a notebook needs about ten, an integer too long to convert, bad JSON or bytes: each
    is a note, and the caller's process never parses them."""
    with pytest.raises(Untrusted, match=why):
        parse_json(bomb)


def test_memory_and_time_are_bounded():
    """A document that needs more memory than the parser may use, or more time."""
    many = b"[" + b"[0]," * 2_000_000 + b"0]"
    with pytest.raises(Untrusted, match="memory|stopped"):
        parse_json(many, memory=200 << 20)
    with pytest.raises(Untrusted, match="within"):
        parse_json(many, wall=0.01)


def test_a_notebook_that_nbformat_refuses_is_refused(folder):
    bad = folder / "sub" / "s01" / "hw" / "hw.ipynb"
    bad.write_text('{"cells": "no", "nbformat": 4, "nbformat_minor": 5, "metadata": {}}')
    with pytest.raises(Untrusted, match="not a valid notebook"):
        read_notebook(bad, 1 << 20, root=folder / "sub")
