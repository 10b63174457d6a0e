"""make test's order (tests/layers.sh), run with a fake make that records what it is asked.

The chain runs in order at the caller's priority; the other Pythons start first and the
route once book-clean is done, at the same priority, each printed whole after the chain; a
failing chain or lane fails the run, and a failing chain stops the lanes (SIGTERM) and
shows what they printed until then."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKE = r"""#!/usr/bin/env bash
shift  # --no-print-directory
[ "$*" = other-pythons ] && trap 'echo "$(date +%s.%N) stopped" >> "$RUN/calls"; exit 143' TERM
echo "$(date +%s.%N) start $* nice=$(nice) tmp=${TMPDIR#$RUN/}" >> "$RUN/calls"
echo "output of $*"
case "$*" in
  other-pythons) for _ in $(seq 20); do sleep 0.1; done;;
  route) exit "${ROUTE_STATUS:-0}";;
  *book-clean) until grep -q "start other-pythons" "$RUN/calls"; do sleep 0.05; done
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
    chain_1 = "lint unit load release nbgrader book-clean"
    chain_2 = "portability side publishing pdf-test browser"
    nice = os.nice(0)  # everything at the caller's priority
    starts = [c for c in calls if c.startswith("start")]
    assert f"start {chain_1} nice={nice} tmp=tmp" in starts
    assert f"start {chain_2} nice={nice} tmp=tmp" in starts
    assert f"start other-pythons nice={nice} tmp=tmp/other-pythons" in starts
    route = f"start route nice={nice} tmp=tmp/route"
    assert route in starts and calls.index(route) > calls.index(f"end {chain_1}")
    # the chain's output as it comes, each lane's whole after it
    out = result.stdout.splitlines()
    assert out[:2] == [f"output of {chain_1}", f"output of {chain_2}"]
    assert out[2:] == ["=== other-pythons.log: beside the chain ===",
                       "output of other-pythons",
                       "=== route.log: beside the chain ===", "output of route"]
    assert not tmpdir.exists()  # the run's folder is removed


def test_a_failing_lane_fails_the_run(tmp_path):
    result, _, _ = run_layers(tmp_path, ROUTE_STATUS="3")
    assert result.returncode == 1
    assert "output of route" in result.stdout


def test_a_failing_chain_stops_the_lanes(tmp_path):
    result, calls, tmpdir = run_layers(tmp_path, CHAIN_STATUS="2")
    assert result.returncode == 2
    assert calls[-1] == "stopped" and "end other-pythons" not in calls
    assert not any(c.startswith(("start route", "start portability")) for c in calls)
    # what the stopped lane printed until then is shown after the chain's output
    # (and after it whatever the lane's shell says of a child the signal ended)
    out = result.stdout.splitlines()
    assert out[0] == "output of lint unit load release nbgrader book-clean"
    assert out[1:3] == ["=== other-pythons.log: beside the chain ===", "output of other-pythons"]
    assert not tmpdir.exists()
