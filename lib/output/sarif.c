/* The sarif output (to be written). */
#include "output/out.h"

int atom__output_sarif(atom__out *o, const struct atom_session *s, const atom_output_options *opt) {
  (void)o;
  (void)s;
  (void)opt;
  return 0;
}
