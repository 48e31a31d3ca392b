#!/bin/sh
# The shared library exports exactly the symbols listed in tests/abi/symbols.txt (STYLE
# practice 3). After a deliberate API addition, regenerate the list with:
#   nm -D --defined-only build/lib/libatomicity.so.1 | awk '$2 ~ /[TDBR]/ {print $3}' | sort
# usage: check_symbols.sh LIBRARY LIST
set -eu
lib=$1 list=$2
actual=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBRtdbr]/ {print $3}' | sed 's/@.*//' | sort -u)
expected=$(grep -v '^#' "$list" | sort -u)
if [ "$actual" != "$expected" ]; then
  echo "exported symbols differ from $list:"
  printf '%s\n' "$expected" > "${TMPDIR:-/tmp}/atom-expected.$$"
  printf '%s\n' "$actual" | diff "${TMPDIR:-/tmp}/atom-expected.$$" - || true
  rm -f "${TMPDIR:-/tmp}/atom-expected.$$"
  exit 1
fi
echo "symbols: $(printf '%s\n' "$actual" | wc -l) exported, as listed"
for s in $actual; do
  case $s in atom_*) ;; *) echo "symbol without the atom_ prefix: $s"; exit 1 ;; esac
done
