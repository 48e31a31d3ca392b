#!/bin/sh
# Runs a program and passes only when it exits with the expected status, prints exactly the
# expected text on stdout and nothing on stderr (a failure at setup cannot pass for a result).
# usage: expect_output.sh STATUS EXPECTED_STDOUT_FILE PROGRAM [ARGS...]
set -u
want_status=$1 expected=$2
shift 2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
status=0
"$@" >"$out" 2>"$err" || status=$?
ok=1
if [ "$status" -ne "$want_status" ]; then
  echo "$1 exited $status, expected $want_status"
  ok=0
fi
if ! diff -u "$expected" "$out"; then
  echo "$1: stdout differs from $expected (diff above: - expected, + printed)"
  ok=0
fi
if [ -s "$err" ]; then
  echo "$1 wrote on stderr:"
  cat "$err"
  ok=0
fi
[ "$ok" -eq 1 ] && echo "$1: exit status $status and output as expected"
[ "$ok" -eq 1 ]
