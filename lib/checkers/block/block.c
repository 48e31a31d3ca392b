/* block: view-atomicity by blocks and 2-blocks (Wang & Stoller, 000 §5).
 *
 * The checker is offline: on_event() only records, per unit, its accesses and lock operations
 * with the thread period of each (support/periods.h); finish() decides and frees everything.
 *
 * Units follow the conventions of 004 §2 that the corpus and the reference use: a thread is
 * *inside* while it has an open transaction or holds a lock; a unit runs from the event that
 * takes it inside to the event that takes it outside (so a lock block outside every
 * transaction is a transaction, and a transaction and a lock block that overlap are one unit);
 * every event at which a thread stays outside is a unary unit. FORK and JOIN inside a unit
 * belong to it.
 *
 * scope=pairs (000 §5.3, isAtomic-2Trans and Thm 5.4), for every two units of different threads
 * that fork/join leaves concurrent:
 *  - blocks (B1-B3) of one against the accesses of the other (isAtomicBlk): UP1-UP4, feasible
 *    when h12 ∩ held(e') = ∅ (Thm 5.1);
 *  - 2-blocks (2B1-2B2) of uninitialized reads and final writes (isAtomic2Blk): non-atomic when
 *    an interleaving of the derived table (atom__blk_2blk_mask) is feasible.
 * The paper's model has no fork/join. When fork/join or sync order (periods.h), or a lock one
 * unit never releases, orders some events of t before events of t' without ordering the whole units, one serial
 * order at most is feasible and Thm 5.1 no longer decides feasibility; such pairs are decided
 * exactly on the two-dimensional progress graph of the pair (forced_pair()).
 *
 * scope=all adds 000 §5.4: the UR-FW projections (uninitialized reads, final writes, lock
 * operations) of each group of related units are interleaved in every feasible way, up to
 * max_interleavings, and each interleaving is checked for view serializability
 * (analyse_all()). max_work bounds the steps of all groups together.
 *
 * A pair or group that a bound leaves undecided is never reported as a violation: the checker
 * becomes INCOMPLETE (atom_env_incomplete) with the first such reason and their count.
 *
 * Deduplication: units with the same thread, periods, begin location and lock usage form a
 * *site*; blocks, accesses and 2-blocks are kept once per site and content, so a loop that
 * repeats a transaction costs one set of tuples, and the pair analysis runs over sites. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"
#include "checkers/builtin.h"
#include "support/argval.h"
#include "support/msgbuf.h"
#include "support/lockset.h"
#include "support/periods.h"
#include "support/u64map.h"

#define NONE32 UINT32_MAX

/* ---- 2-block table (000 §5.3, derived) ----------------------------------------------------- */

static const char *const blk_orders[ATOM__BLK_ORDERS] = {"AACC", "ACAC", "ACCA",
                                                         "CAAC", "CACA", "CCAA"};

const char *atom__blk_order_name(unsigned order) {
  return order < ATOM__BLK_ORDERS ? blk_orders[order] : NULL;
}

/* Events 0, 1 are e1, e2 of b; 2, 3 are e1', e2' of b'. The view of a sequence: for each read
 * the event it reads from (-1: initial value), for each variable its final write (-1: none). */
static void view_of(const unsigned seq[4], const unsigned op[4], const unsigned var[4],
                    int rf[4], int fin[2]) {
  int last[2] = {-1, -1};
  for (unsigned i = 0; i < 4; i++) rf[i] = -2;
  for (unsigned k = 0; k < 4; k++) {
    unsigned e = seq[k];
    if (op[e] == ATOM__BLK_R) rf[e] = last[var[e]];
    else last[var[e]] = (int)e;
  }
  fin[0] = last[0];
  fin[1] = last[1];
}

static void order_seq(unsigned order, unsigned seq[4]) {
  unsigned a = 0, c = 2;
  for (unsigned k = 0; k < 4; k++) seq[k] = blk_orders[order][k] == 'A' ? a++ : c++;
}

/* 000 §5.3: "All four events in the pair of blocks must be considered." An order is in the
 * table iff its reads-from and final writes differ from those of both serial orders (view
 * equivalence, 000 §3, restricted to the four events; every event of a 2-block is an
 * uninitialized read or a final write, so what happens around them in t and t' cannot change
 * the comparison). */
unsigned atom__blk_2blk_mask(unsigned shape) {
  unsigned op[4], var[4];
  for (unsigned i = 0; i < 4; i++) op[i] = shape >> i & 1u;
  unsigned crossed = shape >> 4 & 1u;
  var[0] = 0;
  var[1] = 1;
  var[2] = crossed ? 1 : 0;
  var[3] = crossed ? 0 : 1;
  int rf[2][4], fin[2][2];
  unsigned seq[4];
  order_seq(0, seq);
  view_of(seq, op, var, rf[0], fin[0]);
  order_seq(ATOM__BLK_ORDERS - 1, seq);
  view_of(seq, op, var, rf[1], fin[1]);
  unsigned mask = 0;
  for (unsigned o = 0; o < ATOM__BLK_ORDERS; o++) {
    int r[4], f[2];
    order_seq(o, seq);
    view_of(seq, op, var, r, f);
    int same_as_serial = 0;
    for (unsigned s = 0; s < 2; s++)
      if (memcmp(r, rf[s], sizeof r) == 0 && memcmp(f, fin[s], sizeof f) == 0) same_as_serial = 1;
    if (!same_as_serial) mask |= 1u << o;
  }
  return mask;
}

/* ---- types -------------------------------------------------------------------------------- */

enum { RK_READ = 0, RK_WRITE = 1, RK_ACQ = 2, RK_REL = 3 };
#define PERIOD_LIMIT (UINT32_MAX >> 2)

/* One event of a unit's log. */
typedef struct bk_rec {
  uint64_t index;
  uint64_t loc;
  uint32_t target; /* variable or lock */
  uint32_t kp;     /* kind | period << 2 */
} bk_rec;

static inline uint32_t rec_kind(const bk_rec *r) { return r->kp & 3u; }
static inline uint32_t rec_period(const bk_rec *r) { return r->kp >> 2; }

typedef struct bk_unit {
  uint64_t begin_index, begin_loc;
  uint64_t off; /* first record in the log */
  uint32_t len;
  uint32_t thread;
  uint32_t pfirst, plast; /* thread periods of its first and last event */
  uint32_t site;
  uint32_t unary; /* bit 0: a unary unit; bit 1: still open when the trace ended */
  atom__ls used;   /* locks it acquires */
  atom__ls forever; /* locks it still holds when its thread's events end (never released) */
} bk_unit;

typedef struct bk_thread {
  bk_rec *buf; /* the open unit's records */
  size_t n, cap;
  uint64_t begin_index, begin_loc;
  uint32_t pfirst;
  uint32_t in_txn, nheld, open;
  uint32_t lock_only; /* lock_blocks=no: the open unit is a lock block with no transaction */
} bk_thread;

typedef struct bk_var {
  uint32_t thread_plus1; /* first thread that accessed it */
  uint8_t multi;         /* accessed by two threads or more */
  uint8_t written;
  uint8_t pad[2];
} bk_var;

/* Open-addressing set of fixed-size keys (kw words), items numbered in insertion order. */
typedef struct bk_tset {
  uint32_t kw;
  uint32_t *keys;
  size_t n, kcap; /* items; capacity in words */
  uint32_t *slot; /* item + 1, 0 = empty */
  uint32_t *shash; /* high half of the hash of the slot's key: most probes end here */
  size_t nslot;
} bk_tset;

/* Tuple keys (8 words): type, site, var x, var y (or 0), flags, h1, h2, h12. */
enum { TU_BLOCK = 1, TU_ACCESS = 2, TU_2BLK = 3 };
enum { K_TYPE, K_SITE, K_X, K_Y, K_FLAGS, K_H1, K_H2, K_H12, KW_TUPLE };
/* flags of a block: op1 | op2 << 1 | fw1 << 2 | fw2 << 3; of an access: op | fw << 1 |
 * ur << 2 (an uninitialized read); of a 2-block: op1 | op2 << 1. */

/* Where a tuple was first seen: unit and positions of its events in the unit's log. */
typedef struct bk_rep {
  uint32_t unit, p1, p2;
} bk_rep;

/* Site keys (8 words): thread, pfirst, plast, unary, begin_loc low, high, locks used, locks
 * held for good. */
enum { KW_SITE = 8 };

typedef struct block {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int scope_all;
  int lock_blocks; /* a lock block outside transactions is a unit (004 §2); else unary events */
  uint64_t max_il;
  uint64_t max_work;  /* scope=all: steps of all groups together */
  uint64_t events;    /* 1 + the largest event index seen: where an end-of-run bound stops */
  uint64_t undecided; /* pairs and groups a bound left undecided */
  char undecided_why[400]; /* the first one's reason */
  atom__periods periods;
  bk_thread *th;
  size_t th_cap;
  bk_var *var;
  size_t var_cap;
  uint32_t nlocks; /* 1 + largest lock id seen */
  bk_rec *log;
  size_t log_n, log_cap;
  bk_unit *unit;
  size_t unit_n, unit_cap;
  uint32_t *fj; /* (thread, other thread) of every FORK and JOIN, for scope=all */
  size_t fj_n, fj_cap;
  int analysed;
  /* analysis */
  atom__lsets ls;
  bk_tset sites;
  uint32_t *site_rep; /* first unit of each site */
  size_t site_rep_cap;
  uint8_t *site_bad; /* a pair of this site was reported */
  size_t site_bad_cap;
  uint8_t *unit_bad; /* this unit is in a reported pair */
  size_t unit_bad_cap;
  atom__u64map seen; /* findings made so far (fresh()): a repeat is not a new interleaving */
  /* One report per pair of transactions: findings of two units (patterns, 2-blocks, fork/join
   * orders) are grouped by the pair of begin locations and reported together at the end of the
   * pair analysis (group_emit). */
  struct bk_group *grp;
  size_t grp_n, grp_cap;
  atom__u64map grp_of;   /* hash of the begin locations -> group (probing on collision) */
  atom__u64map grp_pair; /* (group, unit pair) seen: the group's occurrences */
  uint64_t work;         /* units of end-of-run work done, for atom_env_progress */
  uint64_t work_base;    /* where the current phase starts in work_total */
  uint64_t work_total;   /* tuples (pairs) + sites (forced pairs) + units (scope=all) */
  bk_tset tup;
  bk_rep *rep;
  size_t rep_cap;
  unsigned tbl[ATOM__BLK_SHAPES];
  uint64_t tuples_built, units_done, periods_done; /* for stats() after finish */
} block;

/* ---- small containers ---------------------------------------------------------------------- */

static uint64_t key_hash(const uint32_t *k, unsigned kw) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ kw;
  for (unsigned i = 0; i < kw; i++) h = atom__hash64(h ^ ((uint64_t)k[i] * 0x632be59bd9b4e019ull + i));
  return h;
}

static void tset_init(bk_tset *s, unsigned kw) {
  memset(s, 0, sizeof *s);
  s->kw = kw;
}

static void tset_free(atom__mem *m, bk_tset *s) {
  atom__mem_free(m, s->keys, s->kcap * sizeof *s->keys);
  atom__mem_free(m, s->slot, s->nslot * sizeof *s->slot);
  atom__mem_free(m, s->shash, s->nslot * sizeof *s->shash);
  tset_init(s, s->kw);
}

static int tset_rehash(atom__mem *m, bk_tset *s, size_t nslot) {
  uint32_t *sl = atom__mem_calloc(m, nslot, sizeof *sl);
  uint32_t *sh = atom__mem_alloc(m, nslot * sizeof *sh);
  if (!sl || !sh) {
    atom__mem_free(m, sl, nslot * sizeof *sl);
    atom__mem_free(m, sh, nslot * sizeof *sh);
    return ATOM_ENOMEM;
  }
  for (size_t i = 0; i < s->n; i++) {
    uint64_t h = key_hash(s->keys + i * s->kw, s->kw);
    size_t j = (size_t)h & (nslot - 1);
    while (sl[j]) j = (j + 1) & (nslot - 1);
    sl[j] = (uint32_t)i + 1;
    sh[j] = (uint32_t)(h >> 32);
  }
  atom__mem_free(m, s->slot, s->nslot * sizeof *s->slot);
  atom__mem_free(m, s->shash, s->nslot * sizeof *s->shash);
  s->slot = sl;
  s->shash = sh;
  s->nslot = nslot;
  return 0;
}

/* *item := the item with this key; added (and *added = 1) if it was not there. */
static int tset_add(atom__mem *m, bk_tset *s, const uint32_t *key, uint32_t *item, int *added) {
  *added = 0;
  if ((s->n + 1) * 2 > s->nslot && tset_rehash(m, s, s->nslot ? s->nslot * 2 : 64))
    return ATOM_ENOMEM;
  size_t mask = s->nslot - 1;
  uint64_t h = key_hash(key, s->kw);
  size_t j = (size_t)h & mask;
  for (; s->slot[j]; j = (j + 1) & mask) {
    uint32_t it = s->slot[j] - 1;
    if (s->shash[j] == (uint32_t)(h >> 32) &&
        memcmp(s->keys + (size_t)it * s->kw, key, s->kw * sizeof *key) == 0) {
      *item = it;
      return 0;
    }
  }
  if (s->n >= UINT32_MAX - 2) return ATOM_ELIMIT;
  if (ATOM__GROW(m, s->keys, s->kcap, (s->n + 1) * s->kw)) return ATOM_ENOMEM;
  memcpy(s->keys + s->n * s->kw, key, s->kw * sizeof *key);
  s->slot[j] = (uint32_t)s->n + 1;
  s->shash[j] = (uint32_t)(h >> 32);
  *item = (uint32_t)s->n++;
  *added = 1;
  return 0;
}

static inline const uint32_t *tkey(const bk_tset *s, uint32_t item) {
  return s->keys + (size_t)item * s->kw;
}


/* ---- recording ------------------------------------------------------------------------------ */

static int ensure_thread(block *b, uint32_t t) {
  if (t < b->th_cap) return 0;
  return ATOM__GROW(b->mem, b->th, b->th_cap, (size_t)t + 1);
}

static int cur_period(block *b, uint32_t t, uint32_t *p) {
  int rc = atom__periods_of(&b->periods, t, p);
  if (rc) return rc;
  if (*p > PERIOD_LIMIT) return atom_env_error(b->env, ATOM_ELIMIT, "too many thread periods");
  return 0;
}

static int buf_append(block *b, bk_thread *th, uint32_t kind, uint32_t target, const atom_ev *ev,
                      uint32_t period) {
  if (th->n == th->cap && ATOM__GROW(b->mem, th->buf, th->cap, th->n + 1)) return ATOM_ENOMEM;
  th->buf[th->n++] = (bk_rec){ev->index, ev->loc, target, kind | period << 2};
  return 0;
}

static void unit_open(bk_thread *th, const atom_ev *ev, uint32_t period) {
  th->open = 1;
  th->n = 0;
  th->begin_index = ev->index;
  th->begin_loc = ev->loc;
  th->pfirst = period;
}

/* Store a finished unit: its records go to the log. */
static int unit_store(block *b, uint32_t t, const bk_rec *recs, size_t n, uint64_t begin_index,
                      uint64_t begin_loc, uint32_t pfirst, uint32_t plast, int unary, int open) {
  if (n > UINT32_MAX) return atom_env_error(b->env, ATOM_ELIMIT, "transaction too long");
  if (b->unit_n >= UINT32_MAX - 1) return atom_env_error(b->env, ATOM_ELIMIT, "too many units");
  if (ATOM__GROW(b->mem, b->unit, b->unit_cap, b->unit_n + 1)) return ATOM_ENOMEM;
  if (n && ATOM__GROW(b->mem, b->log, b->log_cap, b->log_n + n)) return ATOM_ENOMEM;
  if (n) memcpy(b->log + b->log_n, recs, n * sizeof *recs);
  bk_unit *u = &b->unit[b->unit_n++];
  *u = (bk_unit){begin_index, begin_loc, b->log_n, (uint32_t)n, t, pfirst, plast, 0,
                 (uint32_t)unary | (uint32_t)open << 1, ATOM__LS_EMPTY, ATOM__LS_EMPTY};
  b->log_n += n;
  return 0;
}

/* lock_blocks=no: a lock block outside transactions is not atomic, so each of its accesses is
 * a unary unit; but the unit keeps the acquisitions and releases of the locks held at that
 * access, so that its held set, which decides feasibility (000 Thm 5.1), stays exact. */
static int split_lock_block(block *b, uint32_t t, bk_thread *th, int open) {
  size_t n = th->n;
  uint32_t *match = NULL, *stack = NULL; /* match[acq] = position of its release, or n */
  bk_rec *piece = NULL;
  int rc = 0;
  if (!n) return 0;
  if (!(match = atom__mem_alloc(b->mem, n * sizeof *match)) ||
      !(stack = atom__mem_alloc(b->mem, n * sizeof *stack)) ||
      !(piece = atom__mem_alloc(b->mem, (2 * n + 1) * sizeof *piece))) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  size_t depth = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = rec_kind(&th->buf[i]);
    if (k == RK_ACQ) {
      match[i] = (uint32_t)n;
      stack[depth++] = (uint32_t)i;
    } else if (k == RK_REL) {
      size_t j = depth;
      while (j > 0 && th->buf[stack[j - 1]].target != th->buf[i].target) j--;
      if (j == 0) continue;
      match[stack[j - 1]] = (uint32_t)i;
      for (; j < depth; j++) stack[j - 1] = stack[j];
      depth--;
    }
  }
  depth = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const bk_rec *r = &th->buf[i];
    uint32_t k = rec_kind(r);
    if (k == RK_ACQ) {
      stack[depth++] = (uint32_t)i;
      continue;
    }
    if (k == RK_REL) {
      size_t j = depth;
      while (j > 0 && th->buf[stack[j - 1]].target != r->target) j--;
      if (j == 0) continue;
      for (; j < depth; j++) stack[j - 1] = stack[j];
      depth--;
      continue;
    }
    size_t m = 0;
    for (size_t j = 0; j < depth; j++) piece[m++] = th->buf[stack[j]];
    piece[m++] = *r;
    for (size_t j = depth; j-- > 0;) /* releases in the order they happen */
      if (match[stack[j]] < n) piece[m++] = th->buf[match[stack[j]]];
    for (size_t a = depth + 1; a + 1 < m; a++) /* insertion sort: depth is small */
      for (size_t c = a + 1; c > depth + 1 && piece[c].index < piece[c - 1].index; c--) {
        bk_rec x = piece[c];
        piece[c] = piece[c - 1];
        piece[c - 1] = x;
      }
    int forever = 0; /* it keeps a lock for good: the trace ended inside the block */
    for (size_t j = 0; j < depth; j++) forever |= open && match[stack[j]] == n;
    rc = unit_store(b, t, piece, m, r->index, r->loc, rec_period(&piece[0]),
                    rec_period(&piece[m - 1]), 1, forever);
  }
out:
  atom__mem_free(b->mem, match, n * sizeof *match);
  atom__mem_free(b->mem, stack, n * sizeof *stack);
  atom__mem_free(b->mem, piece, (2 * n + 1) * sizeof *piece);
  return rc;
}

/* open: the unit is still open when the trace ends (its thread keeps a lock for good). */
static int unit_close(block *b, uint32_t t, bk_thread *th, uint32_t period, int open) {
  th->open = 0;
  if (th->lock_only) {
    th->lock_only = 0;
    return split_lock_block(b, t, th, open);
  }
  return unit_store(b, t, th->buf, th->n, th->begin_index, th->begin_loc, th->pfirst, period, 0,
                    open);
}

static int note_var(block *b, uint32_t x, uint32_t t, int write) {
  if (x >= b->var_cap && ATOM__GROW(b->mem, b->var, b->var_cap, (size_t)x + 1)) return ATOM_ENOMEM;
  bk_var *v = &b->var[x];
  if (!v->thread_plus1) v->thread_plus1 = t + 1;
  else if (v->thread_plus1 != t + 1) v->multi = 1;
  if (write) v->written = 1;
  return 0;
}

static int note_fj(block *b, uint32_t t, uint32_t u) {
  if (ATOM__GROW(b->mem, b->fj, b->fj_cap, b->fj_n + 2)) return ATOM_ENOMEM;
  b->fj[b->fj_n++] = t;
  b->fj[b->fj_n++] = u;
  return 0;
}

static int bk_event(void *self, const atom_ev *ev) {
  block *b = self;
  uint32_t t = ev->thread, p;
  int rc;
  if (b->analysed) return 0;
  if (ev->index >= b->events) b->events = ev->index + 1;
  if ((rc = ensure_thread(b, t))) return rc;
  bk_thread *th = &b->th[t];
  switch (ev->kind) {
  case ATOM_BEGIN:
    if ((rc = cur_period(b, t, &p))) return rc;
    if (!th->open) unit_open(th, ev, p);
    th->lock_only = 0; /* a transaction inside a lock block extends over the block */
    th->in_txn = 1;
    return 0;
  case ATOM_END:
    th->in_txn = 0;
    if (th->open && th->nheld == 0) {
      if ((rc = cur_period(b, t, &p))) return rc;
      return unit_close(b, t, th, p, 0);
    }
    return 0;
  case ATOM_ACQUIRE: {
    /* The inside/outside state changes whatever fails below: the unit structure stays right,
     * only a record may be missing after ATOM_ENOMEM. */
    if ((rc = cur_period(b, t, &p))) return rc;
    if (ev->target >= b->nlocks) b->nlocks = ev->target + 1;
    if (!th->open) {
      unit_open(th, ev, p);
      th->lock_only = !b->lock_blocks;
    }
    th->nheld++;
    return buf_append(b, th, RK_ACQ, ev->target, ev, p);
  }
  case ATOM_RELEASE: {
    if ((rc = cur_period(b, t, &p))) return rc;
    if (th->nheld) th->nheld--;
    int e1 = th->open ? buf_append(b, th, RK_REL, ev->target, ev, p) : 0;
    int e2 = th->open && th->nheld == 0 && !th->in_txn ? unit_close(b, t, th, p, 0) : 0;
    return e1 ? e1 : e2;
  }
  case ATOM_READ:
  case ATOM_WRITE: {
    /* Sync order (periods.h): an acquire read is the first event of the period that follows
     * the variable's releases, a release write the last event of its period. */
    if ((ev->flags & ATOM_EV_ACQUIRE) &&
        (rc = atom__periods_acquire(&b->periods, t, ev->target, NULL)))
      return rc;
    if ((rc = cur_period(b, t, &p))) return rc;
    if ((rc = note_var(b, ev->target, t, ev->kind == ATOM_WRITE))) return rc;
    /* scope=all: threads that synchronize through a variable are related like fork/join. */
    if (b->scope_all && (ev->flags & (ATOM_EV_ACQUIRE | ATOM_EV_RELEASE)) &&
        b->var[ev->target].thread_plus1 != t + 1 &&
        (rc = note_fj(b, t, b->var[ev->target].thread_plus1 - 1)))
      return rc;
    uint32_t k = ev->kind == ATOM_WRITE ? RK_WRITE : RK_READ;
    if (th->open) {
      rc = buf_append(b, th, k, ev->target, ev, p);
    } else {
      bk_rec r = {ev->index, ev->loc, ev->target, k | p << 2};
      rc = unit_store(b, t, &r, 1, ev->index, ev->loc, p, p, 1, 0);
    }
    if (!rc && (ev->flags & ATOM_EV_RELEASE))
      rc = atom__periods_release(&b->periods, t, ev->target);
    return rc;
  }
  case ATOM_FORK:
    /* The fork is the last event of the forker's period (periods.h). */
    if ((rc = cur_period(b, t, &p)) || (rc = atom__periods_fork(&b->periods, t, ev->target)))
      return rc;
    if (b->scope_all && (rc = note_fj(b, t, ev->target))) return rc;
    if (!th->open) return unit_store(b, t, NULL, 0, ev->index, ev->loc, p, p, 1, 0);
    return 0;
  case ATOM_JOIN:
    /* The join is the first event of the joiner's new period. */
    if ((rc = atom__periods_join(&b->periods, t, ev->target)) || (rc = cur_period(b, t, &p)))
      return rc;
    if (b->scope_all && (rc = note_fj(b, t, ev->target))) return rc;
    if (!th->open) return unit_store(b, t, NULL, 0, ev->index, ev->loc, p, p, 1, 0);
    return 0;
  case ATOM_FENCE:
    if (th->open) return 0;
    if ((rc = cur_period(b, t, &p))) return rc;
    return unit_store(b, t, NULL, 0, ev->index, ev->loc, p, p, 1, 0);
  default:
    return 0;
  }
}

/* ---- analysis: common helpers -------------------------------------------------------------- */

static inline const bk_rec *urec(const block *b, uint32_t u, uint32_t pos) {
  return &b->log[b->unit[u].off + pos];
}

/* Is x accessed by two threads, one of them writing? Only such variables can make a pair of
 * transactions non-atomic. */
static inline int shared_var(const block *b, uint32_t x) {
  return x < b->var_cap && b->var[x].multi && b->var[x].written;
}

enum { REL_SAME, REL_ORDERED, REL_FREE, REL_FWD, REL_BWD, REL_NESTED };

/* Fork/join relation of units u and v (004 §7.4 periods): REL_ORDERED when one ends before the
 * other starts in every schedule, REL_FREE when no event of one must precede an event of the
 * other, REL_FWD when some event of u must precede some event of v (but not all of u all of v),
 * REL_BWD the converse, REL_NESTED both. */
static int relation(const block *b, const bk_unit *u, const bk_unit *v) {
  if (u->thread == v->thread) return REL_SAME;
  const atom__periods *ps = &b->periods;
  if (atom__periods_before(ps, u->plast, v->pfirst) || atom__periods_before(ps, v->plast, u->pfirst))
    return REL_ORDERED;
  int fwd = atom__periods_before(ps, u->pfirst, v->plast);
  int bwd = atom__periods_before(ps, v->pfirst, u->plast);
  /* A unit that keeps a lock for good forces every other unit that takes the lock to do so
   * before it (any other schedule deadlocks; 004 §2 counts only complete schedules). */
  if (u->forever != ATOM__LS_EMPTY && !atom__ls_disjoint(&b->ls, u->forever, v->used)) bwd = 1;
  if (v->forever != ATOM__LS_EMPTY && !atom__ls_disjoint(&b->ls, v->forever, u->used)) fwd = 1;
  return fwd && bwd ? REL_NESTED : fwd ? REL_FWD : bwd ? REL_BWD : REL_FREE;
}

static void txn_ref(const block *b, uint32_t u, atom_txn_ref *out) {
  const bk_unit *un = &b->unit[u];
  *out = (atom_txn_ref){un->thread, un->unary & 1u, un->begin_index, un->begin_loc};
}

static atom_ev rec_ev(const block *b, uint32_t u, uint32_t pos) {
  const bk_rec *r = urec(b, u, pos);
  static const uint32_t kinds[4] = {ATOM_READ, ATOM_WRITE, ATOM_ACQUIRE, ATOM_RELEASE};
  return (atom_ev){kinds[rec_kind(r)], b->unit[u].thread, r->target, 0, r->index, r->loc};
}

static void label_txn(const block *b, uint32_t u, char *buf, size_t size) {
  char name[64];
  const bk_unit *un = &b->unit[u];
  atom_env_label(b->env, ATOM_SPACE_THREAD, un->thread, name, sizeof name);
  snprintf(buf, size, "%s@%" PRIu64, name, un->begin_index);
}



/* Report: kind, the transactions (u first), witness events, the message template (version 2:
 * {tN} {hN} {eN} {vN}, rendered by the session). The dedup signature is the session's (kind,
 * begin locations) plus extra: 0 for the pair reports, so one pair of transactions is one
 * report. */
static int report(block *b, const char *kind, const uint32_t *units, size_t nu, const atom_ev *evs,
                  size_t ne, const char *msg, uint64_t extra) {
  atom_txn_ref refs[64];
  uint32_t vars[8];
  size_t nv = 0;
  if (nu > 64) nu = 64;
  for (size_t i = 0; i < nu; i++) txn_ref(b, units[i], &refs[i]);
  uint64_t last = 0;
  for (size_t i = 0; i < nu; i++)
    if (b->unit[units[i]].begin_index > last) last = b->unit[units[i]].begin_index;
  for (size_t i = 0; i < ne; i++) {
    if (evs[i].index > last) last = evs[i].index;
    if (evs[i].kind == ATOM_READ || evs[i].kind == ATOM_WRITE) {
      size_t k = 0;
      while (k < nv && vars[k] != evs[i].target) k++;
      if (k == nv && nv < 8) vars[nv++] = evs[i].target;
    }
  }
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.flags = ATOM_REPORT_PREDICTED; /* a feasible interleaving, not the observed one */
  spec.kind = kind;
  spec.event_index = last;
  spec.txns = refs;
  spec.n_txns = nu;
  spec.events = evs;
  spec.n_events = ne;
  spec.vars = nv ? vars : NULL;
  spec.n_vars = nv;
  spec.message = msg;
  spec.signature_extra = extra;
  return atom_env_report(b->env, &spec);
}

/* Keep msg (truncated) as the reason the checker gives. */
static void set_why(block *b, const char *msg) {
  size_t n = strlen(msg);
  if (n >= sizeof b->undecided_why) n = sizeof b->undecided_why - 1;
  memcpy(b->undecided_why, msg, n);
  b->undecided_why[n] = '\0';
}

/* A bound left a pair or group undecided: no report (an undecided search is not a violation);
 * the checker ends INCOMPLETE with the first reason and the count (bk_finish). */
static int undecided(block *b, const char *msg) {
  if (b->undecided++ == 0) set_why(b, msg);
  return 0;
}

/* Is this the first report with this signature? Only then is its message worth formatting (a
 * repeated one only counts an occurrence in the session). */
static int fresh(block *b, const char *kind, const uint32_t *units, size_t nu, const atom_ev *evs,
                 size_t ne, uint64_t pattern) {
  uint64_t locs[64], h = 0x51;
  if (nu > 64) nu = 64;
  for (size_t i = 0; i < nu; i++) {
    size_t j = i;
    for (; j > 0 && locs[j - 1] > b->unit[units[i]].begin_loc; j--) locs[j] = locs[j - 1];
    locs[j] = b->unit[units[i]].begin_loc;
  }
  for (const char *p = kind; *p; p++) h = atom__hash_mix(h, (unsigned char)*p);
  for (size_t i = 0; i < nu; i++) h = atom__hash_mix(h, locs[i]);
  h = atom__hash_mix(h, pattern);
  for (size_t i = 0; i < ne; i++) h = atom__hash_mix(h, evs[i].loc);
  uint32_t v;
  if (atom__u64map_get(&b->seen, h, &v)) return 0;
  (void)atom__u64map_put(&b->seen, b->mem, h, 1); /* on failure the message is just made again */
  return 1;
}

static void mark_bad(block *b, uint32_t u) {
  uint32_t s = b->unit[u].site;
  if (s < b->site_bad_cap) b->site_bad[s] = 1;
  if (u < b->unit_bad_cap) b->unit_bad[u] = 1;
}

/* ---- one report per pair of transactions ---------------------------------------------------
 *
 * The pair analysis finds a violation of two transactions as several findings (a pattern per
 * variable, 2-blocks, fork/join orders). A user acts on the pair, so they are grouped by the
 * pair of begin locations (the session's signature of the report) and reported once, at the
 * end of the pair analysis: the witness events of the smallest finding (earliest last event),
 * the number of the others in the message, and one occurrence per pair of units. */

/* Patterns of a pair that fork/join partly orders (forced_pair). */
enum { FJ_NESTED = 1, FJ_READ_LATER, FJ_OVERWRITTEN, FJ_EARLY_READ, FJ_FINAL_WRITE, FJ_NO_SERIAL };

/* What a finding says, for its message (group_message). */
enum {
  W_UP1 = 0, W_UP2, W_UP3, W_UP4, /* a block of t0 and an access of t1 (000 §5.2 UP1-UP4) */
  W_2BLK = 8,                     /* two 2-blocks (000 §5.3) */
  W_FJ = 16                       /* + FJ_* (forced_pair) */
};

typedef struct bk_group {
  uint64_t loc[2];   /* the two begin locations, sorted: the key */
  const char *kind;  /* of the shown finding */
  uint32_t units[2]; /* of the shown finding, in its role order */
  atom_ev ev[4];
  uint32_t ne, what;
  uint64_t last;     /* largest event index of the shown finding */
  uint64_t findings; /* distinct findings */
  uint64_t pairs;    /* distinct pairs of units: the report's occurrences */
} bk_group;

/* Record a finding of units[0], units[1] (different threads). */
static int finding(block *b, const char *kind, unsigned what, const uint32_t units[2],
                   const atom_ev *evs, size_t ne, uint64_t pattern) {
  int distinct = fresh(b, kind, units, 2, evs, ne, pattern);
  uint64_t la = b->unit[units[0]].begin_loc, lb = b->unit[units[1]].begin_loc;
  uint64_t lo = la < lb ? la : lb, hi = la < lb ? lb : la;
  uint64_t last = b->unit[units[0]].begin_index;
  if (b->unit[units[1]].begin_index > last) last = b->unit[units[1]].begin_index;
  for (size_t i = 0; i < ne; i++)
    if (evs[i].index > last) last = evs[i].index;
  uint64_t key = atom__hash_mix(atom__hash_mix(0xb10c, lo), hi);
  uint32_t at;
  while (atom__u64map_get(&b->grp_of, key, &at) &&
         (b->grp[at].loc[0] != lo || b->grp[at].loc[1] != hi))
    key = atom__hash64(key + 1); /* a hash collision: probe on */
  bk_group *g;
  if (!atom__u64map_get(&b->grp_of, key, &at)) {
    if (b->grp_n >= UINT32_MAX - 1 || ATOM__GROW(b->mem, b->grp, b->grp_cap, b->grp_n + 1) ||
        atom__u64map_put(&b->grp_of, b->mem, key, (uint32_t)b->grp_n))
      return ATOM_ENOMEM;
    at = (uint32_t)b->grp_n++;
    g = &b->grp[at];
    memset(g, 0, sizeof *g);
    g->loc[0] = lo;
    g->loc[1] = hi;
    g->last = UINT64_MAX;
  }
  g = &b->grp[at];
  if (distinct || g->findings == 0) {
    g->findings++;
    if (last < g->last) {
      g->kind = kind;
      g->units[0] = units[0];
      g->units[1] = units[1];
      g->ne = (uint32_t)(ne < 4 ? ne : 4);
      if (g->ne) memcpy(g->ev, evs, g->ne * sizeof *evs); /* evs may be NULL when ne is 0 */
      g->what = what;
      g->last = last;
    }
  }
  uint32_t u = units[0] < units[1] ? units[0] : units[1], v = units[0] ^ units[1] ^ u;
  uint64_t pk = atom__hash_mix(atom__hash_mix(atom__hash_mix(0x9a17, at), u), v);
  uint32_t seen;
  if (!atom__u64map_get(&b->grp_pair, pk, &seen)) {
    if (atom__u64map_put(&b->grp_pair, b->mem, pk, 1)) return ATOM_ENOMEM;
    g->pairs++;
  }
  return 0;
}

/* The message template of a group: plain words, one notation ({tN} {hN} {eN}, core/format.c). */
static void group_message(const bk_group *g, char *msg, size_t size) {
  static const char *const up[4] = {
      "{e1} can run between {e0} and {e2}, and reads a value {h0} is still changing",
      "{e1} can run between {e0} and {e2}, so that the two reads see different values",
      "{e1} can run between {e0} and {e2}, so that the read does not see the write before it",
      ("{e1} can run between {e0} and {e2}, so that {h1}'s write is lost and {h0} writes from a "
       "stale read")};
  static const char *const fj = "fork and join make {h0} go first";
  size_t off = 0;
  atom__msg_append(msg, size, &off, "{t0} and {t1} are not atomic: ");
  if (g->what <= W_UP4) {
    atom__msg_append(msg, size, &off, "%s", up[g->what]);
  } else if (g->what == W_2BLK) {
    atom__msg_append(msg, size, &off, "they can run as {e0}, then {e1}, then {e2}, then {e3}, "
                     "and no serial order reads and leaves the same values");
  } else {
    switch (g->what - W_FJ) {
    case FJ_NESTED:
      atom__msg_append(msg, size, &off, "fork and join force {h1}'s part to run inside "
                       "{h0}'s, so no serial order exists");
      break;
    case FJ_NO_SERIAL:
      atom__msg_append(msg, size, &off, "%s, but that order is not a feasible schedule", fj);
      break;
    case FJ_READ_LATER:
      atom__msg_append(msg, size, &off, "%s, but {e0} can run after {e1} and read its value", fj);
      break;
    case FJ_OVERWRITTEN:
      atom__msg_append(msg, size, &off, "%s, but {e1} can run between {e0} and {e2}", fj);
      break;
    case FJ_EARLY_READ:
      atom__msg_append(msg, size, &off, "%s, but {e0} can run before {e1}, the last write "
                       "{h0} makes to it", fj);
      break;
    default: /* FJ_FINAL_WRITE */
      atom__msg_append(msg, size, &off, "%s, but {e0}, {h1}'s last write, can run before "
                       "{e1}, so that {h0}'s value is left last", fj);
    }
  }
  if (g->findings > 1)
    atom__msg_append(msg, size, &off, " (%" PRIu64 " more interleaving%s of these two "
                     "transactions %s not serializable either)", g->findings - 1,
                     g->findings > 2 ? "s" : "", g->findings > 2 ? "are" : "is");
}

/* Report every group once, with one occurrence per pair of units; then forget them. */
static int group_emit(block *b) {
  int rc = 0;
  for (size_t i = 0; i < b->grp_n && !rc; i++) {
    const bk_group *g = &b->grp[i];
    char msg[640];
    group_message(g, msg, sizeof msg);
    rc = report(b, g->kind, g->units, 2, g->ev, g->ne, msg, 0);
    for (uint64_t k = 1; k < g->pairs && !rc; k++) /* repeats only count an occurrence */
      rc = report(b, g->kind, g->units, 2, g->ev, g->ne, NULL, 0);
  }
  return rc;
}

/* ---- analysis: sites and tuples ------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The locks each unit acquires, and those a unit still open at the end keeps for good (a unit
 * starts holding none, so they are the ones it acquired and did not release). */
/* The records of a unit (NULL for an empty one: the log may not exist yet, and an offset on a
 * NULL pointer is undefined). */
static inline const bk_rec *unit_log(const block *b, const bk_unit *un) {
  return un->len ? b->log + un->off : NULL;
}

static int unit_locks(block *b) {
  size_t nl = (size_t)b->nlocks + 1;
  uint32_t *stamp = NULL, *used = NULL, *kept = NULL;
  int rc = 0;
  if (!(stamp = atom__mem_calloc(b->mem, nl, sizeof *stamp)) ||
      !(used = atom__mem_alloc(b->mem, nl * sizeof *used)) ||
      !(kept = atom__mem_alloc(b->mem, nl * sizeof *kept))) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  for (size_t u = 0; u < b->unit_n && !rc; u++) {
    bk_unit *un = &b->unit[u];
    const bk_rec *r = unit_log(b, un);
    const uint32_t st = 1; /* stamp[l]: 1 used in the unit, 2 held now; reset after the unit */
    size_t nu = 0, nk = 0;
    for (uint32_t p = 0; p < un->len; p++) {
      uint32_t k = rec_kind(&r[p]), l = r[p].target;
      if (k == RK_ACQ) {
        if (stamp[l] != st && stamp[l] != st + 1) used[nu++] = l;
        stamp[l] = st + 1;
      } else if (k == RK_REL && stamp[l] == st + 1) {
        stamp[l] = st;
      }
    }
    if (un->unary & 2u)
      for (size_t i = 0; i < nu; i++)
        if (stamp[used[i]] == st + 1) kept[nk++] = used[i];
    for (size_t i = 0; i < nu; i++) stamp[used[i]] = 0;
    qsort(used, nu, sizeof *used, cmp_u32); /* atom__ls_make is linear on sorted input */
    qsort(kept, nk, sizeof *kept, cmp_u32);
    if (atom__ls_make(&b->ls, used, nu, &un->used) || atom__ls_make(&b->ls, kept, nk, &un->forever))
      rc = ATOM_ENOMEM;
  }
out:
  atom__mem_free(b->mem, stamp, nl * sizeof *stamp);
  atom__mem_free(b->mem, used, nl * sizeof *used);
  atom__mem_free(b->mem, kept, nl * sizeof *kept);
  return rc;
}

static int build_sites(block *b) {
  for (size_t u = 0; u < b->unit_n; u++) {
    bk_unit *un = &b->unit[u];
    uint32_t key[KW_SITE] = {un->thread, un->pfirst, un->plast, un->unary,
                             (uint32_t)un->begin_loc, (uint32_t)(un->begin_loc >> 32), un->used,
                             un->forever};
    uint32_t s;
    int added, rc = tset_add(b->mem, &b->sites, key, &s, &added);
    if (rc) return rc;
    if (added) {
      if (ATOM__GROW(b->mem, b->site_rep, b->site_rep_cap, (size_t)s + 1)) return ATOM_ENOMEM;
      b->site_rep[s] = (uint32_t)u;
    }
    un->site = s;
  }
  if (b->sites.n && ATOM__GROW(b->mem, b->site_bad, b->site_bad_cap, b->sites.n)) return ATOM_ENOMEM;
  if (b->unit_n && ATOM__GROW(b->mem, b->unit_bad, b->unit_bad_cap, b->unit_n)) return ATOM_ENOMEM;
  return 0;
}

static int add_tuple(block *b, const uint32_t key[KW_TUPLE], uint32_t u, uint32_t p1, uint32_t p2) {
  uint32_t it;
  int added, rc = tset_add(b->mem, &b->tup, key, &it, &added);
  if (rc) return rc;
  if (added) {
    if (ATOM__GROW(b->mem, b->rep, b->rep_cap, (size_t)it + 1)) return ATOM_ENOMEM;
    b->rep[it] = (bk_rep){u, p1, p2};
  }
  return 0;
}

/* Per-variable state while a unit is replayed (valid when stamp == unit + 1). */
typedef struct bk_vscan {
  uint32_t stamp;
  uint32_t fw;       /* position of the final write, NONE32 if none */
  uint32_t last_w, last_r, first_ur;
  atom__ls held_w, held_r, held_ur;
} bk_vscan;

/* The locks a unit holds during its replay, in acquisition order, with the position of each
 * acquisition. With properly nested locks (000 §5.1) "held continuously since before position
 * p" is a prefix of that order, so the lock set of every prefix is kept (pref[k] = set of
 * e[0..k)), for the first HELD_PREFIXES prefixes only: deeper sets are built on demand, so that
 * a thread holding 10^6 locks costs linear, not quadratic, memory. */
#define HELD_PREFIXES 64

typedef struct bk_hent {
  uint32_t lock, at;
} bk_hent;

typedef struct bk_held {
  bk_hent *e;
  size_t n, cap;
  atom__ls pref[HELD_PREFIXES + 1];
  size_t npref;     /* pref[0..npref] are valid */
  uint32_t *sorted; /* scratch to build a deep set */
  size_t scap;
} bk_held;

static void held_free(atom__mem *m, bk_held *h) {
  atom__mem_free(m, h->e, h->cap * sizeof *h->e);
  atom__mem_free(m, h->sorted, h->scap * sizeof *h->sorted);
  memset(h, 0, sizeof *h);
}

static void held_clear(bk_held *h) {
  h->n = 0;
  h->npref = 0;
  h->pref[0] = ATOM__LS_EMPTY;
}


/* *out := the set of the first k locks held. */
static int held_prefix(block *b, bk_held *h, size_t k, atom__ls *out) {
  while (h->npref < k && h->npref < HELD_PREFIXES) {
    if (atom__ls_add(&b->ls, h->pref[h->npref], h->e[h->npref].lock, &h->pref[h->npref + 1]))
      return ATOM_ENOMEM;
    h->npref++;
  }
  if (k <= HELD_PREFIXES) {
    *out = h->pref[k];
    return 0;
  }
  if (ATOM__GROW(b->mem, h->sorted, h->scap, k)) return ATOM_ENOMEM;
  for (size_t i = 0; i < k; i++) h->sorted[i] = h->e[i].lock;
  qsort(h->sorted, k, sizeof *h->sorted, cmp_u32); /* atom__ls_make is linear on sorted input */
  return atom__ls_make(&b->ls, h->sorted, k, out);
}

static int held_push(block *b, bk_held *h, uint32_t lock, uint32_t at) {
  if (ATOM__GROW(b->mem, h->e, h->cap, h->n + 1)) return ATOM_ENOMEM;
  h->e[h->n++] = (bk_hent){lock, at};
  return 0;
}

static void held_pop(bk_held *h, uint32_t lock) {
  size_t k = h->n;
  while (k > 0 && h->e[k - 1].lock != lock) k--;
  if (k == 0) return;
  k--;
  memmove(h->e + k, h->e + k + 1, (h->n - k - 1) * sizeof *h->e);
  h->n--;
  if (h->npref > k) h->npref = k; /* the prefixes from k on changed */
}

static inline int held_now(block *b, bk_held *h, atom__ls *out) {
  return held_prefix(b, h, h->n, out);
}

/* 000 §5.1: h12 = the locks held continuously from before position p1 until now. */
static int held_since(block *b, bk_held *h, uint32_t p1, atom__ls *out) {
  size_t k = 0;
  while (k < h->n && h->e[k].at < p1) k++;
  return held_prefix(b, h, k, out);
}

typedef struct bk_urfw {
  uint32_t pos, var, op;
  atom__ls held;
} bk_urfw;

typedef struct bk_scan {
  bk_vscan *v;
  size_t vcap;
  bk_held h;
  bk_urfw *l;
  size_t lcap;
} bk_scan;

static void scan_free(atom__mem *m, bk_scan *sc) {
  atom__mem_free(m, sc->v, sc->vcap * sizeof *sc->v);
  atom__mem_free(m, sc->l, sc->lcap * sizeof *sc->l);
  held_free(m, &sc->h);
}

/* Blocks (B1-B3), accesses and 2-blocks (2B1-2B2) of unit u, added to the tuple set. */
static int unit_tuples(block *b, bk_scan *sc, uint32_t u) {
  const bk_unit *un = &b->unit[u];
  const bk_rec *r = unit_log(b, un);
  uint32_t stamp = u + 1, site = un->site;
  int rc;
  /* B3 needs the final write of each variable: a first pass. */
  for (uint32_t p = 0; p < un->len; p++) {
    if (rec_kind(&r[p]) > RK_WRITE || !shared_var(b, r[p].target)) continue;
    bk_vscan *v = &sc->v[r[p].target];
    if (v->stamp != stamp) {
      v->stamp = stamp;
      v->fw = v->last_w = v->last_r = v->first_ur = NONE32;
    }
    if (rec_kind(&r[p]) == RK_WRITE) v->fw = p;
  }
  held_clear(&sc->h);
  size_t nl = 0;
  for (uint32_t p = 0; p < un->len; p++) {
    uint32_t k = rec_kind(&r[p]), x = r[p].target;
    if (k == RK_ACQ) {
      if ((rc = held_push(b, &sc->h, x, p))) return rc;
      continue;
    }
    if (k == RK_REL) {
      held_pop(&sc->h, x);
      continue;
    }
    if (!shared_var(b, x)) continue;
    bk_vscan *v = &sc->v[x];
    atom__ls held, h12;
    if ((rc = held_now(b, &sc->h, &held))) return rc;
    uint32_t fw = k == RK_WRITE && v->fw == p;
    uint32_t ur = k == RK_READ && v->last_w == NONE32;
    uint32_t key[KW_TUPLE] = {TU_ACCESS, site, x, 0, k | fw << 1 | ur << 2, held, 0, 0};
    if ((rc = add_tuple(b, key, u, p, NONE32))) return rc;
    /* B1(a): e1 is the last write of x before e2, else the last read. */
    uint32_t e1 = v->last_w != NONE32 ? v->last_w : v->last_r;
    if (e1 != NONE32) {
      uint32_t op1 = v->last_w != NONE32 ? RK_WRITE : RK_READ;
      uint32_t fw1 = op1 == RK_WRITE && v->fw == e1;
      if ((rc = held_since(b, &sc->h, e1, &h12))) return rc;
      uint32_t key2[KW_TUPLE] = {TU_BLOCK, site, x, 0, op1 | k << 1 | fw1 << 2 | fw << 3,
                                 op1 == RK_WRITE ? v->held_w : v->held_r, held, h12};
      if ((rc = add_tuple(b, key2, u, e1, p))) return rc;
    }
    /* B1(b): the final write with the (first: it dominates, 000 §5.3) uninitialized read. */
    if (fw && v->first_ur != NONE32 && v->first_ur != e1) {
      if ((rc = held_since(b, &sc->h, v->first_ur, &h12))) return rc;
      uint32_t key2[KW_TUPLE] = {TU_BLOCK, site, x, 0, RK_READ | RK_WRITE << 1 | 1u << 3,
                                 v->held_ur, held, h12};
      if ((rc = add_tuple(b, key2, u, v->first_ur, p))) return rc;
    }
    if (k == RK_WRITE) {
      v->last_w = p;
      v->held_w = held;
    } else {
      v->last_r = p;
      v->held_r = held;
      if (ur && v->first_ur == NONE32) {
        v->first_ur = p;
        v->held_ur = held;
      }
    }
    /* 2B1: pairs of (first) uninitialized reads and final writes on different variables. */
    if ((ur && v->first_ur == p) || fw) {
      for (size_t i = 0; i < nl; i++) {
        const bk_urfw *e = &sc->l[i];
        if (e->var == x) continue;
        if ((rc = held_since(b, &sc->h, e->pos, &h12))) return rc;
        uint32_t key2[KW_TUPLE] = {TU_2BLK, site, e->var, x, e->op | k << 1, e->held, held, h12};
        if ((rc = add_tuple(b, key2, u, e->pos, p))) return rc;
      }
      if (ATOM__GROW(b->mem, sc->l, sc->lcap, nl + 1)) return ATOM_ENOMEM;
      sc->l[nl++] = (bk_urfw){p, x, k, held};
    }
  }
  return 0;
}

static int build_tuples(block *b) {
  bk_scan sc;
  memset(&sc, 0, sizeof sc);
  int rc = 0;
  if (b->var_cap && !(sc.v = atom__mem_calloc(b->mem, b->var_cap, sizeof *sc.v))) return ATOM_ENOMEM;
  sc.vcap = b->var_cap;
  for (size_t u = 0; u < b->unit_n && !rc; u++)
    if (b->unit[u].len) rc = unit_tuples(b, &sc, (uint32_t)u);
  scan_free(b->mem, &sc);
  b->tuples_built = b->tup.n;
  return rc;
}

/* ---- analysis: pairs of blocks (000 §5.2) ---------------------------------------------------- */

/* The sort order of the pair analysis: blocks and accesses first, by (type, variable, site,
 * ...); then 2-blocks by (smaller variable, larger variable, ...); ties by tuple id. */
static void sort_key(const bk_tset *t, uint32_t id, uint32_t out[9]) {
  static const int order[KW_TUPLE] = {K_TYPE, K_X, K_Y, K_SITE, K_FLAGS, K_H1, K_H2, K_H12};
  const uint32_t *k = tkey(t, id);
  for (int w = 0; w < KW_TUPLE; w++) out[1 + w] = k[order[w]];
  out[0] = 0;
  if (k[K_TYPE] == TU_2BLK) {
    uint32_t lo = k[K_X] < k[K_Y] ? k[K_X] : k[K_Y];
    out[0] = 1 + lo; /* variable ids are below UINT32_MAX */
    out[2] = k[K_X] ^ k[K_Y] ^ lo;
  }
}

static int id_before(const bk_tset *t, uint32_t a, uint32_t b) {
  uint32_t ka[9], kb[9];
  sort_key(t, a, ka);
  sort_key(t, b, kb);
  for (int i = 0; i < 9; i++)
    if (ka[i] != kb[i]) return ka[i] < kb[i];
  return a < b;
}

/* Bottom-up merge sort of tuple ids (qsort has no context argument, and the keys are long). */
static void sort_ids(const bk_tset *t, uint32_t *ids, uint32_t *tmp, size_t n) {
  uint32_t *src = ids, *dst = tmp;
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = id_before(t, src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    uint32_t *x = src;
    src = dst;
    dst = x;
  }
  if (src != ids) memcpy(ids, src, n * sizeof *ids);
}

/* The unserializable pattern a block (op1, op2) of t can form with a third event of t', or -1.
 * 000 §5.2: UP1 a read between two writes; UP2 a write between two reads; UP3 a write between
 * a write and a later read; UP4 the final write of t' between a read and a later write.
 * "No three out of the four events in the two blocks" (000 §5.2) matters for UP1: a read r' of
 * t' that follows a write w' of t' reads e1 only if w' comes before e1 -- and then e1 lies
 * between w' and r', which is UP3 of the block (w', r'). So UP1 needs only the uninitialized
 * reads of t' (example (15) is atomic because of this). For UP2-UP4 the third event alone
 * makes the interleaving unserializable. */
static int up_of(uint32_t op1, uint32_t op2, uint32_t op3, uint32_t fw3, uint32_t ur3) {
  if (op1 == RK_WRITE && op2 == RK_WRITE) return op3 == RK_READ && ur3 ? 0 : -1;
  if (op1 == RK_READ && op2 == RK_READ) return op3 == RK_WRITE ? 1 : -1;
  if (op1 == RK_WRITE && op2 == RK_READ) return op3 == RK_WRITE ? 2 : -1;
  return op3 == RK_WRITE && fw3 ? 3 : -1;
}

static int report_up(block *b, int up, uint32_t tb, uint32_t ta) {
  const bk_rep *rb = &b->rep[tb], *ra = &b->rep[ta];
  atom_ev ev[3] = {rec_ev(b, rb->unit, rb->p1), rec_ev(b, ra->unit, ra->p1),
                   rec_ev(b, rb->unit, rb->p2)};
  uint32_t units[2] = {rb->unit, ra->unit};
  mark_bad(b, rb->unit);
  mark_bad(b, ra->unit);
  return finding(b, "unserializable-pattern", W_UP1 + (unsigned)up, units, ev, 3, (uint64_t)up + 1);
}

/* A unit of end-of-run work done; every 4096 the session hears how far the analysis is
 * (done: the position in the work of the phases, b->work_total in all). */
static void tick(block *b, uint64_t done) {
  if (++b->work & 4095) return;
  (void)atom_env_progress(b->env, done < b->work_total ? done : b->work_total, b->work_total);
}

static int pairs_1var(block *b, const uint32_t *ids, size_t n) {
  int rc;
  /* ids: every BLOCK and ACCESS tuple sorted by (type, var, site, ...): walk variable by
   * variable. */
  size_t i = 0;
  while (i < n && tkey(&b->tup, ids[i])[K_TYPE] == TU_BLOCK) i++;
  size_t nblk = i;
  size_t a0 = nblk;
  for (size_t bi = 0; bi < nblk;) {
    uint32_t x = tkey(&b->tup, ids[bi])[K_X];
    size_t be = bi;
    while (be < nblk && tkey(&b->tup, ids[be])[K_X] == x) be++;
    while (a0 < n && tkey(&b->tup, ids[a0])[K_X] < x) a0++;
    size_t ae = a0;
    while (ae < n && tkey(&b->tup, ids[ae])[K_X] == x) ae++;
    for (size_t j = bi; j < be; j++) {
      const uint32_t *kb = tkey(&b->tup, ids[j]);
      const bk_unit *ub = &b->unit[b->site_rep[kb[K_SITE]]];
      uint32_t op1 = kb[K_FLAGS] & 1u, op2 = kb[K_FLAGS] >> 1 & 1u;
      for (size_t k = a0; k < ae; k++) {
        tick(b, j);
        const uint32_t *ka = tkey(&b->tup, ids[k]);
        int up = up_of(op1, op2, ka[K_FLAGS] & 1u, ka[K_FLAGS] >> 1 & 1u, ka[K_FLAGS] >> 2 & 1u);
        if (up < 0 || ka[K_SITE] == kb[K_SITE]) continue;
        /* Thm 5.1: e' can occur between e1 and e2 iff h12 ∩ held(e') = ∅. */
        if (!atom__ls_disjoint(&b->ls, kb[K_H12], ka[K_H1])) continue;
        const bk_unit *ua = &b->unit[b->site_rep[ka[K_SITE]]];
        if (relation(b, ub, ua) != REL_FREE) continue;
        if ((rc = report_up(b, up, ids[j], ids[k]))) return rc;
      }
    }
    bi = be;
  }
  return 0;
}

/* ---- analysis: pairs of 2-blocks (000 §5.3) --------------------------------------------------- */

static int report_2blk(block *b, uint32_t ti, uint32_t tj, unsigned order) {
  const uint32_t *kb = tkey(&b->tup, ti), *kc = tkey(&b->tup, tj);
  unsigned shape = ATOM__BLK_SHAPE(kb[K_FLAGS] & 1u, kb[K_FLAGS] >> 1 & 1u, kc[K_FLAGS] & 1u,
                                   kc[K_FLAGS] >> 1 & 1u, kc[K_X] != kb[K_X]);
  const bk_rep *ri = &b->rep[ti], *rj = &b->rep[tj];
  atom_ev a[2] = {rec_ev(b, ri->unit, ri->p1), rec_ev(b, ri->unit, ri->p2)};
  atom_ev c[2] = {rec_ev(b, rj->unit, rj->p1), rec_ev(b, rj->unit, rj->p2)};
  atom_ev seq[4];
  unsigned na = 0, nc = 0;
  for (unsigned k = 0; k < 4; k++) seq[k] = blk_orders[order][k] == 'A' ? a[na++] : c[nc++];
  uint32_t units[2] = {ri->unit, rj->unit};
  uint64_t pattern = 16 + order * 64 + shape;
  mark_bad(b, ri->unit);
  mark_bad(b, rj->unit);
  return finding(b, "2-block", W_2BLK, units, seq, 4, pattern);
}

/* Feasibility of an order of the four events, by Thm 5.1 applied to each event that the order
 * places strictly between the two events of the other block. */
static int order_feasible(const block *b, unsigned order, const uint32_t *kb, const uint32_t *kc,
                          int crossed) {
  (void)crossed;
  const char *o = blk_orders[order];
  atom__ls ha[2] = {kb[K_H1], kb[K_H2]}, hc[2] = {kc[K_H1], kc[K_H2]};
  unsigned na = 0, nc = 0;
  for (unsigned k = 0; k < 4; k++) {
    if (o[k] == 'A') {
      if (nc == 1 && !atom__ls_disjoint(&b->ls, ha[na], kc[K_H12])) return 0;
      na++;
    } else {
      if (na == 1 && !atom__ls_disjoint(&b->ls, hc[nc], kb[K_H12])) return 0;
      nc++;
    }
  }
  return 1;
}

static int pairs_2blk(block *b, const uint32_t *ids, size_t n) {
  int rc;
  for (size_t g = 0; g < n;) {
    const uint32_t *k0 = tkey(&b->tup, ids[g]);
    uint32_t lo = k0[K_X] < k0[K_Y] ? k0[K_X] : k0[K_Y], hi = k0[K_X] ^ k0[K_Y] ^ lo;
    size_t ge = g;
    while (ge < n) {
      const uint32_t *k = tkey(&b->tup, ids[ge]);
      uint32_t l2 = k[K_X] < k[K_Y] ? k[K_X] : k[K_Y], h2 = k[K_X] ^ k[K_Y] ^ l2;
      if (l2 != lo || h2 != hi) break;
      ge++;
    }
    for (size_t i = g; i < ge; i++) {
      for (size_t j = i + 1; j < ge; j++) {
        tick(b, b->work_base + i);
        uint32_t tb = ids[i], tc = ids[j];
        if (tkey(&b->tup, tc)[K_SITE] == tkey(&b->tup, tb)[K_SITE]) continue;
        if (b->unit[b->rep[tb].unit].begin_index > b->unit[b->rep[tc].unit].begin_index) {
          tb = ids[j]; /* b from the older transaction, so that reports read in order */
          tc = ids[i];
        }
        const uint32_t *kb = tkey(&b->tup, tb), *kc = tkey(&b->tup, tc);
        const bk_unit *ub = &b->unit[b->site_rep[kb[K_SITE]]];
        unsigned op1 = kb[K_FLAGS] & 1u, op2 = kb[K_FLAGS] >> 1 & 1u;
        unsigned crossed = kc[K_X] != kb[K_X];
        unsigned c1 = kc[K_FLAGS] & 1u, c2 = kc[K_FLAGS] >> 1 & 1u;
        unsigned shape = ATOM__BLK_SHAPE(op1, op2, c1, c2, crossed);
        unsigned mask = b->tbl[shape];
        if (!mask) continue;
        unsigned o = 0;
        while (o < ATOM__BLK_ORDERS && !(mask >> o & 1u && order_feasible(b, o, kb, kc, (int)crossed))) o++;
        if (o == ATOM__BLK_ORDERS) continue;
        const bk_unit *uc = &b->unit[b->site_rep[kc[K_SITE]]];
        if (relation(b, ub, uc) != REL_FREE) continue;
        if ((rc = report_2blk(b, tb, tc, o))) return rc;
      }
    }
    g = ge;
  }
  return 0;
}

/* Blocks against accesses, and 2-blocks against 2-blocks, over every pair of sites that
 * fork/join leaves free (000 Thm 5.4). */
static int analyse_free_pairs(block *b) {
  size_t n = b->tup.n;
  if (!n) return 0;
  uint32_t *ids = atom__mem_alloc(b->mem, n * sizeof *ids);
  uint32_t *tmp = atom__mem_alloc(b->mem, n * sizeof *tmp);
  if (!ids || !tmp) {
    atom__mem_free(b->mem, ids, n * sizeof *ids);
    atom__mem_free(b->mem, tmp, n * sizeof *tmp);
    return ATOM_ENOMEM;
  }
  size_t n1 = 0;
  for (size_t i = 0; i < n; i++) {
    ids[i] = (uint32_t)i;
    n1 += tkey(&b->tup, (uint32_t)i)[K_TYPE] != TU_2BLK;
  }
  sort_ids(&b->tup, ids, tmp, n);
  atom__mem_free(b->mem, tmp, n * sizeof *tmp);
  int rc = pairs_1var(b, ids, n1);
  b->work_base = n1;
  if (!rc) rc = pairs_2blk(b, ids + n1, n - n1);
  atom__mem_free(b->mem, ids, n * sizeof *ids);
  return rc;
}

/* ---- analysis: pairs that fork/join partly orders ---------------------------------------------
 *
 * 000 §5.1 decides feasibility with locks only. When a transaction forks or joins a thread,
 * some events of t must precede some events of t' (or the converse) although neither
 * transaction precedes the other as a whole: then only one serial order is feasible (or none,
 * when t' is nested inside t), Thm 5.1 does not apply, and the patterns that matter are those
 * that contradict the one serial order F;S:
 *   read-later      a read of F reads a write of S;
 *   overwritten-read a write of F comes between a write of S and a later read of S;
 *   early-read      an uninitialized read of S runs before the final write of F;
 *   final-write     the final write of S precedes the final write of F;
 *   no-serial-order F;S itself is not a feasible schedule.
 * Each is decided exactly on the progress graph of the pair: cell (i, j) = F has run i of its
 * events, S j of its; a cell is forbidden when both hold a common lock or when fork/join
 * requires an event not yet run; an order of events is feasible iff a monotone path from
 * (0, 0) to the far corner realizes it. Only accesses of variables both access (one writing)
 * and operations on locks both use are kept. */

typedef struct bk_cev {
  uint32_t pos;    /* position in the unit's log */
  uint32_t kind, target, period;
  atom__ls held;   /* locks held after it (kept locks only) */
  uint32_t prev_w; /* 1-based index of the unit's previous write of the variable, 0 if none */
} bk_cev;

typedef struct bk_grid {
  bk_cev *c[2];
  size_t n[2], cap[2];
  uint32_t *lreq[2]; /* lreq[s][j]: events of the other side that must precede event j of s */
  size_t lcap[2];
  uint8_t *fr, *br;
  size_t cells, fcap, bcap;
  uint32_t wstamp;
  uint32_t *vs[2], *vw[2], *ls[2]; /* stamps: variable accessed / written / lock used by side */
  uint32_t *lws, *lwi; /* per variable: stamp, and 1-based index of the side's last write */
  size_t vcap, lkcap;
  uint32_t stamp;
} bk_grid;

#define GRID_MAX_CELLS ((size_t)1 << 24)

static void grid_free(atom__mem *m, bk_grid *g) {
  for (int s = 0; s < 2; s++) {
    atom__mem_free(m, g->c[s], g->cap[s] * sizeof *g->c[s]);
    atom__mem_free(m, g->lreq[s], g->lcap[s] * sizeof *g->lreq[s]);
    atom__mem_free(m, g->vs[s], g->vcap * sizeof *g->vs[s]);
    atom__mem_free(m, g->vw[s], g->vcap * sizeof *g->vw[s]);
    atom__mem_free(m, g->ls[s], g->lkcap * sizeof *g->ls[s]);
  }
  atom__mem_free(m, g->lws, g->vcap * sizeof *g->lws);
  atom__mem_free(m, g->lwi, g->vcap * sizeof *g->lwi);
  atom__mem_free(m, g->fr, g->fcap);
  atom__mem_free(m, g->br, g->bcap);
  memset(g, 0, sizeof *g);
}

/* Keep the events of unit u (side s) that can interact with the other side. @return 0,
 * ATOM_ENOMEM, or 1 if the side holds more than HELD_PREFIXES common locks at once (then the
 * pair is not decided: lock sets that deep are not interned one by one). */
static int grid_side(block *b, bk_grid *g, int s, uint32_t u, uint32_t wstamp) {
  const bk_unit *un = &b->unit[u];
  const bk_rec *r = unit_log(b, un);
  int o = 1 - s;
  atom__ls held = ATOM__LS_EMPTY;
  size_t depth = 0;
  g->n[s] = 0;
  for (uint32_t p = 0; p < un->len; p++) {
    uint32_t k = rec_kind(&r[p]), x = r[p].target;
    int keep;
    if (k <= RK_WRITE)
      keep = g->vs[o][x] == g->stamp && (g->vw[o][x] == g->stamp || g->vw[s][x] == g->stamp);
    else
      keep = g->ls[o][x] == g->stamp;
    if (!keep) continue;
    if (k == RK_ACQ) {
      if (++depth > HELD_PREFIXES) return 1;
      if (atom__ls_add(&b->ls, held, x, &held)) return ATOM_ENOMEM;
    }
    if (k == RK_REL) {
      depth--;
      if (atom__ls_remove(&b->ls, held, x, &held)) return ATOM_ENOMEM;
    }
    uint32_t prev = 0;
    if (k <= RK_WRITE && g->lws[x] == wstamp) prev = g->lwi[x];
    if (ATOM__GROW(b->mem, g->c[s], g->cap[s], g->n[s] + 1)) return ATOM_ENOMEM;
    g->c[s][g->n[s]++] = (bk_cev){p, k, x, rec_period(&r[p]), held, prev};
    if (k == RK_WRITE) {
      g->lws[x] = wstamp;
      g->lwi[x] = (uint32_t)g->n[s];
    }
  }
  return 0;
}

static void grid_marks(const block *b, bk_grid *g, int s, uint32_t u) {
  const bk_unit *un = &b->unit[u];
  const bk_rec *r = unit_log(b, un);
  for (uint32_t p = 0; p < un->len; p++) {
    uint32_t k = rec_kind(&r[p]), x = r[p].target;
    if (k <= RK_WRITE) {
      g->vs[s][x] = g->stamp;
      if (k == RK_WRITE) g->vw[s][x] = g->stamp;
    } else {
      g->ls[s][x] = g->stamp;
    }
  }
}

static inline int cell_ok(const block *b, const bk_grid *g, size_t i, size_t j) {
  if (i < g->lreq[1][j] || j < g->lreq[0][i]) return 0;
  atom__ls hf = i ? g->c[0][i - 1].held : ATOM__LS_EMPTY;
  atom__ls hs = j ? g->c[1][j - 1].held : ATOM__LS_EMPTY;
  return hf == ATOM__LS_EMPTY || hs == ATOM__LS_EMPTY || atom__ls_disjoint(&b->ls, hf, hs);
}

#define FR(g, i, j) ((g)->fr[(i) * ((g)->n[1] + 1) + (j)])
#define BR(g, i, j) ((g)->br[(i) * ((g)->n[1] + 1) + (j)])

/* S's event j (1-based) can run while F has run exactly i events, on a complete path. */
static inline int vert(const bk_grid *g, size_t j, size_t i) { return FR(g, i, j - 1) && BR(g, i, j); }
/* F's event i (1-based) can run while S has run exactly j events. */
static inline int horz(const bk_grid *g, size_t i, size_t j) { return FR(g, i - 1, j) && BR(g, i, j); }

static int vert_in(const bk_grid *g, size_t j, size_t lo, size_t hi) {
  for (size_t i = lo; i <= hi && i <= g->n[0]; i++)
    if (vert(g, j, i)) return 1;
  return 0;
}
static int horz_in(const bk_grid *g, size_t i, size_t lo, size_t hi) {
  for (size_t j = lo; j <= hi && j <= g->n[1]; j++)
    if (horz(g, i, j)) return 1;
  return 0;
}


static int report_fj(block *b, int pattern, uint32_t uf, uint32_t us, const atom_ev *ev, size_t ne) {
  uint32_t units[2] = {uf, us};
  mark_bad(b, uf);
  mark_bad(b, us);
  return finding(b, "fork-join-order", W_FJ + (unsigned)pattern, units, ev, ne,
                 100 + (uint64_t)pattern);
}

/* F (unit uf) must partly precede S (unit us). */
static int forced_pair(block *b, bk_grid *g, uint32_t uf, uint32_t us) {
  int rc;
  if (++g->stamp == 0) { /* wrapped: clear the stamps */
    for (int s = 0; s < 2; s++) {
      memset(g->vs[s], 0, g->vcap * sizeof *g->vs[s]);
      memset(g->vw[s], 0, g->vcap * sizeof *g->vw[s]);
      memset(g->ls[s], 0, g->lkcap * sizeof *g->ls[s]);
    }
    g->stamp = 1;
  }
  grid_marks(b, g, 0, uf);
  grid_marks(b, g, 1, us);
  /* two more stamps for the last-write indices of each side */
  int deep = 0;
  for (int s = 0; s < 2 && !deep; s++) {
    if (++g->wstamp == 0) {
      memset(g->lws, 0, g->vcap * sizeof *g->lws);
      g->wstamp = 1;
    }
    rc = grid_side(b, g, s, s ? us : uf, g->wstamp);
    if (rc < 0) return rc;
    deep = rc;
  }
  size_t nf = g->n[0], ns = g->n[1];
  if (deep || (nf + 1) > GRID_MAX_CELLS / (ns + 1)) {
    char tf[96], ts[96], msg[512];
    label_txn(b, uf, tf, sizeof tf);
    label_txn(b, us, ts, sizeof ts);
    if (deep)
      snprintf(msg, sizeof msg, "fork/join partly orders %s and %s, which hold more than %d common "
               "locks at once: atomicity of the pair is undecided", tf, ts, HELD_PREFIXES);
    else
      snprintf(msg, sizeof msg,
               "fork/join partly orders %s and %s; their %zu x %zu relevant events are too many "
               "for the exact search: atomicity of the pair is undecided", tf, ts, nf, ns);
    return undecided(b, msg);
  }
  /* fork/join requirements, from the periods (periods.h: exact at event level) */
  for (int s = 0; s < 2; s++) {
    int o = 1 - s;
    if (ATOM__GROW(b->mem, g->lreq[s], g->lcap[s], g->n[s] + 1)) return ATOM_ENOMEM;
    g->lreq[s][0] = 0;
    size_t k = 0;
    for (size_t j = 1; j <= g->n[s]; j++) {
      uint32_t pj = g->c[s][j - 1].period;
      while (k < g->n[o] && atom__periods_before(&b->periods, g->c[o][k].period, pj)) k++;
      g->lreq[s][j] = (uint32_t)k;
    }
  }
  /* lreq[0][i] bounds S's count in cells (i, *) -- cell_ok reads lreq[0] by F index and
   * lreq[1] by S index, as filled above. */
  size_t cells = (nf + 1) * (ns + 1);
  if (cells > g->fcap) {
    size_t c = g->fcap;
    if (ATOM__GROW(b->mem, g->fr, g->fcap, cells)) return ATOM_ENOMEM;
    if (ATOM__GROW(b->mem, g->br, c, cells)) return ATOM_ENOMEM;
    g->bcap = c;
  }
  for (size_t i = 0; i <= nf; i++)
    for (size_t j = 0; j <= ns; j++) {
      int ok = cell_ok(b, g, i, j);
      FR(g, i, j) = ok && ((i == 0 && j == 0) || (i && FR(g, i - 1, j)) || (j && FR(g, i, j - 1)));
    }
  for (size_t i = nf + 1; i-- > 0;)
    for (size_t j = ns + 1; j-- > 0;) {
      int ok = cell_ok(b, g, i, j);
      BR(g, i, j) = ok && ((i == nf && j == ns) || (i < nf && BR(g, i + 1, j)) ||
                           (j < ns && BR(g, i, j + 1)));
    }
  if (!BR(g, 0, 0)) return 0; /* no complete schedule of the pair (a deadlock) */
  const bk_cev *F = g->c[0], *S = g->c[1];
  atom_ev ev[3];
  /* F;S must be a feasible schedule */
  int serial = 1;
  for (size_t i = 0; i <= nf && serial; i++) serial = cell_ok(b, g, i, 0);
  for (size_t j = 0; j <= ns && serial; j++) serial = cell_ok(b, g, nf, j);
  if (!serial) return report_fj(b, FJ_NO_SERIAL, uf, us, NULL, 0);
  /* read-later: a read r of F (after its own last write w, if any) reads a write w' of S */
  for (size_t ir = 1; ir <= nf; ir++) {
    if (F[ir - 1].kind != RK_READ) continue;
    size_t iw = F[ir - 1].prev_w;
    for (size_t jw = 1; jw <= ns; jw++) {
      if (S[jw - 1].kind != RK_WRITE || S[jw - 1].target != F[ir - 1].target) continue;
      if (!vert_in(g, jw, iw, ir - 1)) continue;
      ev[0] = rec_ev(b, uf, F[ir - 1].pos);
      ev[1] = rec_ev(b, us, S[jw - 1].pos);
      return report_fj(b, FJ_READ_LATER, uf, us, ev, 2);
    }
  }
  for (size_t jr = 1; jr <= ns; jr++) {
    if (S[jr - 1].kind != RK_READ) continue;
    uint32_t x = S[jr - 1].target;
    size_t jp = S[jr - 1].prev_w;
    if (jp) { /* overwritten-read: a write of F between S's write and its later read */
      for (size_t iw = 1; iw <= nf; iw++) {
        if (F[iw - 1].kind != RK_WRITE || F[iw - 1].target != x) continue;
        if (!horz_in(g, iw, jp, jr - 1)) continue;
        ev[0] = rec_ev(b, us, S[jp - 1].pos);
        ev[1] = rec_ev(b, uf, F[iw - 1].pos);
        ev[2] = rec_ev(b, us, S[jr - 1].pos);
        return report_fj(b, FJ_OVERWRITTEN, uf, us, ev, 3);
      }
    } else { /* early-read: an uninitialized read of S before the final write of F */
      size_t ifw = 0;
      for (size_t i = nf; i > 0 && !ifw; i--)
        if (F[i - 1].kind == RK_WRITE && F[i - 1].target == x) ifw = i;
      if (ifw && vert_in(g, jr, 0, ifw - 1)) {
        ev[0] = rec_ev(b, us, S[jr - 1].pos);
        ev[1] = rec_ev(b, uf, F[ifw - 1].pos);
        return report_fj(b, FJ_EARLY_READ, uf, us, ev, 2);
      }
    }
  }
  /* final-write: the final write of S before the final write of F */
  for (size_t jf = ns; jf > 0; jf--) {
    if (S[jf - 1].kind != RK_WRITE) continue;
    uint32_t x = S[jf - 1].target;
    int final = 1;
    for (size_t j = jf; j < ns && final; j++) final = !(S[j].kind == RK_WRITE && S[j].target == x);
    if (!final) continue;
    size_t ifw = 0;
    for (size_t i = nf; i > 0 && !ifw; i--)
      if (F[i - 1].kind == RK_WRITE && F[i - 1].target == x) ifw = i;
    if (ifw && vert_in(g, jf, 0, ifw - 1)) {
      ev[0] = rec_ev(b, us, S[jf - 1].pos);
      ev[1] = rec_ev(b, uf, F[ifw - 1].pos);
      return report_fj(b, FJ_FINAL_WRITE, uf, us, ev, 2);
    }
  }
  return 0;
}

/* Units of a site, as a linked list (filled by site_lists). */
typedef struct bk_sites {
  uint32_t *head, *next;
  size_t hcap, ncap;
} bk_sites;

static int analyse_forced_pairs(block *b) {
  size_t ns = b->sites.n;
  bk_sites sl;
  bk_grid g;
  memset(&sl, 0, sizeof sl);
  memset(&g, 0, sizeof g);
  int rc = 0;
  if (!ns) return 0;
  if (ATOM__GROW(b->mem, sl.head, sl.hcap, ns) || ATOM__GROW(b->mem, sl.next, sl.ncap, b->unit_n)) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  for (size_t s = 0; s < ns; s++) sl.head[s] = NONE32;
  for (size_t u = b->unit_n; u-- > 0;) {
    sl.next[u] = sl.head[b->unit[u].site];
    sl.head[b->unit[u].site] = (uint32_t)u;
  }
  for (size_t c = 0; c < ns && !rc; c++) {
    const bk_unit *uc = &b->unit[b->site_rep[c]];
    /* only a unit that forks or joins, or keeps a lock for good, orders part of another */
    if (uc->pfirst == uc->plast && uc->forever == ATOM__LS_EMPTY) continue;
    for (size_t s = 0; s < ns && !rc; s++) {
      tick(b, b->work_base + c);
      if (s == c) continue;
      const bk_unit *us = &b->unit[b->site_rep[s]];
      if ((us->pfirst != us->plast || us->forever != ATOM__LS_EMPTY) && s < c)
        continue; /* that pair was seen from s */
      int rel = relation(b, uc, us);
      if (rel != REL_FWD && rel != REL_BWD && rel != REL_NESTED) continue;
      if (rel != REL_NESTED && !g.vcap) {
        if (!(g.vs[0] = atom__mem_calloc(b->mem, b->var_cap + 1, sizeof(uint32_t))) ||
            !(g.vs[1] = atom__mem_calloc(b->mem, b->var_cap + 1, sizeof(uint32_t))) ||
            !(g.vw[0] = atom__mem_calloc(b->mem, b->var_cap + 1, sizeof(uint32_t))) ||
            !(g.vw[1] = atom__mem_calloc(b->mem, b->var_cap + 1, sizeof(uint32_t))) ||
            !(g.ls[0] = atom__mem_calloc(b->mem, (size_t)b->nlocks + 1, sizeof(uint32_t))) ||
            !(g.ls[1] = atom__mem_calloc(b->mem, (size_t)b->nlocks + 1, sizeof(uint32_t))) ||
            !(g.lws = atom__mem_calloc(b->mem, b->var_cap + 1, sizeof(uint32_t))) ||
            !(g.lwi = atom__mem_calloc(b->mem, b->var_cap + 1, sizeof(uint32_t)))) {
          g.vcap = b->var_cap + 1; /* so grid_free frees what was allocated */
          g.lkcap = (size_t)b->nlocks + 1;
          rc = ATOM_ENOMEM;
          break;
        }
        g.vcap = b->var_cap + 1;
        g.lkcap = (size_t)b->nlocks + 1;
      }
      for (uint32_t u = sl.head[c]; u != NONE32 && !rc; u = sl.next[u])
        for (uint32_t v = sl.head[s]; v != NONE32 && !rc; v = sl.next[v]) {
          if (rel == REL_NESTED) {
            uint32_t outer = atom__periods_before(&b->periods, b->unit[u].pfirst, b->unit[v].pfirst)
                                 ? u : v;
            rc = report_fj(b, FJ_NESTED, outer, outer == u ? v : u, NULL, 0);
          } else {
            rc = rel == REL_FWD ? forced_pair(b, &g, u, v) : forced_pair(b, &g, v, u);
          }
        }
    }
  }
out:
  atom__mem_free(b->mem, sl.head, sl.hcap * sizeof *sl.head);
  atom__mem_free(b->mem, sl.next, sl.ncap * sizeof *sl.next);
  grid_free(b->mem, &g);
  return rc;
}


/* ---- scope=all: 000 §5.4 ----------------------------------------------------------------------
 *
 * isAtomicTrans(T): every pair atomic, and every feasible interleaving of UR-FW(T) (the
 * uninitialized reads and final writes of each transaction, with its lock operations)
 * view-serializable. Groups of units that share no variable are searched separately (000 §5.4,
 * last paragraph). The interleavings are enumerated depth-first with sleep sets, so that of
 * interleavings that differ only in the order of independent events (other units; other
 * variables or two reads; other locks) one is explored: view equivalence depends only on the
 * order of conflicting accesses. A group with a pair already reported is not searched (the
 * pair decides it); a group of two units is decided by the pairs (Thm 5.4). */

#define ALL_MAX_UNITS 64
/* Default max_work: steps (search steps plus serializability-test steps) of all the groups of
 * scope=all together; about a second or two of search (doc/limits.md). */
#define BK_MAX_WORK 100000000ull

typedef struct bk_pev {
  uint32_t pos, kind, target, period; /* target: variable or lock (group-local in a group) */
} bk_pev;

typedef struct bk_frame {
  uint64_t sleep, todo;
  int chosen;
} bk_frame;

typedef struct bk_all {
  /* projection of every unit */
  bk_pev *pev;
  size_t pn, pcap;
  size_t *poff; /* per unit: offset in pev; poff[u + 1] - poff[u] events */
  size_t poff_cap;
  uint32_t *uf; /* union-find parent per unit */
  size_t uf_cap;
  uint32_t *vfirst; /* per variable: first unit accessing it in its projection, + 1 */
  size_t vf_cap;
  uint32_t *st1, *st2, *fwp; /* per variable scratch */
  size_t st_cap;
  /* the group being searched */
  uint32_t k;
  uint32_t unit[ALL_MAX_UNITS];
  bk_pev *gev; /* its events, group-local targets */
  size_t gev_cap;
  uint32_t off[ALL_MAX_UNITS + 1], pos[ALL_MAX_UNITS];
  uint32_t *need; /* per group event: k counts (events of unit v that must come first) */
  size_t need_cap;
  uint64_t pred[ALL_MAX_UNITS]; /* units that a serial order must put before it */
  uint32_t nvar, nlock;
  uint32_t *vmap, *lmap; /* id -> local index + 1, 0 if not in the group */
  size_t vmap_cap, lmap_cap;
  uint32_t *gvar; /* local index -> variable id */
  size_t gvar_cap;
  uint32_t *lockuse; /* per lock id: units of the group using it (count, capped at 2) */
  size_t lockuse_cap;
  uint32_t *holder; /* per local lock: unit + 1, 0 free */
  size_t holder_cap;
  bk_frame *fr;
  size_t fr_cap;
  uint32_t *sched; /* group event index of each executed event */
  size_t sched_cap, ns;
  int32_t *rf, *fin, *lastw; /* per scheduled event / per local variable */
  size_t rf_cap, fin_cap, lw_cap;
  int32_t *undo; /* (variable, previous last writer) pairs of all_place */
  size_t undo_cap, nundo;
  uint32_t *uof; /* group event -> its unit's index in the group */
  size_t uof_cap;
  uint64_t *rmask; /* per local variable: units that read it since its last write */
  size_t rmask_cap;
  uint64_t interleavings, steps, check_steps;
  int truncated;
  uint64_t work, max_work; /* steps of every group so far (max_work), its bound */
  int exhausted;           /* work reached max_work: the remaining groups are not searched */
} bk_all;

static void all_free(atom__mem *m, bk_all *a) {
  atom__mem_free(m, a->pev, a->pcap * sizeof *a->pev);
  atom__mem_free(m, a->poff, a->poff_cap * sizeof *a->poff);
  atom__mem_free(m, a->uf, a->uf_cap * sizeof *a->uf);
  atom__mem_free(m, a->vfirst, a->vf_cap * sizeof *a->vfirst);
  atom__mem_free(m, a->st1, a->st_cap * sizeof *a->st1);
  atom__mem_free(m, a->st2, a->st_cap * sizeof *a->st2);
  atom__mem_free(m, a->fwp, a->st_cap * sizeof *a->fwp);
  atom__mem_free(m, a->gev, a->gev_cap * sizeof *a->gev);
  atom__mem_free(m, a->need, a->need_cap * sizeof *a->need);
  atom__mem_free(m, a->vmap, a->vmap_cap * sizeof *a->vmap);
  atom__mem_free(m, a->lmap, a->lmap_cap * sizeof *a->lmap);
  atom__mem_free(m, a->gvar, a->gvar_cap * sizeof *a->gvar);
  atom__mem_free(m, a->lockuse, a->lockuse_cap * sizeof *a->lockuse);
  atom__mem_free(m, a->holder, a->holder_cap * sizeof *a->holder);
  atom__mem_free(m, a->fr, a->fr_cap * sizeof *a->fr);
  atom__mem_free(m, a->sched, a->sched_cap * sizeof *a->sched);
  atom__mem_free(m, a->rf, a->rf_cap * sizeof *a->rf);
  atom__mem_free(m, a->fin, a->fin_cap * sizeof *a->fin);
  atom__mem_free(m, a->lastw, a->lw_cap * sizeof *a->lastw);
  atom__mem_free(m, a->undo, a->undo_cap * sizeof *a->undo);
  atom__mem_free(m, a->uof, a->uof_cap * sizeof *a->uof);
  atom__mem_free(m, a->rmask, a->rmask_cap * sizeof *a->rmask);
  memset(a, 0, sizeof *a);
}

static uint32_t uf_find(uint32_t *p, uint32_t x) {
  while (p[x] != x) {
    p[x] = p[p[x]];
    x = p[x];
  }
  return x;
}

/* The UR-FW projection of every unit: the first uninitialized read and the final write of
 * each shared variable, and every lock operation, in order. */
static int all_project(block *b, bk_all *a) {
  size_t vc = b->var_cap + 1;
  if (!(a->st1 = atom__mem_calloc(b->mem, vc, sizeof *a->st1)) ||
      !(a->st2 = atom__mem_calloc(b->mem, vc, sizeof *a->st2)) ||
      !(a->fwp = atom__mem_calloc(b->mem, vc, sizeof *a->fwp)))
    return ATOM_ENOMEM;
  a->st_cap = vc;
  if (ATOM__GROW(b->mem, a->poff, a->poff_cap, b->unit_n + 1)) return ATOM_ENOMEM;
  for (size_t u = 0; u < b->unit_n; u++) {
    const bk_unit *un = &b->unit[u];
    const bk_rec *r = unit_log(b, un);
    uint32_t stamp = (uint32_t)u + 1;
    a->poff[u] = a->pn;
    for (uint32_t p = 0; p < un->len; p++)
      if (rec_kind(&r[p]) == RK_WRITE) a->fwp[r[p].target] = p;
    for (uint32_t p = 0; p < un->len; p++) {
      uint32_t k = rec_kind(&r[p]), x = r[p].target;
      int keep = k >= RK_ACQ;
      if (k <= RK_WRITE && shared_var(b, x)) {
        if (k == RK_WRITE) {
          keep = a->fwp[x] == p;
          a->st1[x] = stamp; /* written from here on */
        } else if (a->st1[x] != stamp && a->st2[x] != stamp) {
          keep = 1;
          a->st2[x] = stamp; /* its first uninitialized read is kept */
        }
      }
      if (!keep) continue;
      if (ATOM__GROW(b->mem, a->pev, a->pcap, a->pn + 1)) return ATOM_ENOMEM;
      a->pev[a->pn++] = (bk_pev){p, k, x, rec_period(&r[p])};
    }
  }
  a->poff[b->unit_n] = a->pn;
  return 0;
}

/* Units that take part in the search: those with a shared access; those that fork or join
 * (even without accesses, such a unit can close a cycle of serial-order constraints: it must
 * come before the thread it forks and after the thread it joins); and those with lock
 * operations (a lock block without accesses still decides which interleavings are feasible). */
static int all_has_access(const block *b, const bk_all *a, uint32_t u) {
  return b->unit[u].pfirst != b->unit[u].plast || a->poff[u + 1] > a->poff[u];
}

/* Units u before v in every schedule, or some event of u before some event of v (fork/join,
 * or a lock v keeps for good): a serial order must put u first. */
static int must_precede(const block *b, uint32_t u, uint32_t v) {
  const bk_unit *uu = &b->unit[u], *vv = &b->unit[v];
  if (uu->thread == vv->thread) return u < v;
  if (atom__periods_before(&b->periods, uu->pfirst, vv->plast)) return 1;
  return vv->forever != ATOM__LS_EMPTY && !atom__ls_disjoint(&b->ls, vv->forever, uu->used);
}

/* Build the group's event arrays: accesses, and operations on locks two of its units use. */
static int all_group(block *b, bk_all *a) {
  uint32_t k = a->k;
  size_t n = 0;
  a->nvar = a->nlock = 0;
  for (uint32_t i = 0; i < k; i++) /* locks used by two units of the group */
    for (size_t e = a->poff[a->unit[i]]; e < a->poff[a->unit[i] + 1]; e++) {
      const bk_pev *p = &a->pev[e];
      if (p->kind < RK_ACQ) continue;
      uint32_t *c = &a->lockuse[p->target];
      if ((*c & 0xffffu) != i + 1) *c = ((*c >> 16) + 1 > 2 ? 2 : (*c >> 16) + 1) << 16 | (i + 1);
    }
  for (uint32_t i = 0; i < k; i++) {
    uint32_t u = a->unit[i];
    a->off[i] = (uint32_t)n;
    for (size_t e = a->poff[u]; e < a->poff[u + 1]; e++) {
      bk_pev p = a->pev[e];
      if (p.kind >= RK_ACQ) {
        if ((a->lockuse[p.target] >> 16) < 2) continue;
        if (!a->lmap[p.target]) a->lmap[p.target] = ++a->nlock;
        p.target = a->lmap[p.target] - 1;
      } else {
        if (!a->vmap[p.target]) {
          if (ATOM__GROW(b->mem, a->gvar, a->gvar_cap, (size_t)a->nvar + 1)) return ATOM_ENOMEM;
          a->gvar[a->nvar] = p.target;
          a->vmap[p.target] = ++a->nvar;
        }
        p.target = a->vmap[p.target] - 1;
      }
      if (ATOM__GROW(b->mem, a->gev, a->gev_cap, n + 1)) return ATOM_ENOMEM;
      a->gev[n++] = p;
    }
  }
  a->off[k] = (uint32_t)n;
  /* undo the id maps for the next group */
  for (uint32_t i = 0; i < k; i++)
    for (size_t e = a->poff[a->unit[i]]; e < a->poff[a->unit[i] + 1]; e++) {
      const bk_pev *p = &a->pev[e];
      if (p->kind >= RK_ACQ) {
        a->lockuse[p->target] = 0;
        a->lmap[p->target] = 0;
      } else {
        a->vmap[p->target] = 0;
      }
    }
  /* fork/join requirements of every event, and the serial-order constraints */
  if (ATOM__GROW(b->mem, a->need, a->need_cap, n * k + 1) ||
      ATOM__GROW(b->mem, a->holder, a->holder_cap, (size_t)a->nlock + 1) ||
      ATOM__GROW(b->mem, a->sched, a->sched_cap, n + 1) ||
      ATOM__GROW(b->mem, a->rf, a->rf_cap, n + 1) ||
      ATOM__GROW(b->mem, a->fr, a->fr_cap, n + 2) ||
      ATOM__GROW(b->mem, a->fin, a->fin_cap, (size_t)a->nvar + 1) ||
      ATOM__GROW(b->mem, a->lastw, a->lw_cap, (size_t)a->nvar + 1) ||
      ATOM__GROW(b->mem, a->undo, a->undo_cap, 2 * n + 2) ||
      ATOM__GROW(b->mem, a->uof, a->uof_cap, n + 1) ||
      ATOM__GROW(b->mem, a->rmask, a->rmask_cap, (size_t)a->nvar + 1))
    return ATOM_ENOMEM;
  for (uint32_t i = 0; i < k; i++)
    for (uint32_t e = a->off[i]; e < a->off[i + 1]; e++) a->uof[e] = i;
  memset(a->rmask, 0, ((size_t)a->nvar + 1) * sizeof *a->rmask);
  for (uint32_t i = 0; i < k; i++) {
    uint32_t u = a->unit[i];
    a->pred[i] = 0;
    for (uint32_t j = 0; j < k; j++)
      if (j != i && must_precede(b, a->unit[j], u)) a->pred[i] |= 1ull << j;
    for (uint32_t e = a->off[i]; e < a->off[i + 1]; e++)
      for (uint32_t j = 0; j < k; j++) {
        uint32_t c = 0, v = a->unit[j];
        if (j != i) {
          if (b->unit[v].thread == b->unit[u].thread) {
            c = v < u ? a->off[j + 1] - a->off[j] : 0;
          } else {
            while (a->off[j] + c < a->off[j + 1] &&
                   atom__periods_before(&b->periods, a->gev[a->off[j] + c].period, a->gev[e].period))
              c++;
          }
        }
        a->need[(size_t)e * k + j] = c;
      }
  }
  return 0;
}

static int all_enabled(const bk_all *a, uint32_t i) {
  if (a->off[i] + a->pos[i] >= a->off[i + 1]) return 0;
  uint32_t e = a->off[i] + a->pos[i];
  const uint32_t *nd = a->need + (size_t)e * a->k;
  for (uint32_t j = 0; j < a->k; j++)
    if (a->pos[j] < nd[j]) return 0;
  const bk_pev *p = &a->gev[e];
  return p->kind != RK_ACQ || a->holder[p->target] == 0;
}

static uint64_t all_enabled_set(const bk_all *a) {
  uint64_t s = 0;
  for (uint32_t i = 0; i < a->k; i++)
    if (all_enabled(a, i)) s |= 1ull << i;
  return s;
}

/* Events of different units commute unless they access one variable (not both reading) or
 * operate on one lock. */
static int all_dependent(const bk_pev *x, const bk_pev *y) {
  if ((x->kind >= RK_ACQ) != (y->kind >= RK_ACQ) || x->target != y->target) return 0;
  if (x->kind >= RK_ACQ) return 1;
  return x->kind == RK_WRITE || y->kind == RK_WRITE;
}

/* Is there a serial order of the units in `mask` with the reads-from (a->rf) and final writes
 * (a->fin) of the schedule? Depth-first over the units that may come next. */
static int all_place(bk_all *a, uint64_t mask, uint64_t placed) {
  if (placed == mask) return 1;
  if (++a->check_steps > (1u << 20) || ++a->work > a->max_work) { /* per schedule; in all */
    a->truncated = 1;
    a->exhausted |= a->work > a->max_work;
    return 1; /* undecided: counted as serializable, and the bound is reported */
  }
  for (uint32_t i = 0; i < a->k; i++) {
    uint64_t bit = 1ull << i;
    if (!(mask & bit) || (placed & bit) || (a->pred[i] & mask & ~placed)) continue;
    int ok = 1;
    for (uint32_t e = a->off[i]; e < a->off[i + 1] && ok; e++) {
      const bk_pev *p = &a->gev[e];
      if (p->kind == RK_READ) ok = a->lastw[p->target] == a->rf[e];
      else if (p->kind == RK_WRITE)
        ok = a->fin[p->target] == (int32_t)i || a->fin[p->target] < 0 ||
             !(placed & 1ull << a->fin[p->target]);
    }
    if (!ok) continue;
    size_t mark = a->nundo; /* each unit writes a variable at most once (its final write) */
    for (uint32_t e = a->off[i]; e < a->off[i + 1]; e++)
      if (a->gev[e].kind == RK_WRITE) {
        a->undo[a->nundo++] = (int32_t)a->gev[e].target;
        a->undo[a->nundo++] = a->lastw[a->gev[e].target];
        a->lastw[a->gev[e].target] = (int32_t)i;
      }
    int found = all_place(a, mask, placed | bit);
    while (a->nundo > mark) {
      a->nundo -= 2;
      a->lastw[a->undo[a->nundo]] = a->undo[a->nundo + 1];
    }
    if (found) return 1;
  }
  return 0;
}

/* Conflict serializability of the schedule (restricted to mask) with the serial-order
 * constraints: the graph of units with an edge for each conflicting pair and each pred is
 * acyclic. It implies view serializability and settles almost every schedule at once. */
static int all_conflict_serializable(bk_all *a, uint64_t mask) {
  uint64_t succ[ALL_MAX_UNITS] = {0};
  for (uint32_t x = 0; x < a->nvar; x++) {
    a->lastw[x] = -1;
  }
  for (size_t s = 0; s < a->ns; s++) {
    uint32_t e = a->sched[s], i = a->uof[e];
    if (!(mask & 1ull << i)) continue;
    const bk_pev *p = &a->gev[e];
    if (p->kind > RK_WRITE) continue;
    int32_t w = a->lastw[p->target];
    if (w >= 0 && (uint32_t)w != i) succ[w] |= 1ull << i;
    if (p->kind == RK_WRITE) {
      for (uint64_t r = a->rmask[p->target] & ~(1ull << i); r; r &= r - 1)
        succ[__builtin_ctzll(r)] |= 1ull << i;
      a->rmask[p->target] = 0;
      a->lastw[p->target] = (int32_t)i;
    } else {
      a->rmask[p->target] |= 1ull << i;
    }
  }
  for (uint32_t x = 0; x < a->nvar; x++) a->rmask[x] = 0;
  uint64_t left = mask;
  for (uint32_t i = 0; i < a->k; i++)
    if (mask & 1ull << i)
      for (uint64_t q = a->pred[i] & mask; q; q &= q - 1) succ[__builtin_ctzll(q)] |= 1ull << i;
  /* Kahn's algorithm on at most 64 nodes: drop every node no remaining node points to */
  while (left) {
    uint64_t pointed = 0;
    for (uint64_t q = left; q; q &= q - 1) pointed |= succ[__builtin_ctzll(q)];
    uint64_t sources = left & ~pointed;
    if (!sources) return 0;
    left &= ~sources;
  }
  return 1;
}

/* View-serializability of the current schedule restricted to the units in mask. */
static int all_serializable(bk_all *a, uint64_t mask) {
  if (all_conflict_serializable(a, mask)) return 1;
  for (uint32_t x = 0; x < a->nvar; x++) a->lastw[x] = a->fin[x] = -1;
  for (size_t s = 0; s < a->ns; s++) {
    uint32_t e = a->sched[s], i = a->uof[e];
    if (!(mask & 1ull << i)) continue;
    const bk_pev *p = &a->gev[e];
    if (p->kind == RK_READ) a->rf[e] = a->lastw[p->target];
    else if (p->kind == RK_WRITE) a->lastw[p->target] = a->fin[p->target] = (int32_t)i;
  }
  for (uint32_t x = 0; x < a->nvar; x++) a->lastw[x] = -1;
  a->nundo = 0;
  a->check_steps = 0;
  return all_place(a, mask, 0);
}

static int all_report(block *b, bk_all *a, uint64_t mask) {
  uint32_t units[ALL_MAX_UNITS];
  size_t nu = 0;
  for (uint32_t i = 0; i < a->k; i++)
    if (mask & 1ull << i) units[nu++] = a->unit[i];
  for (size_t i = 1; i < nu; i++) /* oldest first */
    for (size_t j = i; j > 0 && b->unit[units[j - 1]].begin_index > b->unit[units[j]].begin_index; j--) {
      uint32_t t = units[j];
      units[j] = units[j - 1];
      units[j - 1] = t;
    }
  atom_ev ev[48];
  size_t ne = 0;
  for (size_t s = 0; s < a->ns; s++) {
    uint32_t e = a->sched[s], i = a->uof[e];
    if (!(mask & 1ull << i) || a->gev[e].kind >= RK_ACQ) continue;
    if (ne < sizeof ev / sizeof ev[0]) ev[ne++] = rec_ev(b, a->unit[i], a->gev[e].pos);
  }
  /* The session keeps consecutive transactions of one thread as one run: {tN} counts runs. */
  size_t runs = 0;
  for (size_t i = 0; i < nu; i++)
    runs += i == 0 || b->unit[units[i]].thread != b->unit[units[i - 1]].thread;
  char msg[1024];
  size_t off = 0;
  for (size_t i = 0; i < runs && i < 8; i++)
    atom__msg_append(msg, sizeof msg, &off, "%s{t%zu}", i == 0 ? "" : i + 1 == runs ? " and " : ", ",
                     i);
  if (runs > 8) atom__msg_append(msg, sizeof msg, &off, " and others");
  atom__msg_append(msg, sizeof msg, &off, " are not atomic together: they can run as");
  for (size_t i = 0; i < ne && i < 12; i++)
    atom__msg_append(msg, sizeof msg, &off, "%s{e%zu}", i ? ", then " : " ", i);
  if (ne > 12) atom__msg_append(msg, sizeof msg, &off, ", ...");
  atom__msg_append(msg, sizeof msg, &off, ", and no serial order reads and leaves the same values");
  for (size_t i = 0; i < nu; i++) mark_bad(b, units[i]);
  return report(b, "unserializable-interleaving", units, nu, ev, ne, msg, 0);
}

static int all_bound(block *b, bk_all *a, const char *why) {
  char msg[512], first[96];
  label_txn(b, a->unit[0], first, sizeof first);
  snprintf(msg, sizeof msg,
           "scope=all: %s on a group of %u related transactions from %s (%" PRIu64
           " interleavings explored): its atomicity is undecided",
           why, a->k, first, a->interleavings);
  return undecided(b, msg);
}

/* A non-serializable schedule was found: shrink it to a smallest set of units that is still
 * not serializable, and report it unless it is a pair the pair analysis reported. */
static int all_found(block *b, bk_all *a) {
  uint64_t mask = a->k == 64 ? ~0ull : (1ull << a->k) - 1;
  for (uint32_t i = 0; i < a->k; i++) {
    uint64_t m = mask & ~(1ull << i);
    if (!all_serializable(a, m)) mask = m;
  }
  if (a->exhausted) return 0;
  if (a->truncated) return all_bound(b, a, "the serializability test ran out of steps");
  uint32_t n = 0, bad = 0;
  for (uint32_t i = 0; i < a->k; i++)
    if (mask & 1ull << i) {
      n++;
      bad += b->site_bad[b->unit[a->unit[i]].site];
    }
  if (n <= 2 && bad == n) return 0;
  return all_report(b, a, mask);
}

/* Depth-first search over the feasible interleavings of the group, with sleep sets. */
static int all_search(block *b, bk_all *a) {
  uint32_t k = a->k;
  uint32_t total = a->off[k];
  memset(a->pos, 0, sizeof a->pos);
  memset(a->holder, 0, ((size_t)a->nlock + 1) * sizeof *a->holder);
  a->ns = 0;
  a->interleavings = a->steps = a->check_steps = 0;
  a->truncated = 0;
  uint64_t full = k == 64 ? ~0ull : (1ull << k) - 1;
  size_t depth = 0;
  a->fr[0] = (bk_frame){0, all_enabled_set(a), -1};
  for (;;) {
    tick(b, b->work_base);
    bk_frame *f = &a->fr[depth];
    if (f->chosen >= 0) { /* undo the event chosen at this depth */
      uint32_t i = (uint32_t)f->chosen;
      a->pos[i]--;
      a->ns--;
      const bk_pev *p = &a->gev[a->off[i] + a->pos[i]];
      if (p->kind == RK_ACQ) a->holder[p->target] = 0;
      else if (p->kind == RK_REL) a->holder[p->target] = i + 1;
      f->sleep |= 1ull << i;
      f->chosen = -1;
    }
    if (!f->todo) {
      if (depth == 0) break;
      depth--;
      continue;
    }
    if (++a->steps > b->max_il * 64 + total) return all_bound(b, a, "max_interleavings reached");
    if (++a->work > a->max_work) {
      a->exhausted = 1;
      return 0;
    }
    uint32_t i = (uint32_t)__builtin_ctzll(f->todo);
    f->todo &= f->todo - 1;
    const bk_pev *p = &a->gev[a->off[i] + a->pos[i]];
    uint64_t sleep = 0;
    for (uint64_t s = f->sleep; s; s &= s - 1) {
      uint32_t j = (uint32_t)__builtin_ctzll(s);
      if (!all_dependent(&a->gev[a->off[j] + a->pos[j]], p)) sleep |= 1ull << j;
    }
    a->sched[a->ns++] = a->off[i] + a->pos[i];
    if (p->kind == RK_ACQ) a->holder[p->target] = i + 1;
    else if (p->kind == RK_REL) a->holder[p->target] = 0;
    a->pos[i]++;
    f->chosen = (int)i;
    if (a->ns == total) {
      a->interleavings++;
      if (!all_serializable(a, full)) return all_found(b, a);
      if (a->exhausted) return 0;
      if (a->truncated) return all_bound(b, a, "the serializability test ran out of steps");
      if (a->interleavings >= b->max_il) {
        /* done only if nothing is left to explore */
        int more = 0;
        for (size_t d = 0; d <= depth && !more; d++) more = a->fr[d].todo != 0;
        if (more) return all_bound(b, a, "max_interleavings reached");
      }
      continue;
    }
    uint64_t en = all_enabled_set(a);
    if (!en) continue; /* deadlock: not a complete schedule */
    a->fr[++depth] = (bk_frame){sleep, en & ~sleep, -1};
  }
  (void)full;
  return 0;
}

static int analyse_all(block *b) {
  bk_all a;
  memset(&a, 0, sizeof a);
  a.max_work = b->max_work;
  int rc = all_project(b, &a);
  size_t nu = b->unit_n;
  if (!rc && (ATOM__GROW(b->mem, a.uf, a.uf_cap, nu + 1) ||
              ATOM__GROW(b->mem, a.vfirst, a.vf_cap, b->var_cap + 1) ||
              ATOM__GROW(b->mem, a.vmap, a.vmap_cap, b->var_cap + 1) ||
              ATOM__GROW(b->mem, a.lmap, a.lmap_cap, (size_t)b->nlocks + 1) ||
              ATOM__GROW(b->mem, a.lockuse, a.lockuse_cap, (size_t)b->nlocks + 1)))
    rc = ATOM_ENOMEM;
  if (rc) goto out;
  /* Groups: units that access a common shared variable, units of one thread and of threads
   * that fork or join one another (program order and fork/join order units), units that take a
   * lock another keeps for good -- transitively. 000 §5.4 splits by variables only; the orders
   * are needed too, because a cycle of serial-order constraints may run through units that
   * share no variable (a read orders two units in one group, program order or a fork closes the
   * cycle through another). */
  size_t nt = b->th_cap + 1;
  uint32_t *tuf = NULL, *trep = NULL;
  if (!(tuf = atom__mem_alloc(b->mem, nt * sizeof *tuf)) ||
      !(trep = atom__mem_alloc(b->mem, nt * sizeof *trep))) {
    atom__mem_free(b->mem, tuf, nt * sizeof *tuf);
    rc = ATOM_ENOMEM;
    goto out;
  }
  for (size_t t = 0; t < nt; t++) {
    tuf[t] = (uint32_t)t;
    trep[t] = NONE32;
  }
  for (size_t i = 0; i + 1 < b->fj_n; i += 2) /* threads related by fork or join */
    if (b->fj[i] < nt && b->fj[i + 1] < nt) tuf[uf_find(tuf, b->fj[i + 1])] = uf_find(tuf, b->fj[i]);
  for (size_t u = 0; u < nu; u++) a.uf[u] = (uint32_t)u;
  for (size_t u = 0; u < nu; u++) {
    if (!all_has_access(b, &a, (uint32_t)u)) continue;
    uint32_t tc = uf_find(tuf, b->unit[u].thread);
    if (trep[tc] == NONE32) trep[tc] = (uint32_t)u;
    else a.uf[uf_find(a.uf, (uint32_t)u)] = uf_find(a.uf, trep[tc]);
    for (size_t e = a.poff[u]; e < a.poff[u + 1]; e++) {
      const bk_pev *p = &a.pev[e];
      if (p->kind >= RK_ACQ) continue;
      if (!a.vfirst[p->target]) a.vfirst[p->target] = (uint32_t)u + 1;
      else a.uf[uf_find(a.uf, (uint32_t)u)] = uf_find(a.uf, a.vfirst[p->target] - 1);
    }
  }
  atom__mem_free(b->mem, tuf, nt * sizeof *tuf);
  atom__mem_free(b->mem, trep, nt * sizeof *trep);
  for (size_t u = 0; u < nu; u++) /* locks kept for good order their other users */
    if (b->unit[u].forever != ATOM__LS_EMPTY && all_has_access(b, &a, (uint32_t)u))
      for (size_t v = 0; v < nu; v++)
        if (v != u && all_has_access(b, &a, (uint32_t)v) &&
            !atom__ls_disjoint(&b->ls, b->unit[u].forever, b->unit[v].used))
          a.uf[uf_find(a.uf, (uint32_t)v)] = uf_find(a.uf, (uint32_t)u);
  /* one search per group: bucket the units by group (in order), skip groups already decided */
  uint32_t *order = atom__mem_alloc(b->mem, (nu + 1) * sizeof *order);
  if (!order) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  size_t no = 0;
  for (size_t u = 0; u < nu; u++)
    if (all_has_access(b, &a, (uint32_t)u)) order[no++] = (uint32_t)u;
  /* stable counting sort of `order` by group root, through the union-find array itself */
  {
    uint32_t *cnt = atom__mem_calloc(b->mem, nu + 1, sizeof *cnt), *tmp = NULL;
    if (cnt) tmp = atom__mem_alloc(b->mem, (no + 1) * sizeof *tmp);
    if (!cnt || !tmp) {
      atom__mem_free(b->mem, cnt, (nu + 1) * sizeof *cnt);
      atom__mem_free(b->mem, order, (nu + 1) * sizeof *order);
      rc = ATOM_ENOMEM;
      goto out;
    }
    for (size_t i = 0; i < no; i++) cnt[uf_find(a.uf, order[i]) + 1]++;
    for (size_t r = 0; r < nu; r++) cnt[r + 1] += cnt[r];
    for (size_t i = 0; i < no; i++) tmp[cnt[uf_find(a.uf, order[i])]++] = order[i];
    memcpy(order, tmp, no * sizeof *order);
    atom__mem_free(b->mem, cnt, (nu + 1) * sizeof *cnt);
    atom__mem_free(b->mem, tmp, (no + 1) * sizeof *tmp);
  }
  for (size_t g = 0; g < no && !rc;) {
    uint32_t root = uf_find(a.uf, order[g]);
    size_t ge = g, bad = 0;
    int multi = 0;
    while (ge < no && uf_find(a.uf, order[ge]) == root) {
      uint32_t u = order[ge];
      bad += b->unit_bad[u];
      multi |= b->unit[u].thread != b->unit[order[g]].thread;
      if (ge - g < ALL_MAX_UNITS) a.unit[ge - g] = u;
      ge++;
    }
    size_t count = ge - g;
    g = ge;
    if (count <= 2 || bad || !multi) continue;
    if (count > ALL_MAX_UNITS) {
      a.k = ALL_MAX_UNITS;
      char why[96];
      snprintf(why, sizeof why, "a group of %zu transactions is more than the search handles (%d)",
               count, ALL_MAX_UNITS);
      rc = all_bound(b, &a, why);
      continue;
    }
    a.k = (uint32_t)count;
    if ((rc = all_group(b, &a))) break;
    rc = all_search(b, &a);
    if (!rc && a.exhausted) {
      /* the total bound: this group and every later one are left undecided */
      uint64_t left = 1;
      for (size_t h = ge; h < no;) {
        uint32_t r2 = uf_find(a.uf, order[h]);
        size_t he = h;
        while (he < no && uf_find(a.uf, order[he]) == r2) he++;
        left += he - h > 2;
        h = he;
      }
      char msg[400];
      snprintf(msg, sizeof msg,
               "scope=all: the search stopped after %" PRIu64 " steps (max_work=%" PRIu64
               "): %" PRIu64 " group%s of more than two related transactions not searched",
               a.work - 1, b->max_work, left, left == 1 ? "" : "s");
      /* counted as one more undecided item, its reason preferred: it is the one to raise */
      b->undecided++;
      set_why(b, msg);
      break;
    }
  }
  atom__mem_free(b->mem, order, (nu + 1) * sizeof *order);
out:
  all_free(b->mem, &a);
  return rc;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static void bk_release(block *b);

static int bk_finish(void *self) {
  block *b = self;
  if (b->analysed) return 0;
  b->analysed = 1;
  int rc = 0;
  /* Units still open (a thread that ends holding a lock) end with their thread's events. */
  for (size_t t = 0; t < b->th_cap && !rc; t++) {
    bk_thread *th = &b->th[t];
    if (!th->open) continue;
    uint32_t p;
    if ((rc = cur_period(b, (uint32_t)t, &p))) break;
    rc = unit_close(b, (uint32_t)t, th, p, 1);
  }
  for (size_t t = 0; t < b->th_cap; t++) {
    atom__mem_free(b->mem, b->th[t].buf, b->th[t].cap * sizeof *b->th[t].buf);
    b->th[t].buf = NULL;
    b->th[t].cap = b->th[t].n = 0;
  }
  if (!rc) rc = unit_locks(b);
  if (!rc) rc = build_sites(b);
  if (!rc) rc = build_tuples(b);
  b->work_total = b->tup.n + b->sites.n + (b->scope_all ? b->unit_n : 0);
  b->work_base = 0;
  if (!rc) rc = analyse_free_pairs(b);
  b->work_base = b->tup.n;
  if (!rc) rc = analyse_forced_pairs(b);
  b->work_base = b->tup.n + b->sites.n;
  if (!rc) rc = group_emit(b);
  if (!rc && b->scope_all) rc = analyse_all(b);
  if (!rc) (void)atom_env_progress(b->env, b->work_total, b->work_total);
  if (!rc && b->undecided) {
    char more[64] = "";
    if (b->undecided > 1)
      snprintf(more, sizeof more, " (%" PRIu64 " bounds reached in all)", b->undecided);
    rc = atom_env_incomplete(b->env, b->events, "%s%s", b->undecided_why, more);
  }
  /* Decided: nothing needs to stay (the reports belong to the session). */
  b->units_done = b->unit_n;
  b->periods_done = b->periods.n;
  bk_release(b);
  return rc;
}

/* Free everything but the checker itself (its sizes are reset, so this may run twice). */
static void bk_release(block *b) {
  for (size_t t = 0; t < b->th_cap; t++)
    atom__mem_free(b->mem, b->th[t].buf, b->th[t].cap * sizeof *b->th[t].buf);
#define BK_FREE(arr, cap)                                      \
  do {                                                         \
    atom__mem_free(b->mem, (arr), (cap) * sizeof *(arr));      \
    (arr) = NULL;                                              \
    (cap) = 0;                                                 \
  } while (0)
  BK_FREE(b->th, b->th_cap);
  BK_FREE(b->var, b->var_cap);
  BK_FREE(b->log, b->log_cap);
  BK_FREE(b->unit, b->unit_cap);
  BK_FREE(b->fj, b->fj_cap);
  BK_FREE(b->site_rep, b->site_rep_cap);
  BK_FREE(b->site_bad, b->site_bad_cap);
  BK_FREE(b->unit_bad, b->unit_bad_cap);
  BK_FREE(b->rep, b->rep_cap);
#undef BK_FREE
  b->log_n = b->unit_n = b->fj_n = 0;
  tset_free(b->mem, &b->sites);
  tset_free(b->mem, &b->tup);
  atom__ls_destroy(&b->ls);
  atom__periods_destroy(&b->periods);
  atom__periods_init(&b->periods, b->mem);
  atom__u64map_free(&b->seen, b->mem);
  atom__mem_free(b->mem, b->grp, b->grp_cap * sizeof *b->grp);
  b->grp = NULL;
  b->grp_n = b->grp_cap = 0;
  atom__u64map_free(&b->grp_of, b->mem);
  atom__u64map_free(&b->grp_pair, b->mem);
}

static void bk_destroy(void *self) {
  block *b = self;
  if (!b) return;
  bk_release(b);
  atom__mem_free(b->mem, b, sizeof *b);
}

static int bk_stats(void *self, atom_checker_counters *out) {
  block *b = self;
  /* units recorded, blocks/accesses/2-blocks built, thread periods */
  out->nodes = b->analysed ? b->units_done : b->unit_n;
  out->edges = b->tuples_built;
  out->clocks = b->analysed ? b->periods_done : b->periods.n;
  return 0;
}

static int bk_create(void **self, atom_env *env) {
  int scope_all = 0;
  uint64_t max_il = 100000, max_work = BK_MAX_WORK;
  const char *scope = atom_env_arg(env, "scope");
  if (scope) {
    if (strcmp(scope, "all") == 0) scope_all = 1;
    else if (strcmp(scope, "pairs") != 0)
      return atom_env_error(env, ATOM_EINVAL, "scope must be pairs or all, not \"%s\"", scope);
  }
  int lock_blocks = 1;
  int rc = atom__arg_count(env, "max_interleavings", 1ull << 48, "2^48", &max_il);
  if (!rc) rc = atom__arg_count(env, "max_work", 1ull << 62, "2^62", &max_work);
  if (!rc) rc = atom__arg_yes_no(env, "lock_blocks", &lock_blocks);
  if (rc) return rc;
  atom__mem first;
  atom__mem_init_env(&first, env);
  block *b = atom__mem_calloc(&first, 1, sizeof *b);
  if (!b) return atom_env_error(env, ATOM_ENOMEM, "out of memory");
  b->own_mem = first;
  atom__mem *mem = &b->own_mem;
  b->env = env;
  b->mem = mem;
  b->scope_all = scope_all;
  b->lock_blocks = lock_blocks;
  b->max_il = max_il;
  b->max_work = max_work;
  atom__periods_init(&b->periods, mem);
  atom__ls_init(&b->ls, mem);
  tset_init(&b->sites, KW_SITE);
  tset_init(&b->tup, KW_TUPLE);
  for (unsigned s = 0; s < ATOM__BLK_SHAPES; s++) b->tbl[s] = atom__blk_2blk_mask(s);
  *self = b;
  return 0;
}

static const char *const bk_keys[] = {"scope", "max_interleavings", "max_work", "lock_blocks",
                                     NULL};

const atom_checker atom__checker_block = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_ACQUIRE) |
        ATOM_KIND_BIT(ATOM_RELEASE) | ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) |
        ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_FENCE),
    "block",
    "view-atomicity of every pair of transactions over the feasible interleavings (blocks)",
    bk_keys,
    bk_create,
    bk_event,
    bk_finish,
    bk_destroy,
    bk_stats,
    .properties = ATOM_CHECKER_PROP_AT_FINISH | ATOM_CHECKER_PROP_PREDICTIVE,
};
