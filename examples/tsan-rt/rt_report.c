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
  (void)payload;
  if (space == ATOM_SPACE_LOC) {
    if (!key) return NULL;
    describe_loc(key, buf, size);
    return buf;
  }
  return rt_key_name(space, key, buf, size);
}

const char *rt_key_name(int space, uint64_t key, char *buf, size_t size) {
  if (space == ATOM_SPACE_THREAD) {
    snprintf(buf, size, "T%" PRIu64, key);
    return buf;
  }
  uint64_t reader = key >> 48;
  uint64_t addr = key & ((UINT64_C(1) << 48) - 1);
  char base[200];
  rt_symbol s;
  if (rt_sym_data(addr, &s) == 0) {
    if (s.offset) snprintf(base, sizeof base, "%s+%" PRIu64, s.function, s.offset);
    else snprintf(base, sizeof base, "%s", s.function);
  } else {
    snprintf(base, sizeof base, "0x%" PRIx64, addr);
  }
  if (space == ATOM_SPACE_LOCK && reader)
    snprintf(buf, size, "%s(read by T%" PRIu64 ")", base, reader - 1);
  else
    snprintf(buf, size, "%s", base);
  return buf;
}

void rt_describe_loc(uint64_t loc, char *buf, size_t size) { describe_loc(loc, buf, size); }

/* "fn at file:line", "fn+0x1c (module)" or "0x..." (a lock site learned late: its call site) */
static void describe_loc(uint64_t loc, char *buf, size_t size) {
  if (!loc) {
    snprintf(buf, size, "(thread or program end)");
    return;
  }
  loc = rt_names_alias(loc);
  rt_symbol s;
  if (rt_sym_code(loc, &s) != 0) {
    snprintf(buf, size, "0x%" PRIx64, loc);
  } else if (s.file && s.function) {
    snprintf(buf, size, "%s at %s:%u", s.function, s.file, s.line);
  } else if (s.file) {
    snprintf(buf, size, "%s:%u", s.file, s.line);
  } else {
    const char *mod = s.module ? strrchr(s.module, '/') : NULL;
    snprintf(buf, size, "%s+0x%" PRIx64 " (%s)", s.function, s.offset,
             mod ? mod + 1 : s.module ? s.module : "?");
  }
}

static const char *spec_of(const rt_output *o, size_t checker) {
  return checker < o->opt->n_checkers ? o->opt->checkers[checker] : "?";
}

static void print_block(FILE *out, const rt_output *o, const atom_report *r) {
  char buf[600], nbuf[256];
  uint64_t count = atom_report_occurrences(r);
  fprintf(out, "atomicity-rt: %s: %s at event %" PRIu64 " (%" PRIu64 " occurrence%s, %s)\n",
          spec_of(o, atom_report_checker_index(r)), atom_report_kind(r),
          atom_report_event_index(r), count, plural(count), atc_evidence_name(r));
  fprintf(out, "  %s\n", atom_report_message(r));
  size_t n = atom_report_txn_count(r);
  if (n) fputs("  transactions:\n", out);
  for (size_t i = 0; i < n; i++) {
    uint64_t thread = 0, index = 0, loc = 0;
    if (atom_report_txn(r, i, &thread, &index, &loc) != 0) continue;
    describe_loc(loc, buf, sizeof buf);
    fprintf(out, "    T%" PRIu64 "@%" PRIu64 ": %s\n", thread, index, buf);
  }
  n = atom_report_var_count(r);
  if (n) {
    fputs("  variables:", out);
    for (size_t i = 0; i < n; i++)
      fprintf(out, "%s %s", i ? "," : "",
              key_name(ATOM_SPACE_VAR, atom_report_var(r, i), nbuf, sizeof nbuf, NULL));
    fputc('\n', out);
  }
  n = atom_report_event_count(r);
  if (n) fputs("  events:\n", out);
  for (size_t i = 0; i < n; i++) {
    atom_event ev;
    uint64_t index = 0;
    if (atom_report_event(r, i, &ev, &index) != 0) continue;
    fprintf(out, "    %" PRIu64 ": T%" PRIu64 " %s", index, ev.thread, atc_kind_name(ev.kind));
    int space = atc_target_space(ev.kind);
    if (space) fprintf(out, "(%s)", key_name(space, ev.target, nbuf, sizeof nbuf, NULL));
    describe_loc(ev.loc, buf, sizeof buf);
    fprintf(out, " in %s\n", buf);
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

static void json_locations(atc_json *j, const locset *s) {
  atc_json_key(j, "locations");
  atc_json_object_begin(j);
  for (size_t i = 0; i < s->n; i++) {
    char key[32];
    snprintf(key, sizeof key, "%" PRIu64, s->v[i]);
    atc_json_key(j, key);
    atc_json_object_begin(j);
    rt_symbol sym;
    int ok = rt_sym_code(s->v[i], &sym) == 0;
    atc_json_member_string(j, "function", ok ? sym.function : NULL);
    atc_json_member_string(j, "file", ok ? sym.file : NULL);
    atc_json_key(j, "line");
    if (ok && sym.line) atc_json_uint(j, sym.line);
    else atc_json_null(j);
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
        atc_json_report_object(&j, r, key_name, NULL);
        collect_locs(&locs, r);
        shown++;
      }
      atc_json_array_end(&j);
      atc_json_object_end(&j);
    }
    atc_json_array_end(&j);
    json_locations(&j, &locs);
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
