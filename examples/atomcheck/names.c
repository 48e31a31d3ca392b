/* Readable names of threads, variables, locks and event kinds; small string helpers. */
#include "atomcheck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

const char *atc_name(const atc_run *run, int space, uint64_t key, char *buf, size_t size) {
  if (space == ATOM_SPACE_LOC) return atc_loc_name(run, key);
  const char *name = NULL;
  if (run->session) name = atom_get_name(run->session, space, key);
  if (!name && run->reader) name = atom_trace_reader_name(run->reader, space, key);
  if (name) return name;
  snprintf(buf, size, "0x%" PRIx64, key);
  return buf;
}

const char *atc_loc_name(const atc_run *run, uint64_t loc) {
  return run->session ? atom_get_name(run->session, ATOM_SPACE_LOC, loc) : NULL;
}

const char *atc_plural(uint64_t n) { return n == 1 ? "" : "s"; }

char *atc_strdup_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}
