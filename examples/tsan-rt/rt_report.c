/* Printing the results through the library's writers (include/atomicity/output.h), so that the
 * runtime prints what atomcheck prints: text blocks, the JSON document of doc/output.md, SARIF,
 * HTML. The runtime only adds the "atomicity-rt: " prefix of its lines, the per-checker cap of
 * reports printed as found (max_reports=) and, in JSON, the perturbation seed.
 *
 * Nothing waits for the end of the run: a text report is written and flushed when the checker
 * reports it (rt_report_one), and a JSON report file is rewritten whole, under a temporary name
 * renamed over it, whenever a report arrives (rt_report_json_file). Whatever ends the program,
 * what was found is on the report stream and the JSON file is a complete document. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"

#define MAX_TRACKED_CHECKERS 64

static size_t eager_printed[MAX_TRACKED_CHECKERS]; /* reports printed as found, per checker */
static int write_failed; /* the report stream failed once: said on stderr, once */

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

void rt_describe_loc(uint64_t loc, char *buf, size_t size) {
  /* The headline frame of a stack: "fn at file:line", else "fn+0x1c (module)". */
  if (!loc) {
    snprintf(buf, size, "(thread or program end)");
    return;
  }
  uint64_t pcs[RT_FRAMES];
  rt_symbol s;
  memset(&s, 0, sizeof s);
  rt_stack_headline(loc, pcs, RT_FRAMES, &s);
  char file[1024];
  if (s.file) rt_path_clean(s.file, file, sizeof file);
  if (s.file && s.function) {
    snprintf(buf, size, "%s at %s:%u", s.function, file, s.line);
  } else if (s.file) {
    snprintf(buf, size, "%s:%u", file, s.line);
  } else if (s.function) {
    const char *mod = s.module ? strrchr(s.module, '/') : NULL;
    snprintf(buf, size, "%s+0x%" PRIx64 " (%s)", s.function, s.offset,
             mod ? mod + 1 : s.module ? s.module : "?");
  } else {
    snprintf(buf, size, "(unknown function)");
  }
}

/* ---- writing through the library */

/* A FILE, with "atomicity-rt: " at the start of the first line only (a report block: its other
 * lines are indented) or of every line (the summary). */
typedef struct prefixed {
  FILE *out;
  int every_line;
  int at_start; /* the next byte starts a line that gets the prefix */
} prefixed;

static int write_prefixed(const char *data, size_t len, void *payload) {
  prefixed *p = payload;
  while (len) {
    if (p->at_start) {
      fputs("atomicity-rt: ", p->out);
      p->at_start = 0;
    }
    const char *nl = memchr(data, '\n', len);
    size_t n = nl ? (size_t)(nl - data) + 1 : len;
    if (fwrite(data, 1, n, p->out) != n) return 1;
    if (nl && p->every_line) p->at_start = 1;
    data += n;
    len -= n;
  }
  return 0;
}

/* The JSON document with a "seed" member after its opening brace (schedule=perturb). */
typedef struct seeded {
  FILE *out;
  int have_seed, done;
  uint64_t seed;
} seeded;

static int write_seeded(const char *data, size_t len, void *payload) {
  seeded *p = payload;
  const char *brace = !p->done && p->have_seed ? memchr(data, '{', len) : NULL;
  if (brace) {
    size_t n = (size_t)(brace - data) + 1;
    if (fwrite(data, 1, n, p->out) != n) return 1;
    fprintf(p->out, "\n  \"seed\": %" PRIu64 ",", p->seed);
    p->done = 1;
    data += n;
    len -= n;
  }
  return len && fwrite(data, 1, len, p->out) != len;
}

static void options(atom_output_options *w, const rt_output *o, uint32_t format) {
  atom_output_options_init(w, ATOM_OUTPUT_OPTIONS_VERSION);
  w->format = format;
  w->tool = "atomicity-rt";
  w->input = o->program;
  w->events = o->events;
  w->rejected = o->rejected;
  w->suppressions = o->suppressions;
  if (o->opt->max_reports == 0) w->flags |= ATOM_OUTPUT_NO_REPORTS;
  else if (o->opt->max_reports > 0) w->max_reports = (size_t)o->opt->max_reports;
}

/* Reports that cannot be written are not lost silently: one line on stderr (when the report
 * stream is a file; a failing stderr cannot be told about). */
static void check_written(FILE *out, const rt_output *o) {
  if (fflush(out) == 0 && !ferror(out)) return;
  if (write_failed++ || out == stderr) return;
  rt_note("report=%s: cannot write: %s", o->opt->report ? o->opt->report : "?", strerror(errno));
}

void rt_report_one(FILE *out, const rt_output *o, const atom_report *r) {
  size_t c = atom_report_checker_index(r);
  if (c < MAX_TRACKED_CHECKERS) {
    if (o->opt->max_reports >= 0 && eager_printed[c] >= (size_t)o->opt->max_reports) return;
    eager_printed[c]++;
  }
  atom_output_options w;
  options(&w, o, ATOM_FORMAT_TEXT);
  prefixed p = {out, 0, 1};
  if (atom_report_write(r, &w, write_prefixed, &p) != 0 && !write_failed)
    rt_note("could not write a report: %s", atom_last_error());
  check_written(out, o);
}

/* ---- everything at exit */

/* Whether checker c decided everything (COMPLETE if the library cannot say). */
static atom_checker_status status_of(const atom_session *s, size_t c) {
  atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
  if (atom_checker_status_get(s, c, &st) != 0) st.state = ATOM_CHECKER_COMPLETE;
  return st;
}

static const char *spec_of(const rt_output *o, size_t checker) {
  return checker < o->opt->n_checkers ? o->opt->checkers[checker] : "?";
}

size_t rt_report_all(FILE *out, const rt_output *o) {
  size_t nc = atom_checker_count(o->session);
  size_t total = atom_report_count(o->session);
  atom_output_options w;
  int rc = 0;
  if (o->opt->format == RT_FORMAT_TEXT) {
    /* The reports themselves were printed as they were found (rt_report_one). */
    size_t *per = calloc(nc ? nc : 1, sizeof *per);
    for (size_t i = 0; per && i < total; i++) {
      const atom_report *r = atom_report_get(o->session, i);
      size_t c = atom_report_checker_index(r);
      if (c < nc && !(o->suppressions && atom_suppressions_match(o->suppressions, r))) per[c]++;
    }
    int partial = 0;
    for (size_t c = 0; c < nc; c++) {
      partial |= status_of(o->session, c).state != ATOM_CHECKER_COMPLETE;
      size_t shown = c < MAX_TRACKED_CHECKERS ? eager_printed[c] : 0;
      if (per && shown < per[c])
        fprintf(out, "atomicity-rt: %s: %zu more report%s not shown (max_reports=%ld)\n",
                spec_of(o, c), per[c] - shown, plural(per[c] - shown), o->opt->max_reports);
    }
    free(per);
    if (o->opt->verbosity >= 1 || total || partial) {
      options(&w, o, ATOM_FORMAT_TEXT);
      w.flags |= ATOM_OUTPUT_NO_REPORTS;
      prefixed p = {out, 1, 1};
      rc = atom_session_write(o->session, &w, write_prefixed, &p);
      rt_perturb_summary(out);
    }
  } else if (o->opt->format == RT_FORMAT_JSON) {
    options(&w, o, ATOM_FORMAT_JSON);
    seeded p = {out, 0, 0, 0};
    p.have_seed = rt_perturb_seed(&p.seed);
    rc = atom_session_write(o->session, &w, write_seeded, &p);
  } else {
    options(&w, o, o->opt->format == RT_FORMAT_SARIF ? ATOM_FORMAT_SARIF : ATOM_FORMAT_HTML);
    rc = atom_session_write(o->session, &w, atom_write_file, out);
  }
  if (rc != 0) rt_note("could not write the report: %s", atom_last_error());
  check_written(out, o);
  return total + atom_report_dropped(o->session);
}

int rt_report_json_file(const char *path, const rt_output *o) {
  char tmp[4200];
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  FILE *f = fopen(tmp, "w");
  if (!f) return -1;
  rt_report_all(f, o);
  int bad = fflush(f) != 0 || ferror(f);
  int e = errno;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  if (!bad && rename(tmp, path) != 0) {
    bad = 1;
    e = errno;
  }
  if (bad) {
    unlink(tmp);
    errno = e;
    return -1;
  }
  return 0;
}
