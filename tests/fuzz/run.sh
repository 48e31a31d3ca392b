#!/bin/sh
# Run every libFuzzer target for SECONDS each, starting from the checked-in seeds (copied, so
# the repository is not written to). Fails on any finding (crash, leak, sanitizer report).
# usage: tests/fuzz/run.sh BUILDDIR [SECONDS]    (BUILDDIR configured with -Dfuzzing=true)
set -eu
build=$1 seconds=${2:-60}
# every sanitizer report is a finding: stop there and keep the input
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
src=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in std-reader:std atb-reader:atb push:push args:args callback:callback; do
  name=${target%%:*} seeds=${target#*:}
  mkdir -p "$work/$name" "$work/$name-artifacts"
  cp "$src/seeds/$seeds/"* "$work/$name/"
  echo "== fuzz-$name for ${seconds}s"
  # -entropic=0: the entropic schedule spends most of its time on bookkeeping once the
  # checkers yield tens of thousands of features.
  if ! "$build/tests/fuzz/fuzz-$name" -max_total_time="$seconds" -print_final_stats=1 -entropic=0 \
      -artifact_prefix="$work/$name-artifacts/" -rss_limit_mb=4096 "$work/$name" \
      > "$work/$name.log" 2>&1; then
    echo "fuzz-$name FOUND A PROBLEM:"
    tail -n 60 "$work/$name.log"
    for a in "$work/$name-artifacts/"*; do [ -f "$a" ] && { echo "input (base64):"; base64 "$a"; }; done
    status=1
  fi
  grep -E 'stat::(number_of_executed_units|average_exec_per_sec)|DONE' "$work/$name.log" | tail -n 3
done
exit $status
