"""make test's order (tests/layers.sh), run with a fake make that records what it is asked.

The chain runs in order at the caller's priority; the older Pythons start first, before the
main venv's install (dev), and learn from a file when it is done; the newest
once load is done and the route once book-clean is, at the same priority, each printed
whole after the chain (the fake's Python lanes run until the chain's last part starts, so
that a failing chain finds them running however slow the machine); a failing chain or lane
fails the run, and a failing chain stops the lanes (SIGTERM) and shows what they printed
until then."""

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKE = r"""#!/usr/bin/env bash
shift  # --no-print-directory
case "$*" in
  *-python*) trap 'echo "$(date +%s.%N) stopped $*" >> "$RUN/calls"; exit 143' TERM;;
esac
echo "$(date +%s.%N) start $* nice=$(nice) tmp=${TMPDIR#$RUN/}" >> "$RUN/calls"
echo "output of $*"
case "$*" in
  *-python) until grep -q "start portability" "$RUN/calls"; do sleep 0.05; done;;
  dev) until grep -q "start older-pythons-lane" "$RUN/calls"; do sleep 0.05; done;;
  route) exit "${ROUTE_STATUS:-0}";;
  older-pythons-lane) until [ -e "$MAIN_VENV_READY" ]; do sleep 0.05; done
                     echo "$(date +%s.%N) ready $*" >> "$RUN/calls"
                     until grep -q "start portability" "$RUN/calls"; do sleep 0.05; done;;
  *load) until grep -q "ready older-pythons-lane" "$RUN/calls"; do sleep 0.05; done;;
  *book-clean) until grep -q "start newest-python" "$RUN/calls"; do sleep 0.05; done
               [ "${CHAIN_STATUS:-0}" = 0 ] || exit "$CHAIN_STATUS";;
esac
echo "$(date +%s.%N) end $*" >> "$RUN/calls"
"""


def run_layers(tmp_path, **env):
    fake = tmp_path / "make"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    tmpdir = run_dir / "tmp"
    tmpdir.mkdir()
    result = subprocess.run(["bash", str(ROOT / "tests" / "layers.sh")], cwd=ROOT,
                            env=dict(os.environ, MAKE=str(fake), RUN=str(run_dir),
                                     TMPDIR=str(tmpdir), **env),
                            capture_output=True, text=True, timeout=60)
    calls = [line.split(" ", 1)[1] for line in (run_dir / "calls").read_text().splitlines()]
    return result, calls, tmpdir


def test_the_chain_in_order_and_the_lanes_beside_it(tmp_path):
    result, calls, tmpdir = run_layers(tmp_path)
    assert result.returncode == 0, result.stderr
    chain = ["dev", "lint unit load", "release nbgrader book-clean",
             "portability side outputs browser"]
    nice = os.nice(0)  # everything at the caller's priority
    starts = [c for c in calls if c.startswith("start")]
    for part in chain:
        assert f"start {part} nice={nice} tmp=tmp" in starts
    lanes = {"older-pythons-lane": None, "newest-python": chain[1], "route": chain[2]}
    for lane, after in lanes.items():  # each lane once the part of the chain before it ended
        start = f"start {lane} nice={nice} tmp=tmp/{lane}"
        assert start in starts
        if after:
            assert calls.index(start) > calls.index(f"end {after}")
    # the older Pythons beside the install (the fake's dev waits until they started), their
    # tests once it is done: beside unit (the fake's load waits until the lane saw the file
    # that says so)
    older = "start older-pythons-lane nice={} tmp=tmp/older-pythons-lane".format(nice)
    assert calls.index(older) < calls.index("end dev") < calls.index("ready older-pythons-lane")
    assert calls.index("ready older-pythons-lane") < calls.index(f"end {chain[1]}")
    # the chain's output as it comes, each lane's whole after it
    out = result.stdout.splitlines()
    assert out[:4] == [f"output of {part}" for part in chain]
    assert out[4:] == [line for lane in lanes for line in
                       (f"=== {lane}.log: beside the chain ===", f"output of {lane}")]
    assert not tmpdir.exists()  # the run's folder is removed


def test_a_failing_lane_fails_the_run(tmp_path):
    result, _, _ = run_layers(tmp_path, ROUTE_STATUS="3")
    assert result.returncode == 1
    assert "output of route" in result.stdout


def test_a_failing_chain_stops_the_lanes(tmp_path):
    result, calls, tmpdir = run_layers(tmp_path, CHAIN_STATUS="2")
    assert result.returncode == 2
    assert sorted(c for c in calls if c.startswith("stopped")) == [
        "stopped newest-python", "stopped older-pythons-lane"]
    assert not any(c.startswith(("end older", "end newest", "start route", "start portability"))
                   for c in calls)
    # what the stopped lanes printed until then is shown after the chain's output (and
    # after it whatever a lane's shell says of a child the signal ended)
    out = result.stdout.splitlines()
    assert out[:3] == ["output of dev", "output of lint unit load",
                       "output of release nbgrader book-clean"]
    for lane in ("older-pythons-lane", "newest-python"):
        i = out.index(f"=== {lane}.log: beside the chain ===")
        assert out[i + 1] == f"output of {lane}"
    assert not tmpdir.exists()


def test_every_layer_names_the_files_of_its_marker():
    """A layer's pytest command (``pytest -m MARKER``) names its test files rather than the
    folder, whose collection imports every test module (about 10 CPU s a process): each file
    that marks a test with MARKER must be among them."""
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    commands = re.findall(r"pytest\b[^\n]*?-m (\w+)([^\n]*)", makefile)
    assert len(commands) >= 10
    for marker, rest in commands:
        named = {word for word in rest.split() if word.endswith(".py")}
        assert named and "tests" not in rest.split(), f"pytest -m {marker} names no file"
        marking = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_*.py")
                   if re.search(rf"pytest\.mark\.{marker}\b", p.read_text())}
        assert marking <= named, f"pytest -m {marker} leaves out {sorted(marking - named)}"
