/* atom_session_write(), atom_report_write(), atom_output_options: the dispatch to one
 * renderer per format (lib/output/FORMAT.c), and what every renderer shares: the checkers
 * with their shown and hidden reports, names, described pieces of reports. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/output.h"
#include "atomicity/session.h"
#include "core/error.h"
#include "core/session.h"
#include "output/out.h"

/* The size of atom_output_options as version v laid it out (0: unknown): a caller built
 * against an older header has only that much, so nothing beyond it is read or written. */
static size_t options_size(uint32_t v) {
  switch (v) {
  case 1: return offsetof(atom_output_options, cut_short);
  case 2: return sizeof(atom_output_options);
  default: return 0;
  }
}

ATOM_API int atom_output_options_init(atom_output_options *o, unsigned version) {
  size_t size = options_size(version);
  if (!o || !size)
    return atom__error(ATOM_EINVAL, "atom_output_options_init: NULL or unknown version %u",
                       version);
  memset(o, 0, size);
  o->version = version;
  o->format = ATOM_FORMAT_TEXT;
  o->seconds = -1;
  return 0;
}

ATOM_API int atom_write_file(const char *data, size_t len, void *payload) {
  return fwrite(data, 1, len, (FILE *)payload) == len ? 0 : -1;
}

static int in_baseline(const atom_output_options *opt, const atom_report *r) {
  if (!opt->n_baseline) return 0;
  uint64_t f = atom_report_fingerprint(r);
  for (size_t i = 0; i < opt->n_baseline; i++)
    if (opt->baseline[i] == f) return 1;
  return 0;
}

int atom__output_shown(const atom_output_options *opt, const atom_report *r) {
  if (opt->suppressions && atom_suppressions_match(opt->suppressions, r)) return 0;
  return !in_baseline(opt, r);
}

int atom__out_partial(const atom__out_checker *c) {
  return c->status.state == ATOM_CHECKER_INCOMPLETE || c->status.state == ATOM_CHECKER_DISABLED;
}

const char *atom__out_state_name(const atom__out_checker *c) {
  switch (c->status.state) {
  case ATOM_CHECKER_INCOMPLETE: return "INCOMPLETE";
  case ATOM_CHECKER_DISABLED: return "DISABLED";
  default: return NULL;
  }
}

const char *atom__out_plural(uint64_t n) { return n == 1 ? "" : "s"; }

const char *atom__out_evidence(const atom_report *r) {
  const char *name = atom_evidence_name(atom_report_evidence(r));
  return name ? name : "observed";
}


void atom__out_key(atom__out *o, const struct atom_session *s, int space, uint64_t key,
                   void (*put)(atom__out *, const char *)) {
  const char *name = atom_get_name(s, space, key);
  char buf[32];
  if (!name) {
    /* the notation of the core formatter (format.c) */
    if (space == ATOM_SPACE_THREAD) snprintf(buf, sizeof buf, "T%llu", (unsigned long long)key);
    else snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)key);
    name = buf;
  }
  put(o, name);
}

char *atom__out_describe(int (*f)(char *, size_t, const atom_report *, size_t),
                         const atom_report *r, size_t i) {
  char small[256];
  int n = f(small, sizeof small, r, i);
  if (n < 0) n = 0, small[0] = '\0';
  char *s = malloc((size_t)n + 1);
  if (!s) return NULL;
  if ((size_t)n < sizeof small) memcpy(s, small, (size_t)n + 1);
  else f(s, (size_t)n + 1, r, i);
  return s;
}

static int describe_whole(char *buf, size_t size, const atom_report *r, size_t i) {
  (void)i;
  return atom_report_describe(buf, size, r);
}

char *atom__out_message(const atom_report *r) { return atom__out_describe(describe_whole, r, 0); }

void atom__out_run_free(atom__out_run *run) {
  for (size_t i = 0; i < run->n_checkers; i++) free(run->checkers[i].shown);
  free(run->checkers);
  run->checkers = NULL;
  run->n_checkers = 0;
}

int atom__out_collect(atom__out_run *run, const struct atom_session *s,
                      const atom_output_options *opt) {
  memset(run, 0, sizeof *run);
  run->session = s;
  run->opt = opt;
  run->tool = opt->tool ? opt->tool : "libatomicity";
  atom_session_stats st = {.version = ATOM_SESSION_STATS_VERSION};
  atom_session_stats_get(s, &st);
  run->events = opt->events ? opt->events : st.events;
  run->rejected = opt->rejected ? opt->rejected : st.rejected;
  size_t n = atom_checker_count(s), n_reports = atom_report_count(s);
  run->checkers = calloc(n ? n : 1, sizeof *run->checkers);
  if (!run->checkers) return ATOM_ENOMEM;
  run->n_checkers = n;
  for (size_t i = 0; i < n; i++) {
    atom__out_checker *c = &run->checkers[i];
    c->name = atom_checker_name(s, i);
    if (!c->name) c->name = "?";
    c->label = atom__checker_label(s, i);
    if (!c->label) c->label = c->name;
    c->stats.version = ATOM_CHECKER_STATS_VERSION;
    c->have_stats = atom_checker_stats_get(s, i, &c->stats) == 0;
    c->status.version = ATOM_CHECKER_STATUS_VERSION;
    if (atom_checker_status_get(s, i, &c->status) != 0) c->status.state = ATOM_CHECKER_COMPLETE;
  }
  for (size_t k = 0; k < n_reports; k++) {
    size_t i = atom_report_checker_index(atom_report_get(s, k));
    if (i < n) run->checkers[i].n_stored++;
  }
  for (size_t i = 0; i < n; i++) {
    atom__out_checker *c = &run->checkers[i];
    c->shown = calloc(c->n_stored ? c->n_stored : 1, sizeof *c->shown);
    if (!c->shown) {
      atom__out_run_free(run);
      return ATOM_ENOMEM;
    }
  }
  uint64_t *hidden_occ = calloc(n ? n : 1, sizeof *hidden_occ);
  if (!hidden_occ) {
    atom__out_run_free(run);
    return ATOM_ENOMEM;
  }
  for (size_t k = 0; k < n_reports; k++) {
    const atom_report *r = atom_report_get(s, k);
    size_t i = atom_report_checker_index(r);
    if (i >= n) continue;
    atom__out_checker *c = &run->checkers[i];
    uint64_t occ = atom_report_occurrences(r);
    if (opt->suppressions && atom_suppressions_match(opt->suppressions, r)) c->suppressed++;
    else if (in_baseline(opt, r)) c->baselined++;
    else {
      c->shown[c->n_shown++] = r;
      c->occurrences += occ;
      continue;
    }
    hidden_occ[i] += occ;
  }
  for (size_t i = 0; i < n; i++) {
    atom__out_checker *c = &run->checkers[i];
    /* Reports beyond the session's caps were counted, not stored: the checker's own figures
     * give the true totals. */
    if (c->have_stats && c->stats.reports > c->n_stored) {
      c->dropped = (size_t)(c->stats.reports - c->n_stored);
      if (c->stats.occurrences >= hidden_occ[i]) c->occurrences = c->stats.occurrences - hidden_occ[i];
    }
    c->n_printed = opt->max_reports && opt->max_reports < c->n_shown ? opt->max_reports
                                                                      : c->n_shown;
    if (opt->flags & ATOM_OUTPUT_NO_REPORTS) c->n_printed = 0;
    run->n_shown += c->n_shown;
  }
  free(hidden_occ);
  return 0;
}

typedef int (*renderer)(atom__out *, const struct atom_session *, const atom_output_options *);

/* Copy the caller's options, of any known version, into a whole current struct (the fields
 * of later versions keep their defaults), so that the renderers may read every field.
 * @return 0, or 1 for an unknown version. */
static int whole_options(atom_output_options *whole, const atom_output_options *opt) {
  size_t size = options_size(opt->version);
  if (!size) return 1;
  atom_output_options_init(whole, ATOM_OUTPUT_OPTIONS_VERSION);
  memcpy(whole, opt, size);
  return 0;
}

ATOM_API int atom_session_write(const struct atom_session *s, const atom_output_options *given,
                                atom_write_fn fn, void *payload) {
  atom_output_options whole;
  if (!s || !given || !fn || whole_options(&whole, given) ||
      (given->n_baseline && !given->baseline))
    return atom__error(ATOM_EINVAL, "atom_session_write: NULL argument or bad options version");
  const atom_output_options *opt = &whole;
  renderer render;
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

ATOM_API int atom_report_write(const atom_report *r, const atom_output_options *given,
                               atom_write_fn fn, void *payload) {
  atom_output_options whole;
  if (!r || !given || !fn || whole_options(&whole, given))
    return atom__error(ATOM_EINVAL, "atom_report_write: NULL argument or bad options version");
  const atom_output_options *opt = &whole;
  if (opt->format != ATOM_FORMAT_TEXT && opt->format != ATOM_FORMAT_JSON)
    return atom__error(ATOM_EINVAL, "atom_report_write: format %u is for whole sessions",
                       (unsigned)opt->format);
  atom__out o;
  atom__out_init(&o, fn, payload);
  if (opt->format == ATOM_FORMAT_TEXT) {
    const struct atom_session *s = atom_report_session(r);
    atom__output_text_report(&o, r, atom__checker_label(s, atom_report_checker_index(r)));
  } else {
    atom__output_json_report(&o, r);
    atom__out_write(&o, "\n", 1);
  }
  if (atom__out_close(&o)) return atom__error(ATOM_EIO, "atom_report_write: the write callback failed");
  return 0;
}
