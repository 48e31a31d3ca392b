/* reduction: Lipton reduction with movers inferred from locksets (000 §4).
 *
 * 000 Thm 4.1: a set of transactions is atomic if every transaction has the form
 * (R+B)*N?(L+B)*, where R, L, B, N are right-, left-, both- and non-movers. 000 Thm 4.2:
 * acquires are right movers, releases left movers, race-free accesses both movers; every other
 * access is a non-mover. FORK and JOIN, which the paper does not treat, are classified by the
 * same argument as RELEASE and ACQUIRE: fork(u) can always move left (no event of u precedes
 * it) but not right (u's first event may follow it), join(u) can always move right (no event
 * of u follows it) but not left. BEGIN/END only delimit; FENCE and COMMIT are not requested.
 *
 * Race-freedom (which accesses are both movers) comes in two variants, argument `lockset`:
 *
 *   precise (default) 000 Thm 4.3: an access is race-free if every conflicting access of
 *           another thread holds a lock in common with it. The paper exempts accesses "part of
 *           initialization", i.e. accesses that cannot run concurrently with another thread's
 *           (its footnote 5). We use the exact form of that requirement: two accesses ordered
 *           by the fork/join happens-before relation are never adjacent in any feasible
 *           schedule (a FORK or JOIN lies between them), so they never race. This covers
 *           initialization before FORK and read-back after JOIN. Deciding it needs every
 *           access of the trace, so the verdict is made at finish.
 *   eraser  000 Thm 4.4 with Eraser's lockset refinement (SBN+97): all accesses of x are race
 *           free if the locks held at every shared access of x have one in common, or if x is
 *           never written while shared. "Shared" is again taken in the exact sense: an access
 *           is exclusive (initialization) while it is ordered by happens-before with every
 *           access of x by other threads. This is tracked online, and a transaction is judged
 *           at its END; since variables only ever lose race-freedom, a transaction that fails
 *           there fails for good and is reported at once, while one that passes is kept (its
 *           access classes only) and reported later, at the access that makes one of its
 *           variables racy, if that breaks its form. The final verdict is that of Thm 4.4 over
 *           the whole trace.
 *
 * Access classes. Accesses are grouped into classes that are equivalent for the analysis
 * (precise: variable, thread, happens-before segment, read/write, held lockset; eraser:
 * variable, thread, exclusive segment), so that the race analysis and the transactions' records
 * are proportional to the number of classes, not of events. A transaction keeps, per class,
 * its first two occurrences: enough to find where its form breaks (see first_break()).
 *
 * Reports (kind "not-reducible") name the transaction and the two events where the form
 * breaks: two non-movers; a non-mover after a left mover; or a right mover after a non-mover
 * or a left mover.
 *
 * Work bound (precise): the race analysis compares the classes of one variable pairwise, which
 * is quadratic in the classes of a variable. It stops after max_work comparisons; classes not
 * yet found racy are then taken as race free. Making an access a non-mover can only break a
 * form, never repair one, so every report made is still true; the checker ends INCOMPLETE
 * (atom_env_incomplete) because some may be missing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "support/argval.h"
#include "core/kinds.h"
#include "support/msgbuf.h"
#include "support/lockset.h"

#define NONE UINT32_MAX
#define NO_INDEX UINT64_MAX

enum { MODE_PRECISE = 0, MODE_ERASER = 1 };

/* held(e) is tracked up to this many locks per thread; locks taken beyond it are ignored, which
 * only makes accesses look less protected (more races, more reports: still sound) and keeps
 * the hash-consed sets small when a thread holds thousands of locks. */
#define HELD_MAX 64u

/* Default max_work: class comparisons of the precise race analysis, about a second. */
#define RD_MAX_WORK 100000000ull

/* A fork/join vector clock, sparse: the components of the threads that precede through FORK
 * and JOIN, sorted by thread. Usually a handful, whatever the number of threads. */
typedef struct rd_comp {
  uint32_t thread, clock;
} rd_comp;

typedef struct rd_clock {
  rd_comp *c;
  uint32_t n, cap;
} rd_clock;

/* ---------------------------------------------------------------- records */

/* An occurrence of a class in a transaction. */
typedef struct rd_entry {
  uint32_t key;   /* access class */
  uint32_t aux;   /* eraser, pending: its waiter node */
  uint32_t count; /* occurrences in the transaction (saturates) */
  uint8_t kind1, kind2, is_n, pad;
  uint64_t i1, l1; /* index and loc of the first occurrence */
  uint64_t i2, l2; /* of the second (count >= 2) */
} rd_entry;

/* A synchronization event of a transaction: a right mover (acquire, join) or its first left
 * mover (release, fork). */
typedef struct rd_sync {
  uint64_t index, loc;
  uint32_t kind, target;
} rd_sync;

/* A completed transaction kept for a later verdict. One block: header, entries, syncs. */
typedef struct rd_txn {
  uint32_t thread;
  uint32_t nent, nrs;
  uint32_t has_l;
  uint32_t slot;     /* eraser: its slot in the pending table */
  uint32_t nwait;    /* eraser: waiters still linked */
  uint64_t begin_index, begin_loc;
  rd_sync first_l;
  rd_entry ent[];    /* then nrs rd_sync */
} rd_txn;

static inline rd_sync *txn_rs(rd_txn *t) { return (rd_sync *)(void *)(t->ent + t->nent); }
static inline size_t txn_size(uint32_t nent, uint32_t nrs) {
  return sizeof(rd_txn) + (size_t)nent * sizeof(rd_entry) + (size_t)nrs * sizeof(rd_sync);
}

/* An access class. */
typedef struct rd_key {
  uint32_t var, thread;
  uint32_t seg;   /* precise: happens-before snapshot; eraser: exclusive segment uid or NONE */
  uint32_t ls;    /* precise: held lockset; eraser: 0 */
  uint32_t write; /* precise: 1 for writes; eraser: 0 */
  uint32_t entry; /* its entry in the open transaction whose serial is stamp */
  uint64_t stamp;
  uint64_t hash;
  /* precise: the analysis at finish */
  uint32_t racy, partner;
  uint64_t first_index; /* its first access (named when it is a partner) */
  uint64_t first_loc;
} rd_key;

/* A happens-before snapshot: the fork/join clock of a thread over one segment (precise). */
typedef struct rd_snap {
  uint32_t thread, clock;
  rd_clock vc;
} rd_snap;

typedef struct rd_thread {
  rd_clock vc;       /* fork/join happens-before; vc[t] numbers t's segment */
  atom__ls held;     /* 000 §4 held(e): the locks the thread holds now */
  uint32_t started;
  uint32_t snap;     /* precise: snapshot of the current segment, or NONE */
  /* the open transaction */
  uint32_t in_txn;
  uint32_t has_l, rs_done;
  uint64_t serial;
  uint64_t begin_index, begin_loc;
  rd_sync first_l;
  rd_entry *ent;
  size_t nent, ent_cap;
  rd_sync *rs;
  size_t nrs, rs_cap;
} rd_thread;

/* eraser: per-variable state. */
typedef struct rd_front {
  uint32_t thread, clock; /* last access of a thread, not known to precede a later access */
} rd_front;

typedef struct rd_aseg {
  uint32_t thread, clock; /* the segment */
  uint32_t uid;
  atom__ls ls;            /* ∩ held over its accesses */
  uint32_t wrote;
  uint32_t waiters;       /* sentinel of its waiter list */
} rd_aseg;

typedef struct rd_evar {
  rd_front *fr;
  uint32_t nfr, frcap;
  rd_front wit[2]; /* earlier accesses of two threads that were concurrent with a later one */
  uint32_t nwit;
  rd_aseg *al; /* alive exclusive segments, a happens-before chain, oldest first */
  uint32_t nal, alcap;
  uint32_t next_uid;
  atom__ls c;          /* ∩ held over the shared (non-exclusive) accesses */
  uint8_t c_top;       /* no shared access yet (c is "every lock") */
  uint8_t shared_write;
  uint8_t racy;
  uint8_t pad;
  uint32_t nx_waiters; /* sentinel of the waiters on shared accesses, or NONE */
  uint64_t racy_index; /* the access that made it racy */
} rd_evar;

/* eraser: doubly-linked waiter lists with sentinels, in one pool. */
typedef struct rd_waiter {
  uint32_t prev, next;
  uint32_t txn;   /* pending slot; NONE for a sentinel */
  uint32_t entry;
} rd_waiter;

typedef struct reduction {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int mode;
  atom__lsets ls;
  rd_thread *th;
  size_t th_cap;
  uint32_t n_th;
  uint64_t serial;
  /* access classes */
  rd_key *key;
  size_t nkey, key_cap;
  uint32_t *kidx; /* open addressing: key id + 1 */
  size_t kidx_cap;
  rd_clock *relv; /* per variable: the join of the clocks of its release writes (sync order) */
  size_t relv_cap;
  /* precise */
  rd_snap *snap;
  size_t nsnap, snap_cap;
  rd_txn **txn;
  size_t ntxn, txn_cap;
  /* eraser */
  rd_evar *var;
  size_t var_cap;
  rd_waiter *w;
  size_t nw, w_cap;
  uint32_t w_free;
  rd_txn **pend;
  size_t npend_slots, pend_cap, npend;
  uint32_t *pend_free;
  size_t npend_free, pend_free_cap;
  uint8_t *isn; /* scratch */
  size_t isn_cap;
  size_t done; /* precise: transactions judged at finish */
  int finished;
  uint64_t max_work;    /* precise: class comparisons the race analysis may make */
  uint64_t events;      /* 1 + the largest event index seen: where the end-of-run bound stops */
  uint64_t work;        /* comparisons made */
  uint32_t vars_cut;    /* variables whose comparisons the bound cut short */
  /* signatures reported already (direct-mapped): a repeat needs no message */
  struct rd_seen {
    uint64_t loc, extra;
    uint32_t used, pad;
  } seen[256];
} reduction;

/* ---------------------------------------------------------------- helpers */

static uint32_t clk_get(const rd_clock *k, uint32_t t) {
  uint32_t lo = 0, hi = k->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (k->c[mid].thread < t) lo = mid + 1;
    else hi = mid;
  }
  return lo < k->n && k->c[lo].thread == t ? k->c[lo].clock : 0;
}

static void clk_free(atom__mem *m, rd_clock *k) {
  atom__mem_free(m, k->c, (size_t)k->cap * sizeof *k->c);
  k->c = NULL;
  k->n = k->cap = 0;
}

static int clk_reserve(atom__mem *m, rd_clock *k, size_t n) {
  if (n <= k->cap) return 0;
  if (n > UINT32_MAX) return ATOM_ENOMEM;
  size_t cap = k->cap;
  if (atom__grow(m, (void **)&k->c, &cap, n, sizeof *k->c)) return ATOM_ENOMEM;
  k->cap = (uint32_t)cap;
  return 0;
}

/* k[t] := v. 0 or ATOM_ENOMEM (k unchanged). */
static int clk_set(atom__mem *m, rd_clock *k, uint32_t t, uint32_t v) {
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
  k->c[lo] = (rd_comp){t, v};
  k->n++;
  return 0;
}

/* *out := a ⊔ b (out is a fresh clock; a, b unchanged). */
static int clk_merge(atom__mem *m, const rd_clock *a, const rd_clock *b, rd_clock *out) {
  rd_clock k = {NULL, 0, 0};
  if (clk_reserve(m, &k, (size_t)a->n + b->n + 1)) return ATOM_ENOMEM;
  uint32_t i = 0, j = 0;
  while (i < a->n || j < b->n) {
    if (j == b->n || (i < a->n && a->c[i].thread < b->c[j].thread)) k.c[k.n++] = a->c[i++];
    else if (i == a->n || b->c[j].thread < a->c[i].thread) k.c[k.n++] = b->c[j++];
    else {
      rd_comp x = a->c[i++];
      if (b->c[j].clock > x.clock) x.clock = b->c[j].clock;
      j++;
      k.c[k.n++] = x;
    }
  }
  *out = k;
  return 0;
}

static int ensure_thread(reduction *r, uint32_t t) {
  if (t < r->n_th) return 0;
  if (ATOM__GROW(r->mem, r->th, r->th_cap, (size_t)t + 1)) return ATOM_ENOMEM;
  for (uint32_t u = r->n_th; u <= t; u++) r->th[u].snap = NONE;
  r->n_th = t + 1;
  return 0;
}

/* A thread seen first without a FORK is a root: its clock starts at <0..1..0>. */
static int start_thread(reduction *r, uint32_t t) {
  rd_thread *th = &r->th[t];
  if (th->started) return 0;
  if (clk_set(r->mem, &th->vc, t, 1)) return ATOM_ENOMEM;
  th->started = 1;
  return 0;
}

static inline int is_access(uint32_t kind) { return kind == ATOM_READ || kind == ATOM_WRITE; }

static uint64_t key_hash(uint32_t var, uint32_t thread, uint32_t seg, uint32_t ls, uint32_t w) {
  uint64_t h = atom__hash64(((uint64_t)var << 32 | thread) ^ 0x5bd1e9955bd1e995ULL);
  h = atom__hash64(h ^ ((uint64_t)seg << 32 | ls));
  return atom__hash64(h ^ w);
}

/* The id of an access class, made if new. */
static int key_get(reduction *r, uint32_t var, uint32_t thread, uint32_t seg, uint32_t ls,
                   uint32_t w, uint32_t *out) {
  uint64_t h = key_hash(var, thread, seg, ls, w);
  if (r->kidx_cap) {
    size_t mask = r->kidx_cap - 1;
    for (size_t i = (size_t)h & mask; r->kidx[i]; i = (i + 1) & mask) {
      const rd_key *k = &r->key[r->kidx[i] - 1];
      if (k->hash == h && k->var == var && k->thread == thread && k->seg == seg && k->ls == ls &&
          k->write == w) {
        *out = r->kidx[i] - 1;
        return 0;
      }
    }
  }
  if (r->nkey >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(r->mem, r->key, r->key_cap, r->nkey + 1)) return ATOM_ENOMEM;
  if ((r->nkey + 1) * 2 > r->kidx_cap) {
    size_t ncap = r->kidx_cap ? r->kidx_cap * 2 : 64;
    uint32_t *ni = atom__mem_calloc(r->mem, ncap, sizeof *ni);
    if (!ni) return ATOM_ENOMEM;
    for (size_t k = 0; k < r->nkey; k++) {
      size_t j = (size_t)r->key[k].hash & (ncap - 1);
      while (ni[j]) j = (j + 1) & (ncap - 1);
      ni[j] = (uint32_t)k + 1;
    }
    atom__mem_free(r->mem, r->kidx, r->kidx_cap * sizeof *r->kidx);
    r->kidx = ni;
    r->kidx_cap = ncap;
  }
  uint32_t id = (uint32_t)r->nkey++;
  rd_key *k = &r->key[id];
  memset(k, 0, sizeof *k);
  k->var = var;
  k->thread = thread;
  k->seg = seg;
  k->ls = ls;
  k->write = w;
  k->hash = h;
  k->partner = NONE;
  k->first_index = NO_INDEX;
  size_t j = (size_t)h & (r->kidx_cap - 1);
  while (r->kidx[j]) j = (j + 1) & (r->kidx_cap - 1);
  r->kidx[j] = id + 1;
  *out = id;
  return 0;
}

/* Record an access of class k by the open transaction of th. */
static int txn_note_access(reduction *r, rd_thread *th, uint32_t k, const atom_ev *ev) {
  rd_key *key = &r->key[k];
  if (key->stamp == th->serial && key->entry < th->nent) {
    rd_entry *e = &th->ent[key->entry];
    if (e->count == 1) {
      e->i2 = ev->index;
      e->l2 = ev->loc;
      e->kind2 = (uint8_t)ev->kind;
    }
    if (e->count < UINT32_MAX) e->count++;
    return 0;
  }
  if (ATOM__GROW(r->mem, th->ent, th->ent_cap, th->nent + 1)) return ATOM_ENOMEM;
  rd_entry *e = &th->ent[th->nent];
  memset(e, 0, sizeof *e);
  e->key = k;
  e->aux = NONE;
  e->count = 1;
  e->kind1 = (uint8_t)ev->kind;
  e->i1 = ev->index;
  e->l1 = ev->loc;
  key->stamp = th->serial;
  key->entry = (uint32_t)th->nent++;
  return 0;
}

/* Record a synchronization event of the open transaction: every right mover up to the first
 * one after the first left mover (later ones can never be where the form first breaks), and
 * the first left mover. */
static int txn_note_sync(reduction *r, rd_thread *th, const atom_ev *ev) {
  int right = ev->kind == ATOM_ACQUIRE || ev->kind == ATOM_JOIN || ev->kind == ATOM_READ;
  rd_sync s = {ev->index, ev->loc, ev->kind, ev->target};
  if (!right) {
    if (!th->has_l) {
      th->has_l = 1;
      th->first_l = s;
    }
    return 0;
  }
  if (th->rs_done) return 0;
  if (ATOM__GROW(r->mem, th->rs, th->rs_cap, th->nrs + 1)) return ATOM_ENOMEM;
  th->rs[th->nrs++] = s;
  if (th->has_l) th->rs_done = 1;
  return 0;
}

/* ---------------------------------------------------------------- the form (000 Thm 4.1) */

enum { BRK_NONE = 0, BRK_TWO_N, BRK_N_AFTER_L, BRK_R_AFTER };

/* An event named in a report. */
typedef struct rd_named {
  uint64_t index, loc;
  uint32_t kind, target;
  uint32_t key; /* for an access: its class */
} rd_named;

typedef struct rd_break {
  int what;
  rd_named c, f; /* where the transaction commits (first non-mover or left mover), and where
                    the form breaks */
} rd_break;

static rd_named named_access(const reduction *r, const rd_entry *e, int second) {
  rd_named n;
  n.index = second ? e->i2 : e->i1;
  n.loc = second ? e->l2 : e->l1;
  n.kind = second ? e->kind2 : e->kind1;
  n.target = r->key[e->key].var;
  n.key = e->key;
  return n;
}

static rd_named named_sync(const rd_sync *s) {
  rd_named n = {s->index, s->loc, s->kind, s->target, NONE};
  return n;
}

/* Where does (R+B)*N?(L+B)* first fail on this transaction, given which entries are non-movers
 * (isn)? Scanning left to right, the transaction commits at its first non-mover or first left
 * mover c, whichever comes first; the form breaks at the first of: a second non-mover, a
 * non-mover after a left mover, a right mover after c. Occurrences beyond the second of a class
 * never matter: if a class has a third, its second is already a second non-mover. */
static rd_break first_break(const reduction *r, const rd_entry *ent, size_t nent,
                            const rd_sync *rs, size_t nrs, int has_l, const rd_sync *first_l,
                            const uint8_t *isn) {
  rd_break b;
  memset(&b, 0, sizeof b);
  size_t n1 = (size_t)-1; /* entry of the first non-mover */
  uint64_t i1 = NO_INDEX, i2 = NO_INDEX;
  size_t n2 = (size_t)-1;
  int n2_second = 0;
  for (size_t k = 0; k < nent; k++) {
    if (!isn[k]) continue;
    const rd_entry *e = &ent[k];
    /* candidates: e->i1, and e->i2 if count >= 2 */
    if (e->i1 < i1) {
      i2 = i1;
      n2 = n1;
      n2_second = 0;
      i1 = e->i1;
      n1 = k;
    } else if (e->i1 < i2) {
      i2 = e->i1;
      n2 = k;
      n2_second = 0;
    }
    if (e->count >= 2 && e->i2 < i2) {
      i2 = e->i2;
      n2 = k;
      n2_second = 1;
    }
  }
  uint64_t il = has_l ? first_l->index : NO_INDEX;
  /* A racy release write is a non-mover and a left mover at one index: the non-mover first. */
  uint64_t c = i1 <= il ? i1 : il;
  if (c == NO_INDEX) return b; /* no non-mover, no left mover: R and B only */
  uint64_t f = NO_INDEX;
  if (i1 <= il) {
    b.c = named_access(r, &ent[n1], 0);
    if (i2 != NO_INDEX) {
      f = i2;
      b.what = BRK_TWO_N;
      b.f = named_access(r, &ent[n2], n2_second);
    }
  } else {
    b.c = named_sync(first_l);
    if (i1 != NO_INDEX) {
      f = i1;
      b.what = BRK_N_AFTER_L;
      b.f = named_access(r, &ent[n1], 0);
    }
  }
  for (size_t k = 0; k < nrs; k++)
    if (rs[k].index > c) {
      if (rs[k].index < f) {
        b.what = BRK_R_AFTER;
        b.f = named_sync(&rs[k]);
      }
      break;
    }
  return b;
}

/* ---------------------------------------------------------------- reports */


/* A non-mover is a non-mover because of a race: in precise mode the access of another thread
 * it races with (the partner class's first access), which becomes a witness event. @return 1
 * and *out when there is one. */
static int partner_event(const reduction *r, const rd_named *n, atom_ev *out) {
  if (r->mode != MODE_PRECISE) return 0;
  const rd_key *k = &r->key[n->key];
  if (k->partner == NONE) return 0;
  const rd_key *p = &r->key[k->partner];
  if (p->first_index == NO_INDEX) return 0;
  *out = (atom_ev){p->write ? ATOM_WRITE : ATOM_READ, p->thread, p->var, 0, p->first_index,
                   p->first_loc};
  return 1;
}

/* A named event is a non-mover access: an access with a class (a synchronizing access, a
 * mover like a lock operation, has none). */
static int is_nonmover(const rd_named *n) { return is_access(n->kind) && n->key != NONE; }

/* The variables of the witness events that are accesses (non-movers), once each. */
static size_t named_vars(const rd_break *b, const rd_named **nm) {
  size_t nn = 0;
  if (is_nonmover(&b->c)) nm[nn++] = &b->c;
  if (is_nonmover(&b->f) && !(nn && b->c.target == b->f.target)) nm[nn++] = &b->f;
  return nn;
}

/* The message template ({t0}, {eN}, {vN}: rendered by the session). Events 0 and 1 are c and
 * f; the partners of nm[i], when known, follow from position 2 (partner_pos[i]). */
static void break_message(const reduction *r, const rd_break *b, const rd_named *const *nm,
                          size_t nn, const size_t *partner_pos, char *msg, size_t size) {
  size_t off = 0;
  atom__msg_append(msg, size, &off, "{t0} cannot be reduced to one atomic step: ");
  if (b->what == BRK_TWO_N)
    atom__msg_append(msg, size, &off, "{e0} and {e1} both race with other threads, so another "
                     "thread's access can come between them");
  else if (b->what == BRK_N_AFTER_L)
    atom__msg_append(msg, size, &off, "{e1} races with other threads after {e0} let them in, so "
                     "another thread's access can come between them");
  else
    atom__msg_append(msg, size, &off, "{e1} comes after {e0}, %s, so another thread can run "
                     "between them", is_nonmover(&b->c) ? "an access that races with other threads"
                                                        : "which let other threads in");
  /* why the non-movers are non-movers, once per variable */
  for (size_t i = 0; i < nn; i++) {
    atom__msg_append(msg, size, &off, i ? "; " : " (");
    if (r->mode == MODE_PRECISE) {
      if (partner_pos[i] != SIZE_MAX)
        atom__msg_append(msg, size, &off, "another thread accesses {v%zu} with no common lock: "
                         "{e%zu}", i, partner_pos[i]);
      else
        atom__msg_append(msg, size, &off, "{v%zu} is accessed by another thread with no common "
                         "lock", i);
    } else {
      atom__msg_append(msg, size, &off, "{v%zu} is shared, written and unprotected since event "
                       "%llu", i, (unsigned long long)r->var[nm[i]->target].racy_index);
    }
  }
  if (nn) atom__msg_append(msg, size, &off, ")");
}

static int report_break(reduction *r, const rd_break *b, uint32_t thread, uint64_t begin_index,
                        uint64_t begin_loc, uint64_t found_at) {
  const rd_named *c = &b->c, *f = &b->f;
  /* The same transaction code may break its form at different places: keep them apart. */
  uint64_t extra = atom__hash64(atom__hash64(c->loc ^ ((uint64_t)c->kind << 56)) ^ f->loc ^
                                ((uint64_t)f->kind << 48) ^ (uint64_t)b->what);
  /* A repeat of a reported signature only counts an occurrence: skip the message. */
  struct rd_seen *seen = &r->seen[atom__hash64(begin_loc ^ extra) & 255];
  int repeat = seen->used && seen->loc == begin_loc && seen->extra == extra;

  atom_txn_ref ref = {thread, 0, begin_index, begin_loc};
  atom_ev evs[4];
  size_t ne = 2;
  evs[0] = (atom_ev){c->kind, thread, c->target, 0, c->index, c->loc};
  evs[1] = (atom_ev){f->kind, thread, f->target, 0, f->index, f->loc};
  const rd_named *nm[2];
  size_t nv = named_vars(b, nm), partner_pos[2] = {SIZE_MAX, SIZE_MAX};
  uint32_t vars[2];
  for (size_t i = 0; i < nv; i++) {
    vars[i] = nm[i]->target;
    if (partner_event(r, nm[i], &evs[ne])) partner_pos[i] = ne++;
  }
  char msg[640];
  if (!repeat) break_message(r, b, nm, nv, partner_pos, msg, sizeof msg);
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.flags = ATOM_REPORT_PREDICTED; /* a feasible interleaving, not the observed one */
  spec.kind = "not-reducible";
  spec.event_index = found_at;
  spec.txns = &ref;
  spec.n_txns = 1;
  spec.events = evs;
  spec.n_events = ne;
  spec.vars = nv ? vars : NULL;
  spec.n_vars = nv;
  spec.message = repeat ? NULL : msg;
  spec.signature_extra = extra;
  int rc = atom_env_report(r->env, &spec);
  if (rc == 0 && !repeat) *seen = (struct rd_seen){begin_loc, extra, 1, 0};
  return rc;
}

static int grow_isn(reduction *r, size_t n) {
  return ATOM__GROW(r->mem, r->isn, r->isn_cap, n ? n : 1);
}

/* ---------------------------------------------------------------- happens-before (fork/join) */

/* Fork: u starts after everything t did so far; t enters a new segment. */
static int hb_fork(reduction *r, uint32_t t, uint32_t u) {
  rd_thread *th = &r->th[t], *uh = &r->th[u];
  uint32_t ct = clk_get(&th->vc, t);
  if (ct == UINT32_MAX)
    return atom_env_error(r->env, ATOM_ELIMIT, "too many forks and joins in one thread");
  rd_clock self = {NULL, 0, 0}, nv;
  if (clk_set(r->mem, &self, u, 1)) return ATOM_ENOMEM;
  int rc = clk_merge(r->mem, &th->vc, &self, &nv);
  clk_free(r->mem, &self);
  if (rc) return rc;
  clk_free(r->mem, &uh->vc);
  uh->vc = nv;
  uh->started = 1;
  uh->snap = NONE;
  clk_set(r->mem, &th->vc, t, ct + 1); /* the component exists: cannot fail */
  th->snap = NONE;
  return 0;
}

/* Join: t continues after everything u did; t enters a new segment. */
static int hb_join(reduction *r, uint32_t t, uint32_t u) {
  rd_thread *th = &r->th[t];
  uint32_t ct = clk_get(&th->vc, t);
  if (ct == UINT32_MAX)
    return atom_env_error(r->env, ATOM_ELIMIT, "too many forks and joins in one thread");
  rd_clock nv;
  if (clk_merge(r->mem, &th->vc, &r->th[u].vc, &nv)) return ATOM_ENOMEM;
  clk_free(r->mem, &th->vc);
  th->vc = nv;
  clk_set(r->mem, &th->vc, t, ct + 1); /* the component exists: cannot fail */
  th->snap = NONE;
  return 0;
}

/* Release write of x by t (sync order, doc/api.md "Synchronization"): x's clock learns
 * everything t did so far; t enters a new segment (its later events are not released). */
static int hb_release(reduction *r, uint32_t t, uint32_t x) {
  rd_thread *th = &r->th[t];
  uint32_t ct = clk_get(&th->vc, t);
  if (ct == UINT32_MAX)
    return atom_env_error(r->env, ATOM_ELIMIT, "too many synchronization points in one thread");
  if (x >= r->relv_cap) {
    size_t old = r->relv_cap;
    if (ATOM__GROW(r->mem, r->relv, r->relv_cap, (size_t)x + 1)) return ATOM_ENOMEM;
    memset(r->relv + old, 0, (r->relv_cap - old) * sizeof *r->relv);
  }
  rd_clock nv;
  if (clk_merge(r->mem, &r->relv[x], &th->vc, &nv)) return ATOM_ENOMEM;
  clk_free(r->mem, &r->relv[x]);
  r->relv[x] = nv;
  clk_set(r->mem, &th->vc, t, ct + 1); /* the component exists: cannot fail */
  th->snap = NONE;
  return 0;
}

/* Acquire read of x by t: t continues after every earlier release of x; a new segment only if
 * that teaches t something (spinning on a flag costs nothing). */
static int hb_acquire(reduction *r, uint32_t t, uint32_t x) {
  rd_thread *th = &r->th[t];
  if (x >= r->relv_cap) return 0;
  const rd_clock *k = &r->relv[x];
  int news = 0;
  for (size_t i = 0; i < k->n && !news; i++)
    news = k->c[i].thread != t && k->c[i].clock > clk_get(&th->vc, k->c[i].thread);
  if (!news) return 0;
  uint32_t ct = clk_get(&th->vc, t);
  if (ct == UINT32_MAX)
    return atom_env_error(r->env, ATOM_ELIMIT, "too many synchronization points in one thread");
  rd_clock nv;
  if (clk_merge(r->mem, &th->vc, k, &nv)) return ATOM_ENOMEM;
  clk_free(r->mem, &th->vc);
  th->vc = nv;
  clk_set(r->mem, &th->vc, t, ct + 1); /* the component exists: cannot fail */
  th->snap = NONE;
  return 0;
}

/* precise: the snapshot of t's current segment. */
static int current_snap(reduction *r, uint32_t t, uint32_t *out) {
  rd_thread *th = &r->th[t];
  if (th->snap != NONE) {
    *out = th->snap;
    return 0;
  }
  if (r->nsnap >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(r->mem, r->snap, r->snap_cap, r->nsnap + 1)) return ATOM_ENOMEM;
  rd_snap *s = &r->snap[r->nsnap];
  rd_clock none = {NULL, 0, 0};
  if (clk_merge(r->mem, &th->vc, &none, &s->vc)) return ATOM_ENOMEM;
  s->thread = t;
  s->clock = clk_get(&th->vc, t);
  th->snap = (uint32_t)r->nsnap++;
  *out = th->snap;
  return 0;
}

/* Are the segments of two keys ordered by happens-before (either way)? */
static int hb_ordered(const reduction *r, const rd_key *a, const rd_key *b) {
  const rd_snap *sa = &r->snap[a->seg], *sb = &r->snap[b->seg];
  return sa->clock <= clk_get(&sb->vc, sa->thread) || sb->clock <= clk_get(&sa->vc, sb->thread);
}

/* ---------------------------------------------------------------- eraser: waiters */

static int w_alloc(reduction *r, uint32_t *out) {
  if (r->w_free != NONE) {
    *out = r->w_free;
    r->w_free = r->w[r->w_free].next;
    return 0;
  }
  if (r->nw >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(r->mem, r->w, r->w_cap, r->nw + 1)) return ATOM_ENOMEM;
  *out = (uint32_t)r->nw++;
  return 0;
}

static void w_release(reduction *r, uint32_t i) {
  r->w[i].txn = NONE;
  r->w[i].next = r->w_free;
  r->w[i].prev = NONE;
  r->w_free = i;
}

static int w_sentinel(reduction *r, uint32_t *out) {
  uint32_t s;
  if (w_alloc(r, &s)) return ATOM_ENOMEM;
  r->w[s] = (rd_waiter){s, s, NONE, NONE};
  *out = s;
  return 0;
}

static void w_unlink(reduction *r, uint32_t i) {
  rd_waiter *w = &r->w[i];
  r->w[w->prev].next = w->next;
  r->w[w->next].prev = w->prev;
}

static void w_link(reduction *r, uint32_t list, uint32_t i) {
  rd_waiter *w = &r->w[i];
  w->prev = r->w[list].prev;
  w->next = list;
  r->w[w->prev].next = i;
  r->w[list].prev = i;
}

/* Drop a pending transaction and its waiters. */
static void pend_release(reduction *r, rd_txn *t) {
  for (uint32_t k = 0; k < t->nent; k++)
    if (t->ent[k].aux != NONE) {
      w_unlink(r, t->ent[k].aux);
      w_release(r, t->ent[k].aux);
      t->ent[k].aux = NONE;
    }
  r->pend[t->slot] = NULL;
  r->pend_free[r->npend_free++] = t->slot; /* room reserved when the slot was taken */
  r->npend--;
  atom__mem_free(r->mem, t, txn_size(t->nent, t->nrs));
}

/* ---------------------------------------------------------------- eraser: variables */

static int ensure_var(reduction *r, uint32_t x) {
  if (x < r->var_cap) return 0;
  size_t old = r->var_cap;
  if (ATOM__GROW(r->mem, r->var, r->var_cap, (size_t)x + 1)) return ATOM_ENOMEM;
  for (size_t i = old; i < r->var_cap; i++) {
    r->var[i].c_top = 1;
    r->var[i].nx_waiters = NONE;
    r->var[i].racy_index = NO_INDEX;
  }
  return 0;
}

static int alive_find(const rd_evar *v, uint32_t uid) {
  uint32_t lo = 0, hi = v->nal;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (v->al[mid].uid < uid) lo = mid + 1;
    else hi = mid;
  }
  return lo < v->nal && v->al[lo].uid == uid ? (int)lo : -1;
}

/* Is an access of class k a non-mover now? (eraser) */
static int eraser_is_n(const reduction *r, const rd_key *k) {
  if (k->var >= r->var_cap) return 1; /* no state (out of memory): the conservative side */
  const rd_evar *v = &r->var[k->var];
  if (!v->racy) return 0;
  return k->seg == NONE || alive_find(v, k->seg) < 0;
}

/* A waiter's class became a non-mover: re-judge its transaction. */
static int fire(reduction *r, uint32_t wi, uint64_t at) {
  rd_waiter *w = &r->w[wi];
  rd_txn *t = r->pend[w->txn];
  rd_entry *e = &t->ent[w->entry];
  w_unlink(r, wi);
  w_release(r, wi);
  e->aux = NONE;
  e->is_n = 1;
  t->nwait--;
  if (grow_isn(r, t->nent)) return ATOM_ENOMEM;
  for (uint32_t k = 0; k < t->nent; k++) r->isn[k] = t->ent[k].is_n;
  rd_break b = first_break(r, t->ent, t->nent, txn_rs(t), t->nrs, (int)t->has_l, &t->first_l,
                           r->isn);
  int rc = 0;
  if (b.what != BRK_NONE) {
    rc = report_break(r, &b, t->thread, t->begin_index, t->begin_loc, at);
    pend_release(r, t);
  } else if (t->nwait == 0) {
    pend_release(r, t);
  }
  return rc;
}

/* Fire every waiter of a list (the list's sentinel stays). */
static int fire_all(reduction *r, uint32_t list, uint64_t at) {
  int err = 0;
  while (r->w[list].next != list) {
    int rc = fire(r, r->w[list].next, at);
    if (rc && !err) err = rc;
  }
  return err;
}

/* The shared accesses of x now include those of segment a (it lost its exclusivity). */
static int fold(reduction *r, rd_evar *v, atom__ls ls, uint32_t wrote) {
  atom__ls nc = ls;
  if (!v->c_top && atom__ls_meet(&r->ls, v->c, ls, &nc)) return ATOM_ENOMEM;
  v->c = nc;
  v->c_top = 0;
  v->shared_write |= (uint8_t)(wrote != 0);
  return 0;
}

/* eraser: the state of x after access ev (held lockset h); *seg receives the exclusive segment
 * the access belongs to, or NONE if it is shared. */
static int eraser_access(reduction *r, const atom_ev *ev, atom__ls h, uint32_t *seg) {
  uint32_t x = ev->target, u = ev->thread;
  if (ensure_var(r, x)) return ATOM_ENOMEM;
  rd_evar *v = &r->var[x];
  const rd_clock *vu = &r->th[u].vc;
  uint32_t cu = clk_get(vu, u);
  int w = ev->kind == ATOM_WRITE;
  int err = 0;

  /* Room first, so that the state changes below cannot fail half-way. */
  if (v->nfr + 1 > v->frcap) {
    size_t cap = v->frcap;
    if (ATOM__GROW(r->mem, v->fr, cap, (size_t)v->nfr + 1)) return ATOM_ENOMEM;
    v->frcap = (uint32_t)cap;
  }
  if (v->nal + 1 > v->alcap) {
    size_t cap = v->alcap;
    if (ATOM__GROW(r->mem, v->al, cap, (size_t)v->nal + 1)) return ATOM_ENOMEM;
    v->alcap = (uint32_t)cap;
  }
  if (v->nx_waiters == NONE && w_sentinel(r, &v->nx_waiters)) return ATOM_ENOMEM;

  /* Is the access ordered after every earlier access of x? A remembered earlier access of
   * another thread that is concurrent with it says no at once (the usual case once x is
   * shared: it stays so until u joins). */
  int after_all = 1;
  for (uint32_t i = 0; i < v->nwit && after_all; i++)
    if (v->wit[i].thread != u && v->wit[i].clock > clk_get(vu, v->wit[i].thread)) after_all = 0;
  if (!after_all) {
    /* keep u's last access in the frontier: replace its entry or add one */
    uint32_t i = 0;
    while (i < v->nfr && v->fr[i].thread != u) i++;
    v->fr[i] = (rd_front){u, cu};
    if (i == v->nfr) v->nfr++;
  } else {
    /* Frontier: drop the last accesses that happen before this one; those left are
     * concurrent with it. Exclusive so far iff none of another thread is left. */
    uint32_t k = 0;
    for (uint32_t i = 0; i < v->nfr; i++) {
      rd_front f = v->fr[i];
      if (f.thread == u || f.clock <= clk_get(vu, f.thread)) continue;
      uint32_t j = 0; /* remember it: its thread's slot, a free one, or the second */
      while (j < v->nwit && v->wit[j].thread != f.thread) j++;
      if (j == 2) j = 1;
      v->wit[j] = f;
      if (j == v->nwit) v->nwit++;
      v->fr[k++] = f;
    }
    v->nfr = k;
    after_all = k == 0;
    v->fr[v->nfr++] = (rd_front){u, cu};
  }

  /* Exclusive segments that do not happen before this access lose their exclusivity (the
   * alive ones form a happens-before chain, so they are a suffix). */
  while (v->nal) {
    rd_aseg *a = &v->al[v->nal - 1];
    if (a->clock <= clk_get(vu, a->thread)) break;
    if (fold(r, v, a->ls, a->wrote)) return ATOM_ENOMEM;
    /* its waiters are now waiters on shared accesses */
    uint32_t s = a->waiters;
    while (r->w[s].next != s) {
      uint32_t wi = r->w[s].next;
      w_unlink(r, wi);
      w_link(r, v->nx_waiters, wi);
    }
    w_release(r, s);
    v->nal--;
  }

  if (after_all) {
    /* 000 Thm 4.3/4.4 "initialization": ordered with every access of x so far. */
    rd_aseg *top = v->nal ? &v->al[v->nal - 1] : NULL;
    if (top && top->thread == u && top->clock == cu) {
      atom__ls nl;
      if (atom__ls_meet(&r->ls, top->ls, h, &nl)) return ATOM_ENOMEM;
      top->ls = nl;
      top->wrote |= (uint32_t)w;
    } else {
      uint32_t s;
      if (w_sentinel(r, &s)) return ATOM_ENOMEM;
      v->al[v->nal++] = (rd_aseg){u, cu, v->next_uid++, h, (uint32_t)w, s};
      top = &v->al[v->nal - 1];
    }
    *seg = top->uid;
  } else {
    if (fold(r, v, h, (uint32_t)w)) return ATOM_ENOMEM;
    *seg = NONE;
  }

  /* 000 Thm 4.4 with Eraser's read-shared refinement. */
  if (!v->racy && v->shared_write && !v->c_top && v->c == ATOM__LS_EMPTY) {
    v->racy = 1;
    v->racy_index = ev->index;
  }
  if (v->racy) err = fire_all(r, v->nx_waiters, ev->index);
  return err;
}

/* ---------------------------------------------------------------- transactions */

static void txn_reset(rd_thread *th) {
  th->in_txn = 0;
  th->nent = 0;
  th->nrs = 0;
  th->has_l = 0;
  th->rs_done = 0;
}

/* Copy the open transaction of th into a block. */
static rd_txn *txn_freeze(reduction *r, uint32_t t) {
  rd_thread *th = &r->th[t];
  rd_txn *x = atom__mem_alloc(r->mem, txn_size((uint32_t)th->nent, (uint32_t)th->nrs));
  if (!x) return NULL;
  x->thread = t;
  x->nent = (uint32_t)th->nent;
  x->nrs = (uint32_t)th->nrs;
  x->has_l = th->has_l;
  x->slot = NONE;
  x->nwait = 0;
  x->begin_index = th->begin_index;
  x->begin_loc = th->begin_loc;
  x->first_l = th->first_l;
  if (th->nent) memcpy(x->ent, th->ent, th->nent * sizeof *th->ent);
  if (th->nrs) memcpy(txn_rs(x), th->rs, th->nrs * sizeof *th->rs);
  return x;
}

/* Could the open transaction of th fail if more of its classes turned into non-movers? Adding
 * non-movers never repairs a break, so it can iff it fails with all of them non-movers. */
static int can_still_fail(reduction *r, const rd_thread *th) {
  uint8_t *all = r->isn + th->nent; /* the second half of the scratch (grow_isn(2 * nent)) */
  memset(all, 1, th->nent);
  rd_break b = first_break(r, th->ent, th->nent, th->rs, th->nrs, (int)th->has_l, &th->first_l,
                           all);
  return b.what != BRK_NONE;
}

/* eraser: keep a transaction that passed at its END, waiting on the classes that may still
 * turn into non-movers. */
static int pend_add(reduction *r, uint32_t t) {
  if (r->npend_slots >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(r->mem, r->pend, r->pend_cap, r->npend_slots + 1) ||
      ATOM__GROW(r->mem, r->pend_free, r->pend_free_cap, r->npend_slots + 1))
    return ATOM_ENOMEM;
  rd_txn *x = txn_freeze(r, t);
  if (!x) return ATOM_ENOMEM;
  uint32_t slot = r->npend_free ? r->pend_free[--r->npend_free] : (uint32_t)r->npend_slots++;
  x->slot = slot;
  r->pend[slot] = x;
  r->npend++;
  for (uint32_t k = 0; k < x->nent; k++) {
    rd_entry *e = &x->ent[k];
    e->is_n = r->isn[k];
    e->aux = NONE;
    if (e->is_n) continue;
    const rd_key *key = &r->key[e->key];
    rd_evar *v = &r->var[key->var];
    int a = key->seg == NONE ? -1 : alive_find(v, key->seg);
    uint32_t list = a >= 0 ? v->al[a].waiters : v->nx_waiters;
    uint32_t wi;
    if (w_alloc(r, &wi)) {
      pend_release(r, x); /* unlinks the waiters made so far */
      return ATOM_ENOMEM;
    }
    r->w[wi].txn = slot;
    r->w[wi].entry = k;
    w_link(r, list, wi);
    e->aux = wi;
    x->nwait++;
  }
  return 0;
}

static int on_end(reduction *r, uint32_t t, const atom_ev *ev) {
  rd_thread *th = &r->th[t];
  if (!th->in_txn) return 0;
  int rc = 0;
  if (grow_isn(r, 2 * th->nent)) {
    txn_reset(th);
    return ATOM_ENOMEM;
  }
  if (r->mode == MODE_ERASER) {
    /* Classes only ever turn into non-movers, so a failure now is final. */
    for (size_t k = 0; k < th->nent; k++)
      r->isn[k] = (uint8_t)eraser_is_n(r, &r->key[th->ent[k].key]);
    rd_break b = first_break(r, th->ent, th->nent, th->rs, th->nrs, (int)th->has_l,
                             &th->first_l, r->isn);
    if (b.what != BRK_NONE)
      rc = report_break(r, &b, t, th->begin_index, th->begin_loc, ev->index);
    else if (can_still_fail(r, th))
      rc = pend_add(r, t);
  } else {
    /* precise: decided at finish, unless it passes whichever classes turn out racy. */
    if (can_still_fail(r, th)) {
      rd_txn *x = NULL;
      if (ATOM__GROW(r->mem, r->txn, r->txn_cap, r->ntxn + 1) || !(x = txn_freeze(r, t)))
        rc = ATOM_ENOMEM;
      else
        r->txn[r->ntxn++] = x;
    }
  }
  /* On failure (out of memory) the transaction's verdict is lost, never the state. */
  txn_reset(th);
  return rc;
}

/* ---------------------------------------------------------------- events */

static int access_event(reduction *r, rd_thread *th, uint32_t t, const atom_ev *ev);

static int rd_event(void *self, const atom_ev *ev) {
  reduction *r = self;
  uint32_t t = ev->thread;
  if (ev->index >= r->events) r->events = ev->index + 1;
  if (ensure_thread(r, t) || start_thread(r, t)) return ATOM_ENOMEM;
  rd_thread *th = &r->th[t];

  switch (ev->kind) {
  case ATOM_BEGIN:
    txn_reset(th);
    th->in_txn = 1;
    th->serial = ++r->serial;
    th->begin_index = ev->index;
    th->begin_loc = ev->loc;
    return 0;
  case ATOM_END:
    return on_end(r, t, ev);
  case ATOM_ACQUIRE:
  case ATOM_RELEASE: {
    atom__ls h = th->held;
    int rc = 0;
    if (ev->kind == ATOM_RELEASE) rc = atom__ls_remove(&r->ls, th->held, ev->target, &h);
    else if (atom__ls_size(&r->ls, th->held) < HELD_MAX)
      rc = atom__ls_add(&r->ls, th->held, ev->target, &h);
    if (rc) return rc;
    th->held = h;
    return th->in_txn ? txn_note_sync(r, th, ev) : 0;
  }
  case ATOM_FORK:
  case ATOM_JOIN: {
    if (ensure_thread(r, ev->target)) return ATOM_ENOMEM;
    th = &r->th[t];
    /* Happens-before first: if it runs out of memory nothing changed, and accesses then only
     * look more concurrent than they are (never less). */
    int rc = ev->kind == ATOM_JOIN ? start_thread(r, ev->target) : 0;
    if (!rc) rc = ev->kind == ATOM_FORK ? hb_fork(r, t, ev->target) : hb_join(r, t, ev->target);
    if (rc) return rc;
    return th->in_txn ? txn_note_sync(r, th, ev) : 0;
  }
  case ATOM_READ:
  case ATOM_WRITE: {
    int rc;
    if (ev->flags & (ATOM_EV_ACQUIRE | ATOM_EV_RELEASE)) {
      /* A synchronizing access orders the accesses around it by happens-before (an acquire
       * read starts a segment that follows the releases of its variable, a release write
       * ends its segment), and it is an access of its variable too: another thread's access
       * of that variable may run right before an acquire read (the release it synchronizes
       * with) or right after a release write, so at best an acquire read is a right mover and
       * a release write a left mover, as lock operations are, and only when the race analysis
       * finds them race-free; racy, they are non-movers (a transaction that reads a flag
       * twice around another thread's release is not atomic). Noted as both: the mover, and
       * the access (a non-mover when racy, else a both-mover), in the order that makes the
       * pair mean the weaker of the two (R then N is N; N then L is N). */
      rc = ev->kind == ATOM_READ ? hb_acquire(r, t, ev->target) : 0;
      if (!rc && th->in_txn && ev->kind == ATOM_READ) rc = txn_note_sync(r, th, ev);
      if (!rc) rc = access_event(r, th, t, ev);
      if (!rc && th->in_txn && ev->kind == ATOM_WRITE) rc = txn_note_sync(r, th, ev);
      if (!rc && ev->kind == ATOM_WRITE) rc = hb_release(r, t, ev->target);
      return rc;
    }
    return access_event(r, th, t, ev);
  }
  default:
    return 0;
  }
}

/* A READ or WRITE of thread t: its class in the race analysis, its place in t's transaction. */
static int access_event(reduction *r, rd_thread *th, uint32_t t, const atom_ev *ev) {
  int rc;
  uint32_t k = NONE;
  if (r->mode == MODE_PRECISE) {
    uint32_t s;
    if ((rc = current_snap(r, t, &s))) return rc;
    if ((rc = key_get(r, ev->target, t, s, th->held, ev->kind == ATOM_WRITE, &k))) return rc;
    rd_key *key = &r->key[k];
    if (key->first_index == NO_INDEX) {
      key->first_index = ev->index;
      key->first_loc = ev->loc;
    }
    return th->in_txn ? txn_note_access(r, th, k, ev) : 0;
  }
  /* If this fails half-way the access stays "shared": a non-mover as soon as the variable is
   * racy, the conservative side. */
  uint32_t seg = NONE;
  rc = eraser_access(r, ev, th->held, &seg);
  if (th->in_txn && ev->target < r->var_cap) { /* (not if the variable has no state) */
    int rc2 = key_get(r, ev->target, t, seg, 0, 0, &k);
    if (!rc2) rc2 = txn_note_access(r, th, k, ev);
    if (!rc) rc = rc2;
  }
  return rc;
}

/* ---------------------------------------------------------------- precise: finish */

/* 000 Thm 4.3, per class: a class is racy if a class of another thread accesses the same
 * variable, one of them writes, their held locksets are disjoint, and their segments are not
 * ordered by happens-before. */
static int race_analysis(reduction *r) {
  uint32_t nvar = 0;
  r->work = 0; /* a retry after running out of memory starts over */
  r->vars_cut = 0;
  for (size_t k = 0; k < r->nkey; k++)
    if (r->key[k].var + 1 > nvar) nvar = r->key[k].var + 1;
  size_t *start = atom__mem_calloc(r->mem, (size_t)nvar + 1, sizeof *start);
  uint32_t *order = atom__mem_calloc(r->mem, r->nkey ? r->nkey : 1, sizeof *order);
  if (!start || !order) {
    atom__mem_free(r->mem, start, ((size_t)nvar + 1) * sizeof *start);
    atom__mem_free(r->mem, order, (r->nkey ? r->nkey : 1) * sizeof *order);
    return ATOM_ENOMEM;
  }
  for (size_t k = 0; k < r->nkey; k++) start[r->key[k].var + 1]++;
  for (uint32_t x = 0; x < nvar; x++) start[x + 1] += start[x];
  for (size_t k = 0; k < r->nkey; k++) {
    rd_key *key = &r->key[k];
    key->racy = 0;
    key->partner = NONE;
    order[start[key->var]++] = (uint32_t)k;
  }
  /* start[x] is now the end of x's group (and the beginning of x+1's) */
  size_t lo = 0;
  for (uint32_t x = 0; x < nvar; x++) {
    size_t hi = start[x];
    const uint32_t *g = order + lo;
    size_t n = hi - lo;
    lo = hi;
    if (n < 2) continue;
    int writes = 0, threads = 0;
    for (size_t i = 0; i < n; i++) {
      writes |= (int)r->key[g[i]].write;
      threads |= r->key[g[i]].thread != r->key[g[0]].thread;
    }
    if (!writes || !threads) continue;
    /* A lock held at every access of x: no race at all (000 Thm 4.4 implies Thm 4.3). */
    atom__ls ls0 = r->key[g[0]].ls;
    const uint32_t *l0 = atom__ls_elems(&r->ls, ls0);
    int common = 0;
    for (uint32_t j = 0; j < atom__ls_size(&r->ls, ls0) && !common; j++) {
      size_t i = 1;
      while (i < n && atom__ls_contains(&r->ls, r->key[g[i]].ls, l0[j])) i++;
      common = i == n;
    }
    if (common) continue;
    if (r->work >= r->max_work) { /* the bound was reached on an earlier variable */
      r->vars_cut++;
      continue;
    }
    /* left: classes not yet racy; once none is, no comparison can change anything */
    size_t left = n;
    for (size_t i = 0; i < n && left; i++) {
      rd_key *a = &r->key[g[i]];
      for (size_t j = i + 1; j < n; j++) {
        rd_key *b = &r->key[g[j]];
        if (a->racy && b->racy) continue;
        if (++r->work > r->max_work) break;
        /* progress: the classes of the variables before this one, of classes + transactions */
        if ((r->work & 4095) == 0)
          (void)atom_env_progress(r->env, lo - n, (uint64_t)r->nkey + r->ntxn);
        if (a->thread == b->thread || !(a->write || b->write)) continue;
        if (!atom__ls_disjoint(&r->ls, a->ls, b->ls) || hb_ordered(r, a, b)) continue;
        if (!a->racy) {
          a->racy = 1;
          a->partner = g[j];
          left--;
        }
        if (!b->racy) {
          b->racy = 1;
          b->partner = g[i];
          left--;
        }
        if (!left) break;
      }
      if (r->work > r->max_work) {
        r->work = r->max_work;
        r->vars_cut++;
        break;
      }
    }
  }
  atom__mem_free(r->mem, start, ((size_t)nvar + 1) * sizeof *start);
  atom__mem_free(r->mem, order, (r->nkey ? r->nkey : 1) * sizeof *order);
  return 0;
}

static void free_txns(reduction *r) {
  for (size_t i = 0; i < r->ntxn; i++)
    atom__mem_free(r->mem, r->txn[i], txn_size(r->txn[i]->nent, r->txn[i]->nrs));
  atom__mem_free(r->mem, r->txn, r->txn_cap * sizeof *r->txn);
  r->txn = NULL;
  r->ntxn = r->txn_cap = 0;
}

/* Free every table (the struct stays, empty). */
static void release_tables(reduction *r) {
  atom__mem *m = r->mem;
  for (size_t x = 0; x < r->relv_cap; x++) clk_free(m, &r->relv[x]);
  atom__mem_free(m, r->relv, r->relv_cap * sizeof *r->relv);
  r->relv = NULL;
  r->relv_cap = 0;
  for (uint32_t t = 0; t < r->n_th; t++) {
    rd_thread *th = &r->th[t];
    clk_free(m, &th->vc);
    atom__mem_free(m, th->ent, th->ent_cap * sizeof *th->ent);
    atom__mem_free(m, th->rs, th->rs_cap * sizeof *th->rs);
  }
  atom__mem_free(m, r->th, r->th_cap * sizeof *r->th);
  atom__mem_free(m, r->key, r->key_cap * sizeof *r->key);
  atom__mem_free(m, r->kidx, r->kidx_cap * sizeof *r->kidx);
  for (size_t i = 0; i < r->nsnap; i++) clk_free(m, &r->snap[i].vc);
  atom__mem_free(m, r->snap, r->snap_cap * sizeof *r->snap);
  free_txns(r);
  for (size_t i = 0; i < r->npend_slots; i++)
    if (r->pend[i]) {
      rd_txn *t = r->pend[i];
      atom__mem_free(m, t, txn_size(t->nent, t->nrs));
    }
  atom__mem_free(m, r->pend, r->pend_cap * sizeof *r->pend);
  atom__mem_free(m, r->pend_free, r->pend_free_cap * sizeof *r->pend_free);
  for (size_t x = 0; x < r->var_cap; x++) {
    atom__mem_free(m, r->var[x].fr, r->var[x].frcap * sizeof *r->var[x].fr);
    atom__mem_free(m, r->var[x].al, r->var[x].alcap * sizeof *r->var[x].al);
  }
  atom__mem_free(m, r->var, r->var_cap * sizeof *r->var);
  atom__mem_free(m, r->w, r->w_cap * sizeof *r->w);
  atom__mem_free(m, r->isn, r->isn_cap * sizeof *r->isn);
  atom__ls_destroy(&r->ls);
  reduction keep = *r;
  memset(r, 0, sizeof *r);
  r->env = keep.env;
  r->own_mem = keep.own_mem;
  r->mem = &r->own_mem;
  r->mode = keep.mode;
  r->w_free = NONE;
  r->done = keep.done;
  r->finished = keep.finished;
  r->max_work = keep.max_work;
  atom__ls_init(&r->ls, keep.mem);
}

static int rd_finish(void *self) {
  reduction *r = self;
  if (r->finished) return 0;
  if (r->mode == MODE_ERASER) {
    /* Every transaction still waiting passed with the final locksets (000 Thm 4.4). */
    r->finished = 1;
    release_tables(r); /* the session has copied the reports */
    return 0;
  }
  int rc = race_analysis(r);
  if (rc) return rc;
  if (r->vars_cut)
    atom_env_incomplete(r->env, r->events,
                        "the race analysis stopped after %" PRIu64 " comparisons (max_work=%" PRIu64
                        "): accesses of %" PRIu32 " variable%s were taken as race free, so some "
                        "transactions were not fully checked",
                        r->work, r->max_work, r->vars_cut, r->vars_cut == 1 ? "" : "s");
  /* r->done: transactions already judged by an earlier attempt that ran out of memory */
  uint64_t total = (uint64_t)r->nkey + r->ntxn;
  for (; r->done < r->ntxn; r->done++) {
    if ((r->done & 4095) == 0) (void)atom_env_progress(r->env, r->nkey + r->done, total);
    rd_txn *t = r->txn[r->done];
    if (grow_isn(r, t->nent)) return ATOM_ENOMEM;
    for (uint32_t k = 0; k < t->nent; k++) r->isn[k] = (uint8_t)r->key[t->ent[k].key].racy;
    rd_break b = first_break(r, t->ent, t->nent, txn_rs(t), t->nrs, (int)t->has_l, &t->first_l,
                             r->isn);
    if (b.what == BRK_NONE) continue;
    /* found at the event where the form breaks */
    rc = report_break(r, &b, t->thread, t->begin_index, t->begin_loc, b.f.index);
    if (rc == ATOM_ENOMEM) return rc;
  }
  (void)atom_env_progress(r->env, total, total);
  r->finished = 1;
  release_tables(r); /* the session has copied the reports */
  return 0;
}

/* ---------------------------------------------------------------- lifecycle */

static void rd_destroy(void *self) {
  reduction *r = self;
  if (!r) return;
  release_tables(r);
  atom__mem_free(r->mem, r, sizeof *r);
}

static int rd_create(void **self, atom_env *env) {
  const char *ls = atom_env_arg(env, "lockset");
  int mode;
  if (!ls || strcmp(ls, "precise") == 0)
    mode = MODE_PRECISE;
  else if (strcmp(ls, "eraser") == 0)
    mode = MODE_ERASER;
  else
    return atom_env_error(env, ATOM_EINVAL, "lockset must be precise or eraser, not \"%s\"", ls);
  uint64_t max_work = RD_MAX_WORK;
  int rc = atom__arg_count(env, "max_work", 1ull << 62, "2^62", &max_work);
  if (rc) return rc;
  atom__mem first;
  atom__mem_init_env(&first, env);
  reduction *r = atom__mem_calloc(&first, 1, sizeof *r);
  if (!r) return atom_env_error(env, ATOM_ENOMEM, "out of memory");
  r->own_mem = first;
  atom__mem *m = &r->own_mem;
  r->env = env;
  r->mem = m;
  r->mode = mode;
  r->max_work = max_work;
  r->w_free = NONE;
  atom__ls_init(&r->ls, m);
  *self = r;
  return 0;
}

static int rd_stats(void *self, atom_checker_counters *out) {
  const reduction *r = self;
  out->nodes = r->mode == MODE_PRECISE ? r->ntxn : r->npend;
  out->edges = r->nkey;
  out->clocks = r->n_th + r->nsnap;
  return 0;
}

static const char *const rd_keys[] = {"lockset", "max_work", NULL};

const atom_checker atom__checker_reduction = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_ACQUIRE) |
        ATOM_KIND_BIT(ATOM_RELEASE) | ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) |
        ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END),
    "reduction",
    "Lipton reduction: each transaction must be movers around one non-mover (locksets)",
    rd_keys,
    rd_create,
    rd_event,
    rd_finish,
    rd_destroy,
    rd_stats,
    .properties = ATOM_CHECKER_PROP_AT_FINISH | ATOM_CHECKER_PROP_PREDICTIVE | ATOM_CHECKER_PROP_COMPLETE,
};
