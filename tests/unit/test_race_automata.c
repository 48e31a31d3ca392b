/* race-automata (lib/checkers/race_automata.c) and the atomic-sets files of the STD reader.
 *
 * The paper's examples (001 Fig. 3(b): pattern 11 with l1 = y, l2 = x; Fig. 1(b) with the sets
 * {checking, savings} and {opCounter}); each of the 14 patterns of 001 Fig. 2 alone; report
 * contents and deduplication; the set policies and declared sets; memory staying flat when units
 * end; allocation failures; and, on thousands of random traces, exactly the matches of a
 * brute-force search (every pair of units of different threads, every location or pair of
 * locations of one set, every pattern: is it a subsequence?), each reported at the event that
 * completes it and with witness events that spell the pattern. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicity/error.h"
#include "randtrace.h"
#include "util.h"

Suite *atom_test_suite_race_automata(void);

/* For hot loops: only calls into Check on failure. */
#define CHECK(c)                                                 \
  do {                                                           \
    if (!(c)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c); \
  } while (0)

static int under_valgrind(void) { return getenv("ATOM_UNDER_VALGRIND") != NULL; }

/* ---- the patterns, written out again for the tests (001 Fig. 2) ----------------------------- */

/* role 0 = u, 1 = u'; loc 0 = l1 (or l), 1 = l2; kind 'r' / 'w' */
typedef struct pev {
  int role, loc;
  char kind;
} pev;

static const struct {
  int len;
  pev ev[4];
} pat[14] = {
    {3, {{0, 0, 'r'}, {1, 0, 'w'}, {0, 0, 'w'}}},
    {3, {{0, 0, 'r'}, {1, 0, 'w'}, {0, 0, 'r'}}},
    {3, {{0, 0, 'w'}, {1, 0, 'r'}, {0, 0, 'w'}}},
    {3, {{0, 0, 'w'}, {1, 0, 'w'}, {0, 0, 'r'}}},
    {3, {{0, 0, 'w'}, {1, 0, 'w'}, {0, 0, 'w'}}},
    {4, {{0, 0, 'w'}, {1, 0, 'w'}, {1, 1, 'w'}, {0, 1, 'w'}}},
    {4, {{0, 0, 'w'}, {1, 1, 'w'}, {1, 0, 'w'}, {0, 1, 'w'}}},
    {4, {{0, 0, 'w'}, {1, 1, 'w'}, {0, 1, 'w'}, {1, 0, 'w'}}},
    {4, {{0, 0, 'w'}, {1, 0, 'r'}, {1, 1, 'r'}, {0, 1, 'w'}}},
    {4, {{0, 0, 'w'}, {1, 1, 'r'}, {1, 0, 'r'}, {0, 1, 'w'}}},
    {4, {{0, 0, 'r'}, {1, 0, 'w'}, {1, 1, 'w'}, {0, 1, 'r'}}},
    {4, {{0, 0, 'r'}, {1, 1, 'w'}, {1, 0, 'w'}, {0, 1, 'r'}}},
    {4, {{0, 0, 'r'}, {1, 1, 'w'}, {0, 1, 'r'}, {1, 0, 'w'}}},
    {4, {{0, 0, 'w'}, {1, 1, 'r'}, {0, 1, 'w'}, {1, 0, 'r'}}},
};

/* ---- matches ------------------------------------------------------------------------------- */

/* One match: pattern 1..14, u and u' by the index of their first event, l1 and l2 by key
 * (l2 = 0 for patterns 1-5), and the event that completes it. */
typedef struct match {
  int pattern;
  uint64_t u, v, l1, l2;
  uint64_t at;
} match;

static int match_cmp(const void *a, const void *b) {
  const match *x = a, *y = b;
  if (x->pattern != y->pattern) return x->pattern < y->pattern ? -1 : 1;
  const uint64_t kx[] = {x->u, x->v, x->l1, x->l2}, ky[] = {y->u, y->v, y->l1, y->l2};
  for (int i = 0; i < 4; i++)
    if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
  return 0;
}

typedef struct matches {
  match *m;
  size_t n, cap;
} matches;

static void matches_add(matches *ms, match m) {
  if (ms->n == ms->cap) {
    ms->cap = ms->cap ? ms->cap * 2 : 64;
    ms->m = realloc(ms->m, ms->cap * sizeof *ms->m);
    CHECK(ms->m != NULL);
  }
  ms->m[ms->n++] = m;
}

static void print_match(FILE *f, const match *m) {
  fprintf(f, "  pattern %d u@%llu u'@%llu l1=%llu l2=%llu at %llu\n", m->pattern,
          (unsigned long long)m->u, (unsigned long long)m->v, (unsigned long long)m->l1,
          (unsigned long long)m->l2, (unsigned long long)m->at);
}

/* The matches the session's reports of checker ci name (one per report; see dedup below). */
static void session_matches(const atom_session *s, size_t ci, matches *out) {
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const atom_report *r = atom_report_get(s, i);
    if (atom_report_checker_index(r) != ci) continue;
    match m;
    memset(&m, 0, sizeof m);
    CHECK(sscanf(atom_report_kind(r), "pattern-%d", &m.pattern) == 1);
    CHECK(atom_report_txn_count(r) == 2);
    CHECK(atom_report_txn(r, 0, NULL, &m.u, NULL) == 0);
    CHECK(atom_report_txn(r, 1, NULL, &m.v, NULL) == 0);
    size_t nv = atom_report_var_count(r);
    CHECK(nv == (m.pattern <= 5 ? 1u : 2u));
    m.l1 = atom_report_var(r, 0);
    m.l2 = nv == 2 ? atom_report_var(r, 1) : 0;
    m.at = atom_report_event_index(r);
    matches_add(out, m);
  }
}

/* ---- sessions -------------------------------------------------------------------------------- */

/* Reports must arrive at the event that completes them: the callback compares with the index
 * of the event being pushed. */
typedef struct online {
  uint64_t pushing;
  int late;
} online;

static void on_report(const atom_report *r, void *payload) {
  online *o = payload;
  if (atom_report_event_index(r) != o->pushing) o->late = 1;
}

static atom_session *session_with(const char *spec, online *o) {
  atom_options opt;
  atom_options_init(&opt, ATOM_OPTIONS_VERSION);
  if (o) {
    opt.on_report = on_report;
    opt.report_payload = o;
  }
  atom_session *s = NULL;
  CHECK(atom_session_new(&s, &opt) == 0);
  int rc = atom_session_attach(s, spec);
  ck_assert_msg(rc == 0, "attach %s: %s", spec, atom_last_error());
  return s;
}

static atom_checker_stats ra_stats(const atom_session *s) {
  atom_checker_stats st;
  memset(&st, 0, sizeof st);
  st.version = ATOM_CHECKER_STATS_VERSION;
  CHECK(atom_checker_stats_get(s, 0, &st) == 0);
  return st;
}

static const atom_report *find_kind(const atom_session *s, const char *kind) {
  for (size_t i = 0; i < atom_report_count(s); i++)
    if (strcmp(atom_report_kind(atom_report_get(s, i)), kind) == 0) return atom_report_get(s, i);
  return NULL;
}

/* ---- 001 Fig. 3(b) ------------------------------------------------------------------------- */

static const char *const fig3b =
    "# 001 Fig. 3(b)\n"
    "t1|begin|0\n"  /* 0 */
    "t1|r(x)|1\n"   /* 1 */
    "t1|r(y)|2\n"   /* 2 */
    "t2|begin|3\n"  /* 3 */
    "t2|r(x)|4\n"   /* 4 */
    "t2|r(y)|5\n"   /* 5 */
    "t2|r(y)|6\n"   /* 6 */
    "t2|w(y)|7\n"   /* 7 */
    "t2|w(x)|8\n"   /* 8 */
    "t2|end|9\n"    /* 9 */
    "t1|r(x)|10\n"  /* 10 */
    "t1|w(x)|11\n"  /* 11 */
    "t1|w(y)|12\n"  /* 12 */
    "t1|end|13\n";  /* 13 */

START_TEST(fig3b_pattern_11) {
  atom_session *s = session_with("race-automata:sets=one", NULL);
  ck_assert_int_eq(tu_feed_std(s, fig3b, NULL), 0);
  const atom_report *r = find_kind(s, "pattern-11");
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(atom_report_checker(r), "race-automata");
  ck_assert_uint_eq(atom_report_event_index(r), 10);
  ck_assert_uint_eq(atom_report_occurrences(r), 1);
  /* u = u1 (t1), u' = u2 (t2), l1 = y, l2 = x */
  uint64_t th, bi, bl;
  ck_assert_int_eq(atom_report_txn(r, 0, &th, &bi, &bl), 0);
  ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_THREAD, th), "t1");
  ck_assert_uint_eq(bi, 0);
  ck_assert_int_eq(atom_report_txn(r, 1, &th, &bi, &bl), 0);
  ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_THREAD, th), "t2");
  ck_assert_uint_eq(bi, 3);
  ck_assert_uint_eq(bl, 3);
  ck_assert_uint_eq(atom_report_var_count(r), 2);
  ck_assert_str_eq(atom_report_var_name(r, 0), "y");
  ck_assert_str_eq(atom_report_var_name(r, 1), "x");
  /* the underlined events: R_u1(y) W_u2(y) W_u2(x) R_u1(x) */
  static const uint64_t idx[] = {2, 7, 8, 10};
  static const uint32_t kind[] = {ATOM_READ, ATOM_WRITE, ATOM_WRITE, ATOM_READ};
  static const char *const var[] = {"y", "y", "x", "x"};
  ck_assert_uint_eq(atom_report_event_count(r), 4);
  for (size_t i = 0; i < 4; i++) {
    atom_event ev;
    uint64_t at;
    ck_assert_int_eq(atom_report_event(r, i, &ev, &at), 0);
    ck_assert_uint_eq(at, idx[i]);
    ck_assert_uint_eq(ev.kind, kind[i]);
    ck_assert_uint_eq(ev.loc, idx[i]);
    ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_VAR, ev.target), var[i]);
  }
  ck_assert_str_eq(atom_report_message(r),
                   "t1's transaction at loc 0 (event 0) was interleaved by t2's transaction at loc 3 "
                   "(event 3): t1 read y at loc 2 (event 2), then t2 wrote y at loc 7 (event 7), "
                   "then t2 wrote x at loc 8 (event 8), and then t1 read x at loc 10 (event 10): "
                   "t1 read y and x from two different states (pattern 11 of the atomic-set "
                   "patterns)");
  /* and exactly the other matches of the corpus key (tests/corpus/hammer-fig3b) */
  matches ms = {0};
  session_matches(s, 0, &ms);
  ck_assert_uint_gt(ms.n, 0);
  qsort(ms.m, ms.n, sizeof *ms.m, match_cmp);
  ck_assert_uint_eq(ms.n, 4);
  ck_assert_int_eq(ms.m[0].pattern, 1);
  ck_assert_int_eq(ms.m[1].pattern, 1);
  ck_assert_int_eq(ms.m[2].pattern, 2);
  ck_assert_int_eq(ms.m[3].pattern, 11);
  free(ms.m);
  ck_assert_uint_eq(ra_stats(s).nodes, 0); /* both units ended: nothing held */
  atom_session_free(s);

  /* With each variable a set of its own, pattern 11 is no violation; 1 and 2 remain. */
  s = session_with("race-automata:sets=var", NULL);
  ck_assert_int_eq(tu_feed_std(s, fig3b, NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 3);
  ck_assert_ptr_null(find_kind(s, "pattern-11"));
  atom_session_free(s);
}
END_TEST

/* ---- each pattern alone ---------------------------------------------------------------------- */

enum { T1 = 0x11, T2 = 0x22, X = 0x100, Y = 0x200 };

/* Push pattern p (0-based) with u = a transaction of T1, u' = a transaction of T2 (or unary
 * events of T2 when unary_v), l1 = X, l2 = Y. Events: 0 BEGIN T1, 1 BEGIN T2 (if not unary),
 * then the pattern's events with loc = their index. @return index of the first pattern event. */
static uint64_t push_pattern(atom_session *s, int p, int unary_v) {
  uint64_t i = 0;
  CHECK(atom_begin(s, T1, i++) == 0);
  if (!unary_v) CHECK(atom_begin(s, T2, i++) == 0);
  uint64_t first = i;
  for (int k = 0; k < pat[p].len; k++, i++) {
    const pev *e = &pat[p].ev[k];
    uint64_t t = e->role ? T2 : T1, x = e->loc ? Y : X;
    CHECK((e->kind == 'w' ? atom_write(s, t, x, i) : atom_read(s, t, x, i)) == 0);
  }
  CHECK(atom_end(s, T1, i++) == 0);
  if (!unary_v) CHECK(atom_end(s, T2, i) == 0);
  return first;
}

START_TEST(each_pattern_alone) {
  for (int p = 0; p < 14; p++) {
    atom_session *s = session_with("race-automata:sets=one", NULL);
    uint64_t first = push_pattern(s, p, 0);
    ck_assert_int_eq(atom_finish(s), 0);
    ck_assert_msg(atom_report_count(s) == 1, "pattern %d: %zu reports", p + 1,
                  atom_report_count(s));
    const atom_report *r = atom_report_get(s, 0);
    char kind[32];
    snprintf(kind, sizeof kind, "pattern-%d", p + 1);
    ck_assert_str_eq(atom_report_kind(r), kind);
    ck_assert_uint_eq(atom_report_event_index(r), first + (uint64_t)pat[p].len - 1);
    uint64_t th, bi;
    ck_assert_int_eq(atom_report_txn(r, 0, &th, &bi, NULL), 0);
    ck_assert_uint_eq(th, T1);
    ck_assert_uint_eq(bi, 0);
    ck_assert_int_eq(atom_report_txn(r, 1, &th, &bi, NULL), 0);
    ck_assert_uint_eq(th, T2);
    ck_assert_uint_eq(bi, 1);
    ck_assert_uint_eq(atom_report_var_count(r), p < 5 ? 1 : 2);
    ck_assert_uint_eq(atom_report_var(r, 0), X);
    if (p >= 5) ck_assert_uint_eq(atom_report_var(r, 1), Y);
    ck_assert_uint_eq(atom_report_event_count(r), (size_t)pat[p].len);
    for (int k = 0; k < pat[p].len; k++) {
      atom_event ev;
      uint64_t at;
      ck_assert_int_eq(atom_report_event(r, (size_t)k, &ev, &at), 0);
      ck_assert_uint_eq(at, first + (uint64_t)k);
      ck_assert_uint_eq(ev.thread, pat[p].ev[k].role ? T2 : T1);
      ck_assert_uint_eq(ev.target, pat[p].ev[k].loc ? Y : X);
      ck_assert_uint_eq(ev.kind, pat[p].ev[k].kind == 'w' ? ATOM_WRITE : ATOM_READ);
    }
    ck_assert_uint_eq(ra_stats(s).nodes, 0);
    atom_session_free(s);

    /* Each variable alone: patterns 6-14 are not violations. */
    s = session_with("race-automata:sets=var", NULL);
    push_pattern(s, p, 0);
    ck_assert_int_eq(atom_finish(s), 0);
    ck_assert_uint_eq(atom_report_count(s), p < 5 ? 1 : 0);
    atom_session_free(s);

    /* u' as events outside transactions: units of one event. Patterns 1-5 still match (u' is
     * the unary event); 6-14 need two events of one u'. */
    s = session_with("race-automata:sets=one", NULL);
    first = push_pattern(s, p, 1);
    ck_assert_int_eq(atom_finish(s), 0);
    ck_assert_msg(atom_report_count(s) == (p < 5 ? 1u : 0u), "unary u', pattern %d", p + 1);
    if (p < 5) {
      r = atom_report_get(s, 0);
      ck_assert_str_eq(atom_report_kind(r), kind);
      ck_assert_int_eq(atom_report_txn(r, 1, &th, &bi, NULL), 0);
      ck_assert_uint_eq(th, T2);
      ck_assert_uint_eq(bi, first + 1);
    }
    ck_assert_uint_eq(ra_stats(s).nodes, 0);
    atom_session_free(s);
  }
}
END_TEST

/* The same thread never plays both roles; two transactions of one thread are not u and u'. */
START_TEST(same_thread_is_no_match) {
  atom_session *s = session_with("race-automata:sets=one", NULL);
  CHECK(atom_begin(s, T1, 0) == 0);
  CHECK(atom_read(s, T1, X, 1) == 0);
  CHECK(atom_write(s, T1, X, 2) == 0); /* not u' of anything: same unit */
  CHECK(atom_write(s, T1, X, 3) == 0);
  CHECK(atom_end(s, T1, 4) == 0);
  CHECK(atom_begin(s, T1, 5) == 0);
  CHECK(atom_read(s, T1, X, 6) == 0);
  CHECK(atom_end(s, T1, 7) == 0);
  CHECK(atom_write(s, T1, X, 8) == 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_session_free(s);
}
END_TEST

/* A thread's cells are indexed per thread, and a unit's end empties that index at once unless
 * it has many more slots than the unit had cells (after a large unit): then the cells leave it
 * one by one. Both ways must leave the index right for the next units, whose ids come back
 * from the pool: the same patterns are found each round, after a large unit or not. */
static void rounds_after(int large, matches *out) {
  atom_session *s = session_with("race-automata:sets=one", NULL);
  uint64_t loc = 1;
  if (large) { /* 100 cells: the thread's index grows to 256 slots */
    CHECK(atom_begin(s, T1, loc++) == 0);
    for (uint64_t v = 0; v < 100; v++) CHECK(atom_read(s, T1, 0x1000 + v, loc++) == 0);
    CHECK(atom_end(s, T1, loc++) == 0);
  }
  for (uint64_t round = 0; round < 8; round++) { /* r1(x) w2(x) r1(x) and more */
    uint64_t z = Y + round % 3;
    CHECK(atom_begin(s, T1, loc++) == 0);
    CHECK(atom_read(s, T1, X, loc++) == 0);
    CHECK(atom_write(s, T1, z, loc++) == 0);
    CHECK(atom_begin(s, T2, loc++) == 0);
    CHECK(atom_write(s, T2, X, loc++) == 0);
    CHECK(atom_read(s, T2, z, loc++) == 0);
    CHECK(atom_end(s, T2, loc++) == 0);
    CHECK(atom_read(s, T1, X, loc++) == 0);
    CHECK(atom_write(s, T1, z, loc++) == 0);
    CHECK(atom_end(s, T1, loc++) == 0);
  }
  ck_assert_int_eq(atom_finish(s), 0);
  session_matches(s, 0, out);
  atom_session_free(s);
}

START_TEST(unit_end_after_a_large_unit) {
  matches plain = {0}, large = {0};
  rounds_after(0, &plain);
  rounds_after(1, &large);
  ck_assert_uint_ge(plain.n, 8);
  ck_assert_uint_eq(large.n, plain.n);
  for (size_t i = 0; i < plain.n; i++) {
    ck_assert_int_eq(large.m[i].pattern, plain.m[i].pattern);
    ck_assert_uint_eq(large.m[i].l1, plain.m[i].l1);
    ck_assert_uint_eq(large.m[i].l2, plain.m[i].l2);
  }
  free(plain.m);
  free(large.m);
}
END_TEST

/* ---- 001 Fig. 1(b) --------------------------------------------------------------------------- */

/* 001 Fig. 1(b): T1 runs transfer() (1) -- checking (c) and savings (s) -- which calls inc()
 * (2, 3) on opCounter (o); T2 runs inc() (4) between T1's two calls. The projection on
 * {c, s} is R1(c) W1(c) R1(s) W1(s) and on {o} R1,2(o) W1,2(o) R4(o) W4(o) R1,3(o) W1,3(o): both
 * serial, so the execution is atomic-set serializable. In 001 an access belongs to the topmost
 * unit declared on its set, so the accesses to o in T1 belong to inc() (2 and 3), not to
 * transfer(). The session forwards only outermost transactions, so that execution is written
 * with those accesses as their own units: transfer()'s accesses to c and s around them are
 * transactions of their own as well. */
static const char *const fig1b_units =
    "t1|begin|1\n" "t1|r(c)|2\n" "t1|w(c)|3\n" "t1|end|4\n"       /* transfer(): c */
    "t1|begin|5\n" "t1|r(o)|6\n" "t1|w(o)|7\n" "t1|end|8\n"       /* inc() 2 */
    "t2|begin|9\n" "t2|r(o)|10\n" "t2|w(o)|11\n" "t2|end|12\n"    /* inc() 4 */
    "t1|begin|13\n" "t1|r(s)|14\n" "t1|w(s)|15\n" "t1|end|16\n"   /* transfer(): s */
    "t1|begin|17\n" "t1|r(o)|18\n" "t1|w(o)|19\n" "t1|end|20\n";  /* inc() 3 */

/* The same events with transfer() one transaction and its inc() calls nested in it: then the
 * accesses to o of T1 are transfer()'s, and inc() 4 interleaves with them. */
static const char *const fig1b_nested =
    "t1|begin|1\n" "t1|r(c)|2\n" "t1|w(c)|3\n"
    "t1|begin|5\n" "t1|r(o)|6\n" "t1|w(o)|7\n" "t1|end|8\n"
    "t2|begin|9\n" "t2|r(o)|10\n" "t2|w(o)|11\n" "t2|end|12\n"
    "t1|r(s)|14\n" "t1|w(s)|15\n"
    "t1|begin|17\n" "t1|r(o)|18\n" "t1|w(o)|19\n" "t1|end|20\n"
    "t1|end|4\n";

static atom_session *fig1b_session(void) {
  atom_session *s = session_with("race-automata", NULL);
  /* STD names get keys 1, 2, ... in order of appearance: c = 1, o = 2, s = 3. */
  CHECK(atom_declare_set(s, 1, 100) == 0); /* checking */
  CHECK(atom_declare_set(s, 3, 100) == 0); /* savings */
  CHECK(atom_declare_set(s, 2, 200) == 0); /* opCounter */
  return s;
}

START_TEST(fig1b_atomic_set_serializable) {
  atom_session *s = fig1b_session();
  ck_assert_int_eq(tu_feed_std(s, fig1b_units, NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_uint_eq(ra_stats(s).nodes, 0);
  atom_session_free(s);

  /* With inc() nested in transfer(), T1's accesses to o are one unit and inc() 4 interleaves:
   * R1(o) W4(o) W1(o) is pattern 1, R1(o) W4(o) R1(o) pattern 2, W1(o) R4(o) W1(o) pattern 3,
   * W1(o) W4(o) R1(o) pattern 4, W1(o) W4(o) W1(o) pattern 5 -- why conflict serializability
   * rejects Fig. 1(b) (001 §2.1). */
  s = fig1b_session();
  ck_assert_int_eq(tu_feed_std(s, fig1b_nested, NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 5);
  for (int p = 1; p <= 5; p++) {
    char kind[32];
    snprintf(kind, sizeof kind, "pattern-%d", p);
    const atom_report *r = find_kind(s, kind);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(atom_report_var_name(r, 0), "o");
  }
  atom_session_free(s);

  /* ... and c, s never pair with o: no pattern 6-14 although transfer() touches c, s and o. */
  s = session_with("race-automata:sets=one", NULL);
  ck_assert_int_eq(tu_feed_std(s, fig1b_nested, NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 5);
  atom_session_free(s);
}
END_TEST

/* ---- reports --------------------------------------------------------------------------------- */

/* A violation in a loop is one report counted N times; another pair of locations is another
 * report; so is the same pattern with the roles swapped. */
START_TEST(dedup_with_count) {
  atom_session *s = session_with("race-automata:sets=one", NULL);
  for (int i = 0; i < 30; i++) {
    CHECK(atom_begin(s, T1, 10) == 0);
    CHECK(atom_read(s, T1, X, 11) == 0);
    CHECK(atom_write(s, T2, X, 12) == 0); /* unary u' */
    CHECK(atom_write(s, T1, X, 13) == 0); /* pattern 1 on X */
    CHECK(atom_end(s, T1, 14) == 0);
  }
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_uint_eq(atom_report_occurrences(atom_report_get(s, 0)), 30);
  /* same code on another variable: l is part of the signature */
  CHECK(atom_begin(s, T1, 10) == 0);
  CHECK(atom_read(s, T1, Y, 11) == 0);
  CHECK(atom_write(s, T2, Y, 12) == 0);
  CHECK(atom_write(s, T1, Y, 13) == 0);
  CHECK(atom_end(s, T1, 14) == 0);
  ck_assert_uint_eq(atom_report_count(s), 2);
  /* roles swapped: u at loc 12, u' at loc 10 */
  CHECK(atom_begin(s, T2, 12) == 0);
  CHECK(atom_read(s, T2, X, 11) == 0);
  CHECK(atom_write(s, T1, X, 10) == 0);
  CHECK(atom_write(s, T2, X, 13) == 0);
  CHECK(atom_end(s, T2, 14) == 0);
  CHECK(atom_begin(s, T1, 10) == 0);
  CHECK(atom_read(s, T1, X, 11) == 0);
  CHECK(atom_write(s, T2, X, 12) == 0);
  CHECK(atom_write(s, T1, X, 13) == 0);
  CHECK(atom_end(s, T1, 14) == 0);
  ck_assert_uint_eq(atom_report_count(s), 3);
  ck_assert_uint_eq(atom_report_occurrences(atom_report_get(s, 0)), 31);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(ra_stats(s).nodes, 0);
  atom_session_free(s);
}
END_TEST

START_TEST(arguments) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "race-automata:sets=all"), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "sets must be one of var, one, prefix"));
  ck_assert_int_eq(atom_session_attach(s, "race-automata:mode=x"), ATOM_EINVAL);
  ck_assert_int_eq(atom_session_attach(s, "race-automata:sets=one"), 0);
  ck_assert_int_eq(atom_session_attach(s, "race-automata:sets=var"), 0);
  ck_assert_int_eq(atom_session_attach(s, "race-automata:sets=prefix"), 0);
  ck_assert_int_eq(atom_session_attach(s, "race-automata"), 0);
  atom_session_free(s);
}
END_TEST

/* One run of a checker over a trace with every thread, variable and lock named by `style`;
 * its reports as "kind@event*occurrences;" into out. */
static void verdicts(const char *spec, const atom_event *ev, size_t n, int style, char *out,
                     size_t cap) {
  atom_session *s = session_with(spec, NULL);
  static const char *const fmt[2][3] = {{"t%u", "a.x%u", "m%u"}, {"zz.%u", "v%u.q", "b.lock%u"}};
  static const int space[3] = {ATOM_SPACE_THREAD, ATOM_SPACE_VAR, ATOM_SPACE_LOCK};
  static const unsigned base[3] = {0, RT_VAR_BASE, RT_LOCK_BASE};
  for (int sp = 0; sp < 3; sp++)
    for (unsigned k = 0; k < 64; k++) {
      char name[32];
      snprintf(name, sizeof name, fmt[style][sp], style ? 63 - k : k);
      CHECK(atom_set_name(s, space[sp], base[sp] + k, name) == 0);
    }
  for (size_t i = 0; i < n; i++) (void)atom_push(s, &ev[i]);
  (void)atom_finish(s);
  size_t off = 0;
  out[0] = '\0';
  for (size_t i = 0; i < atom_report_count(s) && off + 64 < cap; i++) {
    const atom_report *r = atom_report_get(s, i);
    off += (size_t)snprintf(out + off, cap - off, "%s@%llu*%llu;", atom_report_kind(r),
                            (unsigned long long)atom_report_event_index(r),
                            (unsigned long long)atom_report_occurrences(r));
  }
  atom_session_free(s);
}

/* Names are for reading: renaming every thread, variable and lock (same keys) changes no
 * verdict of any checker, race-automata's sets=prefix included. */
START_TEST(renaming_keeps_verdicts) {
  static char a[8192], b[8192];
  size_t seeds_with_reports[64] = {0}; /* per spec: equal verdicts prove something only then */
  for (uint64_t seed = 1; seed <= 12; seed++) {
    rt_params p;
    rt_params_random(&p, seed, 60);
    atom_event *ev = NULL;
    size_t n = 0;
    CHECK(rt_generate(&p, seed, &ev, &n) == 0);
    for (size_t c = 0;; c++) {
      const atom_checker *vt = atom_checker_builtin(c);
      const char *spec = vt ? vt->name : "race-automata:sets=prefix";
      verdicts(spec, ev, n, 0, a, sizeof a);
      verdicts(spec, ev, n, 1, b, sizeof b);
      ck_assert_msg(strcmp(a, b) == 0, "%s, seed %llu: %s vs %s", spec,
                    (unsigned long long)seed, a, b);
      ck_assert_uint_lt(c, 64);
      seeds_with_reports[c] += a[0] != '\0';
      if (!vt) break;
    }
    free(ev);
  }
  for (size_t c = 0;; c++) { /* every checker but null (it decides nothing) reported somewhere */
    const atom_checker *vt = atom_checker_builtin(c);
    const char *spec = vt ? vt->name : "race-automata:sets=prefix";
    if (strcmp(spec, "null") != 0)
      ck_assert_msg(seeds_with_reports[c] > 0, "%s reported on none of the traces", spec);
    if (!vt) break;
  }
}
END_TEST

/* Sets by prefix (declared by the reader) group "obj.field" by obj; declared sets win over
 * every policy; undeclared variables are alone by default. The checker's sets=prefix alone
 * declares nothing: display names never decide a set. */
START_TEST(set_policies) {
  /* pattern 6 on (a.x, a.y), on (a.x, b.y), on (p, q) */
  static const char *const text =
      "t1|begin|0\n" "t2|begin|1\n"
      "t1|w(a.x)|2\n" "t2|w(a.x)|3\n" "t2|w(a.y)|4\n" "t1|w(a.y)|5\n"
      "t1|w(a.x)|6\n" "t2|w(b.y)|7\n" "t1|w(b.y)|8\n"
      "t1|w(p)|9\n" "t2|w(p)|10\n" "t2|w(q)|11\n" "t1|w(q)|12\n"
      "t1|end|13\n" "t2|end|14\n";
  static const struct {
    const char *spec;
    int declare; /* declare p and q in one set */
    size_t doubles;
    int by_prefix; /* the reader declares sets by name prefix */
  } cases[] = {
      {"race-automata", 0, 0, 0},             /* every variable alone */
      {"race-automata", 1, 1, 0},             /* (p, q) declared */
      {"race-automata:sets=prefix", 0, 1, 1}, /* (a.x, a.y) */
      {"race-automata:sets=prefix", 1, 2, 1}, /* and (p, q) */
      {"race-automata:sets=one", 0, 0, 0},    /* counted below: many */
      {"race-automata", 1, 2, 1},             /* by prefix, whatever sets= says */
      {"race-automata:sets=prefix", 0, 0, 0}, /* names alone: every variable alone */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    atom_session *s = session_with(cases[c].spec, NULL);
    if (cases[c].declare) {
      /* keys in order of appearance: a.x 1, a.y 2, b.y 3, p 4, q 5 */
      CHECK(atom_declare_set(s, 4, 7) == 0);
      CHECK(atom_declare_set(s, 5, 7) == 0);
    }
    ck_assert_int_eq(cases[c].by_prefix ? tu_feed_std_sets_by_prefix(s, text)
                                       : tu_feed_std(s, text, NULL),
                     0);
    size_t doubles = 0, with_ab = 0;
    for (size_t i = 0; i < atom_report_count(s); i++) {
      const atom_report *r = atom_report_get(s, i);
      if (atom_report_var_count(r) != 2) continue;
      doubles++;
      const char *a = atom_report_var_name(r, 0), *b = atom_report_var_name(r, 1);
      if ((a[0] == 'a' && b[0] == 'b') || (a[0] == 'b' && b[0] == 'a')) with_ab++;
    }
    if (c == 4) {
      ck_assert_uint_gt(doubles, 2);
      ck_assert_uint_gt(with_ab, 0);
    } else {
      ck_assert_msg(doubles == cases[c].doubles, "%s (declare %d): %zu", cases[c].spec,
                    cases[c].declare, doubles);
      ck_assert_uint_eq(with_ab, 0);
    }
    atom_session_free(s);
  }
}
END_TEST

/* ---- atomic-sets files (atom_trace_reader_load_sets) ---------------------------------------- */

static char *write_temp(const char *text) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/atom-ra-sets-XXXXXX");
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  size_t n = strlen(text);
  CHECK(write(fd, text, n) == (ssize_t)n);
  close(fd);
  return path;
}

START_TEST(sets_file) {
  /* Fig. 3(b) with x and y in one set from a file, the policy leaving others alone */
  char *path = write_temp("# atomic sets\n\n  x\tS1  \r\ny S1\nz S2\nunused S3\n");
  atom_session *s = session_with("race-automata", NULL);
  atom_trace_reader *r = NULL;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, fig3b, strlen(fig3b), "<fig3b>"), 0);
  ck_assert_int_eq(atom_trace_reader_load_sets(r, path), 0);
  ck_assert_int_eq(atom_trace_reader_load_sets(r, path), ATOM_ESTATE);
  ck_assert_int_eq(atom_trace_feed(s, r, 0, NULL, NULL, NULL), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_ptr_nonnull(find_kind(s, "pattern-11"));
  ck_assert_uint_eq(atom_report_count(s), 4);
  /* once variables were handed to a session it is too late */
  atom_trace_reader *r2 = NULL;
  atom_session *s2 = session_with("race-automata", NULL);
  ck_assert_int_eq(atom_trace_reader_open_memory(&r2, fig3b, strlen(fig3b), "<fig3b>"), 0);
  ck_assert_int_eq(atom_trace_feed(s2, r2, 3, NULL, NULL, NULL), 1);
  ck_assert_int_eq(atom_trace_reader_load_sets(r2, path), ATOM_ESTATE);
  atom_trace_reader_free(r2);
  atom_session_free(s2);
  unlink(path);
  atom_trace_reader_free(r);
  atom_session_free(s);

  /* errors: file:line, and nothing loaded */
  static const struct {
    const char *text;
    const char *msg;
  } bad[] = {
      {"x S1\ny\n", ":2: expected 'variable set', found 1 word"},
      {"x S1 extra\n", ":1: expected 'variable set', found 3 words"},
      {"x S1\n\nx S2\n", ":3: variable 'x' is already in a set (line 1)"},
      {"x(1) S1\n", ":1: bad variable name 'x(1)'"},
      {"x a|b\n", ":1: bad set name 'a|b'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    path = write_temp(bad[i].text);
    ck_assert_int_eq(atom_trace_reader_open_memory(&r, fig3b, strlen(fig3b), "<fig3b>"), 0);
    ck_assert_int_eq(atom_trace_reader_load_sets(r, path), ATOM_EPARSE);
    ck_assert_msg(strstr(atom_last_error(), bad[i].msg) != NULL, "%s", atom_last_error());
    ck_assert_msg(strncmp(atom_last_error(), path, strlen(path)) == 0, "%s", atom_last_error());
    s = session_with("race-automata", NULL);
    ck_assert_int_eq(atom_trace_feed(s, r, 0, NULL, NULL, NULL), 0);
    ck_assert_int_eq(atom_finish(s), 0);
    ck_assert_ptr_null(find_kind(s, "pattern-11")); /* no set was loaded */
    atom_session_free(s);
    atom_trace_reader_free(r);
    unlink(path);
  }
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, fig3b, strlen(fig3b), "<fig3b>"), 0);
  ck_assert_int_eq(atom_trace_reader_load_sets(r, "/nonexistent/sets"), ATOM_EIO);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "/nonexistent/sets"));
  ck_assert_int_eq(atom_trace_reader_load_sets(NULL, "x"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_reader_load_sets(r, NULL), ATOM_EINVAL);
  atom_trace_reader_free(r);
}
END_TEST

/* ---- memory ---------------------------------------------------------------------------------- */

/* Four threads run short transactions of random accesses (racy: matches everywhere) over 64
 * variables in one set, with unary accesses between them. The tuples held stay bounded and so
 * does the checker's memory, whatever the length; at the end nothing is held. */
START_TEST(memory_flat) {
  size_t total = under_valgrind() ? 30000 : 300000;
  atom_session *s = session_with("race-automata:sets=one", NULL);
  rt_rng r;
  rt_rng_seed(&r, 7);
  int open[4] = {0};
  int left[4] = {0};
  uint64_t peak_nodes = 0, bytes_warm = 0;
  for (size_t i = 0; i < total; i++) {
    int t = (int)rt_rng_below(&r, 4);
    uint64_t T = (uint64_t)t + 1, x = rt_rng_below(&r, 64), loc = i % 16;
    int rc;
    if (!open[t] && rt_rng_chance(&r, 0.7)) {
      rc = atom_begin(s, T, loc);
      open[t] = 1;
      left[t] = 2 + (int)rt_rng_below(&r, 8);
    } else if (open[t] && left[t] == 0) {
      rc = atom_end(s, T, loc);
      open[t] = 0;
    } else {
      rc = rt_rng_chance(&r, 0.3) ? atom_write(s, T, x, loc) : atom_read(s, T, x, loc);
      if (open[t]) left[t]--;
    }
    CHECK(rc == 0);
    if (i % 256 == 0) {
      atom_checker_stats st = ra_stats(s);
      if (st.nodes > peak_nodes) peak_nodes = st.nodes;
      if (!bytes_warm && i > total / 5) bytes_warm = st.peak_bytes;
    }
  }
  atom_checker_stats st = ra_stats(s);
  ck_assert_uint_gt(atom_report_count(s), 0);
  /* a few dozen bitsets, a few tens of KB (pools may double once more after warm-up) */
  ck_assert_uint_lt(peak_nodes, 200);
  ck_assert_uint_gt(bytes_warm, 0);
  ck_assert_msg(st.peak_bytes <= 2 * bytes_warm && st.peak_bytes < 64 * 1024,
                "memory grew: %llu -> %llu bytes", (unsigned long long)bytes_warm,
                (unsigned long long)st.peak_bytes);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(ra_stats(s).nodes, 0);
  atom_session_free(s);
}
END_TEST

/* ---- allocation failures --------------------------------------------------------------------- */

typedef struct failing {
  long budget; /* successful allocations left; < 0: never fail */
  long live;
} failing;

static void *f_malloc(size_t n, void *p) {
  failing *f = p;
  if (f->budget == 0) return NULL;
  if (f->budget > 0) f->budget--;
  void *q = malloc(n);
  if (q) f->live++;
  return q;
}
static void *f_realloc(void *ptr, size_t n, void *p) {
  failing *f = p;
  if (f->budget == 0) return NULL;
  if (f->budget > 0) f->budget--;
  void *q = realloc(ptr, n);
  if (q && !ptr) f->live++;
  return q;
}
static void f_free(void *ptr, void *p) {
  failing *f = p;
  if (ptr) f->live--;
  free(ptr);
}

/* Every allocation in turn fails once: each call returns 0 or ATOM_ENOMEM, the checker goes on
 * (later events are handled), and nothing leaks. */
START_TEST(allocation_failures) {
  rt_params p;
  rt_params_random(&p, 11, 60);
  p.threads = 3;
  p.vars = 4;
  p.events = 120;
  p.p_begin = 0.9;
  p.p_end = 0.15;
  atom_event *ev = NULL;
  size_t n = 0;
  CHECK(rt_generate(&p, 11, &ev, &n) == 0);
  long step = under_valgrind() ? 5 : 1;
  int failures_seen = 0;
  for (long budget = 0;; budget += step) {
    failing f = {-1, 0};
    atom_options o;
    atom_options_init(&o, ATOM_OPTIONS_VERSION);
    o.malloc_fn = f_malloc;
    o.realloc_fn = f_realloc;
    o.free_fn = f_free;
    o.alloc_payload = &f;
    atom_session *s = NULL;
    CHECK(atom_session_new(&s, &o) == 0);
    CHECK(atom_session_attach(s, "race-automata:sets=one") == 0);
    f.budget = budget;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
      int rc = atom_push(s, &ev[i]);
      /* after a failure the core may have dropped an event (a BEGIN, an ACQUIRE), so a later
       * one can be ill-formed */
      int dropped = rc == ATOM_EENDNOBEGIN || rc == ATOM_ENOTHELD || rc == ATOM_EHELD ||
                    rc == ATOM_EJOINED || rc == ATOM_EFORK || rc == ATOM_EJOIN;
      ck_assert_msg(rc == 0 || rc == ATOM_ENOMEM || (failed && dropped),
                    "budget %ld, event %zu: %s: %s", budget, i, atom_error_name(rc),
                    atom_last_error());
      if (rc == ATOM_ENOMEM) {
        failed = 1;
        f.budget = -1; /* memory comes back */
      }
    }
    int rc = atom_finish(s);
    CHECK(rc == 0 || rc == ATOM_ENOMEM);
    if (rc) failed = 1;
    (void)ra_stats(s);
    atom_session_free(s);
    CHECK(f.live == 0);
    if (!failed) break;
    failures_seen++;
  }
  ck_assert_int_gt(failures_seen, 10);
  free(ev);
}
END_TEST

/* ---- against the brute-force search ------------------------------------------------------ */

/* The atomic set of each variable as the test configured it: -1 alone, else an id. */
typedef struct config {
  const char *spec;
  unsigned nvars;
  long set[8];
  int declared[8]; /* declared with atom_declare_set (key = set id) */
  char name[8][16];
} config;

/* Draw a configuration: a policy, some declared sets, names for sets=prefix. */
static void config_draw(config *c, uint64_t seed, unsigned nvars) {
  rt_rng r;
  rt_rng_seed(&r, seed * 31 + 5);
  static const char *const specs[] = {"race-automata:sets=one", "race-automata",
                                      "race-automata:sets=prefix", "race-automata:sets=var"};
  int policy = (int)rt_rng_below(&r, 4);
  c->spec = specs[policy];
  c->nvars = nvars;
  for (unsigned i = 0; i < nvars; i++) {
    unsigned obj = (unsigned)rt_rng_below(&r, 2);
    int named_field = rt_rng_chance(&r, 0.8);
    if (named_field) snprintf(c->name[i], sizeof c->name[i], "o%u.f%u", obj, i);
    else snprintf(c->name[i], sizeof c->name[i], "v%u", i);
    c->declared[i] = rt_rng_chance(&r, policy == 3 ? 0.7 : 0.3);
    if (c->declared[i]) c->set[i] = 10 + (long)rt_rng_below(&r, 2);
    else if (policy == 0) c->set[i] = 1;
    else if (policy == 2 && named_field) c->set[i] = 100 + obj;
    else c->set[i] = -1;
  }
}

/* Units as 001 defines them here: outermost transactions; an access outside is a unit alone. */
typedef struct bf_trace {
  const atom_event *ev;
  size_t n;
  long *unit;      /* per event: its unit (accesses only), else -1 */
  uint64_t *begin; /* per unit: index of its first event */
  uint64_t *thread;
  size_t nunits;
} bf_trace;

static void bf_build(bf_trace *b, const atom_event *ev, size_t n) {
  b->ev = ev;
  b->n = n;
  b->unit = malloc((n + 1) * sizeof *b->unit);
  b->begin = malloc((n + 1) * sizeof *b->begin);
  b->thread = malloc((n + 1) * sizeof *b->thread);
  CHECK(b->unit && b->begin && b->thread);
  b->nunits = 0;
  uint64_t depth[RT_MAX_THREADS + 1] = {0};
  long cur[RT_MAX_THREADS + 1];
  for (size_t t = 0; t <= RT_MAX_THREADS; t++) cur[t] = -1;
  for (size_t i = 0; i < n; i++) {
    uint64_t t = ev[i].thread;
    CHECK(t <= RT_MAX_THREADS);
    b->unit[i] = -1;
    switch (ev[i].kind) {
    case ATOM_BEGIN:
      if (depth[t]++ == 0) {
        cur[t] = (long)b->nunits;
        b->begin[b->nunits] = i;
        b->thread[b->nunits++] = t;
      }
      break;
    case ATOM_END:
      if (--depth[t] == 0) cur[t] = -1;
      break;
    case ATOM_READ:
    case ATOM_WRITE:
      if (depth[t]) {
        b->unit[i] = cur[t];
      } else {
        b->unit[i] = (long)b->nunits;
        b->begin[b->nunits] = i;
        b->thread[b->nunits++] = t;
      }
      break;
    default:
      break;
    }
  }
}

static void bf_free(bf_trace *b) {
  free(b->unit);
  free(b->begin);
  free(b->thread);
}

/* Greedy subsequence search of pattern p for units a (u), b (u') and variables l1, l2 (keys;
 * l2 unused for 1-5). @return the index of the event completing the first match, or -1. */
static long bf_search(const bf_trace *bt, int p, long a, long b, uint64_t l1, uint64_t l2) {
  int s = 0;
  for (size_t i = 0; i < bt->n; i++) {
    long u = bt->unit[i];
    if (u != a && u != b) continue;
    const atom_event *e = &bt->ev[i];
    int loc = e->target == l1 ? 0 : (p >= 5 && e->target == l2) ? 1 : -1;
    if (loc < 0) continue;
    const pev *want = &pat[p].ev[s];
    if (want->role == (u == b) && want->loc == loc &&
        (want->kind == 'w') == (e->kind == ATOM_WRITE)) {
      if (++s == pat[p].len) return (long)i;
    }
  }
  return -1;
}

static void bf_matches(const bf_trace *bt, const config *c, matches *out) {
  for (size_t a = 0; a < bt->nunits; a++)
    for (size_t b = 0; b < bt->nunits; b++) {
      if (bt->thread[a] == bt->thread[b]) continue;
      for (unsigned i = 0; i < c->nvars; i++)
        for (unsigned j = 0; j <= c->nvars; j++) {
          int single = j == c->nvars;
          if (!single && (i == j || c->set[i] < 0 || c->set[i] != c->set[j])) continue;
          uint64_t l1 = RT_VAR_BASE + i, l2 = single ? 0 : RT_VAR_BASE + j;
          for (int p = single ? 0 : 5; p < (single ? 5 : 14); p++) {
            long at = bf_search(bt, p, (long)a, (long)b, l1, l2);
            if (at >= 0)
              matches_add(out, (match){p + 1, bt->begin[a], bt->begin[b], l1, l2, (uint64_t)at});
          }
        }
    }
}

/* Every witness event of every report is the trace's event at that index, of the right unit,
 * variable and kind, in increasing order, the last one the report's event. */
static void check_witnesses(const atom_session *s, const bf_trace *bt) {
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const atom_report *r = atom_report_get(s, i);
    int p;
    CHECK(sscanf(atom_report_kind(r), "pattern-%d", &p) == 1 && p >= 1 && p <= 14);
    p--;
    uint64_t ub[2], l[2] = {atom_report_var(r, 0), atom_report_var(r, 1)};
    CHECK(atom_report_txn(r, 0, NULL, &ub[0], NULL) == 0);
    CHECK(atom_report_txn(r, 1, NULL, &ub[1], NULL) == 0);
    CHECK(atom_report_event_count(r) == (size_t)pat[p].len);
    CHECK(atom_report_occurrences(r) == 1);
    uint64_t prev = 0;
    for (int k = 0; k < pat[p].len; k++) {
      atom_event ev;
      uint64_t at;
      CHECK(atom_report_event(r, (size_t)k, &ev, &at) == 0);
      CHECK(at < bt->n && (k == 0 || at > prev));
      prev = at;
      const atom_event *e = &bt->ev[at];
      CHECK(e->kind == ev.kind && e->thread == ev.thread && e->target == ev.target &&
            e->loc == ev.loc);
      long u = bt->unit[at];
      CHECK(u >= 0 && bt->begin[u] == ub[pat[p].ev[k].role]);
      CHECK(e->target == l[pat[p].ev[k].loc]);
      CHECK((e->kind == ATOM_WRITE) == (pat[p].ev[k].kind == 'w'));
    }
    CHECK(prev == atom_report_event_index(r));
  }
}

static int run_random(uint64_t seed, size_t max_events, int dense) {
  rt_params p;
  rt_params_random(&p, seed, max_events);
  if (dense) { /* long, overlapping transactions: more multi-event units per pair */
    p.p_begin = 0.9;
    p.p_end = 0.08;
    p.p_lock = 0.02;
    p.p_fork = 0.05;
  }
  atom_event *ev = NULL;
  size_t n = 0;
  CHECK(rt_generate(&p, seed, &ev, &n) == 0);
  for (size_t i = 0; i < n; i++) ev[i].loc = i; /* every unit its own begin location */
  config c;
  config_draw(&c, seed, p.vars);

  online o = {0, 0};
  atom_session *s = session_with(c.spec, &o);
  for (unsigned i = 0; i < c.nvars; i++) {
    CHECK(atom_set_name(s, ATOM_SPACE_VAR, RT_VAR_BASE + i, c.name[i]) == 0);
    /* Declared, or (sets=prefix) in its prefix's set: declared as the trace reader does. */
    if (c.declared[i] || c.set[i] >= 100)
      CHECK(atom_declare_set(s, RT_VAR_BASE + i, (uint64_t)c.set[i]) == 0);
  }
  for (size_t i = 0; i < n; i++) {
    o.pushing = i;
    CHECK(atom_push(s, &ev[i]) == 0);
  }
  o.pushing = n; /* transactions closed by finish complete nothing */
  CHECK(atom_finish(s) == 0);

  bf_trace bt;
  bf_build(&bt, ev, n);
  matches want = {0}, got = {0};
  bf_matches(&bt, &c, &want);
  session_matches(s, 0, &got);
  if (want.n) qsort(want.m, want.n, sizeof *want.m, match_cmp);
  if (got.n) qsort(got.m, got.n, sizeof *got.m, match_cmp);
  int same = want.n == got.n && !o.late;
  for (size_t i = 0; same && i < want.n; i++)
    same = match_cmp(&want.m[i], &got.m[i]) == 0 && want.m[i].at == got.m[i].at;
  if (!same) {
    fprintf(stderr, "race-automata vs brute force, seed %llu, %s%s:\n", (unsigned long long)seed,
            c.spec, o.late ? " (a report came late)" : "");
    for (unsigned i = 0; i < c.nvars; i++)
      fprintf(stderr, "  var %u: %s set %ld%s\n", RT_VAR_BASE + i, c.name[i], c.set[i],
              c.declared[i] ? " (declared)" : "");
    rt_write_std(stderr, ev, n);
    fprintf(stderr, "expected:\n");
    for (size_t i = 0; i < want.n; i++) print_match(stderr, &want.m[i]);
    fprintf(stderr, "reported:\n");
    for (size_t i = 0; i < got.n; i++) print_match(stderr, &got.m[i]);
  }
  CHECK(same);
  check_witnesses(s, &bt);
  CHECK(ra_stats(s).nodes == 0);
  int found = want.n > 0;
  free(want.m);
  free(got.m);
  bf_free(&bt);
  atom_session_free(s);
  free(ev);
  return found;
}

START_TEST(random_against_brute_force) {
  uint64_t cases = under_valgrind() ? 300 : 4000;
  uint64_t with_matches = 0;
  for (uint64_t seed = 1; seed <= cases; seed++) with_matches += run_random(seed, 40, 0);
  ck_assert_uint_gt(with_matches, cases / 10);
}
END_TEST

START_TEST(random_dense_against_brute_force) {
  uint64_t cases = under_valgrind() ? 100 : 1500;
  uint64_t with_matches = 0;
  for (uint64_t seed = 1; seed <= cases; seed++)
    with_matches += run_random(seed + 1000000, 80, 1);
  ck_assert_uint_gt(with_matches, cases / 3);
}
END_TEST

Suite *atom_test_suite_race_automata(void) {
  Suite *s = suite_create("race_automata");
  TCase *paper = tcase_create("paper");
  tcase_add_test(paper, fig3b_pattern_11);
  tcase_add_test(paper, each_pattern_alone);
  tcase_add_test(paper, same_thread_is_no_match);
  tcase_add_test(paper, fig1b_atomic_set_serializable);
  suite_add_tcase(s, paper);
  TCase *api = tcase_create("api");
  tcase_add_test(api, dedup_with_count);
  tcase_add_test(api, arguments);
  tcase_add_test(api, set_policies);
  tcase_add_test(api, renaming_keeps_verdicts);
  tcase_add_test(api, sets_file);
  tcase_add_test(api, memory_flat);
  tcase_add_test(api, allocation_failures);
  tcase_add_test(api, unit_end_after_a_large_unit);
  suite_add_tcase(s, api);
  TCase *ref = tcase_create("brute_force");
  tcase_set_timeout(ref, 240);
  tcase_add_test(ref, random_against_brute_force);
  tcase_add_test(ref, random_dense_against_brute_force);
  suite_add_tcase(s, ref);
  return s;
}
