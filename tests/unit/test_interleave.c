/* Tests of the all-interleavings reference (interleave.c): the corpus verdicts, the examples
 * of 000 (Wang & Stoller, numbered as in its text) and 004 §2, hand-made schedules for the
 * two deciders, deadlocks, truncation, ill-formed input, and properties on random traces
 * (randtrace.c) checked against implementations written here from the definitions alone:
 * an enumeration of every schedule event by event with no reduction and no state table, a
 * search of every serial order of the units, and the one-trace reference of reference.c.
 *
 * Environment: ATOM_INTERLEAVE_CASES (random traces, default 3000; 150 under valgrind),
 * ATOM_INTERLEAVE_SEED (first seed, default 1). A failure prints the seed and the trace.
 */
#include <check.h>

#include "util.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity.h"
#include "interleave.h"
#include "randtrace.h"
#include "reference.h"

#ifndef ATOM_CORPUS_DIR
#define ATOM_CORPUS_DIR "tests/corpus"
#endif

Suite *atom_test_suite_interleave(void);

#define MAXE 64 /* events in the traces written here */
#define MAXT 8  /* threads */
#define NAIVE_LIMIT 2000   /* serial orders the definitional search may try */
#define MERGE_LIMIT 20000  /* schedules the event-by-event enumeration may try */

static unsigned long long env_number(const char *name, unsigned long long dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  unsigned long long x = strtoull(v, &end, 10);
  return *end ? dflt : x;
}

static int under_valgrind(void) {
  const char *v = getenv("ATOM_UNDER_VALGRIND");
  return v && *v && strcmp(v, "0") != 0;
}

/* ---- traces from text --------------------------------------------------------------------- */

/* Events from STD text, through the library's reader. */
static size_t read_std(const char *text, size_t size, const char *name, atom_event *ev,
                       size_t cap) {
  atom_trace_reader *r = NULL;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, text, size, name), 0);
  size_t n = 0;
  atom_event e;
  int rc;
  while ((rc = atom_trace_reader_next(r, &e)) == 1) {
    ck_assert_msg(n < cap, "%s: more than %zu events", name, cap);
    ev[n++] = e;
  }
  ck_assert_msg(rc == 0, "%s: %s", name, atom_last_error());
  atom_trace_reader_free(r);
  return n;
}

/* A trace in a compact notation: "1:begin 1:r(x) 2:acq(l) 1:fork(3) ..." is thread t1's
 * BEGIN, t1's read of x, t2's acquire of l, t1's fork of t3, ... (STD operators; each token
 * becomes one STD line). */
static size_t trace_of(const char *spec, atom_event *ev) {
  char text[8192];
  size_t len = 0, idx = 0;
  const char *p = spec;
  while (*p) {
    while (*p == ' ' || *p == '\n') p++;
    if (!*p) break;
    const char *colon = strchr(p, ':');
    ck_assert_ptr_nonnull(colon);
    const char *q = colon + 1;
    while (*q && *q != ' ' && *q != '\n') q++;
    const char *op = colon + 1;
    int oplen = (int)(q - op);
    /* thread names get the same "t" in FORK and JOIN targets */
    int thread_arg = strncmp(op, "fork(", 5) == 0 || strncmp(op, "join(", 5) == 0;
    int w = thread_arg ? snprintf(text + len, sizeof text - len, "t%.*s|%.5st%.*s|%zu\n",
                                  (int)(colon - p), p, op, oplen - 5, op + 5, idx++)
                       : snprintf(text + len, sizeof text - len, "t%.*s|%.*s|%zu\n",
                                  (int)(colon - p), p, oplen, op, idx++);
    ck_assert(w > 0 && (size_t)w < sizeof text - len);
    len += (size_t)w;
    p = q;
  }
  return read_std(text, len, "<spec>", ev, MAXE);
}

/* The boolean after "key": in a flat JSON object: 1, 0, or -1 if absent or not a boolean. */
static int json_bool(const char *json, const char *key) {
  char pat[96];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *k = strstr(json, pat);
  if (!k) return -1;
  k = strchr(k + strlen(pat), ':');
  if (!k) return -1;
  k++;
  while (*k == ' ' || *k == '\n' || *k == '\r' || *k == '\t') k++;
  if (strncmp(k, "true", 4) == 0) return 1;
  if (strncmp(k, "false", 5) == 0) return 0;
  return -1;
}

static void dump(const atom_event *ev, size_t n) { rt_write_std(stderr, ev, n); }

/* ---- an independent model of the programs (written from interleave.h, not from its code) -- */

typedef struct model {
  const atom_event *ev;
  size_t n, T;
  uint64_t key[MAXT];
  int forked[MAXT];            /* the target of a FORK in the trace */
  size_t len[MAXT];
  size_t prog[MAXT][MAXE];     /* event indices of each thread, in order */
  size_t tid[MAXE];            /* thread of each event */
  size_t U, unit[MAXE];        /* units (union of transactions and lock blocks) */
  size_t ufirst[MAXE], ulast[MAXE]; /* first and last event index of each unit */
} model;

static size_t model_thread(model *m, uint64_t key) {
  for (size_t t = 0; t < m->T; t++)
    if (m->key[t] == key) return t;
  ck_assert_uint_lt(m->T, MAXT);
  m->key[m->T] = key;
  m->forked[m->T] = 0;
  m->len[m->T] = 0;
  return m->T++;
}

static void model_build(model *m, const atom_event *ev, size_t n) {
  memset(m, 0, sizeof *m);
  ck_assert_uint_le(n, MAXE);
  m->ev = ev;
  m->n = n;
  for (size_t i = 0; i < n; i++) {
    size_t t = model_thread(m, ev[i].thread);
    m->tid[i] = t;
    m->prog[t][m->len[t]++] = i;
    if (ev[i].kind == ATOM_FORK) m->forked[model_thread(m, ev[i].target)] = 1;
    if (ev[i].kind == ATOM_JOIN) model_thread(m, ev[i].target);
  }
  /* Units: walk each program; inside = open transaction or some lock held. */
  for (size_t t = 0; t < m->T; t++) {
    int depth = 0;
    uint64_t lk[MAXE];
    int cnt[MAXE];
    size_t nl = 0, held = 0, cur = SIZE_MAX;
    for (size_t k = 0; k < m->len[t]; k++) {
      size_t i = m->prog[t][k];
      int before = depth > 0 || held > 0;
      if (ev[i].kind == ATOM_BEGIN) depth++;
      if (ev[i].kind == ATOM_END) depth--;
      if (ev[i].kind == ATOM_ACQUIRE || ev[i].kind == ATOM_RELEASE) {
        size_t l = 0;
        while (l < nl && lk[l] != ev[i].target) l++;
        if (l == nl) lk[nl] = ev[i].target, cnt[nl++] = 0;
        if (ev[i].kind == ATOM_ACQUIRE && cnt[l]++ == 0) held++;
        if (ev[i].kind == ATOM_RELEASE && --cnt[l] == 0) held--;
      }
      int after = depth > 0 || held > 0;
      if (!before) {
        cur = m->U++;
        m->ufirst[cur] = i;
      }
      m->unit[i] = cur;
      m->ulast[cur] = i;
      if (!after) cur = SIZE_MAX;
    }
  }
}

static int is_access(uint32_t kind) { return kind == ATOM_READ || kind == ATOM_WRITE; }

/* Machine state of the model: positions, started threads, lock owners with counts. */
typedef struct mstate {
  size_t pos[MAXT];
  int started[MAXT];
  uint64_t lkey[MAXE];
  size_t lowner[MAXE], lcount[MAXE], nl;
} mstate;

static void mstate_init(const model *m, mstate *s) {
  memset(s, 0, sizeof *s);
  for (size_t t = 0; t < m->T; t++) s->started[t] = !m->forked[t];
}

static size_t mlock(mstate *s, uint64_t key) {
  for (size_t l = 0; l < s->nl; l++)
    if (s->lkey[l] == key) return l;
  s->lkey[s->nl] = key;
  s->lcount[s->nl] = 0;
  return s->nl++;
}

static size_t thread_of_key(const model *m, uint64_t key) {
  for (size_t t = 0; t < m->T; t++)
    if (m->key[t] == key) return t;
  return SIZE_MAX;
}

static int done(const model *m, const mstate *s, size_t t) {
  return s->started[t] && s->pos[t] == m->len[t];
}

/* Can thread t run its next event now? */
static int enabled(const model *m, mstate *s, size_t t) {
  if (!s->started[t] || s->pos[t] == m->len[t]) return 0;
  const atom_event *e = &m->ev[m->prog[t][s->pos[t]]];
  if (e->kind == ATOM_ACQUIRE) {
    size_t l = mlock(s, e->target);
    return s->lcount[l] == 0 || s->lowner[l] == t;
  }
  if (e->kind == ATOM_JOIN) return done(m, s, thread_of_key(m, e->target));
  if (e->kind == ATOM_READ && (e->flags & ATOM_FLAG_ACQUIRE)) {
    /* sync order: every earlier release WRITE of the variable by another thread has run */
    size_t i = m->prog[t][s->pos[t]];
    for (size_t u = 0; u < m->T; u++) {
      if (u == t) continue;
      for (size_t k = s->pos[u]; k < m->len[u]; k++) {
        const atom_event *f = &m->ev[m->prog[u][k]];
        if (m->prog[u][k] < i && f->kind == ATOM_WRITE && (f->flags & ATOM_FLAG_RELEASE) &&
            f->target == e->target)
          return 0;
      }
    }
  }
  return 1;
}

/* Run thread t's next event (must be enabled); returns its index. */
static size_t run(const model *m, mstate *s, size_t t) {
  size_t i = m->prog[t][s->pos[t]++];
  const atom_event *e = &m->ev[i];
  if (e->kind == ATOM_ACQUIRE) {
    size_t l = mlock(s, e->target);
    s->lowner[l] = t;
    s->lcount[l]++;
  } else if (e->kind == ATOM_RELEASE) {
    s->lcount[mlock(s, e->target)]--;
  } else if (e->kind == ATOM_FORK) {
    s->started[thread_of_key(m, e->target)] = 1;
  }
  return i;
}

/* Is order[0..n) a complete feasible schedule? */
static int feasible(const model *m, const size_t *order, size_t len) {
  if (len != m->n) return 0;
  mstate s;
  mstate_init(m, &s);
  for (size_t j = 0; j < len; j++) {
    if (order[j] >= m->n) return 0;
    size_t t = m->tid[order[j]];
    if (s.pos[t] == m->len[t] || m->prog[t][s.pos[t]] != order[j] || !enabled(m, &s, t)) return 0;
    run(m, &s, t);
  }
  return 1;
}

/* A random complete feasible schedule (a random walk; retried when it deadlocks). */
static int random_schedule(const model *m, rt_rng *rng, size_t *order) {
  for (int attempt = 0; attempt < 50; attempt++) {
    mstate s;
    mstate_init(m, &s);
    size_t j = 0;
    for (;;) {
      size_t cand[MAXT], nc = 0;
      for (size_t t = 0; t < m->T; t++)
        if (enabled(m, &s, t)) cand[nc++] = t;
      if (nc == 0) break;
      order[j++] = run(m, &s, cand[rt_rng_below(rng, nc)]);
    }
    if (j == m->n) return 1;
  }
  return 0;
}

/* ---- serializability from the definitions: try every serial order of the units ------------ */

/* rf[i] for each READ i: index of the WRITE it reads + 1, or 0 for the initial value;
 * fw[i] = 1 for each WRITE i that is the last of its variable. */
static void view_of(const model *m, const size_t *order, size_t *rf, int *fw) {
  for (size_t j = 0; j < m->n; j++) {
    size_t i = order[j];
    fw[i] = 0;
    if (!is_access(m->ev[i].kind)) continue;
    size_t last = 0;
    int is_last = 1;
    for (size_t k = 0; k < j; k++) {
      const atom_event *f = &m->ev[order[k]];
      if (f->kind == ATOM_WRITE && f->target == m->ev[i].target) last = order[k] + 1;
    }
    for (size_t k = j + 1; k < m->n; k++) {
      const atom_event *f = &m->ev[order[k]];
      if (f->kind == ATOM_WRITE && f->target == m->ev[i].target) is_last = 0;
    }
    if (m->ev[i].kind == ATOM_READ) rf[i] = last;
    else fw[i] = is_last;
  }
}

typedef struct naive_serial {
  const model *m;
  const size_t *given; /* the schedule to match */
  size_t gpos[MAXE];   /* position of each event in it */
  size_t grf[MAXE];
  int gfw[MAXE];
  int view;
  size_t order[MAXE]; /* serial schedule being built */
  size_t len;
  size_t next_unit[MAXT];
  size_t tunits[MAXT][MAXE], ntunits[MAXT];
} naive_serial;

static int naive_matches(naive_serial *ns) {
  const model *m = ns->m;
  if (ns->view) {
    size_t rf[MAXE];
    int fw[MAXE];
    view_of(m, ns->order, rf, fw);
    for (size_t i = 0; i < m->n; i++) {
      if (m->ev[i].kind == ATOM_READ && rf[i] != ns->grf[i]) return 0;
      if (m->ev[i].kind == ATOM_WRITE && fw[i] != ns->gfw[i]) return 0;
    }
    return 1;
  }
  size_t pos[MAXE];
  for (size_t j = 0; j < m->n; j++) pos[ns->order[j]] = j;
  for (size_t a = 0; a < m->n; a++)
    for (size_t b = 0; b < m->n; b++) {
      const atom_event *x = &m->ev[a], *y = &m->ev[b];
      if (a == b || !is_access(x->kind) || !is_access(y->kind) || x->target != y->target ||
          (x->kind == ATOM_READ && y->kind == ATOM_READ))
        continue;
      if ((ns->gpos[a] < ns->gpos[b]) != (pos[a] < pos[b])) return 0;
    }
  return 1;
}

/* Every merge of the threads' unit sequences; a candidate must be feasible when run. */
static int naive_serial_rec(naive_serial *ns) {
  const model *m = ns->m;
  if (ns->len == m->n) {
    if (!feasible(m, ns->order, ns->len)) return 0;
    return naive_matches(ns);
  }
  for (size_t t = 0; t < m->T; t++) {
    if (ns->next_unit[t] == ns->ntunits[t]) continue;
    size_t u = ns->tunits[t][ns->next_unit[t]++], saved = ns->len;
    for (size_t i = m->ufirst[u]; i <= m->ulast[u]; i++)
      if (m->tid[i] == t) ns->order[ns->len++] = i;
    int found = naive_serial_rec(ns);
    ns->len = saved;
    ns->next_unit[t]--;
    if (found) return 1;
  }
  return 0;
}

/* (n1 + ... + nk)! / (n1! ... nk!), or SIZE_MAX when above 10^8. */
static size_t multinomial(const size_t *parts, size_t k) {
  size_t total = 0, count = 1;
  for (size_t t = 0; t < k; t++)
    for (size_t j = 1; j <= parts[t]; j++) {
      total++;
      count = count * total / j; /* exact: a product of binomial coefficients so far */
      if (count > 100000000) return SIZE_MAX;
    }
  return count;
}

/* Number of serial orders naive_serializable() tries. */
static size_t serial_orders(const model *m) {
  size_t per[MAXT] = {0};
  for (size_t u = 0; u < m->U; u++) per[m->tid[m->ufirst[u]]]++;
  return multinomial(per, m->T);
}

static int naive_serializable(const model *m, const size_t *given, int view) {
  naive_serial *ns = calloc(1, sizeof *ns);
  ck_assert_ptr_nonnull(ns);
  ns->m = m;
  ns->given = given;
  ns->view = view;
  for (size_t j = 0; j < m->n; j++) ns->gpos[given[j]] = j;
  view_of(m, given, ns->grf, ns->gfw);
  for (size_t u = 0; u < m->U; u++) {
    size_t t = m->tid[m->ufirst[u]];
    ns->tunits[t][ns->ntunits[t]++] = u;
  }
  int r = naive_serial_rec(ns);
  free(ns);
  return r;
}

/* ---- atomicity from the definitions: every schedule, event by event ----------------------- */

typedef struct naive_all {
  const model *m;
  size_t order[MAXE], len;
  int conflict_atomic, view_atomic, deadlock;
  size_t complete;
} naive_all;

static void naive_all_rec(naive_all *na, mstate *s) {
  const model *m = na->m;
  if (na->len == m->n) {
    na->complete++;
    if (na->conflict_atomic &&
        il_schedule_conflict_serializable(m->ev, m->n, na->order, na->len) != 1)
      na->conflict_atomic = 0;
    if (na->view_atomic && il_schedule_view_serializable(m->ev, m->n, na->order, na->len) != 1)
      na->view_atomic = 0;
    return;
  }
  int moved = 0;
  for (size_t t = 0; t < m->T; t++) {
    if (!enabled(m, s, t)) continue;
    moved = 1;
    mstate c = *s;
    na->order[na->len++] = run(m, &c, t);
    naive_all_rec(na, &c);
    na->len--;
  }
  if (!moved) na->deadlock = 1;
}

/* ---- the one-trace reference on units ---------------------------------------------------- */

/* The schedule as a trace for reference.c in which the units are explicit transactions and
 * lock operations are gone (they do not conflict here): each unit becomes BEGIN .. END around
 * its READ/WRITE/FORK/JOIN/FENCE events. Its conflict serializability is the schedule's as
 * interleave.h defines it when no lock is held at the end of any thread. One more detail: a
 * JOIN of a forked thread must follow its FORK here even when the thread has no events (it
 * cannot be joined before it started), while 003 §2 orders them only through the child's
 * events; a write of a fresh variable after such a FORK and before such a JOIN gives
 * reference.c the same order. */
static size_t units_as_transactions(const model *m, const size_t *order, atom_event *out) {
  size_t k = 0;
  for (size_t j = 0; j < m->n; j++) {
    size_t i = order[j], u = m->unit[i];
    const atom_event *e = &m->ev[i];
    atom_event b = {.kind = ATOM_BEGIN, .thread = e->thread, .loc = i};
    size_t c = e->kind == ATOM_FORK || e->kind == ATOM_JOIN ? thread_of_key(m, e->target) : 0;
    int eventless_child = (e->kind == ATOM_FORK || e->kind == ATOM_JOIN) && m->forked[c] &&
                          m->len[c] == 0;
    atom_event link = {.kind = ATOM_WRITE, .thread = e->thread, .target = UINT64_MAX - c,
                       .loc = i};
    if (i == m->ufirst[u]) out[k++] = b;
    if (eventless_child && e->kind == ATOM_JOIN) out[k++] = link;
    if (e->kind != ATOM_BEGIN && e->kind != ATOM_END && e->kind != ATOM_ACQUIRE &&
        e->kind != ATOM_RELEASE)
      out[k++] = *e;
    if (eventless_child && e->kind == ATOM_FORK) out[k++] = link;
    if (i == m->ulast[u]) {
      b.kind = ATOM_END;
      out[k++] = b;
    }
  }
  return k;
}

static int lock_held_at_end(const atom_event *ev, size_t n) {
  long count[MAXE] = {0};
  uint64_t key[MAXE];
  size_t nl = 0;
  for (size_t i = 0; i < n; i++) {
    if (ev[i].kind != ATOM_ACQUIRE && ev[i].kind != ATOM_RELEASE) continue;
    size_t l = 0;
    while (l < nl && key[l] != ev[i].target) l++;
    if (l == nl) key[nl++] = ev[i].target;
    count[l] += ev[i].kind == ATOM_ACQUIRE ? 1 : -1;
  }
  for (size_t l = 0; l < nl; l++)
    if (count[l] != 0) return 1;
  return 0;
}

/* ---- checks shared by the tests ----------------------------------------------------------- */

static void check_witness(const model *m, const size_t *w, size_t nw, int view) {
  ck_assert_ptr_nonnull(w);
  ck_assert_uint_eq(nw, m->n);
  ck_assert_msg(feasible(m, w, nw), "the witness is not a complete feasible schedule");
  int r = view ? il_schedule_view_serializable(m->ev, m->n, w, nw)
               : il_schedule_conflict_serializable(m->ev, m->n, w, nw);
  ck_assert_int_eq(r, 0);
  if (serial_orders(m) <= NAIVE_LIMIT) ck_assert_int_eq(naive_serializable(m, w, view), 0);
}

/* il_check with its invariants checked; returns the result (caller frees). */
static il_result check(const atom_event *ev, size_t n) {
  il_result r;
  int rc = il_check(ev, n, NULL, &r);
  ck_assert_msg(rc == 0, "il_check: %s", il_error());
  ck_assert_int_eq(r.truncated, 0);
  ck_assert_uint_ge(r.interleavings, 1);
  ck_assert_msg(!r.conflict_atomic || r.view_atomic, "conflict-atomic but not view-atomic");
  if (n <= MAXE) {
    model m;
    model_build(&m, ev, n);
    ck_assert_uint_eq(r.n_units, m.U);
    if (!r.conflict_atomic) check_witness(&m, r.conflict_witness, r.n_conflict_witness, 0);
    else ck_assert_ptr_null(r.conflict_witness);
    if (!r.view_atomic) check_witness(&m, r.view_witness, r.n_view_witness, 1);
    else ck_assert_ptr_null(r.view_witness);
  }
  return r;
}

/* The same trace observed in the order @p order (a complete feasible schedule of it). */
static void reorder(const atom_event *ev, size_t n, const size_t *order, atom_event *out) {
  for (size_t j = 0; j < n; j++) out[j] = ev[order[j]];
}

/* Sync order is taken from the trace order (a release WRITE happens before the LATER acquire
 * READs), so a trace with flags observed in another feasible order may have more sync order:
 * its feasible schedules are a subset of the original's, it is atomic if the original is,
 * and its deadlocks may differ. Without flags the verdicts are the same. */
static int flagged(const atom_event *ev, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (ev[i].flags) return 1;
  return 0;
}

/* Does some acquire READ follow a release WRITE of its variable by another thread? */
static int sync_edge(const atom_event *ev, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++)
      if (ev[i].kind == ATOM_READ && (ev[i].flags & ATOM_FLAG_ACQUIRE) &&
          ev[j].kind == ATOM_WRITE && (ev[j].flags & ATOM_FLAG_RELEASE) &&
          ev[j].target == ev[i].target && ev[j].thread != ev[i].thread)
        return 1;
  return 0;
}

static int same_or_fewer(const il_result *r2, int conflict, int view) {
  return r2->conflict_atomic >= conflict && r2->view_atomic >= view;
}

static void expect(const char *spec, int conflict, int view, int deadlock) {
  atom_event ev[MAXE];
  size_t n = trace_of(spec, ev);
  il_result r = check(ev, n);
  ck_assert_msg(r.conflict_atomic == conflict && r.view_atomic == view &&
                    r.potential_deadlock == deadlock,
                "%s: conflict %d view %d deadlock %d; expected %d %d %d", spec,
                r.conflict_atomic, r.view_atomic, r.potential_deadlock, conflict, view, deadlock);
  /* The verdicts are about the programs, not about the order observed: the same from every
   * complete feasible schedule of the trace (here: each thread's program run alone, in
   * turn, last thread first, when that is feasible; and a few random schedules). */
  model m;
  model_build(&m, ev, n);
  size_t order[MAXE], k = 0;
  for (size_t t = m.T; t-- > 0;)
    for (size_t j = 0; j < m.len[t]; j++) order[k++] = m.prog[t][j];
  rt_rng rng;
  rt_rng_seed(&rng, n);
  for (int round = 0; round < 4; round++) {
    if (round > 0 && !random_schedule(&m, &rng, order)) continue;
    if (round == 0 && !feasible(&m, order, n)) continue;
    atom_event re[MAXE];
    reorder(ev, n, order, re);
    il_result r2 = check(re, n);
    ck_assert_msg(flagged(ev, n) ? same_or_fewer(&r2, conflict, view)
                                 : r2.conflict_atomic == conflict && r2.view_atomic == view &&
                                       r2.potential_deadlock == deadlock,
                  "%s, observed in another order (round %d): conflict %d view %d deadlock %d",
                  spec, round, r2.conflict_atomic, r2.view_atomic, r2.potential_deadlock);
    il_result_free(&r2);
  }
  il_result_free(&r);
}

/* Decide the schedule given as positions in the trace of @p spec. */
static void expect_schedule(const char *spec, const size_t *order, int conflict, int view) {
  atom_event ev[MAXE];
  size_t n = trace_of(spec, ev);
  ck_assert_int_eq(il_schedule_conflict_serializable(ev, n, order, n), conflict);
  ck_assert_int_eq(il_schedule_view_serializable(ev, n, order, n), view);
  model m;
  model_build(&m, ev, n);
  ck_assert_int_eq(naive_serializable(&m, order, 0), conflict);
  ck_assert_int_eq(naive_serializable(&m, order, 1), view);
}

/* ---- the corpus --------------------------------------------------------------------------- */

START_TEST(test_corpus) {
  char *files[512];
  size_t nfiles = tu_corpus_list(files, 512);
  ck_assert_uint_gt(nfiles, 0);
  size_t checked = 0;
  for (size_t f = 0; f < nfiles; f++) {
    char path[1024], jpath[1024];
    snprintf(path, sizeof path, "%s/%s", ATOM_CORPUS_DIR, files[f]);
    snprintf(jpath, sizeof jpath, "%s/%.*s.expected.json", ATOM_CORPUS_DIR,
             (int)(strlen(files[f]) - 4), files[f]);
    /* The file through the library's reader, as a user would load it. */
    atom_trace_reader *rd = NULL;
    ck_assert_int_eq(atom_trace_reader_open(&rd, path), 0);
    atom_event ev[MAXE];
    size_t n = 0;
    int rc;
    while ((rc = atom_trace_reader_next(rd, &ev[n])) == 1) ck_assert_uint_lt(++n, MAXE);
    ck_assert_msg(rc == 0, "%s: %s", path, atom_last_error());
    atom_trace_reader_free(rd);
    char *json = tu_read_file(jpath, NULL);
    ck_assert_msg(json != NULL, "cannot read %s", jpath);
    int ec = json_bool(json, "conflict_atomic"), evw = json_bool(json, "view_atomic");
    int ed = json_bool(json, "potential_deadlock");
    free(json);
    if (ec < 0 && evw < 0 && ed < 0) { /* no atomicity verdicts for this file */
      free(files[f]);
      continue;
    }
    il_result r = check(ev, n);
    ck_assert_msg((ec < 0 || r.conflict_atomic == ec) && (evw < 0 || r.view_atomic == evw) &&
                      (ed < 0 || r.potential_deadlock == ed),
                  "%s: conflict_atomic %d view_atomic %d potential_deadlock %d; expected %d %d %d",
                  files[f], r.conflict_atomic, r.view_atomic, r.potential_deadlock, ec, evw, ed);
    il_result_free(&r);
    checked++;
    free(files[f]);
  }
  ck_assert_uint_ge(checked, 20);
}
END_TEST

/* ---- the examples of 000 (Wang & Stoller) and 004 §2 ------------------------------------- */

/* 000 (1)-(2): t1: R(x) W(x), t2: R(x). Three feasible traces; tr2 is equivalent to tr3
 * because both reads see the initial value; "t1 and t2 are atomic". */
#define EX1 "1:begin 1:r(x) 1:w(x) 1:end 2:begin 2:r(x) 2:end"
START_TEST(test_ex1) {
  expect(EX1, 1, 1, 0);
  /* positions: 0 begin 1 R 2 W 3 end | 4 begin 5 R 6 end */
  const size_t tr1[] = {0, 1, 2, 3, 4, 5, 6}, tr2[] = {0, 1, 4, 5, 6, 2, 3},
               tr3[] = {4, 5, 6, 0, 1, 2, 3};
  expect_schedule(EX1, tr1, 1, 1);
  expect_schedule(EX1, tr2, 1, 1);
  expect_schedule(EX1, tr3, 1, 1);
}
END_TEST

/* 000 (3): setXY = setX; setY with synchronized setX, setY; two concurrent calls can leave
 * x = 200, y = 100, which no serial execution gives: not atomic. */
#define EX3                                                                                  \
  "1:begin 1:acq(l) 1:w(x) 1:rel(l) 1:acq(l) 1:w(y) 1:rel(l) 1:end "                         \
  "2:begin 2:acq(l) 2:w(x) 2:rel(l) 2:acq(l) 2:w(y) 2:rel(l) 2:end"
START_TEST(test_ex3) {
  expect(EX3, 0, 0, 0);
  /* the layout of (3): θ1.setX θ2.setX θ2.setY θ1.setY */
  const size_t order[] = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 4, 5, 6, 7};
  expect_schedule(EX3, order, 0, 0);
}
END_TEST

/* 000 (4): atomic (though not view consistent). */
START_TEST(test_ex4) {
  expect("1:begin 1:acq(l) 1:r(x) 1:r(y) 1:rel(l) 1:end "
         "2:begin 2:acq(l) 2:r(x) 2:rel(l) 2:acq(l) 2:r(y) 2:rel(l) 2:end",
         1, 1, 0);
}
END_TEST

/* 000 (5): view consistent but not atomic. */
#define EX5                                                                                  \
  "1:begin 1:acq(l) 1:w(x) 1:rel(l) 1:end "                                                  \
  "2:begin 2:acq(l) 2:r(x) 2:rel(l) 2:acq(l) 2:w(x) 2:rel(l) 2:end"
START_TEST(test_ex5) {
  expect(EX5, 0, 0, 0);
  /* t1 between t2's two critical sections */
  const size_t order[] = {5, 6, 7, 8, 0, 1, 2, 3, 4, 9, 10, 11, 12};
  expect_schedule(EX5, order, 0, 0);
}
END_TEST

/* 000 (6): atomic by Theorem 4.3 (the precise lockset test). */
START_TEST(test_ex6) {
  expect("1:begin 1:acq(l) 1:w(x) 1:rel(l) 1:r(x) 1:end 2:begin 2:acq(l) 2:r(x) 2:rel(l) 2:end",
         1, 1, 0);
}
END_TEST

/* 000 (7) and 004 §2: t1: W1(x) W2(x), t2: W(x). With t2's write between t1's, the trace is
 * view-equivalent to t2 t1 but conflict-equivalent to no serial trace: view-atomic, not
 * conflict-atomic. */
#define EX7 "1:begin 1:w(x) 1:w(x) 1:end 2:begin 2:w(x) 2:end"
START_TEST(test_ex7) {
  expect(EX7, 0, 1, 0);
  const size_t middle[] = {0, 1, 4, 5, 6, 2, 3};
  expect_schedule(EX7, middle, 0, 1);
  const size_t serial[] = {4, 5, 6, 0, 1, 2, 3};
  expect_schedule(EX7, serial, 1, 1);
}
END_TEST

/* 000 (8): RBLN transactions that the block-based algorithm shows atomic. */
START_TEST(test_ex8) {
  expect("1:begin 1:acq(l) 1:r(x) 1:rel(l) 1:w(y) 1:end "
         "2:begin 2:acq(l) 2:r(x) 2:rel(l) 2:w(y) 2:end",
         1, 1, 0);
}
END_TEST

/* 000 (9): RBBLRBL transactions, atomic (view); not conflict-atomic: t2's first critical
 * section between t1's two orders the writes both ways. */
START_TEST(test_ex9) {
  expect("1:begin 1:acq(l) 1:w(x) 1:r(x) 1:rel(l) 1:acq(l) 1:w(x) 1:rel(l) 1:end "
         "2:begin 2:acq(l) 2:w(x) 2:r(x) 2:rel(l) 2:acq(l) 2:w(x) 2:rel(l) 2:end",
         0, 1, 0);
}
END_TEST

/* 000 (10): t: acq(l1) acq(l2) rel(l2) e1 e2 rel(l1), t': acq(l2) acq(l1) rel(l1) e3 rel(l2).
 * h12 ∩ held(e3) = ∅ and yet e3 cannot occur between e1 and e2 (the two threads can
 * deadlock). With e1, e2 writes of x and e3 a read of x, e3 in the middle would break
 * atomicity (000 UP1), so the set is atomic, with potential for deadlock. Without the
 * inverted acquisition, e3 can come in between. */
START_TEST(test_ex10) {
  expect("1:begin 1:acq(l1) 1:acq(l2) 1:rel(l2) 1:w(x) 1:w(x) 1:rel(l1) 1:end "
         "2:begin 2:acq(l2) 2:acq(l1) 2:rel(l1) 2:r(x) 2:rel(l2) 2:end",
         1, 1, 1);
  expect("1:begin 1:acq(l1) 1:acq(l2) 1:rel(l2) 1:w(x) 1:w(x) 1:rel(l1) 1:end "
         "2:begin 2:acq(l2) 2:r(x) 2:rel(l2) 2:end",
         0, 0, 0);
  /* the trace of the corpus (e1, e2, e3 on different variables) */
  expect("1:begin 1:acq(l1) 1:acq(l2) 1:rel(l2) 1:w(x) 1:w(y) 1:rel(l1) 1:end "
         "2:begin 2:acq(l2) 2:acq(l1) 2:rel(l1) 2:r(z) 2:rel(l2) 2:end",
         1, 1, 1);
}
END_TEST

/* 000 (13): W'(x) between W1(x) and W2(x) is equivalent to neither serial order: not atomic. */
#define EX13                                                                                 \
  "1:begin 1:acq(l) 1:r(x) 1:w(x) 1:rel(l) 1:w(x) 1:end 2:begin 2:acq(l) 2:w(x) 2:rel(l) 2:end"
START_TEST(test_ex13) {
  expect(EX13, 0, 0, 0);
  const size_t order[] = {0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 5, 6};
  expect_schedule(EX13, order, 0, 0);
}
END_TEST

/* 000 (15): "the atomic set of two transactions" (view); not conflict-atomic (t1 between
 * t2's critical sections orders the writes both ways). */
START_TEST(test_ex15) {
  expect("1:begin 1:acq(l) 1:w(x) 1:r(x) 1:r(x) 1:rel(l) 1:end "
         "2:begin 2:acq(l) 2:w(x) 2:rel(l) 2:acq(l) 2:w(x) 2:rel(l) 2:end",
         0, 1, 0);
}
END_TEST

/* 000 (16): every pair of t1: W(x) W(y), t2: R(x) W(z), t3: R(z) R(y) is atomic, the three
 * are not: the layout of (16) needs t1 < t2 < t3 < t1. */
#define EX16                                                                                 \
  "1:begin 1:w(x) 1:w(y) 1:end 2:begin 2:r(x) 2:w(z) 2:end 3:begin 3:r(z) 3:r(y) 3:end"
START_TEST(test_ex16) {
  expect(EX16, 0, 0, 0);
  expect("1:begin 1:w(x) 1:w(y) 1:end 2:begin 2:r(x) 2:w(z) 2:end", 1, 1, 0);
  expect("2:begin 2:r(x) 2:w(z) 2:end 3:begin 3:r(z) 3:r(y) 3:end", 1, 1, 0);
  expect("1:begin 1:w(x) 1:w(y) 1:end 3:begin 3:r(z) 3:r(y) 3:end", 1, 1, 0);
  /* W(x) R(x) W(z) R(z) R(y) W(y), with the BEGIN/END around */
  const size_t order[] = {0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 2, 3};
  expect_schedule(EX16, order, 0, 0);
}
END_TEST

/* ---- conventions ------------------------------------------------------------------------ */

START_TEST(test_units) {
  atom_event ev[MAXE];
  il_result r;
  /* a transaction, a lock block outside transactions, two unary events */
  size_t n = trace_of("1:begin 1:r(x) 1:begin 1:end 1:end 1:w(x) 1:acq(l) 1:r(y) 1:rel(l) "
                      "1:fence",
                      ev);
  ck_assert_int_eq(il_check(ev, n, NULL, &r), 0);
  ck_assert_uint_eq(r.n_units, 4);
  ck_assert_uint_eq(r.interleavings, 1);
  il_result_free(&r);
  /* a transaction inside a lock block, and a lock block overlapping a transaction: one unit
   * each; a transaction left open at the end */
  n = trace_of("1:acq(l) 1:begin 1:w(x) 1:end 1:rel(l) 1:begin 1:acq(m) 1:end 1:r(x) 1:rel(m) "
               "1:begin 1:r(x)",
               ev);
  ck_assert_int_eq(il_check(ev, n, NULL, &r), 0);
  ck_assert_uint_eq(r.n_units, 3);
  il_result_free(&r);
  /* FORK and JOIN inside a transaction belong to it (corpus aerodrome-fork-in-txn and
   * aerodrome-join-in-txn) */
  expect("1:begin 1:fork(2) 2:w(x) 1:r(x) 1:end", 0, 0, 0);
  expect("1:fork(2) 1:begin 1:w(x) 2:r(x) 1:join(2) 1:end", 0, 0, 0);
  /* the same without the transaction: unary units, always serializable */
  expect("1:fork(2) 2:w(x) 1:r(x)", 1, 1, 0);
  /* A lock block outside transactions is a transaction: t2's read cannot come between the
   * two writes, and the lock is not a conflict by itself (corpus aerodrome-lock-edges). */
  expect("1:acq(l) 1:w(x) 1:w(x) 1:rel(l) 2:acq(l) 2:r(x) 2:rel(l)", 1, 1, 0);
  expect("1:w(x) 1:w(x) 2:r(x)", 1, 1, 0); /* unary units: nothing to break */
  expect("1:begin 1:w(x) 1:w(x) 1:end 2:r(x)", 0, 0, 0);
  /* Events outside transactions are units of one event, so a cycle through one transaction
   * and events of another thread outside transactions is a violation: t2's read sees t1's
   * first write and t1's read sees t2's write, so t1 cannot be contiguous. (004 §2 groups
   * such events in multi-event non-transactional units but requires only transactions to be
   * contiguous in a serial trace, which gives the same serial traces and so the same verdict;
   * its shortcut "a cycle containing two or more transactions" would miss this one.) */
  expect("1:begin 1:w(x) 1:r(y) 1:end 2:r(x) 2:w(y)", 0, 0, 0);
  /* The last writes are part of a search state: two schedules can reach the same positions,
   * edges and reads-from with different last writes (found by comparing with the
   * enumeration). t2 runs after the FORK; its two writes between t1's read and write leave
   * t1's write last, which the only serial order (t1, then t2) cannot. */
  expect("1:begin 1:r(x) 1:fork(2) 1:w(x) 2:acq(l) 1:end 2:begin 2:w(x) 2:w(x) 2:end 2:rel(l)",
         0, 0, 0);
  /* accesses of one thread only, or never written, never break atomicity */
  expect("1:begin 1:w(x) 1:r(y) 1:w(x) 1:end 2:begin 2:r(y) 2:w(z) 2:r(z) 2:end", 1, 1, 0);
}
END_TEST

/* A unit that ends holding a lock for good: a serial schedule cannot put another thread's
 * acquisition of that lock after it (interleave.h, SERIAL SCHEDULES). */
#define HELD                                                                                 \
  "2:begin 2:acq(l) 2:rel(l) 1:begin 1:acq(l) 1:r(x) 2:w(x) 2:end"
START_TEST(test_held_to_the_end) {
  /* positions: 0 2:begin 1 2:acq 2 2:rel 3 1:begin 4 1:acq 5 1:r(x) 6 2:w(x) 7 2:end */
  const size_t observed[] = {0, 1, 2, 3, 4, 5, 6, 7};
  /* t1 first is infeasible (t2's ACQUIRE would wait forever); t2 first reorders w/r */
  expect_schedule(HELD, observed, 0, 0);
  /* and t1 acquiring first deadlocks */
  expect(HELD, 0, 0, 1);
}
END_TEST

START_TEST(test_deciders_errors) {
  atom_event ev[MAXE];
  size_t n = trace_of(EX7, ev);
  const size_t ok[] = {0, 1, 2, 3, 4, 5, 6};
  const size_t short_order[] = {0, 1, 2};
  const size_t out_of_order[] = {0, 2, 1, 3, 4, 5, 6};
  const size_t repeated[] = {0, 1, 2, 3, 4, 5, 5};
  const size_t out_of_range[] = {0, 1, 2, 3, 4, 5, 7};
  ck_assert_int_eq(il_schedule_conflict_serializable(ev, n, ok, n), 1);
  ck_assert_int_eq(il_schedule_conflict_serializable(ev, n, short_order, 3), -1);
  ck_assert_int_eq(il_schedule_view_serializable(ev, n, out_of_order, n), -1);
  ck_assert(strlen(il_error()) > 0);
  ck_assert_int_eq(il_schedule_view_serializable(ev, n, repeated, n), -1);
  ck_assert_int_eq(il_schedule_conflict_serializable(ev, n, out_of_range, n), -1);
  /* the empty trace */
  il_result r;
  ck_assert_int_eq(il_check(ev, 0, NULL, &r), 0);
  ck_assert_int_eq(r.conflict_atomic, 1);
  ck_assert_int_eq(r.view_atomic, 1);
  ck_assert_int_eq(r.potential_deadlock, 0);
  ck_assert_uint_eq(r.interleavings, 1);
  ck_assert_uint_eq(r.n_units, 0);
  il_result_free(&r);
  ck_assert_int_eq(il_schedule_view_serializable(ev, 0, NULL, 0), 1);
}
END_TEST

static void expect_ill_formed(const atom_event *ev, size_t n, const char *what) {
  il_result r;
  memset(&r, 0xa5, sizeof r);
  ck_assert_msg(il_check(ev, n, NULL, &r) == -1, "%s: accepted", what);
  ck_assert_msg(strlen(il_error()) > 0, "%s: no message", what);
  ck_assert_ptr_null(r.conflict_witness);
  ck_assert_ptr_null(r.view_witness);
  il_result_free(&r);
  size_t order[MAXE];
  for (size_t i = 0; i < n; i++) order[i] = i;
  ck_assert_int_eq(il_schedule_conflict_serializable(ev, n, order, n), -1);
}

START_TEST(test_ill_formed) {
  atom_event ev[MAXE];
  size_t n;
  n = trace_of("1:end", ev);
  expect_ill_formed(ev, n, "END without BEGIN");
  n = trace_of("1:begin 1:end 1:end", ev);
  expect_ill_formed(ev, n, "END without BEGIN (2)");
  n = trace_of("1:rel(l)", ev);
  expect_ill_formed(ev, n, "RELEASE not held");
  n = trace_of("1:acq(l) 2:rel(l)", ev);
  expect_ill_formed(ev, n, "RELEASE by another thread");
  n = trace_of("1:acq(l) 2:acq(l)", ev);
  expect_ill_formed(ev, n, "ACQUIRE held by another thread");
  n = trace_of("1:fork(2) 2:w(x) 1:join(2) 2:r(x)", ev);
  expect_ill_formed(ev, n, "event after JOIN");
  n = trace_of("2:w(x) 1:fork(2)", ev);
  expect_ill_formed(ev, n, "FORK of a running thread");
  n = trace_of("1:fork(1)", ev);
  expect_ill_formed(ev, n, "FORK of itself");
  n = trace_of("1:join(1)", ev);
  expect_ill_formed(ev, n, "JOIN of itself");
  n = trace_of("1:fork(2) 1:join(2) 3:join(2)", ev);
  expect_ill_formed(ev, n, "JOIN twice");
  n = trace_of("1:w(x) 1:commit(x)", ev);
  expect_ill_formed(ev, n, "COMMIT");
  n = trace_of("1:w(x)", ev);
  ev[0].kind = 42;
  expect_ill_formed(ev, n, "unknown kind");
  ev[0].kind = ATOM_WRITE;
  ev[0].flags = 1;
  expect_ill_formed(ev, n, "flags");
}
END_TEST

/* ---- deadlocks -------------------------------------------------------------------------- */

START_TEST(test_deadlock) {
  /* lock-order inversion */
  expect("1:acq(a) 1:acq(b) 1:rel(b) 1:rel(a) 2:acq(b) 2:acq(a) 2:rel(a) 2:rel(b)", 1, 1, 1);
  /* the same order in both threads: none */
  expect("1:acq(a) 1:acq(b) 1:rel(b) 1:rel(a) 2:acq(a) 2:acq(b) 2:rel(b) 2:rel(a)", 1, 1, 0);
  /* inverted, but under a common gate lock: none */
  expect("1:acq(g) 1:acq(a) 1:acq(b) 1:rel(b) 1:rel(a) 1:rel(g) "
         "2:acq(g) 2:acq(b) 2:acq(a) 2:rel(a) 2:rel(b) 2:rel(g)",
         1, 1, 0);
  /* re-entrant re-acquisition never blocks its holder */
  expect("1:acq(a) 1:acq(a) 1:rel(a) 1:rel(a) 2:acq(a) 2:rel(a)", 1, 1, 0);
  /* a parent joins, holding the lock its child needs */
  expect("1:fork(2) 2:acq(l) 2:rel(l) 1:acq(l) 1:join(2) 1:rel(l)", 1, 1, 1);
  /* a thread ends holding a lock another thread still has to take */
  expect("2:acq(l) 2:rel(l) 1:acq(l)", 1, 1, 1);
  /* three threads in a ring */
  expect("1:acq(a) 1:acq(b) 1:rel(b) 1:rel(a) 2:acq(b) 2:acq(c) 2:rel(c) 2:rel(b) "
         "3:acq(c) 3:acq(a) 3:rel(a) 3:rel(c)",
         1, 1, 1);
  /* deadlocking schedules are excluded from the verdicts: with the deadlock of (10) and
   * accesses that would break atomicity only on a schedule that cannot complete */
  expect("1:acq(a) 1:acq(b) 1:w(x) 1:rel(b) 1:w(x) 1:rel(a) 2:acq(b) 2:acq(a) 2:rel(a) "
         "2:r(x) 2:rel(b)",
         1, 1, 1);
}
END_TEST

/* ---- sync order ------------------------------------------------------------------------- */

START_TEST(test_sync_order) {
  /* a flag handoff: T2's acquire cannot run before T1's release, so T1 runs first */
  expect("1:begin 1:w(d) 1:w.rel(f) 1:end 2:begin 2:r.acq(f) 2:r(d) 2:end", 1, 1, 0);
  /* the same without flags: T2 reads f, T1 writes d and f, T2 reads d */
  expect("1:begin 1:w(d) 1:w(f) 1:end 2:begin 2:r(f) 2:r(d) 2:end", 0, 0, 0);
  /* only the acquire flag, or only the release flag: no order */
  expect("1:begin 1:w(d) 1:w(f) 1:end 2:begin 2:r.acq(f) 2:r(d) 2:end", 0, 0, 0);
  expect("1:begin 1:w(d) 1:w.rel(f) 1:end 2:begin 2:r(f) 2:r(d) 2:end", 0, 0, 0);
  /* an acquire before the release in the trace is not ordered after it */
  expect("2:begin 2:r.acq(f) 1:begin 1:w(d) 1:w.rel(f) 1:end 2:r(d) 2:end", 0, 0, 0);
  /* the acquire follows every earlier release of f, also one it does not read from */
  expect("1:begin 1:w(d) 1:w.rel(f) 1:end 3:w(f) 2:begin 2:r.acq(f) 2:r(d) 2:end", 1, 1, 0);
  /* a release by the acquiring thread itself orders nothing */
  expect("2:w.rel(f) 1:begin 1:w(d) 1:w(d) 1:end 2:begin 2:r.acq(f) 2:r(d) 2:end", 0, 0, 0);
  /* T2 waits for f while holding the lock T1 needs to release f: a deadlock */
  expect("1:acq(l) 1:w.rel(f) 1:rel(l) 2:acq(l) 2:r.acq(f) 2:rel(l)", 1, 1, 1);
  /* the schedules of a witness respect sync order (expect() checks witnesses against the
   * independent model); a barrier between two phases orders them */
  expect("1:begin 1:w(a) 1:end 1:r.acq(b) 1:w.rel(b) 2:begin 2:w(x) 2:w(y) 2:end 2:r.acq(b) "
         "2:w.rel(b) 1:r.acq(b) 2:r.acq(b) 1:begin 1:r(x) 1:r(y) 1:end 2:begin 2:r(a) 2:end",
         1, 1, 0);
  expect("1:begin 1:w(a) 1:end 1:r(b) 1:w(b) 2:begin 2:w(x) 2:w(y) 2:end 2:r(b) "
         "2:w(b) 1:r(b) 2:r(b) 1:begin 1:r(x) 1:r(y) 1:end 2:begin 2:r(a) 2:end",
         0, 0, 0);
}
END_TEST

/* ---- truncation --------------------------------------------------------------------------- */

START_TEST(test_truncation) {
  atom_event ev[MAXE];
  size_t n = trace_of("1:w(x) 1:w(y) 1:w(x) 2:r(x) 2:w(y) 2:r(y) 3:w(x) 3:r(y)", ev);
  il_result r;
  il_options opt = {.max_interleavings = 1};
  ck_assert_int_eq(il_check(ev, n, &opt, &r), 0);
  ck_assert_int_eq(r.truncated, 1);
  ck_assert_uint_eq(r.interleavings, 1);
  il_result_free(&r);
  opt.max_interleavings = 5;
  ck_assert_int_eq(il_check(ev, n, &opt, &r), 0);
  ck_assert_int_eq(r.truncated, 1);
  ck_assert_uint_eq(r.interleavings, 5);
  il_result_free(&r);
  ck_assert_int_eq(il_check(ev, n, NULL, &r), 0);
  ck_assert_int_eq(r.truncated, 0);
  ck_assert_uint_gt(r.interleavings, 5);
  size_t all = r.interleavings;
  il_result_free(&r);
  opt.max_interleavings = all; /* exactly enough */
  ck_assert_int_eq(il_check(ev, n, &opt, &r), 0);
  ck_assert_int_eq(r.truncated, 0);
  il_result_free(&r);
  /* one thread: one schedule, a bound of 1 is not hit */
  n = trace_of("1:begin 1:w(x) 1:r(x) 1:end", ev);
  opt.max_interleavings = 1;
  ck_assert_int_eq(il_check(ev, n, &opt, &r), 0);
  ck_assert_int_eq(r.truncated, 0);
  ck_assert_uint_eq(r.interleavings, 1);
  il_result_free(&r);
  /* a verdict of 0 found before the bound stands (with its witness) */
  n = trace_of(EX13, ev);
  opt.max_interleavings = 3;
  ck_assert_int_eq(il_check(ev, n, &opt, &r), 0);
  if (r.truncated) ck_assert_uint_eq(r.interleavings, 3);
  if (!r.conflict_atomic) ck_assert_ptr_nonnull(r.conflict_witness);
  il_result_free(&r);
}
END_TEST

/* ---- random traces ------------------------------------------------------------------------ */

/* A random trace (rt_params_random) with at most @p max_threads threads; @p locky: more lock
 * operations (one case in three), which makes deadlocks more frequent. */
static void random_trace(uint64_t seed, size_t max_events, unsigned max_threads, int locky,
                         int sync, atom_event **ev, size_t *n) {
  rt_params p;
  rt_params_random(&p, seed, max_events);
  if (p.threads > max_threads) p.threads = max_threads;
  if (locky && seed % 3 == 0 && !p.twopl) {
    p.locks = 2;
    p.p_lock = 0.35;
  }
  if (sync) rt_params_sync(&p, seed);
  ck_assert_int_eq(rt_generate(&p, seed, ev, n), 0);
  ck_assert_uint_le(*n, MAXE);
}

/* Properties on random traces of 3 threads at most and about 14 events (up to 14 drawn, plus
 * the ENDs and RELEASEs that close them); the second pass (sync) has synchronizing accesses
 * (rt_params_sync). */
START_TEST(test_random_properties) {
  unsigned long long cases = env_number("ATOM_INTERLEAVE_CASES", under_valgrind() ? 150 : 3000);
  unsigned long long seed0 = env_number("ATOM_INTERLEAVE_SEED", 1);
  for (int sync = 0; sync < 2; sync++) {
    size_t not_conflict = 0, not_view = 0, deadlocks = 0, view_only = 0, ordered = 0, synced = 0;
    for (unsigned long long c = 0; c < cases; c++) {
      uint64_t seed = seed0 + c;
      atom_event *ev;
      size_t n;
      random_trace(seed, 14, 3, 1, sync, &ev, &n);
      model m;
      model_build(&m, ev, n);
      il_result r;
      int rc = il_check(ev, n, NULL, &r);
      if (rc != 0 || r.truncated || (r.conflict_atomic && !r.view_atomic)) {
        fprintf(stderr, "seed %llu: rc %d (%s) truncated %d conflict %d view %d\n",
                (unsigned long long)seed, rc, il_error(), r.truncated, r.conflict_atomic,
                r.view_atomic);
        dump(ev, n);
        ck_abort_msg("random trace failed; seed %llu", (unsigned long long)seed);
      }
      not_conflict += !r.conflict_atomic;
      not_view += !r.view_atomic;
      view_only += !r.conflict_atomic && r.view_atomic;
      deadlocks += (size_t)r.potential_deadlock;
      if (sync) { /* sync order only removes schedules: the trace without flags is no more atomic */
        atom_event plain[MAXE];
        for (size_t i = 0; i < n; i++) plain[i] = ev[i], plain[i].flags = 0;
        il_result rp;
        ck_assert_int_eq(il_check(plain, n, NULL, &rp), 0);
        if (rp.conflict_atomic > r.conflict_atomic || rp.view_atomic > r.view_atomic) {
          dump(ev, n);
          ck_abort_msg("flags made a trace less atomic; seed %llu", (unsigned long long)seed);
        }
        ordered += rp.conflict_atomic < r.conflict_atomic || rp.view_atomic < r.view_atomic;
        synced += sync_edge(ev, n);
        il_result_free(&rp);
      }
      if (!r.conflict_atomic) check_witness(&m, r.conflict_witness, r.n_conflict_witness, 0);
      if (!r.view_atomic) check_witness(&m, r.view_witness, r.n_view_witness, 1);

      /* The observed trace is one of the schedules; a few random ones too. */
      size_t order[MAXE];
      rt_rng rng;
      rt_rng_seed(&rng, seed * 7919u);
      for (int s = 0; s < 4; s++) {
        if (s == 0) {
          for (size_t i = 0; i < n; i++) order[i] = i;
        } else if (!random_schedule(&m, &rng, order)) {
          continue;
        }
        int cs = il_schedule_conflict_serializable(ev, n, order, n);
        int vs = il_schedule_view_serializable(ev, n, order, n);
        ck_assert(cs >= 0 && vs >= 0);
        int ok = (!cs || vs) && (cs || !r.conflict_atomic) && (vs || !r.view_atomic);
        if (ok && !lock_held_at_end(ev, n)) {
          atom_event tx[3 * MAXE];
          size_t k = units_as_transactions(&m, order, tx);
          int ref = ref_conflict_serializable(tx, k, NULL);
          ck_assert_msg(ref >= 0, "reference: %s", ref_error());
          ok = ref == cs;
        }
        if (ok && s == 1) { /* the trace observed in this order has the same verdicts */
          atom_event re[MAXE];
          reorder(ev, n, order, re);
          il_result r2;
          ok = il_check(re, n, NULL, &r2) == 0 &&
               (flagged(ev, n) ? same_or_fewer(&r2, r.conflict_atomic, r.view_atomic)
                               : r2.conflict_atomic == r.conflict_atomic &&
                                     r2.view_atomic == r.view_atomic &&
                                     r2.potential_deadlock == r.potential_deadlock);
          il_result_free(&r2);
        }
        if (ok && s < 2 && serial_orders(&m) <= NAIVE_LIMIT)
          ok = naive_serializable(&m, order, 0) == cs && naive_serializable(&m, order, 1) == vs;
        if (!ok) {
          fprintf(stderr, "seed %llu schedule %d: conflict %d view %d; atomic %d %d\n",
                  (unsigned long long)seed, s, cs, vs, r.conflict_atomic, r.view_atomic);
          dump(ev, n);
          ck_abort_msg("schedule verdicts inconsistent; seed %llu", (unsigned long long)seed);
        }
      }
      il_result_free(&r);
      free(ev);
    }
    /* the generator must exercise every outcome */
    if (cases >= 1000) {
      ck_assert_uint_gt(not_conflict, cases / 20);
      ck_assert_uint_gt(not_view, cases / 20);
      ck_assert_uint_gt(view_only, 0);
      ck_assert_uint_gt(deadlocks, 0);
      ck_assert_uint_gt(cases - not_conflict, cases / 20);
      if (sync) { /* sync order really occurs, and matters */
        ck_assert_uint_gt(synced, cases / 10);
        ck_assert_uint_gt(ordered, 0);
      }
    }
    if (sync)
      fprintf(stderr,
              "interleave, %llu traces with sync accesses: %zu not conflict-atomic, %zu not "
              "view-atomic, %zu potential deadlocks, %zu with sync order, %zu atomic only "
              "thanks to it\n",
              cases, not_conflict, not_view, deadlocks, synced, ordered);
  }
}
END_TEST

/* il_check against the enumeration of every schedule, event by event, with no reduction:
 * the three verdicts must be equal; on the same seeds without, then with synchronizing
 * accesses. */
START_TEST(test_random_exhaustive) {
  unsigned long long cases = env_number("ATOM_INTERLEAVE_CASES", under_valgrind() ? 150 : 3000);
  unsigned long long seed0 = env_number("ATOM_INTERLEAVE_SEED", 1);
  cases = cases / 3 + 1;
  for (unsigned long long c = 0; c < 2 * cases; c++) {
    uint64_t seed = 1000003u + seed0 + c % cases;
    atom_event *ev;
    size_t n;
    random_trace(seed, 12, c % 4 == 0 ? 2 : 3, 1, c >= cases, &ev, &n);
    model m;
    model_build(&m, ev, n);
    if (multinomial(m.len, m.T) > MERGE_LIMIT) { /* too long to enumerate one by one */
      free(ev);
      continue;
    }
    naive_all *na = calloc(1, sizeof *na);
    ck_assert_ptr_nonnull(na);
    na->m = &m;
    na->conflict_atomic = na->view_atomic = 1;
    mstate s;
    mstate_init(&m, &s);
    naive_all_rec(na, &s);
    il_result r;
    ck_assert_int_eq(il_check(ev, n, NULL, &r), 0);
    if (r.conflict_atomic != na->conflict_atomic || r.view_atomic != na->view_atomic ||
        r.potential_deadlock != na->deadlock || r.interleavings > na->complete ||
        r.truncated) {
      fprintf(stderr, "seed %llu: il_check %d %d %d (%zu); enumeration %d %d %d (%zu)\n",
              (unsigned long long)seed, r.conflict_atomic, r.view_atomic, r.potential_deadlock,
              r.interleavings, na->conflict_atomic, na->view_atomic, na->deadlock, na->complete);
      dump(ev, n);
      ck_abort_msg("il_check differs from the enumeration; seed %llu", (unsigned long long)seed);
    }
    il_result_free(&r);
    free(na);
    free(ev);
  }
}
END_TEST

Suite *atom_test_suite_interleave(void) {
  Suite *s = suite_create("interleave");
  TCase *ex = tcase_create("examples");
  tcase_add_test(ex, test_corpus);
  tcase_add_test(ex, test_ex1);
  tcase_add_test(ex, test_ex3);
  tcase_add_test(ex, test_ex4);
  tcase_add_test(ex, test_ex5);
  tcase_add_test(ex, test_ex6);
  tcase_add_test(ex, test_ex7);
  tcase_add_test(ex, test_ex8);
  tcase_add_test(ex, test_ex9);
  tcase_add_test(ex, test_ex10);
  tcase_add_test(ex, test_ex13);
  tcase_add_test(ex, test_ex15);
  tcase_add_test(ex, test_ex16);
  suite_add_tcase(s, ex);
  TCase *cv = tcase_create("conventions");
  tcase_add_test(cv, test_units);
  tcase_add_test(cv, test_held_to_the_end);
  tcase_add_test(cv, test_deciders_errors);
  tcase_add_test(cv, test_ill_formed);
  tcase_add_test(cv, test_deadlock);
  tcase_add_test(cv, test_sync_order);
  tcase_add_test(cv, test_truncation);
  suite_add_tcase(s, cv);
  TCase *rnd = tcase_create("random");
  tcase_set_timeout(rnd, 600);
  tcase_add_test(rnd, test_random_properties);
  tcase_add_test(rnd, test_random_exhaustive);
  suite_add_tcase(s, rnd);
  return s;
}
