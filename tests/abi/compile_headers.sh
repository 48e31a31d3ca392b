#!/bin/sh
# The public headers compile alone, pedantically, as C99 and as C++ (STYLE practice 11).
# usage: compile_headers.sh SRCDIR CC CXX
set -eu
src=$1 cc=$2 cxx=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for h in atomicity.h atomicity/common.h atomicity/version.h atomicity/error.h atomicity/event.h \
         atomicity/report.h atomicity/session.h atomicity/checker.h atomicity/sys/checker.h \
         atomicity/trace.h atomicity/location.h atomicity/output.h; do
  printf '#include <%s>\n#include <%s>\n' "$h" "$h" > "$tmp/one.c"
  "$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$src/include" -c "$tmp/one.c" -o "$tmp/one.o"
  cp "$tmp/one.c" "$tmp/one.cpp"
  "$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$src/include" -c "$tmp/one.cpp" -o "$tmp/one.o"
  echo "ok $h (C99, C++11)"
done
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$src/include" -c "$src/tests/abi/headers.c" -o "$tmp/h.o"
"$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$src/include" -c "$src/tests/abi/headers.cpp" -o "$tmp/h.o"
echo "headers: all compile"
