#!/usr/bin/env bash
# make test's layers (the Makefile's `test` calls this with TMPDIR, the run's own folder).
#
# A chain of layers in order, and beside it three lanes. The other Pythons are two lanes: the
# older ones from the start (their venvs beside the main venv's install, which keeps one
# core busy), then beside unit, which alone leaves nearly half of two cores idle (231 CPU
# seconds in 213 s, cold: its sandbox tests wait on time limits), and the newest
# once load is done, beside release and nbgrader (78-88 % busy in a CI run). As one lane
# beside unit, both Pythons had stretched it to 450 s in a CI run. The route without make
# starts once book-clean has written the execution cache that the route's clone is seeded
# with. The lanes run at the chain's own priority: at a lower one the
# chain would starve them while it keeps both cores busy (a nice-19 process gets about
# 1.5 % of a core that a nice-0 one wants), and their own waits (a kernel's start, the time
# limits of the lincls tests) would be hit; the chain's waits are generous for a machine
# that is busy with other work (tests/test_load.py). A lane's output is printed whole once
# the chain has ended and the lane with it; if the chain fails, the lanes are stopped with
# SIGTERM (a background job ignores SIGINT; tests/test_pythons.py turns SIGTERM into an
# interrupt, so that pytest tears its fixtures down, jobs and all), and what they printed
# until then is shown.
set -uo pipefail
make=(${MAKE:-make} --no-print-directory)
pids=() logs=()

lane() {  # lane TARGET: `make TARGET` in the background, in a session of its own, into a log
  mkdir -p "$TMPDIR/$1"
  TMPDIR="$TMPDIR/$1" setsid "${make[@]}" "$1" >"$TMPDIR/$1.log" 2>&1 &
  pids+=("$!") logs+=("$TMPDIR/$1.log")
}

show() {  # wait for each lane and print its log; status 1 if one failed
  local status=0 i
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    echo "=== ${logs[$i]##*/}: beside the chain ==="
    cat "${logs[$i]}"
  done
  pids=()
  return "$status"
}

stop() {  # on any exit: stop the lanes still running, show what they printed, clean up
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
  show
  rm -rf "$TMPDIR"
}
trap stop EXIT

# the older Pythons' lane first: it makes their venvs beside the main venv's install (dev,
# one core busy), and runs their tests once MAIN_VENV_READY exists
export MAIN_VENV_READY="$TMPDIR/main-venv-ready"
lane older-pythons-lane
"${make[@]}" dev || exit
touch "$MAIN_VENV_READY"
"${make[@]}" lint unit load || exit
lane newest-python
"${make[@]}" release nbgrader book-clean || exit
lane route
"${make[@]}" portability side outputs browser || exit
show
