/* commit-node (004): the paper's figures and Wang & Stoller's examples, report contents,
 * arguments, allocation failures, and a cross-check against the brute-force reference over all
 * feasible interleavings (interleave.h) on thousands of random traces:
 *   (a) traces whose units are exactly two transactions (no access outside them) and that
 *       cannot deadlock: both modes agree with the reference exactly (004 Thms 4.2, 4.5);
 *   (b) every trace that cannot deadlock: a non-serializable interleaving found by the
 *       reference is always reported (never silent);
 * and the rate of false alarms on traces with three or more transactions is measured. The same
 * runs again on traces with synchronizing accesses (rt_params_sync): (b) holds; (a) does not
 * always, and its false alarms are counted: sync links, like fork/join links, are undirected
 * forest edges, so two links that order the same two transactions the same way (a FORK and a
 * later release read by the child, or two acquires in one transaction) close a cycle that no
 * schedule realizes (doc/checkers/commit-node.md gives the figures). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "interleave.h"
#include "randtrace.h"
#include "support/lockorder.h"
#include "support/periods.h"
#include "util.h"

Suite *atom_test_suite_commit_node(void);

#define CHECK(c)                                                 \
  do {                                                           \
    if (!(c)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c); \
  } while (0)

static int under_valgrind(void) { return getenv("ATOM_UNDER_VALGRIND") != NULL; }

/* Verdicts of one run: 1 = no commit-nodes report (atomic); deadlock = a potential-deadlock
 * report was made. */
typedef struct verdict {
  int atomic;
  int deadlock;
  size_t reports;
} verdict;

static verdict verdict_of(const atom_session *s) {
  verdict v = {1, 0, 0};
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const atom_report *r = atom_report_get(s, i);
    if (strcmp(atom_report_kind(r), "commit-nodes") == 0) v.atomic = 0;
    else if (strcmp(atom_report_kind(r), "potential-deadlock") == 0) v.deadlock = 1;
    v.reports++;
  }
  return v;
}

static verdict run_std(const char *spec, const char *text) {
  const char *specs[] = {spec, NULL};
  atom_session *s = tu_session(specs);
  ck_assert_int_eq(tu_feed_std(s, text, NULL), 0);
  verdict v = verdict_of(s);
  atom_session_free(s);
  return v;
}

static verdict run_events(const char *spec, const atom_event *ev, size_t n) {
  atom_session *s = NULL;
  CHECK(atom_session_new(&s, NULL) == 0);
  CHECK(atom_session_attach(s, spec) == 0);
  CHECK(atom_push_many(s, ev, n, NULL) == 0);
  CHECK(atom_finish(s) == 0);
  verdict v = verdict_of(s);
  atom_session_free(s);
  return v;
}

/* Parse STD text into events (for the reference). */
static atom_event *std_events(const char *text, size_t *n) {
  atom_trace_reader *r = NULL;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, text, strlen(text), "<t>"), 0);
  atom_event *ev = NULL;
  size_t cap = 0;
  *n = 0;
  atom_event e;
  while (atom_trace_reader_next(r, &e) == 1) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 32;
      ev = realloc(ev, cap * sizeof *ev);
      ck_assert_ptr_nonnull(ev);
    }
    ev[(*n)++] = e;
  }
  atom_trace_reader_free(r);
  return ev;
}

/* The checker (both modes) and the reference on one STD text; the expected verdicts too. */
static void expect(const char *text, int conflict_atomic, int view_atomic) {
  verdict c = run_std("commit-node", text), v = run_std("commit-node:mode=view", text);
  ck_assert_msg(c.atomic == conflict_atomic, "conflict mode: got %d, want %d on\n%s", c.atomic,
                conflict_atomic, text);
  ck_assert_msg(v.atomic == view_atomic, "view mode: got %d, want %d on\n%s", v.atomic,
                view_atomic, text);
  ck_assert(!c.deadlock && !v.deadlock);
  size_t n;
  atom_event *ev = std_events(text, &n);
  il_result res;
  ck_assert_int_eq(il_check(ev, n, NULL, &res), 0);
  ck_assert_int_eq(res.conflict_atomic, conflict_atomic);
  ck_assert_int_eq(res.view_atomic, view_atomic);
  ck_assert_int_eq(res.potential_deadlock, 0);
  il_result_free(&res);
  free(ev);
}

/* ---- the papers' examples ------------------------------------------------------------ */

START_TEST(ws_examples) {
  /* 000 (1): t1: R(x) W(x), t2: R(x) -- atomic */
  expect("t1|begin|0\nt1|r(x)|1\nt1|w(x)|2\nt1|end|3\nt2|begin|4\nt2|r(x)|5\nt2|end|6\n", 1, 1);
  /* 000 (6): acq W rel R | acq R rel -- atomic */
  expect("t1|begin|0\nt1|acq(l)|1\nt1|w(x)|2\nt1|rel(l)|3\nt1|r(x)|4\nt1|end|5\n"
         "t2|begin|6\nt2|acq(l)|7\nt2|r(x)|8\nt2|rel(l)|9\nt2|end|10\n",
         1, 1);
  /* 000 (7), 004 §2: W(x) W(x) | W(x) -- view-atomic, not conflict-atomic */
  expect("t1|begin|0\nt1|w(x)|1\nt1|w(x)|2\nt1|end|3\nt2|begin|4\nt2|w(x)|5\nt2|end|6\n", 0, 1);
  /* 000 (8): acq R rel W(y) twice -- atomic */
  expect("t1|begin|0\nt1|acq(l)|1\nt1|r(x)|2\nt1|rel(l)|3\nt1|w(y)|4\nt1|end|5\n"
         "t2|begin|6\nt2|acq(l)|7\nt2|r(x)|8\nt2|rel(l)|9\nt2|w(y)|10\nt2|end|11\n",
         1, 1);
  /* 000 (9): view-atomic (W&S); not conflict-atomic */
  expect("t1|begin|0\nt1|acq(l)|1\nt1|w(x)|2\nt1|r(x)|3\nt1|rel(l)|4\nt1|acq(l)|5\nt1|w(x)|6\n"
         "t1|rel(l)|7\nt1|end|8\nt2|begin|9\nt2|acq(l)|10\nt2|w(x)|11\nt2|r(x)|12\nt2|rel(l)|13\n"
         "t2|acq(l)|14\nt2|w(x)|15\nt2|rel(l)|16\nt2|end|17\n",
         0, 1);
  /* 000 (13): acq R W1 rel W2 | acq W' rel -- not atomic */
  expect("t1|begin|0\nt1|acq(l)|1\nt1|r(x)|2\nt1|w(x)|3\nt1|rel(l)|4\nt1|w(x)|5\nt1|end|6\n"
         "t2|begin|7\nt2|acq(l)|8\nt2|w(x)|9\nt2|rel(l)|10\nt2|end|11\n",
         0, 0);
  /* 000 (15): view-atomic, not conflict-atomic */
  expect("t1|begin|0\nt1|acq(l)|1\nt1|w(x)|2\nt1|r(x)|3\nt1|r(x)|4\nt1|rel(l)|5\nt1|end|6\n"
         "t2|begin|7\nt2|acq(l)|8\nt2|w(x)|9\nt2|rel(l)|10\nt2|acq(l)|11\nt2|w(x)|12\n"
         "t2|rel(l)|13\nt2|end|14\n",
         0, 1);
  /* 000 (16): every pair atomic, the three not (a cycle through all three) */
  const char *ex16 = "t1|begin|0\nt1|w(x)|1\nt1|w(y)|2\nt1|end|3\nt2|begin|4\nt2|r(x)|5\n"
                     "t2|w(z)|6\nt2|end|7\nt3|begin|8\nt3|r(z)|9\nt3|r(y)|10\nt3|end|11\n";
  expect(ex16, 0, 0);
  expect("t1|begin|0\nt1|w(x)|1\nt1|w(y)|2\nt1|end|3\nt2|begin|4\nt2|r(x)|5\nt2|w(z)|6\n"
         "t2|end|7\n",
         1, 1);
  expect("t2|begin|4\nt2|r(x)|5\nt2|w(z)|6\nt2|end|7\nt3|begin|8\nt3|r(z)|9\nt3|r(y)|10\n"
         "t3|end|11\n",
         1, 1);
  expect("t1|begin|0\nt1|w(x)|1\nt1|w(y)|2\nt1|end|3\nt3|begin|8\nt3|r(z)|9\nt3|r(y)|10\n"
         "t3|end|11\n",
         1, 1);
}
END_TEST

/* 004 Figs. 4 and 6 are images; the three units below are reconstructed from what the text
 * says of them: {t1, t2} is view-atomic but not conflict-atomic (t1 has two commit nodes in
 * the conflict forest, one in the view forest); {t2, t3} is neither (t3 has two commit nodes
 * in both forests); the t1-t3 inter-edge joins t1's block of l (holding W(x)) with t3's block
 * of l, standing for both "t3.R(x) can read t1.W(x)" and "t1.W(x) vs t3.W(x)". */
#define FIG_T1 "t1|begin|0\nt1|w(z)|1\nt1|acq(l)|2\nt1|w(x)|3\nt1|rel(l)|4\nt1|w(z)|5\nt1|end|6\n"
#define FIG_T2 "t2|begin|7\nt2|w(z)|8\nt2|r(y)|9\nt2|end|10\n"
#define FIG_T3                                                                             \
  "t3|begin|11\nt3|w(y)|12\nt3|acq(l)|13\nt3|r(x)|14\nt3|w(x)|15\nt3|rel(l)|16\nt3|w(y)|17\n" \
  "t3|end|18\n"

START_TEST(fig4_fig6) {
  expect(FIG_T1 FIG_T2, 0, 1);
  expect(FIG_T2 FIG_T3, 0, 0);
  expect(FIG_T1 FIG_T3, 1, 1);
  expect(FIG_T1 FIG_T2 FIG_T3, 0, 0);
}
END_TEST

/* 004 Fig. 7 (reconstructed likewise): t1 has two commit nodes, W(x) (edge with t2) and W(y)
 * (edge with t3), but no cycle joins them: Thm 4.1 fails, Thm 4.3/4.6 proves atomicity. */
START_TEST(fig7_atomic) {
  expect("t1|begin|0\nt1|w(x)|1\nt1|w(y)|2\nt1|end|3\nt2|begin|4\nt2|r(x)|5\nt2|end|6\n"
         "t3|begin|7\nt3|r(y)|8\nt3|end|9\n",
         1, 1);
}
END_TEST

/* ---- reports and arguments ------------------------------------------------------------ */

START_TEST(report_contents) {
  const char *specs[] = {"commit-node", NULL};
  atom_session *s = tu_session(specs);
  atom_set_name(s, ATOM_SPACE_VAR, 1, "x");
  ck_assert_int_eq(tu_feed_std(s, "t1|begin|10\nt1|w(x)|11\nt1|w(x)|12\nt1|end|13\n"
                                  "t2|begin|20\nt2|w(x)|21\nt2|end|22\n",
                               NULL),
                   0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_str_eq(atom_report_kind(r), "commit-nodes");
  ck_assert_uint_eq(atom_report_txn_count(r), 2);
  uint64_t th, idx, loc;
  ck_assert_int_eq(atom_report_txn(r, 0, &th, &idx, &loc), 0);
  ck_assert_uint_eq(idx, 0); /* t1's BEGIN */
  ck_assert_uint_eq(loc, 10);
  ck_assert_int_eq(atom_report_txn(r, 1, &th, &idx, &loc), 0);
  ck_assert_uint_eq(loc, 20);
  ck_assert_uint_eq(atom_report_event_count(r), 4);
  atom_event ev;
  ck_assert_int_eq(atom_report_event(r, 0, &ev, &idx), 0);
  ck_assert_uint_eq(ev.kind, ATOM_WRITE);
  ck_assert_uint_eq(ev.loc, 11);
  ck_assert_int_eq(atom_report_event(r, 1, &ev, &idx), 0);
  ck_assert_uint_eq(ev.loc, 12);
  ck_assert_int_eq(atom_report_event(r, 2, &ev, &idx), 0);
  ck_assert_uint_eq(ev.loc, 21);
  ck_assert_str_eq(atom_report_message(r),
                   "t1's transaction at loc 10 (event 0) is not conflict-atomic: other transactions "
                   "can run between t1 wrote x at loc 11 (event 1) and t1 wrote x at loc 12 (event "
                   "2): the first conflicts with t2 wrote x at loc 21 (event 5), the second with "
                   "t2 wrote x at loc 21 (event 5), and these conflicts lie on a cycle that no "
                   "serial order has");
  /* the cycle: t1's first write to t2's write, then t2's write to t1's second write */
  ck_assert_uint_eq(atom_report_edge_count(r), 2);
  size_t from, to;
  uint32_t flags;
  ck_assert_int_eq(atom_report_edge(r, 0, &from, &to, &flags), 0);
  ck_assert(from == 0 && to == 2 && flags == 0);
  ck_assert_int_eq(atom_report_edge(r, 1, &from, &to, &flags), 0);
  ck_assert(from == 3 && to == 1 && flags == ATOM_EDGE_CLOSING);
  atom_session_free(s);

  /* Lock blocks as commit nodes: 000 (3), setXY. */
  s = tu_session(specs);
  ck_assert_int_eq(tu_feed_std(s, "t1|begin|0\nt1|acq(l)|1\nt1|w(x)|2\nt1|rel(l)|3\nt1|acq(l)|4\n"
                                  "t1|w(y)|5\nt1|rel(l)|6\nt1|end|7\nt2|begin|8\nt2|acq(l)|9\n"
                                  "t2|w(x)|10\nt2|rel(l)|11\nt2|acq(l)|12\nt2|w(y)|13\n"
                                  "t2|rel(l)|14\nt2|end|15\n",
                               NULL),
                   0);
  ck_assert_uint_ge(atom_report_count(s), 1);
  r = atom_report_get(s, 0);
  ck_assert(strstr(atom_report_message(r), "between t1 acquired l at loc 1 (event 1) and t1 "
                                           "acquired l at loc 4 (event 4)"));
  ck_assert_int_eq(atom_report_event(r, 0, &ev, &idx), 0);
  ck_assert_uint_eq(ev.kind, ATOM_ACQUIRE);
  atom_session_free(s);
}
END_TEST

START_TEST(deadlock_report) {
  /* 000 (10): lock-order inversion without a gate lock */
  const char *ex10 = "t1|begin|0\nt1|acq(l1)|1\nt1|acq(l2)|2\nt1|rel(l2)|3\nt1|w(x)|4\nt1|w(y)|5\n"
                     "t1|rel(l1)|6\nt1|end|7\nt2|begin|8\nt2|acq(l2)|9\nt2|acq(l1)|10\n"
                     "t2|rel(l1)|11\nt2|r(z)|12\nt2|rel(l2)|13\nt2|end|14\n";
  const char *specs[] = {"commit-node", NULL};
  atom_session *s = tu_session(specs);
  ck_assert_int_eq(tu_feed_std(s, ex10, NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_str_eq(atom_report_kind(r), "potential-deadlock");
  ck_assert_str_eq(atom_report_message(r),
                   "these lock operations can deadlock: t1 acquired l1 at loc 1 (event 1) and, "
                   "still holding it, t1 acquired l2 at loc 2 (event 2); t2 acquired l2 at loc 9 "
                   "(event 9) and, still holding it, t2 acquired l1 at loc 10 (event 10): in some "
                   "feasible schedule each waits for the next");
  ck_assert_uint_eq(atom_report_event_count(r), 4);
  /* the lock-order cycle as edges between acquisitions of one lock by two threads */
  ck_assert_uint_eq(atom_report_edge_count(r), 2);
  for (size_t i = 0; i < 2; i++) {
    size_t from, to;
    atom_event a, b;
    ck_assert_int_eq(atom_report_edge(r, i, &from, &to, NULL), 0);
    ck_assert_int_eq(atom_report_event(r, from, &a, NULL), 0);
    ck_assert_int_eq(atom_report_event(r, to, &b, NULL), 0);
    ck_assert(a.kind == ATOM_ACQUIRE && b.kind == ATOM_ACQUIRE);
    ck_assert(a.target == b.target && a.thread != b.thread);
  }
  atom_session_free(s);
  /* A gate lock prevents it; so does fork order. */
  verdict v = run_std("commit-node",
                      "t1|acq(g)|0\nt1|acq(l1)|1\nt1|acq(l2)|2\nt1|rel(l2)|3\nt1|rel(l1)|4\n"
                      "t1|rel(g)|5\nt2|acq(g)|6\nt2|acq(l2)|7\nt2|acq(l1)|8\nt2|rel(l1)|9\n"
                      "t2|rel(l2)|10\nt2|rel(g)|11\n");
  ck_assert(!v.deadlock);
  v = run_std("commit-node", "t1|acq(l1)|1\nt1|acq(l2)|2\nt1|rel(l2)|3\nt1|rel(l1)|4\n"
                             "t1|fork(t2)|5\nt2|acq(l2)|7\nt2|acq(l1)|8\nt2|rel(l1)|9\n"
                             "t2|rel(l2)|10\n");
  ck_assert(!v.deadlock);
  /* A join that waits for a thread needing a held lock. */
  v = run_std("commit-node", "t1|fork(t2)|0\nt2|acq(l)|1\nt2|rel(l)|2\nt1|acq(l)|3\n"
                             "t1|join(t2)|4\nt1|rel(l)|5\n");
  ck_assert(v.deadlock);
}
END_TEST

START_TEST(arguments) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "commit-node:mode=bogus"), ATOM_EINVAL);
  ck_assert(strstr(atom_last_error(), "mode must be one of conflict, view"));
  ck_assert_int_eq(atom_session_attach(s, "commit-node:colour=red"), ATOM_EINVAL);
  ck_assert_int_eq(atom_session_attach(s, "commit-node:max_edges=2147483648"), ATOM_EINVAL);
  ck_assert(strstr(atom_last_error(), "max_edges must be an integer in 1..2147483647"));
  ck_assert_int_eq(atom_session_attach(s, "commit-node:max_edges=0"), ATOM_EINVAL);
  ck_assert_int_eq(atom_session_attach(s, "commit-node:mode=conflict"), 0);
  ck_assert_int_eq(atom_session_attach(s, "commit-node:max_edges=2147483647"), 0);
  ck_assert_int_eq(atom_session_attach(s, "commit-node:mode=view"), 0);
  atom_session_free(s);
}
END_TEST

/* max_edges is exact: two transactions that write the same K variables need K inter-edges
 * (one per variable: the second direction repeats the pair), so the run completes at
 * max_edges=K, with the verdict of the default, and stops at K - 1. K is past several growth
 * steps of the edge array, which never grows beyond max_edges. */
static int run_max_edges(const char *text, size_t max_edges, uint64_t *edges) {
  char spec[64];
  snprintf(spec, sizeof spec, "commit-node:max_edges=%zu", max_edges);
  const char *specs[] = {spec, NULL};
  atom_session *s = tu_session(specs);
  int rc = tu_feed_std(s, text, NULL);
  atom_checker_stats st;
  memset(&st, 0, sizeof st);
  st.version = ATOM_CHECKER_STATS_VERSION;
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
  *edges = st.edges;
  if (rc == 0) ck_assert(!verdict_of(s).atomic);
  atom_session_free(s);
  return rc;
}

START_TEST(max_edges_exact) {
  enum { K = 3000 };
  size_t cap = 64 * K + 64, off = 0;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  uint64_t ev = 0;
  for (int t = 1; t <= 2; t++) {
    off += (size_t)snprintf(text + off, cap - off, "t%d|begin|%" PRIu64 "\n", t, ev++);
    for (int v = 0; v < K; v++)
      off += (size_t)snprintf(text + off, cap - off, "t%d|w(x%d)|%" PRIu64 "\n", t, v, ev++);
    off += (size_t)snprintf(text + off, cap - off, "t%d|end|%" PRIu64 "\n", t, ev++);
  }
  ck_assert(off < cap);
  uint64_t edges;
  ck_assert_int_eq(run_max_edges(text, K, &edges), 0);
  ck_assert_uint_eq(edges, K);
  ck_assert_int_eq(run_max_edges(text, K - 1, &edges), ATOM_ELIMIT);
  ck_assert(strstr(atom_last_error(), "more than 2999 inter-edges"));
  free(text);
}
END_TEST

/* Fork/join order: units ordered by it get no inter-edges; inside a transaction the
 * fork/join point orders the child against the transaction. */
START_TEST(fork_join_order) {
  /* t2 runs after t1's transaction (fork after END): no interleaving. */
  expect("t1|begin|0\nt1|w(x)|1\nt1|w(x)|2\nt1|end|3\nt1|fork(t2)|4\nt2|begin|5\nt2|w(x)|6\n"
         "t2|end|7\n",
         1, 1);
  /* joined before: likewise */
  expect("t1|fork(t2)|0\nt2|begin|1\nt2|w(x)|2\nt2|end|3\nt1|join(t2)|4\nt1|begin|5\n"
         "t1|w(x)|6\nt1|w(x)|7\nt1|end|8\n",
         1, 1);
  /* fork inside the transaction: the child's write may come before the read */
  expect("t1|begin|0\nt1|fork(t2)|1\nt2|w(x)|2\nt1|r(x)|3\nt1|end|4\n", 0, 0);
  /* the read before the fork cannot see the child */
  expect("t1|begin|0\nt1|r(x)|1\nt1|fork(t2)|2\nt2|w(x)|3\nt1|end|4\n", 1, 1);
}
END_TEST

/* Memory stays the trimmed trees: a long unit of repeated accesses keeps a few leaves. */
START_TEST(trimming_and_dedup) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "commit-node"), 0);
  ck_assert_int_eq(atom_begin(s, 1, 0), 0);
  for (int i = 0; i < 10000; i++) {
    ck_assert_int_eq(atom_read(s, 1, 7, 1), 0);
    ck_assert_int_eq(atom_write(s, 1, 7, 2), 0);
  }
  ck_assert_int_eq(atom_end(s, 1, 3), 0);
  /* 1000 identical transactions of another thread: two trees are kept */
  for (int i = 0; i < 1000; i++) {
    ck_assert_int_eq(atom_begin(s, 2, 10), 0);
    ck_assert_int_eq(atom_read(s, 2, 8, 11), 0);
    ck_assert_int_eq(atom_end(s, 2, 12), 0);
  }
  ck_assert_int_eq(atom_finish(s), 0);
  atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
  /* root + 2 reads + 3 writes, then 2 x (root + read) and 998 roots of dropped trees */
  ck_assert_uint_le(st.nodes, 6 + 4 + 998);
  ck_assert_uint_lt(st.peak_bytes, 1u << 20);
  atom_session_free(s);
}
END_TEST

/* Allocation failures: every failing allocation surfaces as ATOM_ENOMEM and the session stays
 * freeable (checked by ASan/valgrind for leaks). */
START_TEST(out_of_memory) {
  const char *text = FIG_T1 FIG_T2 FIG_T3 "t4|acq(l)|30\nt4|acq(m)|31\nt4|rel(m)|32\n"
                                          "t4|rel(l)|33\nt4|fork(t5)|34\nt5|w(x)|35\n"
                                          "t4|join(t5)|36\n";
  size_t n;
  atom_event *ev = std_events(text, &n);
  int saw_enomem = 0, completed = 0;
  for (long budget = 0; budget < 400 && !completed; budget++) {
    for (int view = 0; view < 2; view++) {
      tu_failing f = {.budget = -1, .once = 1};
      atom_options o;
      tu_failing_options(&o, &f);
      atom_session *s = NULL;
      ck_assert_int_eq(atom_session_new(&s, &o), 0);
      ck_assert_int_eq(atom_session_attach(s, view ? "commit-node:mode=view" : "commit-node"), 0);
      f.budget = budget;
      int rc = 0;
      for (size_t i = 0; i < n && !rc; i++) rc = atom_push(s, &ev[i]);
      if (!rc) rc = atom_finish(s);
      if (rc) {
        ck_assert_int_eq(rc, ATOM_ENOMEM);
        saw_enomem = 1;
      } else if (f.budget >= 0) {
        completed = 1;
      }
      atom_session_free(s);
    }
  }
  ck_assert(saw_enomem);
  free(ev);
}
END_TEST

/* ---- against the reference ---------------------------------------------------------- */

/* Units as the reference counts them (interleave.h): runs of a thread while it is inside a
 * transaction or holds a lock. *outside: accesses outside every such run. */
static size_t count_units(const atom_event *ev, size_t n, size_t *outside) {
  enum { MAXT = RT_MAX_THREADS + 2 };
  unsigned depth[MAXT] = {0}, held[MAXT] = {0};
  size_t units = 0;
  *outside = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned t = (unsigned)ev[i].thread % MAXT;
    int was = depth[t] || held[t];
    switch (ev[i].kind) {
    case ATOM_BEGIN: depth[t]++; break;
    case ATOM_END: depth[t]--; break;
    case ATOM_ACQUIRE: held[t]++; break;
    case ATOM_RELEASE: held[t]--; break;
    case ATOM_READ:
    case ATOM_WRITE:
      if (!was) ++*outside;
      break;
    default: break;
    }
    if (!was && (depth[t] || held[t])) units++;
  }
  return units;
}

typedef struct tally {
  int sync;             /* traces with synchronizing accesses: (a) is measured, not asserted */
  size_t cases, exact_cases, deadlock_skipped, truncated;
  size_t exact_false_c, exact_false_v; /* (a) false alarms on two transactions (sync only) */
  size_t multi_atomic_c, multi_false_c, multi_atomic_v, multi_false_v;
  size_t all_atomic_c, all_false_c, all_atomic_v, all_false_v;
  size_t dl_ref, dl_both, dl_ours;
} tally;

static void dump_trace(const atom_event *ev, size_t n, uint64_t seed) {
  fprintf(stderr, "seed %llu:\n", (unsigned long long)seed);
  rt_write_std(stderr, ev, n);
}

static void cross_check(const atom_event *ev, size_t n, uint64_t seed, tally *t) {
  il_options o = {100000};
  il_result res;
  if (il_check(ev, n, &o, &res) != 0) ck_abort_msg("il_check: %s", il_error());
  verdict c = run_events("commit-node", ev, n), v = run_events("commit-node:mode=view", ev, n);
  t->dl_ref += res.potential_deadlock;
  t->dl_ours += c.deadlock;
  t->dl_both += res.potential_deadlock && c.deadlock;
  if (res.truncated) {
    t->truncated++;
  } else if (res.potential_deadlock) {
    t->deadlock_skipped++;
  } else {
    t->cases++;
    size_t outside, units = count_units(ev, n, &outside);
    /* (b) never silent */
    if ((!res.conflict_atomic && c.atomic) || (!res.view_atomic && v.atomic)) {
      dump_trace(ev, n, seed);
      ck_abort_msg("silent: reference conflict %d view %d, checker conflict %d view %d",
                   res.conflict_atomic, res.view_atomic, c.atomic, v.atomic);
    }
    /* (a) exact for two transactions */
    if (units == 2 && outside == 0) {
      t->exact_cases++;
      t->exact_false_c += res.conflict_atomic && !c.atomic;
      t->exact_false_v += res.view_atomic && !v.atomic;
      if (!t->sync && (c.atomic != res.conflict_atomic || v.atomic != res.view_atomic)) {
        dump_trace(ev, n, seed);
        ck_abort_msg("two transactions: reference conflict %d view %d, checker %d %d",
                     res.conflict_atomic, res.view_atomic, c.atomic, v.atomic);
      }
    }
    t->all_atomic_c += res.conflict_atomic;
    t->all_false_c += res.conflict_atomic && !c.atomic;
    t->all_atomic_v += res.view_atomic;
    t->all_false_v += res.view_atomic && !v.atomic;
    if (units >= 3) {
      t->multi_atomic_c += res.conflict_atomic;
      t->multi_false_c += res.conflict_atomic && !c.atomic;
      t->multi_atomic_v += res.view_atomic;
      t->multi_false_v += res.view_atomic && !v.atomic;
    }
  }
  il_result_free(&res);
}

static double pct(size_t a, size_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static void random_rounds(int sync, tally *t, size_t rounds) {
  for (uint64_t seed = 1; seed <= rounds; seed++) {
    /* (i) general random traces */
    rt_params p;
    rt_params_random(&p, seed, 14);
    if (sync) rt_params_sync(&p, seed);
    atom_event *ev;
    size_t n;
    ck_assert_int_eq(rt_generate(&p, seed, &ev, &n), 0);
    cross_check(ev, n, seed, t);
    free(ev);
    /* (ii) only transactions and lock blocks (no access outside them), mostly two of them */
    rt_params_random(&p, seed ^ 0xabcdefull, 12);
    p.p_begin = 1.0;
    p.threads = 2 + (unsigned)(seed % 2);
    p.events = 5 + (size_t)(seed % 8);
    if (sync) rt_params_sync(&p, seed);
    ck_assert_int_eq(rt_generate(&p, seed * 7919u, &ev, &n), 0);
    cross_check(ev, n, seed, t);
    free(ev);
  }
}

/* The same claims on traces with synchronizing accesses (rt_params_sync): sync order only
 * removes interleavings, and commit-node must follow it exactly where it is exact. */
static void print_tally(const char *what, const tally *t);

START_TEST(random_against_reference) {
  tally t;
  size_t rounds = under_valgrind() ? 300 : 10000;
  const char *more = getenv("ATOM_CN_ROUNDS"); /* a longer soak: ATOM_CN_ROUNDS=100000 */
  if (more && atol(more) > 0) rounds = (size_t)atol(more);
  for (int sync = 0; sync < 2; sync++) {
    memset(&t, 0, sizeof t);
    t.sync = sync;
    random_rounds(sync, &t, rounds);
    print_tally(sync ? "commit-node vs reference, with sync accesses" : "commit-node vs reference",
                &t);
    ck_assert_uint_gt(t.exact_cases, rounds / 4);
  }
}
END_TEST

static void print_tally(const char *what, const tally *t) {
  fprintf(stderr,
          "%s: %zu traces compared (%zu with exactly two transactions: "
          "exact), %zu skipped for potential deadlock, %zu truncated\n"
          "  false alarms, traces with >= 3 units that count as transactions: conflict %zu/%zu "
          "(%.1f%%), view %zu/%zu (%.1f%%)\n"
          "  false alarms, all compared traces: conflict %zu/%zu (%.1f%%), view %zu/%zu "
          "(%.1f%%)\n"
          "  potential deadlock: reference %zu, goodlock %zu, both %zu\n"
          "  false alarms on two transactions: conflict %zu, view %zu\n",
          what, t->cases, t->exact_cases, t->deadlock_skipped, t->truncated, t->multi_false_c,
          t->multi_atomic_c, pct(t->multi_false_c, t->multi_atomic_c), t->multi_false_v,
          t->multi_atomic_v, pct(t->multi_false_v, t->multi_atomic_v), t->all_false_c,
          t->all_atomic_c, pct(t->all_false_c, t->all_atomic_c), t->all_false_v, t->all_atomic_v,
          pct(t->all_false_v, t->all_atomic_v), t->dl_ref, t->dl_ours, t->dl_both,
          t->exact_false_c, t->exact_false_v);
}

/* ---- support: periods and lock order -------------------------------------------------- */

START_TEST(periods_order) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__periods ps;
  atom__periods_init(&ps, &m);
  uint32_t a0, b0, a1, a2, c0, b1;
  ck_assert_int_eq(atom__periods_of(&ps, 0, &a0), 0);
  ck_assert_int_eq(atom__periods_fork(&ps, 0, 1), 0); /* 0 forks 1 */
  ck_assert_int_eq(atom__periods_of(&ps, 1, &b0), 0);
  ck_assert_int_eq(atom__periods_of(&ps, 0, &a1), 0);
  ck_assert_int_eq(atom__periods_of(&ps, 2, &c0), 0); /* a root */
  ck_assert(atom__periods_before(&ps, a0, b0));
  ck_assert(atom__periods_concurrent(&ps, a1, b0));
  ck_assert(atom__periods_concurrent(&ps, c0, b0));
  ck_assert_int_eq(atom__periods_join(&ps, 0, 1), 0); /* 0 joins 1 */
  ck_assert_int_eq(atom__periods_of(&ps, 0, &a2), 0);
  ck_assert(atom__periods_before(&ps, b0, a2));
  ck_assert(!atom__periods_concurrent(&ps, b0, a2));
  ck_assert(atom__periods_concurrent(&ps, c0, a2));
  ck_assert_int_eq(atom__periods_of(&ps, 1, &b1), 0);
  ck_assert_uint_eq(b1, b0);
  atom__periods_destroy(&ps);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

static int count_cycle(const atom__lo_edge *const *cyc, size_t n, void *payload) {
  (void)cyc;
  (void)n;
  ++*(int *)payload;
  return 0;
}

START_TEST(lockorder_cycles) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__lockorder lo;
  atom__lo_init(&lo, &m);
  atom__lo_site s = {0, 0, 0, ATOM__PERIOD_NONE};
  uint32_t held1[] = {1};
  atom__lo_site hs[] = {s};
  /* thread 0: 1 -> 2 (twice: deduplicated); thread 1: 2 -> 3; thread 2: 3 -> 1 */
  ck_assert_int_eq(atom__lo_acquire(&lo, 2, &s, held1, hs, 1), 0);
  ck_assert_int_eq(atom__lo_acquire(&lo, 2, &s, held1, hs, 1), 0);
  ck_assert_uint_eq(lo.n, 1);
  s.thread = 1;
  uint32_t held2[] = {2};
  ck_assert_int_eq(atom__lo_acquire(&lo, 3, &s, held2, hs, 1), 0);
  int found = 0;
  ck_assert_int_eq(atom__lo_find(&lo, NULL, 4, count_cycle, &found), 0);
  ck_assert_int_eq(found, 0);
  s.thread = 2;
  uint32_t held3[] = {3};
  ck_assert_int_eq(atom__lo_acquire(&lo, 1, &s, held3, hs, 1), 0);
  ck_assert_int_eq(atom__lo_find(&lo, NULL, 4, count_cycle, &found), 0);
  ck_assert_int_eq(found, 1);
  found = 0;
  ck_assert_int_eq(atom__lo_find(&lo, NULL, 2, count_cycle, &found), 0);
  ck_assert_int_eq(found, 0); /* a cycle of three needs max_len >= 3 */
  atom__lo_destroy(&lo);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

/* ---- plain words and cycle edges on the corpus ------------------------------------------ */

#ifndef ATOM_CORPUS_DIR
#define ATOM_CORPUS_DIR "tests/corpus"
#endif

/* Does message m speak in paper numbering or the old notation? @return what it found, or NULL.
 * "Thm", "§", "Fig.", "UP" and a digit, a word of four letters A/C ("ACAC": an interleaving
 * code), "t1@0" / "#12" (event positions in the old notation). */
static const char *paper_code(const char *m) {
  static const char *const words[] = {"Thm", "\xc2\xa7", "Fig.", "@", "#", NULL};
  for (size_t i = 0; words[i]; i++)
    if (strstr(m, words[i])) return words[i];
  for (const char *p = m; *p; p++) {
    if (p[0] == 'U' && p[1] == 'P' && p[2] >= '0' && p[2] <= '9') return "UPn";
    int start = p == m || !((p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= 'a' && p[-1] <= 'z') ||
                            (p[-1] >= '0' && p[-1] <= '9'));
    if (!start) continue;
    size_t k = 0;
    while ((p[k] == 'A' || p[k] == 'C') && k < 5) k++;
    char after = p[k];
    int end = !((after >= 'A' && after <= 'Z') || (after >= 'a' && after <= 'z') ||
                (after >= '0' && after <= '9'));
    if (k == 4 && end) return "an A/C code";
  }
  return NULL;
}

/* A commit-nodes cycle: every edge joins two conflicting events of different threads (accesses
 * of one variable, one a write; or acquisitions of one lock, the common-lock rule), or two
 * events the forest links (one thread, fork/join, sync order); each edge ends in the transaction
 * (or thread) where the next begins, and the last ends where the first begins. */
static void check_cycle(const atom_report *r, const char *where) {
  size_t n = atom_report_edge_count(r);
  ck_assert_msg(n >= 2, "%s: %s: a cycle of %zu edges", where, atom_report_message(r), n);
  for (size_t i = 0; i < n; i++) {
    size_t from, to, nfrom, nto;
    atom_event a, b, c;
    ck_assert_int_eq(atom_report_edge(r, i, &from, &to, NULL), 0);
    ck_assert_int_eq(atom_report_edge(r, (i + 1) % n, &nfrom, &nto, NULL), 0);
    ck_assert_int_eq(atom_report_event(r, from, &a, NULL), 0);
    ck_assert_int_eq(atom_report_event(r, to, &b, NULL), 0);
    ck_assert_int_eq(atom_report_event(r, nfrom, &c, NULL), 0);
    int access = (a.kind == ATOM_READ || a.kind == ATOM_WRITE) &&
                 (b.kind == ATOM_READ || b.kind == ATOM_WRITE);
    int conflict = a.thread != b.thread && a.target == b.target &&
                   ((access && (a.kind == ATOM_WRITE || b.kind == ATOM_WRITE)) ||
                    (a.kind == ATOM_ACQUIRE && b.kind == ATOM_ACQUIRE));
    int link = a.thread == b.thread || a.kind == ATOM_FORK || a.kind == ATOM_JOIN ||
               b.kind == ATOM_FORK || b.kind == ATOM_JOIN || a.kind == ATOM_BEGIN ||
               b.kind == ATOM_BEGIN || (a.flags & ATOM_FLAG_RELEASE) ||
               (b.flags & ATOM_FLAG_ACQUIRE) || (a.flags & ATOM_FLAG_ACQUIRE) ||
               (b.flags & ATOM_FLAG_RELEASE);
    ck_assert_msg(conflict || link, "%s: edge %zu joins events %zu and %zu, which do not conflict",
                  where, i, from, to);
    size_t tb = atom_report_event_txn(r, to), tc = atom_report_event_txn(r, nfrom);
    ck_assert_msg(tb != SIZE_MAX && tc != SIZE_MAX ? tb == tc : b.thread == c.thread,
                  "%s: edge %zu ends where edge %zu does not begin", where, i, (i + 1) % n);
  }
}

START_TEST(corpus_plain_words) {
  static const char *const specs[] = {"commit-node", "commit-node:mode=view", "block",
                                      "block:scope=all", "reduction", "reduction:lockset=eraser",
                                      "race-automata:sets=one", "race-automata:sets=prefix", NULL};
  char *files[512];
  size_t nfiles = tu_corpus_list(files, 512), messages = 0, cycles = 0;
  ck_assert_uint_gt(nfiles, 0);
  for (size_t f = 0; f < nfiles; f++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", ATOM_CORPUS_DIR, files[f]);
    char *text = tu_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    atom_session *s = tu_session(specs);
    ck_assert_int_eq(tu_feed_std(s, text, NULL), 0);
    for (size_t i = 0; i < atom_report_count(s); i++) {
      const atom_report *r = atom_report_get(s, i);
      const char *m = atom_report_message(r), *code = paper_code(m);
      ck_assert_msg(code == NULL, "%s: %s says \"%s\": %s", files[f], atom_report_checker(r), code, m);
      messages++;
      if (strcmp(atom_report_kind(r), "commit-nodes") == 0 && atom_report_edge_count(r)) {
        check_cycle(r, files[f]);
        cycles++;
      }
    }
    atom_session_free(s);
    free(text);
    free(files[f]);
  }
  ck_assert_uint_gt(messages, 20);
  ck_assert_uint_gt(cycles, 5);
}
END_TEST

START_TEST(cycle_through_three) {
  /* t1 -x- t2 -y- t3 -z- t1: the cycle passes through t2 and t3 */
  const char *specs[] = {"commit-node", NULL};
  atom_session *s = tu_session(specs);
  ck_assert_int_eq(tu_feed_std(s, "t1|begin|0\nt1|w(x)|1\nt2|begin|2\nt2|r(x)|3\nt2|w(y)|4\n"
                                  "t2|end|5\nt3|begin|6\nt3|r(y)|7\nt3|w(z)|8\nt3|end|9\n"
                                  "t1|r(z)|10\nt1|end|11\n",
                               NULL),
                   0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_uint_eq(atom_report_txn_count(r), 3);
  ck_assert_uint_eq(atom_report_edge_count(r), 3);
  check_cycle(r, "three transactions");
  /* in cycle order: t1's write of x, t2's read of x; t2's write of y, t3's read of y; t3's
   * write of z, t1's read of z */
  static const uint64_t at[3][2] = {{1, 3}, {4, 7}, {8, 10}};
  for (size_t i = 0; i < 3; i++) {
    size_t from, to;
    uint64_t a, b;
    ck_assert_int_eq(atom_report_edge(r, i, &from, &to, NULL), 0);
    ck_assert_int_eq(atom_report_event(r, from, NULL, &a), 0);
    ck_assert_int_eq(atom_report_event(r, to, NULL, &b), 0);
    ck_assert_msg(a == at[i][0] && b == at[i][1], "edge %zu: %llu -> %llu", i,
                  (unsigned long long)a, (unsigned long long)b);
  }
  atom_session_free(s);
}
END_TEST

/* Each predictive checker tells the session how far its end-of-run work is: at least its
 * last call (all of it done), which the session always forwards. */
typedef struct progress_log {
  uint64_t calls[4], done[4], total[4];
} progress_log;

static void on_progress(size_t ci, uint64_t done, uint64_t total, void *payload) {
  progress_log *p = payload;
  if (ci >= 4) return;
  p->calls[ci]++;
  ck_assert_uint_le(done, total ? total : done);
  p->done[ci] = done;
  p->total[ci] = total;
}

START_TEST(end_of_run_progress) {
  progress_log log;
  memset(&log, 0, sizeof log);
  atom_options o;
  ck_assert_int_eq(atom_options_init(&o, ATOM_OPTIONS_VERSION), 0);
  o.on_progress = on_progress;
  o.progress_payload = &log;
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, &o), 0);
  static const char *const specs[] = {"commit-node", "block", "reduction", "block:scope=all"};
  for (size_t i = 0; i < 4; i++) ck_assert_int_eq(atom_session_attach(s, specs[i]), 0);
  for (uint64_t i = 0; i < 50; i++) {
    uint64_t t = 1 + i % 3;
    ck_assert_int_eq(atom_begin(s, t, 10 * t), 0);
    ck_assert_int_eq(atom_read(s, t, i % 4, 10 * t + 1), 0);
    ck_assert_int_eq(atom_write(s, t, (i + 1) % 4, 10 * t + 2), 0);
    ck_assert_int_eq(atom_end(s, t, 10 * t + 3), 0);
  }
  ck_assert_int_eq(atom_finish(s), 0);
  for (size_t i = 0; i < 4; i++) {
    ck_assert_msg(log.calls[i] >= 1, "%s: no progress", specs[i]);
    ck_assert_msg(log.total[i] > 0 && log.done[i] == log.total[i], "%s: ended at %llu of %llu",
                  specs[i], (unsigned long long)log.done[i], (unsigned long long)log.total[i]);
  }
  atom_session_free(s);
}
END_TEST

START_TEST(lock_blocks_argument) { tu_check_lock_blocks_argument("commit-node"); }
END_TEST

Suite *atom_test_suite_commit_node(void) {
  Suite *s = suite_create("commit_node");
  TCase *p = tcase_create("papers");
  tcase_add_test(p, ws_examples);
  tcase_add_test(p, fig4_fig6);
  tcase_add_test(p, fig7_atomic);
  tcase_add_test(p, fork_join_order);
  tcase_add_test(p, max_edges_exact);
  suite_add_tcase(s, p);
  TCase *r = tcase_create("reports");
  tcase_add_test(r, report_contents);
  tcase_add_test(r, deadlock_report);
  tcase_add_test(r, corpus_plain_words);
  tcase_add_test(r, cycle_through_three);
  tcase_add_test(r, end_of_run_progress);
  tcase_add_test(r, arguments);
  tcase_add_test(r, lock_blocks_argument);
  tcase_add_test(r, trimming_and_dedup);
  tcase_add_test(r, out_of_memory);
  suite_add_tcase(s, r);
  TCase *x = tcase_create("reference");
  tcase_set_timeout(x, 600);
  tcase_add_test(x, random_against_reference);
  suite_add_tcase(s, x);
  TCase *u = tcase_create("support");
  tcase_add_test(u, periods_order);
  tcase_add_test(u, lockorder_cycles);
  suite_add_tcase(s, u);
  return s;
}
