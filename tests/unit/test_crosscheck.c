/* Cross-check of the conflict-serializability checkers against the brute-force reference
 * (reference.c) on thousands of random small traces (randtrace.c), and of aerodrome against
 * velodrome on long random traces. Also tests the reference itself on the corpus and on
 * hand-made traces, and the generator's well-formedness and coverage.
 *
 * Environment: ATOM_CROSSCHECK_CASES (small traces, default 5000; a fifth of it for the
 * test_random_after_violation pairs), ATOM_CROSSCHECK_SEED (first seed, default 1),
 * ATOM_CROSSCHECK_LARGE (long traces, default 4) and
 * ATOM_CROSSCHECK_LARGE_EVENTS (their length, default 100000). A failure prints the seed and
 * the trace in STD form; rerun one case with ATOM_CROSSCHECK_SEED=S ATOM_CROSSCHECK_CASES=1.
 */
#include <check.h>

#include "util.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity.h"
#include "randtrace.h"
#include "reference.h"

#ifndef ATOM_CORPUS_DIR
#define ATOM_CORPUS_DIR "tests/corpus"
#endif

Suite *atom_test_suite_crosscheck(void);

static unsigned long long env_number(const char *name, unsigned long long dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  unsigned long long x = strtoull(v, &end, 10);
  return *end ? dflt : x;
}

/* ---- a small STD parser of our own (the corpus tests the reference, not the reader) ---- */

#define MAX_NAMES 64

typedef struct names {
  char name[MAX_NAMES][32];
  size_t n;
} names;

static uint64_t intern(names *tab, const char *s, size_t len) {
  for (size_t i = 0; i < tab->n; i++)
    if (strlen(tab->name[i]) == len && memcmp(tab->name[i], s, len) == 0) return i + 1;
  ck_assert_uint_lt(tab->n, MAX_NAMES);
  ck_assert_uint_lt(len, sizeof tab->name[0]);
  memcpy(tab->name[tab->n], s, len);
  tab->name[tab->n][len] = '\0';
  return ++tab->n;
}

/* Parse STD text into events; thread names go to @p th (keys = first appearance). */
static size_t parse_std(const char *text, atom_event *ev, size_t cap, names *th) {
  names vars = {0}, locks = {0};
  size_t n = 0;
  const char *p = text;
  while (*p) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    const char *q = p;
    while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q < eol && *q != '#') {
      const char *bar1 = memchr(q, '|', (size_t)(eol - q));
      ck_assert_ptr_nonnull(bar1);
      const char *op = bar1 + 1;
      const char *bar2 = memchr(op, '|', (size_t)(eol - op));
      ck_assert_ptr_nonnull(bar2);
      ck_assert_uint_lt(n, cap);
      atom_event *e = &ev[n++];
      memset(e, 0, sizeof *e);
      e->thread = intern(th, q, (size_t)(bar1 - q));
      e->loc = strtoull(bar2 + 1, NULL, 10);
      const char *lp = memchr(op, '(', (size_t)(bar2 - op));
      size_t oplen = (size_t)((lp ? lp : bar2) - op);
      const char *arg = lp ? lp + 1 : NULL;
      size_t arglen = 0;
      if (lp) {
        const char *rp = memchr(arg, ')', (size_t)(bar2 - arg));
        ck_assert_ptr_nonnull(rp);
        arglen = (size_t)(rp - arg);
      }
#define OP(s) (oplen == strlen(s) && memcmp(op, s, oplen) == 0)
      if (OP("r")) e->kind = ATOM_READ, e->target = intern(&vars, arg, arglen);
      else if (OP("w")) e->kind = ATOM_WRITE, e->target = intern(&vars, arg, arglen);
      else if (OP("acq")) e->kind = ATOM_ACQUIRE, e->target = intern(&locks, arg, arglen);
      else if (OP("rel")) e->kind = ATOM_RELEASE, e->target = intern(&locks, arg, arglen);
      else if (OP("fork")) e->kind = ATOM_FORK, e->target = intern(th, arg, arglen);
      else if (OP("join")) e->kind = ATOM_JOIN, e->target = intern(th, arg, arglen);
      else if (OP("begin")) e->kind = ATOM_BEGIN;
      else if (OP("end")) e->kind = ATOM_END;
      else if (OP("fence")) e->kind = ATOM_FENCE;
      else if (OP("commit")) e->kind = ATOM_COMMIT, e->target = intern(&vars, arg, arglen);
      else ck_abort_msg("unknown op in line: %.*s", (int)(eol - p), p);
#undef OP
    }
    p = *eol ? eol + 1 : eol;
  }
  return n;
}

/* The value after "key": in a flat JSON object; NULL if absent. */
static const char *json_value(const char *json, const char *key) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *k = strstr(json, pat);
  if (!k) return NULL;
  k = strchr(k + strlen(pat), ':');
  if (!k) return NULL;
  k++;
  while (*k == ' ' || *k == '\n' || *k == '\r' || *k == '\t') k++;
  return k;
}

/* ---- the reference on the corpus --------------------------------------------------------- */

START_TEST(test_reference_corpus) {
  char *files[512];
  size_t nfiles = tu_corpus_list(files, 512);
  ck_assert_uint_gt(nfiles, 0);
  size_t checked = 0;
  for (size_t f = 0; f < nfiles; f++) {
    char path[1024], jpath[1024];
    snprintf(path, sizeof path, "%s/%s", ATOM_CORPUS_DIR, files[f]);
    snprintf(jpath, sizeof jpath, "%s/%.*s.expected.json", ATOM_CORPUS_DIR,
             (int)(strlen(files[f]) - 4), files[f]);
    char *text = tu_read_file(path, NULL), *json = tu_read_file(jpath, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    const char *cs = json ? json_value(json, "conflict_serializable") : NULL;
    if (!cs) {
      free(text);
      free(json);
      free(files[f]);
      continue;
    }
    int expected = strncmp(cs, "true", 4) == 0;
    atom_event ev[256];
    names th = {0};
    size_t n = parse_std(text, ev, 256, &th);
    ref_trace *rt;
    int rc = ref_trace_build(ev, n, &rt);
    if (rc == REF_EUNSUPPORTED) { /* COMMIT: a TSO trace, not ours */
      free(text);
      free(json);
      free(files[f]);
      continue;
    }
    ck_assert_msg(rc == 0, "%s: reference failed: %d %s", files[f], rc, ref_error());
    ck_assert_msg(ref_trace_serializable(rt) == expected, "%s: reference says %d, expected %d",
                  files[f], ref_trace_serializable(rt), expected);
    ck_assert_int_eq(ref_conflict_serializable(ev, n, NULL), expected);
    ck_assert_int_eq(ref_trace_first_cycle(rt) < n, !expected);
    if (!expected) {
      ref_cycle cyc;
      ck_assert_int_eq(ref_trace_cycle(rt, &cyc), 1);
      ck_assert_uint_ge(cyc.n, 2);
      for (size_t k = 0; k < cyc.n; k++) {
        long a = ref_trace_txn_at(rt, cyc.begin[k]);
        long b = ref_trace_txn_at(rt, cyc.begin[(k + 1) % cyc.n]);
        ck_assert(a >= 0 && b >= 0 && a != b);
        ck_assert(ref_trace_txn_before(rt, (size_t)a, (size_t)b));
      }
      /* The cycle the corpus names must be a cycle of the reference's graph too (in the
       * order given, or reversed). */
      const char *cc = json_value(json, "conflict_cycle");
      if (cc && *cc == '[') {
        long tx[64];
        size_t ntx = 0;
        const char *end = strchr(cc, ']');
        for (const char *at = strchr(cc, '@'); at && at < end && ntx < 64;
             at = strchr(at + 1, '@')) {
          tx[ntx] = ref_trace_txn_at(rt, (size_t)strtoull(at + 1, NULL, 10));
          ck_assert_msg(tx[ntx] >= 0, "%s: no transaction begins at %s", files[f], at);
          ntx++;
        }
        ck_assert_uint_ge(ntx, 2);
        int fwd = 1, back = 1;
        for (size_t k = 0; k < ntx; k++) {
          size_t a = (size_t)tx[k], b = (size_t)tx[(k + 1) % ntx];
          fwd &= ref_trace_txn_before(rt, a, b);
          back &= ref_trace_txn_before(rt, b, a);
        }
        ck_assert_msg(fwd || back, "%s: the expected cycle is not a cycle of ≤Txn", files[f]);
      }
      /* 003 Thm. 2 bounds where Algorithm 1 first declares. */
      const char *ai = json_value(json, "aerodrome_first_violation_index");
      if (ai && *ai >= '0' && *ai <= '9') {
        size_t idx = (size_t)strtoull(ai, NULL, 10);
        ck_assert_uint_le(ref_trace_first_cycle(rt), idx);
        if (ref_trace_first_closed_cycle(rt) < n)
          ck_assert_uint_le(idx, ref_trace_first_closed_cycle(rt));
      }
    }
    ref_trace_free(rt);
    free(text);
    free(json);
    free(files[f]);
    checked++;
  }
  ck_assert_uint_ge(checked, 8);
}
END_TEST

/* ---- the reference on hand-made traces --------------------------------------------------- */

#define E(k, t, x) {ATOM_##k, 0, (t), (x), 0}

START_TEST(test_reference_rules) {
  /* Read-read is no conflict: serializable. */
  atom_event rr[] = {E(BEGIN, 1, 0), E(READ, 1, 9), E(BEGIN, 2, 0), E(READ, 2, 9),
                     E(END, 2, 0),   E(READ, 1, 9), E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(rr, 7, NULL), 1);
  /* The same with a write in the middle: t1 -> t2 -> t1. */
  atom_event rw[] = {E(BEGIN, 1, 0), E(READ, 1, 9), E(BEGIN, 2, 0), E(WRITE, 2, 9),
                     E(END, 2, 0),   E(READ, 1, 9), E(END, 1, 0)};
  ref_cycle c;
  ck_assert_int_eq(ref_conflict_serializable(rw, 7, &c), 0);
  ck_assert_uint_eq(c.n, 2);
  ck_assert_uint_eq(c.begin[0] + c.begin[1], 0 + 2);
  /* Unary events only: never a cycle, however racy. */
  atom_event un[] = {E(WRITE, 1, 9), E(WRITE, 2, 9), E(WRITE, 1, 9), E(READ, 2, 9)};
  ck_assert_int_eq(ref_conflict_serializable(un, 4, NULL), 1);
  /* A unary event between two accesses of a transaction is enough. */
  atom_event ut[] = {E(BEGIN, 1, 0), E(WRITE, 1, 9), E(READ, 2, 9), E(WRITE, 2, 9),
                     E(READ, 1, 9), E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(ut, 6, NULL), 0);
  /* rel -> acq orders; acq -> rel does not (t2 holds nothing t1 reads). */
  atom_event lk[] = {E(BEGIN, 1, 0),   E(ACQUIRE, 1, 5), E(RELEASE, 1, 5),
                     E(ACQUIRE, 2, 5), E(RELEASE, 2, 5), E(ACQUIRE, 1, 5),
                     E(RELEASE, 1, 5), E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(lk, 8, NULL), 0);
  /* Re-entrant inner pairs are dropped: the inner release does not order t2's acquire
   * before the transaction's end, and nothing changes the verdict. */
  atom_event re[] = {E(ACQUIRE, 1, 5), E(BEGIN, 1, 0), E(ACQUIRE, 1, 5), E(RELEASE, 1, 5),
                     E(WRITE, 1, 9),   E(END, 1, 0),   E(RELEASE, 1, 5), E(ACQUIRE, 2, 5),
                     E(READ, 2, 9),    E(RELEASE, 2, 5)};
  ck_assert_int_eq(ref_conflict_serializable(re, 10, NULL), 1);
  /* Fork inside a transaction and the child writing what the parent reads later. */
  atom_event fk[] = {E(BEGIN, 1, 0), E(FORK, 1, 2), E(WRITE, 2, 9), E(READ, 1, 9),
                     E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(fk, 5, NULL), 0);
  /* Without the fork (t2 a root) the child's write is just a unary event after nothing. */
  atom_event nf[] = {E(BEGIN, 1, 0), E(WRITE, 2, 9), E(READ, 1, 9), E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(nf, 4, NULL), 1);
  /* Join inside a transaction: the child read what the parent wrote earlier in it. */
  atom_event jn[] = {E(FORK, 1, 2), E(BEGIN, 1, 0), E(WRITE, 1, 9), E(READ, 2, 9),
                     E(JOIN, 1, 2), E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(jn, 6, NULL), 0);
  /* Nested: the inner END does not end the transaction. */
  atom_event ns[] = {E(BEGIN, 1, 0), E(READ, 1, 9), E(BEGIN, 1, 0), E(END, 1, 0),
                     E(WRITE, 2, 9), E(WRITE, 1, 9), E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(ns, 7, NULL), 0);
  /* Split into two transactions, it is serializable. */
  atom_event sp[] = {E(BEGIN, 1, 0), E(READ, 1, 9), E(END, 1, 0), E(BEGIN, 1, 0),
                     E(WRITE, 2, 9), E(WRITE, 1, 9), E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(sp, 7, NULL), 1);
  /* Ill-formed input is refused. */
  atom_event bad1[] = {E(END, 1, 0)};
  ck_assert_int_eq(ref_conflict_serializable(bad1, 1, NULL), REF_EILLFORMED);
  atom_event bad2[] = {E(ACQUIRE, 1, 5), E(ACQUIRE, 2, 5)};
  ck_assert_int_eq(ref_conflict_serializable(bad2, 2, NULL), REF_EILLFORMED);
  atom_event bad3[] = {E(RELEASE, 1, 5)};
  ck_assert_int_eq(ref_conflict_serializable(bad3, 1, NULL), REF_EILLFORMED);
  atom_event bad4[] = {E(FORK, 1, 2), E(READ, 2, 9), E(JOIN, 1, 2), E(READ, 2, 9)};
  ck_assert_int_eq(ref_conflict_serializable(bad4, 4, NULL), REF_EILLFORMED);
  atom_event bad5[] = {E(READ, 2, 9), E(FORK, 1, 2)};
  ck_assert_int_eq(ref_conflict_serializable(bad5, 2, NULL), REF_EILLFORMED);
}
END_TEST

START_TEST(test_reference_prefixes) {
  /* 003 Fig. 3 (rho3): the cycle exists at e6 (index 5) between two active transactions,
   * and has at most one active transaction from the END at index 6. */
  atom_event r3[] = {E(BEGIN, 1, 0), E(BEGIN, 2, 0), E(WRITE, 1, 1), E(WRITE, 2, 2),
                     E(READ, 1, 2),  E(READ, 2, 1),  E(END, 1, 0),   E(END, 2, 0)};
  ref_trace *rt;
  ck_assert_int_eq(ref_trace_build(r3, 8, &rt), 0);
  ck_assert_int_eq(ref_trace_serializable(rt), 0);
  ck_assert_uint_eq(ref_trace_first_cycle(rt), 5);
  ck_assert_uint_eq(ref_trace_first_closed_cycle(rt), 6);
  ck_assert_uint_eq(ref_trace_txn_count(rt), 2);
  ref_trace_free(rt);
  /* Cut before the ENDs: only finish can close the cycle. */
  ck_assert_int_eq(ref_trace_build(r3, 6, &rt), 0);
  ck_assert_int_eq(ref_trace_serializable(rt), 0);
  ck_assert_uint_eq(ref_trace_first_cycle(rt), 5);
  ck_assert_uint_eq(ref_trace_first_closed_cycle(rt), 6); /* = n: none */
  ref_trace_free(rt);
  /* 003 Fig. 2 (rho2): a ≤CHB path leaves T1 and comes back at index 5, while both are
   * active (Algorithm 1 sees it there already: the corpus expects 5); by the bound alone the
   * violation is certain from the END at 6. */
  atom_event r2[] = {E(BEGIN, 1, 0), E(BEGIN, 2, 0), E(WRITE, 1, 1), E(READ, 2, 1),
                     E(WRITE, 2, 2), E(READ, 1, 2),  E(END, 1, 0),   E(END, 2, 0)};
  ck_assert_int_eq(ref_trace_build(r2, 8, &rt), 0);
  ck_assert_uint_eq(ref_trace_first_cycle(rt), 5);
  ck_assert_uint_eq(ref_trace_first_closed_cycle(rt), 6);
  ref_trace_free(rt);
  /* Transaction numbering and the unary ones. */
  atom_event tx[] = {E(WRITE, 1, 1), E(BEGIN, 2, 0), E(READ, 2, 1), E(END, 2, 0),
                     E(READ, 1, 1)};
  ck_assert_int_eq(ref_trace_build(tx, 5, &rt), 0);
  ck_assert_uint_eq(ref_trace_txn_count(rt), 3);
  ck_assert_int_eq(ref_trace_txn_at(rt, 0), 0);
  ck_assert_int_eq(ref_trace_txn_at(rt, 1), 1);
  ck_assert_int_eq(ref_trace_txn_at(rt, 2), -1);
  ck_assert_int_eq(ref_trace_txn_at(rt, 4), 2);
  ck_assert(ref_trace_txn_before(rt, 0, 1));
  ck_assert(ref_trace_txn_before(rt, 0, 2)); /* program order of t1 */
  ck_assert(!ref_trace_txn_before(rt, 1, 2)); /* read, then read */
  ck_assert(!ref_trace_txn_before(rt, 1, 0));
  ref_trace_free(rt);
}
END_TEST

#undef E

/* ---- the generator ----------------------------------------------------------------------- */

START_TEST(test_generator_wellformed) {
  size_t nested = 0, reentrant = 0, forks = 0, joins = 0, unary = 0, open_end = 0, fences = 0;
  size_t violations = 0, total = 2000;
  for (uint64_t seed = 1; seed <= total; seed++) {
    rt_params p;
    rt_params_random(&p, seed, 40);
    atom_event *ev, *ev2;
    size_t n, n2;
    ck_assert_int_eq(rt_generate(&p, seed, &ev, &n), 0);
    ck_assert_int_eq(rt_generate(&p, seed, &ev2, &n2), 0);
    ck_assert_uint_eq(n, n2); /* deterministic */
    ck_assert(n == 0 || memcmp(ev, ev2, n * sizeof *ev) == 0);
    free(ev2);
    ref_trace *rt;
    int rc = ref_trace_build(ev, n, &rt);
    if (rc != 0) {
      fprintf(stderr, "# seed %llu: %s\n", (unsigned long long)seed, ref_error());
      rt_write_std(stderr, ev, n);
    }
    ck_assert_int_eq(rc, 0);
    violations += !ref_trace_serializable(rt);
    ref_trace_free(rt);
    /* Coverage of the features the session normalizes. */
    unsigned depth[RT_MAX_THREADS + 1] = {0}, lockcnt[8] = {0};
    int any_open = 0;
    for (size_t i = 0; i < n; i++) {
      const atom_event *e = &ev[i];
      ck_assert_uint_le(e->thread, p.threads);
      switch (e->kind) {
      case ATOM_BEGIN: nested += depth[e->thread]++ > 0; break;
      case ATOM_END: depth[e->thread]--; break;
      case ATOM_ACQUIRE: reentrant += lockcnt[e->target - RT_LOCK_BASE]++ > 0; break;
      case ATOM_RELEASE: lockcnt[e->target - RT_LOCK_BASE]--; break;
      case ATOM_FORK: forks++; break;
      case ATOM_JOIN: joins++; break;
      case ATOM_FENCE: fences++; break;
      case ATOM_READ:
      case ATOM_WRITE:
        ck_assert(e->target >= RT_VAR_BASE && e->target < RT_VAR_BASE + p.vars);
        unary += depth[e->thread] == 0;
        break;
      default: ck_abort_msg("unexpected kind %u", (unsigned)e->kind);
      }
    }
    for (unsigned t = 0; t <= RT_MAX_THREADS; t++) any_open |= depth[t] > 0;
    ck_assert(!any_open || p.leave_open);
    open_end += any_open;
    free(ev);
  }
  ck_assert_uint_gt(nested, total / 10);
  ck_assert_uint_gt(reentrant, total / 10);
  ck_assert_uint_gt(forks, total / 2);
  ck_assert_uint_gt(joins, total / 20);
  ck_assert_uint_gt(unary, total);
  ck_assert_uint_gt(open_end, total / 20);
  ck_assert_uint_gt(fences, total / 10);
  /* A useful mix of verdicts. */
  ck_assert_uint_gt(violations, total / 10);
  ck_assert_uint_lt(violations, total * 9 / 10);
}
END_TEST

START_TEST(test_generator_twopl) {
  /* Strict two-phase locking without injected races is conflict serializable. */
  for (uint64_t seed = 1; seed <= 300; seed++) {
    rt_params p;
    rt_params_default(&p);
    p.threads = 2 + (unsigned)(seed % 3);
    p.vars = 3;
    p.locks = 2;
    p.events = 60;
    p.twopl = 1;
    p.p_nest = 0.2;
    p.leave_open = (int)(seed & 1);
    atom_event *ev;
    size_t n;
    ck_assert_int_eq(rt_generate(&p, seed, &ev, &n), 0);
    int rc = ref_conflict_serializable(ev, n, NULL);
    if (rc != 1) {
      fprintf(stderr, "# 2PL seed %llu: reference says %d\n", (unsigned long long)seed, rc);
      rt_write_std(stderr, ev, n);
    }
    ck_assert_int_eq(rc, 1);
    free(ev);
  }
}
END_TEST

/* ---- the reference against serial orders ----------------------------------------------- */

/* A second, independent reading of 003 §2: the trace is conflict serializable iff some order
 * of its transactions, run one after the other, keeps every conflicting pair of events of
 * two different transactions in its trace order. Tried by enumerating all orders (Heap's
 * algorithm), so only for traces of at most 8 transactions. */
static int conflicts_again(const atom_event *e, const atom_event *f) {
  int acc_e = e->kind == ATOM_READ || e->kind == ATOM_WRITE;
  int acc_f = f->kind == ATOM_READ || f->kind == ATOM_WRITE;
  return e->thread == f->thread || (e->kind == ATOM_FORK && e->target == f->thread) ||
         (f->kind == ATOM_JOIN && f->target == e->thread) ||
         (acc_e && acc_f && e->target == f->target &&
          (e->kind == ATOM_WRITE || f->kind == ATOM_WRITE)) ||
         (e->kind == ATOM_RELEASE && f->kind == ATOM_ACQUIRE && e->target == f->target);
}

static int some_serial_order(size_t ntx, const unsigned char before[8][8]) {
  size_t perm[8], c[8] = {0};
  for (size_t i = 0; i < ntx; i++) perm[i] = i;
  for (;;) {
    int ok = 1;
    for (size_t i = 0; i < ntx && ok; i++)
      for (size_t j = i + 1; j < ntx && ok; j++)
        if (before[perm[j]][perm[i]]) ok = 0; /* perm[j] must come first */
    if (ok) return 1;
    size_t i = 1;
    while (i < ntx && c[i] >= i) c[i++] = 0;
    if (i >= ntx) return 0;
    size_t k = (i % 2) ? c[i] : 0, tmp = perm[k];
    perm[k] = perm[i];
    perm[i] = tmp;
    c[i]++;
  }
}

START_TEST(test_reference_vs_serial_orders) {
  size_t compared = 0, nonser = 0;
  for (uint64_t seed = 1; compared < 3000 && seed < 100000; seed++) {
    rt_params p;
    rt_params_random(&p, seed, 14);
    atom_event *ev;
    size_t n;
    ck_assert_int_eq(rt_generate(&p, seed, &ev, &n), 0);
    ref_trace *rt;
    ck_assert_int_eq(ref_trace_build(ev, n, &rt), 0);
    size_t ntx = ref_trace_txn_count(rt);
    if (ntx > 8) {
      ref_trace_free(rt);
      free(ev);
      continue;
    }
    unsigned char before[8][8] = {{0}};
    for (size_t i = 0; i < n; i++) {
      long ti = ref_trace_event_txn(rt, i);
      if (ti < 0) continue;
      for (size_t j = i + 1; j < n; j++) {
        long tj = ref_trace_event_txn(rt, j);
        if (tj >= 0 && ti != tj && conflicts_again(&ev[i], &ev[j])) before[ti][tj] = 1;
      }
    }
    int serial = some_serial_order(ntx, before);
    if (serial != ref_trace_serializable(rt)) {
      fprintf(stderr, "# seed %llu: reference %d, serial orders %d\n",
              (unsigned long long)seed, ref_trace_serializable(rt), serial);
      rt_write_std(stderr, ev, n);
    }
    ck_assert_int_eq(serial, ref_trace_serializable(rt));
    compared++;
    nonser += !serial;
    ref_trace_free(rt);
    free(ev);
  }
  ck_assert_uint_eq(compared, 3000);
  ck_assert_uint_gt(nonser, 100);
}
END_TEST

/* ---- the checkers against the reference ------------------------------------------------- */

static const char *const specs[] = {"aerodrome:variant=basic", "aerodrome", "velodrome"};
#define NSPECS 3

static void dump_case(const char *why, uint64_t seed, const rt_params *p, const atom_event *ev,
                      size_t n) {
  fprintf(stderr,
          "# crosscheck mismatch: %s\n# seed %llu: threads=%u vars=%u locks=%u events=%zu "
          "twopl=%d leave_open=%d\n# rerun: ATOM_CROSSCHECK_SEED=%llu ATOM_CROSSCHECK_CASES=1\n",
          why, (unsigned long long)seed, p->threads, p->vars, p->locks, p->events, p->twopl,
          p->leave_open, (unsigned long long)seed);
  rt_write_std(stderr, ev, n);
}

/* What run_checkers() saw: first[i] = event index of checker i's first report (UINT64_MAX if
 * none), reports[i] = its number of distinct reports, velo_first = velodrome's first report,
 * push_rc = the first error of atom_push/atom_finish (push_at = its event). */
typedef struct outcome {
  uint64_t first[NSPECS];
  size_t reports[NSPECS];
  int push_rc;
  size_t push_at;
  const atom_report *velo_first;
} outcome;

static atom_session *run_checkers(const atom_event *ev, size_t n, outcome *o) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  for (size_t i = 0; i < NSPECS; i++) {
    int rc = atom_session_attach(s, specs[i]);
    ck_assert_msg(rc == 0, "attach %s: %s", specs[i], atom_last_error());
  }
  o->push_rc = 0;
  o->push_at = n;
  o->velo_first = NULL;
  for (size_t i = 0; i < n && o->push_rc == 0; i++) {
    o->push_rc = atom_push(s, &ev[i]);
    o->push_at = i;
  }
  if (o->push_rc == 0) o->push_rc = atom_finish(s);
  for (size_t i = 0; i < NSPECS; i++) {
    o->first[i] = UINT64_MAX;
    o->reports[i] = 0;
  }
  size_t nr = atom_report_count(s);
  for (size_t r = 0; r < nr; r++) {
    const atom_report *rep = atom_report_get(s, r);
    ck_assert_ptr_nonnull(rep);
    size_t ci = atom_report_checker_index(rep);
    ck_assert_uint_lt(ci, NSPECS);
    ck_assert_ptr_nonnull(atom_report_checker(rep));
    uint64_t idx = atom_report_event_index(rep);
    o->reports[ci]++;
    if (idx < o->first[ci]) {
      o->first[ci] = idx;
      if (ci == 2) o->velo_first = rep;
    }
  }
  return s;
}

/* Do the transactions of a velodrome report form a cycle of the reference's ≤Txn? */
static int report_is_cycle(const ref_trace *rt, const atom_report *rep) {
  size_t k = atom_report_txn_count(rep);
  if (k < 2 || k > 64) return 0;
  long tx[64];
  for (size_t i = 0; i < k; i++) {
    uint64_t begin;
    if (atom_report_txn(rep, i, NULL, &begin, NULL) != 0) return 0;
    tx[i] = ref_trace_txn_at(rt, (size_t)begin);
    if (tx[i] < 0) return 0;
  }
  int fwd = 1, back = 1;
  for (size_t i = 0; i < k; i++) {
    size_t a = (size_t)tx[i], b = (size_t)tx[(i + 1) % k];
    fwd &= ref_trace_txn_before(rt, a, b);
    back &= ref_trace_txn_before(rt, b, a);
  }
  return fwd || back;
}

START_TEST(test_random_small) {
  uint64_t cases = env_number("ATOM_CROSSCHECK_CASES", 5000);
  uint64_t seed0 = env_number("ATOM_CROSSCHECK_SEED", 1);
  size_t violations = 0, closed_at_finish = 0;
  char why[256];
  for (uint64_t seed = seed0; seed < seed0 + cases; seed++) {
    rt_params p;
    rt_params_random(&p, seed, 40);
    atom_event *ev;
    size_t n;
    ck_assert_int_eq(rt_generate(&p, seed, &ev, &n), 0);
    ref_trace *rt;
    ck_assert_int_eq(ref_trace_build(ev, n, &rt), 0);
    int ser = ref_trace_serializable(rt);
    size_t lo = ref_trace_first_cycle(rt), hi = ref_trace_first_closed_cycle(rt);
    outcome o;
    atom_session *s = run_checkers(ev, n, &o);
    why[0] = '\0';
    if (o.push_rc != 0)
      snprintf(why, sizeof why, "push/finish failed at event %zu: %s (%s)", o.push_at,
               atom_strerror(o.push_rc), atom_last_error());
    for (size_t i = 0; i < NSPECS && !why[0]; i++)
      if ((o.first[i] == UINT64_MAX) != ser)
        snprintf(why, sizeof why, "%s says %s, reference says %s", specs[i],
                 o.first[i] == UINT64_MAX ? "serializable" : "violation",
                 ser ? "serializable" : "violation");
    if (!why[0] && o.first[0] != o.first[1])
      snprintf(why, sizeof why, "aerodrome first violation at %llu (basic) vs %llu",
               (unsigned long long)o.first[0], (unsigned long long)o.first[1]);
    /* 003 Thm. 2: Algorithm 1 declares no earlier than the first cycle and no later than the
     * first cycle with at most one active transaction (if there is none before the end, the
     * verdict above already required it by finish). */
    if (!why[0] && !ser && (o.first[1] < lo || (hi < n && o.first[1] > hi)))
      snprintf(why, sizeof why, "aerodrome first violation at %llu, expected in [%zu, %zu]",
               (unsigned long long)o.first[1], lo, hi);
    /* The graph checker detects incrementally, when the edge that closes the first cycle is
     * added: exactly at the first prefix that is not serializable. */
    if (!why[0] && !ser && o.first[2] != lo)
      snprintf(why, sizeof why, "velodrome first violation at %llu, the first cycle is at %zu",
               (unsigned long long)o.first[2], lo);
    /* Its report names the transactions of a real ≤Txn cycle. */
    if (!why[0] && !ser && !report_is_cycle(rt, o.velo_first))
      snprintf(why, sizeof why, "velodrome's report is not a cycle of the reference: %s",
               atom_report_message(o.velo_first));
    if (why[0]) dump_case(why, seed, &p, ev, n);
    ck_assert_msg(!why[0], "seed %llu: %s", (unsigned long long)seed, why);
    violations += !ser;
    closed_at_finish += !ser && hi >= n;
    atom_session_free(s);
    ref_trace_free(rt);
    free(ev);
  }
  fprintf(stderr,
          "crosscheck: %llu small traces, %zu not serializable (%zu without a cycle of at "
          "most one active transaction before finish)\n",
          (unsigned long long)cases, violations, closed_at_finish);
  if (cases >= 1000) {
    ck_assert_uint_gt(violations, cases / 10);
    ck_assert_uint_lt(violations, cases * 9 / 10);
  }
}
END_TEST

/* ---- checking goes on after a violation ------------------------------------------------- */

/* Trace A (with or without violations) followed by trace B on other threads, variables and
 * locks (so nothing of A orders B): every checker must find B's first violation at the same
 * place as when B runs alone, shifted by A's length. */
START_TEST(test_random_after_violation) {
  uint64_t cases = env_number("ATOM_CROSSCHECK_CASES", 5000) / 5;
  uint64_t seed0 = env_number("ATOM_CROSSCHECK_SEED", 1);
  size_t both = 0;
  for (uint64_t seed = seed0; seed < seed0 + cases; seed++) {
    rt_params pa, pb;
    rt_params_random(&pa, seed, 30);
    rt_params_random(&pb, seed + 7777777, 30);
    atom_event *a, *b;
    size_t na, nb;
    ck_assert_int_eq(rt_generate(&pa, seed, &a, &na), 0);
    ck_assert_int_eq(rt_generate(&pb, seed + 7777777, &b, &nb), 0);
    atom_event *ab = malloc((na + nb + 1) * sizeof *ab);
    ck_assert_ptr_nonnull(ab);
    memcpy(ab, a, na * sizeof *a);
    for (size_t i = 0; i < nb; i++) {
      atom_event e = b[i];
      e.thread += RT_MAX_THREADS;
      if (e.kind == ATOM_FORK || e.kind == ATOM_JOIN) e.target += RT_MAX_THREADS;
      else if (e.target) e.target += 1000;
      e.loc += na;
      b[i] = e;
      ab[na + i] = e;
    }
    outcome alone, joint;
    atom_session *s1 = run_checkers(b, nb, &alone);
    atom_session *s2 = run_checkers(ab, na + nb, &joint);
    ck_assert_int_eq(alone.push_rc, 0);
    ck_assert_int_eq(joint.push_rc, 0);
    for (size_t c = 0; c < NSPECS; c++) {
      if (alone.first[c] >= nb) continue; /* none, or only at finish */
      uint64_t first_b = UINT64_MAX;
      size_t nr = atom_report_count(s2);
      for (size_t r = 0; r < nr; r++) {
        const atom_report *rep = atom_report_get(s2, r);
        uint64_t idx = atom_report_event_index(rep);
        if (atom_report_checker_index(rep) == c && idx >= na && idx < first_b) first_b = idx;
      }
      if (first_b != alone.first[c] + na) {
        fprintf(stderr, "# after-violation mismatch for %s: alone %llu, after A %llu (A has %zu "
                "events)\n# A (seed %llu):\n", specs[c], (unsigned long long)alone.first[c],
                (unsigned long long)first_b, na, (unsigned long long)seed);
        rt_write_std(stderr, ab, na + nb);
      }
      ck_assert_uint_eq(first_b, alone.first[c] + na);
    }
    both += joint.first[1] < na && alone.first[1] < nb;
    atom_session_free(s1);
    atom_session_free(s2);
    free(ab);
    free(a);
    free(b);
  }
  if (cases >= 200) ck_assert_uint_gt(both, cases / 40); /* A had a violation before B */
}
END_TEST

/* ---- long traces: aerodrome against velodrome ------------------------------------------- */

typedef struct firsts {
  uint64_t first[NSPECS];
  uint64_t count[NSPECS];
} firsts;

static void on_report(const atom_report *r, void *payload) {
  firsts *f = payload;
  size_t ci = atom_report_checker_index(r);
  if (ci >= NSPECS) return;
  f->count[ci]++;
  uint64_t idx = atom_report_event_index(r);
  if (idx < f->first[ci]) f->first[ci] = idx;
}

START_TEST(test_random_large) {
  uint64_t runs = env_number("ATOM_CROSSCHECK_LARGE", 4);
  uint64_t len = env_number("ATOM_CROSSCHECK_LARGE_EVENTS", 100000);
  static const double unprotected[] = {0.0, 1e-4, 1e-3, 0.0, 1e-2, 1e-5};
  for (uint64_t run = 0; run < runs; run++) {
    uint64_t seed = 1000 + run;
    rt_params p;
    rt_params_default(&p);
    p.threads = 3 + (unsigned)(run % 3);
    p.vars = 8 + (unsigned)(run % 5);
    p.locks = 3;
    p.events = (size_t)len;
    p.p_root = 0.5;
    p.p_fork = 0.001;
    p.p_join = 0.01;
    p.p_finish = 0.00001; /* threads that stop get joined: keep most of them running */
    p.p_nest = 0.05;
    p.p_end = 0.25;
    p.twopl = 1;
    p.p_unprotected = unprotected[run % 6];
    atom_event *ev;
    size_t n;
    ck_assert_int_eq(rt_generate(&p, seed, &ev, &n), 0);
    ck_assert_uint_ge(n, (size_t)len);

    firsts f;
    for (size_t i = 0; i < NSPECS; i++) f.first[i] = UINT64_MAX, f.count[i] = 0;
    atom_options opt;
    ck_assert_int_eq(atom_options_init(&opt, ATOM_OPTIONS_VERSION), 0);
    opt.on_report = on_report;
    opt.report_payload = &f;
    opt.max_reports = 16;
    atom_session *s;
    ck_assert_int_eq(atom_session_new(&s, &opt), 0);
    for (size_t i = 0; i < NSPECS; i++) ck_assert_int_eq(atom_session_attach(s, specs[i]), 0);
    size_t done = 0;
    int rc = atom_push_many(s, ev, n, &done);
    ck_assert_msg(rc == 0, "seed %llu: push failed at %zu: %s", (unsigned long long)seed,
                  done, atom_last_error());
    ck_assert_int_eq(atom_finish(s), 0);
    int viol_a = f.first[1] != UINT64_MAX, viol_v = f.first[2] != UINT64_MAX;
    int bad = viol_a != viol_v || f.first[0] != f.first[1] ||
              (p.p_unprotected == 0.0 && (viol_a || viol_v || f.first[0] != UINT64_MAX));
    fprintf(stderr,
            "crosscheck: long trace seed %llu (%zu events, %u threads, unprotected %g): "
            "first violation basic %lld aerodrome %lld velodrome %lld\n",
            (unsigned long long)seed, n, p.threads, p.p_unprotected,
            (long long)(f.first[0] == UINT64_MAX ? -1 : (long long)f.first[0]),
            (long long)(f.first[1] == UINT64_MAX ? -1 : (long long)f.first[1]),
            (long long)(f.first[2] == UINT64_MAX ? -1 : (long long)f.first[2]));
    if (bad && n <= 2000) dump_case("long trace", seed, &p, ev, n);
    ck_assert_msg(!bad, "long trace seed %llu: verdicts disagree", (unsigned long long)seed);
    /* A cycle among transactions exists before (or when) Algorithm 1 can see it. */
    if (viol_a) ck_assert_uint_le(f.first[2], f.first[1]);
    atom_session_free(s);
    free(ev);
  }
}
END_TEST

Suite *atom_test_suite_crosscheck(void) {
  Suite *s = suite_create("crosscheck");
  TCase *ref = tcase_create("reference");
  tcase_add_test(ref, test_reference_corpus);
  tcase_add_test(ref, test_reference_rules);
  tcase_add_test(ref, test_reference_prefixes);
  tcase_add_test(ref, test_reference_vs_serial_orders);
  tcase_add_test(ref, test_generator_wellformed);
  tcase_add_test(ref, test_generator_twopl);
  suite_add_tcase(s, ref);
  TCase *cc = tcase_create("checkers");
  tcase_set_timeout(cc, 600);
  tcase_add_test(cc, test_random_small);
  tcase_add_test(cc, test_random_after_violation);
  tcase_add_test(cc, test_random_large);
  suite_add_tcase(s, cc);
  return s;
}
