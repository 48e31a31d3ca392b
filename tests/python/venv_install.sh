#!/bin/sh
# The Python binding as users install it, offline.
#  (a) `pip install` of bindings/python into a fresh venv (no system site packages), with the
#      setuptools and wheel Debian ships (/usr/share/python-wheels); `pip show atomicity` lists
#      it; with neither LD_LIBRARY_PATH nor ATOMICITY_LIBRARY, and PKG_CONFIG_PATH naming the
#      library's .pc file, the venv's python finds the library through pkg-config and checks a
#      corpus trace;
#  (b) (with PREFIX) the copy `meson install` put under PREFIX finds the library through the
#      libdir it recorded, with neither LD_LIBRARY_PATH nor PKG_CONFIG_PATH, and has the
#      metadata pip reads (atomicity-VERSION.dist-info, installer meson).
# Usage: venv_install.sh SOURCE_ROOT PREFIX          (a) and (b) on a `meson install` to PREFIX
#        venv_install.sh SOURCE_ROOT --libdir LIBDIR  (a) only, on a build tree's library
# Exit status 77 (skipped) when /usr/bin/python3 cannot make a venv or Debian's wheels are
# missing; 0 when every check passed.
set -eu
src=$(cd "$1" && pwd)
python=/usr/bin/python3
wheels=/usr/share/python-wheels
if ! [ -x "$python" ] || ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "SKIP: $python cannot make a venv (Debian: python3-venv)"; exit 77
fi
if ! ls "$wheels"/setuptools-*.whl "$wheels"/wheel-*.whl >/dev/null 2>&1; then
  echo "SKIP: no setuptools and wheel in $wheels (Debian: python3-setuptools-whl, python3-wheel-whl)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
trace="$src/tests/corpus/aerodrome-rho2.std"
# Checks the corpus trace, and prints how the library was found.
probe='import sys, atomicity
from atomicity import _lib
reports = atomicity.check_trace(sys.argv[1])
assert [r.event_index for r in reports] == [5], reports
print(_lib.loaded().origin, atomicity.library_path())'

prefix=""
if [ "$2" = --libdir ]; then
  libdir=$(cd "$3" && pwd)
  # A .pc file of the build tree's library, as a prefix install would have.
  mkdir "$tmp/pc"
  printf 'libdir=%s\nName: atomicity\nDescription: test\nVersion: 0\nLibs: -L${libdir} -latomicity\n' \
    "$libdir" >"$tmp/pc/atomicity.pc"
  pcdir="$tmp/pc"
else
  prefix=$(cd "$2" && pwd)
  lib=$(find "$prefix" -name libatomicity.so.1 | head -n 1)
  [ -n "$lib" ] || { echo "FAIL: no libatomicity.so.1 under $prefix"; exit 1; }
  libdir=$(dirname "$lib")
  pcdir="$libdir/pkgconfig"
fi

# (a) pip, from a copy of the package directory (pip builds in place: the copy keeps the
# source tree free of build/ and *.egg-info, and concurrent runs apart).
cp -R "$src/bindings/python" "$tmp/pkg"
rm -rf "$tmp/pkg/build" "$tmp/pkg"/*.egg-info
"$python" -m venv "$tmp/venv"
PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels" PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$tmp/venv/bin/pip" install --quiet "$tmp/pkg"
"$tmp/venv/bin/pip" show atomicity >"$tmp/show" 2>&1 ||
  { cat "$tmp/show"; echo "FAIL: pip show atomicity"; exit 1; }
grep -q '^Name: atomicity$' "$tmp/show" || { cat "$tmp/show"; echo "FAIL: pip show"; exit 1; }
version=$(sed -n 's/^Version: //p' "$tmp/show")
site=$("$tmp/venv/bin/python" -c 'import atomicity, os; print(os.path.dirname(atomicity.__file__))')
case "$site" in "$tmp/venv/"*) ;; *) echo "FAIL: atomicity imported from $site"; exit 1 ;; esac
[ -f "$site/py.typed" ] || { echo "FAIL: py.typed not installed by pip"; exit 1; }
[ ! -e "$site/_installed.py" ] || { echo "FAIL: pip installed a recorded libdir"; exit 1; }
got=$(cd "$tmp" && env -u LD_LIBRARY_PATH -u ATOMICITY_LIBRARY -u PYTHONPATH \
  PKG_CONFIG_PATH="$pcdir" "$tmp/venv/bin/python" -c "$probe" "$trace")
[ "$got" = "pkg-config $libdir/libatomicity.so.1" ] ||
  { echo "FAIL: the venv's atomicity found the library as: $got"; exit 1; }
echo "ok: pip install into a venv (atomicity $version), library through pkg-config"

# (b) meson's copy under the prefix, through the libdir recorded at install.
[ -n "$prefix" ] || exit 0
typed=$(find "$prefix" -path '*/atomicity/py.typed' | head -n 1)
[ -n "$typed" ] || { echo "FAIL: no atomicity/py.typed under $prefix"; exit 1; }
msite=$(dirname "$(dirname "$typed")")
[ -f "$msite/atomicity/_installed.py" ] || { echo "FAIL: meson installed no _installed.py"; exit 1; }
got=$(cd "$tmp" && env -u LD_LIBRARY_PATH -u ATOMICITY_LIBRARY -u PKG_CONFIG_PATH \
  PKG_CONFIG_LIBDIR="$tmp/nowhere" PYTHONPATH="$msite" "$python" -c "$probe" "$trace")
[ "$got" = "install $libdir/libatomicity.so.1" ] ||
  { echo "FAIL: the installed atomicity found the library as: $got"; exit 1; }
echo "ok: meson install under $prefix, library through the recorded libdir"
# ... with the metadata pip reads (pip show, pip uninstall): a dist-info directory naming meson.
meta=$(cd "$tmp" && env PYTHONPATH="$msite" "$python" -c 'import importlib.metadata as m
d = m.distribution("atomicity")
print(d.version, d.read_text("INSTALLER").strip(), sorted(str(f) for f in d.files)[0])')
[ "$meta" = "$version meson atomicity-$version.dist-info/INSTALLER" ] ||
  { echo "FAIL: the metadata of meson's install reads: $meta"; exit 1; }
echo "ok: meson install's metadata: atomicity $version, installed by meson"
