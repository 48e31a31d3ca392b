/* Thread periods with a fork/join and sync happens-before order (see periods.h). */
#include "support/periods.h"

#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "support/assert.h"

void atom__periods_init(atom__periods *ps, atom__mem *mem) {
  memset(ps, 0, sizeof *ps);
  ps->mem = mem;
}

void atom__periods_destroy(atom__periods *ps) {
  atom__mem_free(ps->mem, ps->p, ps->cap * sizeof *ps->p);
  atom__mem_free(ps->mem, ps->pool, ps->pool_cap * sizeof *ps->pool);
  atom__mem_free(ps->mem, ps->cur, ps->cur_cap * sizeof *ps->cur);
  atom__mem_free(ps->mem, ps->cut, ps->cut_cap * sizeof *ps->cut);
  for (size_t i = 0; i < ps->rel_cap; i++)
    atom__mem_free(ps->mem, ps->rel[i].vc, ps->rel[i].cap * sizeof *ps->rel[i].vc);
  atom__mem_free(ps->mem, ps->rel, ps->rel_cap * sizeof *ps->rel);
  atom__mem_free(ps->mem, ps->tmp, ps->tmp_cap * sizeof *ps->tmp);
  atom__mem_free(ps->mem, ps->touched, ps->touched_cap * sizeof *ps->touched);
  memset(ps, 0, sizeof *ps);
}

static int ensure_thread(atom__periods *ps, uint32_t t) {
  if (t < ps->cur_cap && t < ps->cut_cap) return 0;
  size_t old = ps->cur_cap, old_cut = ps->cut_cap;
  if (ATOM__GROW(ps->mem, ps->cur, ps->cur_cap, (size_t)t + 1)) return ATOM_ENOMEM;
  for (size_t i = old; i < ps->cur_cap; i++) ps->cur[i] = ATOM__PERIOD_NONE;
  if (ATOM__GROW(ps->mem, ps->cut, ps->cut_cap, (size_t)t + 1)) return ATOM_ENOMEM;
  for (size_t i = old_cut; i < ps->cut_cap; i++) ps->cut[i] = 0;
  return 0;
}

uint32_t atom__periods_sparse_get(const atom__periods *ps, const atom__period *q, uint32_t u) {
  const uint32_t *pairs = ps->pool + q->vc_off;
  uint32_t lo = 0, hi = q->vc_len & ~ATOM__PERIOD_SPARSE;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (pairs[2 * mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return lo < (q->vc_len & ~ATOM__PERIOD_SPARSE) && pairs[2 * lo] == u ? pairs[2 * lo + 1] : 0;
}

/* Components stored (dense: with the zeros) and 1 + the highest thread they may name. */
static uint32_t entries(const atom__period *q) { return q->vc_len & ~ATOM__PERIOD_SPARSE; }
static uint32_t extent(const atom__periods *ps, const atom__period *q) {
  uint32_t n = entries(q);
  if (!(q->vc_len & ATOM__PERIOD_SPARSE)) return n;
  return n ? ps->pool[q->vc_off + 2 * (n - 1)] + 1 : 0;
}

/* tmp[k] := max(tmp[k], v), noting k when it becomes nonzero. */
static void scatter(atom__periods *ps, uint32_t k, uint32_t v, size_t *nt) {
  if (!v) return;
  if (!ps->tmp[k]) ps->touched[(*nt)++] = k;
  if (v > ps->tmp[k]) ps->tmp[k] = v;
}

/* Scatter q's snapshot, and q itself, into tmp. */
static void scatter_period(atom__periods *ps, const atom__period *q, size_t *nt) {
  const uint32_t *qv = ps->pool + q->vc_off;
  uint32_t n = entries(q);
  if (q->vc_len & ATOM__PERIOD_SPARSE)
    for (uint32_t i = 0; i < n; i++) scatter(ps, qv[2 * i], qv[2 * i + 1], nt);
  else
    for (uint32_t k = 0; k < n; k++) scatter(ps, k, qv[k], nt);
  scatter(ps, q->thread, q->ordinal + 1, nt);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Append a period of thread t whose snapshot is the component-wise maximum of the snapshots of
 * a and b (either may be NONE) and of the clock xv[0 .. xlen), with component `self` of a
 * raised to cover a itself and component of b's thread raised to cover b. The maximum is
 * gathered in the dense scratch tmp (only its nonzero components are visited) and stored dense
 * or sparse, whichever periods.h says. Room is reserved first, so failure changes nothing. */
static int add_period_x(atom__periods *ps, uint32_t t, uint32_t ordinal, uint32_t a, uint32_t b,
                        const uint32_t *xv, uint32_t xlen, uint32_t *out) {
  size_t ext = xlen, cnt = xlen;
  const uint32_t from[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    if (from[i] == ATOM__PERIOD_NONE) continue;
    const atom__period *q = &ps->p[from[i]];
    if (extent(ps, q) > ext) ext = extent(ps, q);
    if ((size_t)q->thread + 1 > ext) ext = (size_t)q->thread + 1;
    cnt += (size_t)entries(q) + 1;
  }
  if (ps->n >= UINT32_MAX - 1) return ATOM_ENOMEM;
  if (ATOM__GROW(ps->mem, ps->p, ps->cap, ps->n + 1) ||
      ATOM__GROW(ps->mem, ps->tmp, ps->tmp_cap, ext + 1) || /* grown: zero, as tmp must be */
      ATOM__GROW(ps->mem, ps->touched, ps->touched_cap, cnt + 1))
    return ATOM_ENOMEM;
  size_t nt = 0;
  for (uint32_t k = 0; k < xlen; k++) scatter(ps, k, xv[k], &nt);
  for (int i = 0; i < 2; i++)
    if (from[i] != ATOM__PERIOD_NONE) scatter_period(ps, &ps->p[from[i]], &nt);
  uint32_t hi = 0;
  for (size_t i = 0; i < nt; i++)
    if (ps->touched[i] + 1 > hi) hi = ps->touched[i] + 1;
  int dense = hi <= 4 * nt + 16;
  size_t words = dense ? hi : 2 * nt;
  int rc = 0;
  if (ps->pool_len + words >= UINT32_MAX ||
      ATOM__GROW(ps->mem, ps->pool, ps->pool_cap, ps->pool_len + words + 1)) {
    rc = ATOM_ENOMEM;
  } else {
    uint32_t *vc = ps->pool + ps->pool_len;
    if (dense) {
      memcpy(vc, ps->tmp, hi * sizeof *vc); /* tmp is zero past the touched components */
    } else {
      qsort(ps->touched, nt, sizeof *ps->touched, cmp_u32);
      for (size_t i = 0; i < nt; i++) {
        vc[2 * i] = ps->touched[i];
        vc[2 * i + 1] = ps->tmp[ps->touched[i]];
      }
    }
  }
  for (size_t i = 0; i < nt; i++) ps->tmp[ps->touched[i]] = 0;
  if (rc) return rc;
  /* a period follows its own thread's earlier ones: ordinals grow by one along a thread */
  ATOM__ASSERT(a == ATOM__PERIOD_NONE || ps->p[a].thread != t || ps->p[a].ordinal + 1 == ordinal);
  atom__period *np = &ps->p[ps->n];
  np->thread = t;
  np->ordinal = ordinal;
  np->vc_off = (uint32_t)ps->pool_len;
  np->vc_len = dense ? hi : (uint32_t)nt | ATOM__PERIOD_SPARSE;
  ps->pool_len += words;
  *out = (uint32_t)ps->n++;
  return 0;
}

static int add_period(atom__periods *ps, uint32_t t, uint32_t ordinal, uint32_t a, uint32_t b,
                      uint32_t *out) {
  return add_period_x(ps, t, ordinal, a, b, NULL, 0, out);
}

/* Thread t's current period, created as a root's first one if t has none; a cut left by a
 * release is not applied (the callers that start a new period anyway skip it). */
static int current(atom__periods *ps, uint32_t t, uint32_t *out) {
  if (ensure_thread(ps, t)) return ATOM_ENOMEM;
  if (ps->cur[t] == ATOM__PERIOD_NONE) {
    uint32_t id;
    if (add_period(ps, t, 0, ATOM__PERIOD_NONE, ATOM__PERIOD_NONE, &id)) return ATOM_ENOMEM;
    ps->cur[t] = id;
  }
  *out = ps->cur[t];
  ATOM__ASSERT(*out < ps->n && ps->p[*out].thread == t);
  return 0;
}

int atom__periods_of_slow(atom__periods *ps, uint32_t t, uint32_t *out) {
  uint32_t pt;
  if (current(ps, t, &pt)) return ATOM_ENOMEM;
  if (ps->cut[t]) {
    /* The period ended in a release: this event starts the next one. */
    if (add_period(ps, t, ps->p[pt].ordinal + 1, pt, ATOM__PERIOD_NONE, &pt)) return ATOM_ENOMEM;
    ps->cur[t] = pt;
    ps->cut[t] = 0;
  }
  *out = pt;
  return 0;
}

int atom__periods_release(atom__periods *ps, uint32_t t, uint32_t x) {
  uint32_t pt;
  if (current(ps, t, &pt)) return ATOM_ENOMEM;
  if (x >= ps->rel_cap) {
    size_t old = ps->rel_cap;
    if (ATOM__GROW(ps->mem, ps->rel, ps->rel_cap, (size_t)x + 1)) return ATOM_ENOMEM;
    memset(ps->rel + old, 0, (ps->rel_cap - old) * sizeof *ps->rel);
  }
  struct atom__relclock *rc = &ps->rel[x];
  const atom__period *q = &ps->p[pt];
  uint32_t len = extent(ps, q) > q->thread + 1 ? extent(ps, q) : q->thread + 1;
  if (len > rc->len) {
    if (rc->cap < len) {
      size_t cap = rc->cap;
      if (ATOM__GROW(ps->mem, rc->vc, cap, len)) return ATOM_ENOMEM;
      rc->cap = (uint32_t)cap;
    }
    memset(rc->vc + rc->len, 0, (len - rc->len) * sizeof *rc->vc);
    rc->len = len;
  }
  const uint32_t *qv = ps->pool + q->vc_off;
  if (q->vc_len & ATOM__PERIOD_SPARSE) {
    for (uint32_t i = 0; i < entries(q); i++)
      if (qv[2 * i + 1] > rc->vc[qv[2 * i]]) rc->vc[qv[2 * i]] = qv[2 * i + 1];
  } else {
    for (uint32_t k = 0; k < q->vc_len; k++)
      if (qv[k] > rc->vc[k]) rc->vc[k] = qv[k];
  }
  if (rc->vc[q->thread] < q->ordinal + 1) rc->vc[q->thread] = q->ordinal + 1;
  ps->cut[t] = 1;
  return 0;
}

int atom__periods_acquire(atom__periods *ps, uint32_t t, uint32_t x, int *moved) {
  uint32_t pt, nt;
  if (moved) *moved = 0;
  if (current(ps, t, &pt)) return ATOM_ENOMEM;
  const struct atom__relclock *rc = x < ps->rel_cap ? &ps->rel[x] : NULL;
  /* Does x's clock know a period that pt does not follow already? */
  int news = 0;
  if (rc) {
    const atom__period *q = &ps->p[pt];
    for (uint32_t k = 0; k < rc->len && !news; k++) {
      uint32_t have = k == q->thread ? q->ordinal + 1 : atom__periods_component(ps, q, k);
      news = rc->vc[k] > have;
    }
  }
  if (!news) return 0; /* a pending cut stays pending: the read belongs to the current period */
  if (add_period_x(ps, t, ps->p[pt].ordinal + 1, pt, ATOM__PERIOD_NONE, rc->vc, rc->len, &nt))
    return ATOM_ENOMEM;
  ps->cur[t] = nt;
  ps->cut[t] = 0;
  if (moved) *moved = 1;
  return 0;
}

int atom__periods_fork(atom__periods *ps, uint32_t t, uint32_t u) {
  uint32_t pt, pu, nt;
  int rc;
  if ((rc = atom__periods_of(ps, t, &pt)) || (rc = ensure_thread(ps, u))) return rc;
  if (ps->cur[u] != ATOM__PERIOD_NONE) return 0; /* not a fresh thread: nothing to order */
  if ((rc = add_period(ps, u, 0, pt, ATOM__PERIOD_NONE, &pu))) return rc;
  /* The forker's next period: its own order continues (the snapshot of pt plus pt itself). */
  if ((rc = add_period(ps, t, ps->p[pt].ordinal + 1, pt, ATOM__PERIOD_NONE, &nt))) {
    ps->n--; /* drop pu (its pool slice is simply reused later) */
    ps->pool_len = ps->p[pu].vc_off;
    return rc;
  }
  ps->cur[u] = pu;
  ps->cur[t] = nt;
  return 0;
}

int atom__periods_join(atom__periods *ps, uint32_t t, uint32_t u) {
  uint32_t pt, pu, nt;
  int rc;
  if ((rc = current(ps, t, &pt))) return rc; /* the join's new period ends a pending cut too */
  if ((rc = current(ps, u, &pu))) return rc; /* u's last event is in it, cut or not */
  if ((rc = add_period(ps, t, ps->p[pt].ordinal + 1, pt, pu, &nt))) return rc;
  ps->cur[t] = nt;
  ps->cut[t] = 0;
  return 0;
}
