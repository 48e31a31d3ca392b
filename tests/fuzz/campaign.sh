#!/bin/sh
# The long adversarial run of the reliability suite (not part of the default test run): every
# libFuzzer target, 30 CPU-minutes in total, split by how much each target needs. Each target
# runs as one process, one after another, so wall-clock time equals CPU time.
# usage: tests/fuzz/campaign.sh [BUILDDIR]    (default build-fuzz; configured as in
#        doc/fuzzing.md with -Dfuzzing=true -Db_sanitize=address,undefined)
# Fails on any finding (crash, leak, sanitizer report, broken invariant); prints the
# statistics of each target for doc/fuzzing.md.
set -eu
build=${1:-build-fuzz}
src=$(cd "$(dirname "$0")" && pwd)
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
# target:seeds:seconds -- 1800 s in total. The push and callback targets run every checker on
# each input and are ~10x slower per execution: they get the larger shares; the two readers
# share what the STD reader had alone.
for spec in std-reader:std:180 atb-reader:atb:120 push:push:600 args:args:300 \
    callback:callback:600; do
  name=${spec%%:*} rest=${spec#*:}
  seeds=${rest%%:*} seconds=${rest#*:}
  [ -x "$build/tests/fuzz/fuzz-$name" ] || { echo "missing $build/tests/fuzz/fuzz-$name"; exit 2; }
  mkdir -p "$work/$name" "$work/$name-artifacts"
  cp "$src/seeds/$seeds/"* "$work/$name/"
  echo "== fuzz-$name for ${seconds}s"
  if ! "$build/tests/fuzz/fuzz-$name" -max_total_time="$seconds" -print_final_stats=1 \
      -entropic=0 -artifact_prefix="$work/$name-artifacts/" -rss_limit_mb=4096 "$work/$name" \
      > "$work/$name.log" 2>&1; then
    echo "fuzz-$name FOUND A PROBLEM:"
    tail -n 60 "$work/$name.log"
    for a in "$work/$name-artifacts/"*; do [ -f "$a" ] && { echo "input (base64):"; base64 "$a"; }; done
    status=1
  fi
  grep -E 'stat::(number_of_executed_units|average_exec_per_sec)|cov: |DONE' "$work/$name.log" | tail -n 4
done
exit $status
