/* reduction: fork/join and sync order as sparse vector clocks, one snapshot per segment. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/reduction/reduction.h"

uint32_t atom__reduction_clk_get(const sparse_clock *k, uint32_t t) {
  uint32_t lo = 0, hi = k->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (k->c[mid].thread < t) lo = mid + 1;
    else hi = mid;
  }
  return lo < k->n && k->c[lo].thread == t ? k->c[lo].clock : 0;
}

void atom__reduction_clk_free(atom__mem *m, sparse_clock *k) {
  atom__mem_free(m, k->c, (size_t)k->cap * sizeof *k->c);
  k->c = NULL;
  k->n = k->cap = 0;
}

static int clk_reserve(atom__mem *m, sparse_clock *k, size_t n) {
  if (n <= k->cap) return 0;
  if (n > UINT32_MAX) return ATOM_ENOMEM;
  size_t cap = k->cap;
  if (atom__grow(m, (void **)&k->c, &cap, n, sizeof *k->c)) return ATOM_ENOMEM;
  k->cap = (uint32_t)cap;
  return 0;
}

/* k[t] := v. 0 or ATOM_ENOMEM (k unchanged). */
static int clk_set(atom__mem *m, sparse_clock *k, uint32_t t, uint32_t v) {
  uint32_t lo = 0, hi = k->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (k->c[mid].thread < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo < k->n && k->c[lo].thread == t) {
    k->c[lo].clock = v;
    return 0;
  }
  if (clk_reserve(m, k, (size_t)k->n + 1)) return ATOM_ENOMEM;
  memmove(k->c + lo + 1, k->c + lo, (size_t)(k->n - lo) * sizeof *k->c);
  k->c[lo] = (clock_entry){t, v};
  k->n++;
  return 0;
}

/* *out := a ⊔ b (out is a fresh clock; a, b unchanged). */
static int clk_merge(atom__mem *m, const sparse_clock *a, const sparse_clock *b, sparse_clock *out) {
  sparse_clock k = {NULL, 0, 0};
  if (clk_reserve(m, &k, (size_t)a->n + b->n + 1)) return ATOM_ENOMEM;
  uint32_t i = 0, j = 0;
  while (i < a->n || j < b->n) {
    if (j == b->n || (i < a->n && a->c[i].thread < b->c[j].thread)) k.c[k.n++] = a->c[i++];
    else if (i == a->n || b->c[j].thread < a->c[i].thread) k.c[k.n++] = b->c[j++];
    else {
      clock_entry x = a->c[i++];
      if (b->c[j].clock > x.clock) x.clock = b->c[j].clock;
      j++;
      k.c[k.n++] = x;
    }
  }
  *out = k;
  return 0;
}

int atom__reduction_ensure_thread(reduction *r, uint32_t t) {
  if (t < r->n_th) return 0;
  if (ATOM__GROW(r->mem, r->th, r->th_cap, (size_t)t + 1)) return ATOM_ENOMEM;
  for (uint32_t u = r->n_th; u <= t; u++) r->th[u].snap = NONE;
  r->n_th = t + 1;
  return 0;
}

/* A thread seen first without a FORK is a root: its clock starts at <0..1..0>. */
int atom__reduction_start_thread(reduction *r, uint32_t t) {
  thread_state *th = &r->th[t];
  if (th->started) return 0;
  if (clk_set(r->mem, &th->vc, t, 1)) return ATOM_ENOMEM;
  th->started = 1;
  return 0;
}

/* ---------------------------------------------------------------- happens-before (fork/join) */

/* Fork: u starts after everything t did so far; t enters a new segment. */
int atom__reduction_hb_fork(reduction *r, uint32_t t, uint32_t u) {
  thread_state *th = &r->th[t], *uh = &r->th[u];
  uint32_t ct = atom__reduction_clk_get(&th->vc, t);
  if (ct == UINT32_MAX)
    return atom_env_error(r->env, ATOM_ELIMIT, "too many forks and joins in one thread");
  sparse_clock self = {NULL, 0, 0}, nv;
  if (clk_set(r->mem, &self, u, 1)) return ATOM_ENOMEM;
  int rc = clk_merge(r->mem, &th->vc, &self, &nv);
  atom__reduction_clk_free(r->mem, &self);
  if (rc) return rc;
  atom__reduction_clk_free(r->mem, &uh->vc);
  uh->vc = nv;
  uh->started = 1;
  uh->snap = NONE;
  clk_set(r->mem, &th->vc, t, ct + 1); /* the component exists: cannot fail */
  th->snap = NONE;
  return 0;
}

/* Join: t continues after everything u did; t enters a new segment. */
int atom__reduction_hb_join(reduction *r, uint32_t t, uint32_t u) {
  thread_state *th = &r->th[t];
  uint32_t ct = atom__reduction_clk_get(&th->vc, t);
  if (ct == UINT32_MAX)
    return atom_env_error(r->env, ATOM_ELIMIT, "too many forks and joins in one thread");
  sparse_clock nv;
  if (clk_merge(r->mem, &th->vc, &r->th[u].vc, &nv)) return ATOM_ENOMEM;
  atom__reduction_clk_free(r->mem, &th->vc);
  th->vc = nv;
  clk_set(r->mem, &th->vc, t, ct + 1); /* the component exists: cannot fail */
  th->snap = NONE;
  return 0;
}

/* Release write of x by t (sync order, doc/api.md "Synchronization"): x's clock learns
 * everything t did so far; t enters a new segment (its later events are not released). */
int atom__reduction_hb_release(reduction *r, uint32_t t, uint32_t x) {
  thread_state *th = &r->th[t];
  uint32_t ct = atom__reduction_clk_get(&th->vc, t);
  if (ct == UINT32_MAX)
    return atom_env_error(r->env, ATOM_ELIMIT, "too many synchronization points in one thread");
  if (x >= r->relv_cap) {
    size_t old = r->relv_cap;
    if (ATOM__GROW(r->mem, r->relv, r->relv_cap, (size_t)x + 1)) return ATOM_ENOMEM;
    memset(r->relv + old, 0, (r->relv_cap - old) * sizeof *r->relv);
  }
  sparse_clock nv;
  if (clk_merge(r->mem, &r->relv[x], &th->vc, &nv)) return ATOM_ENOMEM;
  atom__reduction_clk_free(r->mem, &r->relv[x]);
  r->relv[x] = nv;
  clk_set(r->mem, &th->vc, t, ct + 1); /* the component exists: cannot fail */
  th->snap = NONE;
  return 0;
}

/* Acquire read of x by t: t continues after every earlier release of x; a new segment only if
 * that teaches t something (spinning on a flag costs nothing). */
int atom__reduction_hb_acquire(reduction *r, uint32_t t, uint32_t x) {
  thread_state *th = &r->th[t];
  if (x >= r->relv_cap) return 0;
  const sparse_clock *k = &r->relv[x];
  int news = 0;
  for (size_t i = 0; i < k->n && !news; i++)
    news = k->c[i].thread != t && k->c[i].clock > atom__reduction_clk_get(&th->vc, k->c[i].thread);
  if (!news) return 0;
  uint32_t ct = atom__reduction_clk_get(&th->vc, t);
  if (ct == UINT32_MAX)
    return atom_env_error(r->env, ATOM_ELIMIT, "too many synchronization points in one thread");
  sparse_clock nv;
  if (clk_merge(r->mem, &th->vc, k, &nv)) return ATOM_ENOMEM;
  atom__reduction_clk_free(r->mem, &th->vc);
  th->vc = nv;
  clk_set(r->mem, &th->vc, t, ct + 1); /* the component exists: cannot fail */
  th->snap = NONE;
  return 0;
}

/* precise: the snapshot of t's current segment. */
int atom__reduction_current_snap(reduction *r, uint32_t t, uint32_t *out) {
  thread_state *th = &r->th[t];
  if (th->snap != NONE) {
    *out = th->snap;
    return 0;
  }
  if (r->nsnap >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(r->mem, r->snap, r->snap_cap, r->nsnap + 1)) return ATOM_ENOMEM;
  hb_snapshot *s = &r->snap[r->nsnap];
  sparse_clock none = {NULL, 0, 0};
  if (clk_merge(r->mem, &th->vc, &none, &s->vc)) return ATOM_ENOMEM;
  s->thread = t;
  s->clock = atom__reduction_clk_get(&th->vc, t);
  th->snap = (uint32_t)r->nsnap++;
  *out = th->snap;
  return 0;
}

/* Are the segments of two keys ordered by happens-before (either way)? */
int atom__reduction_hb_ordered(const reduction *r, const access_class *a, const access_class *b) {
  const hb_snapshot *sa = &r->snap[a->seg], *sb = &r->snap[b->seg];
  return sa->clock <= atom__reduction_clk_get(&sb->vc, sa->thread) || sb->clock <= atom__reduction_clk_get(&sa->vc, sb->thread);
}
