/* Writes an HTML page of a hand-pushed session, and beside it what the page must show as JSON
 * (read back from the reports through the public accessors), for check_page.py.
 *
 *   make_page demo PAGE.html EXPECT.json    three threads in a cycle of three edges, an
 *                                           elided stretch of 1000 events, hostile names,
 *                                           stacks, a report without edges
 *   make_page rho2 PAGE.html EXPECT.json    the interleaving of 003 Figs. 2 and 5 (the
 *                                           corpus trace aerodrome-rho2.std), for the picture
 *                                           in doc/html.md
 *   make_page many N PAGE.html EXPECT.json  N distinct reports (the page must stay usable)
 *
 * The reports come from a plugin checker that reports at finish what the plan below says, as
 * cycles with edges (report spec version 2), so that the page is tested whatever the built-in
 * checkers report. Exit 0, or 1 with a message. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity.h"
#include "atomicity/sys/checker.h"
#include "atomicity/location.h"
#include "atomicity/output.h"

/* ---- the plan: reports in terms of event indexes ---- */

#define MAX_ITEMS 8
typedef struct planned {
  const char *kind;
  const char *message; /* template, NULL: the default cycle story */
  size_t n_txns;
  uint64_t txn_begin[MAX_ITEMS]; /* index of the BEGIN (or of the unary event) */
  size_t n_events;
  uint64_t event[MAX_ITEMS]; /* indexes of the witness events */
  size_t n_edges;
  uint32_t edge[MAX_ITEMS][3]; /* from position, to position, flags */
  uint64_t extra;
} planned;

static planned *plan;
static size_t plan_len;

/* ---- the checker: records every event, reports the plan at finish ---- */

typedef struct recorder {
  atom_env *env;
  atom_ev *evs;
  size_t n, cap;
} recorder;

static int rec_create(void **self, atom_env *env) {
  recorder *r = calloc(1, sizeof *r);
  if (!r) return ATOM_ENOMEM;
  r->env = env;
  *self = r;
  return 0;
}

static int rec_event(void *self, const atom_ev *ev) {
  recorder *r = self;
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 1024;
    atom_ev *evs = realloc(r->evs, cap * sizeof *evs);
    if (!evs) return ATOM_ENOMEM;
    r->evs = evs;
    r->cap = cap;
  }
  r->evs[r->n++] = *ev;
  return 0;
}

static const atom_ev *find(const recorder *r, uint64_t index) {
  for (size_t i = 0; i < r->n; i++)
    if (r->evs[i].index == index) return &r->evs[i];
  return NULL;
}

static int rec_finish(void *self) {
  recorder *r = self;
  for (size_t p = 0; p < plan_len; p++) {
    const planned *pl = &plan[p];
    atom_txn_ref txns[MAX_ITEMS];
    atom_ev events[MAX_ITEMS];
    atom_edge_ref edges[MAX_ITEMS];
    for (size_t i = 0; i < pl->n_txns; i++) {
      const atom_ev *e = find(r, pl->txn_begin[i]);
      if (!e) return atom_env_error(r->env, ATOM_EINVAL, "no event %" PRIu64, pl->txn_begin[i]);
      txns[i].thread = e->thread;
      txns[i].unary = e->kind != ATOM_BEGIN;
      txns[i].begin_index = e->index;
      txns[i].begin_loc = e->loc;
    }
    for (size_t i = 0; i < pl->n_events; i++) {
      const atom_ev *e = find(r, pl->event[i]);
      if (!e) return atom_env_error(r->env, ATOM_EINVAL, "no event %" PRIu64, pl->event[i]);
      events[i] = *e;
    }
    for (size_t i = 0; i < pl->n_edges; i++) {
      edges[i].from = pl->edge[i][0];
      edges[i].to = pl->edge[i][1];
      edges[i].flags = pl->edge[i][2];
      edges[i].reserved = 0;
    }
    atom_report_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.version = ATOM_REPORT_SPEC_VERSION;
    spec.kind = pl->kind;
    spec.event_index = pl->n_events ? pl->event[pl->n_events - 1] : 0;
    spec.txns = txns;
    spec.n_txns = pl->n_txns;
    spec.events = events;
    spec.n_events = pl->n_events;
    spec.message = pl->message;
    spec.signature_extra = pl->extra;
    spec.edges = edges;
    spec.n_edges = pl->n_edges;
    int rc = atom_env_report(r->env, &spec);
    if (rc) return rc;
  }
  return 0;
}

static void rec_destroy(void *self) {
  recorder *r = self;
  if (r) free(r->evs);
  free(r);
}

static const atom_checker recorder_checker = {
    ATOM_CHECKER_ABI_VERSION, 0x7fe /* every kind, 1..10 */, "pictured",
    "reports the cycles a test planned", NULL, rec_create, rec_event, rec_finish, rec_destroy,
    NULL, ATOM_CHECKER_PROP_AT_FINISH, NULL};

/* ---- scenarios ---- */

static int check(int rc, const char *what) {
  if (rc) fprintf(stderr, "make_page: %s: %s (%s)\n", what, atom_strerror(rc), atom_last_error());
  return rc;
}

/* 0 T1 begin, 1 T2 begin, 2 T3 begin, 3 T1 w(x), 4..1003 T4 r(z) (1000 events outside any
 * transaction), 1004 T2 r(x), 1005 T2 w(y), 1006 T3 r(y), 1007 T3 w(q), 1008 T1 r(q), then the
 * three ENDs: the cycle T1 -> T2 -> T3 -> T1, closed by 1008. */
static int demo(atom_session *s) {
  static planned p[2] = {
      {"conflict-cycle", NULL, 3, {0, 1, 2}, 6, {3, 1004, 1005, 1006, 1007, 1008}, 3,
       {{0, 1, 0}, {2, 3, 0}, {4, 5, ATOM_EDGE_CLOSING}}, 0},
      {"lonely-read", "{h0} read outside any transaction: {e0}", 1, {4}, 1, {4}, 0,
       {{0}}, 0},
  };
  plan = p;
  plan_len = 2;
  int rc = 0;
  rc |= atom_set_name(s, ATOM_SPACE_THREAD, 1, "<b>main</b> & \"co\"");
  rc |= atom_set_name(s, ATOM_SPACE_THREAD, 2, "worker'2");
  rc |= atom_set_name(s, ATOM_SPACE_VAR, 100, "balance<i>");
  rc |= atom_set_name(s, ATOM_SPACE_VAR, 101, "y");
  rc |= atom_set_name(s, ATOM_SPACE_VAR, 102, "q");
  rc |= atom_set_name(s, ATOM_SPACE_VAR, 103, "z");
  rc |= atom_set_location(s, 10, "withdraw<T>", "bank&co.c", 30);
  rc |= atom_set_location(s, 11, "withdraw<T>", "bank&co.c", 31);
  rc |= atom_set_location(s, 50, "main", "bank&co.c", 80);
  rc |= atom_set_stack(s, 11, (const uint64_t[]){11, 50}, 2);
  rc |= atom_set_location(s, 20, "deposit", "bank.c", 40);
  if (check(rc, "names")) return rc;
  rc |= atom_begin(s, 1, 10);
  rc |= atom_begin(s, 2, 20);
  rc |= atom_begin(s, 3, 30);
  rc |= atom_write(s, 1, 100, 11);
  for (int i = 0; i < 1000; i++) rc |= atom_read(s, 4, 103, 40);
  rc |= atom_read(s, 2, 100, 21);
  rc |= atom_write(s, 2, 101, 22);
  rc |= atom_read(s, 3, 101, 31);
  rc |= atom_write(s, 3, 102, 32);
  rc |= atom_read(s, 1, 102, 12);
  rc |= atom_end(s, 1, 13);
  rc |= atom_end(s, 2, 23);
  rc |= atom_end(s, 3, 33);
  return check(rc, "push");
}

/* tests/corpus/aerodrome-rho2.std: t1 begin, t2 begin, t1 w(x), t2 r(x), t2 w(y), t1 r(y),
 * t1 end, t2 end. Edges w(x) -> r(x) and w(y) -> r(y), the second closing the cycle. */
static int rho2(atom_session *s) {
  static planned p[1] = {
      {"conflict-cycle", NULL, 2, {0, 1}, 4, {2, 3, 4, 5}, 2,
       {{0, 1, 0}, {2, 3, ATOM_EDGE_CLOSING}}, 0},
  };
  plan = p;
  plan_len = 1;
  int rc = 0;
  rc |= atom_set_name(s, ATOM_SPACE_THREAD, 1, "t1");
  rc |= atom_set_name(s, ATOM_SPACE_THREAD, 2, "t2");
  rc |= atom_set_name(s, ATOM_SPACE_VAR, 1, "x");
  rc |= atom_set_name(s, ATOM_SPACE_VAR, 2, "y");
  for (uint64_t l = 0; l < 8; l++) rc |= atom_set_location(s, l, NULL, "rho2.std", (uint32_t)l + 2);
  if (check(rc, "names")) return rc;
  rc |= atom_begin(s, 1, 0);
  rc |= atom_begin(s, 2, 1);
  rc |= atom_write(s, 1, 1, 2);
  rc |= atom_read(s, 2, 1, 3);
  rc |= atom_write(s, 2, 2, 4);
  rc |= atom_read(s, 1, 2, 5);
  rc |= atom_end(s, 1, 6);
  rc |= atom_end(s, 2, 7);
  return check(rc, "push");
}

/* n rounds of the rho2 interleaving, each a report of its own (signature_extra). */
static int many(atom_session *s, size_t n) {
  plan = calloc(n, sizeof *plan);
  if (!plan) return ATOM_ENOMEM;
  plan_len = n;
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t b = 6 * i;
    planned pl = {"conflict-cycle", NULL, 2, {b, b + 1}, 4, {b + 2, b + 3, b + 4, b + 5}, 2,
                  {{0, 1, 0}, {2, 3, ATOM_EDGE_CLOSING}}, i + 1};
    plan[i] = pl;
    rc |= atom_begin(s, 1, 0);
    rc |= atom_begin(s, 2, 1);
    rc |= atom_write(s, 1, 1, 2);
    rc |= atom_read(s, 2, 1, 3);
    rc |= atom_write(s, 2, 2, 4);
    rc |= atom_read(s, 1, 2, 5);
    rc |= atom_end(s, 1, 6);
    rc |= atom_end(s, 2, 7);
    if (rc) break;
  }
  return check(rc, "push");
}

/* ---- what the page must show, as JSON ---- */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

static void thread_label(char *buf, size_t size, const atom_session *s, uint64_t key) {
  const char *name = atom_get_name(s, ATOM_SPACE_THREAD, key);
  if (name) snprintf(buf, size, "%s", name);
  else snprintf(buf, size, "T%" PRIu64, key);
}

static void expectations(FILE *f, const atom_session *s) {
  char buf[1024];
  fputs("{\"reports\": [\n", f);
  for (size_t i = 0, n = atom_report_count(s); i < n; i++) {
    const atom_report *r = atom_report_get(s, i);
    fprintf(f, "%s{\"checker\": ", i ? ",\n" : "");
    json_str(f, atom_report_checker(r));
    fputs(", \"kind\": ", f);
    json_str(f, atom_report_kind(r));
    fprintf(f, ", \"count\": %" PRIu64 ", \"message\": ", atom_report_occurrences(r));
    json_str(f, atom_report_message(r));
    fputs(", \"threads\": {", f);
    /* every thread of a transaction or an event, with its label */
    uint64_t seen[600];
    size_t n_seen = 0;
    for (size_t t = 0; t < atom_report_txn_count(r) + atom_report_event_count(r); t++) {
      uint64_t key = 0;
      atom_event ev;
      if (t < atom_report_txn_count(r)) atom_report_txn(r, t, &key, NULL, NULL);
      else if (atom_report_event(r, t - atom_report_txn_count(r), &ev, NULL) == 0) key = ev.thread;
      size_t k = 0;
      while (k < n_seen && seen[k] != key) k++;
      if (k < n_seen || n_seen == 600) continue;
      seen[n_seen++] = key;
      thread_label(buf, sizeof buf, s, key);
      fprintf(f, "%s\"%" PRIu64 "\": ", n_seen > 1 ? ", " : "", key);
      json_str(f, buf);
    }
    fputs("}, \"txns\": [", f);
    for (size_t t = 0; t < atom_report_txn_count(r); t++) {
      uint64_t thread, begin, count, last;
      uint32_t flags;
      atom_report_txn(r, t, &thread, &begin, NULL);
      atom_report_txn_run(r, t, &flags, &count, &last);
      atom_report_describe_txn(buf, sizeof buf, r, t);
      fprintf(f, "%s{\"thread\": %" PRIu64 ", \"begin\": %" PRIu64 ", \"count\": %" PRIu64
                 ", \"unary\": %s, \"describe\": ",
              t ? ", " : "", thread, begin, count, (flags & ATOM_TXN_UNARY) ? "true" : "false");
      json_str(f, buf);
      fputc('}', f);
    }
    fputs("], \"events\": [", f);
    for (size_t e = 0; e < atom_report_event_count(r); e++) {
      atom_event ev;
      uint64_t index;
      atom_report_event(r, e, &ev, &index);
      atom_report_describe_event(buf, sizeof buf, r, e);
      size_t txn = atom_report_event_txn(r, e);
      fprintf(f, "%s{\"index\": %" PRIu64 ", \"thread\": %" PRIu64 ", \"txn\": %d, \"describe\": ",
              e ? ", " : "", index, ev.thread, txn == SIZE_MAX ? -1 : (int)txn);
      json_str(f, buf);
      fputc('}', f);
    }
    fputs("], \"edges\": [", f);
    for (size_t e = 0; e < atom_report_edge_count(r); e++) {
      size_t from, to;
      uint32_t flags;
      uint64_t fi, ti;
      atom_report_edge(r, e, &from, &to, &flags);
      atom_report_event(r, from, NULL, &fi);
      atom_report_event(r, to, NULL, &ti);
      fprintf(f, "%s{\"from\": %" PRIu64 ", \"to\": %" PRIu64 ", \"closing\": %s}", e ? ", " : "",
              fi, ti, (flags & ATOM_EDGE_CLOSING) ? "true" : "false");
    }
    fputs("]}", f);
  }
  fputs("\n]}\n", f);
}

int main(int argc, char **argv) {
  int is_many = argc == 5 && strcmp(argv[1], "many") == 0;
  if (!(argc == 4 && (!strcmp(argv[1], "demo") || !strcmp(argv[1], "rho2"))) && !is_many) {
    fprintf(stderr, "usage: make_page demo|rho2 PAGE EXPECT | make_page many N PAGE EXPECT\n");
    return 1;
  }
  const char *page = argv[argc - 2], *expect = argv[argc - 1];
  atom_session *s = NULL;
  if (check(atom_session_new(&s, NULL), "session") ||
      check(atom_session_attach_checker(s, &recorder_checker, NULL), "attach")) {
    atom_session_free(s);
    return 1;
  }
  int rc = is_many ? many(s, (size_t)strtoul(argv[2], NULL, 10))
                   : !strcmp(argv[1], "demo") ? demo(s) : rho2(s);
  if (!rc) rc = check(atom_finish(s), "finish");
  FILE *pf = rc ? NULL : fopen(page, "w");
  FILE *ef = pf ? fopen(expect, "w") : NULL;
  if (!rc && (!pf || !ef)) {
    perror("make_page: open");
    rc = 1;
  }
  if (!rc) {
    atom_output_options opt;
    atom_output_options_init(&opt, ATOM_OUTPUT_OPTIONS_VERSION);
    opt.format = ATOM_FORMAT_HTML;
    opt.tool = "make_page";
    opt.input = argv[1];
    rc = check(atom_session_write(s, &opt, atom_write_file, pf), "write");
    expectations(ef, s);
  }
  if (pf && fclose(pf)) rc = 1;
  if (ef && fclose(ef)) rc = 1;
  atom_session_free(s);
  if (is_many) free(plan);
  return rc ? 1 : 0;
}
