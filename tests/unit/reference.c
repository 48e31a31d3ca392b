/* Brute-force conflict-serializability reference (see reference.h). Clarity over speed:
 * every relation is materialized as bit sets and every question is answered by a closure. */
#include "reference.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

static _Thread_local char ref_msg[256];

const char *ref_error(void) { return ref_msg; }

static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ref_msg, sizeof ref_msg, fmt, ap);
  va_end(ap);
  return code;
}

/* ---- bit sets ---------------------------------------------------------------------------- */

typedef uint64_t word;
#define WBITS 64u

static size_t nwords(size_t bits) { return (bits + WBITS - 1) / WBITS; }
static int bit_get(const word *s, size_t i) { return (int)((s[i / WBITS] >> (i % WBITS)) & 1u); }
static void bit_set(word *s, size_t i) { s[i / WBITS] |= (word)1 << (i % WBITS); }
static void bits_or(word *dst, const word *src, size_t nw) {
  for (size_t k = 0; k < nw; k++) dst[k] |= src[k];
}

/* ---- the analyzed trace ------------------------------------------------------------------ */

struct ref_trace {
  size_t n; /* events given */
  /* kept (normalized) events, in trace order */
  size_t m;
  atom_event *kev;
  size_t *kidx; /* original index */
  size_t *ktxn; /* transaction */
  /* transactions */
  size_t ntx, txcap;
  size_t *tx_begin;    /* original index of the first event */
  uint64_t *tx_thread; /* thread key */
  size_t *tx_end;      /* original index at which it is complete; NONE if open at the end */
  /* edge_time[a * ntx + b]: the smallest index i at which the prefix ev[0..i] already has
   * a ≤Txn b (a != b); NONE if never */
  size_t *edge_time;
  /* verdicts */
  int serializable;
  size_t first_cycle, first_closed;
  int has_cycle;
  ref_cycle cycle;
};

void ref_trace_free(ref_trace *rt) {
  if (!rt) return;
  free(rt->kev);
  free(rt->kidx);
  free(rt->ktxn);
  free(rt->tx_begin);
  free(rt->tx_thread);
  free(rt->tx_end);
  free(rt->edge_time);
  free(rt);
}

/* ---- step 1: normalization and validation ------------------------------------------------- */

typedef struct thr {
  uint64_t key;
  unsigned depth;
  size_t txn; /* open outermost transaction, NONE if none */
  int joined;
} thr;

typedef struct lck {
  uint64_t key;
  uint64_t owner;
  unsigned count; /* 0 = free */
} lck;

typedef struct norm {
  thr *th;
  size_t nth;
  lck *lk;
  size_t nlk;
} norm;

static thr *find_thread(norm *s, uint64_t key) {
  for (size_t i = 0; i < s->nth; i++)
    if (s->th[i].key == key) return &s->th[i];
  return NULL;
}

/* Threads and locks can be at most one per event, so arrays of n entries never overflow. */
static thr *add_thread(norm *s, uint64_t key) {
  thr *t = &s->th[s->nth++];
  t->key = key;
  t->depth = 0;
  t->txn = NONE;
  t->joined = 0;
  return t;
}

static lck *get_lock(norm *s, uint64_t key) {
  for (size_t i = 0; i < s->nlk; i++)
    if (s->lk[i].key == key) return &s->lk[i];
  lck *l = &s->lk[s->nlk++];
  l->key = key;
  l->owner = 0;
  l->count = 0;
  return l;
}

static size_t new_txn(ref_trace *rt, size_t begin, uint64_t thread) {
  size_t id = rt->ntx++;
  rt->tx_begin[id] = begin;
  rt->tx_thread[id] = thread;
  rt->tx_end[id] = NONE;
  return id;
}

static void keep(ref_trace *rt, const atom_event *e, size_t i, size_t txn) {
  rt->kev[rt->m] = *e;
  rt->kidx[rt->m] = i;
  rt->ktxn[rt->m] = txn;
  rt->m++;
}

static int normalize(ref_trace *rt, const atom_event *ev, size_t n) {
  norm s;
  /* +1: a JOIN or FORK can introduce a second thread in one event */
  s.th = calloc(2 * n + 1, sizeof *s.th);
  s.lk = calloc(n + 1, sizeof *s.lk);
  s.nth = s.nlk = 0;
  if (!s.th || !s.lk) {
    free(s.th);
    free(s.lk);
    return REF_ENOMEM;
  }
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    const atom_event *e = &ev[i];
    if (e->kind < ATOM_READ || e->kind > ATOM_COMMIT || e->kind == ATOM_COMMIT) {
      rc = fail(REF_EUNSUPPORTED, "event %zu: kind %u not supported", i, (unsigned)e->kind);
      break;
    }
    thr *t = find_thread(&s, e->thread);
    if (!t) t = add_thread(&s, e->thread); /* first seen without FORK: a root */
    if (t->joined) {
      rc = fail(REF_EILLFORMED, "event %zu: thread %llu was joined", i,
                (unsigned long long)e->thread);
      break;
    }
    int kept = 1;
    switch (e->kind) {
    case ATOM_BEGIN:
      if (t->depth++ == 0) t->txn = new_txn(rt, i, e->thread);
      else kept = 0;
      break;
    case ATOM_END:
      if (t->depth == 0) {
        rc = fail(REF_EILLFORMED, "event %zu: END without BEGIN", i);
        break;
      }
      if (--t->depth == 0) rt->tx_end[t->txn] = i; /* kept below, in t->txn */
      else kept = 0;
      break;
    case ATOM_ACQUIRE: {
      lck *l = get_lock(&s, e->target);
      if (l->count > 0 && l->owner != e->thread) {
        rc = fail(REF_EILLFORMED, "event %zu: lock %llu held by another thread", i,
                  (unsigned long long)e->target);
        break;
      }
      if (l->count++ > 0) kept = 0; /* re-entrant */
      l->owner = e->thread;
      break;
    }
    case ATOM_RELEASE: {
      lck *l = get_lock(&s, e->target);
      if (l->count == 0 || l->owner != e->thread) {
        rc = fail(REF_EILLFORMED, "event %zu: lock %llu not held", i,
                  (unsigned long long)e->target);
        break;
      }
      if (--l->count > 0) kept = 0; /* inner release */
      break;
    }
    case ATOM_FORK:
      if (e->target == e->thread || find_thread(&s, e->target)) {
        rc = fail(REF_EILLFORMED, "event %zu: FORK of an existing thread", i);
        break;
      }
      add_thread(&s, e->target); /* s.th never moves: t stays valid */
      break;
    case ATOM_JOIN: {
      thr *u = find_thread(&s, e->target);
      if (e->target == e->thread || (u && u->joined)) {
        rc = fail(REF_EILLFORMED, "event %zu: bad JOIN", i);
        break;
      }
      if (!u) u = add_thread(&s, e->target);
      u->joined = 1;
      break;
    }
    default: /* READ, WRITE, FENCE */
      break;
    }
    if (rc || !kept) continue;
    size_t txn;
    if (e->kind == ATOM_BEGIN || e->kind == ATOM_END || t->depth > 0) {
      txn = t->txn;
      if (e->kind == ATOM_END) t->txn = NONE;
    } else {
      txn = new_txn(rt, i, e->thread); /* unary transaction: complete at once */
      rt->tx_end[txn] = i;
    }
    keep(rt, e, i, txn);
  }
  free(s.th);
  free(s.lk);
  return rc;
}

/* ---- step 2: conflicts (003 §2) and ≤CHB ------------------------------------------------- */

static int is_access(uint32_t k) { return k == ATOM_READ || k == ATOM_WRITE; }

/* e occurs before f in the trace. */
static int conflicting(const atom_event *e, const atom_event *f) {
  if (e->thread == f->thread) return 1;                                  /* (a) */
  if (e->kind == ATOM_FORK && f->thread == e->target) return 1;          /* (b) */
  if (f->kind == ATOM_JOIN && e->thread == f->target) return 1;          /* (c) */
  if (is_access(e->kind) && is_access(f->kind) && e->target == f->target &&
      !(e->kind == ATOM_READ && f->kind == ATOM_READ))
    return 1;                                                            /* (d) */
  if (e->kind == ATOM_RELEASE && f->kind == ATOM_ACQUIRE && e->target == f->target)
    return 1;                                                            /* (e) */
  return 0;
}

/* reach[a] = { b : kept event a ≤CHB kept event b }. Conflicts only point forward in the
 * trace, so the closure is built from the last event backwards: reach[a] = {a} ∪ the union
 * of reach[b] over the b > a that conflict with a. */
static int compute_edges(ref_trace *rt) {
  size_t m = rt->m, nw = nwords(m ? m : 1), ntx = rt->ntx;
  word *reach = calloc(m * nw + 1, sizeof *reach);
  rt->edge_time = malloc((ntx * ntx + 1) * sizeof *rt->edge_time);
  if (!reach || !rt->edge_time) {
    free(reach);
    return REF_ENOMEM;
  }
  for (size_t a = m; a-- > 0;) {
    word *ra = reach + a * nw;
    bit_set(ra, a);
    for (size_t b = a + 1; b < m; b++)
      if (conflicting(&rt->kev[a], &rt->kev[b])) bits_or(ra, reach + b * nw, nw);
  }
  for (size_t k = 0; k < ntx * ntx; k++) rt->edge_time[k] = NONE;
  /* Lift to transactions: a's transaction ≤Txn b's from the moment b has happened. */
  for (size_t a = 0; a < m; a++)
    for (size_t b = a; b < m; b++) {
      size_t ta = rt->ktxn[a], tb = rt->ktxn[b];
      if (ta == tb || !bit_get(reach + a * nw, b)) continue;
      size_t *slot = &rt->edge_time[ta * ntx + tb];
      if (rt->kidx[b] < *slot) *slot = rt->kidx[b];
    }
  free(reach);
  return 0;
}

/* ---- step 3: cycles --------------------------------------------------------------------- */

/* Is there a cycle among the transactions in @p allowed, using the edges present at prefix
 * @p i? Transitive closure (Warshall) restricted to allowed nodes, then look for a node that
 * reaches itself. @p r is scratch of ntx rows. */
static int cycle_among(const ref_trace *rt, size_t i, const word *allowed, word *r) {
  size_t ntx = rt->ntx, nw = nwords(ntx);
  memset(r, 0, ntx * nw * sizeof *r);
  for (size_t a = 0; a < ntx; a++) {
    if (!bit_get(allowed, a)) continue;
    for (size_t b = 0; b < ntx; b++)
      if (bit_get(allowed, b) && rt->edge_time[a * ntx + b] <= i) bit_set(r + a * nw, b);
  }
  for (size_t k = 0; k < ntx; k++)
    for (size_t a = 0; a < ntx; a++)
      if (bit_get(r + a * nw, k)) bits_or(r + a * nw, r + k * nw, nw);
  for (size_t a = 0; a < ntx; a++)
    if (bit_get(r + a * nw, a)) return 1;
  return 0;
}

static int complete_at(const ref_trace *rt, size_t t, size_t i) {
  return rt->tx_end[t] != NONE && rt->tx_end[t] <= i;
}

static int active_at(const ref_trace *rt, size_t t, size_t i) {
  return rt->tx_begin[t] <= i && !complete_at(rt, t, i);
}

/* A cycle at prefix i with at most one transaction active at i. */
static int closed_cycle_at(const ref_trace *rt, size_t i, word *allowed, word *r) {
  size_t ntx = rt->ntx, nw = nwords(ntx);
  memset(allowed, 0, nw * sizeof *allowed);
  for (size_t t = 0; t < ntx; t++)
    if (complete_at(rt, t, i)) bit_set(allowed, t);
  if (cycle_among(rt, i, allowed, r)) return 1;
  for (size_t a = 0; a < ntx; a++) {
    if (!active_at(rt, a, i)) continue;
    bit_set(allowed, a);
    int found = cycle_among(rt, i, allowed, r);
    allowed[a / WBITS] &= ~((word)1 << (a % WBITS));
    if (found) return 1;
  }
  return 0;
}

/* A shortest cycle of the whole graph, by breadth-first search from every node. */
static void find_cycle(ref_trace *rt) {
  size_t ntx = rt->ntx, best_len = NONE;
  size_t *parent = malloc((ntx + 1) * sizeof *parent);
  size_t *queue = malloc((ntx + 1) * sizeof *queue);
  size_t *best = malloc((ntx + 1) * sizeof *best);
  if (!parent || !queue || !best) goto out;
  for (size_t s = 0; s < ntx; s++) {
    for (size_t k = 0; k < ntx; k++) parent[k] = NONE;
    size_t head = 0, tail = 0;
    queue[tail++] = s;
    parent[s] = s;
    size_t last = NONE; /* predecessor of s on the cycle */
    while (head < tail && last == NONE) {
      size_t a = queue[head++];
      for (size_t b = 0; b < ntx; b++) {
        if (rt->edge_time[a * ntx + b] == NONE) continue;
        if (b == s) {
          last = a;
          break;
        }
        if (parent[b] != NONE) continue;
        parent[b] = a;
        queue[tail++] = b;
      }
    }
    if (last == NONE) continue;
    size_t len = 1;
    for (size_t v = last; v != s; v = parent[v]) len++;
    if (len >= best_len) continue;
    best_len = len;
    size_t k = len;
    for (size_t v = last; v != s; v = parent[v]) best[--k] = v;
    best[0] = s;
  }
  if (best_len == NONE) goto out;
  rt->has_cycle = 1;
  rt->cycle.n = best_len < REF_MAX_CYCLE ? best_len : REF_MAX_CYCLE;
  for (size_t k = 0; k < rt->cycle.n; k++) {
    rt->cycle.begin[k] = rt->tx_begin[best[k]];
    rt->cycle.thread[k] = rt->tx_thread[best[k]];
  }
out:
  free(parent);
  free(queue);
  free(best);
}

static int decide(ref_trace *rt) {
  size_t ntx = rt->ntx, nw = nwords(ntx ? ntx : 1), n = rt->n;
  word *allowed = calloc(nw, sizeof *allowed);
  word *all = calloc(nw, sizeof *all);
  word *r = calloc(ntx * nw + 1, sizeof *r);
  unsigned char *changes = calloc(n + 1, 1);
  if (!allowed || !all || !r || !changes) {
    free(allowed);
    free(all);
    free(r);
    free(changes);
    return REF_ENOMEM;
  }
  for (size_t t = 0; t < ntx; t++) {
    bit_set(all, t);
    if (rt->tx_end[t] != NONE) changes[rt->tx_end[t]] = 1;
  }
  for (size_t k = 0; k < ntx * ntx; k++)
    if (rt->edge_time[k] != NONE) changes[rt->edge_time[k]] = 1;
  /* Both properties only grow with the prefix, so the first prefix where each holds is
   * found by trying, in order, the prefixes where the graph or the completion changed. */
  rt->first_cycle = rt->first_closed = n;
  for (size_t i = 0; i < n && rt->first_cycle == n; i++)
    if (changes[i] && cycle_among(rt, i, all, r)) rt->first_cycle = i;
  for (size_t i = rt->first_cycle; i < n && rt->first_closed == n; i++)
    if (changes[i] && closed_cycle_at(rt, i, allowed, r)) rt->first_closed = i;
  /* The whole trace: open transactions closed at the end adds no edge. */
  rt->serializable = !(n > 0 && cycle_among(rt, n - 1, all, r));
  free(allowed);
  free(all);
  free(r);
  free(changes);
  if (!rt->serializable) find_cycle(rt);
  return 0;
}

/* ---- public ------------------------------------------------------------------------------ */

int ref_trace_build(const atom_event *ev, size_t n, ref_trace **out) {
  *out = NULL;
  ref_msg[0] = '\0';
  ref_trace *rt = calloc(1, sizeof *rt);
  if (!rt) return REF_ENOMEM;
  rt->n = n;
  size_t cap = n + 1;
  rt->kev = malloc(cap * sizeof *rt->kev);
  rt->kidx = malloc(cap * sizeof *rt->kidx);
  rt->ktxn = malloc(cap * sizeof *rt->ktxn);
  rt->tx_begin = malloc(cap * sizeof *rt->tx_begin);
  rt->tx_thread = malloc(cap * sizeof *rt->tx_thread);
  rt->tx_end = malloc(cap * sizeof *rt->tx_end);
  int rc = REF_ENOMEM;
  if (rt->kev && rt->kidx && rt->ktxn && rt->tx_begin && rt->tx_thread && rt->tx_end) {
    rc = normalize(rt, ev, n);
    if (rc == 0) rc = compute_edges(rt);
    if (rc == 0) rc = decide(rt);
  }
  if (rc < 0) {
    ref_trace_free(rt);
    return rc;
  }
  *out = rt;
  return 0;
}

int ref_trace_serializable(const ref_trace *rt) { return rt->serializable; }

int ref_trace_cycle(const ref_trace *rt, ref_cycle *out) {
  if (!rt->has_cycle) return 0;
  *out = rt->cycle;
  return 1;
}

size_t ref_trace_first_cycle(const ref_trace *rt) { return rt->first_cycle; }
size_t ref_trace_first_closed_cycle(const ref_trace *rt) { return rt->first_closed; }
size_t ref_trace_txn_count(const ref_trace *rt) { return rt->ntx; }

long ref_trace_txn_at(const ref_trace *rt, size_t begin_index) {
  for (size_t t = 0; t < rt->ntx; t++)
    if (rt->tx_begin[t] == begin_index) return (long)t;
  return -1;
}

long ref_trace_event_txn(const ref_trace *rt, size_t index) {
  for (size_t k = 0; k < rt->m; k++)
    if (rt->kidx[k] == index) return (long)rt->ktxn[k];
  return -1;
}

int ref_trace_txn_before(const ref_trace *rt, size_t a, size_t b) {
  if (a >= rt->ntx || b >= rt->ntx || a == b) return 0;
  return rt->edge_time[a * rt->ntx + b] != NONE;
}

int ref_conflict_serializable(const atom_event *ev, size_t n, ref_cycle *cycle_out) {
  ref_trace *rt;
  int rc = ref_trace_build(ev, n, &rt);
  if (rc < 0) return rc;
  int ok = rt->serializable;
  if (!ok && cycle_out) ref_trace_cycle(rt, cycle_out);
  ref_trace_free(rt);
  return ok;
}
