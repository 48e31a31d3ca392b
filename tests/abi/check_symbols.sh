#!/bin/sh
# The shared library exports exactly the symbols the version script (lib/atomicity.sym) lists,
# each in the version node that lists it (STYLE practice 3): a symbol added without being
# listed, a listed one that is gone, or one that moved to another node (an ABI break for
# programs linked against the old node) fails. The script lists names only (no wildcards).
# usage: check_symbols.sh LIBRARY VERSION-SCRIPT
set -eu
lib=$1 script=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "name@@NODE" for every name in a global: section of the script.
awk '
  { text = text $0 "\n" }
  END {
    gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, " ", text)   # C comments
    gsub(/[{};:]/, " & ", text)
    n = split(text, tok, /[ \t\n]+/)
    node = ""; depth = 0; section = ""
    for (i = 1; i <= n; i++) {
      t = tok[i]
      if (t == "") continue
      if (t == "{") { depth++; continue }
      if (t == "}") { depth--; node = ""; section = ""; continue }
      if (depth == 0) { if (t != ";") node = t; continue }
      if (t == ":") continue
      if (tok[i + 1] == ":" || tok[i + 2] == ":") {
        if (t == "global" || t == "local") { section = t; continue }
      }
      if (t == ";") continue
      if (section == "global") {
        if (t ~ /[*?\[]/) { print "WILDCARD " t; continue }
        print t "@@" node
      }
    }
  }' "$script" | sort > "$tmp/expected"
if grep -q '^WILDCARD' "$tmp/expected"; then
  echo "$script: list symbols by name, not by pattern:"; grep '^WILDCARD' "$tmp/expected"; exit 1
fi
[ -s "$tmp/expected" ] || { echo "$script: no symbols found"; exit 1; }

nm -D --with-symbol-versions --defined-only "$lib" | awk '$2 ~ /[TDBRtdbrVvWwi]/ {print $3}' |
  grep -v '^ATOMICITY_' | sort > "$tmp/actual"
if ! cmp -s "$tmp/expected" "$tmp/actual"; then
  echo "exported symbols (name@@version) differ from $script (< listed, > exported):"
  diff "$tmp/expected" "$tmp/actual" || true
  exit 1
fi
echo "symbols: $(wc -l < "$tmp/actual") exported, each in the node $script lists it in"
sed 's/@@.*//' "$tmp/actual" | while read -r s; do
  case $s in atom_*) ;; *) echo "symbol without the atom_ prefix: $s"; exit 1 ;; esac
done
