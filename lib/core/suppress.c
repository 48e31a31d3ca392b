/* Suppression rules (to be written). */
#include "atomicity/output.h"
#include "core/error.h"

ATOM_API int atom_suppressions_parse(atom_suppressions **out, const char *text, size_t len) {
  (void)text;
  (void)len;
  if (out) *out = NULL;
  return atom__error(ATOM_EINVAL, "atom_suppressions_parse: not written yet");
}

ATOM_API void atom_suppressions_free(atom_suppressions *sp) { (void)sp; }

ATOM_API int atom_suppressions_match(const atom_suppressions *sp, const atom_report *r) {
  (void)sp;
  (void)r;
  return 0;
}
