/* Streaming generator of long synthetic traces (see tracegen.h). */
#include <errno.h>
#include "tracegen.h"

#include <stdlib.h>
#include <string.h>

enum { PH_FORK, PH_RUN, PH_DRAIN, PH_JOIN, PH_DONE };

struct tg_gen {
  tg_params p;
  unsigned alive;      /* 0, or the size of the waves */
  uint64_t rng;
  uint64_t emitted, stop_at;
  int phase;
  unsigned next_child; /* next thread to fork or join */
  unsigned plan_cap;
  atom_event *plan;    /* per thread: plan_cap events of its current transaction */
  unsigned *plan_len, *plan_pos;
  unsigned char *done;
  unsigned live;       /* threads not done (drain phase) */
  unsigned *owner;     /* per lock: holder's thread index + 1, 0 = free */
  unsigned cur, burst; /* thread scheduled now, events left in its time slice */
  unsigned lo, hi;     /* the threads that run now: [lo, hi) (all, or the current wave) */
  uint64_t per_wave;   /* waves: events of each wave's body */
};

static uint64_t next_u64(tg_gen *g) { /* splitmix64 */
  uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Slightly biased for huge n; irrelevant for the small ranges used here. */
static unsigned below(tg_gen *g, unsigned n) { return (unsigned)((next_u64(g) >> 32) * n >> 32); }

int tg_new(tg_gen **out, const tg_params *p, const char **why) {
  return tg_new_alive(out, p, 0, why);
}

int tg_new_alive(tg_gen **out, const tg_params *p, unsigned alive, const char **why) {
  *out = NULL;
  *why = NULL;
  if (p->threads < 1 || p->threads > 1000000) *why = "threads must be in 1..1000000";
  else if (p->vars < 1) *why = "vars must be >= 1";
  else if (p->txn_len < 1 || p->txn_len > 100000) *why = "txn-len must be in 1..100000";
  else if (p->kind == TG_2PL && (p->locks < 1 || p->vars < p->locks))
    *why = "2pl needs 1 <= locks <= vars";
  else if (p->kind == TG_POOL && (p->locks < 2 || p->vars < 5 + p->locks))
    *why = "pool needs locks >= 2 and vars >= 5 + locks";
  else if (p->kind != TG_2PL && p->kind != TG_RACY && p->kind != TG_POOL) *why = "unknown kind";
  else if (alive && alive >= p->threads - 1) *why = "alive must be below threads - 1";
  if (*why) return -1;
  tg_gen *g = calloc(1, sizeof *g);
  if (!g) return -1;
  g->p = *p;
  g->alive = alive;
  g->rng = p->seed * 0x2545f4914f6cdd1dull + 1;
  /* pool: a segment of at least 8 accesses adds two lock operations; 16 covers the rest */
  g->plan_cap = p->kind == TG_POOL ? p->txn_len + p->txn_len / 4 + 16 : p->txn_len + 6;
  g->plan = calloc((size_t)p->threads * g->plan_cap, sizeof *g->plan);
  g->plan_len = calloc(p->threads, sizeof *g->plan_len);
  g->plan_pos = calloc(p->threads, sizeof *g->plan_pos);
  g->done = calloc(p->threads, 1);
  g->owner = calloc(p->locks ? p->locks : 1, sizeof *g->owner);
  if (!g->plan || !g->plan_len || !g->plan_pos || !g->done || !g->owner) {
    tg_free(g);
    *why = "out of memory";
    return -1;
  }
  uint64_t tail = (p->threads - 1) + (uint64_t)p->threads * g->plan_cap / 2;
  g->stop_at = p->events > tail ? p->events - tail : 0;
  g->phase = PH_FORK;
  g->next_child = 2;
  g->live = p->threads;
  g->lo = 0;
  g->hi = p->threads;
  if (alive) { /* waves: thread index 0 forks and joins [lo, hi) */
    uint64_t waves = (p->threads - 1 + alive - 1) / alive;
    uint64_t wtail = 2 * (uint64_t)alive + (uint64_t)alive * g->plan_cap / 2;
    uint64_t share = p->events / waves;
    g->per_wave = share > wtail ? share - wtail : 1;
    g->lo = 1;
    g->hi = 1 + alive;
    g->live = alive;
    g->stop_at = g->per_wave;
  }
  *out = g;
  return 0;
}

void tg_free(tg_gen *g) {
  if (!g) return;
  free(g->plan);
  free(g->plan_len);
  free(g->plan_pos);
  free(g->done);
  free(g->owner);
  free(g);
}

static void put(atom_event *e, uint32_t kind, unsigned t, uint64_t target, unsigned slot) {
  e->kind = kind;
  e->flags = 0;
  e->thread = (uint64_t)t + 1;
  e->target = target;
  e->loc = slot + 1; /* a small set of "program locations": the slot in the transaction */
}

enum { POOL_COUNTERS = 4, POOL_FIRST_TABLE = 2 + POOL_COUNTERS };

/* The thread-pool transaction (tracegen.h). Locations: 1..4 the queue, 8..23 locked
 * accesses, 24..39 plain ones, 40..41 the counter, 42.. the item lock operations. */
static unsigned plan_pool(tg_gen *g, unsigned t, atom_event *pl) {
  const tg_params *p = &g->p;
  unsigned n = 1;
  put(&pl[n++], ATOM_ACQUIRE, t, 1, 0), pl[n - 1].loc = 1;
  put(&pl[n++], ATOM_READ, t, 1, 0), pl[n - 1].loc = 2;
  put(&pl[n++], ATOM_WRITE, t, 1, 0), pl[n - 1].loc = 3;
  put(&pl[n++], ATOM_RELEASE, t, 1, 0), pl[n - 1].loc = 4;
  unsigned table = p->vars + 1 - POOL_FIRST_TABLE, items = p->locks - 1;
  for (unsigned done = 0; done < p->txn_len;) {
    unsigned seg = 8 + below(g, 32);
    if (seg > p->txn_len - done) seg = p->txn_len - done;
    if (below(g, 2)) { /* under item lock l: variables v with v mod items == l - 2 */
      unsigned l = 2 + below(g, items), r = l - 2;
      unsigned first = POOL_FIRST_TABLE + (r + items - POOL_FIRST_TABLE % items) % items;
      unsigned count = first <= p->vars ? (p->vars - first) / items + 1 : 0;
      put(&pl[n++], ATOM_ACQUIRE, t, l, 0), pl[n - 1].loc = 42;
      for (unsigned k = 0; k < seg; k++, n++) {
        unsigned v = count ? first + items * below(g, count) : 1;
        put(&pl[n], below(g, 10) < 3 ? ATOM_WRITE : ATOM_READ, t, v, 0);
        pl[n].loc = 8 + k % 16;
      }
      put(&pl[n++], ATOM_RELEASE, t, l, 0), pl[n - 1].loc = 43;
    } else {
      for (unsigned k = 0; k < seg; k++, n++) {
        put(&pl[n], below(g, 16) ? ATOM_READ : ATOM_WRITE, t,
            POOL_FIRST_TABLE + below(g, table), 0);
        pl[n].loc = 24 + k % 16;
      }
    }
    done += seg;
  }
  unsigned c = 2 + below(g, POOL_COUNTERS);
  put(&pl[n++], ATOM_READ, t, c, 0), pl[n - 1].loc = 40;
  put(&pl[n++], ATOM_WRITE, t, c, 0), pl[n - 1].loc = 41;
  return n;
}

/* Plan thread t's next transaction. */
static void plan_txn(tg_gen *g, unsigned t) {
  const tg_params *p = &g->p;
  atom_event *pl = g->plan + (size_t)t * g->plan_cap;
  unsigned n = 0;
  put(&pl[n], ATOM_BEGIN, t, 0, n), n++;
  if (p->kind == TG_POOL) {
    n = plan_pool(g, t, pl);
  } else if (p->kind == TG_RACY) {
    for (unsigned k = 0; k < p->txn_len; k++, n++)
      put(&pl[n], below(g, 10) < 3 ? ATOM_WRITE : ATOM_READ, t, 1 + below(g, p->vars), n);
  } else {
    unsigned l1 = below(g, p->locks), l2 = l1;
    if (p->locks > 1 && below(g, 2)) {
      l2 = below(g, p->locks - 1);
      if (l2 >= l1) l2++;
      if (l2 < l1) {
        unsigned tmp = l1;
        l1 = l2;
        l2 = tmp;
      }
    }
    put(&pl[n], ATOM_ACQUIRE, t, 1 + (uint64_t)l1, n), n++;
    if (l2 != l1) put(&pl[n], ATOM_ACQUIRE, t, 1 + (uint64_t)l2, n), n++;
    for (unsigned k = 0; k < p->txn_len; k++, n++) {
      unsigned l = (l2 != l1 && below(g, 2)) ? l2 : l1;
      unsigned protected_vars = (p->vars - l + p->locks - 1) / p->locks; /* v = l mod L */
      unsigned v = l + p->locks * below(g, protected_vars);
      put(&pl[n], below(g, 10) < 3 ? ATOM_WRITE : ATOM_READ, t, 1 + (uint64_t)v, n);
    }
    if (l2 != l1) put(&pl[n], ATOM_RELEASE, t, 1 + (uint64_t)l2, n), n++;
    put(&pl[n], ATOM_RELEASE, t, 1 + (uint64_t)l1, n), n++;
  }
  put(&pl[n], ATOM_END, t, 0, n), n++;
  g->plan_len[t] = n;
  g->plan_pos[t] = 0;
}

static unsigned pick_thread(tg_gen *g) {
  unsigned n = g->hi - g->lo;
  unsigned t = g->lo + below(g, n);
  while (g->done[t]) t = g->lo + (t - g->lo + 1) % n;
  return t;
}

size_t tg_next(tg_gen *g, atom_event *buf, size_t cap) {
  size_t n = 0;
  const tg_params *p = &g->p;
  while (n < cap) {
    switch (g->phase) {
    case PH_FORK:
      if (g->next_child <= (g->alive ? g->hi : p->threads)) {
        put(&buf[n++], ATOM_FORK, 0, g->next_child++, 0);
        g->emitted++;
      } else {
        g->phase = PH_RUN;
      }
      continue;
    case PH_JOIN:
      if (g->next_child <= (g->alive ? g->hi : p->threads)) {
        put(&buf[n++], ATOM_JOIN, 0, g->next_child++, 0);
        g->emitted++;
      } else if (g->alive && g->hi < p->threads) { /* the next wave */
        g->lo = g->hi;
        g->hi = g->hi + g->alive < p->threads ? g->hi + g->alive : p->threads;
        g->live = g->hi - g->lo;
        g->next_child = g->lo + 1;
        g->stop_at = g->emitted + g->per_wave;
        g->phase = PH_FORK;
      } else {
        g->phase = PH_DONE;
      }
      continue;
    case PH_DONE:
      return n;
    default:
      break;
    }
    if (g->burst == 0) {
      g->cur = pick_thread(g);
      g->burst = 1 + below(g, 4);
    }
    unsigned t = g->cur;
    if (g->plan_pos[t] == g->plan_len[t]) {
      if (g->phase == PH_DRAIN) {
        g->done[t] = 1;
        g->burst = 0;
        if (--g->live == 0) {
          g->phase = PH_JOIN;
          g->next_child = g->alive ? g->lo + 1 : 2;
        }
        continue;
      }
      plan_txn(g, t);
    }
    atom_event *e = g->plan + (size_t)t * g->plan_cap + g->plan_pos[t];
    if (e->kind == ATOM_ACQUIRE) {
      unsigned *own = &g->owner[e->target - 1];
      if (*own != 0 && *own != t + 1) { /* blocked: let another thread run */
        g->burst = 0;
        continue;
      }
      *own = t + 1;
    } else if (e->kind == ATOM_RELEASE) {
      g->owner[e->target - 1] = 0;
    }
    buf[n++] = *e;
    g->plan_pos[t]++;
    g->burst--;
    if (++g->emitted >= g->stop_at && g->phase == PH_RUN) g->phase = PH_DRAIN;
  }
  return n;
}

int tg_parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  double d = strtod(s, &end); /* accepts 1e7 as well as 10000000 */
  if (errno || *end || d < 0 || d > 1.8e19 || d != (double)(uint64_t)d) return -1;
  *out = (uint64_t)d;
  return 0;
}
