/* Printing the results: text (like atomcheck's, with function names and source lines) or the
 * JSON document of doc/atomcheck.md (the same writer and report objects as atomcheck,
 * examples/common/), plus a "locations" member that symbolizes every loc it mentions.
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

#include "json_report.h"
#include "rt.h"

#define MAX_TRACKED_CHECKERS 64

static size_t eager_printed[MAX_TRACKED_CHECKERS]; /* reports printed as found, per checker */
static int write_failed; /* the report stream failed once: said on stderr, once */

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* Names: T<id> for threads; a global variable's symbol (+offset), else the address. A reader's
 * key of a read-write lock (rt_core.c) is shown as the lock plus the reader. */
static void describe_loc(uint64_t loc, char *buf, size_t size);

static const char *key_name(int space, uint64_t key, char *buf, size_t size, void *payload) {
  const atom_session *session = payload;
  if (space == ATOM_SPACE_LOC) {
    if (!key) return NULL;
    describe_loc(key, buf, size);
    return buf;
  }
  const char *name = session ? atom_get_name(session, space, key) : NULL; /* flush_reports */
  if (name) return name;
  return rt_key_name(space, key, buf, size);
}

void rt_describe_loc(uint64_t loc, char *buf, size_t size) { describe_loc(loc, buf, size); }

/* The headline frame of a stack: "fn at file:line", else "fn+0x1c (module)". */
static void describe_loc(uint64_t loc, char *buf, size_t size) {
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

static const char *spec_of(const rt_output *o, size_t checker) {
  return checker < o->opt->n_checkers ? o->opt->checkers[checker] : "?";
}

/* The frames of loc after its headline, one per line ("called from ..."). */
static void print_callers(FILE *out, const atom_session *s, uint64_t loc, const char *indent) {
  const uint64_t *frames;
  size_t n = atom_get_stack(s, loc, &frames);
  char buf[600];
  for (size_t i = 1; i < n; i++) {
    atom_describe_location(buf, sizeof buf, s, frames[i]);
    fprintf(out, "%scalled from %s\n", indent, buf);
  }
}

static void print_block(FILE *out, const rt_output *o, const atom_report *r) {
  char buf[2000], nbuf[1000];
  uint64_t count = atom_report_occurrences(r);
  fprintf(out, "atomicity-rt: %s: %s at event %" PRIu64 " (%" PRIu64 " occurrence%s, %s)\n",
          spec_of(o, atom_report_checker_index(r)), atom_report_kind(r),
          atom_report_event_index(r), count, plural(count), atc_evidence_name(r));
  atom_report_describe(buf, sizeof buf, r);
  fprintf(out, "  %s\n", buf);
  size_t n = atom_report_txn_count(r);
  if (n) fputs("  transactions:\n", out);
  for (size_t i = 0; i < n; i++) {
    uint64_t loc = 0;
    if (atom_report_txn(r, i, NULL, NULL, &loc) != 0) continue;
    atom_report_describe_txn(buf, sizeof buf, r, i);
    fprintf(out, "    %s\n", buf);
    print_callers(out, o->session, loc, "        ");
  }
  n = atom_report_var_count(r);
  if (n) {
    fputs("  variables:", out);
    for (size_t i = 0; i < n; i++) {
      uint64_t v = atom_report_var(r, i);
      const char *name = atom_get_name(o->session, ATOM_SPACE_VAR, v);
      fprintf(out, "%s %s", i ? "," : "",
              name ? name : rt_key_name(ATOM_SPACE_VAR, v, nbuf, sizeof nbuf));
    }
    fputc('\n', out);
  }
  n = atom_report_event_count(r);
  if (n) fputs("  events:\n", out);
  for (size_t i = 0; i < n; i++) {
    atom_event ev;
    if (atom_report_event(r, i, &ev, NULL) != 0) continue;
    atom_report_describe_event(buf, sizeof buf, r, i);
    fprintf(out, "    %s\n", buf);
    print_callers(out, o->session, ev.loc, "        ");
  }
  fputc('\n', out);
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
  print_block(out, o, r);
  check_written(out, o);
}

/* ---- JSON */

typedef struct locset {
  uint64_t *v;
  size_t n, cap;
} locset;

static void locset_add(locset *s, uint64_t loc) {
  if (!loc) return;
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i] == loc) return;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 32;
    uint64_t *v = realloc(s->v, cap * sizeof *v);
    if (!v) return;
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = loc;
}

/* One frame: {"function", "file", "line"} as the session knows it. */
static void json_frame(atc_json *j, const atom_session *s, uint64_t loc) {
  const char *function = NULL, *file = NULL;
  uint32_t line = 0;
  atom_get_location(s, loc, &function, &file, &line);
  atc_json_object_begin(j);
  atc_json_member_string(j, "function", function);
  atc_json_member_string(j, "file", file);
  atc_json_key(j, "line");
  if (line) atc_json_uint(j, line);
  else atc_json_null(j);
  atc_json_object_end(j);
}

/* "locations": each loc the reports mention: its headline frame's function, file and line,
 * and "stack", every frame from the headline outwards. */
static void json_locations(atc_json *j, const atom_session *s, const locset *set) {
  atc_json_key(j, "locations");
  atc_json_object_begin(j);
  for (size_t i = 0; i < set->n; i++) {
    char key[32];
    snprintf(key, sizeof key, "%" PRIu64, set->v[i]);
    atc_json_key(j, key);
    const char *function = NULL, *file = NULL;
    uint32_t line = 0;
    atom_get_location(s, set->v[i], &function, &file, &line);
    atc_json_object_begin(j);
    atc_json_member_string(j, "function", function);
    atc_json_member_string(j, "file", file);
    atc_json_key(j, "line");
    if (line) atc_json_uint(j, line);
    else atc_json_null(j);
    atc_json_key(j, "stack");
    atc_json_array_begin(j);
    const uint64_t *frames;
    size_t n = atom_get_stack(s, set->v[i], &frames);
    for (size_t f = 0; f < n; f++) json_frame(j, s, frames[f]);
    atc_json_array_end(j);
    atc_json_object_end(j);
  }
  atc_json_object_end(j);
}

static void collect_locs(locset *s, const atom_report *r) {
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    uint64_t loc = 0;
    if (atom_report_txn(r, i, NULL, NULL, &loc) == 0) locset_add(s, loc);
  }
  for (size_t i = 0, n = atom_report_event_count(r); i < n; i++) {
    atom_event ev;
    if (atom_report_event(r, i, &ev, NULL) == 0) locset_add(s, ev.loc);
  }
}

/* ---- everything at exit */

typedef struct per_checker {
  size_t n;
  uint64_t occurrences;
} per_checker;

/* Whether checker c decided everything (COMPLETE if the library cannot say). */
static atom_checker_status status_of(const atom_session *s, size_t c) {
  atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
  if (atom_checker_status_get(s, c, &st) != 0) st.state = ATOM_CHECKER_COMPLETE;
  return st;
}

size_t rt_report_all(FILE *out, const rt_output *o) {
  size_t nc = atom_checker_count(o->session);
  size_t total = atom_report_count(o->session);
  per_checker *pc = calloc(nc ? nc : 1, sizeof *pc);
  if (!pc) return total;
  for (size_t i = 0; i < total; i++) {
    const atom_report *r = atom_report_get(o->session, i);
    size_t c = atom_report_checker_index(r);
    if (c < nc) {
      pc[c].n++;
      pc[c].occurrences += atom_report_occurrences(r);
    }
  }
  size_t limit = o->opt->max_reports < 0 ? SIZE_MAX : (size_t)o->opt->max_reports;

  if (o->opt->format == RT_FORMAT_SARIF || o->opt->format == RT_FORMAT_HTML) {
    /* The library's writers (the same documents as atomcheck's). */
    atom_output_options w;
    atom_output_options_init(&w, ATOM_OUTPUT_OPTIONS_VERSION);
    w.format = o->opt->format == RT_FORMAT_SARIF ? ATOM_FORMAT_SARIF : ATOM_FORMAT_HTML;
    w.tool = "atomicity-rt";
    w.input = o->program;
    w.max_reports = o->opt->max_reports < 0 ? 0 : (size_t)o->opt->max_reports;
    w.events = o->events;
    w.rejected = o->rejected;
    w.suppressions = o->suppressions;
    if (atom_session_write(o->session, &w, atom_write_file, out) != 0)
      rt_note("could not write the report: %s", atom_last_error());
    check_written(out, o);
    free(pc);
    return total + atom_report_dropped(o->session);
  }

  if (o->opt->format == RT_FORMAT_JSON) {
    atc_json j;
    locset locs = {0};
    atc_json_init(&j, out, 1);
    atc_json_object_begin(&j);
    atc_json_member_string(&j, "file", o->program);
    atc_json_member_uint(&j, "events", o->events);
    atc_json_member_uint(&j, "rejected", o->rejected);
    uint64_t seed;
    if (rt_perturb_seed(&seed)) atc_json_member_uint(&j, "seed", seed); /* schedule=perturb */
    atc_json_key(&j, "checkers");
    atc_json_array_begin(&j);
    for (size_t c = 0; c < nc; c++) {
      atc_json_object_begin(&j);
      atc_json_member_string(&j, "name", atom_checker_name(o->session, c));
      atc_json_member_string(&j, "spec", spec_of(o, c));
      atc_json_member_uint(&j, "violations", pc[c].n);
      atc_json_member_uint(&j, "occurrences", pc[c].occurrences);
      /* as atomcheck: a checker that stopped early is never a clean result */
      atom_checker_status st = status_of(o->session, c);
      atc_json_key(&j, "complete");
      atc_json_bool(&j, st.state == ATOM_CHECKER_COMPLETE);
      atc_json_key(&j, "disabled");
      atc_json_bool(&j, st.state == ATOM_CHECKER_DISABLED);
      if (st.state != ATOM_CHECKER_COMPLETE) {
        atc_json_member_uint(&j, "stopped_at", st.stopped_at);
        atc_json_member_string(&j, "reason", st.reason ? st.reason : "");
      }
      atc_json_key(&j, "reports");
      atc_json_array_begin(&j);
      size_t shown = 0;
      for (size_t i = 0; i < total && shown < limit; i++) {
        const atom_report *r = atom_report_get(o->session, i);
        if (atom_report_checker_index(r) != c) continue;
        atc_json_report_object(&j, r, key_name, (void *)o->session);
        collect_locs(&locs, r);
        shown++;
      }
      atc_json_array_end(&j);
      atc_json_object_end(&j);
    }
    atc_json_array_end(&j);
    json_locations(&j, o->session, &locs);
    atc_json_object_end(&j);
    if (atc_json_finish(&j) != 0) rt_note("could not write the JSON report");
    free(locs.v);
  } else {
    /* The reports themselves were printed as they were found (rt_report_one). */
    (void)limit;
    for (size_t c = 0; c < nc; c++) {
      size_t shown = c < MAX_TRACKED_CHECKERS ? eager_printed[c] : pc[c].n;
      if (shown < pc[c].n)
        fprintf(out, "atomicity-rt: %s: %zu more report%s not shown (max_reports=%ld)\n",
                spec_of(o, c), pc[c].n - shown, plural(pc[c].n - shown), o->opt->max_reports);
    }
    int partial = 0;
    for (size_t c = 0; c < nc; c++)
      partial |= status_of(o->session, c).state != ATOM_CHECKER_COMPLETE;
    if (o->opt->verbosity >= 1 || total || partial)
      for (size_t c = 0; c < nc; c++) {
        atom_checker_status st = status_of(o->session, c);
        if (pc[c].n)
          fprintf(out, "atomicity-rt: %s: %zu violation%s (%" PRIu64 " occurrence%s)\n",
                  spec_of(o, c), pc[c].n, plural(pc[c].n), pc[c].occurrences,
                  plural(pc[c].occurrences));
        if (st.state != ATOM_CHECKER_COMPLETE)
          fprintf(out, "atomicity-rt: %s: %s, stopped at event %" PRIu64 ": %s\n", spec_of(o, c),
                  st.state == ATOM_CHECKER_DISABLED ? "DISABLED" : "INCOMPLETE", st.stopped_at,
                  st.reason ? st.reason : "no reason given");
        else if (!pc[c].n)
          fprintf(out, "atomicity-rt: %s: no violations\n", spec_of(o, c));
      }
    if (o->opt->verbosity >= 1 || total || partial) rt_perturb_summary(out);
    check_written(out, o);
  }
  free(pc);
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
