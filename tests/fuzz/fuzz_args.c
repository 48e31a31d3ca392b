/* Fuzz target: checker specs and argument strings ("name:key=value,..."). A bad spec must be
 * refused with ATOM_ENOTFOUND or ATOM_EINVAL and a message; a good one must give a usable
 * checker. */
#include <atomicity.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *spec = malloc(size + 1);
  if (!spec) return 0;
  memcpy(spec, data, size);
  spec[size] = '\0';
  atom_session *s = NULL;
  if (atom_session_new(&s, NULL) == 0) {
    int rc = atom_session_attach(s, spec);
    if (rc != 0 && rc != ATOM_ENOTFOUND && rc != ATOM_EINVAL && rc != ATOM_ENOMEM)
      __builtin_trap();
    if (rc != 0 && atom_last_error()[0] == '\0') __builtin_trap();
    /* the same string as the arguments of every built-in checker */
    for (size_t i = 0; atom_checker_builtin(i); i++) {
      int r2 = atom_session_attach_checker(s, atom_checker_builtin(i), spec);
      if (r2 != 0 && r2 != ATOM_EINVAL && r2 != ATOM_ENOMEM) __builtin_trap();
    }
    (void)atom_begin(s, 1, 0);
    (void)atom_write(s, 1, 1, 0);
    (void)atom_read(s, 2, 1, 0);
    (void)atom_end(s, 1, 0);
    (void)atom_finish(s);
  }
  atom_session_free(s);
  free(spec);
  return 0;
}
