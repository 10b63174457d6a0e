#!/usr/bin/env bash
# make test's layers (the Makefile's `test` calls this with TMPDIR, the run's own folder).
#
# A chain of layers in order, and beside it two lanes at the lowest CPU priority (nice 19):
# the other Pythons from the start, and the route without make once book-clean has written
# the execution cache that the route's clone is seeded with. The chain keeps two cores
# about 90 % busy; a lane takes what it leaves idle, and almost nothing more (a nice-19
# process gets about 1.5 % of a core that a nice-0 process wants). A lane's output is
# printed whole once the chain has ended and the lane with it; if the chain fails, the
# lanes are stopped with SIGTERM (a background job ignores SIGINT; tests/test_pythons.py
# turns SIGTERM into an interrupt, so that pytest tears its fixtures down, jobs and all).
set -uo pipefail
make=(${MAKE:-make} --no-print-directory)
pids=() logs=()

lane() {  # lane TARGET: `make TARGET` at nice 19, in a session of its own, into a log
  mkdir -p "$TMPDIR/$1"
  TMPDIR="$TMPDIR/$1" setsid nice -n 19 "${make[@]}" "$1" >"$TMPDIR/$1.log" 2>&1 &
  pids+=("$!") logs+=("$TMPDIR/$1.log")
}

stop() {
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
  wait
  rm -rf "$TMPDIR"
}
trap stop EXIT

lane other-pythons
"${make[@]}" lint unit load release nbgrader book-clean || exit
lane route
"${make[@]}" portability side publishing pdf-test browser || exit

status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || status=1
  echo "=== ${logs[$i]##*/}: beside the chain, at nice 19 ==="
  cat "${logs[$i]}"
done
exit "$status"
