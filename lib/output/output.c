/* atom_session_write(), atom_report_write(), atom_output_options: the dispatch to one
 * renderer per format (lib/output/FORMAT.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/output.h"
#include "core/error.h"
#include "output/out.h"

ATOM_API int atom_output_options_init(atom_output_options *o, unsigned version) {
  if (!o || version != ATOM_OUTPUT_OPTIONS_VERSION)
    return atom__error(ATOM_EINVAL, "atom_output_options_init: NULL or unknown version %u",
                       version);
  memset(o, 0, sizeof *o);
  o->version = version;
  o->format = ATOM_FORMAT_TEXT;
  o->seconds = -1;
  return 0;
}

ATOM_API int atom_write_file(const char *data, size_t len, void *payload) {
  return fwrite(data, 1, len, (FILE *)payload) == len ? 0 : -1;
}

int atom__output_shown(const atom_output_options *opt, const atom_report *r) {
  if (opt->suppressions && atom_suppressions_match(opt->suppressions, r)) return 0;
  if (opt->n_baseline) {
    uint64_t f = atom_report_fingerprint(r);
    for (size_t i = 0; i < opt->n_baseline; i++)
      if (opt->baseline[i] == f) return 0;
  }
  return 1;
}

ATOM_API int atom_session_write(const struct atom_session *s, const atom_output_options *opt,
                                atom_write_fn fn, void *payload) {
  if (!s || !opt || !fn || opt->version != ATOM_OUTPUT_OPTIONS_VERSION ||
      (opt->n_baseline && !opt->baseline))
    return atom__error(ATOM_EINVAL, "atom_session_write: NULL argument or bad options version");
  int (*render)(atom__out *, const struct atom_session *, const atom_output_options *);
  switch (opt->format) {
  case ATOM_FORMAT_TEXT: render = atom__output_text; break;
  case ATOM_FORMAT_JSON: render = atom__output_json; break;
  case ATOM_FORMAT_SARIF: render = atom__output_sarif; break;
  case ATOM_FORMAT_HTML: render = atom__output_html; break;
  case ATOM_FORMAT_DOT: render = atom__output_dot; break;
  default:
    return atom__error(ATOM_EINVAL, "atom_session_write: unknown format %u",
                       (unsigned)opt->format);
  }
  atom__out o;
  atom__out_init(&o, fn, payload);
  int err = render(&o, s, opt);
  int io = atom__out_close(&o);
  if (err) return atom__error(err, "atom_session_write: out of memory");
  if (io) return atom__error(io, "atom_session_write: the write callback failed");
  return 0;
}
