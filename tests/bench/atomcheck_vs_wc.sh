#!/bin/sh
# atomcheck against `wc -l` on one synthetic 2PL trace (the targets of doc/performance.md):
#   atomcheck -c aerodrome  within 3x of  wc -l
#   atomcheck -c velodrome  within 3x of  atomcheck -c aerodrome
#
# usage: atomcheck_vs_wc.sh ATOMCHECK GENTRACE
# environment: ATOM_BENCH_EVENTS (default 1e7), ATOM_BENCH_RUNS (best of, default 3),
#              ATOM_BENCH_STRICT=1 to exit 1 when a target is missed,
#              ATOM_BENCH_KEEP=DIR to keep the trace in DIR.
set -eu

if [ $# -ne 2 ]; then
  echo "usage: $0 ATOMCHECK GENTRACE" >&2
  exit 2
fi
ATOMCHECK=$1
GENTRACE=$2
EVENTS=${ATOM_BENCH_EVENTS:-1e7}
RUNS=${ATOM_BENCH_RUNS:-3}

if [ -n "${ATOM_BENCH_KEEP:-}" ]; then
  dir=$ATOM_BENCH_KEEP
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/atomcheck-bench.XXXXXX")
  trap 'rm -rf "$dir"' EXIT INT TERM
fi
trace=$dir/trace-2pl.std

# Nanoseconds since the epoch (GNU date).
now_ns() { date +%s%N; }

# best_of NAME EXPECTED_STATUS CMD...: run CMD $RUNS times (output discarded), print the best
# wall time in seconds; complain if the exit status is not the expected one.
best_of() {
  name=$1 expect=$2
  shift 2
  best=
  i=0
  while [ "$i" -lt "$RUNS" ]; do
    t0=$(now_ns)
    set +e
    "$@" >/dev/null 2>"$dir/stderr"
    st=$?
    set -e
    t1=$(now_ns)
    if [ "$st" -ne "$expect" ]; then
      echo "# $name: exit status $st (expected $expect):" >&2
      head -5 "$dir/stderr" >&2
    fi
    ns=$((t1 - t0))
    if [ -z "$best" ] || [ "$ns" -lt "$best" ]; then best=$ns; fi
    i=$((i + 1))
  done
  awk -v ns="$best" 'BEGIN { printf "%.3f\n", ns / 1e9 }'
}

echo "# generating $EVENTS events (2pl, 4 threads, 128 vars, 8 locks, txn-len 8)"
"$GENTRACE" --events "$EVENTS" --threads 4 --vars 128 --locks 8 --txn-len 8 --kind 2pl \
  --seed 1 -o "$trace" 2>"$dir/gentrace.log"
lines=$(grep -vc '^#' "$trace")
bytes=$(wc -c <"$trace")
cat "$trace" >/dev/null # warm the page cache: every timing below reads from memory

t_wc=$(best_of "wc -l" 0 wc -l "$trace")
t_cat=$(best_of "cat" 0 cat "$trace")
t_null=$(best_of "atomcheck -c null" 0 "$ATOMCHECK" -c null "$trace")
t_aero=$(best_of "atomcheck -c aerodrome" 0 "$ATOMCHECK" -c aerodrome "$trace")
t_velo=$(best_of "atomcheck -c velodrome" 0 "$ATOMCHECK" -c velodrome "$trace")

awk -v lines="$lines" -v bytes="$bytes" -v wc="$t_wc" -v cat="$t_cat" -v null="$t_null" \
    -v aero="$t_aero" -v velo="$t_velo" -v runs="$RUNS" -v strict="${ATOM_BENCH_STRICT:-0}" '
function row(name, t) {
  printf "%-28s %8.3f s %10.2f Mev/s %8.1f MB/s\n", name, t, lines / t / 1e6, bytes / t / 1e6
}
BEGIN {
  printf "# %d events, %d bytes; best of %d runs, warm page cache\n", lines, bytes, runs
  row("wc -l", wc); row("cat > /dev/null", cat); row("atomcheck -c null", null)
  row("atomcheck -c aerodrome", aero); row("atomcheck -c velodrome", velo)
  r1 = aero / wc; r2 = velo / aero
  ok1 = r1 <= 3; ok2 = r2 <= 3
  printf "aerodrome / wc -l      = %7.2f  (target <= 3: %s)\n", r1, ok1 ? "met" : "NOT MET"
  printf "velodrome / aerodrome  = %7.2f  (target <= 3: %s)\n", r2, ok2 ? "met" : "NOT MET"
  printf "aerodrome / null       = %7.2f  (checker cost over reading and dispatch)\n", aero / null
  exit (strict == 1 && !(ok1 && ok2)) ? 1 : 0
}'
