#!/bin/sh
# Install into a temporary prefix, build examples/embed against it with nothing but
# `pkg-config --cflags --libs atomicity`, run it and check its output.
# usage: install_and_embed.sh BUILDDIR SRCDIR CC [SANITIZERS]
set -eu
build=$1 src=$2 cc=$3 sanitize=${4:-none}
san=""
[ "$sanitize" = none ] || san="-fsanitize=$sanitize"
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
# (not --no-rebuild: `meson test` builds only what tests depend on, and this installs all)
meson install -C "$build" --destdir "$dest" --quiet >/dev/null
pc=$(find "$dest" -name atomicity.pc | head -n 1)
[ -n "$pc" ] || { echo "atomicity.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest"
flags=$(pkg-config --cflags --libs atomicity)
echo "pkg-config: $flags"
"$cc" $san -o "$dest/embed" "$src/examples/embed/embed.c" $flags
libdir=$(dirname "$(find "$dest" -name 'libatomicity.so.1' | head -n 1)")
[ -f "$dest$(pkg-config --variable=includedir atomicity | sed "s|^$dest||")/atomicity/checker.h" ] ||
  { echo "atomicity/checker.h not installed"; exit 1; }
status=0
out=$(LD_LIBRARY_PATH="$libdir" "$dest/embed") || status=$?
echo "$out"
[ "$status" -eq 1 ] || { echo "embed exited $status, expected 1 (one violation)"; exit 1; }
echo "$out" | grep -q '^aerodrome conflict-cycle at event 5:' || { echo "unexpected report"; exit 1; }
echo "$out" | grep -q '^1 violation(s)$' || { echo "unexpected count"; exit 1; }
echo "install+embed: ok"
