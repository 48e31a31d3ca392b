/* aerodrome (003 Algorithm 1 and §4.3) and the vector clocks it is built on. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "randtrace.h"
#include "reference.h"
#include "support/mem.h"
#include "inspect.h"
#include "util.h"

static const char *const variants[] = {"aerodrome:variant=basic", "aerodrome"};
#define NVARIANTS 2

/* ---- a small STD parser (keys = order of first appearance, names registered) ---------- */

#define MAXN 128
typedef struct tab {
  char name[MAXN][24];
  size_t n;
} tab;

static uint64_t tab_key(tab *t, const char *s, size_t len) {
  for (size_t i = 0; i < t->n; i++)
    if (strlen(t->name[i]) == len && memcmp(t->name[i], s, len) == 0) return i + 1;
  ck_assert_uint_lt(t->n, MAXN);
  ck_assert_uint_lt(len, sizeof t->name[0]);
  memcpy(t->name[t->n], s, len);
  t->name[t->n][len] = '\0';
  return ++t->n;
}

typedef struct trace {
  atom_event ev[512];
  size_t n;
  tab th, var, lock;
} trace;

static void parse(trace *tr, const char *text) {
  memset(tr, 0, sizeof *tr);
  for (const char *p = text; *p;) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    if (eol > p && *p != '#') {
      const char *b1 = memchr(p, '|', (size_t)(eol - p));
      ck_assert_ptr_nonnull(b1);
      const char *op = b1 + 1;
      const char *b2 = memchr(op, '|', (size_t)(eol - op));
      ck_assert_ptr_nonnull(b2);
      ck_assert_uint_lt(tr->n, sizeof tr->ev / sizeof tr->ev[0]);
      atom_event *e = &tr->ev[tr->n++];
      memset(e, 0, sizeof *e);
      e->thread = tab_key(&tr->th, p, (size_t)(b1 - p));
      e->loc = strtoull(b2 + 1, NULL, 10);
      const char *lp = memchr(op, '(', (size_t)(b2 - op));
      size_t oplen = (size_t)((lp ? lp : b2) - op);
      const char *arg = lp ? lp + 1 : NULL;
      size_t alen = lp ? (size_t)((const char *)memchr(arg, ')', (size_t)(b2 - arg)) - arg) : 0;
#define OP(s) (oplen == strlen(s) && memcmp(op, s, oplen) == 0)
      if (OP("r")) e->kind = ATOM_READ, e->target = tab_key(&tr->var, arg, alen);
      else if (OP("w")) e->kind = ATOM_WRITE, e->target = tab_key(&tr->var, arg, alen);
      else if (OP("acq")) e->kind = ATOM_ACQUIRE, e->target = tab_key(&tr->lock, arg, alen);
      else if (OP("rel")) e->kind = ATOM_RELEASE, e->target = tab_key(&tr->lock, arg, alen);
      else if (OP("fork")) e->kind = ATOM_FORK, e->target = tab_key(&tr->th, arg, alen);
      else if (OP("join")) e->kind = ATOM_JOIN, e->target = tab_key(&tr->th, arg, alen);
      else if (OP("begin")) e->kind = ATOM_BEGIN;
      else if (OP("end")) e->kind = ATOM_END;
      else ck_abort_msg("bad op: %.*s", (int)(eol - p), p);
#undef OP
    }
    p = *eol ? eol + 1 : eol;
  }
}

/* A session with one checker (spec), the trace pushed and finished. */
static atom_session *run_trace(const char *spec, const trace *tr) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  int rc = atom_session_attach(s, spec);
  ck_assert_msg(rc == 0, "attach %s: %s", spec, atom_last_error());
  for (size_t i = 0; i < tr->th.n; i++)
    ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_THREAD, i + 1, tr->th.name[i]), 0);
  for (size_t i = 0; i < tr->var.n; i++)
    ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, i + 1, tr->var.name[i]), 0);
  for (size_t i = 0; i < tr->lock.n; i++)
    ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_LOCK, i + 1, tr->lock.name[i]), 0);
  for (size_t i = 0; i < tr->n; i++) {
    rc = atom_push(s, &tr->ev[i]);
    ck_assert_msg(rc == 0, "%s: event %zu: %s", spec, i, atom_last_error());
  }
  ck_assert_int_eq(atom_finish(s), 0);
  return s;
}

static int64_t first_index(const atom_session *s) {
  int64_t best = -1;
  for (size_t i = 0; i < atom_report_count(s); i++) {
    int64_t at = (int64_t)atom_report_event_index(atom_report_get(s, i));
    if (best < 0 || at < best) best = at;
  }
  return best;
}

/* The first violation index of text under both variants must be `expected` (-1: none). */
static void expect_first(const char *text, int64_t expected) {
  trace tr;
  parse(&tr, text);
  for (int v = 0; v < NVARIANTS; v++) {
    atom_session *s = run_trace(variants[v], &tr);
    int64_t got = first_index(s);
    ck_assert_msg(got == expected, "%s: first violation at %lld, expected %lld\n%s", variants[v],
                  (long long)got, (long long)expected, text);
    for (size_t i = 0; i < atom_report_count(s); i++)
      ck_assert_str_eq(atom_report_kind(atom_report_get(s, i)), "conflict-cycle");
    atom_session_free(s);
  }
}

/* ---- vector clocks ------------------------------------------------------------------- */

START_TEST(test_vc_growth) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__vc a;
  atom__vc_init(&a);
  ck_assert_uint_eq(a.len, 0);
  ck_assert_uint_eq(a.cap, 0); /* ⊥ has no storage */
  ck_assert_uint_eq(atom__vc_get(&a, 0), 0);
  ck_assert_uint_eq(atom__vc_get(&a, 1000), 0);
  ck_assert_int_eq(atom__vc_set(&m, &a, 2, 7), 0);
  ck_assert_uint_eq(a.len, 3);
  ck_assert_uint_eq(a.cap, ATOM__VC_CHUNK); /* one chunk */
  ck_assert_uint_eq(m.bytes, ATOM__VC_CHUNK * sizeof(atom__vc_t));
  ck_assert_int_eq(atom__vc_set(&m, &a, 40, 5), 0); /* grows */
  ck_assert_uint_eq(a.len, 41);
  ck_assert_uint_eq(a.cap % ATOM__VC_CHUNK, 0); /* whole chunks */
  ck_assert_uint_ge(a.cap, 41);
  for (uint32_t i = a.len; i < a.cap; i++) ck_assert_uint_eq(atom__vc_data(&a)[i], 0);
  ck_assert_uint_eq(atom__vc_get(&a, 2), 7);
  ck_assert_uint_eq(atom__vc_get(&a, 40), 5);
  for (uint32_t i = 3; i < 40; i++) ck_assert_uint_eq(atom__vc_get(&a, i), 0);
  ck_assert_uint_eq(atom__vc_get(&a, 41), 0);
  ck_assert_int_eq(atom__vc_inc(&m, &a, 40), 0);
  ck_assert_uint_eq(atom__vc_get(&a, 40), 6);
  ck_assert_int_eq(atom__vc_inc(&m, &a, 100), 0);
  ck_assert_uint_eq(atom__vc_get(&a, 100), 1);
  /* setting a zero beyond the length does not grow */
  uint32_t len = a.len;
  ck_assert_int_eq(atom__vc_set(&m, &a, 5000, 0), 0);
  ck_assert_uint_eq(a.len, len);
  ck_assert_int_eq(atom__vc_set(&m, &a, 7, ATOM__VC_MAX), 0);
  ck_assert_int_eq(atom__vc_inc(&m, &a, 7), ATOM_ELIMIT);
  ck_assert_uint_eq(atom__vc_get(&a, 7), ATOM__VC_MAX);
  char buf[8];
  ck_assert_int_gt(atom__vc_format(&a, buf, sizeof buf), 7);
  ck_assert_uint_eq(strlen(buf), 7);
  atom__vc_clear(&a);
  ck_assert_uint_eq(a.len, 0);
  ck_assert_uint_eq(atom__vc_get(&a, 40), 0);
  ck_assert_int_eq(atom__vc_set(&m, &a, 1, 3), 0);
  ck_assert_uint_eq(atom__vc_get(&a, 40), 0); /* storage beyond len stays zero */
  atom__vc_free(&m, &a);
  ck_assert_uint_eq(m.bytes, 0);
  ck_assert_uint_eq(a.len, 0);
  atom__vc_free(&m, &a); /* twice is fine */
}
END_TEST

START_TEST(test_vc_join_leq) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__vc a, b, c;
  atom__vc_init(&a);
  atom__vc_init(&b);
  atom__vc_init(&c);
  ck_assert(atom__vc_leq(&a, &b) && atom__vc_leq(&b, &a) && atom__vc_equal(&a, &b));
  atom__vc_set(&m, &a, 0, 2);
  atom__vc_set(&m, &a, 1, 1);
  atom__vc_set(&m, &b, 1, 3);
  atom__vc_set(&m, &b, 9, 1);
  ck_assert(!atom__vc_leq(&a, &b)); /* a(0) = 2 > 0 */
  ck_assert(!atom__vc_leq(&b, &a)); /* b(9) = 1 beyond a's length */
  int changed = -1;
  ck_assert_int_eq(atom__vc_copy(&m, &c, &a), 0);
  ck_assert_int_eq(atom__vc_join(&m, &c, &b, &changed), 0);
  ck_assert_int_eq(changed, 1);
  ck_assert_uint_eq(c.len, 10);
  ck_assert_uint_eq(atom__vc_get(&c, 0), 2);
  ck_assert_uint_eq(atom__vc_get(&c, 1), 3);
  ck_assert_uint_eq(atom__vc_get(&c, 9), 1);
  ck_assert(atom__vc_leq(&a, &c) && atom__vc_leq(&b, &c));
  ck_assert(!atom__vc_leq(&c, &a));
  ck_assert_int_eq(atom__vc_join(&m, &c, &a, &changed), 0);
  ck_assert_int_eq(changed, 0);
  ck_assert_int_eq(atom__vc_join(&m, &c, &c, NULL), 0);
  /* a shorter copy zeroes the tail */
  ck_assert_int_eq(atom__vc_copy(&m, &c, &a), 0);
  ck_assert(atom__vc_equal(&c, &a));
  ck_assert_uint_eq(atom__vc_get(&c, 9), 0);
  ck_assert_int_eq(atom__vc_set(&m, &c, 12, 4), 0);
  ck_assert_uint_eq(atom__vc_get(&c, 9), 0);
  /* trailing zeros do not matter for ⊑ */
  atom__vc_set(&m, &c, 12, 0);
  ck_assert(atom__vc_equal(&c, &a));
  /* join except: the skipped component is not taken and does not lengthen */
  atom__vc d;
  atom__vc_init(&d);
  ck_assert_int_eq(atom__vc_join_except(&m, &d, &b, 9), 0);
  ck_assert_uint_eq(d.len, 9);
  ck_assert_uint_eq(atom__vc_get(&d, 9), 0);
  ck_assert_uint_eq(atom__vc_get(&d, 1), 3);
  ck_assert_int_eq(atom__vc_join_except(&m, &d, &a, 0), 0);
  ck_assert_uint_eq(atom__vc_get(&d, 0), 0);
  ck_assert_uint_eq(atom__vc_get(&d, 1), 3);
  char buf[64];
  atom__vc_format(&a, buf, sizeof buf);
  ck_assert_str_eq(buf, "<2,1>");
  atom__vc_format(&d, buf, 0);
  atom__vc e;
  atom__vc_init(&e);
  atom__vc_format(&e, buf, sizeof buf);
  ck_assert_str_eq(buf, "<>");
  atom__vc_free(&m, &a);
  atom__vc_free(&m, &b);
  atom__vc_free(&m, &c);
  atom__vc_free(&m, &d);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

/* An allocator that fails after a budget of allocations. */
typedef struct budget {
  long left; /* < 0: unlimited */
  long failures;
} budget;
static void *b_malloc(size_t n, void *p) {
  budget *b = p;
  if (b->left == 0) {
    b->failures++;
    return NULL;
  }
  if (b->left > 0) b->left--;
  return malloc(n);
}
static void *b_realloc(void *q, size_t n, void *p) {
  budget *b = p;
  if (b->left == 0) {
    b->failures++;
    return NULL;
  }
  if (b->left > 0) b->left--;
  return realloc(q, n);
}
static void b_free(void *q, void *p) {
  (void)p;
  free(q);
}

START_TEST(test_vc_enomem) {
  budget bud = {0, 0};
  atom__allocator al = {b_malloc, b_realloc, b_free, &bud};
  atom__mem m;
  atom__mem_init(&m, &al);
  atom__vc a, b;
  atom__vc_init(&a);
  atom__vc_init(&b);
  ck_assert_int_eq(atom__vc_set(&m, &a, 3, 9), ATOM_ENOMEM); /* ⊥ has no storage */
  ck_assert_uint_eq(a.len, 0);
  ck_assert_uint_eq(a.cap, 0);
  bud.left = 1;
  ck_assert_int_eq(atom__vc_set(&m, &a, 3, 9), 0); /* one chunk */
  ck_assert_int_eq(atom__vc_set(&m, &a, 10, 1), ATOM_ENOMEM); /* past the chunk */
  ck_assert_uint_eq(a.len, 4);
  ck_assert_uint_eq(atom__vc_get(&a, 3), 9);
  bud.left = 1;
  ck_assert_int_eq(atom__vc_set(&m, &b, 10, 1), 0);
  ck_assert_int_eq(atom__vc_join(&m, &a, &b, NULL), ATOM_ENOMEM);
  ck_assert_int_eq(atom__vc_copy(&m, &a, &b), ATOM_ENOMEM);
  ck_assert_uint_eq(a.len, 4);
  ck_assert_uint_eq(atom__vc_get(&a, 3), 9);
  ck_assert_int_eq(atom__vc_join(&m, &b, &a, NULL), 0); /* fits */
  ck_assert_uint_eq(atom__vc_get(&b, 3), 9);
  atom__vc_free(&m, &a);
  atom__vc_free(&m, &b);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

/* ---- the paper's traces and the corpus --------------------------------------------------- */

static const char *const rho1 =
    "t1|begin|0\nt1|w(x)|1\nt2|begin|2\nt2|r(x)|3\nt2|end|4\nt3|begin|5\nt3|w(y)|6\n"
    "t3|end|7\nt1|r(y)|8\nt1|end|9\n";
static const char *const rho2 =
    "t1|begin|0\nt2|begin|1\nt1|w(x)|2\nt2|r(x)|3\nt2|w(y)|4\nt1|r(y)|5\nt1|end|6\n"
    "t2|end|7\n";
static const char *const rho3 =
    "t1|begin|0\nt2|begin|1\nt1|w(x)|2\nt2|w(y)|3\nt1|r(y)|4\nt2|r(x)|5\nt1|end|6\n"
    "t2|end|7\n";
static const char *const rho1p =
    "t1|begin|0\nt1|w(x)|1\nt2|begin|2\nt2|w(y)|3\nt2|r(x)|4\nt2|end|5\nt3|begin|6\n"
    "t3|r(y)|7\nt3|w(z)|8\nt3|end|9\nt1|r(z)|10\nt1|end|11\n";

START_TEST(test_paper_traces) {
  expect_first(rho1, -1); /* 003 Fig. 1: serial order T3 T1 T2 */
  expect_first(rho2, 5);  /* Fig. 5: C_t1^▷ ⊑ W_y at e6 */
  expect_first(rho3, 6);  /* Fig. 6: found at t1's END */
  expect_first(rho1p, 10); /* Fig. 7: W_z learned T2's end through T3 */
}
END_TEST

START_TEST(test_nested) {
  /* 003 §4.1.4: inner BEGIN/END are ignored, the outer transaction still holds r(x) */
  expect_first("t1|begin|0\nt1|r(x)|1\nt1|begin|2\nt1|end|3\nt2|w(x)|4\nt1|w(x)|5\nt1|end|6\n", 5);
  /* the same without the nesting is serializable once the inner END is taken as the end */
  expect_first("t1|begin|0\nt1|r(x)|1\nt1|end|3\nt2|w(x)|4\nt1|begin|5\nt1|w(x)|5\nt1|end|6\n",
               -1);
}
END_TEST

START_TEST(test_lock_edges) {
  /* rel -> acq is a conflict: t2's unary acq/w/rel sit between t1's rel(l) and r(x) */
  expect_first("t1|begin|0\nt1|acq(l)|1\nt1|rel(l)|2\nt2|acq(l)|3\nt2|w(x)|4\nt2|rel(l)|5\n"
               "t1|r(x)|6\nt1|end|7\n", 6);
  /* t1 re-acquiring its own lock is no edge (line 14) */
  expect_first("t1|begin|0\nt1|acq(l)|1\nt1|rel(l)|2\nt1|acq(l)|3\nt1|rel(l)|4\nt1|end|5\n", -1);
  /* acq after a release in a transaction of another thread: a cycle when t2 goes back */
  expect_first("t1|begin|0\nt2|begin|1\nt2|acq(m)|2\nt2|rel(m)|3\nt1|acq(m)|4\nt1|w(x)|5\n"
               "t1|rel(m)|6\nt2|r(x)|7\nt1|end|8\nt2|end|9\n", 7);
  /* 2PL: serializable */
  expect_first("t1|begin|0\nt1|acq(m)|1\nt1|w(x)|2\nt2|begin|3\nt1|rel(m)|4\nt1|end|5\n"
               "t2|acq(m)|6\nt2|r(x)|7\nt2|w(x)|8\nt2|rel(m)|9\nt2|end|10\n", -1);
}
END_TEST

START_TEST(test_fork_join) {
  /* a child forked inside a transaction writes what the parent then reads */
  expect_first("t1|begin|0\nt1|fork(t2)|1\nt2|w(x)|2\nt1|r(x)|3\nt1|end|4\n", 3);
  /* a child that read the parent's open write is joined inside the transaction */
  expect_first("t1|fork(t2)|0\nt1|begin|1\nt1|w(x)|2\nt2|r(x)|3\nt1|join(t2)|4\nt1|end|5\n", 4);
  /* fork and join outside transactions order the child: serializable */
  expect_first("t1|w(x)|0\nt1|fork(t2)|1\nt2|begin|2\nt2|r(x)|3\nt2|w(x)|4\nt2|end|5\n"
               "t1|join(t2)|6\nt1|r(x)|7\n", -1);
  /* A child with no event at all, forked and joined inside a transaction, has no transaction
   * to form a cycle with (Algorithm 1's line 22 alone would declare one). */
  expect_first("t1|begin|0\nt1|fork(t2)|1\nt1|join(t2)|2\nt1|end|3\n", -1);
  expect_first("t1|begin|0\nt1|w(x)|1\nt1|w(x)|2\nt1|end|3\nt1|r(x)|4\nt1|w(x)|5\nt1|begin|6\n"
               "t1|fork(t3)|7\nt1|join(t3)|8\nt1|fork(t2)|9\nt2|begin|10\nt1|end|11\n"
               "t2|end|12\n", -1);
  /* ... but a child with an (empty) transaction does: fork(t2) ≤ t2's BEGIN, its END ≤ join */
  expect_first("t1|begin|0\nt1|fork(t2)|1\nt2|begin|2\nt2|end|3\nt1|join(t2)|4\nt1|end|5\n", 4);
  /* a transaction the child leaves open is closed by the join (session), then checked */
  expect_first("t1|begin|0\nt1|fork(t2)|1\nt2|begin|2\nt2|r(y)|3\nt1|join(t2)|4\nt1|end|5\n", 4);
}
END_TEST

START_TEST(test_unary) {
  /* unary events are transactions of one event; program order links them */
  expect_first("t1|begin|0\nt1|w(x)|1\nt2|r(x)|2\nt2|w(y)|3\nt1|r(y)|4\nt1|end|5\n", 4);
  /* one unary event of t2 between t1's write and read of x: no cycle (t2's read is after) */
  expect_first("t1|begin|0\nt1|w(x)|1\nt2|r(x)|2\nt1|r(x)|3\nt1|end|4\n", -1);
  /* but a unary write in between is one */
  expect_first("t1|begin|0\nt1|r(x)|1\nt2|w(x)|2\nt1|r(x)|3\nt1|end|4\n", 3);
  /* unary events never get checked themselves: a cycle needs a real transaction */
  expect_first("t1|w(x)|0\nt2|r(x)|1\nt2|w(y)|2\nt1|r(y)|3\nt1|w(x)|4\n", -1);
  /* two unary events of t1 in program order close a cycle with t2's open transaction */
  expect_first("t1|begin|0\nt1|w(x)|1\nt1|end|2\nt2|begin|3\nt2|r(x)|4\nt2|w(y)|5\nt1|r(y)|6\n"
               "t1|w(z)|7\nt2|r(z)|8\nt2|end|9\n", 8);
  /* unary events of t1 after its transaction share its clock value: no false cycle */
  expect_first("t1|begin|0\nt1|w(x)|1\nt1|end|2\nt2|begin|3\nt2|r(x)|4\nt1|w(z)|5\nt2|r(z)|6\n"
               "t2|w(y)|7\nt2|end|8\nt1|r(y)|9\n", -1);
  /* ... and a later transaction of t1 is told apart from the first */
  expect_first("t1|begin|0\nt1|w(x)|1\nt1|end|2\nt2|begin|3\nt2|r(x)|4\nt1|begin|5\n"
               "t1|w(z)|6\nt2|r(z)|7\nt2|w(y)|8\nt1|r(y)|9\nt1|end|10\nt2|end|11\n", 9);
}
END_TEST

/* ---- cycles: every report names each edge of its cycle ----------------------------------- */

/* The transaction of pushed event i: the index of its outermost BEGIN, or ~i for a unary one
 * (an event outside BEGIN..END). */
static uint64_t txn_of(const atom_event *ev, size_t n, uint64_t i) {
  uint64_t begin = 0;
  int depth = 0;
  for (uint64_t k = 0; k < n && k <= i; k++) {
    if (ev[k].thread != ev[i].thread) continue;
    if (ev[k].kind == ATOM_BEGIN && depth++ == 0) begin = k;
    if (ev[k].kind == ATOM_END && k < i && depth > 0) depth--;
  }
  return depth > 0 || ev[i].kind == ATOM_END ? begin : ~i;
}

/* Do the two pushed events conflict (003 §2): same thread; same variable with a write; release
 * then acquire of one lock; a fork and an event of the child; an event of a child and its join. */
static int conflict(const atom_event *f, const atom_event *t) {
  if (f->thread == t->thread) return 1;
  int fa = f->kind == ATOM_READ || f->kind == ATOM_WRITE;
  int ta = t->kind == ATOM_READ || t->kind == ATOM_WRITE;
  return (fa && ta && f->target == t->target &&
          (f->kind == ATOM_WRITE || t->kind == ATOM_WRITE)) ||
         (f->kind == ATOM_RELEASE && t->kind == ATOM_ACQUIRE && f->target == t->target) ||
         (f->kind == ATOM_FORK && f->target == t->thread) ||
         (t->kind == ATOM_JOIN && t->target == f->thread);
}

/* Check every report of checker ci in s against the pushed events: it has edges; each edge's
 * events are the pushed ones, the earlier first, and conflict; consecutive edges meet in one
 * transaction and the last returns to the first; exactly one edge closes the cycle; the first
 * transaction listed is the one of the first edge. @return the number of reports checked. */
static size_t check_cycles(const atom_session *s, size_t ci, const atom_event *ev, size_t n,
                           const char *what) {
  size_t checked = 0;
  for (size_t k = 0; k < atom_report_count(s); k++) {
    const atom_report *r = atom_report_get(s, k);
    if (atom_report_checker_index(r) != ci) continue;
    size_t ne = atom_report_edge_count(r), closing = 0;
    ck_assert_msg(ne > 0, "%s: report %zu has no edges", what, k);
    uint64_t first_from = 0, prev_to = 0;
    for (size_t i = 0; i < ne; i++) {
      size_t f, t;
      uint32_t flags;
      ck_assert_int_eq(atom_report_edge(r, i, &f, &t, &flags), 0);
      closing += (flags & ATOM_EDGE_CLOSING) != 0;
      atom_event fe, te;
      uint64_t fi, ti;
      ck_assert_int_eq(atom_report_event(r, f, &fe, &fi), 0);
      ck_assert_int_eq(atom_report_event(r, t, &te, &ti), 0);
      ck_assert_msg(fi < ti && ti < n, "%s: edge %zu: events %llu -> %llu", what, i,
                    (unsigned long long)fi, (unsigned long long)ti);
      ck_assert_msg(fe.kind == ev[fi].kind && fe.thread == ev[fi].thread &&
                        fe.target == ev[fi].target && te.kind == ev[ti].kind &&
                        te.thread == ev[ti].thread && te.target == ev[ti].target,
                    "%s: edge %zu: events differ from the trace", what, i);
      ck_assert_msg(conflict(&ev[fi], &ev[ti]), "%s: edge %zu: events %llu and %llu do not conflict",
                    what, i, (unsigned long long)fi, (unsigned long long)ti);
      if (i == 0) first_from = txn_of(ev, n, fi);
      else ck_assert_msg(txn_of(ev, n, fi) == prev_to, "%s: edges %zu and %zu do not meet", what,
                         i - 1, i);
      prev_to = txn_of(ev, n, ti);
    }
    ck_assert_msg(prev_to == first_from, "%s: the last edge does not return to the first", what);
    ck_assert_msg(closing == 1, "%s: %zu closing edges", what, closing);
    uint64_t bi;
    uint32_t tflags;
    ck_assert_int_eq(atom_report_txn(r, 0, NULL, &bi, NULL), 0);
    ck_assert_int_eq(atom_report_txn_run(r, 0, &tflags, NULL, NULL), 0);
    ck_assert_uint_eq((tflags & ATOM_TXN_UNARY) ? ~bi : bi, first_from);
    checked++;
  }
  return checked;
}

/* Every corpus file with an aerodrome expectation, for both variants. */
START_TEST(test_corpus_files) {
  static const char *const files[] = {"aerodrome-rho1", "aerodrome-rho2", "aerodrome-rho3",
                                      "aerodrome-rho1prime", "aerodrome-nested",
                                      "aerodrome-lock-edges", "aerodrome-fork-in-txn",
                                      "aerodrome-join-in-txn"};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char path[256];
    snprintf(path, sizeof path, "tests/corpus/%s.std", files[f]);
    char *text = tu_read_source_file(path, NULL);
    ck_assert_msg(text != NULL, "missing %s", path);
    snprintf(path, sizeof path, "tests/corpus/%s.expected.json", files[f]);
    char *json = tu_read_source_file(path, NULL);
    ck_assert_msg(json != NULL, "missing %s", path);
    int serializable = strstr(json, "\"conflict_serializable\": true") != NULL;
    const char *idx = strstr(json, "\"aerodrome_first_violation_index\":");
    trace tr;
    parse(&tr, text);
    for (int v = 0; v < NVARIANTS; v++) {
      atom_session *s = run_trace(variants[v], &tr);
      int64_t got = first_index(s);
      ck_assert_msg((got < 0) == serializable, "%s %s: verdict", files[f], variants[v]);
      char what[128];
      snprintf(what, sizeof what, "%s %s", files[f], variants[v]);
      ck_assert_uint_eq(check_cycles(s, 0, tr.ev, tr.n, what), atom_report_count(s));
      if (idx) {
        long long want = strtoll(idx + strlen("\"aerodrome_first_violation_index\":"), NULL, 10);
        ck_assert_msg(got == want, "%s %s: first violation %lld, expected %lld", files[f],
                      variants[v], (long long)got, want);
      }
      atom_session_free(s);
    }
    free(text);
    free(json);
  }
}
END_TEST

/* ---- reports ---------------------------------------------------------------------------- */

START_TEST(test_report_contents) {
  trace tr;
  parse(&tr, rho2);
  for (int v = 0; v < NVARIANTS; v++) {
    atom_session *s = run_trace(variants[v], &tr);
    ck_assert_uint_ge(atom_report_count(s), 1);
    const atom_report *r = atom_report_get(s, 0);
    ck_assert_str_eq(atom_report_checker(r), "aerodrome");
    ck_assert_str_eq(atom_report_kind(r), "conflict-cycle");
    ck_assert_uint_eq(atom_report_event_index(r), 5);
    ck_assert_uint_eq(atom_report_txn_count(r), 2);
    uint64_t th, bi, bl;
    ck_assert_int_eq(atom_report_txn(r, 0, &th, &bi, &bl), 0);
    ck_assert_uint_eq(th, 1); /* t1, begun at 0 */
    ck_assert_uint_eq(bi, 0);
    ck_assert_int_eq(atom_report_txn(r, 1, &th, &bi, &bl), 0);
    ck_assert_uint_eq(th, 2); /* t2, begun at 1 (its w(y) fired the check) */
    ck_assert_uint_eq(bi, 1);
    ck_assert_uint_eq(bl, 1);
    /* the whole cycle: t1 w(x) -> t2 r(x), then t2 w(y) -> t1 r(y), which closed it */
    ck_assert_uint_eq(atom_report_event_count(r), 4);
    static const uint64_t want_at[4] = {2, 3, 4, 5};
    static const uint32_t want_kind[4] = {ATOM_WRITE, ATOM_READ, ATOM_WRITE, ATOM_READ};
    for (size_t i = 0; i < 4; i++) {
      atom_event e;
      uint64_t at;
      ck_assert_int_eq(atom_report_event(r, i, &e, &at), 0);
      ck_assert_uint_eq(at, want_at[i]);
      ck_assert_uint_eq(e.kind, want_kind[i]);
      ck_assert_uint_eq(atom_report_event_txn(r, i), i == 0 || i == 3 ? 0 : 1);
    }
    ck_assert_uint_eq(atom_report_edge_count(r), 2);
    size_t f, t;
    uint32_t flags;
    ck_assert_int_eq(atom_report_edge(r, 0, &f, &t, &flags), 0);
    ck_assert(f == 0 && t == 1 && flags == 0);
    ck_assert_int_eq(atom_report_edge(r, 1, &f, &t, &flags), 0);
    ck_assert(f == 2 && t == 3 && flags == ATOM_EDGE_CLOSING);
    ck_assert_uint_eq(atom_report_var_count(r), 2);
    ck_assert_str_eq(atom_report_var_name(r, 0), "x");
    ck_assert_str_eq(atom_report_var_name(r, 1), "y");
    const char *msg = atom_report_message(r);
    ck_assert_msg(strstr(msg, "t1's transaction at loc 0 (event 0) wrote x at loc 2, "
                              "then t2's transaction at loc 1 (event 1) read x") &&
                      strstr(msg, "then t1 read y at loc 5") &&
                      !strstr(msg, "0x"),
                  "message: %s", msg);
    atom_session_free(s);
  }

  /* at an END: both open transactions named, and the cycle through them */
  parse(&tr, rho3);
  for (int v = 0; v < NVARIANTS; v++) {
    atom_session *s = run_trace(variants[v], &tr);
    ck_assert_uint_ge(atom_report_count(s), 1);
    const atom_report *r = atom_report_get(s, 0);
    ck_assert_uint_eq(atom_report_event_index(r), 6);
    ck_assert_uint_eq(atom_report_txn_count(r), 2);
    uint64_t th, bi;
    atom_report_txn(r, 0, &th, &bi, NULL);
    ck_assert_uint_eq(th, 1);
    atom_report_txn(r, 1, &th, &bi, NULL);
    ck_assert_uint_eq(th, 2);
    ck_assert_uint_eq(bi, 1);
    ck_assert_uint_eq(atom_report_edge_count(r), 2);
    ck_assert_uint_eq(atom_report_var_count(r), 2);
    ck_assert_ptr_nonnull(strstr(atom_report_message(r), "no serial order"));
    atom_session_free(s);
  }

  /* unary transactions on the other side: two of t2, joined by program order */
  parse(&tr, "t1|begin|0\nt1|w(x)|1\nt2|r(x)|2\nt2|w(y)|3\nt1|r(y)|4\nt1|end|5\n");
  for (int v = 0; v < NVARIANTS; v++) {
    atom_session *s = run_trace(variants[v], &tr);
    ck_assert_uint_eq(atom_report_count(s), 1);
    const atom_report *r = atom_report_get(s, 0);
    ck_assert_uint_eq(atom_report_txn_count(r), 3);
    uint64_t th, bi, bl;
    atom_report_txn(r, 1, &th, &bi, &bl);
    ck_assert_uint_eq(th, 2);
    ck_assert_uint_eq(bi, 2);
    atom_report_txn(r, 2, &th, &bi, &bl);
    ck_assert_uint_eq(th, 2);
    ck_assert_uint_eq(bi, 3);
    ck_assert_uint_eq(bl, 3);
    ck_assert_uint_eq(atom_report_edge_count(r), 3);
    ck_assert_msg(strstr(atom_report_message(r), "then t2 wrote y at loc 3 outside any "
                                                 "transaction"),
                  "message: %s", atom_report_message(r));
    atom_session_free(s);
  }
}
END_TEST

START_TEST(test_keeps_checking) {
  /* two independent violations (different locations): two reports */
  static const char *const text =
      "t1|begin|0\nt2|begin|1\nt1|w(x)|2\nt2|r(x)|3\nt2|w(y)|4\nt1|r(y)|5\nt1|end|6\n"
      "t2|end|7\n"
      "t3|begin|10\nt4|begin|11\nt3|w(u)|12\nt4|r(u)|13\nt4|w(v)|14\nt3|r(v)|15\nt3|end|16\n"
      "t4|end|17\n";
  trace tr;
  parse(&tr, text);
  for (int v = 0; v < NVARIANTS; v++) {
    atom_session *s = run_trace(variants[v], &tr);
    ck_assert_uint_eq(atom_report_count(s), 2);
    ck_assert_uint_eq(atom_report_event_index(atom_report_get(s, 0)), 5);
    ck_assert_uint_eq(atom_report_event_index(atom_report_get(s, 1)), 13);
    atom_session_free(s);
  }
  /* the same violation in a loop: one report, counted */
  char loop[8192] = "";
  for (int i = 0; i < 20; i++) strcat(loop, rho2);
  parse(&tr, loop);
  for (int v = 0; v < NVARIANTS; v++) {
    atom_session *s = run_trace(variants[v], &tr);
    ck_assert_uint_eq(atom_report_count(s), 1);
    ck_assert_uint_ge(atom_report_occurrences(atom_report_get(s, 0)), 20);
    atom_session_free(s);
  }
}
END_TEST

/* A ring of n threads: T_i writes x_i and reads x_{i+1}; all open together, the last read
 * closes the cycle. Wider than the inline clock size. */
START_TEST(test_many_threads) {
  /* around the default width of 32 slots and past it: every transaction is published at once,
   * so the clocks grow past the width (nothing can be stolen) */
  static const int sizes[] = {3, 6, 9, 12, 31, 32, 33, 63, 64, 65, 80};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int n = sizes[k];
    char text[16384] = "", line[64];
    size_t idx = 0;
    for (int i = 0; i < n; i++) {
      snprintf(line, sizeof line, "t%d|begin|%zu\n", i, idx++);
      strcat(text, line);
    }
    for (int i = 0; i < n; i++) {
      snprintf(line, sizeof line, "t%d|w(x%d)|%zu\n", i, i, idx++);
      strcat(text, line);
    }
    /* t_i reads x_{i-1}: T_{i-1} -> T_i for i = 1..n-1; then t0 reads x_{n-1} */
    for (int i = 1; i < n; i++) {
      snprintf(line, sizeof line, "t%d|r(x%d)|%zu\n", i, i - 1, idx++);
      strcat(text, line);
    }
    snprintf(line, sizeof line, "t0|r(x%d)|%zu\n", n - 1, idx++);
    strcat(text, line);
    for (int i = 0; i < n; i++) {
      snprintf(line, sizeof line, "t%d|end|%zu\n", i, idx++);
      strcat(text, line);
    }
    /* The cycle T0 -> T1 -> ... -> T(n-1) -> T0 is complete at t0's read (index 3n-1), with
     * every transaction open. Each END passes the knowledge of T(n-1) on (lines 38-40); the
     * END of T(n-2), when only T(n-1) is still open, declares it (003 Thm. 2). */
    expect_first(text, (int64_t)(4 * n - 2));
  }
}
END_TEST

START_TEST(test_variant_args) {
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome:variant=fast"), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "variant"));
  ck_assert_int_eq(atom_session_attach(s, "aerodrome:variant"), ATOM_EINVAL);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome:mode=basic"), ATOM_EINVAL);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome:variant=opt"), 0);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome:variant=optimized"), 0);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome:variant=basic"), 0);
  ck_assert_int_eq(atom_session_attach(s, "vector-clock"), 0);
  ck_assert_uint_eq(atom_checker_count(s), 4);
  ck_assert_str_eq(atom_checker_name(s, 3), "aerodrome");
  /* all four agree on rho2 */
  trace tr;
  parse(&tr, rho2);
  for (size_t i = 0; i < tr.n; i++) ck_assert_int_eq(atom_push(s, &tr.ev[i]), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 4);
  atom_session_free(s);
}
END_TEST

/* ---- memory and stats ---------------------------------------------------------------------- */

static void push2pl(atom_session *s, uint64_t rounds, uint64_t *idx) {
  /* 4 threads, 8 variables each guarded by lock v % 2, 2PL transactions, plus unary reads */
  for (uint64_t r = 0; r < rounds; r++)
    for (uint64_t t = 1; t <= 4; t++) {
      uint64_t v1 = (r * 7 + t) % 8, v2 = (r * 3 + t * 5) % 8;
      uint64_t l1 = v1 % 2, l2 = v2 % 2;
      ck_assert_int_eq(atom_begin(s, t, (*idx)++), 0);
      ck_assert_int_eq(atom_acquire(s, t, 100 + l1, (*idx)++), 0);
      if (l2 != l1) ck_assert_int_eq(atom_acquire(s, t, 100 + l2, (*idx)++), 0);
      ck_assert_int_eq(atom_read(s, t, v1, (*idx)++), 0);
      ck_assert_int_eq(atom_write(s, t, v2, (*idx)++), 0);
      ck_assert_int_eq(atom_write(s, t, v1, (*idx)++), 0);
      if (l2 != l1) ck_assert_int_eq(atom_release(s, t, 100 + l2, (*idx)++), 0);
      ck_assert_int_eq(atom_release(s, t, 100 + l1, (*idx)++), 0);
      ck_assert_int_eq(atom_end(s, t, (*idx)++), 0);
      ck_assert_int_eq(atom_acquire(s, t, 100, (*idx)++), 0);
      ck_assert_int_eq(atom_read(s, t, 0, (*idx)++), 0);
      ck_assert_int_eq(atom_release(s, t, 100, (*idx)++), 0);
    }
}

START_TEST(test_memory_flat) {
  for (int v = 0; v < NVARIANTS; v++) {
    atom_session *s;
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    ck_assert_int_eq(atom_session_attach(s, variants[v]), 0);
    uint64_t idx = 0;
    push2pl(s, 200, &idx);
    atom_checker_stats a = {.version = ATOM_CHECKER_STATS_VERSION};
    ck_assert_int_eq(atom_checker_stats_get(s, 0, &a), 0);
    push2pl(s, 2000, &idx);
    atom_checker_stats b = {.version = ATOM_CHECKER_STATS_VERSION};
    ck_assert_int_eq(atom_checker_stats_get(s, 0, &b), 0);
    ck_assert_uint_eq(a.bytes, b.bytes);
    ck_assert_uint_eq(b.nodes, 4);
    /* optimized: C_t per thread, W/R/chR per variable, L per lock; basic: C_t and C_t^▷,
     * W_x and R_{u,x}, L per lock */
    ck_assert_uint_eq(b.clocks, v == 0 ? 4 * 2 + 8 * (1 + 4) + 2 : 4 + 8 * 3 + 2);
    ck_assert_int_eq(atom_finish(s), 0);
    ck_assert_uint_eq(atom_report_count(s), 0);
    atom_session_free(s);
  }
}
END_TEST

/* ---- the optimized END against the basic one on harder cases ------------------------------ */

/* Long transactions, many variables, clocks that lose and regain knowledge of open
 * transactions (assignments W_x := C_u by threads that do and do not know them). */
START_TEST(test_learned_lists) {
  rt_rng rng;
  for (uint64_t seed = 1; seed <= 80; seed++) {
    rt_rng_seed(&rng, seed);
    atom_session *s;
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    ck_assert_int_eq(atom_session_attach(s, "aerodrome:variant=basic"), 0);
    ck_assert_int_eq(atom_session_attach(s, "aerodrome"), 0);
    /* seeds past 60: 40 to 89 threads, past the default width of 32 slots (publications steal
     * the slots of threads with nothing published, and learners may own no slot) */
    unsigned nthreads = seed <= 60 ? 3 + (unsigned)rt_rng_below(&rng, 6)
                                   : 40 + (unsigned)rt_rng_below(&rng, 50);
    unsigned nvars = 4 + (unsigned)rt_rng_below(&rng, 200);
    int open[96] = {0};
    for (uint64_t i = 0; i < 3000; i++) {
      uint64_t t = 1 + rt_rng_below(&rng, nthreads);
      uint64_t r = rt_rng_below(&rng, 1000);
      if (!open[t] && r < 5 + seed % 7) {
        ck_assert_int_eq(atom_begin(s, t, i), 0);
        open[t] = 1;
      } else if (open[t] && r < 3) {
        ck_assert_int_eq(atom_end(s, t, i), 0);
        open[t] = 0;
      } else {
        /* a few hot variables, many cold ones */
        uint64_t x = rt_rng_chance(&rng, 0.5) ? rt_rng_below(&rng, 3) : rt_rng_below(&rng, nvars);
        if (rt_rng_chance(&rng, 0.5))
          ck_assert_int_eq(atom_write(s, t, x, i), 0);
        else
          ck_assert_int_eq(atom_read(s, t, x, i), 0);
      }
    }
    ck_assert_int_eq(atom_finish(s), 0);
    int64_t first[2] = {-1, -1};
    for (size_t i = 0; i < atom_report_count(s); i++) {
      const atom_report *r = atom_report_get(s, i);
      size_t c = atom_report_checker_index(r);
      int64_t at = (int64_t)atom_report_event_index(r);
      if (first[c] < 0 || at < first[c]) first[c] = at;
    }
    ck_assert_msg(first[0] == first[1], "seed %llu: basic %lld optimized %lld",
                  (unsigned long long)seed, (long long)first[0], (long long)first[1]);
    atom_session_free(s);
  }
}
END_TEST

/* ---- random traces against the brute-force reference -------------------------------------- */


/* One random trace (which the checkers free) against the reference: both variants find the
 * first violation at the same event, exactly when the trace is not conflict-serializable, and
 * every cycle they report names events of the trace. Counts the violations and the cycles. */
/* Checkers ci and cj of s made the same reports: same events, same cycles (provenance). */
static void same_reports(const atom_session *s, size_t ci, size_t cj, const char *what) {
  const atom_report *ri[64], *rj[64];
  size_t ni = 0, nj = 0;
  for (size_t k = 0; k < atom_report_count(s); k++) {
    const atom_report *r = atom_report_get(s, k);
    size_t c = atom_report_checker_index(r);
    if (c == ci && ni < 64) ri[ni++] = r;
    if (c == cj && nj < 64) rj[nj++] = r;
  }
  ck_assert_msg(ni == nj, "%s: %zu reports vs %zu", what, ni, nj);
  for (size_t k = 0; k < ni; k++) {
    const atom_report *a = ri[k], *b = rj[k];
    ck_assert_uint_eq(atom_report_event_index(a), atom_report_event_index(b));
    ck_assert_uint_eq(atom_report_event_count(a), atom_report_event_count(b));
    ck_assert_uint_eq(atom_report_edge_count(a), atom_report_edge_count(b));
    for (size_t e = 0; e < atom_report_event_count(a); e++) {
      uint64_t ia, ib;
      ck_assert_int_eq(atom_report_event(a, e, NULL, &ia), 0);
      ck_assert_int_eq(atom_report_event(b, e, NULL, &ib), 0);
      ck_assert_msg(ia == ib, "%s: report %zu event %zu: %llu vs %llu", what, k, e,
                    (unsigned long long)ia, (unsigned long long)ib);
    }
    for (size_t e = 0; e < atom_report_edge_count(a); e++) {
      size_t fa, ta, fb, tb;
      ck_assert_int_eq(atom_report_edge(a, e, &fa, &ta, NULL), 0);
      ck_assert_int_eq(atom_report_edge(b, e, &fb, &tb, NULL), 0);
      ck_assert_uint_eq(fa, fb);
      ck_assert_uint_eq(ta, tb);
    }
  }
}

/* A random family of traces tests something only if both verdicts are common in it, and every
 * violating trace must have given a checked cycle to each variant (basic and optimized). */
static void check_mix(size_t violations, size_t cycles, size_t cases) {
  ck_assert_uint_gt(violations, cases / 30);
  ck_assert_uint_lt(violations, cases - cases / 30);
  ck_assert_uint_ge(cycles, 2 * violations);
}

static void check_vs_reference(const char *shape, uint64_t seed, atom_event *ev, size_t n,
                               size_t *violations, size_t *cycles) {
  int ser = ref_conflict_serializable(ev, n, NULL);
  ck_assert_int_ge(ser, 0);
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  for (int v = 0; v < NVARIANTS; v++) ck_assert_int_eq(atom_session_attach(s, variants[v]), 0);
  /* the optimized variant dropping variable clocks at every event: same reports */
  ck_assert_int_eq(atom_session_attach(s, "aerodrome:sweep=1"), 0);
  /* ... and with a width of one slot: nearly every publication steals a slot (see "Slots");
   * with two, some do */
  ck_assert_int_eq(atom_session_attach(s, seed % 2 ? "aerodrome:slots=1" : "aerodrome:slots=2"),
                   0);
  size_t done;
  int rc = atom_push_many(s, ev, n, &done);
  ck_assert_msg(rc == 0, "%s seed %llu: push: %s", shape, (unsigned long long)seed,
                atom_last_error());
  ck_assert_int_eq(atom_finish(s), 0);
  int64_t b = tu_first_violation(s, 0), o = tu_first_violation(s, 1);
  if (b != o || (b < 0) != (ser == 1)) {
    fprintf(stderr, "# aerodrome mismatch, %s seed %llu: basic %lld optimized %lld reference %s\n",
            shape, (unsigned long long)seed, (long long)b, (long long)o,
            ser ? "serializable" : "not serializable");
    rt_write_std(stderr, ev, n);
  }
  ck_assert_int_eq(b, o);
  ck_assert_int_eq(b < 0, ser == 1);
  char sw[64];
  snprintf(sw, sizeof sw, "%s seed %llu sweep=1", shape, (unsigned long long)seed);
  same_reports(s, 1, 2, sw);
  snprintf(sw, sizeof sw, "%s seed %llu slots=%d", shape, (unsigned long long)seed,
           seed % 2 ? 1 : 2);
  same_reports(s, 1, 3, sw);
  *violations += ser == 0;
  char what[64];
  for (int v = 0; v < NVARIANTS; v++) {
    snprintf(what, sizeof what, "%s seed %llu %s", shape, (unsigned long long)seed, variants[v]);
    *cycles += check_cycles(s, (size_t)v, ev, n, what);
  }
  atom_session_free(s);
  free(ev);
}

START_TEST(test_random_vs_reference) {
  size_t violations = 0, cycles = 0;
  const char *env = getenv("ATOM_AERODROME_CASES"); /* for longer runs by hand */
  uint64_t cases = env ? strtoull(env, NULL, 10) : 3000;
  for (uint64_t seed = 1; seed <= cases; seed++) {
    rt_params p;
    rt_params_random(&p, seed * 7919, 36);
    if (seed % 3 == 0) p.threads = 5 + (unsigned)(seed % 4); /* wider than inline clocks */
    atom_event *ev;
    size_t n;
    ck_assert_int_eq(rt_generate(&p, seed, &ev, &n), 0);
    check_vs_reference("random", seed, ev, n, &violations, &cycles);
  }
  check_mix(violations, cycles, cases);
}
END_TEST

/* Shapes that exercise the per-variable clocks (doc/checkers/aerodrome.md, "Variable
 * clocks"): one writer and many readers (R_x and chR_x joined from many threads while W_x keeps
 * one writer's clock), many readers and few writes, and many variables with clocks wider than
 * the inline ones and slots added while transactions are open (the END's reservation shortcut,
 * nslot_b). All against the brute-force reference. */
START_TEST(test_shapes_vs_reference) {
  size_t violations = 0, cycles = 0, cases = 600;
  for (uint64_t seed = 1; seed <= cases; seed++) {
    rt_params p;
    rt_params_random(&p, seed * 104729, 48);
    const char *shape;
    switch (seed % 3) {
      case 0: /* single writer: only thread 1 writes */
        shape = "single-writer";
        p.threads = 3 + (unsigned)(seed % 6);
        p.p_write = 0.5;
        break;
      case 1: /* many readers */
        shape = "many-readers";
        p.threads = 5 + (unsigned)(seed % 4);
        p.p_write = 0.1;
        break;
      default: /* many variables, wide clocks, threads forked while others are in a txn */
        shape = "many-vars";
        p.threads = 5 + (unsigned)(seed % 4);
        p.vars = 8 + (unsigned)(seed % 40);
        p.p_root = 0.3;
        p.p_fork = 0.2;
        break;
    }
    atom_event *ev;
    size_t n;
    ck_assert_int_eq(rt_generate(&p, seed, &ev, &n), 0);
    if (seed % 3 == 0)
      for (size_t i = 0; i < n; i++)
        if (ev[i].kind == ATOM_WRITE && ev[i].thread != 1) ev[i].kind = ATOM_READ;
    check_vs_reference(shape, seed, ev, n, &violations, &cycles);
  }
  check_mix(violations, cycles, cases);
}
END_TEST

/* Bytes per variable that `spec` holds after `vars` variables were each written once inside
 * a transaction by one of 8 threads (clocks wider than the inline ones); peak in *peak. */
static uint64_t many_vars_bytes(const char *spec, uint64_t vars, uint64_t *peak) {
  enum { THREADS = 8 };
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, spec), 0);
  uint64_t loc = 0;
  for (uint64_t t = 1; t <= THREADS; t++) { /* every thread alive: clocks 8 wide */
    ck_assert_int_eq(atom_begin(s, t, loc++), 0);
    ck_assert_int_eq(atom_end(s, t, loc++), 0);
  }
  atom_checker_stats a = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &a), 0);
  for (uint64_t x = 0; x < vars; x++) {
    uint64_t t = 1 + x % THREADS;
    ck_assert_int_eq(atom_begin(s, t, loc++), 0);
    ck_assert_int_eq(atom_write(s, t, 1000 + x, loc++), 0);
    ck_assert_int_eq(atom_end(s, t, loc++), 0);
  }
  atom_checker_stats b = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &b), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_session_free(s);
  *peak = (b.peak_bytes - a.bytes) / vars;
  uint64_t per_var = (b.bytes - a.bytes) / vars;
  fprintf(stderr, "# %s, %llu variables: %llu bytes per variable (peak %llu)\n", spec,
          (unsigned long long)vars, (unsigned long long)per_var, (unsigned long long)*peak);
  return per_var;
}

/* Memory per variable under a stated bound: 104 bytes (the record) + 48 (its last write) +
 * 32 (W_x, 8 components; R_x and chR_x are not allocated for a variable nobody reads) + the
 * arrays' growth: 220 on 64-bit Linux with 10^5 variables. The clocks that know no open
 * transaction are dropped by the sweeps (doc/checkers/aerodrome.md, "Dropping variable
 * clocks"); with a sweep at every event (sweep=1) every W_x here is dropped once its
 * transaction has ended: 10^4 variables then hold 32 bytes less each. */
START_TEST(test_many_vars_memory) {
  uint64_t peak;
  uint64_t per_var = many_vars_bytes("aerodrome", 100000, &peak);
  ck_assert_msg(per_var <= 280 && peak <= 400, "%llu bytes per variable, peak %llu",
                (unsigned long long)per_var, (unsigned long long)peak);
  uint64_t kept = many_vars_bytes("aerodrome", 10000, &peak);
  per_var = many_vars_bytes("aerodrome:sweep=1", 10000, &peak);
  /* every W_x (32 bytes) dropped: 320 -> 288 on 64-bit Linux */
  ck_assert_msg(per_var + 32 <= kept, "sweep=1: %llu bytes per variable, %llu kept",
                (unsigned long long)per_var, (unsigned long long)kept);
}
END_TEST

/* Fork/join waves: threads come and go, so the optimized variant recycles the clock slots of
 * joined threads (doc/checkers/aerodrome.md, "Slots") while the basic one gives every thread its
 * own component. Both must agree with the brute-force reference, and every reported cycle must
 * name the events (and so the threads) of the trace, also across recycled slots. */
START_TEST(test_waves_vs_reference) {
  size_t violations = 0, cycles = 0, cases = 1500;
  for (uint64_t seed = 1; seed <= cases; seed++) {
    atom_event *ev;
    size_t n;
    ck_assert_int_eq(rt_generate_waves(seed, &ev, &n), 0);
    check_vs_reference("waves", seed, ev, n, &violations, &cycles);
  }
  check_mix(violations, cycles, cases);
}
END_TEST

/* 2 000 threads, 4 alive at once (waves), each writing and reading 64 shared variables inside
 * a transaction: the optimized variant's clocks stay as wide as the threads alive (5 slots),
 * so its memory grows only by the per-thread record (thread table, last event), not by clock
 * width. With a component per thread ever seen, the clocks of the 64 variables alone would
 * grow by 768 bytes per thread and the thread clocks by their width each. */
START_TEST(test_waves_clock_width) {
  enum { THREADS = 2000, ALIVE = 4, VARS = 64 };
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome"), 0);
  uint64_t next = 2, bytes_half = 0;
  atom_event e;
  while (next < 2 + THREADS) {
    for (uint64_t c = next; c < next + ALIVE; c++) {
      e = (atom_event){.kind = ATOM_FORK, .thread = 1, .target = c, .loc = 1};
      ck_assert_int_eq(atom_push(s, &e), 0);
    }
    for (uint64_t c = next; c < next + ALIVE; c++) {
      e = (atom_event){.kind = ATOM_BEGIN, .thread = c, .loc = 2};
      ck_assert_int_eq(atom_push(s, &e), 0);
      for (uint64_t x = 0; x < VARS; x++) {
        e = (atom_event){.kind = ATOM_READ, .thread = c, .target = 100 + x, .loc = 3};
        ck_assert_int_eq(atom_push(s, &e), 0);
        e = (atom_event){.kind = ATOM_WRITE, .thread = c, .target = 100 + x, .loc = 4};
        ck_assert_int_eq(atom_push(s, &e), 0);
      }
      e = (atom_event){.kind = ATOM_END, .thread = c, .loc = 5};
      ck_assert_int_eq(atom_push(s, &e), 0);
    }
    for (uint64_t c = next; c < next + ALIVE; c++) {
      e = (atom_event){.kind = ATOM_JOIN, .thread = 1, .target = c, .loc = 6};
      ck_assert_int_eq(atom_push(s, &e), 0);
    }
    next += ALIVE;
    if (next == 2 + THREADS / 2) {
      atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
      ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
      bytes_half = st.bytes;
    }
  }
  atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
  uint64_t per_thread = (st.bytes - bytes_half) / (THREADS / 2);
  ck_assert_msg(per_thread < 512, "%llu bytes per thread (%llu in all)",
                (unsigned long long)per_thread, (unsigned long long)st.bytes);
  ck_assert_msg(st.bytes < 1536 * 1024, "%llu bytes", (unsigned long long)st.bytes);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 0); /* each wave's transactions are serial */
  atom_session_free(s);
}
END_TEST

/* 2 000 threads, all alive at once (thread 1 forks them all first), each running a transaction
 * per round that begins with the others open: every thread begins, then one after another
 * acquires a lock, reads and writes 4 of 64 variables, releases and ends. A transaction takes a
 * clock slot only when its clock first flows into another (publication: here its first
 * access), and the next one steals it once it has ended (doc/checkers/aerodrome.md, "Slots"),
 * so the clocks stay a few components wide although 2 000 transactions are open at once. With
 * a slot per thread alive every thread clock would be 2 000 components (8 000 bytes) wide. */
START_TEST(test_all_alive_clock_width) {
  enum { THREADS = 2000, VARS = 64, ROUNDS = 3 };
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome"), 0);
  atom_event e;
  for (uint64_t c = 2; c < 2 + THREADS; c++) {
    e = (atom_event){.kind = ATOM_FORK, .thread = 1, .target = c, .loc = 1};
    ck_assert_int_eq(atom_push(s, &e), 0);
  }
  for (uint64_t r = 0; r < ROUNDS; r++) {
    for (uint64_t c = 2; c < 2 + THREADS; c++) {
      e = (atom_event){.kind = ATOM_BEGIN, .thread = c, .loc = 2};
      ck_assert_int_eq(atom_push(s, &e), 0);
    }
    for (uint64_t c = 2; c < 2 + THREADS; c++) {
      e = (atom_event){.kind = ATOM_ACQUIRE, .thread = c, .target = 1000 + c % 4, .loc = 3};
      ck_assert_int_eq(atom_push(s, &e), 0);
      for (uint64_t k = 0; k < 4; k++) {
        uint64_t x = 100 + (c * 7 + k * 13 + r) % VARS;
        e = (atom_event){.kind = ATOM_READ, .thread = c, .target = x, .loc = 4};
        ck_assert_int_eq(atom_push(s, &e), 0);
        e = (atom_event){.kind = ATOM_WRITE, .thread = c, .target = x, .loc = 5};
        ck_assert_int_eq(atom_push(s, &e), 0);
      }
      e = (atom_event){.kind = ATOM_RELEASE, .thread = c, .target = 1000 + c % 4, .loc = 6};
      ck_assert_int_eq(atom_push(s, &e), 0);
      e = (atom_event){.kind = ATOM_END, .thread = c, .loc = 7};
      ck_assert_int_eq(atom_push(s, &e), 0);
    }
  }
  atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
  uint64_t per_thread = st.peak_bytes / THREADS;
  fprintf(stderr, "# aerodrome, %d threads all alive: %llu bytes per thread (peak)\n", THREADS,
          (unsigned long long)per_thread);
  /* 1 309 on 64-bit Linux at the default width (32 slots): the thread's record, its clock,
   * its provenance and absorbed-version cache per slot (see "Complexity") */
  ck_assert_msg(per_thread < 1600, "%llu bytes per thread at the peak (%llu in all)",
                (unsigned long long)per_thread, (unsigned long long)st.peak_bytes);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 0); /* every transaction ran alone under its lock */
  atom_session_free(s);
}
END_TEST

/* ---- provenance memory on a long racy trace ---------------------------------------------- */

/* Four threads run long random transactions over a few variables, so that clocks keep
 * learning open transactions and their provenance records keep being replaced. The memory of
 * the records that no longer count is reclaimed (doc/checkers/aerodrome.md, "Memory"): the
 * checker's bytes stop growing after warm-up, and every reported cycle still has its edges. */
START_TEST(test_provenance_memory_bounded) {
  rt_params p;
  rt_params_default(&p);
  p.threads = 4;
  p.vars = 6;
  p.locks = 2;
  p.events = 240000;
  p.p_root = 1.0;
  p.p_fork = p.p_join = p.p_finish = 0.0;
  p.p_begin = 0.8;
  p.p_end = 0.15;
  atom_event *ev;
  size_t n;
  ck_assert_int_eq(rt_generate(&p, 11, &ev, &n), 0);
  ck_assert_uint_ge(n, 200000);
  for (int v = 0; v < NVARIANTS; v++) {
    atom_session *s;
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    ck_assert_int_eq(atom_session_attach(s, variants[v]), 0);
    uint64_t bytes[4] = {0}, nodes[4] = {0};
    size_t part = n / 4, done;
    for (int q = 0; q < 4; q++) {
      size_t from = (size_t)q * part, to = q == 3 ? n : from + part;
      ck_assert_int_eq(atom_push_many(s, ev + from, to - from, &done), 0);
      atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
      ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
      bytes[q] = st.bytes;
      nodes[q] = st.edges; /* provenance nodes held */
    }
    ck_assert_int_eq(atom_finish(s), 0);
    for (int q = 1; q < 4; q++) {
      ck_assert_msg(bytes[q] < 640 * 1024, "%s: %llu bytes", variants[v],
                    (unsigned long long)bytes[q]);
      ck_assert_msg(nodes[q] < 6000, "%s: %llu nodes", variants[v], (unsigned long long)nodes[q]);
    }
    /* the reports made last, after many collections, still name whole cycles */
    size_t nr = atom_report_count(s), whole = 0;
    ck_assert_uint_gt(nr, 200);
    for (size_t k = nr - 200; k < nr; k++) whole += atom_report_edge_count(atom_report_get(s, k)) > 1;
    ck_assert_uint_ge(whole, 195); /* 200 and 199 on this trace */
    atom_session_free(s);
  }
  free(ev);
}
END_TEST

/* ---- allocation failures ----------------------------------------------------------------- */

START_TEST(test_enomem) {
  /* Let the session and the checker run out of memory at every possible point in turn: every
   * call returns 0 or ATOM_ENOMEM, and the session stays usable and freeable. */
  trace tr;
  parse(&tr, "t1|begin|0\nt2|begin|1\nt1|w(x)|2\nt2|r(x)|3\nt2|w(y)|4\nt1|r(y)|5\n"
             "t5|acq(l)|6\nt5|w(z)|7\nt5|rel(l)|8\nt6|begin|9\nt6|acq(l)|10\nt6|r(z)|11\n"
             "t6|fork(t7)|12\nt7|w(q)|13\nt6|join(t7)|14\nt6|rel(l)|15\nt1|end|16\n"
             "t2|end|17\nt6|end|18\n");
  for (int v = 0; v < NVARIANTS; v++) {
    for (long k = 0; k < 200; k++) {
      budget bud = {-1, 0};
      atom_options opt;
      ck_assert_int_eq(atom_options_init(&opt, ATOM_OPTIONS_VERSION), 0);
      opt.malloc_fn = b_malloc;
      opt.realloc_fn = b_realloc;
      opt.free_fn = b_free;
      opt.alloc_payload = &bud;
      atom_session *s = NULL;
      ck_assert_int_eq(atom_session_new(&s, &opt), 0);
      int rc = atom_session_attach(s, variants[v]);
      ck_assert_int_eq(rc, 0);
      bud.left = k;
      for (size_t i = 0; i < tr.n; i++) {
        /* an event dropped for lack of memory can make later ones ill-formed */
        rc = atom_push(s, &tr.ev[i]);
        ck_assert_msg(rc <= 0, "k=%ld event %zu: %d %s", k, i, rc, atom_last_error());
      }
      rc = atom_finish(s);
      ck_assert(rc == 0 || rc == ATOM_ENOMEM);
      bud.left = -1; /* memory is back: the session still works */
      for (size_t i = 0; i < tr.n; i++) {
        atom_event e = tr.ev[i];
        e.thread += 100;
        e.target += e.kind == ATOM_FORK || e.kind == ATOM_JOIN ? 100 : 0;
        rc = atom_push(s, &e);
        ck_assert(rc == 0 || rc == ATOM_ESTATE);
      }
      atom_session_free(s);
      if (bud.failures == 0) break; /* k beyond every allocation */
    }
  }
}
END_TEST

/* When a learned list cannot grow, its transaction's END falls back to the full scan of
 * 003 Alg. 1 lines 41-46: rho'1 (Fig. 7 needs W_y ⊔= C_t2 at t2's END) with every learned
 * list allocation failing. */
START_TEST(test_learned_overflow) {
  trace tr;
  /* (each warm-up transaction publishes, so that its thread's lists exist: see "Slots") */
  parse(&tr, "t1|begin|0\nt1|w(x)|0\nt1|end|0\nt2|begin|0\nt2|w(y)|0\nt2|end|0\n"
             "t3|begin|0\nt3|w(z)|0\nt3|end|0\n"
             "t4|w(x)|0\nt4|w(y)|0\nt4|w(z)|0\nt4|r(x)|0\nt4|r(y)|0\nt4|r(z)|0\n");
  size_t warm = tr.n;
  trace body;
  parse(&body, rho1p);
  for (int v = 0; v < NVARIANTS; v++) {
    budget bud = {-1, 0};
    atom_options opt;
    ck_assert_int_eq(atom_options_init(&opt, ATOM_OPTIONS_VERSION), 0);
    opt.malloc_fn = b_malloc;
    opt.realloc_fn = b_realloc;
    opt.free_fn = b_free;
    opt.alloc_payload = &bud;
    atom_session *s = NULL;
    ck_assert_int_eq(atom_session_new(&s, &opt), 0);
    ck_assert_int_eq(atom_session_attach(s, variants[v]), 0);
    for (size_t i = 0; i < warm; i++) ck_assert_int_eq(atom_push(s, &tr.ev[i]), 0);
    /* same names, same keys: t1 t2 t3 x y z come first in both texts */
    for (size_t i = 0; i < body.n; i++) {
      /* memory back for the report; variant=basic has no learned lists, and its clocks a
       * trace's first events give a component need storage (a clock has none while ⊥) */
      bud.left = i + 2 < body.n && v == 1 ? 0 : -1;
      int rc = atom_push(s, &body.ev[i]);
      ck_assert_msg(rc == 0, "%s: event %zu: %s", variants[v], i, atom_last_error());
    }
    int frc = atom_finish(s);
    ck_assert_msg(frc == 0, "%s: finish: %s", variants[v], atom_last_error());
    if (v == 1) ck_assert_uint_gt(bud.failures, 0); /* the lists did try to grow */
    ck_assert_int_eq(first_index(s), (int64_t)(warm + 10));
    atom_session_free(s);
  }
}
END_TEST

Suite *atom_test_suite_aerodrome(void);
Suite *atom_test_suite_aerodrome(void) {
  Suite *s = suite_create("aerodrome");
  TCase *vc = tcase_create("vclock");
  tcase_add_test(vc, test_vc_growth);
  tcase_add_test(vc, test_vc_join_leq);
  tcase_add_test(vc, test_vc_enomem);
  suite_add_tcase(s, vc);
  TCase *paper = tcase_create("paper");
  tcase_add_test(paper, test_paper_traces);
  tcase_add_test(paper, test_nested);
  tcase_add_test(paper, test_lock_edges);
  tcase_add_test(paper, test_fork_join);
  tcase_add_test(paper, test_unary);
  tcase_add_test(paper, test_corpus_files);
  suite_add_tcase(s, paper);
  TCase *rep = tcase_create("reports");
  tcase_add_test(rep, test_report_contents);
  tcase_add_test(rep, test_keeps_checking);
  tcase_add_test(rep, test_many_threads);
  tcase_add_test(rep, test_variant_args);
  suite_add_tcase(s, rep);
  TCase *mem = tcase_create("memory");
  tcase_add_test(mem, test_memory_flat);
  tcase_add_test(mem, test_enomem);
  tcase_add_test(mem, test_learned_overflow);
  tcase_add_test(mem, test_provenance_memory_bounded);
  tcase_add_test(mem, test_waves_clock_width);
  tcase_add_test(mem, test_all_alive_clock_width);
  tcase_add_test(mem, test_many_vars_memory);
  suite_add_tcase(s, mem);
  TCase *x = tcase_create("random");
  tcase_set_timeout(x, 120);
  tcase_add_test(x, test_learned_lists);
  tcase_add_test(x, test_random_vs_reference);
  tcase_add_test(x, test_waves_vs_reference);
  tcase_add_test(x, test_shapes_vs_reference);
  suite_add_tcase(s, x);
  return s;
}
