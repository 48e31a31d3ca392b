/* reduction (000 §4) and the lockset tables it is built on (lib/support/lockset.c).
 *
 * Lockset level: hash-consing, add/remove/meet/disjoint against bit masks on random sets,
 * allocation failures. Checker level: the paper's examples (1)-(16) where they speak of
 * reduction; each mover class (acquire/join right, release/fork left, race-free both, racy
 * none) in both lockset variants; initialization and read-back ordered by FORK/JOIN; Eraser's
 * read-shared refinement; when each variant reports (eraser at END or at the access that makes
 * a variable racy, precise at finish); report contents, deduplication, arguments, statistics,
 * allocation failures. Random traces: an exact offline re-implementation of the documented
 * semantics (test oracle below) must name the same transactions (and, for precise, the same
 * two events); and against the brute-force reference over all feasible interleavings
 * (interleave.h) reduction must never pass a trace that is not conflict-atomic, and every
 * cycle of the reference's witness schedule must contain a reported transaction.
 *
 * Environment: ATOM_REDUCTION_CASES (random traces, default 4000; 300 under valgrind),
 * ATOM_REDUCTION_SEED (first seed, default 1). A failure prints the seed and the trace. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "interleave.h"
#include "randtrace.h"
#include "reference.h"
#include "support/lockset.h"
#include "util.h"

Suite *atom_test_suite_reduction(void);

/* For hot loops: only calls into Check on failure. */
#define CHECK(c)                                                 \
  do {                                                           \
    if (!(c)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c); \
  } while (0)

static unsigned long long env_number(const char *name, unsigned long long dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  unsigned long long x = strtoull(v, &end, 10);
  return *end ? dflt : x;
}

static int under_valgrind(void) { return getenv("ATOM_UNDER_VALGRIND") != NULL; }

/* ---- lockset tables ------------------------------------------------------------------------ */

static uint64_t mask_of(const atom__lsets *t, atom__ls s) {
  uint64_t m = 0;
  const uint32_t *e = atom__ls_elems(t, s);
  for (uint32_t i = 0; i < atom__ls_size(t, s); i++) {
    if (i) CHECK(e[i - 1] < e[i]); /* sorted, no duplicates */
    m |= 1ull << e[i];
  }
  return m;
}

START_TEST(lockset_basics) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__lsets t;
  atom__ls_init(&t, &m);
  ck_assert_uint_eq(atom__ls_size(&t, ATOM__LS_EMPTY), 0);
  ck_assert_uint_eq(atom__ls_count(&t), 1);
  atom__ls a, b, c, d, e;
  ck_assert_int_eq(atom__ls_add(&t, ATOM__LS_EMPTY, 5, &a), 0);
  ck_assert_int_eq(atom__ls_add(&t, a, 2, &b), 0); /* {2,5} */
  uint32_t arr[] = {5, 2, 5};
  ck_assert_int_eq(atom__ls_make(&t, arr, 3, &c), 0);
  ck_assert_uint_eq(b, c); /* hash-consed */
  ck_assert_int_eq(atom__ls_add(&t, b, 5, &d), 0);
  ck_assert_uint_eq(d, b); /* already there */
  ck_assert_int_eq(atom__ls_remove(&t, b, 2, &e), 0);
  ck_assert_uint_eq(e, a);
  ck_assert_int_eq(atom__ls_remove(&t, a, 5, &e), 0);
  ck_assert_uint_eq(e, ATOM__LS_EMPTY);
  ck_assert(atom__ls_contains(&t, b, 2) && atom__ls_contains(&t, b, 5));
  ck_assert(!atom__ls_contains(&t, b, 3) && !atom__ls_contains(&t, ATOM__LS_EMPTY, 3));
  ck_assert(!atom__ls_disjoint(&t, a, b));
  ck_assert(atom__ls_disjoint(&t, a, ATOM__LS_EMPTY));
  ck_assert(atom__ls_disjoint(&t, ATOM__LS_EMPTY, ATOM__LS_EMPTY));
  ck_assert_uint_eq(atom__ls_common(&t, a, b), 5);
  ck_assert_int_eq(atom__ls_meet(&t, a, b, &e), 0);
  ck_assert_uint_eq(e, a);
  ck_assert_uint_eq(atom__ls_count(&t), 3);
  atom__ls_destroy(&t);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

START_TEST(lockset_random_against_masks) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__lsets t;
  atom__ls_init(&t, &m);
  rt_rng r;
  rt_rng_seed(&r, 77);
  enum { N = 64 };
  atom__ls sets[N];
  uint64_t masks[N];
  for (int i = 0; i < N; i++) {
    sets[i] = ATOM__LS_EMPTY;
    masks[i] = 0;
  }
  for (int step = 0; step < 20000; step++) {
    int i = (int)rt_rng_below(&r, N), j = (int)rt_rng_below(&r, N);
    uint32_t lock = (uint32_t)rt_rng_below(&r, 12);
    atom__ls out;
    switch (rt_rng_below(&r, 4)) {
    case 0:
      CHECK(atom__ls_add(&t, sets[j], lock, &out) == 0);
      sets[i] = out;
      masks[i] = masks[j] | 1ull << lock;
      break;
    case 1:
      CHECK(atom__ls_remove(&t, sets[j], lock, &out) == 0);
      sets[i] = out;
      masks[i] = masks[j] & ~(1ull << lock);
      break;
    case 2:
      CHECK(atom__ls_meet(&t, sets[i], sets[j], &out) == 0);
      sets[i] = out;
      masks[i] &= masks[j];
      break;
    default: {
      uint32_t arr[6];
      size_t n = (size_t)rt_rng_below(&r, 7);
      uint64_t mm = 0;
      for (size_t k = 0; k < n; k++) {
        arr[k] = (uint32_t)rt_rng_below(&r, 12);
        mm |= 1ull << arr[k];
      }
      CHECK(atom__ls_make(&t, arr, n, &out) == 0);
      sets[i] = out;
      masks[i] = mm;
    }
    }
    CHECK(mask_of(&t, sets[i]) == masks[i]);
    CHECK(atom__ls_disjoint(&t, sets[i], sets[j]) == ((masks[i] & masks[j]) == 0));
    CHECK((uint64_t)atom__ls_contains(&t, sets[i], lock) == ((masks[i] >> lock) & 1));
    /* equal sets, equal ids */
    for (int k = 0; k < N; k++) CHECK((sets[k] == sets[i]) == (masks[k] == masks[i]));
  }
  CHECK(atom__ls_count(&t) <= 4096);
  atom__ls_destroy(&t);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

START_TEST(lockset_out_of_memory) {
  int saw = 0;
  for (long budget = 0; budget < 60; budget++) {
    tu_failing f = {.budget = budget};
    atom__allocator a;
    tu_failing_allocator(&a, &f);
    atom__mem m;
    atom__mem_init(&m, &a);
    atom__lsets t;
    atom__ls_init(&t, &m);
    atom__ls s = ATOM__LS_EMPTY;
    uint64_t mask = 0;
    for (uint32_t l = 0; l < 40; l++) {
      atom__ls out;
      int rc = atom__ls_add(&t, s, l, &out);
      if (rc) {
        CHECK(rc == ATOM_ENOMEM);
        saw = 1;
        continue;
      }
      s = out;
      if (l < 64) mask |= 1ull << l;
      CHECK(mask_of(&t, s) == mask); /* every set made stays intact */
    }
    atom__ls_destroy(&t);
    CHECK(m.bytes == 0);
  }
  CHECK(saw);
}
END_TEST

/* ---- helpers -------------------------------------------------------------------------------- */

static atom_session *red_session(const char *spec) {
  const char *specs[] = {spec, NULL};
  return tu_session(specs);
}

static atom_checker_stats rstats(atom_session *s, size_t i) {
  atom_checker_stats st;
  memset(&st, 0, sizeof st);
  st.version = ATOM_CHECKER_STATS_VERSION;
  ck_assert_int_eq(atom_checker_stats_get(s, i, &st), 0);
  return st;
}

/* Run STD text through one variant; returns the session (finished). */
static atom_session *run_std(const char *spec, const char *text) {
  atom_session *s = red_session(spec);
  uint64_t rej = 0;
  ck_assert_int_eq(tu_feed_std(s, text, &rej), 0);
  ck_assert_uint_eq(rej, 0);
  return s;
}

/* Index of the report naming the transaction that begins at index b, or -1. */
static long report_of_txn(const atom_session *s, uint64_t b) {
  for (size_t i = 0; i < atom_report_count(s); i++) {
    uint64_t bi;
    if (atom_report_txn(atom_report_get(s, i), 0, NULL, &bi, NULL) == 0 && bi == b) return (long)i;
  }
  return -1;
}

static uint64_t witness_index(const atom_report *r, size_t i) {
  uint64_t idx = UINT64_MAX;
  ck_assert_int_eq(atom_report_event(r, i, NULL, &idx), 0);
  return idx;
}

/* ---- paper examples ------------------------------------------------------------------------- */

typedef struct example {
  const char *name; /* corpus file (tests/corpus/NAME.std) or NULL */
  const char *text; /* inline STD text when name is NULL */
  const char *what;
  /* precise: number of reported transactions; begin index, witness indices of the first */
  size_t p_reports;
  long p_txn, p_c, p_f;
  size_t e_reports; /* eraser */
} example;

/* Inline examples (the corpus holds the others). */
static const char ex2_tr2[] = "# 000 (2) tr2\n"
                              "t1|begin|0\nt2|begin|1\nt1|r(x)|2\nt2|r(x)|3\nt1|w(x)|4\n"
                              "t2|end|5\nt1|end|6\n";
static const char ex2_tr3[] = "# 000 (2) tr3\n"
                              "t2|begin|0\nt2|r(x)|1\nt1|begin|2\nt1|r(x)|3\nt1|w(x)|4\n"
                              "t1|end|5\nt2|end|6\n";
static const char ex11[] = "# 000 (11), with a concurrent reader under l1\n"
                           "t|begin|0\nt|acq(l1)|1\nt|r(x)|2\nt|acq(l2)|3\nt|w(x)|4\nt|r(x)|5\n"
                           "t|rel(l2)|6\nt|rel(l1)|7\nt|end|8\n"
                           "u|begin|9\nu|acq(l1)|10\nu|r(x)|11\nu|rel(l1)|12\nu|end|13\n";
static const char ex14[] = "# 000 (14), against a writer under l1\n"
                           "t|begin|0\nt|acq(l1)|1\nt|r(x)|2\nt|r(x)|3\nt|r(x)|4\nt|r(x)|5\n"
                           "t|r(x)|6\nt|r(x)|7\nt|rel(l1)|8\nt|end|9\n"
                           "u|acq(l1)|10\nu|w(x)|11\nu|rel(l1)|12\n";

static const example examples[] = {
    /* (1): atomic. Precise: t1's read has no conflicting write of another thread (B), its
     * write races with t2's read (N): B N. Eraser: x is shared and written without a lock, so
     * both of t1's accesses are non-movers. */
    {"ws-ex1", NULL, "(1)", 0, -1, -1, -1, 1},
    {NULL, ex2_tr2, "(2) tr2", 0, -1, -1, -1, 1},
    {NULL, ex2_tr3, "(2) tr3", 0, -1, -1, -1, 1},
    /* (3) setXY: each transaction is R B L R B L: acquire after release */
    {"ws-ex3-setxy", NULL, "(3)", 2, 0, 3, 4, 2},
    /* (4): atomic, but t2 is R B L R B L: a false alarm of the reduction algorithm */
    {"ws-ex4", NULL, "(4)", 1, 6, 9, 10, 1},
    /* (5): t2 acquires after releasing */
    {"ws-ex5", NULL, "(5)", 1, 5, 8, 9, 1},
    /* (6): "Using Theorem 4.3 ... this set of transactions is atomic. Theorem 4.4 is unable to
     * support this conclusion" */
    {"ws-ex6", NULL, "(6)", 0, -1, -1, -1, 1},
    /* (7): "Transaction t1 has the form NN, so the reduction-based algorithm reports" */
    {"ws-ex7", NULL, "(7)", 1, 0, 1, 2, 1},
    /* (8): "both transactions have the form RBLN" */
    {"ws-ex8", NULL, "(8)", 2, 0, 3, 4, 2},
    /* (9): "both transactions have the form RBBLRBL" */
    {"ws-ex9", NULL, "(9)", 2, 0, 4, 5, 2},
    /* (10): RRLBBL and RRLBL: reducible (the potential deadlock is the block algorithm's
     * concern) */
    {"ws-ex10-deadlock", NULL, "(10)", 0, -1, -1, -1, 0},
    /* (11): R B R B B L L; the reader holds l1 too */
    {NULL, ex11, "(11)", 0, -1, -1, -1, 0},
    /* (13): not atomic; W2(x) after rel(l) is racy with t2's W'(x) */
    {"ws-ex13", NULL, "(13)", 1, 0, 4, 5, 1},
    /* (14): R B B B B B B L */
    {NULL, ex14, "(14)", 0, -1, -1, -1, 0},
    /* (15): t2 acquires after releasing (and {t, t2} is not conflict-atomic) */
    {"ws-ex15", NULL, "(15)", 1, 7, 10, 11, 1},
    /* (16): every access races; t1 is N N (also t2, t3) */
    {"ws-ex16", NULL, "(16)", 3, 0, 1, 2, 3},
};

START_TEST(paper_examples) {
  for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
    const example *x = &examples[i];
    char *text = NULL;
    if (x->name) {
      char rel[256];
      snprintf(rel, sizeof rel, "tests/corpus/%s.std", x->name);
      text = tu_read_source_file(rel, NULL);
      ck_assert_msg(text != NULL, "%s missing", rel);
    }
    const char *t = text ? text : x->text;
    atom_session *p = run_std("reduction", t);
    ck_assert_msg(atom_report_count(p) == x->p_reports, "%s precise: %zu reports%s%s", x->what,
                  atom_report_count(p), atom_report_count(p) ? ": " : "",
                  atom_report_count(p) ? atom_report_message(atom_report_get(p, 0)) : "");
    if (x->p_txn >= 0) {
      long k = report_of_txn(p, (uint64_t)x->p_txn);
      ck_assert_msg(k >= 0, "%s: transaction @%ld not reported", x->what, x->p_txn);
      const atom_report *r = atom_report_get(p, (size_t)k);
      ck_assert_str_eq(atom_report_kind(r), "not-reducible");
      ck_assert_uint_ge(atom_report_event_count(r), 2); /* then the racing partners */
      ck_assert_msg(witness_index(r, 0) == (uint64_t)x->p_c &&
                        witness_index(r, 1) == (uint64_t)x->p_f,
                    "%s: %s", x->what, atom_report_message(r));
    }
    atom_session_free(p);
    atom_session *e = run_std("reduction:lockset=eraser", t);
    ck_assert_msg(atom_report_count(e) == x->e_reports, "%s eraser: %zu reports", x->what,
                  atom_report_count(e));
    atom_session_free(e);
    free(text);
  }
}
END_TEST

/* ---- mover classes -------------------------------------------------------------------------- */

/* One transaction of t1 made of the symbols of `form`, with thread t2 making the racy
 * variable racy first. Symbols: N racy write of x; B write of a variable only t1 touches; R
 * acquire of a fresh lock; L release of the last lock acquired (or of a lock taken before the
 * transaction); F fork of a fresh thread; J join of a thread forked (and finished) before.
 * Returns the session, finished. */
static atom_session *run_form(const char *spec, const char *form) {
  atom_session *s = red_session(spec);
  enum { T1 = 1, T2 = 2, X = 10, Y = 11 };
  CHECK(atom_write(s, T2, X, 900) == 0); /* concurrent with t1's writes: x is racy */
  uint64_t held[16], nh = 0, next_lock = 100, next_thread = 50;
  uint64_t joinable[16], nj = 0;
  /* locks held before the transaction, for its releases; threads finished, for its joins */
  for (const char *c = form; *c; c++) {
    if (*c == 'L') {
      CHECK(atom_acquire(s, T1, 300 + nh, 901) == 0);
      held[nh] = 300 + nh;
      nh++;
    } else if (*c == 'J') {
      uint64_t u = 400 + nj;
      CHECK(atom_fork(s, T1, u, 902) == 0);
      CHECK(atom_read(s, u, 12, 903) == 0);
      joinable[nj++] = u;
    }
  }
  size_t l_used = 0, j_used = 0;
  CHECK(atom_begin(s, T1, 1) == 0);
  uint64_t stack[16], ns = 0;
  for (const char *c = form; *c; c++) {
    uint64_t loc = 10 + (uint64_t)(c - form);
    switch (*c) {
    case 'N': CHECK(atom_write(s, T1, X, loc) == 0); break;
    case 'B': CHECK(atom_write(s, T1, Y, loc) == 0); break;
    case 'R':
      stack[ns++] = next_lock;
      CHECK(atom_acquire(s, T1, next_lock++, loc) == 0);
      break;
    case 'L':
      if (ns) CHECK(atom_release(s, T1, stack[--ns], loc) == 0);
      else CHECK(atom_release(s, T1, held[l_used++], loc) == 0);
      break;
    case 'F': CHECK(atom_fork(s, T1, next_thread++, loc) == 0); break;
    case 'J': CHECK(atom_join(s, T1, joinable[j_used++], loc) == 0); break;
    default: ck_abort_msg("bad form symbol %c", *c);
    }
  }
  CHECK(atom_end(s, T1, 2) == 0);
  CHECK(atom_finish(s) == 0);
  return s;
}

typedef struct form_case {
  const char *form;
  int reducible;
  int c, f; /* positions in form of the two named events */
} form_case;

static const form_case forms[] = {
    {"", 1, 0, 0},        {"N", 1, 0, 0},       {"NN", 0, 0, 1},      {"NBN", 0, 0, 2},
    {"BNB", 1, 0, 0},     {"BBBB", 1, 0, 0},    {"RN", 1, 0, 0},      {"NR", 0, 0, 1},
    {"RRBNBLL", 1, 0, 0}, {"NL", 1, 0, 0},      {"LN", 0, 0, 1},      {"LB", 1, 0, 0},
    {"RL", 1, 0, 0},      {"LR", 0, 0, 1},      {"RLRL", 0, 1, 2},    {"RBLB", 1, 0, 0},
    {"BRNLB", 1, 0, 0},   {"RNLN", 0, 1, 3},    {"RNNL", 0, 1, 2},    {"NF", 1, 0, 0},
    {"FN", 0, 0, 1},      {"JN", 1, 0, 0},      {"NJ", 0, 0, 1},      {"FJ", 0, 0, 1},
    {"JF", 1, 0, 0},      {"JRNFL", 1, 0, 0},   {"RNLJ", 0, 1, 3},    {"BNBLBRB", 0, 1, 5},
};

static void check_forms(const char *spec) {
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    const form_case *fc = &forms[i];
    atom_session *s = run_form(spec, fc->form);
    size_t n = atom_report_count(s);
    ck_assert_msg(n == (fc->reducible ? 0u : 1u), "%s: form %s: %zu reports%s%s", spec, fc->form, n,
                  n ? ": " : "", n ? atom_report_message(atom_report_get(s, 0)) : "");
    if (!fc->reducible) {
      const atom_report *r = atom_report_get(s, 0);
      atom_event ev;
      uint64_t idx;
      ck_assert_int_eq(atom_report_event(r, 0, &ev, &idx), 0);
      ck_assert_msg(ev.loc == 10u + (uint64_t)fc->c, "%s: form %s: %s", spec, fc->form,
                    atom_report_message(r));
      ck_assert_int_eq(atom_report_event(r, 1, &ev, &idx), 0);
      ck_assert_msg(ev.loc == 10u + (uint64_t)fc->f, "%s: form %s: %s", spec, fc->form,
                    atom_report_message(r));
    }
    atom_session_free(s);
  }
}

START_TEST(mover_classes_precise) { check_forms("reduction"); }
END_TEST

START_TEST(mover_classes_eraser) { check_forms("reduction:lockset=eraser"); }
END_TEST

/* A race-free access is a both mover only when it is race-free: the same transaction with the
 * variable protected, unprotected in one thread, or accessed by one thread only. */
START_TEST(race_freedom_by_locks) {
  static const struct {
    const char *text;
    int precise, eraser; /* reports expected */
  } cases[] = {
      /* both hold m at every access: B B */
      {"t1|begin|0\nt1|acq(m)|1\nt1|r(x)|2\nt1|w(x)|3\nt1|rel(m)|4\nt1|end|5\n"
       "t2|acq(m)|6\nt2|w(x)|7\nt2|rel(m)|8\n",
       0, 0},
      /* t2 writes without m: N N */
      {"t1|begin|0\nt1|acq(m)|1\nt1|r(x)|2\nt1|w(x)|3\nt1|rel(m)|4\nt1|end|5\n"
       "t2|w(x)|6\n",
       1, 1},
      /* t2 only reads without m: t1's read is race-free (no write by another thread), its
       * write races with the read: B N. Eraser: no common lock, written: N N. */
      {"t1|begin|0\nt1|acq(m)|1\nt1|r(x)|2\nt1|w(x)|3\nt1|rel(m)|4\nt1|end|5\n"
       "t2|r(x)|6\n",
       0, 1},
      /* different locks: N N in both */
      {"t1|begin|0\nt1|acq(m)|1\nt1|r(x)|2\nt1|w(x)|3\nt1|rel(m)|4\nt1|end|5\n"
       "t2|acq(n)|6\nt2|w(x)|7\nt2|rel(n)|8\n",
       1, 1},
      /* Eraser's refinement: the common lock of three threads that each hold two of them */
      {"t1|begin|0\nt1|acq(a)|1\nt1|acq(b)|2\nt1|r(x)|3\nt1|w(x)|4\nt1|rel(b)|5\nt1|rel(a)|6\n"
       "t1|end|7\n"
       "t2|acq(b)|8\nt2|acq(c)|9\nt2|w(x)|10\nt2|rel(c)|11\nt2|rel(b)|12\n"
       "t3|acq(a)|13\nt3|acq(c)|14\nt3|w(x)|15\nt3|rel(c)|16\nt3|rel(a)|17\n",
       0, 1},
      /* read-shared: written only by the thread that forks the readers, before forking */
      {"t1|w(x)|0\nt1|fork(t2)|1\nt1|fork(t3)|2\n"
       "t2|begin|3\nt2|r(x)|4\nt2|r(x)|5\nt2|end|6\n"
       "t3|begin|7\nt3|r(x)|8\nt3|r(x)|9\nt3|end|10\n",
       0, 0},
      /* ... but a write by a concurrent thread makes every shared access a non-mover for
       * eraser; precise: t2's reads race with t3's write (N N), t3's read races with no write
       * (t1's is ordered before it by the fork): B N */
      {"t1|w(x)|0\nt1|fork(t2)|1\nt1|fork(t3)|2\n"
       "t2|begin|3\nt2|r(x)|4\nt2|r(x)|5\nt2|end|6\n"
       "t3|begin|7\nt3|r(x)|8\nt3|w(x)|9\nt3|end|10\n",
       1, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    atom_session *p = run_std("reduction:lockset=precise", cases[i].text);
    ck_assert_msg(atom_report_count(p) == (size_t)cases[i].precise, "case %zu precise: %zu", i,
                  atom_report_count(p));
    atom_session_free(p);
    atom_session *e = run_std("reduction:lockset=eraser", cases[i].text);
    ck_assert_msg(atom_report_count(e) == (size_t)cases[i].eraser, "case %zu eraser: %zu", i,
                  atom_report_count(e));
    atom_session_free(e);
  }
}
END_TEST

/* 000 Thm 4.3 "part of initialization": accesses ordered by FORK/JOIN with every access of
 * another thread never race. Without the fork the same events race. */
START_TEST(initialization_and_readback) {
  static const struct {
    const char *text;
    int precise, eraser;
  } cases[] = {
      /* initialization in a transaction before the fork */
      {"t1|begin|0\nt1|w(x)|1\nt1|w(x)|2\nt1|fork(t2)|3\nt1|end|4\n"
       "t2|begin|5\nt2|w(x)|6\nt2|w(x)|7\nt2|end|8\n",
       0, 0},
      /* the same without the fork: t2 is a root, so both transactions are N N */
      {"t1|begin|0\nt1|w(x)|1\nt1|w(x)|2\nt1|end|4\n"
       "t2|begin|5\nt2|w(x)|6\nt2|w(x)|7\nt2|end|8\n",
       2, 2},
      /* read-back after the join */
      {"t1|fork(t2)|0\nt2|begin|1\nt2|w(x)|2\nt2|w(x)|3\nt2|end|4\nt1|join(t2)|5\n"
       "t1|begin|6\nt1|r(x)|7\nt1|w(x)|8\nt1|end|9\n",
       0, 0},
      /* two workers under a lock, read-back after both joins without the lock: the workers
       * race with nothing, the read-back with nothing; for eraser the read-back is ordered
       * after every other access and the initial write before, so both are exclusive and
       * only the workers' accesses are shared (all under m) */
      {"t1|w(x)|0\nt1|fork(t2)|1\nt1|fork(t3)|2\n"
       "t2|begin|3\nt2|acq(m)|4\nt2|r(x)|5\nt2|w(x)|6\nt2|rel(m)|7\nt2|end|8\n"
       "t3|begin|9\nt3|acq(m)|10\nt3|r(x)|11\nt3|w(x)|12\nt3|rel(m)|13\nt3|end|14\n"
       "t1|join(t2)|15\nt1|join(t3)|16\nt1|begin|17\nt1|r(x)|18\nt1|w(x)|19\nt1|end|20\n",
       0, 0},
      /* a write by the parent after the fork is concurrent with the child */
      {"t1|fork(t2)|0\nt1|begin|1\nt1|w(x)|2\nt1|w(x)|3\nt1|end|4\n"
       "t2|w(x)|5\n",
       1, 1},
      /* a handoff chain through fork and join stays exclusive */
      {"t1|begin|0\nt1|w(x)|1\nt1|r(x)|2\nt1|end|3\nt1|fork(t2)|4\n"
       "t2|begin|5\nt2|w(x)|6\nt2|r(x)|7\nt2|end|8\nt1|join(t2)|9\n"
       "t1|fork(t3)|10\nt3|begin|11\nt3|w(x)|12\nt3|r(x)|13\nt3|end|14\n",
       0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    atom_session *p = run_std("reduction", cases[i].text);
    ck_assert_msg(atom_report_count(p) == (size_t)cases[i].precise, "case %zu precise: %zu%s%s",
                  i, atom_report_count(p), atom_report_count(p) ? ": " : "",
                  atom_report_count(p) ? atom_report_message(atom_report_get(p, 0)) : "");
    atom_session_free(p);
    atom_session *e = run_std("reduction:lockset=eraser", cases[i].text);
    ck_assert_msg(atom_report_count(e) == (size_t)cases[i].eraser, "case %zu eraser: %zu%s%s", i,
                  atom_report_count(e), atom_report_count(e) ? ": " : "",
                  atom_report_count(e) ? atom_report_message(atom_report_get(e, 0)) : "");
    atom_session_free(e);
  }
}
END_TEST

/* ---- when each variant reports -------------------------------------------------------------- */

START_TEST(eraser_reports_online) {
  atom_session *s = red_session("reduction:lockset=eraser");
  /* x is already racy: t1's transaction N N fails at its END (event 5) */
  CHECK(atom_write(s, 1, 7, 0) == 0);   /* 0 */
  CHECK(atom_write(s, 2, 7, 1) == 0);   /* 1 */
  CHECK(atom_begin(s, 1, 2) == 0);      /* 2 */
  CHECK(atom_write(s, 1, 7, 3) == 0);   /* 3 */
  CHECK(atom_write(s, 1, 7, 4) == 0);   /* 4 */
  ck_assert_uint_eq(atom_report_count(s), 0);
  CHECK(atom_end(s, 1, 5) == 0); /* 5 */
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_uint_eq(atom_report_event_index(atom_report_get(s, 0)), 5);
  /* y protected by m so far: t1's acq w(y) w(y) rel passes at its END ... */
  CHECK(atom_begin(s, 1, 6) == 0);       /* 6 */
  CHECK(atom_acquire(s, 1, 50, 7) == 0); /* 7 */
  CHECK(atom_write(s, 1, 8, 8) == 0);    /* 8 */
  CHECK(atom_write(s, 1, 8, 9) == 0);    /* 9 */
  CHECK(atom_release(s, 1, 50, 10) == 0); /* 10 */
  CHECK(atom_end(s, 1, 11) == 0);        /* 11 */
  CHECK(atom_acquire(s, 2, 50, 12) == 0); /* 12 */
  CHECK(atom_write(s, 2, 8, 13) == 0);   /* 13 */
  CHECK(atom_release(s, 2, 50, 14) == 0); /* 14 */
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_uint_eq(rstats(s, 0).nodes, 1); /* kept, waiting on y */
  /* ... until t3 writes y without m: 000 Thm 4.4 no longer holds for y, and the write is
   * where the violation is found */
  CHECK(atom_write(s, 3, 8, 15) == 0); /* 15 */
  ck_assert_uint_eq(atom_report_count(s), 2);
  const atom_report *r = atom_report_get(s, 1);
  ck_assert_uint_eq(atom_report_event_index(r), 15);
  ck_assert_uint_eq(witness_index(r, 0), 8);
  ck_assert_uint_eq(witness_index(r, 1), 9);
  ck_assert_uint_eq(rstats(s, 0).nodes, 0);
  CHECK(atom_finish(s) == 0);
  ck_assert_uint_eq(atom_report_count(s), 2);
  atom_session_free(s);
}
END_TEST

START_TEST(precise_reports_at_finish) {
  atom_session *s = red_session("reduction");
  CHECK(atom_begin(s, 1, 0) == 0);
  CHECK(atom_write(s, 1, 7, 1) == 0);
  CHECK(atom_write(s, 1, 7, 2) == 0);
  CHECK(atom_end(s, 1, 3) == 0);
  CHECK(atom_write(s, 2, 7, 4) == 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_uint_eq(rstats(s, 0).nodes, 1);
  /* a transaction that cannot fail whatever races there are is not kept */
  CHECK(atom_begin(s, 1, 5) == 0);
  CHECK(atom_acquire(s, 1, 9, 6) == 0);
  CHECK(atom_write(s, 1, 7, 7) == 0);
  CHECK(atom_release(s, 1, 9, 8) == 0);
  CHECK(atom_end(s, 1, 9) == 0);
  ck_assert_uint_eq(rstats(s, 0).nodes, 1);
  /* a transaction left open is closed by atom_finish and judged */
  CHECK(atom_begin(s, 2, 10) == 0);
  CHECK(atom_read(s, 2, 7, 11) == 0);
  CHECK(atom_write(s, 2, 7, 12) == 0);
  CHECK(atom_finish(s) == 0);
  ck_assert_uint_eq(atom_report_count(s), 2);
  ck_assert_uint_eq(atom_report_event_index(atom_report_get(s, 0)), 2); /* where it breaks */
  ck_assert_uint_eq(rstats(s, 0).nodes, 0);                              /* freed */
  CHECK(atom_finish(s) == 0);                                            /* idempotent */
  ck_assert_uint_eq(atom_report_count(s), 2);
  atom_session_free(s);
}
END_TEST

/* ---- reports -------------------------------------------------------------------------------- */

START_TEST(report_contents) {
  static const char *const specs[] = {"reduction", "reduction:lockset=eraser"};
  static const char *const msgs[] = {
      "main's transaction at loc 100 (event 0) cannot be reduced to one atomic step: main wrote "
      "x at loc 104 (event 4) races with other threads after main released m at loc 103 (event "
      "3) let them in, so another thread's access can come between them (another thread "
      "accesses x with no common lock: worker wrote x at loc 107 (event 7))",
      "main's transaction at loc 100 (event 0) cannot be reduced to one atomic step: main wrote "
      "x at loc 102 (event 2) and main wrote x at loc 104 (event 4) both race with other "
      "threads, so another thread's access can come between them (x is shared, written and "
      "unprotected since worker wrote x at loc 107 (event 7))"};
  for (int v = 0; v < 2; v++) {
    atom_session *s = red_session(specs[v]);
    enum { T1 = 0x10, T2 = 0x20, X = 0x99, M = 0x77 };
    CHECK(atom_set_name(s, ATOM_SPACE_THREAD, T1, "main") == 0);
    CHECK(atom_set_name(s, ATOM_SPACE_THREAD, T2, "worker") == 0);
    CHECK(atom_set_name(s, ATOM_SPACE_VAR, X, "x") == 0);
    CHECK(atom_set_name(s, ATOM_SPACE_LOCK, M, "m") == 0);
    CHECK(atom_begin(s, T1, 100) == 0);      /* 0 */
    CHECK(atom_acquire(s, T1, M, 101) == 0); /* 1 */
    CHECK(atom_write(s, T1, X, 102) == 0);   /* 2 */
    CHECK(atom_release(s, T1, M, 103) == 0); /* 3 */
    CHECK(atom_write(s, T1, X, 104) == 0);   /* 4 */
    CHECK(atom_end(s, T1, 105) == 0);        /* 5 */
    CHECK(atom_acquire(s, T2, M, 106) == 0); /* 6 */
    CHECK(atom_write(s, T2, X, 107) == 0);   /* 7 */
    CHECK(atom_release(s, T2, M, 108) == 0); /* 8 */
    CHECK(atom_finish(s) == 0);
    ck_assert_uint_eq(atom_report_count(s), 1);
    const atom_report *r = atom_report_get(s, 0);
    ck_assert_str_eq(atom_report_checker(r), "reduction");
    ck_assert_str_eq(atom_report_kind(r), "not-reducible");
    ck_assert_str_eq(atom_report_message(r), msgs[v]);
    ck_assert_uint_eq(atom_report_event_index(r), v == 0 ? 4 : 7);
    ck_assert_uint_eq(atom_report_occurrences(r), 1);
    ck_assert_uint_eq(atom_report_txn_count(r), 1);
    uint64_t t, b, l;
    ck_assert_int_eq(atom_report_txn(r, 0, &t, &b, &l), 0);
    ck_assert_uint_eq(t, T1);
    ck_assert_uint_eq(b, 0);
    ck_assert_uint_eq(l, 100);
    /* the partner of the race (precise) or the access that made x racy (eraser) follows the
     * two events of the break */
    ck_assert_uint_eq(atom_report_event_count(r), 3);
    atom_event ev;
    uint64_t idx;
    ck_assert_int_eq(atom_report_event(r, 0, &ev, &idx), 0);
    ck_assert_uint_eq(idx, v == 0 ? 3 : 2);
    ck_assert_uint_eq(ev.kind, v == 0 ? ATOM_RELEASE : ATOM_WRITE);
    ck_assert_uint_eq(ev.thread, T1);
    ck_assert_uint_eq(ev.target, v == 0 ? (uint64_t)M : (uint64_t)X);
    ck_assert_uint_eq(ev.loc, v == 0 ? 103 : 102);
    ck_assert_int_eq(atom_report_event(r, 1, &ev, &idx), 0);
    ck_assert_uint_eq(idx, 4);
    ck_assert_uint_eq(ev.kind, ATOM_WRITE);
    ck_assert_uint_eq(ev.target, X);
    ck_assert_uint_eq(ev.loc, 104);
    ck_assert_int_eq(atom_report_event(r, 2, &ev, &idx), 0);
    ck_assert_uint_eq(idx, 7);
    ck_assert_uint_eq(ev.thread, T2);
    ck_assert_uint_eq(ev.kind, ATOM_WRITE);
    ck_assert_uint_eq(atom_report_var_count(r), 1);
    ck_assert_uint_eq(atom_report_var(r, 0), X);
    ck_assert_str_eq(atom_report_var_name(r, 0), "x");
    atom_session_free(s);
  }
}
END_TEST

/* The same violation in a loop is one report counted N times; the same transaction code
 * breaking at other locations is another report. */
START_TEST(dedup_in_loops) {
  static const char *const specs[] = {"reduction", "reduction:lockset=eraser"};
  for (int v = 0; v < 2; v++) {
    atom_session *s = red_session(specs[v]);
    for (int i = 0; i < 40; i++) {
      CHECK(atom_begin(s, 1, 1) == 0);
      CHECK(atom_write(s, 1, 5, 2) == 0);
      CHECK(atom_write(s, 1, 5, i % 4 == 3 ? 4 : 3) == 0);
      CHECK(atom_end(s, 1, 5) == 0);
      CHECK(atom_write(s, 2, 5, 6) == 0);
    }
    CHECK(atom_finish(s) == 0);
    ck_assert_uint_eq(atom_report_count(s), 2);
    uint64_t o0 = atom_report_occurrences(atom_report_get(s, 0));
    uint64_t o1 = atom_report_occurrences(atom_report_get(s, 1));
    ck_assert_uint_eq(o0 + o1, 40);
    ck_assert(o0 == 10 || o1 == 10);
    atom_checker_stats st = rstats(s, 0);
    ck_assert_uint_eq(st.reports, 2);
    ck_assert_uint_eq(st.occurrences, 40);
    ck_assert_uint_eq(st.nodes, 0);
    atom_session_free(s);
  }
}
END_TEST

START_TEST(arguments) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "reduction:lockset=bogus"), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "lockset"));
  ck_assert_int_lt(atom_session_attach(s, "reduction:locks=eraser"), 0);
  ck_assert_int_eq(atom_session_attach(s, "reduction:lockset=eraser"), 0);
  ck_assert_int_eq(atom_session_attach(s, "reduction:lockset=precise"), 0);
  ck_assert_int_eq(atom_session_attach(s, "reduction"), 0);
  atom_session_free(s);
}
END_TEST

/* Allocation failures inside the checker surface as ATOM_ENOMEM; the session stays usable and
 * frees cleanly (ASan/valgrind check the latter). */
START_TEST(session_out_of_memory) {
  static const char *const specs[] = {"reduction", "reduction:lockset=eraser"};
  for (int v = 0; v < 2; v++) {
    int saw = 0;
    for (long budget = 0; budget < 300; budget += 2) {
      tu_failing f = {.budget = -1};
      atom_options o;
      tu_failing_options(&o, &f);
      atom_session *s = NULL;
      CHECK(atom_session_new(&s, &o) == 0);
      CHECK(atom_session_attach(s, specs[v]) == 0);
      f.budget = budget;
      int nomem = 0;
      for (int i = 0; i < 300; i++) {
        uint64_t t = 1 + (uint64_t)(i % 3);
        int step = (i / 3) % 7;
        int rc = step == 0   ? atom_begin(s, t, 1)
                 : step == 1 ? atom_acquire(s, t, 40 + (uint64_t)(i % 2), 2)
                 : step == 2 ? atom_read(s, t, t % 3, 3)
                 : step == 3 ? atom_release(s, t, 40 + (uint64_t)(i % 2), 4)
                 : step == 4 ? atom_write(s, t, (t + (uint64_t)i) % 5, 5)
                 : step == 5 ? atom_write(s, t, (t + 1) % 3, 6)
                             : atom_end(s, t, 7);
        if (rc == ATOM_ENOMEM) nomem++;
        CHECK(rc <= 0);
      }
      int rc = atom_finish(s);
      if (rc == ATOM_ENOMEM) nomem++;
      f.budget = -1;
      atom_finish(s); /* a retry after running out of memory */
      saw |= nomem > 0;
      atom_session_free(s);
    }
    CHECK(saw);
  }
}
END_TEST

/* held(e) is tracked up to 64 locks per thread: a lock taken beyond them does not protect
 * (more reports, never fewer), and a thread holding 10^5 locks costs linear memory. */
START_TEST(many_locks_held) {
  for (int v = 0; v < 2; v++) {
    for (int late = 0; late < 2; late++) {
      atom_session *s = red_session(v ? "reduction:lockset=eraser" : "reduction");
      for (uint64_t l = 1; l <= 100; l++) CHECK(atom_acquire(s, 1, l, 0) == 0);
      CHECK(atom_begin(s, 1, 1) == 0);
      CHECK(atom_write(s, 1, 7, 2) == 0);
      CHECK(atom_write(s, 1, 7, 3) == 0);
      CHECK(atom_end(s, 1, 4) == 0);
      for (uint64_t l = 100; l >= 1; l--) CHECK(atom_release(s, 1, l, 0) == 0);
      uint64_t guard = late ? 100 : 1; /* the 100th lock is not tracked */
      CHECK(atom_acquire(s, 2, guard, 5) == 0);
      CHECK(atom_write(s, 2, 7, 6) == 0);
      CHECK(atom_release(s, 2, guard, 7) == 0);
      CHECK(atom_finish(s) == 0);
      ck_assert_msg(atom_report_count(s) == (size_t)late, "%s, guard %llu: %zu reports",
                    v ? "eraser" : "precise", (unsigned long long)guard, atom_report_count(s));
      atom_session_free(s);
    }
    atom_session *s = red_session(v ? "reduction:lockset=eraser" : "reduction");
    uint64_t n = under_valgrind() ? 5000 : 50000;
    CHECK(atom_begin(s, 1, 0) == 0);
    for (uint64_t l = 0; l < n; l++) CHECK(atom_acquire(s, 1, l, 1) == 0);
    CHECK(atom_write(s, 1, 1, 2) == 0);
    for (uint64_t l = n; l-- > 0;) CHECK(atom_release(s, 1, l, 3) == 0);
    CHECK(atom_end(s, 1, 4) == 0);
    CHECK(atom_finish(s) == 0);
    ck_assert_uint_lt(rstats(s, 0).peak_bytes, 64 * n); /* the transaction's right movers */
    atom_session_free(s);
  }
}
END_TEST

/* A root thread's period has an empty clock: many root threads cost a constant amount of
 * memory each. */
START_TEST(many_threads) {
  for (int v = 0; v < 2; v++) {
    atom_session *s = red_session(v ? "reduction:lockset=eraser" : "reduction");
    uint64_t n = under_valgrind() ? 2000 : 20000;
    for (uint64_t t = 0; t < n; t++) {
      CHECK(atom_begin(s, 100 + t, 0) == 0);
      CHECK(atom_read(s, 100 + t, t % 3, 1) == 0);
      CHECK(atom_write(s, 100 + t, 5, 2) == 0);
      CHECK(atom_end(s, 100 + t, 3) == 0);
    }
    CHECK(atom_finish(s) == 0);
    /* about 1.2 KB per thread (its record, period, classes, transaction buffers and
     * kept transaction); dense clocks would need 4 bytes per pair of threads */
    ck_assert_uint_lt(rstats(s, 0).peak_bytes, 2048 * n);
    ck_assert_uint_eq(atom_report_count(s), 0); /* x%3 only read, y written once per txn */
    atom_session_free(s);
  }
}
END_TEST

/* The adversarial shape for the race analysis: n lock blocks of each of two threads write
 * variable 7 under a lock of their own plus m (thread 2 also p), one block of thread 1 holds p
 * alone: no lock is common to all, every cross pair shares one, so no class is racy and every
 * pair must be compared (n^2). */
static void push_pairwise_protected(atom_session *s, uint64_t n) {
  CHECK(atom_acquire(s, 1, 1001, 0) == 0);
  CHECK(atom_write(s, 1, 7, 1) == 0);
  CHECK(atom_release(s, 1, 1001, 2) == 0);
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t t = 1; t <= 2; t++) {
      CHECK(atom_acquire(s, t, 1000, 3) == 0);
      if (t == 2) CHECK(atom_acquire(s, t, 1001, 3) == 0);
      CHECK(atom_acquire(s, t, 2000 + 2 * i + t, 4) == 0);
      CHECK(atom_write(s, t, 7, 5) == 0);
      CHECK(atom_release(s, t, 2000 + 2 * i + t, 6) == 0);
      if (t == 2) CHECK(atom_release(s, t, 1001, 7) == 0);
      CHECK(atom_release(s, t, 1000, 7) == 0);
    }
}

static atom_checker_status rstatus(atom_session *s) {
  atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
  ck_assert_int_eq(atom_checker_status_get(s, 0, &st), 0);
  return st;
}

/* max_work bounds the pairwise race analysis of lockset=precise: INCOMPLETE, never a report
 * of its own, the reports made stay true; the issue's shapes are decided fast by default. */
START_TEST(race_analysis_bound) {
  /* a racy transaction on variable 3 first: it is reported whatever the bound */
  atom_session *s = red_session("reduction:max_work=1000");
  CHECK(atom_begin(s, 1, 50) == 0);
  CHECK(atom_write(s, 1, 3, 51) == 0);
  CHECK(atom_write(s, 1, 3, 52) == 0);
  CHECK(atom_end(s, 1, 53) == 0);
  CHECK(atom_write(s, 2, 3, 54) == 0);
  push_pairwise_protected(s, 300);
  CHECK(atom_finish(s) == 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_str_eq(atom_report_kind(atom_report_get(s, 0)), "not-reducible");
  atom_checker_status st = rstatus(s);
  ck_assert_uint_eq(st.state, ATOM_CHECKER_INCOMPLETE);
  ck_assert_uint_eq(st.stopped_at, 5 + 3 + 300 * 12);
  ck_assert_int_eq(st.error, 0);
  ck_assert_str_eq(st.reason, "the race analysis stopped after 1000 comparisons "
                              "(max_work=1000): accesses of 1 variable were taken as race free, "
                              "so some transactions were not fully checked");
  atom_session_free(s);
  /* the default decides it (300^2 comparisons) */
  s = red_session("reduction");
  push_pairwise_protected(s, 300);
  CHECK(atom_finish(s) == 0);
  ck_assert_uint_eq(rstatus(s).state, ATOM_CHECKER_COMPLETE);
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_session_free(s);
  /* issue shapes: two threads writing under distinct locks, many single-write threads; once
   * every class is racy the comparisons stop, so no bound is needed */
  uint64_t n = under_valgrind() ? 2000 : 50000;
  s = red_session("reduction:max_work=1000000");
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t t = 1; t <= 2; t++) {
      CHECK(atom_acquire(s, t, 10 + 2 * i + t, 0) == 0);
      CHECK(atom_write(s, t, 7, 1) == 0);
      CHECK(atom_release(s, t, 10 + 2 * i + t, 2) == 0);
    }
  CHECK(atom_finish(s) == 0);
  ck_assert_uint_eq(rstatus(s).state, ATOM_CHECKER_COMPLETE);
  atom_session_free(s);
  s = red_session("reduction:max_work=1000000");
  for (uint64_t t = 0; t < n; t++) CHECK(atom_write(s, 100 + t, 7, 1) == 0);
  CHECK(atom_finish(s) == 0);
  ck_assert_uint_eq(rstatus(s).state, ATOM_CHECKER_COMPLETE);
  atom_session_free(s);
  /* the argument */
  const char *const bad[] = {"reduction:max_work=0", "reduction:max_work=-5",
                             "reduction:max_work=1e9", "reduction:max_work="};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    ck_assert_int_eq(atom_session_attach(s, bad[i]), ATOM_EINVAL);
    atom_session_free(s);
  }
}
END_TEST

/* ---- an offline oracle of the documented semantics ------------------------------------------ */

#define OR_MAX 64

typedef struct or_access {
  int thread, var, write;
  uint64_t held;               /* lock bits */
  uint32_t clock;              /* own component */
  uint32_t vc[OR_MAX];         /* fork/join clock at the access */
} or_access;

typedef struct or_event {
  size_t index;   /* in the pushed stream */
  int mover;      /* 'R', 'L', or 'A' (an access: acc) */
  int acc;
} or_event;

typedef struct or_txn {
  size_t begin;
  size_t first, n; /* its events in or_event order */
} or_txn;

typedef struct oracle {
  or_access *acc;
  size_t nacc;
  or_event *ev;
  size_t nev;
  or_txn *txn;
  size_t ntxn;
} oracle;

static int id_of(uint64_t *keys, int *n, uint64_t k) {
  for (int i = 0; i < *n; i++)
    if (keys[i] == k) return i;
  CHECK(*n < OR_MAX);
  keys[*n] = k;
  return (*n)++;
}

static void oracle_build(const atom_event *e, size_t n, oracle *o) {
  memset(o, 0, sizeof *o);
  o->acc = calloc(n + 1, sizeof *o->acc);
  o->ev = calloc(n + 1, sizeof *o->ev);
  o->txn = calloc(n + 1, sizeof *o->txn);
  static uint64_t tk[OR_MAX], vk[OR_MAX], lk[OR_MAX];
  int nt = 0, nv = 0, nl = 0;
  static uint32_t vc[OR_MAX][OR_MAX];
  static int depth[OR_MAX], started[OR_MAX], lockd[OR_MAX][OR_MAX];
  static size_t open_txn[OR_MAX];
  memset(vc, 0, sizeof vc);
  memset(depth, 0, sizeof depth);
  memset(started, 0, sizeof started);
  memset(lockd, 0, sizeof lockd);
  /* events of each open transaction are collected per thread, then appended at its END */
  static or_event pend[OR_MAX][256];
  static size_t npend[OR_MAX];
  memset(npend, 0, sizeof npend);
  for (size_t i = 0; i < n; i++) {
    int t = id_of(tk, &nt, e[i].thread);
    if (!started[t]) {
      started[t] = 1;
      vc[t][t] = 1;
    }
    int mover = 0;
    switch (e[i].kind) {
    case ATOM_BEGIN:
      if (depth[t]++ == 0) {
        open_txn[t] = i;
        npend[t] = 0;
      }
      break;
    case ATOM_END:
      if (--depth[t] == 0) {
        or_txn *x = &o->txn[o->ntxn++];
        x->begin = open_txn[t];
        x->first = o->nev;
        x->n = npend[t];
        memcpy(o->ev + o->nev, pend[t], npend[t] * sizeof **pend);
        o->nev += npend[t];
      }
      break;
    case ATOM_ACQUIRE: {
      int l = id_of(lk, &nl, e[i].target);
      if (lockd[t][l]++ == 0) mover = 'R';
      break;
    }
    case ATOM_RELEASE: {
      int l = id_of(lk, &nl, e[i].target);
      if (--lockd[t][l] == 0) mover = 'L';
      break;
    }
    case ATOM_FORK: {
      int u = id_of(tk, &nt, e[i].target);
      memcpy(vc[u], vc[t], sizeof vc[t]);
      vc[u][u] = 1;
      started[u] = 1;
      vc[t][t]++;
      mover = 'L';
      break;
    }
    case ATOM_JOIN: {
      int u = id_of(tk, &nt, e[i].target);
      if (!started[u]) {
        started[u] = 1;
        vc[u][u] = 1;
      }
      for (int k = 0; k < OR_MAX; k++)
        if (vc[u][k] > vc[t][k]) vc[t][k] = vc[u][k];
      vc[t][t]++;
      mover = 'R';
      break;
    }
    case ATOM_READ:
    case ATOM_WRITE: {
      or_access *a = &o->acc[o->nacc];
      a->thread = t;
      a->var = id_of(vk, &nv, e[i].target);
      a->write = e[i].kind == ATOM_WRITE;
      for (int l = 0; l < nl; l++)
        if (lockd[t][l]) a->held |= 1ull << l;
      a->clock = vc[t][t];
      memcpy(a->vc, vc[t], sizeof a->vc);
      mover = 'A';
      break;
    }
    default:
      break;
    }
    if (mover && depth[t] > 0) {
      CHECK(npend[t] < 256);
      pend[t][npend[t]++] = (or_event){i, mover, mover == 'A' ? (int)o->nacc : -1};
    }
    if (mover == 'A') o->nacc++;
  }
  for (int t = 0; t < nt; t++) /* closed by atom_finish */
    if (depth[t] > 0) {
      or_txn *x = &o->txn[o->ntxn++];
      x->begin = open_txn[t];
      x->first = o->nev;
      x->n = npend[t];
      memcpy(o->ev + o->nev, pend[t], npend[t] * sizeof **pend);
      o->nev += npend[t];
    }
}

static void oracle_free(oracle *o) {
  free(o->acc);
  free(o->ev);
  free(o->txn);
}

static int hb(const or_access *a, const or_access *b) { return a->clock <= b->vc[a->thread]; }

/* Which accesses are non-movers: precise (000 Thm 4.3) or eraser (Thm 4.4 + read-shared),
 * both with "initialization" = ordered by happens-before with every other thread's access. */
static void oracle_nonmovers(const oracle *o, int eraser, int *isn) {
  for (size_t i = 0; i < o->nacc; i++) {
    const or_access *a = &o->acc[i];
    isn[i] = 0;
    if (!eraser) {
      for (size_t j = 0; j < o->nacc && !isn[i]; j++) {
        const or_access *b = &o->acc[j];
        if (b->var != a->var || b->thread == a->thread || !(a->write || b->write)) continue;
        if ((a->held & b->held) || hb(a, b) || hb(b, a)) continue;
        isn[i] = 1;
      }
      continue;
    }
    /* eraser: x racy iff a shared write exists and the shared accesses have no common lock */
    uint64_t common = ~0ull;
    int shared_write = 0, a_shared = 0;
    for (size_t j = 0; j < o->nacc; j++) {
      const or_access *b = &o->acc[j];
      if (b->var != a->var) continue;
      int shared = 0;
      for (size_t k = 0; k < o->nacc && !shared; k++) {
        const or_access *c = &o->acc[k];
        if (c->var == b->var && c->thread != b->thread && !hb(b, c) && !hb(c, b)) shared = 1;
      }
      if (!shared) continue;
      common &= b->held;
      shared_write |= b->write;
      if (j == i) a_shared = 1;
    }
    isn[i] = a_shared && shared_write && common == 0;
  }
}

/* The first break of (R+B)*N?(L+B)* in transaction x: 1 and the indices of the commit event
 * and of the breaking event, or 0. */
static int oracle_break(const oracle *o, const or_txn *x, const int *isn, size_t *c, size_t *f) {
  long commit = -1;
  for (size_t k = 0; k < x->n; k++) {
    const or_event *e = &o->ev[x->first + k];
    int m = e->mover == 'A' ? (isn[e->acc] ? 'N' : 'B') : e->mover;
    if (m == 'B') continue;
    if (m == 'R') {
      if (commit < 0) continue;
    } else if (commit < 0) {
      commit = (long)e->index;
      continue;
    } else if (m == 'L') {
      continue;
    }
    *c = (size_t)commit;
    *f = e->index;
    return 1;
  }
  return 0;
}

/* ---- random traces -------------------------------------------------------------------------- */

/* Make every unit of interleave.h an explicit transaction: a synthetic BEGIN where a thread
 * goes inside (opens a transaction or takes a lock while outside) and a synthetic END where it
 * comes back outside. The session's transactions are then exactly the reference's units (lock
 * blocks outside transactions, and transactions overlapping lock blocks, included), and the
 * events, their order and the reference's units are unchanged otherwise. Every event also gets
 * loc = its index, so that every transaction has its own report. */
static atom_event *wrap_units(const atom_event *e, size_t n, size_t *out_n) {
  atom_event *w = calloc(3 * n + 1, sizeof *w);
  CHECK(w != NULL);
  static uint64_t tk[OR_MAX];
  static int depth[OR_MAX], held[OR_MAX];
  int nt = 0;
  memset(depth, 0, sizeof depth);
  memset(held, 0, sizeof held);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int t = id_of(tk, &nt, e[i].thread);
    int before = depth[t] > 0 || held[t] > 0;
    if (e[i].kind == ATOM_BEGIN) depth[t]++;
    else if (e[i].kind == ATOM_END) depth[t]--;
    else if (e[i].kind == ATOM_ACQUIRE) held[t]++;
    else if (e[i].kind == ATOM_RELEASE) held[t]--;
    int after = depth[t] > 0 || held[t] > 0;
    if (!before && after) w[k++] = (atom_event){ATOM_BEGIN, 0, e[i].thread, 0, 0};
    w[k++] = e[i];
    if (before && !after) w[k++] = (atom_event){ATOM_END, 0, e[i].thread, 0, 0};
  }
  for (size_t i = 0; i < k; i++) w[i].loc = 1000 + i;
  *out_n = k;
  return w;
}

/* Push a trace into a fresh session of spec; mark in rep[] (size n) the begin index of every
 * reported transaction, checking each report's shape. */
static void run_and_collect(const char *spec, const atom_event *e, size_t n, char *rep) {
  atom_session *s = red_session(spec);
  for (size_t i = 0; i < n; i++) CHECK(atom_push(s, &e[i]) == 0);
  CHECK(atom_finish(s) == 0);
  memset(rep, 0, n + 1);
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const atom_report *r = atom_report_get(s, i);
    CHECK(atom_report_occurrences(r) == 1); /* locs are unique */
    CHECK(atom_report_txn_count(r) == 1 && atom_report_event_count(r) >= 2);
    uint64_t b;
    CHECK(atom_report_txn(r, 0, NULL, &b, NULL) == 0);
    CHECK(b < n && e[b].kind == ATOM_BEGIN);
    CHECK(!rep[b]);
    rep[b] = 1;
    uint64_t c = witness_index(r, 0), f = witness_index(r, 1);
    CHECK(b < c && c < f && f < n);
    /* (synthetic ENDs at finish take the indices n, n+1, ...) */
    if (!(atom_report_event_index(r) >= f && atom_report_event_index(r) <= n + OR_MAX)) {
      fprintf(stderr, "%s: report at %llu, events %llu %llu: %s\n", spec,
              (unsigned long long)atom_report_event_index(r), (unsigned long long)c,
              (unsigned long long)f, atom_report_message(r));
      rt_write_std(stderr, e, n);
      ck_abort_msg("report index");
    }
  }
  CHECK(rstats(s, 0).nodes == 0);
  atom_session_free(s);
}

typedef struct tally {
  size_t traces, atomic, not_atomic;
  size_t over[2];      /* atomic traces with a report (precise, eraser) */
  size_t txns[2];      /* reported transactions in atomic traces */
  size_t multi_txns;   /* transactions of >= 2 movers in atomic traces */
  size_t cycles_checked, cycles_lock_at_end;
} tally;

static void dump(uint64_t seed, const char *why, const atom_event *e, size_t n) {
  fprintf(stderr, "reduction, seed %llu: %s\n", (unsigned long long)seed, why);
  rt_write_std(stderr, e, n);
}

/* sync: the trace has synchronizing accesses (rt_params_sync); the oracle does not model
 * them, so only the comparison with every feasible interleaving is made. */
static void one_random_case(uint64_t seed, int sync, tally *ty) {
  rt_params p;
  rt_params_random(&p, seed, 32);
  if (sync) rt_params_sync(&p, seed);
  atom_event *raw = NULL;
  size_t nraw = 0;
  CHECK(rt_generate(&p, seed, &raw, &nraw) == 0);
  size_t n;
  atom_event *e = wrap_units(raw, nraw, &n);
  free(raw);

  char *rep[2];
  rep[0] = malloc(n + 1);
  rep[1] = malloc(n + 1);
  run_and_collect("reduction:lockset=precise", e, n, rep[0]);
  run_and_collect("reduction:lockset=eraser", e, n, rep[1]);

  /* exactly the documented semantics */
  oracle o;
  memset(&o, 0, sizeof o);
  int *isn = NULL;
  if (!sync) {
  oracle_build(e, n, &o);
  isn = calloc(o.nacc + 1, sizeof *isn);
  for (int v = 0; v < 2; v++) {
    oracle_nonmovers(&o, v, isn);
    for (size_t k = 0; k < o.ntxn; k++) {
      size_t c = 0, f = 0;
      int bad = oracle_break(&o, &o.txn[k], isn, &c, &f);
      if (bad != rep[v][o.txn[k].begin]) {
        char why[128];
        snprintf(why, sizeof why, "%s: transaction @%zu: oracle %d, checker %d",
                 v ? "eraser" : "precise", o.txn[k].begin, bad, rep[v][o.txn[k].begin]);
        dump(seed, why, e, n);
        ck_abort_msg("reduction differs from the oracle; seed %llu", (unsigned long long)seed);
      }
    }
  }
  /* precise names exactly the oracle's two events */
  oracle_nonmovers(&o, 0, isn);
  {
    atom_session *s = red_session("reduction");
    for (size_t i = 0; i < n; i++) CHECK(atom_push(s, &e[i]) == 0);
    CHECK(atom_finish(s) == 0);
    for (size_t k = 0; k < o.ntxn; k++) {
      size_t c, f;
      if (!oracle_break(&o, &o.txn[k], isn, &c, &f)) continue;
      long ri = report_of_txn(s, o.txn[k].begin);
      CHECK(ri >= 0);
      const atom_report *r = atom_report_get(s, (size_t)ri);
      if (witness_index(r, 0) != c || witness_index(r, 1) != f) {
        dump(seed, atom_report_message(r), e, n);
        ck_abort_msg("named events differ: oracle %zu %zu; seed %llu", c, f,
                     (unsigned long long)seed);
      }
      CHECK(atom_report_event_index(r) == f);
    }
    atom_session_free(s);
  }
  }
  /* eraser's non-movers include precise's: it reports every transaction precise reports */
  for (size_t i = 0; i < n; i++) CHECK(!rep[0][i] || rep[1][i]);

  /* against every feasible interleaving */
  il_result res;
  il_options opt = {0};
  if (il_check(e, n, &opt, &res) != 0) {
    dump(seed, il_error(), e, n);
    ck_abort_msg("il_check failed; seed %llu", (unsigned long long)seed);
  }
  ty->traces++;
  size_t nrep[2] = {0, 0};
  for (int v = 0; v < 2; v++)
    for (size_t i = 0; i < n; i++) nrep[v] += (size_t)rep[v][i];
  if (res.conflict_atomic) {
    ty->atomic++;
    for (int v = 0; v < 2; v++) {
      ty->over[v] += nrep[v] > 0;
      ty->txns[v] += nrep[v];
    }
    for (size_t k = 0; k < o.ntxn && !sync; k++) ty->multi_txns += o.txn[k].n >= 2;
  } else {
    ty->not_atomic++;
    for (int v = 0; v < 2; v++)
      if (nrep[v] == 0) {
        dump(seed, v ? "eraser passes a trace that is not conflict-atomic"
                     : "precise passes a trace that is not conflict-atomic",
             e, n);
        ck_abort_msg("unsound; seed %llu", (unsigned long long)seed);
      }
    /* The witness schedule is not conflict-serializable; its shortest cycle of transactions
     * (003 conflicts, a superset of the reference's memory conflicts) must contain a
     * transaction that reduction reports: reducible transactions can be made contiguous by
     * swaps that keep every conflict, and a cycle of contiguous transactions is impossible.
     * (Its cycle may instead need a "lock held at the end" edge, which 003 does not know.) */
    CHECK(res.n_conflict_witness == n);
    atom_event *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = e[res.conflict_witness[i]];
    ref_cycle cyc;
    int sr = ref_conflict_serializable(perm, n, &cyc);
    CHECK(sr == 0 || sr == 1);
    if (sr == 0) {
      ty->cycles_checked++;
      for (int v = 0; v < 2; v++) {
        int hit = 0;
        for (size_t i = 0; i < cyc.n; i++) {
          size_t orig = res.conflict_witness[cyc.begin[i]];
          hit |= rep[v][orig];
        }
        if (!hit) {
          dump(seed, "a cycle of the witness has no reported transaction", e, n);
          ck_abort_msg("unsound cycle; seed %llu", (unsigned long long)seed);
        }
      }
    } else {
      ty->cycles_lock_at_end++;
    }
    free(perm);
  }
  il_result_free(&res);
  free(isn);
  if (!sync) oracle_free(&o);
  free(rep[0]);
  free(rep[1]);
  free(e);
}

START_TEST(random_against_interleavings) {
  unsigned long long cases = env_number("ATOM_REDUCTION_CASES", under_valgrind() ? 300 : 4000);
  unsigned long long seed0 = env_number("ATOM_REDUCTION_SEED", 1);
  tally ty;
  memset(&ty, 0, sizeof ty);
  for (int sync = 0; sync < 2; sync++) {
  memset(&ty, 0, sizeof ty);
  for (unsigned long long c = 0; c < cases; c++) one_random_case(seed0 + c, sync, &ty);
  fprintf(stderr,
          "reduction vs all interleavings%s: %zu traces, %zu conflict-atomic, %zu not (all "
          "reported; %zu witness cycles checked, %zu need a lock-at-end edge); over-reports on "
          "conflict-atomic traces: precise %zu (%.1f%%), eraser %zu (%.1f%%); reported "
          "transactions there: precise %zu, eraser %zu of %zu with >= 2 movers\n",
          sync ? " (sync accesses)" : "", ty.traces, ty.atomic, ty.not_atomic, ty.cycles_checked, ty.cycles_lock_at_end,
          ty.over[0], ty.atomic ? 100.0 * (double)ty.over[0] / (double)ty.atomic : 0.0, ty.over[1],
          ty.atomic ? 100.0 * (double)ty.over[1] / (double)ty.atomic : 0.0, ty.txns[0], ty.txns[1],
          ty.multi_txns);
  CHECK(ty.traces == cases);
  if (cases >= 1000) {
    CHECK(ty.not_atomic > cases / 10); /* the generator makes violations */
    CHECK(ty.atomic > cases / 10);
  }
  }
}
END_TEST

Suite *atom_test_suite_reduction(void) {
  Suite *s = suite_create("reduction");
  TCase *l = tcase_create("lockset");
  tcase_add_test(l, lockset_basics);
  tcase_add_test(l, lockset_random_against_masks);
  tcase_add_test(l, lockset_out_of_memory);
  suite_add_tcase(s, l);
  TCase *c = tcase_create("checker");
  tcase_set_timeout(c, 120);
  tcase_add_test(c, paper_examples);
  tcase_add_test(c, mover_classes_precise);
  tcase_add_test(c, mover_classes_eraser);
  tcase_add_test(c, race_freedom_by_locks);
  tcase_add_test(c, initialization_and_readback);
  tcase_add_test(c, eraser_reports_online);
  tcase_add_test(c, precise_reports_at_finish);
  tcase_add_test(c, report_contents);
  tcase_add_test(c, dedup_in_loops);
  tcase_add_test(c, arguments);
  tcase_add_test(c, session_out_of_memory);
  tcase_add_test(c, many_locks_held);
  tcase_add_test(c, many_threads);
  tcase_add_test(c, race_analysis_bound);
  suite_add_tcase(s, c);
  TCase *r = tcase_create("random");
  tcase_set_timeout(r, 600);
  tcase_add_test(r, random_against_interleavings);
  suite_add_tcase(s, r);
  return s;
}
