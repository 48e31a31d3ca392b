/* Seeded generator of random well-formed traces (see randtrace.h). */
#include "randtrace.h"

#include <stdlib.h>
#include <string.h>

/* ---- PRNG: splitmix64 ---------------------------------------------------------------- */

void rt_rng_seed(rt_rng *r, uint64_t seed) { r->state = seed ^ 0x6a09e667f3bcc909ull; }

uint64_t rt_rng_next(rt_rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rt_rng_below(rt_rng *r, uint64_t n) {
  /* Rejection sampling keeps the draw uniform; n is small in practice. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = rt_rng_next(r);
  while (x >= limit);
  return x % n;
}

int rt_rng_chance(rt_rng *r, double p) {
  if (p <= 0.0) return 0;
  if (p >= 1.0) return 1;
  /* 53 random bits as a double in [0, 1). */
  double u = (double)(rt_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
  return u < p;
}

/* ---- parameters ------------------------------------------------------------------------ */

void rt_params_default(rt_params *p) {
  memset(p, 0, sizeof *p);
  p->threads = 2;
  p->vars = 2;
  p->locks = 1;
  p->events = 20;
  p->p_root = 0.5;
  p->p_begin = 0.6;
  p->p_nest = 0.1;
  p->p_end = 0.3;
  p->p_lock = 0.15;
  p->p_reacquire = 0.3;
  p->p_fork = 0.2;
  p->p_join = 0.2;
  p->p_finish = 0.05;
  p->p_write = 0.5;
  p->leave_open = 0;
  p->twopl = 0;
  p->p_unprotected = 0.0;
  p->p_fence = 0.0;
  p->sync_vars = 0;
  p->p_sync = 0.0;
  p->p_rmw = 0.0;
  p->p_plain = 0.0;
}

static double uniform(rt_rng *r, double lo, double hi) {
  double u = (double)(rt_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * u;
}

void rt_params_random(rt_params *p, uint64_t seed, size_t max_events) {
  rt_rng r;
  rt_rng_seed(&r, seed ^ 0x5bd1e9955bd1e995ull);
  rt_params_default(p);
  p->threads = 2 + (unsigned)rt_rng_below(&r, 3);
  p->vars = 1 + (unsigned)rt_rng_below(&r, 4);
  p->locks = (unsigned)rt_rng_below(&r, 3);
  if (max_events < 4) max_events = 4;
  p->events = 4 + (size_t)rt_rng_below(&r, max_events - 3);
  p->p_root = uniform(&r, 0.2, 0.7);
  p->p_begin = uniform(&r, 0.3, 0.9);
  p->p_nest = uniform(&r, 0.0, 0.25);
  p->p_end = uniform(&r, 0.1, 0.5);
  p->p_lock = uniform(&r, 0.0, 0.3);
  p->p_reacquire = uniform(&r, 0.0, 0.5);
  p->p_fork = uniform(&r, 0.05, 0.3);
  p->p_join = uniform(&r, 0.05, 0.4);
  p->p_finish = uniform(&r, 0.0, 0.1);
  p->p_write = uniform(&r, 0.2, 0.7);
  p->leave_open = rt_rng_chance(&r, 0.3);
  if (p->locks > 0 && rt_rng_chance(&r, 0.15)) {
    p->twopl = 1;
    p->p_unprotected = rt_rng_chance(&r, 0.5) ? 0.0 : uniform(&r, 0.0, 0.2);
  }
  p->p_fence = rt_rng_chance(&r, 0.3) ? uniform(&r, 0.0, 0.3) : 0.0;
}

void rt_params_sync(rt_params *p, uint64_t seed) {
  rt_rng r;
  rt_rng_seed(&r, seed ^ 0x3c6ef372fe94f82bull);
  p->sync_vars = rt_rng_chance(&r, 0.3) ? 2 : 1;
  p->p_sync = uniform(&r, 0.35, 0.65);
  p->p_rmw = rt_rng_chance(&r, 0.2) ? 0.0 : uniform(&r, 0.2, 0.6);
  p->p_plain = rt_rng_chance(&r, 0.3) ? uniform(&r, 0.0, 0.3) : 0.0;
}

/* ---- generator ------------------------------------------------------------------------- */

enum { TH_UNSTARTED, TH_RUNNING, TH_FINISHED, TH_JOINED };

typedef struct gen {
  const rt_params *p;
  rt_rng rng;
  atom_event *ev;
  size_t n, cap;
  int failed;
  /* per thread (index 0 = thread key 1) */
  int status[RT_MAX_THREADS];
  int seen[RT_MAX_THREADS]; /* emitted an event or was forked: may be joined */
  unsigned depth[RT_MAX_THREADS];
  unsigned held[RT_MAX_THREADS]; /* number of distinct locks held */
  /* per lock */
  unsigned *owner; /* thread index + 1, 0 = free */
  unsigned *count; /* re-entrancy count */
} gen;

static void emit_flagged(gen *g, uint32_t kind, uint32_t flags, unsigned t, uint64_t target) {
  if (g->failed) return;
  if (g->n == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 64;
    atom_event *nv = realloc(g->ev, cap * sizeof *nv);
    if (!nv) {
      g->failed = 1;
      return;
    }
    g->ev = nv;
    g->cap = cap;
  }
  atom_event *e = &g->ev[g->n];
  e->kind = kind;
  e->flags = flags;
  e->thread = (uint64_t)t + 1;
  e->target = target;
  e->loc = (uint64_t)g->n;
  g->n++;
  g->seen[t] = 1;
}

static void emit(gen *g, uint32_t kind, unsigned t, uint64_t target) {
  emit_flagged(g, kind, 0, t, target);
}

static uint64_t var_key(unsigned v) { return RT_VAR_BASE + v; }
static uint64_t lock_key(unsigned l) { return RT_LOCK_BASE + l; }

static void acquire(gen *g, unsigned t, unsigned l) {
  if (g->count[l] == 0) {
    g->owner[l] = t + 1;
    g->held[t]++;
  }
  g->count[l]++;
  emit(g, ATOM_ACQUIRE, t, lock_key(l));
}

static void release(gen *g, unsigned t, unsigned l) {
  g->count[l]--;
  if (g->count[l] == 0) {
    g->owner[l] = 0;
    g->held[t]--;
  }
  emit(g, ATOM_RELEASE, t, lock_key(l));
}

static void access_var(gen *g, unsigned t, unsigned v) {
  emit(g, rt_rng_chance(&g->rng, g->p->p_write) ? ATOM_WRITE : ATOM_READ, t, var_key(v));
}

/* A synchronizing access of a random sync variable (randtrace.h). */
static void sync_access(gen *g, unsigned t) {
  const rt_params *p = g->p;
  rt_rng *r = &g->rng;
  uint64_t x = RT_SYNC_BASE + rt_rng_below(r, p->sync_vars);
  uint32_t acq = rt_rng_chance(r, p->p_plain) ? 0 : ATOM_FLAG_ACQUIRE;
  if (rt_rng_chance(r, p->p_rmw)) {
    uint32_t rel = rt_rng_chance(r, p->p_plain) ? 0 : ATOM_FLAG_RELEASE;
    emit_flagged(g, ATOM_READ, acq, t, x);
    emit_flagged(g, ATOM_WRITE, rel, t, x);
  } else if (rt_rng_chance(r, p->p_write)) {
    emit_flagged(g, ATOM_WRITE, acq ? ATOM_FLAG_RELEASE : 0, t, x);
  } else {
    emit_flagged(g, ATOM_READ, acq, t, x);
  }
}

/* Pick uniformly among the indices i < n with pred(i) true; -1 if none. */
#define PICK(g, n, pred, out)                                  \
  do {                                                         \
    unsigned cnt_ = 0;                                         \
    (out) = -1;                                                \
    for (unsigned i = 0; i < (n); i++)                         \
      if (pred) {                                              \
        cnt_++;                                                \
        if (rt_rng_below(&(g)->rng, cnt_) == 0) (out) = (int)i; \
      }                                                        \
  } while (0)

static unsigned running_count(const gen *g) {
  unsigned c = 0;
  for (unsigned i = 0; i < g->p->threads; i++) c += g->status[i] == TH_RUNNING;
  return c;
}

/* Release, in lock order, every lock thread t holds (all re-entrancy levels). */
static void release_all(gen *g, unsigned t) {
  for (unsigned l = 0; l < g->p->locks; l++)
    while (g->owner[l] == t + 1) release(g, t, l);
}

/* One access under two-phase locking; returns 0 if it had to wait (no event). */
static int twopl_access(gen *g, unsigned t) {
  const rt_params *p = g->p;
  unsigned v = (unsigned)rt_rng_below(&g->rng, p->vars);
  unsigned l = v % p->locks;
  if (rt_rng_chance(&g->rng, p->p_unprotected)) {
    access_var(g, t, v);
    return 1;
  }
  if (g->owner[l] != 0 && g->owner[l] != t + 1) return 0; /* would block */
  if (g->depth[t] > 0) {
    if (g->owner[l] == t + 1 && rt_rng_chance(&g->rng, p->p_reacquire)) {
      acquire(g, t, l); /* re-entrant inner pair */
      access_var(g, t, v);
      release(g, t, l);
    } else {
      if (g->owner[l] == 0) acquire(g, t, l); /* growing phase */
      access_var(g, t, v);
    }
  } else {
    acquire(g, t, l);
    access_var(g, t, v);
    release(g, t, l);
  }
  return 1;
}

/* One step of thread t. */
static void step(gen *g, unsigned t) {
  const rt_params *p = g->p;
  rt_rng *r = &g->rng;
  int u;

  if (rt_rng_chance(r, p->p_fork) && !(p->twopl && (g->depth[t] > 0 || g->held[t] > 0))) {
    PICK(g, p->threads, g->status[i] == TH_UNSTARTED, u);
    if (u >= 0) {
      emit(g, ATOM_FORK, t, (uint64_t)u + 1);
      g->status[u] = TH_RUNNING;
      g->seen[u] = 1;
      return;
    }
  }
  if (rt_rng_chance(r, p->p_join)) {
    PICK(g, p->threads, g->status[i] == TH_FINISHED && g->seen[i] && i != t, u);
    if (u >= 0) {
      emit(g, ATOM_JOIN, t, (uint64_t)u + 1);
      g->status[u] = TH_JOINED;
      return;
    }
  }
  if (!p->twopl && p->locks > 0 && rt_rng_chance(r, p->p_lock)) {
    int l;
    if (g->held[t] > 0 && rt_rng_chance(r, 0.5)) {
      PICK(g, p->locks, g->owner[i] == t + 1, l);
      release(g, t, (unsigned)l);
      return;
    }
    if (g->held[t] > 0 && rt_rng_chance(r, p->p_reacquire)) {
      PICK(g, p->locks, g->owner[i] == t + 1, l);
    } else {
      PICK(g, p->locks, g->owner[i] == 0, l);
    }
    if (l >= 0) {
      acquire(g, t, (unsigned)l);
      return;
    }
  }
  if (g->depth[t] == 0) {
    if (rt_rng_chance(r, p->p_begin)) {
      g->depth[t]++;
      emit(g, ATOM_BEGIN, t, 0);
      return;
    }
    if (g->held[t] == 0 && rt_rng_chance(r, p->p_finish) && running_count(g) > 1) {
      g->status[t] = TH_FINISHED; /* no event: it just stops */
      return;
    }
  } else {
    if (rt_rng_chance(r, p->p_end)) {
      if (p->twopl && g->depth[t] == 1) release_all(g, t); /* shrinking phase at the end */
      g->depth[t]--;
      emit(g, ATOM_END, t, 0);
      return;
    }
    if (rt_rng_chance(r, p->p_nest)) {
      g->depth[t]++;
      emit(g, ATOM_BEGIN, t, 0);
      return;
    }
  }
  if (p->sync_vars > 0 && rt_rng_chance(r, p->p_sync)) {
    sync_access(g, t);
    return;
  }
  if (p->twopl) {
    (void)twopl_access(g, t);
    return;
  }
  if (p->p_fence > 0 && rt_rng_chance(r, p->p_fence)) {
    emit(g, ATOM_FENCE, t, 0);
    return;
  }
  access_var(g, t, (unsigned)rt_rng_below(r, p->vars));
}

int rt_generate(const rt_params *p, uint64_t seed, atom_event **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!p || p->threads < 1 || p->threads > RT_MAX_THREADS || p->vars < 1 ||
      (p->twopl && p->locks < 1))
    return -1;
  gen g;
  memset(&g, 0, sizeof g);
  g.p = p;
  rt_rng_seed(&g.rng, seed);
  size_t nl = p->locks ? p->locks : 1;
  g.owner = calloc(nl, sizeof *g.owner);
  g.count = calloc(nl, sizeof *g.count);
  if (!g.owner || !g.count) {
    free(g.owner);
    free(g.count);
    return -1;
  }
  g.status[0] = TH_RUNNING;
  for (unsigned i = 1; i < p->threads; i++)
    g.status[i] = rt_rng_chance(&g.rng, p->p_root) ? TH_RUNNING : TH_UNSTARTED;

  /* Steps that emit nothing (a 2PL access that would block, a thread stopping) are bounded
   * by a generous cap so that the loop always ends. */
  size_t steps = 0, max_steps = 20 * p->events + 100;
  while (g.n < p->events && !g.failed && steps++ < max_steps) {
    int t;
    PICK(&g, p->threads, g.status[i] == TH_RUNNING, t);
    if (t < 0) break;
    step(&g, (unsigned)t);
  }
  if (!p->leave_open) {
    for (unsigned t = 0; t < p->threads; t++) {
      if (g.status[t] != TH_RUNNING) continue;
      if (p->twopl) {
        while (g.depth[t] > 1) {
          g.depth[t]--;
          emit(&g, ATOM_END, t, 0);
        }
        if (g.depth[t] == 1) {
          release_all(&g, t);
          g.depth[t]--;
          emit(&g, ATOM_END, t, 0);
        }
      } else {
        while (g.depth[t] > 0) {
          g.depth[t]--;
          emit(&g, ATOM_END, t, 0);
        }
        release_all(&g, t);
      }
    }
  }
  free(g.owner);
  free(g.count);
  if (g.failed) {
    free(g.ev);
    return -1;
  }
  *out = g.ev;
  *n = g.n;
  return 0;
}

void rt_write_std(FILE *f, const atom_event *ev, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const atom_event *e = &ev[i];
    unsigned long long th = (unsigned long long)e->thread, tg = (unsigned long long)e->target;
    unsigned long long loc = (unsigned long long)e->loc;
    switch (e->kind) {
    case ATOM_READ:
      fprintf(f, "t%llu|r%s(v%llu)|%llu\n", th, e->flags & ATOM_FLAG_ACQUIRE ? ".acq" : "", tg,
              loc);
      break;
    case ATOM_WRITE:
      fprintf(f, "t%llu|w%s(v%llu)|%llu\n", th, e->flags & ATOM_FLAG_RELEASE ? ".rel" : "", tg,
              loc);
      break;
    case ATOM_ACQUIRE: fprintf(f, "t%llu|acq(l%llu)|%llu\n", th, tg, loc); break;
    case ATOM_RELEASE: fprintf(f, "t%llu|rel(l%llu)|%llu\n", th, tg, loc); break;
    case ATOM_FORK: fprintf(f, "t%llu|fork(t%llu)|%llu\n", th, tg, loc); break;
    case ATOM_JOIN: fprintf(f, "t%llu|join(t%llu)|%llu\n", th, tg, loc); break;
    case ATOM_BEGIN: fprintf(f, "t%llu|begin|%llu\n", th, loc); break;
    case ATOM_END: fprintf(f, "t%llu|end|%llu\n", th, loc); break;
    case ATOM_FENCE: fprintf(f, "t%llu|fence|%llu\n", th, loc); break;
    case ATOM_COMMIT: fprintf(f, "t%llu|commit(v%llu)|%llu\n", th, tg, loc); break;
    default: fprintf(f, "# unknown kind %u\n", (unsigned)e->kind); break;
    }
  }
}

/* ---- fork/join waves ------------------------------------------------------------------- */

typedef struct wv {
  atom_event *ev;
  size_t n, cap;
  int fail;
  rt_rng r;
  unsigned vars, locks;
  unsigned lock_owner[2]; /* thread key holding the lock, 0 = free */
} wv;

static void wv_put(wv *w, uint32_t kind, uint64_t t, uint64_t target) {
  if (w->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 64;
    atom_event *p = realloc(w->ev, cap * sizeof *p);
    if (!p) {
      w->fail = 1;
      return;
    }
    w->ev = p;
    w->cap = cap;
  }
  atom_event *e = &w->ev[w->n];
  memset(e, 0, sizeof *e);
  e->kind = kind;
  e->thread = t;
  e->target = target;
  e->loc = (uint64_t)w->n + 1;
  w->n++;
}

/* One random step of thread t (in_txn: its transaction state, updated). */
static void wv_step(wv *w, uint64_t t, int *in_txn) {
  rt_rng *r = &w->r;
  if (w->locks && rt_rng_chance(r, 0.15)) {
    unsigned l = (unsigned)rt_rng_below(r, w->locks);
    if (w->lock_owner[l] == t) {
      wv_put(w, ATOM_RELEASE, t, RT_LOCK_BASE + l);
      w->lock_owner[l] = 0;
      return;
    }
    if (w->lock_owner[l] == 0) {
      wv_put(w, ATOM_ACQUIRE, t, RT_LOCK_BASE + l);
      w->lock_owner[l] = (unsigned)t;
      return;
    }
  }
  if (*in_txn && rt_rng_chance(r, 0.25)) {
    wv_put(w, ATOM_END, t, 0);
    *in_txn = 0;
  } else if (!*in_txn && rt_rng_chance(r, 0.5)) {
    wv_put(w, ATOM_BEGIN, t, 0);
    *in_txn = 1;
  } else {
    wv_put(w, rt_rng_chance(r, 0.4) ? ATOM_WRITE : ATOM_READ, t,
           RT_VAR_BASE + rt_rng_below(r, w->vars));
  }
}

/* Thread t closes its transaction and releases its locks. */
static void wv_close(wv *w, uint64_t t, int *in_txn) {
  if (*in_txn) wv_put(w, ATOM_END, t, 0);
  *in_txn = 0;
  for (unsigned l = 0; l < w->locks; l++)
    if (w->lock_owner[l] == t) {
      wv_put(w, ATOM_RELEASE, t, RT_LOCK_BASE + l);
      w->lock_owner[l] = 0;
    }
}

int rt_generate_waves(uint64_t seed, atom_event **out, size_t *n) {
  wv w;
  memset(&w, 0, sizeof w);
  rt_rng_seed(&w.r, seed * 0x9e3779b97f4a7c15ull + 7);
  rt_rng *r = &w.r;
  unsigned waves = 2 + (unsigned)rt_rng_below(r, 4); /* 2..5 */
  unsigned k = 1 + (unsigned)rt_rng_below(r, 3);     /* 1..3 alive children per wave */
  unsigned body = 4 + (unsigned)rt_rng_below(r, 9);  /* steps per wave */
  int root2 = rt_rng_chance(r, 0.5);                 /* thread 2 runs across the waves */
  w.vars = 1 + (unsigned)rt_rng_below(r, 3);
  w.locks = (unsigned)rt_rng_below(r, 2);
  int txn_main = 0, txn_root2 = 0;
  int txn_child[3];
  uint64_t next = 3;
  for (unsigned wave = 0; wave < waves && !w.fail; wave++) {
    if (rt_rng_chance(r, 0.5)) wv_step(&w, 1, &txn_main);
    int span = !txn_main && rt_rng_chance(r, 0.3); /* main's transaction spans the wave */
    if (span) {
      wv_put(&w, ATOM_BEGIN, 1, 0);
      txn_main = 1;
    }
    /* with thread 2 running, either may fork and join a wave: the slot a join frees is then
     * taken by a thread forked by one that may not know the joined thread's last events */
    uint64_t forker = root2 && rt_rng_chance(r, 0.5) ? 2 : 1;
    uint64_t joiner = root2 && rt_rng_chance(r, 0.5) ? 2 : 1;
    uint64_t first = next;
    for (unsigned c = 0; c < k; c++) {
      wv_put(&w, ATOM_FORK, forker, next++);
      txn_child[c] = 0;
    }
    for (unsigned s = 0; s < body; s++) {
      unsigned who = (unsigned)rt_rng_below(r, k + (root2 ? 1u : 0u));
      if (who < k) wv_step(&w, first + who, &txn_child[who]);
      else wv_step(&w, 2, &txn_root2);
    }
    for (unsigned c = 0; c < k; c++) wv_close(&w, first + c, &txn_child[c]);
    unsigned start = (unsigned)rt_rng_below(r, k); /* join in a rotated order */
    for (unsigned c = 0; c < k; c++) wv_put(&w, ATOM_JOIN, joiner, first + (start + c) % k);
    if (span || (txn_main && rt_rng_chance(r, 0.5))) wv_close(&w, 1, &txn_main);
  }
  wv_close(&w, 1, &txn_main);
  if (root2) wv_close(&w, 2, &txn_root2);
  if (w.fail) {
    free(w.ev);
    return -1;
  }
  *out = w.ev;
  *n = w.n;
  return 0;
}
