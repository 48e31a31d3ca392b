#include "support/assert.h"

#if defined(ATOM_ASSERTIONS) && ATOM_ASSERTIONS

#include <stdio.h>

/* Debug builds only (see assert.h): a broken invariant means the library's own state is
 * corrupt, and stopping at once, where it was found, is what a debug build is for. */
void atom__assert_fail(const char *file, int line, const char *cond) {
  fprintf(stderr, "libatomicity: %s:%d: internal invariant failed: %s\n", file, line, cond);
  fflush(stderr);
  __builtin_trap();
}

#else

/* ISO C wants at least one declaration in a translation unit. */
typedef int atom__assert_unused;

#endif
