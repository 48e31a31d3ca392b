/* tso (002, Enea & Farzan): the paper's programs, hand-made executions with commits, arguments,
 * and a brute-force reference.
 *
 * The reference is written from the conflict relation of doc/checkers/tso.md without the checker's code: it
 * enumerates every TSO execution of a small trace (each write committed later, FIFO per thread,
 * before the thread's next fence or lock operation and before the JOIN of the thread), builds
 * each execution's conflict relation pair by pair, lifts it to transactions and looks for a
 * cycle; it also builds the write contraction (002 §4.2) to decide SC-equivalence. Then:
 *  - mode=trace agrees exactly with "some execution has a transaction cycle";
 *  - robust=yes (trace) agrees exactly with "some execution has no SC-equivalent";
 *  - mode=execution, on single executions drawn from the enumeration (some commits left
 *    implicit before fences, some writes never committed), agrees with the reference on that
 *    execution, for both kinds of report;
 *  - fenced=yes on transaction-fenced traces: its SC part agrees with the SC reference
 *    (tests/unit/reference.c), its robustness part with the brute force, and it never reports
 *    a TSO-serializable trace.
 * Longer runs: ATOM_TSO_CASES (number of random traces), ATOM_TSO_EVENTS and ATOM_TSO_THREADS
 * (larger traces); ATOM_TSO_DUMP_MISSED prints fenced traces whose violation fenced=yes misses.
 * Also: the digraph's edge labels, and every allocation of a trace analysis failing once. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "randtrace.h"
#include "reference.h"
#include "inspect.h"
#include "cycle_check.h"
#include "util.h"

Suite *atom_test_suite_tso(void);

#define CHECK(c)                                                 \
  do {                                                           \
    if (!(c)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c); \
  } while (0)

static int under_valgrind(void) { return getenv("ATOM_UNDER_VALGRIND") != NULL; }

/* ---- helpers ---------------------------------------------------------------------------- */

static size_t count_kind(const atom_session *s, size_t ci, const char *kind) {
  size_t n = 0;
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const atom_report *r = atom_report_get(s, i);
    if (atom_report_checker_index(r) == ci && strcmp(atom_report_kind(r), kind) == 0) n++;
  }
  return n;
}

static const atom_report *first_of(const atom_session *s, const char *kind) {
  for (size_t i = 0; i < atom_report_count(s); i++)
    if (strcmp(atom_report_kind(atom_report_get(s, i)), kind) == 0) return atom_report_get(s, i);
  return NULL;
}

/* Run STD text through one checker spec; returns the session (finished). */
static atom_session *run_std(const char *spec, const char *text) {
  const char *specs[] = {spec, NULL};
  atom_session *s = tu_session(specs);
  int rc = tu_feed_std(s, text, NULL);
  ck_assert_msg(rc == 0, "%s: %s", spec, atom_last_error());
  return s;
}

static size_t kinds_of(const char *spec, const char *text, const char *kind) {
  atom_session *s = run_std(spec, text);
  size_t n = count_kind(s, 0, kind);
  atom_session_free(s);
  return n;
}

/* The atom_checker_status state of checker 0 (ATOM_CHECKER_*). */
static uint32_t state_of(atom_session *s) {
  atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
  ck_assert_int_eq(atom_checker_status_get(s, 0, &st), 0);
  return st.state;
}

static uint32_t state_after(const char *spec, const char *text) {
  atom_session *s = run_std(spec, text);
  uint32_t st = state_of(s);
  atom_session_free(s);
  return st;
}

/* One report's edges (cycle_check.h): two conflicting events each, chained through
 * transactions (reports without commits), exactly one closing edge, the last, ending at the report's event. In trace
 * order, except a link of the trace search oriented against it, which ends at a write of
 * another thread (the predicted execution commits that write after the link's source): a report
 * without such a link passes every check of cycle_check.h. *backward counts the links against
 * the trace order. @return NULL or what is wrong. */
static const char *tso_edges_wrong(const atom_report *r, size_t *backward) {
  for (size_t i = 0; i < atom_report_event_count(r); i++) {
    atom_event e;
    atom_report_event(r, i, &e, NULL);
    /* A commit belongs to the transaction of its write, but the session places a witness event
     * in a transaction by thread and index alone: a commit after its transaction ended, or of a
     * unary write, lands in another transaction or none, so execution reports (the only ones
     * with commits) are not checked for chaining. */
    if (e.kind == ATOM_COMMIT) return cc_check_edges(r, CC_ORDER | CC_CLOSING);
  }
  const char *why = cc_check_edges(r, CC_CLOSING | CC_CHAIN);
  if (why) return why;
  size_t back = 0;
  for (size_t i = 0; i < atom_report_edge_count(r); i++) {
    size_t from, to;
    atom_event a, b;
    uint64_t ia, ib;
    atom_report_edge(r, i, &from, &to, NULL);
    atom_report_event(r, from, &a, &ia);
    atom_report_event(r, to, &b, &ib);
    if (ia < ib) continue;
    if (b.kind != ATOM_WRITE || a.thread == b.thread)
      return "an edge against the trace order does not end at a write of another thread";
    back++;
  }
  if (backward) *backward += back;
  return back ? NULL : cc_check_edges(r, CC_ALL);
}

/* ---- 002 §1 Fig. 1: the task pool --------------------------------------------------------- */

/* Thread a takes from the head: [h = head; head = h + 1], then, under mutual exclusion in
 * intent, [if (head <= tail) { task = pool[h]; pool[h] = 0; }]; thread b takes from the tail
 * symmetrically. With head + 1 == tail there is one task. Under SC one of the two finds the
 * pool empty; under TSO both updates of head and tail can sit in the store buffers while the
 * other thread tests its condition, and both threads read and write the same pool slot. */
static const char *pool_tso_execution =
    "# both threads take the last task: their updates of head/tail are still buffered\n"
    "a|begin|1\na|r(head)|2\na|w(head)|3\na|end|4\n"
    "b|begin|10\nb|r(tail)|11\nb|w(tail)|12\nb|end|13\n"
    "a|begin|5\na|r(tail)|6\na|r(head)|7\na|r(pool)|8\na|w(pool)|9\na|end|10\n"
    "b|begin|14\nb|r(head)|15\nb|r(tail)|16\nb|r(pool)|17\nb|w(pool)|18\nb|end|19\n"
    "a|commit(head)|20\nb|commit(tail)|21\na|commit(pool)|22\nb|commit(pool)|23\n";

/* The same program under SC (every write committed at once): b sees the new head and finds
 * the pool empty. */
static const char *pool_sc_execution =
    "a|begin|1\na|r(head)|2\na|w(head)|3\na|commit(head)|3\na|end|4\n"
    "b|begin|10\nb|r(tail)|11\nb|w(tail)|12\nb|commit(tail)|12\nb|end|13\n"
    "a|begin|5\na|r(tail)|6\na|r(head)|7\na|r(pool)|8\na|w(pool)|9\na|commit(pool)|9\na|end|10\n"
    "b|begin|14\nb|r(head)|15\nb|r(tail)|16\nb|end|19\n";

/* The trace of the TSO execution: no commits. */
static const char *pool_trace =
    "a|begin|1\na|r(head)|2\na|w(head)|3\na|end|4\n"
    "b|begin|10\nb|r(tail)|11\nb|w(tail)|12\nb|end|13\n"
    "a|begin|5\na|r(tail)|6\na|r(head)|7\na|r(pool)|8\na|w(pool)|9\na|end|10\n"
    "b|begin|14\nb|r(head)|15\nb|r(tail)|16\nb|r(pool)|17\nb|w(pool)|18\nb|end|19\n";

START_TEST(fig1_task_pool) {
  /* TSO execution with head + 1 == tail: not TSO-serializable, and not SC-equivalent (002
   * Fig. 2: the program is not robust). */
  atom_session *s = run_std("tso:robust=yes", pool_tso_execution);
  ck_assert_uint_ge(count_kind(s, 0, "tso-cycle"), 1);
  ck_assert_uint_ge(count_kind(s, 0, "non-robust"), 1);
  const atom_report *r = first_of(s, "tso-cycle");
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "cycle"));
  atom_session_free(s);
  /* the default mode picks execution semantics as soon as a COMMIT comes */
  ck_assert_uint_ge(kinds_of("tso", pool_tso_execution, "tso-cycle"), 1);
  ck_assert_uint_ge(kinds_of("tso:mode=execution", pool_tso_execution, "tso-cycle"), 1);
  /* the SC execution of the program is serializable, under TSO and under SC */
  ck_assert_uint_eq(kinds_of("tso:robust=yes", pool_sc_execution, "tso-cycle"), 0);
  ck_assert_uint_eq(kinds_of("tso:robust=yes", pool_sc_execution, "non-robust"), 0);
  ck_assert_uint_eq(kinds_of("velodrome", pool_sc_execution, "conflict-cycle"), 0);
  /* the trace: some execution of it is not serializable (002 Prop. 2) */
  s = run_std("tso:mode=trace", pool_trace);
  ck_assert_uint_ge(count_kind(s, 0, "tso-cycle"), 1);
  r = first_of(s, "tso-cycle");
  /* the report names the undirected edges, their orientation and the buffered reads */
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "undirected edges oriented as marked"));
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "before"));
  ck_assert_uint_ge(atom_report_txn_count(r), 2);
  ck_assert_uint_ge(atom_report_event_count(r), 2);
  ck_assert_ptr_null(tso_edges_wrong(r, NULL));
  atom_session_free(s);
  ck_assert_uint_ge(kinds_of("tso", pool_trace, "tso-cycle"), 1); /* auto: no COMMIT */
  /* The trace read as an SC execution is serializable (Fig. 1 is SC-serializable). */
  ck_assert_uint_eq(kinds_of("velodrome", pool_trace, "conflict-cycle"), 0);
}
END_TEST

/* ---- 002 §4.2, after Thm 2: TSO-serializable, not robust / not SC-serializable ------------ */

/* Left: every event is a transaction; each thread writes one variable and reads the other. */
static const char *thm2_left = "t1|w(x)|1\nt1|r(y)|2\nt2|w(y)|3\nt2|r(x)|4\n";
/* Right: thread 2 is one transaction [r(x) w(y)]; the events of thread 1 come in between. */
static const char *thm2_right =
    "t2|begin|1\nt2|r(x)|2\nt1|w(x)|3\nt1|r(y)|4\nt2|w(y)|5\nt2|end|6\n";

START_TEST(thm2_programs) {
  /* left: TSO-serializable (no transaction cycle in any execution) but not robust */
  ck_assert_uint_eq(kinds_of("tso:mode=trace", thm2_left, "tso-cycle"), 0);
  ck_assert_uint_eq(state_after("tso:mode=trace", thm2_left), ATOM_CHECKER_COMPLETE);
  ck_assert_uint_eq(kinds_of("tso:mode=trace,robust=yes", thm2_left, "non-robust"), 1);
  /* the store-buffering execution itself: each read before the other thread's commit */
  const char *sb_exec = "t1|w(x)|1\nt1|r(y)|2\nt2|w(y)|3\nt2|r(x)|4\n"
                        "t1|commit(x)|5\nt2|commit(y)|6\n";
  ck_assert_uint_eq(kinds_of("tso:robust=yes", sb_exec, "tso-cycle"), 0);
  ck_assert_uint_eq(kinds_of("tso:robust=yes", sb_exec, "non-robust"), 1);
  /* a child reads x from memory while its parent's write of x is pending: the read merges into
   * the write's node of the write contraction, which the commit then reaches back */
  atom_session *s = run_std("tso:robust=yes", "t1|w(x)|1\nt1|fork(t2)|2\nt2|r(x)|3\n"
                                              "t1|commit(x)|4\n");
  const atom_report *r = first_of(s, "non-robust");
  ck_assert_ptr_nonnull(r);
  ck_assert_ptr_nonnull(strstr(atom_report_message(r),
                               "no SC-equivalent execution: t1 wrote x at loc 1 (event 0), then "
                               "t2 read x at loc 3 (event 2), then t1 committed x at loc 4 "
                               "(event 3), which commits the write of t1 wrote x at loc 1 "
                               "(event 0): the write and its commit cannot be one step"));
  ck_assert_uint_eq(atom_report_edge_count(r), 2);
  /* not CC_CHAIN: the commit closes the cycle on the write's own node, not on a transaction */
  ck_assert_ptr_null(cc_check_edges(r, CC_ORDER | CC_CLOSING));
  atom_session_free(s);
  /* right: TSO-serializable and robust, but not SC-serializable */
  ck_assert_uint_eq(kinds_of("tso:mode=trace,robust=yes", thm2_right, "tso-cycle"), 0);
  ck_assert_uint_eq(kinds_of("tso:mode=trace,robust=yes", thm2_right, "non-robust"), 0);
  ck_assert_uint_eq(kinds_of("velodrome", thm2_right, "conflict-cycle"), 1);
}
END_TEST

/* ---- hand-made executions with commits ----------------------------------------------------- */

START_TEST(executions_with_commits) {
  /* store buffering in transactions: both reads before both commits -> cycle */
  const char *sb = "t1|begin|0\nt1|w(x)|1\nt1|r(y)|2\nt1|end|3\n"
                   "t2|begin|4\nt2|w(y)|5\nt2|r(x)|6\nt2|end|7\n"
                   "t1|commit(x)|8\nt2|commit(y)|9\n";
  atom_session *s = run_std("tso:mode=execution", sb);
  ck_assert_uint_eq(count_kind(s, 0, "tso-cycle"), 1);
  const atom_report *r = first_of(s, "tso-cycle");
  ck_assert_uint_eq(atom_report_txn_count(r), 2);
  ck_assert_uint_eq(atom_report_event_index(r), 9); /* closed by the second commit */
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "t2 committed y at loc 9 (event 9)"));
  /* both conflicts with their events; the second commit closes the cycle */
  ck_assert_uint_eq(atom_report_edge_count(r), 2);
  ck_assert_ptr_null(cc_check_edges(r, CC_ALL));
  atom_session_free(s);
  /* the same with each commit right after its write: SC, serializable */
  const char *sc = "t1|begin|0\nt1|w(x)|1\nt1|commit(x)|1\nt1|r(y)|2\nt1|end|3\n"
                   "t2|begin|4\nt2|w(y)|5\nt2|commit(y)|5\nt2|r(x)|6\nt2|end|7\n";
  ck_assert_uint_eq(kinds_of("tso", sc, "tso-cycle"), 0);
  /* commits left to the fences that end the transactions: the same cycle as sb */
  const char *fenced = "t1|begin|0\nt1|w(x)|1\nt1|r(y)|2\n"
                       "t2|begin|4\nt2|w(y)|5\nt2|r(x)|6\nt1|fence|7\nt1|end|8\n"
                       "t2|fence|9\nt2|end|10\n";
  ck_assert_uint_eq(kinds_of("tso:mode=execution", fenced, "tso-cycle"), 1);
  /* message passing: x committed before t2 reads it, y after t2 read it (002 §1) */
  const char *mp = "t1|begin|0\nt1|w(x)|1\nt1|w(y)|2\nt1|end|3\nt1|commit(x)|4\n"
                   "t2|begin|5\nt2|r(y)|6\nt2|r(x)|7\nt2|end|8\nt1|commit(y)|9\n";
  ck_assert_uint_eq(kinds_of("tso", mp, "tso-cycle"), 1);
  /* TSO keeps w -> w and r -> r: this execution has an SC equivalent (robust) */
  ck_assert_uint_eq(kinds_of("tso:robust=yes", mp, "non-robust"), 0);
  /* a read served from its own buffer conflicts with no commit of another thread */
  const char *own = "t1|begin|0\nt1|w(x)|1\nt1|r(x)|2\n"
                    "t2|begin|3\nt2|w(x)|4\nt2|commit(x)|5\nt2|r(x)|6\nt2|end|7\n"
                    "t1|end|8\nt1|commit(x)|9\n";
  ck_assert_uint_eq(kinds_of("tso", own, "tso-cycle"), 0);
  /* ... but a read from memory does: t1 reads x after its own commit, then t2's commit and a
   * read of t2 of y written by t1 close a cycle */
  const char *mem = "t1|begin|0\nt1|w(x)|1\nt1|commit(x)|2\nt1|r(x)|3\n"
                    "t2|begin|4\nt2|w(x)|5\nt2|commit(x)|6\nt2|r(y)|7\nt2|end|8\n"
                    "t1|w(y)|9\nt1|end|10\nt1|commit(y)|11\n";
  ck_assert_uint_eq(kinds_of("tso", mem, "tso-cycle"), 1);
  /* w(x) then r(y) of one thread do not conflict: a write-only transaction may commit after a
   * later read-only one of its thread (002 §1) */
  const char *wr = "t1|w(x)|1\nt1|r(y)|2\nt2|begin|3\nt2|r(x)|4\nt2|w(y)|5\nt2|commit(y)|6\n"
                   "t2|end|7\nt1|commit(x)|8\n";
  ck_assert_uint_eq(kinds_of("tso", wr, "tso-cycle"), 0);
  ck_assert_uint_eq(kinds_of("velodrome", wr, "conflict-cycle"), 0);
  /* lock operations drain the buffer: the commit of x happens before rel(m) */
  const char *lk = "t1|begin|0\nt1|acq(m)|1\nt1|w(x)|2\nt1|rel(m)|3\nt1|end|4\n"
                   "t2|begin|5\nt2|acq(m)|6\nt2|r(x)|7\nt2|rel(m)|8\nt2|end|9\n";
  ck_assert_uint_eq(kinds_of("tso:mode=execution", lk, "tso-cycle"), 0);
  /* an ill-formed COMMIT (not the oldest pending write) is rejected by the session */
  {
    const char *specs[] = {"tso", NULL};
    atom_session *s2 = tu_session(specs);
    ck_assert_int_eq(atom_write(s2, 1, 10, 0), 0);
    ck_assert_int_eq(atom_write(s2, 1, 11, 0), 0);
    ck_assert_int_eq(atom_commit(s2, 1, 11, 0), ATOM_ENOPENDING);
    ck_assert_int_eq(atom_commit(s2, 1, 10, 0), 0);
    ck_assert_int_eq(atom_commit(s2, 1, 11, 0), 0);
    ck_assert_int_eq(atom_commit(s2, 1, 11, 0), ATOM_ENOPENDING);
    ck_assert_int_eq(atom_finish(s2), 0);
    ck_assert_uint_eq(atom_report_count(s2), 0);
    atom_session_free(s2);
  }
}
END_TEST

START_TEST(trace_mode_basics) {
  /* corpus store buffering and message passing: not TSO-serializable as traces */
  const char *sb = "t1|begin|0\nt1|w(x)|1\nt1|r(y)|2\nt1|end|3\n"
                   "t2|begin|4\nt2|w(y)|5\nt2|r(x)|6\nt2|end|7\n";
  atom_session *s = run_std("tso:mode=trace", sb);
  ck_assert_uint_eq(count_kind(s, 0, "tso-cycle"), 1);
  const atom_report *r = first_of(s, "tso-cycle");
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "undirected edges oriented as marked"));
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "the commit of t1 wrote x"));
  /* the whole cycle: the undirected edge it needs, oriented (t2's read of x before t1's commit
   * of x, against the trace order), and the directed edge every execution has (t1 read y before
   * t2 wrote it), which ends latest in the trace: the closing edge, where the report is made */
  ck_assert_uint_eq(atom_report_edge_count(r), 2);
  size_t back = 0;
  ck_assert_ptr_null(tso_edges_wrong(r, &back));
  ck_assert_uint_eq(back, 1);
  ck_assert_uint_eq(atom_report_event_index(r), 5);
  {
    size_t from, to;
    uint32_t fl;
    atom_event a, b2;
    uint64_t ia, ib;
    ck_assert_int_eq(atom_report_edge(r, 0, &from, &to, &fl), 0);
    atom_report_event(r, from, &a, &ia);
    atom_report_event(r, to, &b2, &ib);
    ck_assert(a.kind == ATOM_READ && ia == 6 && b2.kind == ATOM_WRITE && ib == 1 && fl == 0);
    ck_assert_int_eq(atom_report_edge(r, 1, &from, &to, &fl), 0);
    atom_report_event(r, from, &a, &ia);
    atom_report_event(r, to, &b2, &ib);
    ck_assert(a.kind == ATOM_READ && ia == 2 && b2.kind == ATOM_WRITE && ib == 5 &&
              fl == ATOM_EDGE_CLOSING);
  }
  atom_session_free(s);
  /* fences between the accesses make every edge directed: serializable */
  const char *f = "t1|begin|0\nt1|w(x)|1\nt1|fence|2\nt1|r(y)|3\nt1|end|4\n"
                  "t2|begin|5\nt2|w(y)|6\nt2|fence|7\nt2|r(x)|8\nt2|end|9\n";
  ck_assert_uint_eq(kinds_of("tso:mode=trace", f, "tso-cycle"), 0);
  /* a cycle of directed edges only (phase 1): reported at the event that closes it */
  const char *d = "t1|begin|0\nt1|r(x)|1\nt2|begin|2\nt2|w(x)|3\nt2|r(y)|4\nt2|end|5\n"
                  "t1|w(y)|6\nt1|end|7\n";
  s = run_std("tso:mode=trace", d);
  ck_assert_uint_eq(count_kind(s, 0, "tso-cycle"), 1);
  r = first_of(s, "tso-cycle");
  ck_assert_uint_eq(atom_report_event_index(r), 6);
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "directed edges"));
  ck_assert_ptr_null(cc_check_edges(r, CC_ALL));
  atom_session_free(s);
  /* buffered reads named in the report: t1 reads its own x (maybe from the buffer) */
  const char *b = "t1|begin|0\nt1|w(x)|1\nt1|r(x)|2\nt1|r(y)|3\nt1|end|4\n"
                  "t2|begin|5\nt2|w(y)|6\nt2|r(x)|7\nt2|end|8\n";
  s = run_std("tso:mode=trace", b);
  ck_assert_uint_eq(count_kind(s, 0, "tso-cycle"), 1);
  atom_session_free(s);
  /* COMMIT events are ignored by mode=trace (the trace of an execution, 002 §5) */
  const char *sbc = "t1|begin|0\nt1|w(x)|1\nt1|commit(x)|1\nt1|r(y)|2\nt1|end|3\n"
                    "t2|begin|4\nt2|w(y)|5\nt2|commit(y)|5\nt2|r(x)|6\nt2|end|7\n";
  ck_assert_uint_eq(kinds_of("tso:mode=trace", sbc, "tso-cycle"), 1);
  ck_assert_uint_eq(kinds_of("tso:mode=execution", sbc, "tso-cycle"), 0);
}
END_TEST

START_TEST(fenced_mode) {
  /* transaction-fenced store buffering: SC-unserializable -> reported by the SC part */
  const char *sb = "t1|begin|0\nt1|w(x)|1\nt2|begin|2\nt2|w(y)|3\nt1|r(y)|4\nt2|r(x)|5\n"
                   "t1|fence|6\nt1|end|7\nt2|fence|8\nt2|end|9\n";
  atom_session *s = run_std("tso:fenced=yes", sb);
  ck_assert_uint_ge(count_kind(s, 0, "tso-cycle") + count_kind(s, 0, "non-robust"), 1);
  atom_session_free(s);
  /* the fenced store buffering of 002 §4.2 as separate transactions: SC order w, r | w, r
   * with each transaction fenced is serializable and robust */
  const char *ok = "t1|begin|0\nt1|w(x)|1\nt1|fence|2\nt1|end|3\nt1|begin|4\nt1|r(y)|5\nt1|end|6\n"
                   "t2|begin|7\nt2|w(y)|8\nt2|fence|9\nt2|end|10\nt2|begin|11\nt2|r(x)|12\n"
                   "t2|end|13\n";
  ck_assert_uint_eq(atom_report_count(s = run_std("tso:fenced=yes", ok)), 0);
  atom_session_free(s);
  /* a trace that is not transaction-fenced is refused at finish */
  const char *specs[] = {"tso:fenced=yes", NULL};
  s = tu_session(specs);
  int rc = tu_feed_std(s, "t1|begin|0\nt1|w(x)|1\nt1|end|2\n", NULL);
  ck_assert_int_eq(rc, ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "fenced=yes"));
  atom_session_free(s);
  /* Message passing, fenced: serializable as an SC trace and robust, yet some TSO execution of
   * this trace has a transaction cycle. 002 Thm 3 is about programs (all their SC executions);
   * per trace, fenced=yes is sound but can miss this; the default analysis finds it. */
  const char *mp = "t1|begin|0\nt1|w(x)|1\nt1|w(y)|2\nt2|begin|3\nt2|r(y)|4\nt2|r(x)|5\n"
                   "t1|fence|6\nt1|end|7\nt2|end|8\n";
  ck_assert_uint_eq(atom_report_count(s = run_std("tso:fenced=yes", mp)), 0);
  atom_session_free(s);
  ck_assert_uint_eq(kinds_of("tso:mode=trace", mp, "tso-cycle"), 1);
}
END_TEST

START_TEST(arguments_and_bound) {
  const char *bad[] = {"tso:mode=sc", "tso:fenced=maybe", "tso:robust=1", "tso:max_work=0",
                       "tso:max_work=-3", "tso:max_work=x", "tso:mode=execution,fenced=yes",
                       "tso:unknown=1", NULL};
  for (size_t i = 0; bad[i]; i++) {
    atom_session *s = NULL;
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    ck_assert_msg(atom_session_attach(s, bad[i]) == ATOM_EINVAL, "%s accepted", bad[i]);
    atom_session_free(s);
  }
  const char *good[] = {"tso:mode=auto", "tso:mode=trace,fenced=no,robust=yes,max_work=5",
                        "tso:mode=execution,robust=no", "tso:fenced=yes", NULL};
  for (size_t i = 0; good[i]; i++) {
    atom_session *s = NULL;
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    ck_assert_msg(atom_session_attach(s, good[i]) == 0, "%s: %s", good[i], atom_last_error());
    atom_session_free(s);
  }
  /* a search cut short by max_work says so: the checker is INCOMPLETE, with no report (an
   * inconclusive search is not a violation) */
  const char *mp = "t1|begin|0\nt1|w(x)|1\nt1|w(y)|2\nt1|end|3\n"
                   "t2|begin|4\nt2|r(y)|5\nt2|r(x)|6\nt2|end|7\n";
  atom_session *s = run_std("tso:mode=trace,max_work=3", mp);
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
  ck_assert_int_eq(atom_checker_status_get(s, 0, &st), 0);
  ck_assert_uint_eq(st.state, ATOM_CHECKER_INCOMPLETE);
  ck_assert_uint_eq(st.stopped_at, 7);
  ck_assert_ptr_nonnull(strstr(st.reason, "max_work=3"));
  ck_assert_ptr_nonnull(strstr(st.reason, "only partly checked"));
  ck_assert_int_eq(atom_finish(s), 0);
  atom_session_free(s);
  /* the same trace with enough work is decided */
  ck_assert_uint_eq(state_after("tso:mode=trace", mp), ATOM_CHECKER_COMPLETE);
}
END_TEST

/* Long executions keep little: transactions that are complete, committed and without incoming
 * edges are collected (the graph is the velodrome one). */
START_TEST(execution_memory_flat) {
  const char *specs[] = {"tso:mode=execution,robust=yes", NULL};
  atom_session *s = tu_session(specs);
  uint64_t n = under_valgrind() ? 2000 : 200000;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t t = 1 + i % 4, x = 100 + i % 7, l = 200 + x % 3;
    CHECK(atom_begin(s, t, i) == 0);
    CHECK(atom_acquire(s, t, l, i) == 0);
    CHECK(atom_read(s, t, x, i) == 0);
    CHECK(atom_write(s, t, x, i) == 0);
    CHECK(atom_release(s, t, l, i) == 0);
    CHECK(atom_end(s, t, i) == 0);
  }
  ck_assert_int_eq(atom_finish(s), 0);
  atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
  ck_assert_uint_lt(st.nodes, 100);
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_session_free(s);
}
END_TEST


/* ---- the digraph's edge labels (added for this checker; velodrome does not use them) ---- */

START_TEST(digraph_edge_payloads) {
  atom__mem m;
  atom__mem_init(&m, &atom__system_allocator);
  atom__dg g;
  atom__dg_init(&g, &m, 0);
  atom__dg_set_edge_payload(&g, sizeof(uint64_t));
  atom__dg_node n[4];
  for (int i = 0; i < 4; i++) ck_assert_int_eq(atom__dg_add_node(&g, &n[i]), 0);
  uint64_t lb[] = {10, 11, 12, 13};
  ck_assert_int_eq(atom__dg_add_edge_labeled(&g, n[0], n[1], &lb[0]), 0);
  ck_assert_int_eq(atom__dg_add_edge_labeled(&g, n[1], n[2], &lb[1]), 0);
  ck_assert_int_eq(atom__dg_add_edge_labeled(&g, n[1], n[2], &lb[3]), 0); /* kept: the first */
  ck_assert_int_eq(atom__dg_add_edge(&g, n[2], n[3]), 0);                 /* zero label */
  ck_assert_uint_eq(*(const uint64_t *)atom__dg_edge_payload(&g, n[1], n[2]), 11);
  ck_assert_uint_eq(*(const uint64_t *)atom__dg_edge_payload(&g, n[2], n[3]), 0);
  ck_assert_ptr_null(atom__dg_edge_payload(&g, n[3], n[2]));
  /* 3 -> 0 closes 0 -> 1 -> 2 -> 3 */
  ck_assert_int_eq(atom__dg_add_edge_labeled(&g, n[3], n[0], &lb[2]), 1);
  const atom__dg_node *c;
  size_t k = atom__dg_cycle(&g, &c);
  ck_assert_uint_eq(k, 4);
  ck_assert(c[0] == n[0] && c[3] == n[3]);
  ck_assert_uint_eq(*(const uint64_t *)atom__dg_cycle_edge_payload(&g, 0), 10);
  ck_assert_uint_eq(*(const uint64_t *)atom__dg_cycle_edge_payload(&g, 1), 11);
  ck_assert_uint_eq(*(const uint64_t *)atom__dg_cycle_edge_payload(&g, 2), 0);
  ck_assert_ptr_null(atom__dg_cycle_edge_payload(&g, 3)); /* the closing edge: not inserted */
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  /* payloads survive the growth of the edge pool */
  atom__dg_node hub;
  ck_assert_int_eq(atom__dg_add_node(&g, &hub), 0);
  for (uint64_t i = 0; i < 300; i++) {
    atom__dg_node v;
    ck_assert_int_eq(atom__dg_add_node(&g, &v), 0);
    uint64_t x = 1000 + i;
    ck_assert_int_eq(atom__dg_add_edge_labeled(&g, hub, v, &x), 0);
    ck_assert_uint_eq(*(const uint64_t *)atom__dg_edge_payload(&g, hub, v), x);
  }
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  atom__dg_destroy(&g);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

/* ---- allocation failures in the trace analysis (mode=trace runs at finish) ---------------- */

/* One run with allocation fail_at failing; @return the number of allocations made. */
static long alloc_run(const char *spec, const char *text, long fail_at, int *bad) {
  tu_failing c = tu_failing_at(fail_at);
  atom_options o;
  tu_failing_options(&o, &c);
  atom_session *s = NULL;
  int rc = atom_session_new(&s, &o);
  if (rc == 0) rc = atom_session_attach(s, spec);
  if (rc == 0) {
    atom_trace_reader *r = NULL;
    rc = atom_trace_reader_open_memory(&r, text, strlen(text), "<alloc>");
    if (rc == 0) {
      rc = atom_trace_feed(s, r, 0, NULL, NULL, NULL);
      atom_trace_reader_free(r);
    }
    int f = atom_finish(s);
    /* a feed cut short leaves a transaction without its fence: fenced=yes refuses it */
    if (f == ATOM_EINVAL && rc == ATOM_ENOMEM && strstr(spec, "fenced")) f = 0;
    if (f != 0 && f != ATOM_ENOMEM) {
      *bad = 1;
      fprintf(stderr, "finish: %s: %s\n", atom_error_name(f), atom_last_error());
    }
    (void)atom_report_count(s);
  }
  if (rc != 0 && rc != ATOM_ENOMEM) {
    *bad = 1;
    fprintf(stderr, "run: %s: %s\n", atom_error_name(rc), atom_last_error());
  }
  atom_session_free(s);
  if (c.live != 0) *bad = 2;
  return c.calls;
}

START_TEST(allocation_failures) {
  const char *specs[] = {"tso:mode=trace,robust=yes", "tso:fenced=yes", "tso:robust=yes", NULL};
  const char *texts[] = {pool_trace, thm2_left, pool_tso_execution};
  for (size_t k = 0; specs[k]; k++) {
    const char *text = k == 1 ? "t1|begin|0\nt1|w(x)|1\nt2|begin|2\nt2|w(y)|3\nt1|r(y)|4\n"
                                "t2|r(x)|5\nt1|fence|6\nt1|end|7\nt2|fence|8\nt2|end|9\n"
                              : texts[k];
    int bad = 0;
    long total = alloc_run(specs[k], text, 0, &bad);
    ck_assert_int_eq(bad, 0);
    long step = under_valgrind() ? 1 + total / 40 : 1;
    for (long n = 1; n <= total; n += step) {
      alloc_run(specs[k], text, n, &bad);
      ck_assert_msg(bad == 0, "%s: failing allocation %ld of %ld: %s", specs[k], n, total,
                    bad == 2 ? "leak" : "unexpected error");
    }
  }
}
END_TEST

/* ---- the brute-force reference ---------------------------------------------------------------- */

/* A trace normalized by the session (dense ids, outermost BEGIN/END and lock pairs only). */
typedef struct ntrace {
  atom_ev *ev;
  size_t n;
  uint32_t nthreads;
} ntrace;

/* Normalize raw events through a session with the recording checker. */
static int normalize(const atom_event *raw, size_t n, ntrace *out) {
  atom_session *s = NULL;
  CHECK(atom_session_new(&s, NULL) == 0);
  CHECK(atom_session_attach_checker(s, &tu_recorder_checker, NULL) == 0);
  for (size_t i = 0; i < n; i++)
    if (atom_push(s, &raw[i]) != 0) {
      atom_session_free(s);
      return -1;
    }
  CHECK(atom_finish(s) == 0);
  tu_recorder *r = tu_recorder_of(s, 0);
  out->n = r->count;
  out->ev = malloc((r->count ? r->count : 1) * sizeof *out->ev);
  CHECK(out->ev != NULL);
  memcpy(out->ev, r->events, r->count * sizeof *out->ev);
  out->nthreads = 0;
  for (size_t i = 0; i < r->count; i++) {
    if (r->events[i].thread + 1 > out->nthreads) out->nthreads = r->events[i].thread + 1;
    if ((r->events[i].kind == ATOM_FORK || r->events[i].kind == ATOM_JOIN) &&
        r->events[i].target + 1 > out->nthreads)
      out->nthreads = r->events[i].target + 1;
  }
  atom_session_free(s);
  return 0;
}

static int is_drain_k(uint32_t k) {
  return k == ATOM_FENCE || k == ATOM_ACQUIRE || k == ATOM_RELEASE;
}

/* A step of an execution: a trace event (its index in the normalized trace) or the commit of a
 * write (the trace index of that write). */
typedef struct step {
  int commit;
  int i;
} step;

#define MAXT 8
#define MAXS 96

typedef struct verdict {
  int cycle;  /* the transaction graph has a cycle */
  int nonsc;  /* the write contraction has a cycle: no SC-equivalent execution */
} verdict;

/* Cycle in a directed graph given as an adjacency matrix over n nodes. */
static int has_cycle(const unsigned char *adj, int n) {
  int color[2 * MAXS + 2];
  int stack[2 * MAXS + 2], it[2 * MAXS + 2];
  for (int i = 0; i < n; i++) color[i] = 0;
  for (int r = 0; r < n; r++) {
    if (color[r]) continue;
    int sp = 0;
    stack[sp] = r;
    it[sp] = 0;
    color[r] = 1;
    sp = 1;
    while (sp) {
      int v = stack[sp - 1];
      if (it[sp - 1] < n) {
        int w = it[sp - 1]++;
        if (!adj[v * n + w]) continue;
        if (color[w] == 1) return 1;
        if (color[w] == 0) {
          color[w] = 1;
          stack[sp] = w;
          it[sp] = 0;
          sp++;
        }
        continue;
      }
      color[v] = 2;
      sp--;
    }
  }
  return 0;
}

/* Evaluate one execution of trace T given by its steps: the conflict relation of doc/checkers/tso.md, pair by
 * pair. */
static verdict evaluate(const ntrace *T, const step *st, int ns) {
  /* per step: kind, thread, target, transaction, served, buffered, write step (commits) */
  int kind[MAXS], thr[MAXS], tgt[MAXS], txn[MAXS], served[MAXS], bufd[MAXS], wstep[MAXS];
  int node[MAXS];
  int txn_of_trace[MAXS];
  int open[64];
  int ntx = 0;
  int pos_of_trace[MAXS];
  for (size_t i = 0; i < T->n; i++) txn_of_trace[i] = -1, pos_of_trace[i] = -1;
  for (int t = 0; t < 64; t++) open[t] = -1;
  /* transactions follow the trace */
  for (size_t i = 0; i < T->n; i++) {
    const atom_ev *e = &T->ev[i];
    if (e->kind == ATOM_BEGIN) {
      open[e->thread] = ntx++;
    } else if (e->kind == ATOM_END) {
      open[e->thread] = -1;
    } else {
      txn_of_trace[i] = open[e->thread] >= 0 ? open[e->thread] : ntx++;
    }
  }
  /* pending writes per (thread, var) and "written since the last drain" */
  int pend[MAXT][16], since[MAXT][16];
  memset(pend, 0, sizeof pend);
  memset(since, 0, sizeof since);
  for (int s = 0; s < ns; s++) {
    const atom_ev *e = &T->ev[st[s].i];
    thr[s] = (int)e->thread;
    tgt[s] = (int)e->target;
    txn[s] = txn_of_trace[st[s].i];
    served[s] = bufd[s] = 0;
    wstep[s] = -1;
    if (st[s].commit) {
      kind[s] = ATOM_COMMIT;
      wstep[s] = pos_of_trace[st[s].i];
      pend[thr[s]][tgt[s]]--;
      continue;
    }
    kind[s] = (int)e->kind;
    pos_of_trace[st[s].i] = s;
    if (e->kind == ATOM_READ) {
      served[s] = pend[thr[s]][tgt[s]] > 0;
      bufd[s] = since[thr[s]][tgt[s]];
    } else if (e->kind == ATOM_WRITE) {
      pend[thr[s]][tgt[s]]++;
      since[thr[s]][tgt[s]] = 1;
    } else if (is_drain_k(e->kind)) {
      memset(since[thr[s]], 0, sizeof since[thr[s]]);
    }
  }
  /* nodes of the write contraction: a commit joins its write */
  for (int s = 0; s < ns; s++) node[s] = kind[s] == ATOM_COMMIT ? wstep[s] : s;
  static unsigned char tadj[(2 * MAXS + 2) * (2 * MAXS + 2)];
  static unsigned char radj[MAXS * MAXS];
  memset(tadj, 0, (size_t)ntx * (size_t)ntx);
  memset(radj, 0, (size_t)ns * (size_t)ns);
  for (int i = 0; i < ns; i++) {
    if (kind[i] == ATOM_BEGIN || kind[i] == ATOM_END) continue;
    for (int j = i + 1; j < ns; j++) {
      if (kind[j] == ATOM_BEGIN || kind[j] == ATOM_END) continue;
      int tso = 0, po = 0; /* TSO conflict; TSO-po conflict */
      if (thr[i] == thr[j]) {
        if (kind[j] == ATOM_COMMIT) {
          tso = po = wstep[j] == i;
        } else if (kind[i] == ATOM_COMMIT) {
          tso = po = is_drain_k((uint32_t)kind[j]);
        } else {
          po = 1;
          tso = 1;
          if (kind[i] == ATOM_WRITE && kind[j] == ATOM_READ && tgt[i] != tgt[j]) tso = 0;
          if (kind[i] == ATOM_READ && bufd[i] && kind[j] == ATOM_READ && tgt[i] != tgt[j]) tso = 0;
        }
      } else {
        int mi = kind[i] == ATOM_READ || kind[i] == ATOM_COMMIT;
        int mj = kind[j] == ATOM_READ || kind[j] == ATOM_COMMIT;
        if (mi && mj && tgt[i] == tgt[j]) {
          if (kind[i] == ATOM_COMMIT && kind[j] == ATOM_COMMIT) tso = 1;
          else if (kind[i] == ATOM_COMMIT) tso = !served[j];
          else if (kind[j] == ATOM_COMMIT) tso = !served[i];
        }
        int li = kind[i] == ATOM_ACQUIRE || kind[i] == ATOM_RELEASE;
        int lj = kind[j] == ATOM_ACQUIRE || kind[j] == ATOM_RELEASE;
        if (li && lj && tgt[i] == tgt[j]) tso = 1;
        if (kind[i] == ATOM_FORK && tgt[i] == thr[j]) tso = 1;
        if (kind[j] == ATOM_JOIN && tgt[j] == thr[i]) tso = 1;
        po = tso;
      }
      if (tso && txn[i] != txn[j]) tadj[txn[i] * ntx + txn[j]] = 1;
      if (po && node[i] != node[j]) radj[node[i] * ns + node[j]] = 1;
    }
  }
  verdict v;
  v.cycle = has_cycle(tadj, ntx);
  v.nonsc = has_cycle(radj, ns);
  return v;
}

/* Enumerate every execution of T: commits FIFO per thread, before the thread's next drain and
 * before its JOIN, all eventually committed. Adjacent commits of different threads and
 * variables are taken in thread order only (their order changes nothing). */
typedef struct enumr {
  const ntrace *T;
  step st[MAXS];
  int ns;
  int q[MAXT][MAXS]; /* pending writes (trace indices) */
  int qh[MAXT], qt[MAXT];
  long count, limit;
  int any_cycle, any_nonsc;
  /* executions kept for the mode=execution check */
  step (*keep)[MAXS];
  int *keep_n;
  int nkeep, keep_cap;
  long keep_every;
} enumr;

static void enum_rec(enumr *E, size_t pos) {
  if (E->count > E->limit) return;
  const ntrace *T = E->T;
  int all_done = pos == T->n;
  for (int t = 0; t < MAXT && all_done; t++) all_done = E->qh[t] == E->qt[t];
  if (all_done) {
    E->count++;
    verdict v = evaluate(T, E->st, E->ns);
    E->any_cycle |= v.cycle;
    E->any_nonsc |= v.nonsc;
    if (E->nkeep < E->keep_cap && (E->count % E->keep_every) == 0) {
      memcpy(E->keep[E->nkeep], E->st, (size_t)E->ns * sizeof(step));
      E->keep_n[E->nkeep++] = E->ns;
    }
    return;
  }
  if (E->ns >= MAXS) return;
  /* commit the oldest pending write of some thread */
  for (int t = 0; t < MAXT; t++) {
    if (E->qh[t] == E->qt[t]) continue;
    int w = E->q[t][E->qh[t]];
    if (E->ns && E->st[E->ns - 1].commit) {
      const atom_ev *p = &T->ev[E->st[E->ns - 1].i];
      if ((int)p->thread > t && p->target != T->ev[w].target) continue;
    }
    E->st[E->ns++] = (step){1, w};
    E->qh[t]++;
    enum_rec(E, pos);
    E->qh[t]--;
    E->ns--;
  }
  if (pos < T->n) {
    const atom_ev *e = &T->ev[pos];
    if (is_drain_k(e->kind) && E->qh[e->thread] != E->qt[e->thread]) return;
    if (e->kind == ATOM_JOIN && E->qh[e->target] != E->qt[e->target]) return;
    E->st[E->ns++] = (step){0, (int)pos};
    if (e->kind == ATOM_WRITE) E->q[e->thread][E->qt[e->thread]++] = (int)pos;
    enum_rec(E, pos + 1);
    if (e->kind == ATOM_WRITE) E->qt[e->thread]--;
    E->ns--;
  }
}

/* Push events with keys id + 1; steps select trace events and commits; drop[] (may be NULL)
 * marks commits left implicit or never made. */
static void push_steps(atom_session *s, const ntrace *T, const step *st, int ns,
                       const unsigned char *drop) {
  for (int k = 0; k < ns; k++) {
    if (drop && drop[k]) continue;
    const atom_ev *e = &T->ev[st[k].i];
    atom_event x = {st[k].commit ? (uint32_t)ATOM_COMMIT : e->kind, 0, (uint64_t)e->thread + 1,
                    0, (uint64_t)k};
    if (x.kind != ATOM_BEGIN && x.kind != ATOM_END && x.kind != ATOM_FENCE)
      x.target = (uint64_t)e->target + 1;
    int rc = atom_push(s, &x);
    ck_assert_msg(rc == 0, "push: %s", atom_last_error());
  }
}

static void push_trace(atom_session *s, const ntrace *T) {
  step st[MAXS];
  for (size_t i = 0; i < T->n; i++) st[i] = (step){0, (int)i};
  push_steps(s, T, st, (int)T->n, NULL);
}

typedef struct stats {
  long cases, violations, nonrobust, executions, exec_checked, skipped, fenced_cases,
      fenced_missed;
  long reports, backward; /* reports whose edges were checked; of them with a link backward */
} stats;

static void dump_trace(const ntrace *T) {
  static const char *const op[] = {"?", "r", "w", "acq", "rel", "fork", "join", "begin", "end", "fence", "commit"};
  for (size_t i = 0; i < T->n; i++) {
    const atom_ev *e = &T->ev[i];
    if (e->kind == ATOM_BEGIN || e->kind == ATOM_END || e->kind == ATOM_FENCE)
      fprintf(stderr, "t%u|%s|%zu\n", e->thread, op[e->kind], i);
    else if (e->kind == ATOM_FORK || e->kind == ATOM_JOIN)
      fprintf(stderr, "t%u|%s(t%u)|%zu\n", e->thread, op[e->kind], e->target, i);
    else if (e->kind == ATOM_ACQUIRE || e->kind == ATOM_RELEASE)
      fprintf(stderr, "t%u|%s(l%u)|%zu\n", e->thread, op[e->kind], e->target, i);
    else
      fprintf(stderr, "t%u|%s(v%u)|%zu\n", e->thread, op[e->kind], e->target, i);
  }
}

/* Every report of a session passes tso_edges_wrong; counted in S. */
static void check_edges(const atom_session *s, uint64_t seed, stats *S) {
  for (size_t k = 0; k < atom_report_count(s); k++) {
    const atom_report *r = atom_report_get(s, k);
    size_t back = 0;
    const char *why = tso_edges_wrong(r, &back);
    ck_assert_msg(!why, "seed %llu: %s report: %s (%s)", (unsigned long long)seed,
                  atom_report_kind(r), why, atom_report_message(r));
    S->reports++;
    S->backward += back > 0;
  }
}

/* One normalized trace against the reference. */
static void check_trace(const ntrace *T, uint64_t seed, stats *S, int fenced) {
  size_t nw = 0;
  for (size_t i = 0; i < T->n; i++) nw += T->ev[i].kind == ATOM_WRITE;
  if (T->n + nw > MAXS || T->nthreads > MAXT || nw > 7) {
    S->skipped++;
    return;
  }
  for (size_t i = 0; i < T->n; i++)
    if ((T->ev[i].kind == ATOM_READ || T->ev[i].kind == ATOM_WRITE) && T->ev[i].target >= 16) {
      S->skipped++;
      return;
    }
  static step keep[8][MAXS];
  static int keep_n[8];
  enumr *E = calloc(1, sizeof *E);
  CHECK(E != NULL);
  E->T = T;
  E->limit = under_valgrind() ? 3000 : 40000;
  E->keep = keep;
  E->keep_n = keep_n;
  E->keep_cap = 8;
  E->keep_every = 1 + (long)(seed % 7);
  enum_rec(E, 0);
  if (E->count > E->limit) {
    S->skipped++;
    free(E);
    return;
  }
  S->cases++;
  S->executions += E->count;
  S->violations += E->any_cycle;
  S->nonrobust += E->any_nonsc;

  if (!fenced) {
    /* mode=trace (and robust=yes) against every execution */
    const char *specs[] = {"tso:mode=trace,robust=yes", NULL};
    atom_session *s = tu_session(specs);
    push_trace(s, T);
    ck_assert_int_eq(atom_finish(s), 0);
    check_edges(s, seed, S);
    size_t cyc = count_kind(s, 0, "tso-cycle"), nr = count_kind(s, 0, "non-robust");
    if ((cyc > 0) != E->any_cycle || (nr > 0) != E->any_nonsc) dump_trace(T);
    ck_assert_msg(state_of(s) == ATOM_CHECKER_COMPLETE, "seed %llu: bound reached",
                  (unsigned long long)seed);
    ck_assert_msg((cyc > 0) == E->any_cycle, "seed %llu: trace mode says %s, reference %s",
                  (unsigned long long)seed, cyc ? "cycle" : "none",
                  E->any_cycle ? "cycle" : "none");
    ck_assert_msg((nr > 0) == E->any_nonsc, "seed %llu: robust says %s, reference %s",
                  (unsigned long long)seed, nr ? "non-robust" : "robust",
                  E->any_nonsc ? "non-robust" : "robust");
    atom_session_free(s);
  } else {
    /* fenced=yes: the SC part is SC-serializability, the robustness part is exact, and every
     * report is a real violation */
    S->fenced_cases++;
    const char *specs[] = {"tso:fenced=yes", NULL};
    atom_session *s = tu_session(specs);
    push_trace(s, T);
    int rc = atom_finish(s);
    check_edges(s, seed, S);
    ck_assert_msg(rc == 0, "seed %llu: %s", (unsigned long long)seed, atom_last_error());
    size_t cyc = count_kind(s, 0, "tso-cycle"), nr = count_kind(s, 0, "non-robust");
    atom_session_free(s);
    atom_event raw[MAXS];
    for (size_t i = 0; i < T->n; i++) {
      const atom_ev *e = &T->ev[i];
      raw[i] = (atom_event){e->kind, 0, (uint64_t)e->thread + 1, 0, i};
      if (e->kind != ATOM_BEGIN && e->kind != ATOM_END && e->kind != ATOM_FENCE)
        raw[i].target = (uint64_t)e->target + 1;
    }
    int scser = ref_conflict_serializable(raw, T->n, NULL);
    ck_assert_int_ge(scser, 0);
    ck_assert_msg((cyc > 0) == (scser == 0), "seed %llu: fenced SC part %zu, reference %d",
                  (unsigned long long)seed, cyc, scser);
    ck_assert_msg((nr > 0) == E->any_nonsc, "seed %llu: fenced robustness", (unsigned long long)seed);
    ck_assert_msg(!(cyc || nr) || E->any_cycle, "seed %llu: fenced=yes reported a serializable trace",
                  (unsigned long long)seed);
    if (E->any_cycle && !(cyc || nr)) {
      S->fenced_missed++;
      if (getenv("ATOM_TSO_DUMP_MISSED") && S->fenced_missed < 3) dump_trace(T);
    }
  }

  /* mode=execution on single executions, some commits left implicit, trailing ones dropped */
  for (int k = 0; k < E->nkeep; k++) {
    step *st = keep[k];
    int ns = keep_n[k];
    unsigned char drop[MAXS];
    memset(drop, 0, sizeof drop);
    rt_rng r;
    rt_rng_seed(&r, seed * 31 + (uint64_t)k);
    /* commits right before a drain of their thread, or the JOIN of it, are implied */
    for (int p = 0; p < ns; p++) {
      if (st[p].commit) continue;
      const atom_ev *e = &T->ev[st[p].i];
      uint32_t owner;
      if (is_drain_k(e->kind)) owner = e->thread;
      else if (e->kind == ATOM_JOIN) owner = e->target;
      else continue;
      if (!rt_rng_chance(&r, 0.5)) continue;
      for (int q = p - 1; q >= 0 && st[q].commit && T->ev[st[q].i].thread == owner; q--) drop[q] = 1;
    }
    /* commits at the very end: never made (the reference sees the shorter execution) */
    int ns_eval = ns;
    if (rt_rng_chance(&r, 0.5))
      while (ns_eval > 0 && st[ns_eval - 1].commit) drop[--ns_eval] = 1;
    verdict v = evaluate(T, st, ns_eval);
    const char *specs[] = {"tso:mode=execution,robust=yes", NULL};
    atom_session *s = tu_session(specs);
    push_steps(s, T, st, ns, drop);
    ck_assert_int_eq(atom_finish(s), 0);
    check_edges(s, seed, S);
    size_t cyc = count_kind(s, 0, "tso-cycle"), nr = count_kind(s, 0, "non-robust");
    if ((cyc > 0) != v.cycle || (nr > 0) != v.nonsc) {
      dump_trace(T);
      for (int q = 0; q < ns; q++)
        fprintf(stderr, "%s%s%d", q ? " " : "steps: ", st[q].commit ? (drop[q] ? "c!" : "c") : "",
                st[q].i);
      fprintf(stderr, " (evaluated %d)\n", ns_eval);
    }
    ck_assert_msg((cyc > 0) == v.cycle, "seed %llu execution %d: checker %zu, reference %d",
                  (unsigned long long)seed, k, cyc, v.cycle);
    ck_assert_msg((nr > 0) == v.nonsc, "seed %llu execution %d: non-robust %zu, reference %d",
                  (unsigned long long)seed, k, nr, v.nonsc);
    atom_session_free(s);
    S->exec_checked++;
  }
  free(E);
}

/* Small random traces: 2-3 threads, 1-3 variables, fences, locks, fork/join, nesting; with
 * @p unary, no transactions at all. */
static int small_trace_of(uint64_t seed, ntrace *T, int unary) {
  rt_params p;
  rt_rng r;
  rt_rng_seed(&r, seed);
  rt_params_default(&p);
  /* ATOM_TSO_EVENTS / ATOM_TSO_THREADS: larger traces for longer runs */
  const char *ev_env = getenv("ATOM_TSO_EVENTS"), *th_env = getenv("ATOM_TSO_THREADS");
  size_t max_ev = ev_env ? (size_t)atol(ev_env) : 13;
  unsigned max_th = th_env ? (unsigned)atoi(th_env) : 3;
  if (max_ev < 7) max_ev = 7;
  if (max_th < 2 || max_th > MAXT) max_th = 3;
  p.threads = 2 + (unsigned)rt_rng_below(&r, max_th - 1);
  p.vars = 1 + (unsigned)rt_rng_below(&r, 3);
  p.locks = (unsigned)rt_rng_below(&r, 2);
  p.events = 6 + (size_t)rt_rng_below(&r, max_ev - 5);
  p.p_fence = rt_rng_chance(&r, 0.6) ? 0.15 : 0.0;
  p.p_lock = p.locks ? 0.1 : 0.0;
  p.p_fork = 0.15;
  p.p_join = 0.15;
  p.p_begin = unary ? 0.0 : 0.5;
  p.p_end = 0.3;
  p.p_write = ev_env ? 0.3 : 0.5;
  atom_event *raw = NULL;
  size_t n = 0;
  if (rt_generate(&p, seed, &raw, &n) != 0) return -1;
  int rc = normalize(raw, n, T);
  free(raw);
  return rc;
}

enum { BF_MIXED, BF_UNARY, BF_FENCED };
static int fenced_trace(uint64_t seed, ntrace *T);

/* Compare the checker with the brute force on random small traces of one shape: BF_MIXED,
 * BF_UNARY (no transactions) or BF_FENCED (transaction-fenced, checked with fenced=yes too).
 * Seeds seed0, seed0 + 1, ...; ATOM_TSO_CASES overrides the count. @return the count. */
static long brute_force_run(uint64_t seed0, long cases, int shape, stats *S) {
  const char *env = getenv("ATOM_TSO_CASES");
  if (env) cases = atol(env);
  memset(S, 0, sizeof *S);
  for (long i = 0; i < cases; i++) {
    ntrace T;
    uint64_t seed = seed0 + (uint64_t)i;
    int rc = shape == BF_FENCED ? fenced_trace(seed, &T)
                                : small_trace_of(seed, &T, shape == BF_UNARY);
    if (rc != 0) continue;
    check_trace(&T, seed, S, shape == BF_FENCED);
    free(T.ev);
  }
  return cases;
}

/* atom_env_commit_source: a plugin checker told, at each COMMIT, which WRITE it commits (the
 * thread's oldest pending one), and ATOM_EINVAL at any other event. */
typedef struct source_probe {
  atom_env *env;
  atom_ev got[4];
  int n, other_ok;
} source_probe;

static source_probe probe;

static int probe_create(void **self, atom_env *env) {
  memset(&probe, 0, sizeof probe);
  probe.env = env;
  *self = &probe;
  return 0;
}

static int probe_event(void *self, const atom_ev *ev) {
  source_probe *p = self;
  atom_ev w;
  int rc = atom_env_commit_source(p->env, &w);
  if (ev->kind != ATOM_COMMIT) {
    p->other_ok += rc == ATOM_EINVAL;
    return 0;
  }
  if (rc == 0 && p->n < 4) p->got[p->n++] = w;
  return 0;
}

static void probe_destroy(void *self) { (void)self; }

static const atom_checker source_probe_checker = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) |
                  ATOM_KIND_BIT(ATOM_FENCE) | ATOM_KIND_BIT(ATOM_COMMIT),
    .name = "source-probe",
    .summary = "test",
    .properties = ATOM_CHECKER_PROP_STORE_BUFFER,
    .create = probe_create,
    .on_event = probe_event,
    .destroy = probe_destroy,
};

START_TEST(commit_source_names_the_write) {
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &source_probe_checker, NULL), 0);
  ck_assert_int_eq(atom_write(s, 1, 0x10, 100), 0);  /* event 0 */
  ck_assert_int_eq(atom_write(s, 1, 0x20, 101), 0);  /* event 1 */
  ck_assert_int_eq(atom_read(s, 2, 0x10, 5), 0);     /* event 2 */
  ck_assert_int_eq(atom_commit(s, 1, 0x10, 200), 0); /* event 3 commits event 0 */
  ck_assert_int_eq(atom_commit(s, 1, 0x20, 201), 0); /* event 4 commits event 1 */
  ck_assert_int_eq(atom_write(s, 1, 0x10, 102), 0);  /* event 5 */
  ck_assert_int_eq(atom_fence(s, 1, 103), 0);        /* event 6 drains event 5 */
  ck_assert_int_eq(atom_commit(s, 1, 0x10, 202), ATOM_ENOPENDING);
  ck_assert_int_eq(atom_write(s, 2, 0x20, 104), 0);  /* event 8 */
  ck_assert_int_eq(atom_commit(s, 2, 0x20, 203), 0); /* event 9 commits event 8 */
  ck_assert_int_eq(probe.n, 3);
  const uint64_t index[3] = {0, 1, 8}, loc[3] = {100, 101, 104};
  for (int i = 0; i < 3; i++) {
    ck_assert_uint_eq(probe.got[i].kind, ATOM_WRITE);
    ck_assert_uint_eq(probe.got[i].index, index[i]);
    ck_assert_uint_eq(probe.got[i].loc, loc[i]);
  }
  ck_assert_uint_eq(probe.got[0].target, probe.got[2].target - 1); /* x then y: dense ids 0, 1 */
  ck_assert_uint_eq(probe.got[1].target, probe.got[2].target);
  ck_assert_uint_eq(probe.got[0].thread, 0);
  ck_assert_uint_eq(probe.got[2].thread, 1);
  ck_assert_int_eq(probe.other_ok, 6); /* 4 writes, 1 read, 1 fence: no source */
  atom_ev w;
  ck_assert_int_eq(atom_env_commit_source(NULL, &w), ATOM_EINVAL);
  atom_session_free(s);
}
END_TEST

/* A checker without ATOM_CHECKER_PROP_STORE_BUFFER may not read the store buffer (the session
 * keeps only the writes' variables then), but its COMMITs are still checked against it. */
START_TEST(store_buffer_needs_the_property) {
  atom_checker blind = source_probe_checker;
  blind.properties = 0;
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &blind, NULL), 0);
  ck_assert_int_eq(atom_write(s, 1, 0x10, 100), 0);
  ck_assert_int_eq(atom_write(s, 1, 0x20, 101), 0);
  ck_assert_int_eq(atom_commit(s, 1, 0x20, 102), ATOM_ENOPENDING); /* not the oldest */
  ck_assert_int_eq(atom_commit(s, 1, 0x10, 103), 0);
  ck_assert_int_eq(probe.n, 0); /* atom_env_commit_source refused */
  ck_assert_uint_eq(atom_env_pending_writes(probe.env, 0, 0, NULL, 0), 0);
  ck_assert_int_eq(atom_commit(s, 1, 0x20, 104), 0);
  ck_assert_int_eq(atom_commit(s, 1, 0x20, 105), ATOM_ENOPENDING); /* nothing left */
  atom_session_free(s);
}
END_TEST

/* atom_env_pending_writes: the store buffer as each event's dispatch finds it. A drain (FENCE,
 * outermost ACQUIRE or RELEASE) still shows the writes it commits, a JOIN the joined thread's;
 * both leave empty buffers behind. */
typedef struct buffer_probe {
  atom_env *env;
  size_t count[16]; /* per dispatched event: pending writes of its thread (JOIN: of the child) */
  atom_ev view[4];  /* at the first FENCE: the whole buffer, then from the second write on */
  size_t whole, tail, n;
} buffer_probe;

static buffer_probe bprobe;

static int bprobe_create(void **self, atom_env *env) {
  memset(&bprobe, 0, sizeof bprobe);
  bprobe.env = env;
  *self = &bprobe;
  return 0;
}

static int bprobe_event(void *self, const atom_ev *ev) {
  buffer_probe *p = self;
  uint32_t t = ev->kind == ATOM_JOIN ? ev->target : ev->thread;
  if (p->n < 16) p->count[p->n++] = atom_env_pending_writes(p->env, t, 0, NULL, 0);
  if (ev->kind == ATOM_FENCE && !p->whole) {
    p->whole = atom_env_pending_writes(p->env, t, 0, p->view, 3);
    p->tail = atom_env_pending_writes(p->env, t, 1, &p->view[3], 1);
  }
  return 0;
}

static const atom_checker buffer_probe_checker = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_FENCE) |
                  ATOM_KIND_BIT(ATOM_ACQUIRE) | ATOM_KIND_BIT(ATOM_RELEASE) |
                  ATOM_KIND_BIT(ATOM_JOIN) | ATOM_KIND_BIT(ATOM_COMMIT),
    .name = "buffer-probe",
    .summary = "test",
    .properties = ATOM_CHECKER_PROP_STORE_BUFFER,
    .create = bprobe_create,
    .on_event = bprobe_event,
    .destroy = probe_destroy,
};

START_TEST(pending_writes_view) {
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &buffer_probe_checker, NULL), 0);
  ck_assert_int_eq(atom_write(s, 1, 0x10, 100), 0);  /* event 0 [x]: 1 */
  ck_assert_int_eq(atom_write(s, 1, 0x20, 101), 0);  /* event 1 [x y]: 2 */
  ck_assert_int_eq(atom_commit(s, 1, 0x10, 102), 0); /* event 2 commits event 0 [y]: 1 */
  ck_assert_int_eq(atom_write(s, 1, 0x10, 103), 0);  /* event 3 [y x]: 2 */
  ck_assert_int_eq(atom_fence(s, 1, 104), 0);        /* event 4 drains [y x]: 2 */
  ck_assert_int_eq(atom_write(s, 1, 0x20, 105), 0);  /* event 5 [y]: 1 */
  ck_assert_int_eq(atom_acquire(s, 1, 0x99, 106), 0); /* event 6 drains [y]: 1 */
  ck_assert_int_eq(atom_acquire(s, 1, 0x99, 107), 0); /* event 7, re-entrant: not forwarded */
  ck_assert_int_eq(atom_write(s, 1, 0x10, 108), 0);  /* event 8 [x]: 1 */
  ck_assert_int_eq(atom_release(s, 1, 0x99, 109), 0); /* event 9, inner: not forwarded */
  ck_assert_int_eq(atom_release(s, 1, 0x99, 110), 0); /* event 10 drains [x]: 1 */
  ck_assert_int_eq(atom_fork(s, 1, 2, 111), 0);      /* event 11: not subscribed */
  ck_assert_int_eq(atom_write(s, 2, 0x20, 112), 0);  /* event 12, thread 2 [y]: 1 */
  ck_assert_int_eq(atom_join(s, 1, 2, 113), 0);      /* event 13: thread 2's [y]: 1 */
  ck_assert_int_eq(atom_fence(s, 1, 114), 0);        /* event 14: nothing pending */
  const size_t want[] = {1, 2, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0};
  ck_assert_uint_eq(bprobe.n, sizeof want / sizeof *want);
  for (size_t i = 0; i < bprobe.n; i++) ck_assert_uint_eq(bprobe.count[i], want[i]);
  /* At event 4: [y (event 1), x (event 3)], with dense variable ids x = 0, y = 1. */
  ck_assert_uint_eq(bprobe.whole, 2);
  ck_assert_uint_eq(bprobe.tail, 2);
  ck_assert_uint_eq(bprobe.view[0].kind, ATOM_WRITE);
  ck_assert_uint_eq(bprobe.view[0].index, 1);
  ck_assert_uint_eq(bprobe.view[0].loc, 101);
  ck_assert_uint_eq(bprobe.view[0].target, 1);
  ck_assert_uint_eq(bprobe.view[1].index, 3);
  ck_assert_uint_eq(bprobe.view[1].target, 0);
  ck_assert_uint_eq(bprobe.view[1].thread, 0);
  ck_assert_uint_eq(bprobe.view[3].index, 3); /* from the second on: event 3 */
  ck_assert_uint_eq(atom_env_pending_writes(bprobe.env, 1, 0, NULL, 0), 0); /* joined */
  ck_assert_uint_eq(atom_env_pending_writes(bprobe.env, 7, 0, NULL, 0), 0); /* no such thread */
  ck_assert_uint_eq(atom_env_pending_writes(NULL, 0, 0, NULL, 0), 0);
  atom_session_free(s);
}
END_TEST

/* Every corpus trace, as a trace (mode=trace and robust=yes, so that both searches and phase 1
 * report) and in the default mode: every report names the whole cycle (tso_edges_wrong). */
START_TEST(corpus_reports_whole_cycles) {
  static const char *const specs[] = {"tso:mode=trace,robust=yes", "tso:robust=yes"};
  char *files[512];
  size_t nfiles = tu_corpus_list(files, 512), reports = 0, search = 0;
  ck_assert_uint_gt(nfiles, 0);
  for (size_t f = 0; f < nfiles; f++) {
    char rel[1024];
    snprintf(rel, sizeof rel, "tests/corpus/%s", files[f]);
    char *text = tu_read_source_file(rel, NULL);
    ck_assert_ptr_nonnull(text);
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
      atom_session *s = run_std(specs[k], text);
      for (size_t i = 0; i < atom_report_count(s); i++) {
        const atom_report *r = atom_report_get(s, i);
        const char *why = tso_edges_wrong(r, NULL);
        ck_assert_msg(!why, "%s, %s: %s (%s)", files[f], specs[k], why, atom_report_message(r));
        reports++;
        search += strstr(atom_report_message(r), "oriented as marked") != NULL;
      }
      atom_session_free(s);
    }
    free(text);
    free(files[f]);
  }
  fprintf(stderr, "tso corpus: %zu files, %zu reports checked, %zu of them from the search\n",
          nfiles, reports, search);
  ck_assert_uint_gt(search, 0);
}
END_TEST

START_TEST(brute_force_traces) {
  stats S;
  long cases = brute_force_run(0x7500u, under_valgrind() ? 150 : 4000, BF_MIXED, &S);
  fprintf(stderr,
          "tso brute force: %ld traces (%ld skipped), %ld executions, %ld not TSO-serializable, "
          "%ld not robust, %ld single executions checked, %ld reports' edges checked (%ld with "
          "a link against the trace order)\n",
          S.cases, S.skipped, S.executions, S.violations, S.nonrobust, S.exec_checked, S.reports,
          S.backward);
  ck_assert_int_gt(S.cases, cases / 2);
  ck_assert_int_gt(S.violations, 0);
  ck_assert_int_lt(S.violations, S.cases);
}
END_TEST

/* Traces without transactions: every event is a unary transaction. Their only cycles go
 * through a fork or a join right after a write or a buffered read (the checker skips the search
 * when there is none); the brute force checks both kinds. */
START_TEST(brute_force_unary) {
  stats S;
  long cases = brute_force_run(0xa700u, under_valgrind() ? 100 : 1500, BF_UNARY, &S);
  fprintf(stderr,
          "tso unary: %ld traces (%ld skipped), %ld not TSO-serializable, %ld not robust, %ld "
          "reports' edges checked\n",
          S.cases, S.skipped, S.violations, S.nonrobust, S.reports);
  ck_assert_int_gt(S.cases, cases / 2);
  ck_assert_int_gt(S.violations, 0);
  ck_assert_int_gt(S.nonrobust, 0);
}
END_TEST

/* A long fence-free trace of n steps over @p threads threads: unary reads and writes of v0, v1,
 * and with probability @p txn_tenths / 10 a transaction [w(p) r(p)] on the thread's private
 * variable instead. Every write's window stays open to the end, so links abound. Checked with
 * mode=trace under @p max_work: no report (no violation, and the bound is not reached). */
static void fence_free_serializable(uint64_t st, unsigned threads, unsigned txn_tenths,
                                    uint64_t max_work) {
  uint64_t n = under_valgrind() ? 2000 : 20000;
  char *text = malloc(n * 4 * 24 + 1), spec[64];
  ck_assert_ptr_nonnull(text);
  size_t len = 0;
  for (uint64_t i = 0; i < n; i++) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    unsigned t = (unsigned)(st >> 33) % threads, v = (unsigned)(st >> 40) % 2;
    unsigned w = (unsigned)(st >> 50) % 2, at = (unsigned)i;
    if ((unsigned)(st >> 55) % 10 < txn_tenths)
      len += (size_t)sprintf(text + len, "t%u|begin|%u\nt%u|w(p%u)|%u\nt%u|r(p%u)|%u\nt%u|end|%u\n",
                             t, at, t, t, at, t, t, at, t, at);
    else
      len += (size_t)sprintf(text + len, "t%u|%c(v%u)|%u\n", t, w ? 'w' : 'r', v, at);
  }
  snprintf(spec, sizeof spec, "tso:mode=trace,max_work=%llu", (unsigned long long)max_work);
  atom_session *s = run_std(spec, text);
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_uint_eq(state_of(s), ATOM_CHECKER_COMPLETE);
  atom_session_free(s);
  free(text);
}

/* Without transactions no cycle can turn back: the trace is decided without search. */
START_TEST(unary_trace_without_search) { fence_free_serializable(12345, 4, 0, 1000); }
END_TEST

/* Transactions [w(p) r(p)] on private variables cannot turn a cycle back either (each entry
 * reaches the exits by forced edges), so the big component is not searched; the search would
 * cost about n^2/64 steps. */
START_TEST(private_transactions_without_search) { fence_free_serializable(777, 2, 3, 5000000); }
END_TEST

/* Transaction-fenced traces: every transaction that writes ends with a fence (unary writes are
 * wrapped into fenced transactions). */
static int fenced_trace(uint64_t seed, ntrace *T) {
  ntrace U;
  if (small_trace_of(seed, &U, 0) != 0) return -1;
  atom_event raw[2 * MAXS];
  size_t n = 0;
  int wrote[64] = {0};
  for (size_t i = 0; i < U.n && n + 4 < 2 * MAXS; i++) {
    const atom_ev *e = &U.ev[i];
    uint64_t t = (uint64_t)e->thread + 1;
    uint64_t x = e->kind == ATOM_BEGIN || e->kind == ATOM_END || e->kind == ATOM_FENCE
                     ? 0
                     : (uint64_t)e->target + 1;
    int in_txn = 0;
    /* in a transaction iff an open BEGIN of this thread precedes without END */
    for (size_t j = i; j-- > 0;) {
      if (U.ev[j].thread != e->thread) continue;
      if (U.ev[j].kind == ATOM_BEGIN) in_txn = 1;
      if (U.ev[j].kind == ATOM_BEGIN || U.ev[j].kind == ATOM_END) break;
    }
    if (e->kind == ATOM_END) {
      if (wrote[e->thread]) raw[n++] = (atom_event){ATOM_FENCE, 0, t, 0, i};
      wrote[e->thread] = 0;
    }
    if (e->kind == ATOM_WRITE && !in_txn) {
      raw[n++] = (atom_event){ATOM_BEGIN, 0, t, 0, i};
      raw[n++] = (atom_event){ATOM_WRITE, 0, t, x, i};
      raw[n++] = (atom_event){ATOM_FENCE, 0, t, 0, i};
      raw[n++] = (atom_event){ATOM_END, 0, t, 0, i};
      continue;
    }
    if (e->kind == ATOM_WRITE) wrote[e->thread] = 1;
    raw[n++] = (atom_event){e->kind, 0, t, x, i};
  }
  free(U.ev);
  return normalize(raw, n, T);
}

START_TEST(brute_force_fenced) {
  stats S;
  long cases = brute_force_run(0x9100u, under_valgrind() ? 60 : 1500, BF_FENCED, &S);
  fprintf(stderr,
          "tso fenced=yes: %ld traces (%ld skipped), %ld not TSO-serializable, %ld of them not "
          "seen by fenced=yes (SC-serializable and robust traces)\n",
          S.cases, S.skipped, S.violations, S.fenced_missed);
  ck_assert_int_gt(S.cases, cases / 3);
}
END_TEST

Suite *atom_test_suite_tso(void) {
  Suite *s = suite_create("tso");
  TCase *tc = tcase_create("tso");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, fig1_task_pool);
  tcase_add_test(tc, thm2_programs);
  tcase_add_test(tc, executions_with_commits);
  tcase_add_test(tc, trace_mode_basics);
  tcase_add_test(tc, fenced_mode);
  tcase_add_test(tc, arguments_and_bound);
  tcase_add_test(tc, execution_memory_flat);
  tcase_add_test(tc, digraph_edge_payloads);
  tcase_add_test(tc, allocation_failures);
  tcase_add_test(tc, corpus_reports_whole_cycles);
  tcase_add_test(tc, brute_force_traces);
  tcase_add_test(tc, brute_force_fenced);
  tcase_add_test(tc, brute_force_unary);
  tcase_add_test(tc, unary_trace_without_search);
  tcase_add_test(tc, private_transactions_without_search);
  tcase_add_test(tc, commit_source_names_the_write);
  tcase_add_test(tc, store_buffer_needs_the_property);
  tcase_add_test(tc, pending_writes_view);
  suite_add_tcase(s, tc);
  return s;
}
