#!/bin/sh
# Install into a temporary prefix and use only what was installed:
# - build examples/embed with nothing but `pkg-config --cflags --libs atomicity`, run it and
#   check its output;
# - build the out-of-tree checker of examples/plugin with its own Makefile (pkg-config, the
#   installed <atomicity/sys/checker.h>), run it on its demo trace and compare the exact output
#   with examples/plugin/demo.expected;
# - when a clang is given, build a tsan-rt demo with nothing but
#   `pkg-config --cflags --libs atomicity-rt` and run it with only the installed libdir on
#   LD_LIBRARY_PATH (the installed .pc, not the build tree's -uninstalled one).
# (The compiler runs without the LD_LIBRARY_PATH that `meson test` sets to the build tree: a
# linker looks there for a library's own dependencies, which would hide a .pc that lacks one.)
# usage: install_and_embed.sh BUILDDIR SRCDIR CC [SANITIZERS [CLANG]]
set -eu
build=$1 src=$2 cc=$3 sanitize=${4:-none} clang=${5:-}
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
env -u LD_LIBRARY_PATH "$cc" $san -o "$dest/embed" "$src/examples/embed/embed.c" $flags
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

# The plugin example, built in a copy of its directory as a third party would.
command -v make >/dev/null || { echo "make is needed to build examples/plugin"; exit 1; }
[ -f "$dest$(pkg-config --variable=includedir atomicity | sed "s|^$dest||")/atomicity/sys/checker.h" ] ||
  { echo "atomicity/sys/checker.h not installed"; exit 1; }
cp -R "$src/examples/plugin" "$dest/plugin"
rm -f "$dest/plugin/overwrite-demo" "$dest/plugin/demo.out"
env -u LD_LIBRARY_PATH make -s -C "$dest/plugin" CC="$cc" CFLAGS="-O1 -g -Wall -Wextra -Werror $san" \
  overwrite-demo
status=0
(cd "$dest/plugin" && LD_LIBRARY_PATH="$libdir" ./overwrite-demo demo.std > demo.out) || status=$?
[ "$status" -eq 1 ] || { echo "overwrite-demo exited $status, expected 1 (reports)"; exit 1; }
diff -u "$src/examples/plugin/demo.expected" "$dest/plugin/demo.out" ||
  { echo "overwrite-demo's output differs from examples/plugin/demo.expected"; exit 1; }
out=$(cd "$dest/plugin" && LD_LIBRARY_PATH="$libdir" ./overwrite-demo demo.std writers=txn) || true
[ "$(echo "$out" | tail -n 1)" = "overwrite: 1 violation (1 occurrence)" ] ||
  { echo "writers=txn: unexpected output:"; echo "$out"; exit 1; }
status=0
out=$(cd "$dest/plugin" && LD_LIBRARY_PATH="$libdir" ./overwrite-demo demo.std writers=some 2>&1) ||
  status=$?
[ "$status" -eq 2 ] && [ "$out" = 'overwrite-demo: overwrite: writers must be all or txn, not "some"' ] ||
  { echo "a bad argument: exit $status, output: $out"; exit 1; }
echo "install+plugin: ok"

[ -n "$clang" ] || { echo "install+tsan-rt: skipped (no clang, or the runtime is not built)"; exit 0; }
[ -f "$(dirname "$pc")/atomicity-rt.pc" ] || { echo "atomicity-rt.pc was not installed"; exit 1; }
flags=$(pkg-config --cflags --libs atomicity-rt)
echo "pkg-config: $flags"
env -u LD_LIBRARY_PATH "$clang" -O1 -o "$dest/counter" "$src/examples/tsan-rt/demo/counter.c" $flags
status=0
out=$(LD_LIBRARY_PATH="$libdir" ATOMICITY_OPTIONS="atomic=increment exitcode=66" "$dest/counter" 2>&1) ||
  status=$?
echo "$out"
[ "$status" -eq 66 ] || { echo "counter exited $status, expected 66 (a violation)"; exit 1; }
echo "$out" | grep -q 'aerodrome: 1 violation' || { echo "no aerodrome report"; exit 1; }
echo "install+tsan-rt: ok"
