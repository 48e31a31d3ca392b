/* Brute-force conflict- and view-atomicity over all feasible interleavings (see interleave.h
 * for every convention). Written for obviousness: one small "machine" that runs events of
 * a thread and says whether they are enabled is shared by the schedule search, the deadlock
 * search and the search for an equivalent serial schedule, so all three use exactly the same
 * notion of feasibility. */
#include "interleave.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define DEFAULT_MAX_INTERLEAVINGS 2000000u
#define TABLE_BUDGET ((size_t)256 << 20) /* bytes of state tables per call */
#define MAX_EVENTS ((size_t)1 << 24)

static _Thread_local char il_msg[256];

const char *il_error(void) { return il_msg; }

static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(il_msg, sizeof il_msg, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---- the analyzed trace ---------------------------------------------------------------- */

typedef struct trace {
  const atom_event *ev;
  uint32_t n;
  uint32_t T, V, L, R, U; /* threads, variables, locks, reads, units */
  /* per event */
  uint32_t *thread; /* dense thread */
  uint32_t *var;    /* dense variable of a READ/WRITE, else NONE */
  uint32_t *lock;   /* dense lock of an ACQUIRE/RELEASE, else NONE */
  uint32_t *child;  /* dense target thread of a FORK/JOIN, else NONE */
  uint32_t *read;   /* index of a READ among the reads, else NONE */
  uint32_t *unit;   /* its unit */
  uint8_t *outer;   /* ACQUIRE/RELEASE: the thread's outermost one (not a re-entrant inner one) */
  /* per thread: its program is tev[first[t] .. first[t] + len[t]) */
  uint64_t *tkey;
  uint8_t *root;
  uint32_t *len, *first, *tev;
  /* gend[first[t] + k]: if a schedule step of thread t starts at its k-th event, the index
   * (within the thread) just past the step's last event (interleave.h, SEARCH (1)) */
  uint32_t *gend;
  uint32_t steps; /* number of schedule steps over all threads */
  /* per unit: its thread and the index (within the thread) just past its last event */
  uint32_t *uthread, *uend;
  /* per variable (for the classification of accesses) */
  uint32_t *vtid;     /* first thread that accessed it */
  uint8_t *vmulti;    /* accessed by two threads or more */
  uint8_t *vwritten;  /* written at least once */
  /* sync order: an acquire READ i may run only when, for every s in [sfirst[i], sfirst[i + 1]),
   * thread sthr[s] has run its first sneed[s] events (its last earlier release WRITE of the
   * variable is among them). Separate allocations: their size is known after the first pass. */
  uint32_t *sfirst, *sthr, *sneed;
  /* the memory of all the arrays above (and of the scratch of trace_build) */
  uint32_t *words;
  uint8_t *bytes;
  uint64_t *quads;
} trace;

static void trace_free(trace *tr) {
  if (!tr) return;
  free(tr->sfirst);
  free(tr->sthr);
  free(tr->sneed);
  free(tr->words);
  free(tr->bytes);
  free(tr->quads);
  free(tr);
}

/* The next @p count elements of a block: returns *cursor and advances it. */
#define CARVE(cursor, count) ((cursor) += (count), (cursor) - (count))

static uint32_t find_key(const uint64_t *keys, uint32_t count, uint64_t key) {
  for (uint32_t i = 0; i < count; i++)
    if (keys[i] == key) return i;
  return NONE;
}

/* Sync order (interleave.h, FEASIBLE SCHEDULES): for each acquire READ, the threads it waits
 * for and how far. One pass in trace order with, per variable and thread, 1 + the position
 * (within the thread) of its latest release WRITE so far; positions count the thread's
 * events, as the machine's do. */
static int sync_order(trace *tr) {
  size_t vt = (size_t)tr->V * tr->T, nreq = 0;
  uint32_t *last = calloc(vt + 1, sizeof *last), *kpos = calloc((size_t)tr->T + 1, sizeof *kpos);
  tr->sfirst = calloc((size_t)tr->n + 1, sizeof *tr->sfirst);
  if (!last || !kpos || !tr->sfirst) goto nomem;
  /* First pass: count the requirements; second: fill them. */
  for (int pass = 0; pass < 2; pass++) {
    memset(last, 0, (vt + 1) * sizeof *last);
    memset(kpos, 0, ((size_t)tr->T + 1) * sizeof *kpos);
    size_t r = 0;
    if (pass == 1) {
      tr->sthr = malloc((nreq + 1) * sizeof *tr->sthr);
      tr->sneed = malloc((nreq + 1) * sizeof *tr->sneed);
      if (!tr->sthr || !tr->sneed) goto nomem;
    }
    for (uint32_t i = 0; i < tr->n; i++) {
      const atom_event *e = &tr->ev[i];
      uint32_t t = tr->thread[i], k = kpos[t]++;
      if (pass == 1) tr->sfirst[i] = (uint32_t)r;
      if (e->kind == ATOM_WRITE && (e->flags & ATOM_FLAG_RELEASE))
        last[(size_t)tr->var[i] * tr->T + t] = k + 1;
      if (e->kind != ATOM_READ || !(e->flags & ATOM_FLAG_ACQUIRE)) continue;
      for (uint32_t u = 0; u < tr->T; u++) {
        uint32_t need = last[(size_t)tr->var[i] * tr->T + u];
        if (u == t || need == 0) continue;
        if (pass == 1) {
          tr->sthr[r] = u;
          tr->sneed[r] = need;
        }
        r++;
      }
    }
    if (pass == 0) nreq = r;
    else tr->sfirst[tr->n] = (uint32_t)r;
  }
  free(last);
  free(kpos);
  return 0;
nomem:
  free(last);
  free(kpos);
  return -1;
}

/* Validate, intern keys, cut units (interleave.h, UNITS) and schedule steps. */
static int trace_build(const atom_event *ev, size_t n, trace **out) {
  *out = NULL;
  il_msg[0] = '\0';
  if (!ev && n > 0) return fail("NULL events");
  if (n > MAX_EVENTS) return fail("%zu events: more than this reference handles", n);
  trace *tr = calloc(1, sizeof *tr);
  if (!tr) return fail("out of memory");
  size_t nt = 2 * n + 1, nn = n + 1; /* an event introduces at most two threads */
  tr->ev = ev;
  tr->n = (uint32_t)n;
  /* Three blocks, zeroed: 32-bit words, bytes, 64-bit keys. */
  tr->words = calloc(13 * nn + 6 * nt, sizeof *tr->words);
  tr->bytes = calloc(3 * nn + 2 * nt, 1);
  tr->quads = calloc(nt + 2 * nn, sizeof *tr->quads);
  if (!tr->words || !tr->bytes || !tr->quads) {
    trace_free(tr);
    return fail("out of memory");
  }
  uint32_t *w = tr->words;
  uint8_t *b = tr->bytes;
  uint64_t *q = tr->quads;
  tr->thread = CARVE(w, nn);
  tr->var = CARVE(w, nn);
  tr->lock = CARVE(w, nn);
  tr->child = CARVE(w, nn);
  tr->read = CARVE(w, nn);
  tr->unit = CARVE(w, nn);
  tr->tev = CARVE(w, nn);
  tr->gend = CARVE(w, nn);
  tr->uthread = CARVE(w, nn);
  tr->uend = CARVE(w, nn);
  tr->vtid = CARVE(w, nn);
  tr->len = CARVE(w, nt);
  tr->first = CARVE(w, nt);
  tr->outer = CARVE(b, nn);
  tr->vmulti = CARVE(b, nn);
  tr->vwritten = CARVE(b, nn);
  tr->root = CARVE(b, nt);
  tr->tkey = CARVE(q, nt);
  /* scratch of the validation pass */
  uint32_t *lowner = CARVE(w, nn), *lcount = CARVE(w, nn);
  uint32_t *depth = CARVE(w, nt), *held = CARVE(w, nt), *cur = CARVE(w, nt), *pos = CARVE(w, nt);
  uint8_t *joined = CARVE(b, nt);
  uint64_t *vkey = CARVE(q, nn), *lkey = CARVE(q, nn);
  int rc = 0;

  for (size_t i = 0; i < n && rc == 0; i++) {
    const atom_event *e = &ev[i];
    tr->var[i] = tr->lock[i] = tr->child[i] = tr->read[i] = NONE;
    if (e->flags != 0 && !(e->kind == ATOM_READ && e->flags == ATOM_FLAG_ACQUIRE) &&
        !(e->kind == ATOM_WRITE && e->flags == ATOM_FLAG_RELEASE)) {
      rc = fail("event %zu: flags other than ACQUIRE on a READ or RELEASE on a WRITE", i);
      break;
    }
    if (e->kind == ATOM_COMMIT) {
      rc = fail("event %zu: COMMIT is not supported", i);
      break;
    }
    if (e->kind < ATOM_READ || e->kind > ATOM_FENCE) {
      rc = fail("event %zu: unknown kind %u", i, (unsigned)e->kind);
      break;
    }
    uint32_t t = find_key(tr->tkey, tr->T, e->thread);
    if (t == NONE) { /* first seen without a FORK: a root */
      t = tr->T++;
      tr->tkey[t] = e->thread;
      tr->root[t] = 1;
      cur[t] = NONE;
    }
    if (joined[t]) {
      rc = fail("event %zu: thread %llu was already joined", i, (unsigned long long)e->thread);
      break;
    }
    tr->thread[i] = t;
    uint32_t k = tr->len[t]++;
    int inside_before = depth[t] > 0 || held[t] > 0;
    switch (e->kind) {
    case ATOM_BEGIN:
      depth[t]++;
      break;
    case ATOM_END:
      if (depth[t] == 0) rc = fail("event %zu: END without BEGIN", i);
      else depth[t]--;
      break;
    case ATOM_ACQUIRE: {
      uint32_t l = find_key(lkey, tr->L, e->target);
      if (l == NONE) {
        l = tr->L++;
        lkey[l] = e->target;
        lowner[l] = NONE;
      }
      tr->lock[i] = l;
      if (lcount[l] > 0 && lowner[l] != t) {
        rc = fail("event %zu: ACQUIRE of lock %llu held by another thread", i,
                  (unsigned long long)e->target);
        break;
      }
      if (lcount[l]++ == 0) {
        tr->outer[i] = 1;
        lowner[l] = t;
        held[t]++;
      }
      break;
    }
    case ATOM_RELEASE: {
      uint32_t l = find_key(lkey, tr->L, e->target);
      if (l == NONE || lcount[l] == 0 || lowner[l] != t) {
        rc = fail("event %zu: RELEASE of lock %llu not held by the thread", i,
                  (unsigned long long)e->target);
        break;
      }
      tr->lock[i] = l;
      if (--lcount[l] == 0) {
        tr->outer[i] = 1;
        lowner[l] = NONE;
        held[t]--;
      }
      break;
    }
    case ATOM_FORK: {
      if (e->target == e->thread || find_key(tr->tkey, tr->T, e->target) != NONE) {
        rc = fail("event %zu: FORK of thread %llu, which is itself or already exists", i,
                  (unsigned long long)e->target);
        break;
      }
      uint32_t c = tr->T++;
      tr->tkey[c] = e->target;
      tr->root[c] = 0;
      cur[c] = NONE;
      tr->child[i] = c;
      break;
    }
    case ATOM_JOIN: {
      uint32_t c = find_key(tr->tkey, tr->T, e->target);
      if (e->target == e->thread || (c != NONE && joined[c])) {
        rc = fail("event %zu: JOIN of thread %llu, which is itself or already joined", i,
                  (unsigned long long)e->target);
        break;
      }
      if (c == NONE) { /* never seen: a root without events */
        c = tr->T++;
        tr->tkey[c] = e->target;
        tr->root[c] = 1;
        cur[c] = NONE;
      }
      joined[c] = 1;
      tr->child[i] = c;
      break;
    }
    case ATOM_READ:
    case ATOM_WRITE: {
      uint32_t v = find_key(vkey, tr->V, e->target);
      if (v == NONE) {
        v = tr->V++;
        vkey[v] = e->target;
        tr->vtid[v] = t;
      }
      tr->var[i] = v;
      if (tr->vtid[v] != t) tr->vmulti[v] = 1;
      if (e->kind == ATOM_WRITE) tr->vwritten[v] = 1;
      else tr->read[i] = tr->R++;
      break;
    }
    default: /* FENCE */
      break;
    }
    if (rc) break;
    /* Units: a run from the event that takes the thread inside to the one that takes it out. */
    int inside_after = depth[t] > 0 || held[t] > 0;
    if (inside_before) {
      tr->unit[i] = cur[t];
      if (!inside_after) {
        tr->uend[cur[t]] = k + 1;
        cur[t] = NONE;
      }
    } else {
      uint32_t u = tr->U++;
      tr->uthread[u] = t;
      tr->unit[i] = u;
      if (inside_after) cur[t] = u;
      else tr->uend[u] = k + 1; /* unary */
    }
  }
  if (rc) {
    trace_free(tr);
    return rc;
  }
  for (uint32_t t = 0; t < tr->T; t++)
    if (cur[t] != NONE) tr->uend[cur[t]] = tr->len[t]; /* still inside at the end */

  /* Programs, in trace order. */
  for (uint32_t t = 1; t < tr->T; t++) tr->first[t] = tr->first[t - 1] + tr->len[t - 1];
  for (size_t i = 0; i < n; i++) {
    uint32_t t = tr->thread[i];
    tr->tev[tr->first[t] + pos[t]++] = (uint32_t)i;
  }
  if (sync_order(tr)) {
    trace_free(tr);
    return fail("out of memory");
  }
  /* Schedule steps: each visible event with the invisible ones before it; the thread's last
   * invisible events join its last step (a thread with no visible event is one step). */
  tr->steps = 0;
  for (uint32_t t = 0; t < tr->T; t++) {
    uint32_t start = 0, last = NONE, len = tr->len[t], *g = tr->gend + tr->first[t];
    for (uint32_t k = 0; k < len; k++) {
      uint32_t i = tr->tev[tr->first[t] + k];
      int visible;
      switch (ev[i].kind) {
      case ATOM_READ:
      case ATOM_WRITE:
        visible = tr->vmulti[tr->var[i]] && tr->vwritten[tr->var[i]];
        break;
      case ATOM_ACQUIRE:
      case ATOM_RELEASE:
        visible = tr->outer[i];
        break;
      case ATOM_FORK:
      case ATOM_JOIN:
        visible = 1;
        break;
      default: /* BEGIN, END, FENCE */
        visible = 0;
        break;
      }
      if (!visible) continue;
      g[start] = k + 1;
      last = start;
      start = k + 1;
      tr->steps++;
    }
    if (start < len) {
      if (last == NONE) {
        g[0] = len;
        tr->steps++;
      } else {
        g[last] = len;
      }
    }
  }

  *out = tr;
  return 0;
}

/* ---- hash set of fixed-length keys (arrays of 32-bit words), with a byte per key --------- */

typedef struct kset {
  size_t klen;    /* words per key */
  uint32_t *keys; /* cap keys */
  uint8_t *val;
  size_t count, cap;
  uint32_t *slot; /* 0 = empty, else key index + 1 */
  size_t nslot;   /* power of two */
} kset;

static uint64_t hash_words(const uint32_t *w, size_t k) {
  uint64_t h = 0x243f6a8885a308d3ull;
  for (size_t i = 0; i < k; i++) {
    h ^= w[i];
    h *= 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  h ^= h >> 32;
  return h;
}

static void kset_free(kset *s) {
  free(s->keys);
  free(s->val);
  free(s->slot);
  memset(s, 0, sizeof *s);
}

static void kset_init(kset *s, size_t klen) {
  memset(s, 0, sizeof *s);
  s->klen = klen;
}

static void kset_clear(kset *s) {
  s->count = 0;
  if (s->slot) memset(s->slot, 0, s->nslot * sizeof *s->slot);
}

static size_t kset_bytes(const kset *s) {
  return s->cap * (s->klen * sizeof(uint32_t) + 1) + s->nslot * sizeof(uint32_t);
}

/* Position of @p key in the slots: its slot, or the empty slot where it would go. */
static size_t kset_probe(const kset *s, const uint32_t *key) {
  size_t mask = s->nslot - 1, i = (size_t)hash_words(key, s->klen) & mask;
  for (;;) {
    uint32_t x = s->slot[i];
    if (x == 0 || memcmp(s->keys + (size_t)(x - 1) * s->klen, key, s->klen * sizeof *key) == 0)
      return i;
    i = (i + 1) & mask;
  }
}

/* Index of @p key, or SIZE_MAX. */
static size_t kset_find(const kset *s, const uint32_t *key) {
  if (s->nslot == 0) return SIZE_MAX;
  uint32_t x = s->slot[kset_probe(s, key)];
  return x ? (size_t)(x - 1) : SIZE_MAX;
}

/* Add @p key. @return 1 added, 0 already there (*idx its index in both cases; idx may be
 * NULL), -1 out of memory or over *budget bytes (the set is unchanged). */
static int kset_add(kset *s, const uint32_t *key, size_t *idx, size_t *budget) {
  if (s->count + 1 > s->nslot / 2) {
    size_t before = kset_bytes(s);
    size_t nslot = s->nslot ? 2 * s->nslot : 64;
    if (nslot > UINT32_MAX / 2) return -1;
    size_t grow = (nslot - s->nslot) * sizeof(uint32_t);
    if (budget && grow > *budget) return -1;
    uint32_t *slot = calloc(nslot, sizeof *slot);
    if (!slot) return -1;
    for (size_t j = 0; j < s->nslot; j++) {
      uint32_t x = s->slot[j];
      if (!x) continue;
      size_t p = (size_t)hash_words(s->keys + (size_t)(x - 1) * s->klen, s->klen) & (nslot - 1);
      while (slot[p]) p = (p + 1) & (nslot - 1);
      slot[p] = x;
    }
    free(s->slot);
    s->slot = slot;
    s->nslot = nslot;
    if (budget) *budget -= kset_bytes(s) - before;
  }
  size_t p = kset_probe(s, key);
  if (s->slot[p]) {
    if (idx) *idx = (size_t)(s->slot[p] - 1);
    return 0;
  }
  if (s->count == s->cap) {
    size_t before = kset_bytes(s);
    size_t cap = s->cap ? 2 * s->cap : 64;
    size_t grow = (cap - s->cap) * (s->klen * sizeof(uint32_t) + 1);
    if (budget && grow > *budget) return -1;
    /* klen may be 0: keep at least one word per key so that no allocation has size 0 */
    uint32_t *keys = realloc(s->keys, cap * (s->klen ? s->klen : 1) * sizeof *keys);
    if (!keys) return -1;
    s->keys = keys;
    uint8_t *val = realloc(s->val, cap);
    if (!val) return -1;
    s->val = val;
    s->cap = cap;
    if (budget) *budget -= kset_bytes(s) - before;
  }
  memcpy(s->keys + s->count * s->klen, key, s->klen * sizeof *key);
  s->val[s->count] = 0;
  s->slot[p] = (uint32_t)(++s->count);
  if (idx) *idx = s->count - 1;
  return 1;
}

/* ---- the machine: positions, started threads, lock holders ----------------------------- */

/* A state is an array of 32-bit words: tpos[T] | `extra` words | started[T] | owner[L] |
 * count[L]. The key of a state (what a state table compares) is its first T + extra words:
 * started, owner and count are functions of the positions. */
typedef struct layout {
  size_t extra;                   /* words after tpos that belong to the key */
  size_t started, owner, count;   /* offsets */
  size_t key;                     /* words in the key */
  size_t words;                   /* words in a state */
} layout;

static layout make_layout(const trace *tr, size_t extra) {
  layout y;
  y.extra = extra;
  y.key = tr->T + extra;
  y.started = y.key;
  y.owner = y.started + tr->T;
  y.count = y.owner + tr->L;
  y.words = y.count + tr->L;
  return y;
}

static void machine_init(const trace *tr, const layout *y, uint32_t *st) {
  memset(st, 0, y->words * sizeof *st);
  for (uint32_t t = 0; t < tr->T; t++) st[y->started + t] = tr->root[t];
  for (uint32_t l = 0; l < tr->L; l++) st[y->owner + l] = NONE;
}

static int finished(const trace *tr, const layout *y, const uint32_t *st, uint32_t t) {
  return st[y->started + t] && st[t] == tr->len[t];
}

/* Run event @p e, the next event of its thread. @return 1, or 0 if it is not enabled (the
 * state is then partly updated: callers work on a copy). */
static int machine_step(const trace *tr, const layout *y, uint32_t *st, uint32_t e) {
  uint32_t t = tr->thread[e];
  if (!st[y->started + t]) return 0;
  switch (tr->ev[e].kind) {
  case ATOM_ACQUIRE: {
    uint32_t l = tr->lock[e];
    if (st[y->count + l] > 0 && st[y->owner + l] != t) return 0;
    st[y->owner + l] = t;
    st[y->count + l]++;
    break;
  }
  case ATOM_RELEASE: {
    uint32_t l = tr->lock[e];
    if (--st[y->count + l] == 0) st[y->owner + l] = NONE;
    break;
  }
  case ATOM_FORK:
    st[y->started + tr->child[e]] = 1;
    break;
  case ATOM_JOIN:
    if (!finished(tr, y, st, tr->child[e])) return 0;
    break;
  case ATOM_READ:
    for (uint32_t r = tr->sfirst[e]; r < tr->sfirst[e + 1]; r++)
      if (st[tr->sthr[r]] < tr->sneed[r]) return 0;
    break;
  default:
    break;
  }
  st[t]++;
  return 1;
}

static int all_finished(const trace *tr, const uint32_t *st) {
  for (uint32_t t = 0; t < tr->T; t++)
    if (st[t] != tr->len[t]) return 0;
  return 1;
}

static int bit_get(const uint32_t *w, size_t i) { return (int)((w[i / 32] >> (i % 32)) & 1u); }
static void bit_set(uint32_t *w, size_t i) { w[i / 32] |= (uint32_t)1 << (i % 32); }
static size_t edge_words(const trace *tr) { return ((size_t)tr->U * tr->U + 31) / 32; }

static int is_write(const trace *tr, uint32_t e) { return tr->ev[e].kind == ATOM_WRITE; }

/* ---- is there an equivalent serial schedule? -------------------------------------------- */

/* Depth-first search over serial schedules: at each step, one thread runs its next unit as a
 * whole, through the machine (so the serial schedule is feasible). conflict mode: a unit may
 * run only after every unit with an edge into it (the given schedule orders a conflicting
 * pair from that unit to this one). view mode: every READ must read what it read in the given
 * schedule, and at the end the last writes must be the given final writes. A state that was
 * left without success is never entered again (its key: positions, plus the last writes in
 * view mode). */
typedef struct serial {
  const trace *tr;
  int view;
  layout y;                /* extra: lw[V] in view mode, nothing in conflict mode */
  const uint32_t *edges;   /* conflict: U*U bits, bit u*U+v = edge u -> v */
  const uint32_t *rf;      /* view: per read, the writer event + 1 (0: initial value) */
  const uint32_t *fw;      /* view: per variable, the final writer + 1 (0: none) */
  uint32_t *stack;         /* (U + 1) states */
  kset seen;
  size_t *budget;
} serial;

static int serial_init(serial *sr, const trace *tr, int view, size_t *budget) {
  memset(sr, 0, sizeof *sr);
  sr->tr = tr;
  sr->view = view;
  sr->y = make_layout(tr, view ? tr->V : 0);
  sr->budget = budget;
  kset_init(&sr->seen, sr->y.key);
  sr->stack = malloc(((size_t)tr->U + 1) * sr->y.words * sizeof *sr->stack + 1);
  return sr->stack ? 0 : -1;
}

static void serial_free(serial *sr) {
  free(sr->stack);
  kset_free(&sr->seen);
}

static int serial_dfs(serial *sr, size_t depth) {
  const trace *tr = sr->tr;
  const layout *y = &sr->y;
  uint32_t *st = sr->stack + depth * y->words;
  if (all_finished(tr, st))
    return sr->view ? memcmp(st + tr->T, sr->fw, tr->V * sizeof *sr->fw) == 0 : 1;
  /* If the table cannot grow, search on without it: slower, same answer. */
  if (kset_add(&sr->seen, st, NULL, sr->budget) == 0) return 0;
  for (uint32_t t = 0; t < tr->T; t++) {
    if (!st[y->started + t] || st[t] == tr->len[t]) continue;
    uint32_t u = tr->unit[tr->tev[tr->first[t] + st[t]]], end = tr->uend[u];
    if (!sr->view) {
      int ready = 1;
      for (uint32_t v = 0; v < tr->U && ready; v++)
        if (bit_get(sr->edges, (size_t)v * tr->U + u) && st[tr->uthread[v]] < tr->uend[v])
          ready = 0;
      if (!ready) continue;
    }
    uint32_t *ch = st + y->words;
    memcpy(ch, st, y->words * sizeof *st);
    int ok = 1;
    for (uint32_t k = st[t]; k < end && ok; k++) {
      uint32_t e = tr->tev[tr->first[t] + k];
      ok = machine_step(tr, y, ch, e);
      if (!ok || !sr->view || tr->var[e] == NONE) continue;
      uint32_t *lw = ch + tr->T + tr->var[e];
      if (is_write(tr, e)) *lw = e + 1;
      else ok = *lw == sr->rf[tr->read[e]];
    }
    if (ok && serial_dfs(sr, depth + 1)) return 1;
  }
  return 0;
}

static int serial_conflict(serial *sr, const uint32_t *edges) {
  machine_init(sr->tr, &sr->y, sr->stack);
  kset_clear(&sr->seen);
  sr->edges = edges;
  return serial_dfs(sr, 0);
}

static int serial_view(serial *sr, const uint32_t *rf, const uint32_t *fw) {
  machine_init(sr->tr, &sr->y, sr->stack);
  kset_clear(&sr->seen);
  sr->rf = rf;
  sr->fw = fw;
  return serial_dfs(sr, 0);
}

/* ---- what a schedule determines: unit edges, reads-from, last writes -------------------- */

/* Account for access @p e, which runs after path[0..plen): edges from the units of earlier
 * conflicting accesses of other threads (accesses of one thread are ordered alike in every
 * schedule), its reads-from or the new last write. */
static void note_access(const trace *tr, uint32_t e, const uint32_t *path, size_t plen,
                        uint32_t *edges, uint32_t *rf, uint32_t *lw) {
  uint32_t x = tr->var[e];
  if (x == NONE) return;
  int w = is_write(tr, e);
  for (size_t j = 0; j < plen; j++) {
    uint32_t f = path[j];
    if (tr->var[f] == x && tr->thread[f] != tr->thread[e] && (w || is_write(tr, f)))
      bit_set(edges, (size_t)tr->unit[f] * tr->U + tr->unit[e]);
  }
  if (w) lw[x] = e + 1;
  else rf[tr->read[e]] = lw[x];
}

/* ---- the search over schedules ---------------------------------------------------------- */

typedef struct search {
  const trace *tr;
  layout y;          /* extra: edges[EW] | rf[R] | lw[V] */
  size_t ew;         /* words of the edge set */
  uint32_t *stack;   /* (steps + 1) states */
  uint32_t *path;    /* events run so far */
  size_t plen;
  kset memo;         /* states explored */
  kset ccache;       /* edge set -> conflict-serializable */
  kset vcache;       /* reads-from + final writes -> view-serializable */
  serial sc, sv;
  size_t budget;     /* bytes the tables may still take */
  size_t max, count;
  int stop;
  int nomem;
  il_result *out;
} search;

static uint32_t *edges_of(const search *s, uint32_t *st) { return st + s->tr->T; }
static uint32_t *rf_of(const search *s, uint32_t *st) { return st + s->tr->T + s->ew; }
static uint32_t *lw_of(const search *s, uint32_t *st) {
  return st + s->tr->T + s->ew + s->tr->R;
}

/* Remember @p answer for @p key (if the table may grow) and return it. */
static int remember(search *s, kset *cache, const uint32_t *key, int answer) {
  size_t idx;
  if (kset_add(cache, key, &idx, &s->budget) == 1) cache->val[idx] = (uint8_t)answer;
  return answer;
}

static int decide_conflict(search *s, uint32_t *st) {
  const uint32_t *edges = edges_of(s, st);
  size_t idx = kset_find(&s->ccache, edges);
  if (idx != SIZE_MAX) return s->ccache.val[idx];
  return remember(s, &s->ccache, edges, serial_conflict(&s->sc, edges));
}

static int decide_view(search *s, uint32_t *st) {
  const uint32_t *key = rf_of(s, st); /* rf[R] then lw[V]: contiguous */
  size_t idx = kset_find(&s->vcache, key);
  if (idx != SIZE_MAX) return s->vcache.val[idx];
  return remember(s, &s->vcache, key, serial_view(&s->sv, rf_of(s, st), lw_of(s, st)));
}

static int copy_witness(const search *s, size_t **w, size_t *nw) {
  *w = malloc((s->plen + 1) * sizeof **w);
  if (!*w) return -1;
  for (size_t j = 0; j < s->plen; j++) (*w)[j] = s->path[j];
  *nw = s->plen;
  return 0;
}

static void complete(search *s, uint32_t *st) {
  il_result *out = s->out;
  if (s->count >= s->max) {
    out->truncated = 1;
    s->stop = 1;
    return;
  }
  s->count++;
  if (out->conflict_atomic && !decide_conflict(s, st)) {
    out->conflict_atomic = 0;
    if (copy_witness(s, &out->conflict_witness, &out->n_conflict_witness)) s->nomem = 1;
  }
  if (out->view_atomic && !decide_view(s, st)) {
    out->view_atomic = 0;
    if (copy_witness(s, &out->view_witness, &out->n_view_witness)) s->nomem = 1;
  }
  if ((!out->conflict_atomic && !out->view_atomic) || s->nomem) s->stop = 1;
}

static void schedule_dfs(search *s, size_t depth) {
  const trace *tr = s->tr;
  const layout *y = &s->y;
  uint32_t *st = s->stack + depth * y->words;
  int added = kset_add(&s->memo, st, NULL, &s->budget);
  if (added == 0) return; /* explored already: same futures, same verdicts */
  if (added < 0) {
    s->out->truncated = 1;
    s->stop = 1;
    return;
  }
  if (all_finished(tr, st)) {
    complete(s, st);
    return;
  }
  for (uint32_t t = 0; t < tr->T && !s->stop; t++) {
    if (!st[y->started + t] || st[t] == tr->len[t]) continue;
    uint32_t *ch = st + y->words;
    memcpy(ch, st, y->words * sizeof *st);
    size_t saved = s->plen;
    uint32_t end = tr->gend[tr->first[t] + st[t]];
    int ok = 1;
    for (uint32_t k = st[t]; k < end && ok; k++) {
      uint32_t e = tr->tev[tr->first[t] + k];
      ok = machine_step(tr, y, ch, e);
      if (!ok) break;
      note_access(tr, e, s->path, s->plen, edges_of(s, ch), rf_of(s, ch), lw_of(s, ch));
      s->path[s->plen++] = e;
    }
    if (ok) schedule_dfs(s, depth + 1);
    s->plen = saved;
  }
}

/* ---- deadlocks: the same moves, states are the positions alone -------------------------- */

typedef struct dlsearch {
  const trace *tr;
  layout y;
  uint32_t *stack;
  kset seen;
  size_t *budget;
  int found, stop;
} dlsearch;

static void deadlock_dfs(dlsearch *d, size_t depth) {
  const trace *tr = d->tr;
  const layout *y = &d->y;
  uint32_t *st = d->stack + depth * y->words;
  int added = kset_add(&d->seen, st, NULL, d->budget);
  if (added == 0) return;
  if (added < 0) {
    d->stop = 1;
    return;
  }
  if (all_finished(tr, st)) return;
  int moved = 0;
  for (uint32_t t = 0; t < tr->T && !d->found && !d->stop; t++) {
    if (!st[y->started + t] || st[t] == tr->len[t]) continue;
    uint32_t *ch = st + y->words;
    memcpy(ch, st, y->words * sizeof *st);
    uint32_t end = tr->gend[tr->first[t] + st[t]];
    int ok = 1;
    for (uint32_t k = st[t]; k < end && ok; k++)
      ok = machine_step(tr, y, ch, tr->tev[tr->first[t] + k]);
    if (!ok) continue;
    moved = 1;
    deadlock_dfs(d, depth + 1);
  }
  if (!moved) d->found = 1; /* not finished, and no thread can move */
}

/* ---- public ----------------------------------------------------------------------------- */

void il_result_free(il_result *r) {
  if (!r) return;
  free(r->conflict_witness);
  free(r->view_witness);
  memset(r, 0, sizeof *r);
}

int il_check(const atom_event *ev, size_t n, const il_options *opt, il_result *out) {
  if (!out) return fail("NULL result");
  memset(out, 0, sizeof *out);
  trace *tr;
  if (trace_build(ev, n, &tr)) return -1;
  out->conflict_atomic = out->view_atomic = 1;
  out->n_units = tr->U;

  size_t budget = TABLE_BUDGET;
  int rc = 0;

  /* Deadlocks. */
  dlsearch d;
  memset(&d, 0, sizeof d);
  d.tr = tr;
  d.y = make_layout(tr, 0);
  d.budget = &budget;
  kset_init(&d.seen, d.y.key);
  d.stack = malloc(((size_t)tr->steps + 1) * d.y.words * sizeof *d.stack + 1);
  if (!d.stack) {
    rc = fail("out of memory");
  } else {
    machine_init(tr, &d.y, d.stack);
    deadlock_dfs(&d, 0);
    out->potential_deadlock = d.found;
    if (d.stop && !d.found) out->truncated = 1;
  }
  free(d.stack);
  kset_free(&d.seen);

  /* Verdicts. */
  search s;
  memset(&s, 0, sizeof s);
  s.tr = tr;
  s.ew = edge_words(tr);
  s.y = make_layout(tr, s.ew + tr->R + tr->V);
  s.budget = TABLE_BUDGET;
  s.max = opt && opt->max_interleavings ? opt->max_interleavings : DEFAULT_MAX_INTERLEAVINGS;
  s.out = out;
  kset_init(&s.memo, s.y.key);
  kset_init(&s.ccache, s.ew);
  kset_init(&s.vcache, (size_t)tr->R + tr->V);
  s.stack = malloc(((size_t)tr->steps + 1) * s.y.words * sizeof *s.stack + 1);
  s.path = malloc(((size_t)n + 1) * sizeof *s.path);
  int sc_rc = serial_init(&s.sc, tr, 0, &s.budget);
  int sv_rc = serial_init(&s.sv, tr, 1, &s.budget);
  if (rc == 0 && (!s.stack || !s.path || sc_rc || sv_rc)) rc = fail("out of memory");
  if (rc == 0) {
    machine_init(tr, &s.y, s.stack);
    schedule_dfs(&s, 0);
    out->interleavings = s.count;
    if (s.nomem) rc = fail("out of memory");
  }
  serial_free(&s.sc);
  serial_free(&s.sv);
  kset_free(&s.memo);
  kset_free(&s.ccache);
  kset_free(&s.vcache);
  free(s.stack);
  free(s.path);
  trace_free(tr);
  if (rc) il_result_free(out);
  return rc;
}

/* The summary of a given schedule; -1 if @p order is not a permutation in program order. */
static int schedule_summary(const trace *tr, const size_t *order, size_t len, uint32_t *edges,
                            uint32_t *rf, uint32_t *lw, uint32_t *path) {
  if (len != tr->n) return fail("the schedule has %zu events, the trace %u", len, tr->n);
  if (!order && len > 0) return fail("NULL schedule");
  uint32_t *next = calloc((size_t)tr->T + 1, sizeof *next);
  if (!next) return fail("out of memory");
  int rc = 0;
  for (size_t j = 0; j < len; j++) {
    size_t i = order[j];
    if (i >= tr->n) {
      rc = fail("schedule position %zu: index %zu out of range", j, i);
      break;
    }
    uint32_t t = tr->thread[i];
    if (tr->tev[tr->first[t] + next[t]] != i) {
      rc = fail("schedule position %zu: event %zu out of program order or repeated", j, i);
      break;
    }
    next[t]++;
    note_access(tr, (uint32_t)i, path, j, edges, rf, lw);
    path[j] = (uint32_t)i;
  }
  free(next);
  return rc;
}

static int decide_one(const atom_event *ev, size_t n, const size_t *order, size_t len, int view) {
  trace *tr;
  if (trace_build(ev, n, &tr)) return -1;
  size_t ew = edge_words(tr), budget = TABLE_BUDGET;
  uint32_t *block = calloc(ew + tr->R + tr->V + n + 1, sizeof *block), *w = block;
  uint32_t *edges = CARVE(w, ew), *rf = CARVE(w, tr->R), *lw = CARVE(w, tr->V);
  uint32_t *path = CARVE(w, n);
  serial sr;
  int rc = serial_init(&sr, tr, view, &budget);
  if (rc || !block) rc = fail("out of memory");
  if (rc == 0) rc = schedule_summary(tr, order, len, edges, rf, lw, path);
  if (rc == 0) rc = view ? serial_view(&sr, rf, lw) : serial_conflict(&sr, edges);
  serial_free(&sr);
  free(block);
  trace_free(tr);
  return rc;
}

int il_schedule_conflict_serializable(const atom_event *ev, size_t n, const size_t *order,
                                      size_t len) {
  return decide_one(ev, n, order, len, 0);
}

int il_schedule_view_serializable(const atom_event *ev, size_t n, const size_t *order,
                                  size_t len) {
  return decide_one(ev, n, order, len, 1);
}
