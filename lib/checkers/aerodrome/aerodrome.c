/* aerodrome: conflict serializability by vector clocks (paper 003, Mathur & Viswanathan,
 * "Atomicity Checking in Linear Time using Vector Clocks", Algorithm 1 and §4.3).
 *
 * Two variants share the event plumbing:
 *
 *  variant=basic      Algorithm 1 as printed: a read clock R_{t,x} per thread and variable,
 *                     full ⊑ comparisons against C_t^▷, and END scans every thread, lock,
 *                     variable and read clock (lines 37-46).
 *  variant=optimized  (default) §4.3: one read clock R_x and one check-read clock chR_x per
 *                     variable, component tests instead of ⊑, and an END that visits only the
 *                     clocks that learned of the ending transaction (see "Optimized END").
 *
 * The component test. Values of component t originate only in C_t, and C_t(t) first takes the
 * value b = C_t^▷(t) at t's BEGIN (003 Alg. 1 line 35). Every other clock gets component t
 * only by ⊔ or := from a clock derived from C_t, always taking the whole clock. So for any
 * clock X: X(t) >= b  iff  X ⊒ (C_t at or after the BEGIN) ⊒ C_t^▷. Hence C_t^▷ ⊑ X iff
 * C_t^▷(t) <= X(t), an O(1) test (doc/checkers/aerodrome.md). chR_x = ⊔_u R_{u,x}[0/u] is never a source of
 * other clocks; chR_x(t) = max over u != t of R_{u,x}(t), so "some R_{u,x} with u != t knows
 * t's transaction" (lines 30-31) is chR_x(t) >= b.
 *
 * Optimized END. Lines 41-46 update every clock X with C_t^▷ ⊑ X. A clock learns t's open
 * transaction T only when it is assigned or joined from a clock that knows T:
 *   - W_x := C_u (write), R_x ⊔= C_u (read; chR_x rides along since chR_x ⊑ R_x),
 *     L_l := C_u (release): the clock learns the open transactions C_u knows;
 *   - X ⊔= C_v at END(v): X learns the open transactions C_v knows.
 * Each thread u keeps the list of open transactions its clock C_u knows ("known"): T of t
 * enters it when a join raises C_u(t) across b_t (tested inside the join loop, which is O(T)
 * anyway) or when u itself begins; entries carry t's transaction number and are validated
 * lazily (T ended = stale). When u stores C_u into a variable or lock clock X that did not
 * know T yet, X is appended to T's "learned" list. Invariant: a clock that knows an open T is
 * in T's learned list. END(t) visits T's list only and, for each X it updates, registers X
 * with the other open transactions C_t knows. Thread clocks are scanned at END (O(T), the
 * cost of one join). The stores are monotone -- W_x := C_u comes after C_u ⊔= W_x (or
 * W_x ⊑ C_u, u the last writer, see below), L_l := C_u after u's acquire joined L_l, and END
 * only joins -- so a clock never forgets T once it knows it: each clock is registered at most
 * once per transaction and the lists stay as small as the set of clocks T reached. (END still
 * re-checks X(t) >= b: an event dropped for lack of memory can break monotonicity.) If a list
 * cannot grow (out of memory), the transaction falls back to the full scan of lines 41-46 at
 * its END, which is always correct.
 *
 * Read clocks at END (optimized). Lines 45-46 update each R_{u,x} that knows T; we update R_x
 * and chR_x (⊔= C_t) when R_x knows T. For chR_x this is exact except in one case: the only
 * reader that knows T is a thread w whose open transaction W is known by C_t; then chR_x(w)
 * claims that a reader other than w knows W. But then C_w ⊒ R_{w,x} knows T and C_t knows W,
 * so lines 38-40 declare the violation between T and W at this very END. The variants agree
 * up to the first violation and may differ only in later reports about a transaction that
 * was already reported.
 *
 * Unary transactions (003 §4.1.4). Events outside BEGIN..END are transactions of one event;
 * Algorithm 1 never checks them (no active transaction), and none needs END propagation: a
 * path through a one-event transaction enters and leaves at the same event, so ≤CHB (what C_t
 * tracks) is all there is. One case of Algorithm 1 is wrong though: JOIN(t, u) of a thread u
 * that performed no event at all. Line 22 joins C_u, which holds C_t (from the FORK, line 20)
 * or whatever the forking thread knew, and would declare T (t's open transaction) in a cycle
 * with itself, or give t knowledge no event of u carries; but with no event of u there is no
 * conflict edge from u to the join (003 §2, conflict (c)). We skip such a JOIN entirely. A
 * thread with only BEGIN/END events has a (empty) transaction, which does conflict with the
 * fork and the join, so it counts as having events.
 *
 * Provenance (for reports that name every edge of the cycle). While T (thread t) is open,
 * component t of every clock is at most b_t, so a clock learns T exactly once (its component
 * reaches b_t) and keeps the knowledge until T ends. At that moment we record how, as an
 * immutable reference-counted node (pnode): the edge it came over (EDGE: from the source
 * clock's event to the receiving event, plus the source's own node), a fork (FORK), or an END
 * that passed it on (END: T →* V from V's clock, V →* X from X's record of V). Thread clocks
 * keep one node per component (prov); R_x and chR_x keep per component the read that taught
 * them: T's own read as a small record (rlog_ent, rown), another thread's read as a node (HOLD), or an
 * END node; W_x, L_l and R_{u,x} are copies of their storer's clock at the store event, so
 * they only keep what they learn at ENDs after it (ends). A node is about one transaction
 * instance (of, about = its number): a slot about an older instance reads as empty. At a
 * violation, walk() follows the nodes from the victim's transaction to the closing edge and
 * yields the cycle's edges; two transactions of one thread on the path are joined by program
 * order. Nodes are made only when a clock learns an open transaction, never on the paths
 * that learn nothing. A record about an ended T stays in its slot until the slot is next
 * written (it reads as empty: `about`), so an END does not walk the records of the clocks T
 * reached; memory stays bounded by the slots (one per clock component). The records of a
 * variable about component c sit side by side (vslot), and "R_x learned T from T's own read"
 * goes to T's thread's read log (rown_origin), the cheapest place to write it. Throughput
 * matters here (the budget is 10 % of the checker without provenance): the provenance code is
 * kept out of line (AERO_RARE), and the event handlers build an event's description only when
 * a record needs it.
 *
 * The lastWThr_x / lastRelThr_l shortcuts (lines 24, 28, 14) are exact: W_x ⊑ C_t while t is
 * the last writer (END joins W_x ⊔= C_v only if W_x knows V, and then C_t knows V too and is
 * joined with C_v at lines 38-40), and likewise for locks. The optimized variant adds more
 * shortcuts of the same kind (skip joins whose result is known, skip copies of an unchanged
 * clock); each is noted where it is taken.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "support/mem.h"
#include "support/rotate.h"
#include "support/vclock.h"

#if defined(__GNUC__) || defined(__clang__)
#define AERO_RARE __attribute__((noinline, cold)) /* provenance work, off the hot paths */
#define AERO_HOT inline __attribute__((always_inline))
#else
#define AERO_RARE
#define AERO_HOT inline
#endif

#define NIL UINT32_MAX
#define NO_TXN ATOM__VC_MAX  /* open_b[] of a thread without an open transaction */
#define SEEN_BIT(t) ((t) < 64 ? (uint64_t)1 << (t) : 0)
#define PN_MAX_DEPTH 48u   /* longest provenance chain kept (see "Provenance") */
#define CYC_MAX 128u       /* edges of a reported cycle (the session keeps 128) */
#define CYC_VARS 16u       /* variables named by a report */
#define RLOG_MAX 256u      /* own reads logged per transaction (see rown_origin) */

enum { REG_W = 0, REG_R = 1, REG_L = 2 };

/* A clock registered with an open transaction (optimized variant). */
typedef struct reg {
  uint32_t kind; /* REG_W, REG_R (R_x with chR_x), REG_L */
  uint32_t id;
} reg;

/* An open transaction a thread clock knows: thread and its transaction number. */
typedef struct kent {
  uint32_t t, seq;
} kent;

/* An event kept for reports, with the transaction it belongs to. */
typedef struct aev {
  atom_txn_ref txn;
  uint64_t index, loc;
  uint32_t kind, target;
} aev;

/* Provenance (see "Provenance" in the header comment): an immutable, reference-counted node
 * that explains how a clock came to know the open transaction C (thread `of`, number `about`):
 * a path of conflict edges from C to a point. Nodes are shared by the records that point to
 * them and freed with the last one. */
enum { PN_EDGE = 1, PN_FORK = 2, PN_END = 3, PN_HOLD = 4 };
/* PN_HOLD: a read record of R_x or chR_x (never in a chain): path a, then the read e2.
 * PN_FWD: a node already copied by pn_collect, to a. */
enum { PN_FWD = 5 };
#define PN_ORIGIN 0x1u /* EDGE/FORK: e1 is an event of C itself; END: e2 is an event of V */
#define PN_AT 0x2u     /* END: the path goes on to the store event e2 */
typedef struct pnode {
  uint8_t kind, flags;
  uint16_t depth;
  uint32_t of, about;
  struct pnode *a, *b; /* EDGE/FORK: a = source's path (NULL if origin); END: a = C →* V,
                          b = V →* the clock */
  uint64_t made;       /* index of the event that made it */
  aev e2;              /* EDGE: the edge e1 -> e2; END: the store event (PN_AT) */
  aev e1;              /* EDGE, FORK (the fork) only: END nodes, the most numerous, are
                          allocated without it (pn_size) */
} pnode;

/* Per-component provenance of a clock: slot c is a node about thread c's transaction. */
typedef struct ends {
  pnode **p;
  uint32_t cap;    /* slots */
  uint32_t gap;    /* slot c is p[c * (gap + 1)]: 0 for an array of its own (a zeroed ends is
                      empty and valid), more for a view into a variable's vslot block
                      (VAR_ENDS), which the variable owns and grows */
} ends;

/* The common read records, kept small and apart from rp/cp (one per thread and variable, 24
 * bytes, no node): o_about: R_x learned thread c's transaction number o_about from its own read
 * `index` at `loc` (the rest of the event follows while the transaction is open, the only time
 * the record is read); a_about: chR_x learned transaction a_about by the same read as R_x, so
 * R_x's record serves (it cannot change while the transaction is open: R_x learns it once).
 * 0 = none (transaction numbers start at 1). */
typedef struct rown {
  uint64_t index, loc;
  uint32_t o_about, a_about;
} rown;

/* The provenance records of one variable about thread c's open transaction, side by side so
 * that an access or an END touching them misses the cache once (48 bytes): what W_x learned at
 * ENDs after its last write, how R_x and chR_x learned it (rp, cp), and R_x's own-read record. */
typedef struct vslot {
  pnode *wend, *rp, *cp;
  rown ro;
} vslot;

/* The records of one kind (wend, rp or cp) of variable v as an `ends` view (a compound
 * literal, valid in the enclosing block). */
#define VAR_ENDS(v, field)                                                            \
  (&(ends){(v)->slot ? &(v)->slot[0].field : NULL, (v)->nslot,                         \
           (uint32_t)(sizeof(vslot) / sizeof(pnode *) - 1)})


/* A read by which R_x learned its reader's open transaction, in the reader's log (rown_origin). */
typedef struct rlog_ent {
  uint64_t index, loc;
  uint32_t var;
} rlog_ent;

/* "The clock knows C because of path n, which ends at or before event at" (origin: at is an
 * event of C). n == NULL && !origin: unknown. */
typedef struct expl {
  pnode *n;
  aev at;
  int origin;
} expl;

typedef struct athread { /* hot fields first */
  atom__vc c;           /* C_t */
  atom__vc_t b;         /* C_t^▷(t) */
  uint32_t active;      /* inside a transaction */
  uint32_t seq;         /* transactions begun so far */
  uint32_t overflow;    /* its learned list could not grow: END scans everything */
  uint64_t ver;         /* bumped whenever c changes */
  kent *known;          /* open transactions c knows (validated lazily) */
  size_t n_known, cap_known;
  reg *learned;         /* clocks that learned its open transaction */
  size_t n_learned, cap_learned;
  uint64_t begin_index; /* of the open (or last) transaction */
  uint64_t begin_loc;
  atom_ev last;         /* its last event */
  uint32_t last_in_txn; /* that event belonged to a transaction */
  uint32_t started;     /* performed some event */
  uint32_t rep_seq;     /* seq + 1 of its transaction last reported, 0 = none */
  uint64_t rep_other;   /* the other transaction of that report */
  ends prov;            /* how C_t learned each open transaction it knows */
  rlog_ent *rlog;       /* reads of its open transaction that taught R_x (at most RLOG_MAX) */
  uint32_t n_rlog, cap_rlog;
  atom__vc cb;          /* C_t^▷ (basic variant) */
} athread;

typedef struct avar { /* what every access touches first (two cache lines), then the rest */
  uint32_t lastw;   /* lastWThr_x */
  /* shortcuts (optimized): W_x == C_{w_from} at version w_ver; R_x ⊒ C_{r_from} at r_ver */
  uint32_t w_from, r_from;
  uint32_t rd_other; /* a thread other than lastw read since lastw joined R_x */
  uint64_t w_ver, r_ver;
  uint64_t w_seen;  /* threads < 64 whose clock ⊒ the current W_x */
  atom__vc r, chr;  /* R_x, chR_x (optimized) */
  atom__vc w;       /* W_x */
  vslot *slot;      /* provenance records per component (vslot), nslot allocated, grown on
                       first use; W_x's (wend) in both variants, R_x's and chR_x's (rp, cp: the
                       read by another thread that taught it (PN_HOLD) or an END that did
                       (PN_END); ro: its own read) in the optimized one */
  uint32_t nslot;
} avar;

/* What variant=basic keeps per variable besides avar (allocated in that variant only). */
typedef struct avar_basic {
  atom__vc *rt;     /* R_{u,x} for u < n_rt; rt_cap allocated */
  aev *rtev;        /* the read that stored R_{u,x} */
  ends *rtend;      /* what R_{u,x} learned at ENDs after that read */
  uint32_t n_rt;
  size_t rt_cap, rtev_cap, rtend_cap;
} avar_basic;

typedef struct alock {
  atom__vc l;       /* L_l */
  uint32_t lastrel; /* lastRelThr_l */
  uint32_t l_from;  /* L_l == C_{l_from} at version l_ver */
  uint64_t l_ver;
  uint64_t seen;
  ends lend;        /* what L_l learned at ENDs after its last release */
} alock;

/* Memory for provenance nodes, handed out in order (see pn_collect). */
typedef struct pchunk {
  struct pchunk *next;
  size_t size, used;  /* bytes of data */
  uint64_t data[];    /* nodes, 8-byte aligned */
} pchunk;

/* A cycle being assembled from provenance (see walk()). */
typedef struct cyc {
  aev from[CYC_MAX], to[CYC_MAX];
  size_t n;
  int fail, started;
  aev start; /* the first event of the victim's transaction on the path */
  /* the spec being built */
  atom_txn_ref txns[CYC_MAX];
  atom_ev evs[2 * CYC_MAX];
  atom_edge_ref edges[CYC_MAX];
  uint32_t vars[CYC_VARS];
} cyc;

typedef struct aero {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int basic;
  uint32_t max_threads; /* vector clocks make memory grow with its square: see max_threads */
  uint32_t n_thr, n_var, n_lock, n_active;
  athread *thr;
  size_t thr_cap;
  atom__vc_t *open_b; /* b_t of the open transaction of t, NO_TXN if none */
  size_t open_cap;
  avar *var;
  size_t var_cap;
  avar_basic *vbasic; /* variant=basic only */
  size_t vbasic_cap;
  aev *wlast;        /* the last write of each variable */
  size_t wlast_cap;
  alock *lock;
  size_t lock_cap;
  aev *rellast;      /* the last release of each lock */
  size_t rellast_cap;
  uint64_t clocks;   /* vector clocks held */
  pchunk *chunks;    /* provenance nodes (see pn_collect), newest chunk first */
  uint64_t n_nodes;  /* provenance nodes held, live or not */
  size_t node_bytes; /* bytes of those nodes */
  size_t collect_at; /* node_bytes at which the next event starts with pn_collect */
  kent *scratch;     /* END: open transactions C_t knows */
  size_t scratch_cap;
  cyc *cy;           /* report scratch */
  int rep_err;       /* first report failure of the current event */
} aero;

/* ------------------------------------------------------------------ provenance */

static const expl UNKNOWN = {NULL, {{0, 0, 0, 0}, 0, 0, 0, 0}, 0};

static atom_txn_ref thread_txn(const aero *a, uint32_t t) {
  const athread *th = &a->thr[t];
  atom_txn_ref r = {t, 0, th->begin_index, th->begin_loc};
  if (!th->active && !th->last_in_txn) {
    r.unary = 1;
    r.begin_index = th->last.index;
    r.begin_loc = th->last.loc;
  }
  return r;
}

/* Event ev of thread t, performed now (unary if t is outside BEGIN..END). */
static inline aev cur_aev(const aero *a, const atom_ev *ev) {
  const athread *th = &a->thr[ev->thread];
  aev r;
  r.txn.thread = ev->thread;
  r.txn.unary = !th->active;
  r.txn.begin_index = th->active ? th->begin_index : ev->index;
  r.txn.begin_loc = th->active ? th->begin_loc : ev->loc;
  r.index = ev->index;
  r.loc = ev->loc;
  r.kind = ev->kind;
  r.target = ev->target;
  return r;
}

/* The last event of thread u (it has one). */
static aev last_aev(const aero *a, uint32_t u) {
  const athread *th = &a->thr[u];
  aev r = {thread_txn(a, u), th->last.index, th->last.loc, th->last.kind, th->last.target};
  return r;
}

static inline int pn_small(uint32_t kind) { return kind == PN_END || kind == PN_HOLD; }

/* The bytes of a node of this kind (END and HOLD nodes have no e1). */
static inline size_t pn_size(uint32_t kind) {
  return pn_small(kind) ? offsetof(pnode, e1) : sizeof(pnode);
}

#define PN_CHUNK 65536u     /* bytes of node memory asked for at a time */
#define PN_COLLECT_MIN (4u * PN_CHUNK)

/* size bytes of node memory, or NULL (out of memory). Nodes are not freed one by one: a
 * record that is replaced just drops its pointer, and pn_collect reclaims the memory of the
 * nodes no record reaches any more. So replacing a record never reads the old node (a cache
 * miss per record with reference counts) and nodes are written in order. */
static void *pn_alloc(aero *a, size_t size) {
  size = (size + 7) & ~(size_t)7;
  pchunk *c = a->chunks;
  if (!c || c->size - c->used < size) {
    size_t bytes = PN_CHUNK;
    if (!(c = atom__mem_alloc(a->mem, offsetof(pchunk, data) + bytes))) return NULL;
    c->next = a->chunks;
    c->size = bytes;
    c->used = 0;
    a->chunks = c;
  }
  void *p = (char *)c->data + c->used;
  c->used += size;
  a->node_bytes += size;
  a->n_nodes++;
  return p;
}

static void pn_free_chunks(aero *a, pchunk *c) {
  while (c) {
    pchunk *next = c->next;
    atom__mem_free(a->mem, c, offsetof(pchunk, data) + c->size);
    c = next;
  }
}

/* A copy of node n and of the nodes it reaches in the current chunks (n already copied: its
 * copy). Out of memory, a node is lost (NULL): the path through it becomes unknown. The
 * recursion is as deep as the chain (at most PN_MAX_DEPTH + 1: a HOLD over a chain). */
static pnode *pn_copy(aero *a, pnode *n) {
  if (!n) return NULL;
  if (n->kind == PN_FWD) return n->a;
  size_t size = pn_size(n->kind);
  pnode *m = pn_alloc(a, size);
  if (m) memcpy(m, n, size);
  n->kind = PN_FWD;
  n->a = m;
  if (m) {
    m->a = pn_copy(a, m->a);
    m->b = pn_copy(a, m->b);
  }
  return m;
}

/* A root slot about thread c: its node copied if it is about c's current transaction (the
 * only time it is read, ends_get), dropped otherwise. */
static inline void pn_keep(aero *a, pnode **cell, uint32_t c) {
  pnode *n = *cell;
  if (n) *cell = n->about == a->thr[c].seq ? pn_copy(a, n) : NULL;
}

static size_t pn_keep_ends(aero *a, ends *e) {
  for (uint32_t c = 0; c < e->cap; c++) pn_keep(a, &e->p[(size_t)c * (e->gap + 1)], c);
  return e->cap;
}

/* Reclaim the nodes no record reaches: copy the reachable ones (from the records, the roots)
 * into new chunks and free the old ones; records about ended transactions are dropped on the
 * way. Run between events, when the nodes made since the last collection outgrow twice the
 * survivors of that collection (and a floor that grows with the number of record slots, so a
 * collection's scan of them is paid for by the nodes made meanwhile): node memory stays
 * within about three times what the records reach, plus the floor. */
static AERO_RARE void pn_collect(aero *a) {
  pchunk *old = a->chunks;
  a->chunks = NULL;
  a->node_bytes = 0;
  a->n_nodes = 0;
  size_t slots = 0;
  for (uint32_t u = 0; u < a->n_thr; u++) slots += pn_keep_ends(a, &a->thr[u].prov);
  for (uint32_t x = 0; x < a->n_var; x++) {
    avar *v = &a->var[x];
    for (uint32_t c = 0; c < v->nslot; c++) {
      pn_keep(a, &v->slot[c].wend, c);
      pn_keep(a, &v->slot[c].rp, c);
      pn_keep(a, &v->slot[c].cp, c);
    }
    slots += 3 * (size_t)v->nslot;
    if (a->vbasic)
      for (uint32_t u = 0; u < a->vbasic[x].n_rt; u++)
        slots += pn_keep_ends(a, &a->vbasic[x].rtend[u]);
  }
  for (uint32_t l = 0; l < a->n_lock; l++) slots += pn_keep_ends(a, &a->lock[l].lend);
  pn_free_chunks(a, old);
  size_t floor = 16 * slots > PN_COLLECT_MIN ? 16 * slots : PN_COLLECT_MIN;
  a->collect_at = 2 * a->node_bytes + floor;
}

/* A new node about the open transaction of thread `of`, or NULL (out of memory, or the chain
 * would be longer than PN_MAX_DEPTH: the knowledge is then of unknown provenance and a report
 * about it names only the closing edge). */
static pnode *pn_new(aero *a, uint32_t kind, uint32_t flags, uint32_t of, pnode *x, pnode *y,
                     const aev *e1, const aev *e2, uint64_t made) {
  uint32_t d = 0;
  if (x && x->depth > d) d = x->depth;
  if (y && y->depth > d) d = y->depth;
  if (d + 1 > PN_MAX_DEPTH) return NULL;
  int small = pn_small(kind);
  pnode *n = pn_alloc(a, pn_size(kind));
  if (!n) return NULL;
  n->kind = (uint8_t)kind;
  n->flags = (uint8_t)flags;
  n->depth = (uint16_t)(d + 1);
  n->of = of;
  n->about = a->thr[of].seq;
  n->a = x;
  n->b = y;
  n->made = made;
  if (e2) n->e2 = *e2;
  else memset(&n->e2, 0, sizeof n->e2);
  if (!small) { /* an END node has no e1 */
    if (e1) n->e1 = *e1;
    else memset(&n->e1, 0, sizeof n->e1);
  }
  return n;
}

/* Slot c of e := n (if there is no room, the slot is empty: never left describing an older
 * transaction). */
static void ends_put(aero *a, ends *e, uint32_t c, pnode *n) {
  if (c >= e->cap) {
    if (!n) return;
    size_t cap = e->cap;
    if (e->gap || /* a view: the variable grows it first (vslot_room) */
        ATOM__GROW(a->mem, e->p, cap, c + 1 > a->n_thr ? c + 1 : a->n_thr))
      return;
    e->cap = (uint32_t)cap;
  }
  e->p[(size_t)c * (e->gap + 1)] = n;
}

static void ends_free(aero *a, ends *e) {
  if (!e->gap) atom__mem_free(a->mem, e->p, e->cap * sizeof *e->p);
  e->p = NULL;
  e->cap = 0;
}

/* Slot c if it is about thread c's current (open) transaction. */
static inline pnode *ends_get(const aero *a, const ends *e, uint32_t c) {
  pnode *n = c < e->cap ? e->p[(size_t)c * (e->gap + 1)] : NULL;
  return n && n->about == a->thr[c].seq ? n : NULL;
}

/* Room for slot c of v->slot (one per thread). */
static AERO_RARE int vslot_grow(aero *a, avar *v, uint32_t c) {
  size_t want = c + 1 > a->n_thr ? c + 1 : a->n_thr;
  vslot *p = atom__mem_realloc(a->mem, v->slot, v->nslot * sizeof *p, want * sizeof *p);
  if (!p) return ATOM_ENOMEM;
  memset(p + v->nslot, 0, (want - v->nslot) * sizeof *p);
  v->slot = p;
  v->nslot = (uint32_t)want;
  return 0;
}

/* 0 if slot c of v exists (grown if needed), else ATOM_ENOMEM (the record is then lost). */
static inline int vslot_room(aero *a, avar *v, uint32_t c) {
  return c < v->nslot ? 0 : vslot_grow(a, v, c);
}

static AERO_RARE int rlog_grow(aero *a, athread *th) {
  size_t cap = th->cap_rlog;
  if (ATOM__GROW(a->mem, th->rlog, cap, (size_t)th->n_rlog + 1)) return ATOM_ENOMEM;
  th->cap_rlog = (uint32_t)(cap < RLOG_MAX ? cap : RLOG_MAX);
  return 0;
}

/* R_x learns thread c's open transaction from c's own read (index, loc). This happens at the
 * first read of each variable in most transactions, so the record goes where it is cheapest to
 * write: the reader's log, appended in order (one cache line for several reads), searched only
 * when an edge is named (ex_rp). Past RLOG_MAX reads of one transaction, or without memory for
 * the log, it goes to the variable's slot. */
static inline void rown_origin(aero *a, avar *v, uint32_t c, uint64_t index, uint64_t loc) {
  athread *th = &a->thr[c];
  if (th->n_rlog < th->cap_rlog || (th->n_rlog < RLOG_MAX && !rlog_grow(a, th))) {
    rlog_ent *l = &th->rlog[th->n_rlog++];
    l->index = index;
    l->loc = loc;
    l->var = (uint32_t)(v - a->var);
    return;
  }
  if (vslot_room(a, v, c)) return;
  rown *s = &v->slot[c].ro;
  s->index = index;
  s->loc = loc;
  s->o_about = a->thr[c].seq;
}

/* chR_x learns thread c's open transaction by the read R_x learned it by. */
static inline void rown_alias(aero *a, avar *v, uint32_t c) {
  if (vslot_room(a, v, c)) return;
  v->slot[c].ro.a_about = a->thr[c].seq;
}

/* How thread u's clock (at its event `at`) knows thread c's open transaction. */
static expl ex_thread(const aero *a, uint32_t u, uint32_t c, const aev *at) {
  expl x = {NULL, *at, u == c};
  if (u != c) x.n = ends_get(a, &a->thr[u].prov, c);
  return x;
}

/* How a stored clock (W_x, L_l, R_{u,x}: a copy of its storer's clock at event `store`, joined
 * at ENDs since) knows thread c's open transaction. */
static expl ex_snap(const aero *a, const aev *store, const ends *e, uint32_t c) {
  pnode *n = ends_get(a, e, c);
  if (n && n->made > store->index) {
    expl x = {n, n->e2, 0};
    return x;
  }
  return ex_thread(a, store->txn.thread, c, store);
}

static expl ex_rrec(const aero *a, const ends *e, uint32_t c) {
  pnode *n = ends_get(a, e, c);
  if (!n) return UNKNOWN;
  expl x = {n->kind == PN_HOLD ? n->a : n, n->e2, 0};
  return x;
}

/* How R_x (of variable v) knows thread c's open transaction. */
static expl ex_rp(const aero *a, const avar *v, uint32_t c) {
  const athread *th = &a->thr[c];
  uint32_t seq = th->seq, var = (uint32_t)(v - a->var);
  const rlog_ent *own = NULL;
  if (th->active)
    for (uint32_t i = 0; i < th->n_rlog && !own; i++)
      if (th->rlog[i].var == var) own = &th->rlog[i];
  if (!own && c < v->nslot && v->slot[c].ro.o_about == seq && seq) {
    const rown *s = &v->slot[c].ro;
    expl x = {NULL, {{c, 0, th->begin_index, th->begin_loc}, s->index, s->loc, ATOM_READ, var},
              1};
    return x;
  }
  if (own) {
    expl x = {NULL, {{c, 0, th->begin_index, th->begin_loc}, own->index, own->loc, ATOM_READ, var},
              1};
    return x;
  }
  return ex_rrec(a, VAR_ENDS(v, rp), c);
}

/* How chR_x knows thread c's open transaction. */
static expl ex_chr(const aero *a, const avar *v, uint32_t c) {
  uint32_t seq = a->thr[c].seq;
  if (c < v->nslot && v->slot[c].ro.a_about == seq && seq) return ex_rp(a, v, c);
  return ex_rrec(a, VAR_ENDS(v, cp), c);
}

static inline int known_expl(const expl *x) { return x->n || x->origin; }

static inline int same_expl(const expl *x, const expl *y) {
  return x->n == y->n && x->origin == y->origin && x->at.index == y->at.index &&
         x->at.txn.thread == y->at.txn.thread;
}

/* An EDGE node: the knowledge explained by x crosses the edge x.at -> to. */
static pnode *pn_edge(aero *a, uint32_t of, const expl *x, const aev *to, uint64_t made) {
  if (!known_expl(x)) return NULL;
  return pn_new(a, PN_EDGE, x->origin ? PN_ORIGIN : 0, of, x->n, NULL, &x->at, to, made);
}

/* An END node for a stored clock: C (thread of) →* V (left, V's thread clock) →* the clock
 * (right, ending at its store event). */
static pnode *pn_end_at(aero *a, uint32_t of, pnode *left, const expl *right, uint64_t made) {
  if (!left || !known_expl(right)) return NULL;
  return pn_new(a, PN_END, PN_AT | (right->origin ? PN_ORIGIN : 0), of, left, right->n, NULL,
                &right->at, made);
}

/* Where a thread clock learns its open transactions from (thread_join). */
enum { SD_SNAP, SD_RREC, SD_THREAD, SD_FORK, SD_END };
typedef struct srcd {
  int kind;
  uint32_t who;       /* THREAD: the joined child; FORK: the parent; END: the ending thread */
  const aev *at;      /* SNAP: store event; THREAD: the child's last event; FORK: the fork */
  const ends *e;      /* SNAP: the stored clock's END records, or NULL for W_x of v */
  const avar *v;      /* RREC: the variable whose R_x is joined; SNAP with e NULL: whose W_x */
  const atom_ev *ev;  /* the receiving event (its aev is made only if a record needs it) */
} srcd;

/* Thread u's clock learns thread i's open transaction from sd: record how. Called only when a
 * component crosses an open transaction's BEGIN value (rare), so kept out of the join loop. */
static AERO_RARE void learn_thread(aero *a, uint32_t u, uint32_t i, const srcd *sd) {
  pnode *n = NULL;
  uint64_t made = sd->ev->index;
  expl x;
  aev to;
  switch (sd->kind) {
    case SD_SNAP:
      /* W_x's records are a view made here, off the hot path that fills sd */
      x = ex_snap(a, sd->at, sd->e ? sd->e : VAR_ENDS(sd->v, wend), i);
      to = cur_aev(a, sd->ev);
      n = pn_edge(a, i, &x, &to, made);
      break;
    case SD_RREC:
      x = ex_rp(a, sd->v, i);
      to = cur_aev(a, sd->ev);
      n = pn_edge(a, i, &x, &to, made);
      break;
    case SD_THREAD:
      x = ex_thread(a, sd->who, i, sd->at);
      to = cur_aev(a, sd->ev);
      n = pn_edge(a, i, &x, &to, made);
      break;
    case SD_FORK:
      x = ex_thread(a, sd->who, i, sd->at);
      if (known_expl(&x))
        n = pn_new(a, PN_FORK, x.origin ? PN_ORIGIN : 0, i, x.n, NULL, &x.at, NULL, made);
      break;
    default: { /* SD_END: C_i →* V (V's clock), V →* C_u (u's clock) */
      pnode *l = ends_get(a, &a->thr[sd->who].prov, i), *r = ends_get(a, &a->thr[u].prov, sd->who);
      if (l && r) n = pn_new(a, PN_END, 0, i, l, r, NULL, NULL, made);
    }
  }
  ends_put(a, &a->thr[u].prov, i, n);
}

/* ------------------------------------------------------------------ reports */

enum { PT_NONE, PT_EV, PT_FORK };
typedef struct pt {
  int kind;
  aev ev;
} pt;

static inline int same_txn(const aev *x, const aev *y) {
  return x->txn.thread == y->txn.thread && x->txn.unary == y->txn.unary &&
         x->txn.begin_index == y->txn.begin_index;
}

static void cyc_add(cyc *c, const aev *from, const aev *to) {
  if (c->n == CYC_MAX) {
    c->fail = 1;
    return;
  }
  c->from[c->n] = *from;
  c->to[c->n] = *to;
  c->n++;
}

/* The path has reached point p; go on from event b. Two events of one transaction need no
 * edge; two transactions of one thread are joined by program order; a fork reaches every
 * event of the child. */
static void cyc_link(cyc *c, pt p, const aev *b) {
  if (c->fail) return;
  if (p.kind == PT_NONE) {
    if (c->started) c->fail = 1;
    c->start = *b;
    c->started = 1;
  } else if (p.kind == PT_FORK) {
    if (b->txn.thread != p.ev.target || b->index < p.ev.index) c->fail = 1;
    else cyc_add(c, &p.ev, b);
  } else if (!same_txn(&p.ev, b)) {
    if (p.ev.txn.thread != b->txn.thread || p.ev.index > b->index) c->fail = 1;
    else cyc_add(c, &p.ev, b);
  }
}

static pt walk(cyc *c, const pnode *n, pt in);

static pt walk_src(cyc *c, const pnode *n, const aev *at, int origin, pt in) {
  if (!origin) in = walk(c, n, in);
  cyc_link(c, in, at);
  pt r = {PT_EV, *at};
  return r;
}

/* Append the edges of node n's path, entered from point in; return the point reached. */
static pt walk(cyc *c, const pnode *n, pt in) {
  if (c->fail || !n) {
    c->fail = 1;
    return in;
  }
  pt r = {PT_EV, n->e2};
  switch (n->kind) {
    case PN_EDGE:
      walk_src(c, n->a, &n->e1, n->flags & PN_ORIGIN, in);
      cyc_add(c, &n->e1, &n->e2);
      return r;
    case PN_FORK:
      walk_src(c, n->a, &n->e1, n->flags & PN_ORIGIN, in);
      r.kind = PT_FORK;
      r.ev = n->e1;
      return r;
    case PN_HOLD: /* not in chains (ex_rrec unwraps it) */
      c->fail = 1;
      return in;
    default: { /* PN_END */
      pt p = walk(c, n->a, in);
      if (n->flags & PN_ORIGIN) {
        cyc_link(c, p, &n->e2);
        return r;
      }
      pt q = walk(c, n->b, p);
      if (!(n->flags & PN_AT)) return q;
      cyc_link(c, q, &n->e2);
      return r;
    }
  }
}

/* Drop detours: while a transaction occurs twice on the cycle, cut the edges between its two
 * occurrences (the closing edge, last, is never cut). */
static void cyc_simplify(cyc *c) {
  for (size_t i = 0; i < c->n; i++)
    for (size_t j = c->n - 1; j > i; j--)
      if (same_txn(&c->from[i], &c->from[j])) {
        size_t cut = j - i;
        memmove(&c->from[i], &c->from[j], (c->n - j) * sizeof c->from[0]);
        memmove(&c->to[i], &c->to[j], (c->n - j) * sizeof c->to[0]);
        c->n -= cut;
        break;
      }
}

static size_t add_event(atom_ev *evs, size_t *n, const aev *e) {
  for (size_t i = 0; i < *n; i++)
    if (evs[i].index == e->index) return i;
  atom_ev x = {e->kind, e->txn.thread, e->target, 0, e->index, e->loc};
  evs[*n] = x;
  return (*n)++;
}

/* Report the cycle in c, whose edge `closing` was closed by ev; or, if the provenance was not
 * complete (c->fail), the victim's transaction and `other` without edges. */
static int emit(aero *a, cyc *c, const atom_ev *ev, uint32_t victim, size_t closing,
                const atom_txn_ref *other, const atom_ev *other_ev) {
  size_t n_txns = 0, n_evs = 0, n_edges = 0, n_vars = 0;
  if (c && !c->fail && c->n > 0 && closing < c->n) {
    /* the closing edge last, so that the cycle starts with the victim's transaction */
    atom__rotate(c->from, c->n, sizeof c->from[0], closing + 1);
    atom__rotate(c->to, c->n, sizeof c->to[0], closing + 1);
    cyc_simplify(c);
    for (size_t i = 0; i < c->n; i++) {
      c->txns[n_txns++] = c->from[i].txn;
      c->edges[n_edges].from = (uint32_t)add_event(c->evs, &n_evs, &c->from[i]);
      c->edges[n_edges].to = (uint32_t)add_event(c->evs, &n_evs, &c->to[i]);
      c->edges[n_edges].flags = i + 1 == c->n ? ATOM_EDGE_CLOSING : 0;
      c->edges[n_edges].reserved = 0;
      n_edges++;
    }
  }
  atom_txn_ref tx[2];
  atom_ev ev2[2];
  uint32_t var1;
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "conflict-cycle";
  spec.event_index = ev->index;
  if (n_edges) {
    for (size_t i = 0; i < n_evs; i++) {
      const atom_ev *e = &c->evs[i];
      if (e->kind != ATOM_READ && e->kind != ATOM_WRITE) continue;
      size_t k = 0;
      while (k < n_vars && c->vars[k] != e->target) k++;
      if (k == n_vars && n_vars < CYC_VARS) c->vars[n_vars++] = e->target;
    }
    spec.txns = c->txns;
    spec.n_txns = n_txns;
    spec.events = c->evs;
    spec.n_events = n_evs;
    spec.vars = n_vars ? c->vars : NULL;
    spec.n_vars = n_vars;
    spec.edges = c->edges;
    spec.n_edges = n_edges;
  } else {
    /* Out of memory or a provenance chain cut at PN_MAX_DEPTH: the two transactions we know. */
    const athread *th = &a->thr[victim];
    tx[n_txns++] = (atom_txn_ref){victim, 0, th->begin_index, th->begin_loc};
    if (other) tx[n_txns++] = *other;
    ev2[n_evs++] = *ev;
    if (other_ev) ev2[n_evs++] = *other_ev;
    int access = ev->kind == ATOM_READ || ev->kind == ATOM_WRITE;
    var1 = ev->target;
    spec.txns = tx;
    spec.n_txns = n_txns;
    spec.events = ev2;
    spec.n_events = n_evs;
    spec.vars = access ? &var1 : NULL;
    spec.n_vars = access ? 1 : 0;
  }
  spec.message = NULL; /* the session tells the cycle (or names the transactions) */
  return atom_env_report(a->env, &spec);
}

/* One cycle of two transaction instances is often seen at several events (ρ2: at the read and
 * again at the END): report each pair of instances once, so that the session's occurrence
 * count is the number of times the violation happened (a loop's iterations). */
static int reported(aero *a, uint32_t victim, const atom_txn_ref *other) {
  athread *th = &a->thr[victim];
  uint64_t key =
      other ? ((uint64_t)other->thread << 40) ^ other->begin_index ^ ((uint64_t)other->unary << 63)
            : UINT64_MAX;
  if (th->rep_seq == th->seq + 1 && th->rep_other == key) return 1;
  th->rep_seq = th->seq + 1;
  th->rep_other = key;
  return 0;
}

/* The report scratch, cleared; NULL if out of memory (the report then has no edges). */
static cyc *cyc_begin(aero *a) {
  if (!a->cy && !(a->cy = atom__mem_alloc(a->mem, sizeof *a->cy))) return NULL;
  a->cy->n = 0;
  a->cy->fail = 0;
  a->cy->started = 0;
  return a->cy;
}

/* The path must have started in the victim's open transaction. */
static void cyc_check_start(const aero *a, cyc *c, uint32_t victim) {
  const athread *th = &a->thr[victim];
  if (!c->started || c->start.txn.thread != victim || c->start.txn.unary ||
      c->start.txn.begin_index != th->begin_index)
    c->fail = 1;
}

/* Violation at ev (003 Alg. 1 lines 9-12): a clock that knows the victim's open transaction,
 * explained by x, reaches ev across the closing edge src -> ev. src: the event the clock was
 * taken at (NULL if unknown). */
static int report_edge(aero *a, const atom_ev *ev, uint32_t victim, const expl *x,
                       const aev *src) {
  if (known_expl(x)) src = &x->at;
  if (reported(a, victim, src ? &src->txn : NULL)) return 0;
  atom_ev oe = {0, 0, 0, 0, 0, 0};
  if (src) oe = (atom_ev){src->kind, src->txn.thread, src->target, 0, src->index, src->loc};
  cyc *c = cyc_begin(a);
  size_t closing = 0;
  if (c) {
    aev to = cur_aev(a, ev);
    pt none = {PT_NONE, to}, end = {PT_EV, to};
    walk_src(c, x->n, &x->at, x->origin, none);
    cyc_add(c, &x->at, &to);
    closing = c->n - 1;
    cyc_check_start(a, c, victim);
    if (!c->fail) cyc_link(c, end, &c->start);
  }
  return emit(a, c, ev, victim, closing, src ? &src->txn : NULL, src ? &oe : NULL);
}

/* Violation at END(t) (lines 38-40): thread u's clock knows t's open transaction T, and t's
 * clock knows u's open transaction U. */
static int report_end(aero *a, const atom_ev *ev, uint32_t t, uint32_t u) {
  atom_txn_ref ut = thread_txn(a, u);
  if (reported(a, t, &ut)) return 0;
  cyc *c = cyc_begin(a);
  size_t closing = 0;
  if (c) {
    pt none = {PT_NONE, {{0, 0, 0, 0}, 0, 0, 0, 0}};
    pt p = walk(c, ends_get(a, &a->thr[u].prov, t), none);
    pt q = walk(c, ends_get(a, &a->thr[t].prov, u), p);
    closing = c->n ? c->n - 1 : 0;
    cyc_check_start(a, c, t);
    if (!c->fail) cyc_link(c, q, &c->start);
  }
  return emit(a, c, ev, t, closing, &ut, &a->thr[u].last);
}

/* A failed report (out of memory in the session) does not stop the event: its update
 * completes and the first such error is returned at the end of the event. */
static inline void note(aero *a, int err) {
  if (err && !a->rep_err) a->rep_err = err;
}

/* ------------------------------------------------------------------ growth */

static int ensure_threads_slow(aero *a, uint32_t id) {
  if (id < a->n_thr) return 0;
  if (id >= a->max_threads)
    return atom_env_error(a->env, ATOM_ELIMIT,
                          "thread number %u is beyond max_threads=%u (each vector clock has a "
                          "component per thread); its events are not checked",
                          id + 1, a->max_threads);
  uint32_t want = atom_env_count(a->env, ATOM_SPACE_THREAD);
  if (want <= id) want = id + 1;
  if (want > a->max_threads) want = a->max_threads;
  if (ATOM__GROW(a->mem, a->thr, a->thr_cap, want) ||
      ATOM__GROW(a->mem, a->open_b, a->open_cap, want))
    return ATOM_ENOMEM;
  while (a->n_thr < want) {
    uint32_t u = a->n_thr;
    athread *th = &a->thr[u];
    memset(th, 0, sizeof *th);
    atom__vc_init(&th->c);
    atom__vc_init(&th->cb);
    /* 003 Alg. 1 line 3: C_u := ⊥[1/u], C_u^▷ := ⊥ */
    if (atom__vc_set(a->mem, &th->c, u, 1)) return ATOM_ENOMEM;
    a->open_b[u] = NO_TXN;
    a->clocks += a->basic ? 2 : 1;
    a->n_thr = u + 1;
  }
  return 0;
}

static int ensure_vars_slow(aero *a, uint32_t id) {
  if (id < a->n_var) return 0;
  uint32_t want = atom_env_count(a->env, ATOM_SPACE_VAR);
  if (want <= id) want = id + 1;
  if (ATOM__GROW(a->mem, a->var, a->var_cap, want) ||
      ATOM__GROW(a->mem, a->wlast, a->wlast_cap, want) ||
      (a->basic && ATOM__GROW(a->mem, a->vbasic, a->vbasic_cap, want)))
    return ATOM_ENOMEM;
  for (uint32_t x = a->n_var; x < want; x++) {
    avar *v = &a->var[x];
    memset(v, 0, sizeof *v);
    atom__vc_init(&v->w);
    atom__vc_init(&v->r);
    atom__vc_init(&v->chr);
    v->lastw = v->w_from = v->r_from = NIL;
    a->wlast[x].txn.thread = NIL;
  }
  a->clocks += (uint64_t)(want - a->n_var) * (a->basic ? 1 : 3);
  a->n_var = want;
  return 0;
}

static int ensure_locks_slow(aero *a, uint32_t id) {
  if (id < a->n_lock) return 0;
  uint32_t want = atom_env_count(a->env, ATOM_SPACE_LOCK);
  if (want <= id) want = id + 1;
  if (ATOM__GROW(a->mem, a->lock, a->lock_cap, want) ||
      ATOM__GROW(a->mem, a->rellast, a->rellast_cap, want))
    return ATOM_ENOMEM;
  for (uint32_t l = a->n_lock; l < want; l++) {
    alock *k = &a->lock[l];
    memset(k, 0, sizeof *k);
    atom__vc_init(&k->l);
    k->lastrel = k->l_from = NIL;
    a->rellast[l].txn.thread = NIL;
  }
  a->clocks += want - a->n_lock;
  a->n_lock = want;
  return 0;
}

/* The common case (the id is known) without a call. */
static inline int ensure_threads(aero *a, uint32_t id) {
  return id < a->n_thr ? 0 : ensure_threads_slow(a, id);
}
static inline int ensure_vars(aero *a, uint32_t id) {
  return id < a->n_var ? 0 : ensure_vars_slow(a, id);
}
static inline int ensure_locks(aero *a, uint32_t id) {
  return id < a->n_lock ? 0 : ensure_locks_slow(a, id);
}

static inline int reserve(aero *a, atom__vc *c, uint32_t n) {
  return n <= c->cap ? 0 : atom__vc_reserve(a->mem, c, n);
}

static inline uint32_t max_u32(uint32_t x, uint32_t y) { return x > y ? x : y; }

/* ------------------------------------------------------------------ known / learned lists */

static inline int kent_valid(const aero *a, kent e) {
  const athread *o = &a->thr[e.t];
  return o->active && o->seq == e.seq;
}

/* Room for every open transaction thread u could learn during one event: each addition is
 * an open transaction not yet (validly) in the list. */
static int known_reserve(aero *a, athread *th) {
  if (a->basic || th->n_known + a->n_active + 1 <= th->cap_known) return 0;
  size_t k = 0;
  for (size_t i = 0; i < th->n_known; i++)
    if (kent_valid(a, th->known[i])) th->known[k++] = th->known[i];
  th->n_known = k;
  return ATOM__GROW(a->mem, th->known, th->cap_known, k + a->n_active + 1);
}

static atom__vc *reg_clock(aero *a, reg r) {
  switch (r.kind) {
    case REG_W: return &a->var[r.id].w;
    case REG_R: return &a->var[r.id].r;
    default: return &a->lock[r.id].l;
  }
}

/* Append r to the learned list of t's open transaction. Never fails: if the list cannot
 * grow, the transaction falls back to the full scan at its END. */
static void learn(aero *a, uint32_t t, reg r) {
  athread *o = &a->thr[t];
  if (o->overflow) return;
  if (o->n_learned == o->cap_learned &&
      ATOM__GROW(a->mem, o->learned, o->cap_learned, o->n_learned + 1)) {
    o->overflow = 1;
    return;
  }
  o->learned[o->n_learned++] = r;
}

/* Clock X (about to receive C_u's knowledge) learns the open transactions C_u knows that it
 * did not know: register it with each. Call before the store. Drops the stale entries of
 * u's list on the way (this runs at every store, so the list stays as short as the set of
 * open transactions u knows). */
static void register_from(aero *a, athread *src, reg r, const atom__vc *x) {
  size_t k = 0;
  for (size_t i = 0; i < src->n_known; i++) {
    kent e = src->known[i];
    if (!kent_valid(a, e)) continue;
    src->known[k++] = e;
    if (atom__vc_get(x, e.t) < a->thr[e.t].b) learn(a, e.t, r);
  }
  src->n_known = k;
}

/* C_u := C_u ⊔ src (capacity reserved by the caller). A component crossing the BEGIN value
 * of an open transaction means C_u now learns it: record how (provenance, from sd) and, in
 * the optimized variant, add it to the known list. */
static void thread_join(aero *a, uint32_t u, const atom__vc *src, const srcd *sd) {
  athread *th = &a->thr[u];
  atom__vc_t *d = atom__vc_data(&th->c);
  const atom__vc_t *s = atom__vc_cdata(src);
  const atom__vc_t *ob = a->open_b;
  uint32_t n = src->len;
  int grew = 0;
  for (uint32_t i = 0; i < n; i++)
    if (s[i] > d[i]) {
      if (d[i] < ob[i] && s[i] >= ob[i]) {
        if (!a->basic) th->known[th->n_known++] = (kent){i, a->thr[i].seq};
        learn_thread(a, u, i, sd);
      }
      d[i] = s[i];
      grew = 1;
    }
  if (n > th->c.len) th->c.len = n;
  if (grew) th->ver++;
}

/* ------------------------------------------------------------------ optimized variant */

/* 003 Alg. 1 line 9-12, optimized check: C_t^▷ ⊑ clk iff clk(t) >= b_t. */
static inline int knows(const aero *a, const atom__vc *clk, uint32_t t) {
  return a->thr[t].active && atom__vc_get(clk, t) >= a->thr[t].b;
}

/* register_from for R_x at a read by t (before its joins), and provenance: R_x and chR_x
 * learn the open transactions C_t knows; record the read and how C_t knew each (003 §4.3:
 * chR_x learns only from readers other than the transaction's thread). */
static void register_read(aero *a, uint32_t t, uint32_t x, const atom_ev *ev) {
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  aev me;
  int have_me = 0;
  size_t k = 0;
  for (size_t i = 0; i < th->n_known; i++) {
    kent e = th->known[i];
    if (!kent_valid(a, e)) continue;
    th->known[k++] = e;
    atom__vc_t b = a->thr[e.t].b;
    int r_learns = atom__vc_get(&v->r, e.t) < b;
    int c_learns = e.t != t && atom__vc_get(&v->chr, e.t) < b;
    if (r_learns) learn(a, e.t, (reg){REG_R, x});
    if (!r_learns && !c_learns) continue;
    if (e.t == t) { /* t's own transaction: R_x learns it from this read (chR_x never does) */
      rown_origin(a, v, t, ev->index, ev->loc);
      continue;
    }
    if (!have_me) {
      me = cur_aev(a, ev);
      have_me = 1;
    }
    if (vslot_room(a, v, e.t)) continue; /* out of memory: the record is lost */
    vslot *sl = &v->slot[e.t];
    pnode *n = ends_get(a, &th->prov, e.t);
    *(r_learns ? &sl->rp : &sl->cp) =
        n ? pn_new(a, PN_HOLD, 0, e.t, n, NULL, NULL, &me, ev->index) : NULL;
    if (r_learns && c_learns) rown_alias(a, v, e.t); /* the same read taught both */
  }
  th->n_known = k;
}

static int opt_read(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  /* line 24: the last writer's W_x ⊑ C_t already; w_seen: t joined this W_x before */
  int join_w = v->lastw != t && !(v->w_seen & SEEN_BIT(t));
  /* line 26 as §4.3: R_x ⊔= C_t, chR_x ⊔= C_t[0/t]; skip if R_x ⊒ C_t already */
  int store_r = join_w || !(v->r_from == t && v->r_ver == th->ver);
  uint32_t len = th->c.len;
  if (join_w) len = max_u32(len, v->w.len);
  if ((join_w && (reserve(a, &th->c, len) || known_reserve(a, th))) ||
      (store_r && (reserve(a, &v->r, len) || reserve(a, &v->chr, len))))
    return ATOM_ENOMEM;

  if (v->lastw != t) {
    if (knows(a, &v->w, t)) { /* line 25 */
      expl e = ex_snap(a, &a->wlast[x], VAR_ENDS(v, wend), t);
      note(a, report_edge(a, ev, t, &e, &a->wlast[x]));
    }
    if (join_w) {
      srcd sd = {SD_SNAP, 0, &a->wlast[x], NULL, v, ev};
      thread_join(a, t, &v->w, &sd);
      v->w_seen |= SEEN_BIT(t);
    }
    v->rd_other = 1;
  }
  if (!(v->r_from == t && v->r_ver == th->ver)) {
    register_read(a, t, x, ev);
    atom__vc_join(a->mem, &v->r, &th->c, NULL);          /* cannot fail: reserved */
    atom__vc_join_except(a->mem, &v->chr, &th->c, t);   /* cannot fail: reserved */
    v->r_from = t;
    v->r_ver = th->ver;
  }
  return 0;
}

static int opt_write(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  int join_w = v->lastw != t && !(v->w_seen & SEEN_BIT(t));
  /* lines 30-31: R_x ⊑ C_t if t wrote last and nobody else read since (see avar) */
  int join_r = !(v->lastw == t && !v->rd_other);
  uint32_t len = th->c.len;
  if (join_w) len = max_u32(len, v->w.len);
  if (join_r) len = max_u32(len, v->r.len);
  if (((join_w || join_r) && (reserve(a, &th->c, len) || known_reserve(a, th))) ||
      reserve(a, &v->w, len))
    return ATOM_ENOMEM;

  if (v->lastw != t) {
    if (knows(a, &v->w, t)) { /* line 29 */
      expl e = ex_snap(a, &a->wlast[x], VAR_ENDS(v, wend), t);
      note(a, report_edge(a, ev, t, &e, &a->wlast[x]));
    }
    if (join_w) {
      srcd sd = {SD_SNAP, 0, &a->wlast[x], NULL, v, ev};
      thread_join(a, t, &v->w, &sd);
    }
  }
  /* lines 30-31 (§4.3): some R_{u,x}, u != t, knows t's transaction iff chR_x(t) >= b_t */
  if (knows(a, &v->chr, t)) {
    expl e = ex_chr(a, v, t);
    note(a, report_edge(a, ev, t, &e, NULL));
  }
  if (join_r) {
    srcd sd = {SD_RREC, 0, NULL, NULL, v, ev};
    thread_join(a, t, &v->r, &sd);
  }
  /* lines 32-33: W_x := C_t, unless W_x is C_t already */
  if (!(v->w_from == t && v->w_ver == th->ver)) {
    register_from(a, th, (reg){REG_W, x}, &v->w);
    atom__vc_copy(a->mem, &v->w, &th->c); /* cannot fail: reserved */
    v->w_from = t;
    v->w_ver = th->ver;
  }
  v->w_seen = SEEN_BIT(t);
  v->lastw = t;
  v->rd_other = 0;
  a->wlast[x] = cur_aev(a, ev);
  return 0;
}

static int opt_acquire(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  if (k->lastrel == t || k->lastrel == NIL) return 0; /* line 14 (L_l = ⊥ if never released) */
  int join = !(k->seen & SEEN_BIT(t));
  if (join && (reserve(a, &th->c, max_u32(th->c.len, k->l.len)) || known_reserve(a, th)))
    return ATOM_ENOMEM;
  if (knows(a, &k->l, t)) { /* line 15 */
    expl e = ex_snap(a, &a->rellast[l], &k->lend, t);
    note(a, report_edge(a, ev, t, &e, &a->rellast[l]));
  }
  if (join) {
    srcd sd = {SD_SNAP, 0, &a->rellast[l], &k->lend, NULL, ev};
    thread_join(a, t, &k->l, &sd);
    k->seen |= SEEN_BIT(t);
  }
  return 0;
}

static int opt_release(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  if (reserve(a, &k->l, th->c.len)) return ATOM_ENOMEM;
  /* lines 17-18 */
  if (!(k->l_from == t && k->l_ver == th->ver)) {
    register_from(a, th, (reg){REG_L, l}, &k->l);
    atom__vc_copy(a->mem, &k->l, &th->c);
    k->l_from = t;
    k->l_ver = th->ver;
  }
  k->seen = SEEN_BIT(t);
  k->lastrel = t;
  a->rellast[l] = cur_aev(a, ev);
  return 0;
}

/* A variable's record (a cell of its vslot) := an END node: e's transaction (thread of) →* T
 * (left) →* the clock (right). */
static void end_record(aero *a, pnode **cell, uint32_t of, pnode *left, const expl *right,
                       uint64_t made) {
  *cell = pn_end_at(a, of, left, right, made);
}

/* The provenance part of opt_end_update: X (and chR_x) learn the other open transactions C_t
 * knows, through T. Kept apart so that the common END update (nothing new to learn) stays a
 * test and a join. */
static AERO_RARE void opt_end_learn(aero *a, uint32_t t, reg r, atom__vc *x, size_t nk,
                                    uint64_t made) {
  athread *th = &a->thr[t];
  avar *v = r.kind == REG_L ? NULL : &a->var[r.id];
  expl right, rightc; /* how X (and chR_x) know t's transaction: set when first needed */
  int have = 0;
  for (size_t i = 0; i < nk; i++) {
    kent e = a->scratch[i];
    atom__vc_t b = a->thr[e.t].b;
    int learns = atom__vc_get(x, e.t) < b;
    int c_learns = r.kind == REG_R && atom__vc_get(&v->chr, e.t) < b;
    if (learns) learn(a, e.t, r);
    if (!learns && !c_learns) continue;
    /* provenance: e's transaction →* T (C_t), T →* X */
    if (!have) {
      have = 1;
      if (r.kind == REG_W) {
        right = ex_snap(a, &a->wlast[r.id], VAR_ENDS(v, wend), t);
        rightc = right;
      } else if (r.kind == REG_L) {
        right = ex_snap(a, &a->rellast[r.id], &a->lock[r.id].lend, t);
        rightc = right;
      } else {
        right = ex_rp(a, v, t);
        rightc = atom__vc_get(&v->chr, t) >= th->b ? ex_chr(a, v, t) : right;
      }
    }
    pnode *left = ends_get(a, &th->prov, e.t);
    if (r.kind != REG_L && vslot_room(a, v, e.t)) continue; /* out of memory: record lost */
    if (r.kind == REG_W) {
      end_record(a, &v->slot[e.t].wend, e.t, left, &right, made);
    } else if (r.kind == REG_L) {
      ends *le = &a->lock[r.id].lend;
      ends_put(a, le, e.t, pn_end_at(a, e.t, left, &right, made));
    } else {
      if (learns) end_record(a, &v->slot[e.t].rp, e.t, left, &right, made);
      if (c_learns) {
        /* R_x and chR_x usually know T by the same read: then chR_x's record is R_x's */
        if (learns && same_expl(&right, &rightc))
          rown_alias(a, v, e.t);
        else
          end_record(a, &v->slot[e.t].cp, e.t, left, &rightc, made);
      }
    }
  }
}

static AERO_HOT void opt_end_update(aero *a, uint32_t t, atom__vc_t b, const atom__vc *ct, reg r,
                                   size_t nk, uint64_t made);

/* The full scan of lines 41-46, for a transaction whose learned list could not grow. */
static AERO_RARE void opt_end_scan(aero *a, uint32_t t, size_t nk, uint64_t made) {
  athread *th = &a->thr[t];
  for (uint32_t x = 0; x < a->n_var; x++) {
    opt_end_update(a, t, th->b, &th->c, (reg){REG_W, x}, nk, made);
    opt_end_update(a, t, th->b, &th->c, (reg){REG_R, x}, nk, made);
  }
  for (uint32_t l = 0; l < a->n_lock; l++)
    opt_end_update(a, t, th->b, &th->c, (reg){REG_L, l}, nk, made);
}

/* Lines 41-46 for one registered clock: X := C_t^▷ ⊑ X ? C_t ⊔ X : X, registering X with the
 * other open transactions C_t knows (in a->scratch[0..nk)). */
static AERO_HOT void opt_end_update(aero *a, uint32_t t, atom__vc_t b, const atom__vc *ct, reg r,
                                  size_t nk, uint64_t made) {
  atom__vc *x = reg_clock(a, r);
  if (atom__vc_get(x, t) < b) return; /* see "Optimized END" */
  if (nk) opt_end_learn(a, t, r, x, nk, made);
  atom__vc_join(a->mem, x, ct, NULL); /* cannot fail: reserved */
  if (r.kind == REG_W) {
    avar *v = &a->var[r.id];
    v->w_from = NIL; /* W_x changed: the shortcuts no longer hold */
    v->w_seen = 0;
  } else if (r.kind == REG_R) {
    atom__vc_join(a->mem, &a->var[r.id].chr, ct, NULL);
  } else {
    alock *k = &a->lock[r.id];
    k->l_from = NIL;
    k->seen = 0;
  }
}

static int opt_end_reserve(aero *a, reg r, uint32_t t, uint32_t len) {
  atom__vc *x = reg_clock(a, r);
  if (atom__vc_get(x, t) < a->thr[t].b) return 0;
  if (reserve(a, x, len)) return ATOM_ENOMEM;
  if (r.kind == REG_R && reserve(a, &a->var[r.id].chr, len)) return ATOM_ENOMEM;
  return 0;
}

static int opt_end(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  uint32_t len = th->c.len;
  if (!th->active) return 0;

  /* Reserve everything first so that the update below cannot fail half-way. */
  for (uint32_t u = 0; u < a->n_thr; u++)
    if (u != t && atom__vc_get(&a->thr[u].c, t) >= th->b &&
        (reserve(a, &a->thr[u].c, len) || known_reserve(a, &a->thr[u])))
      return ATOM_ENOMEM;
  if (len <= ATOM__VC_INLINE) {
    /* every clock has room for ATOM__VC_INLINE components: nothing to reserve */
  } else if (th->overflow) {
    for (uint32_t x = 0; x < a->n_var; x++)
      if (opt_end_reserve(a, (reg){REG_W, x}, t, len) || opt_end_reserve(a, (reg){REG_R, x}, t, len))
        return ATOM_ENOMEM;
    for (uint32_t l = 0; l < a->n_lock; l++)
      if (opt_end_reserve(a, (reg){REG_L, l}, t, len)) return ATOM_ENOMEM;
  } else {
    for (size_t i = 0; i < th->n_learned; i++)
      if (opt_end_reserve(a, th->learned[i], t, len)) return ATOM_ENOMEM;
  }
  if (th->n_known + 1 > a->scratch_cap &&
      ATOM__GROW(a->mem, a->scratch, a->scratch_cap, th->n_known + 1))
    return ATOM_ENOMEM;

  /* lines 38-40: threads whose clock knows t's transaction (scanned: O(T) like the join) */
  for (uint32_t u = 0; u < a->n_thr; u++) {
    if (u == t || atom__vc_get(&a->thr[u].c, t) < th->b) continue;
    if (knows(a, &th->c, u)) note(a, report_end(a, ev, t, u));
    srcd sd = {SD_END, t, NULL, NULL, NULL, ev};
    thread_join(a, u, &th->c, &sd);
  }
  /* The other open transactions C_t knows: clocks updated below learn them too. */
  size_t nk = 0;
  for (size_t i = 0; i < th->n_known; i++) {
    kent e = th->known[i];
    if (e.t != t && kent_valid(a, e)) a->scratch[nk++] = e;
  }
  /* lines 41-46, restricted to the clocks that learned t's transaction */
  if (th->overflow) {
    opt_end_scan(a, t, nk, ev->index);
  } else {
    for (size_t i = 0; i < th->n_learned; i++)
      opt_end_update(a, t, th->b, &th->c, th->learned[i], nk, ev->index);
  }
  th->n_learned = 0;
  th->overflow = 0;
  th->active = 0;
  a->open_b[t] = NO_TXN;
  a->n_active--;
  return 0;
}

/* ------------------------------------------------------------------ basic variant */

/* 003 Alg. 1 line 9-12 */
static inline int basic_knows(const aero *a, const atom__vc *clk, uint32_t t) {
  return a->thr[t].active && atom__vc_leq(&a->thr[t].cb, clk);
}

static int basic_read(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  avar_basic *vb = &a->vbasic[x];
  if (t >= vb->n_rt) {
    if (ATOM__GROW(a->mem, vb->rtev, vb->rtev_cap, a->n_thr) ||
        ATOM__GROW(a->mem, vb->rtend, vb->rtend_cap, a->n_thr) ||
        ATOM__GROW(a->mem, vb->rt, vb->rt_cap, a->n_thr))
      return ATOM_ENOMEM;
    for (uint32_t u = vb->n_rt; u < a->n_thr; u++) atom__vc_init(&vb->rt[u]);
    a->clocks += a->n_thr - vb->n_rt;
    vb->n_rt = a->n_thr;
  }
  uint32_t len = max_u32(th->c.len, v->w.len);
  if (reserve(a, &th->c, len) || reserve(a, &vb->rt[t], len)) return ATOM_ENOMEM;
  aev me = cur_aev(a, ev);
  if (v->lastw != t) { /* lines 24-25 */
    if (basic_knows(a, &v->w, t)) {
      expl e = ex_snap(a, &a->wlast[x], VAR_ENDS(v, wend), t);
      note(a, report_edge(a, ev, t, &e, &a->wlast[x]));
    }
    srcd sd = {SD_SNAP, 0, &a->wlast[x], NULL, v, ev};
    thread_join(a, t, &v->w, &sd);
  }
  atom__vc_copy(a->mem, &vb->rt[t], &th->c); /* line 26 */
  vb->rtev[t] = me;
  return 0;
}

static int basic_write(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  const avar_basic *vb = &a->vbasic[x];
  uint32_t len = max_u32(th->c.len, v->w.len);
  for (uint32_t u = 0; u < vb->n_rt; u++) len = max_u32(len, vb->rt[u].len);
  if (reserve(a, &th->c, len) || reserve(a, &v->w, len)) return ATOM_ENOMEM;
  aev me = cur_aev(a, ev);
  if (v->lastw != t) { /* lines 28-29 */
    if (basic_knows(a, &v->w, t)) {
      expl e = ex_snap(a, &a->wlast[x], VAR_ENDS(v, wend), t);
      note(a, report_edge(a, ev, t, &e, &a->wlast[x]));
    }
    srcd sd = {SD_SNAP, 0, &a->wlast[x], NULL, v, ev};
    thread_join(a, t, &v->w, &sd);
  }
  for (uint32_t u = 0; u < vb->n_rt; u++) { /* lines 30-31 */
    if (u == t || vb->rt[u].len == 0) continue; /* R_{u,x} = ⊥: u never read x */
    if (basic_knows(a, &vb->rt[u], t)) {
      expl e = ex_snap(a, &vb->rtev[u], &vb->rtend[u], t);
      note(a, report_edge(a, ev, t, &e, &vb->rtev[u]));
    }
    srcd sd = {SD_SNAP, 0, &vb->rtev[u], &vb->rtend[u], NULL, ev};
    thread_join(a, t, &vb->rt[u], &sd);
  }
  atom__vc_copy(a->mem, &v->w, &th->c); /* lines 32-33 */
  v->lastw = t;
  a->wlast[x] = me;
  return 0;
}

static int basic_acquire(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  if (k->lastrel == t) return 0; /* line 14 */
  if (reserve(a, &th->c, max_u32(th->c.len, k->l.len))) return ATOM_ENOMEM;
  if (basic_knows(a, &k->l, t)) { /* line 15 */
    expl e = ex_snap(a, &a->rellast[l], &k->lend, t);
    note(a, report_edge(a, ev, t, &e, &a->rellast[l]));
  }
  srcd sd = {SD_SNAP, 0, &a->rellast[l], &k->lend, NULL, ev};
  thread_join(a, t, &k->l, &sd);
  return 0;
}

static int basic_release(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  alock *k = &a->lock[l];
  if (atom__vc_copy(a->mem, &k->l, &a->thr[t].c)) return ATOM_ENOMEM; /* line 17 */
  k->lastrel = t;                                                       /* line 18 */
  a->rellast[l] = cur_aev(a, ev);
  return 0;
}

/* The provenance part of basic_end_one: X learns the other open transactions C_t knows. */
static AERO_RARE void basic_end_learn(aero *a, uint32_t t, const atom__vc *x, const aev *store,
                                      ends *e, avar *owner, uint64_t made) {
  athread *th = &a->thr[t];
  ends view; /* W_x's records (a compound literal would end with the if below) */
  if (!e) {
    view = *VAR_ENDS(owner, wend);
    e = &view;
  }
  const atom__vc_t *s = atom__vc_cdata(&th->c);
  expl right = UNKNOWN;
  int have = 0;
  for (uint32_t i = 0; i < th->c.len; i++) {
    atom__vc_t b = a->open_b[i];
    if (i == t || s[i] < b || atom__vc_get(x, i) >= b) continue;
    if (!have) {
      right = ex_snap(a, store, e, t);
      have = 1;
    }
    ends_put(a, e, i, pn_end_at(a, i, ends_get(a, &th->prov, i), &right, made));
  }
}

/* X := C_t^▷ ⊑ X ? C_t ⊔ X : X (lines 42, 44, 46); reserve_only = 1 only reserves room (and,
 * for W_x of variable owner, whose records are passed as e = NULL, room for its records: without it they are lost, and a report on
 * them names fewer edges, as anywhere provenance runs short). X is a stored clock (taken at
 * event store, END provenance in e): record how it learns the other open transactions C_t
 * knows. */
static inline int basic_end_one(aero *a, uint32_t t, atom__vc *x, const aev *store, ends *e,
                                avar *owner, int reserve_only, uint64_t made) {
  athread *th = &a->thr[t];
  if (!atom__vc_leq(&th->cb, x)) return 0;
  if (reserve_only) {
    if (owner) (void)vslot_room(a, owner, a->n_thr - 1);
    return reserve(a, x, th->c.len);
  }
  basic_end_learn(a, t, x, store, e, owner, made);
  atom__vc_join(a->mem, x, &th->c, NULL);
  return 0;
}

static int basic_end(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  if (!th->active) return 0;
  for (int pass = 0; pass < 2; pass++) {
    int ro = pass == 0; /* first pass: reserve, so the second cannot fail */
    for (uint32_t u = 0; u < a->n_thr; u++) { /* lines 38-40 */
      if (u == t || !atom__vc_leq(&th->cb, &a->thr[u].c)) continue;
      if (ro) {
        if (reserve(a, &a->thr[u].c, th->c.len)) return ATOM_ENOMEM;
        continue;
      }
      if (basic_knows(a, &th->c, u)) note(a, report_end(a, ev, t, u));
      srcd sd = {SD_END, t, NULL, NULL, NULL, ev};
      thread_join(a, u, &th->c, &sd);
    }
    uint64_t at = ev->index;
    for (uint32_t l = 0; l < a->n_lock; l++) /* lines 41-42 */
      if (basic_end_one(a, t, &a->lock[l].l, &a->rellast[l], &a->lock[l].lend, NULL, ro, at))
        return ATOM_ENOMEM;
    for (uint32_t x = 0; x < a->n_var; x++) { /* lines 43-46 */
      avar *v = &a->var[x];
      avar_basic *vb = &a->vbasic[x];
      if (basic_end_one(a, t, &v->w, &a->wlast[x], NULL, v, ro, at))
        return ATOM_ENOMEM;
      for (uint32_t u = 0; u < vb->n_rt; u++)
        if (basic_end_one(a, t, &vb->rt[u], &vb->rtev[u], &vb->rtend[u], NULL, ro, at))
          return ATOM_ENOMEM;
    }
  }
  th->active = 0;
  a->open_b[t] = NO_TXN;
  a->n_active--;
  return 0;
}

/* ------------------------------------------------------------------ shared handlers */

static int on_begin(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  if (th->active) return 0; /* the session forwards only outermost BEGINs */
  atom__vc_t cur = atom__vc_get(&th->c, t);
  if (cur >= ATOM__VC_MAX - 1 || th->seq == UINT32_MAX)
    return atom_env_error(a->env, ATOM_ELIMIT, "thread %" PRIu32 " began more than %" PRIu32
                          " transactions", t, (uint32_t)(ATOM__VC_MAX - 2));
  if (reserve(a, &th->c, t + 1) || known_reserve(a, th) ||
      (a->basic && reserve(a, &th->cb, th->c.len)))
    return ATOM_ENOMEM;
  atom__vc_set(a->mem, &th->c, t, cur + 1); /* line 35 (cannot fail: reserved) */
  th->ver++;
  th->b = cur + 1;
  th->seq++;
  th->active = 1;
  th->begin_index = ev->index;
  th->begin_loc = ev->loc;
  th->n_rlog = 0;
  a->open_b[t] = th->b;
  a->n_active++;
  if (a->basic)
    atom__vc_copy(a->mem, &th->cb, &th->c); /* line 36 */
  else
    th->known[th->n_known++] = (kent){t, th->seq};
  return 0;
}

static int on_fork(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, u = ev->target;
  athread *ch = &a->thr[u];
  if (reserve(a, &ch->c, a->thr[t].c.len) || known_reserve(a, ch)) return ATOM_ENOMEM;
  aev me = cur_aev(a, ev);
  srcd sd = {SD_FORK, t, &me, NULL, NULL, ev};
  thread_join(a, u, &a->thr[t].c, &sd); /* line 20 */
  return 0;
}

static int on_join(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, u = ev->target;
  athread *th = &a->thr[t];
  const athread *ch = &a->thr[u];
  /* A thread that performed no event conflicts with nothing: see the header comment. */
  if (!ch->started) return 0;
  if (reserve(a, &th->c, max_u32(th->c.len, ch->c.len)) || known_reserve(a, th))
    return ATOM_ENOMEM;
  aev last = last_aev(a, u);
  if (a->basic ? basic_knows(a, &ch->c, t) : knows(a, &ch->c, t)) { /* line 22 */
    expl e = ex_thread(a, u, t, &last);
    note(a, report_edge(a, ev, t, &e, &last));
  }
  srcd sd = {SD_THREAD, u, &last, NULL, NULL, ev};
  thread_join(a, t, &a->thr[u].c, &sd);
  return 0;
}

static int aero_on_event(void *self, const atom_ev *ev) {
  aero *a = self;
  uint32_t t = ev->thread;
  int err;
  a->rep_err = 0;
  if (a->node_bytes >= a->collect_at) pn_collect(a);
  if ((err = ensure_threads(a, t)) != 0) return err;
  switch (ev->kind) {
    case ATOM_READ:
      if ((err = ensure_vars(a, ev->target)) != 0) return err;
      err = a->basic ? basic_read(a, ev) : opt_read(a, ev);
      break;
    case ATOM_WRITE:
      if ((err = ensure_vars(a, ev->target)) != 0) return err;
      err = a->basic ? basic_write(a, ev) : opt_write(a, ev);
      break;
    case ATOM_ACQUIRE:
      if ((err = ensure_locks(a, ev->target)) != 0) return err;
      err = a->basic ? basic_acquire(a, ev) : opt_acquire(a, ev);
      break;
    case ATOM_RELEASE:
      if ((err = ensure_locks(a, ev->target)) != 0) return err;
      err = a->basic ? basic_release(a, ev) : opt_release(a, ev);
      break;
    case ATOM_FORK:
      if ((err = ensure_threads(a, ev->target)) != 0) return err;
      err = on_fork(a, ev);
      break;
    case ATOM_JOIN:
      if ((err = ensure_threads(a, ev->target)) != 0) return err;
      err = on_join(a, ev);
      break;
    case ATOM_BEGIN:
      err = on_begin(a, ev);
      break;
    case ATOM_END:
      err = a->basic ? basic_end(a, ev) : opt_end(a, ev);
      break;
    case ATOM_FENCE:
      /* No clock work (it touches no shared state), but it is an event of its thread: a
       * thread whose only events are fences still conflicts with its fork and join. */
      err = 0;
      break;
    default:
      return 0;
  }
  /* Handlers fail (out of memory) only before changing anything: the event is then
   * ignored. A report that failed did not stop the update. */
  if (err) return err;
  athread *th = &a->thr[t];
  th->started = 1;
  th->last = *ev;
  th->last_in_txn = th->active || ev->kind == ATOM_END;
  err = a->rep_err;
  a->rep_err = 0;
  return err;
}

/* ------------------------------------------------------------------ lifecycle */

static void aero_destroy(void *self) {
  aero *a = self;
  if (!a) return;
  atom__mem *m = a->mem;
  for (uint32_t u = 0; u < a->n_thr; u++) {
    athread *th = &a->thr[u];
    atom__vc_free(m, &th->c);
    atom__vc_free(m, &th->cb);
    atom__mem_free(m, th->known, th->cap_known * sizeof *th->known);
    atom__mem_free(m, th->learned, th->cap_learned * sizeof *th->learned);
    atom__mem_free(m, th->rlog, th->cap_rlog * sizeof *th->rlog);
    ends_free(a, &th->prov);
  }
  for (uint32_t x = 0; x < a->n_var; x++) {
    avar *v = &a->var[x];
    atom__vc_free(m, &v->w);
    atom__vc_free(m, &v->r);
    atom__vc_free(m, &v->chr);
    if (a->vbasic) {
      avar_basic *vb = &a->vbasic[x];
      for (uint32_t u = 0; u < vb->n_rt; u++) {
        atom__vc_free(m, &vb->rt[u]);
        ends_free(a, &vb->rtend[u]);
      }
      atom__mem_free(m, vb->rt, vb->rt_cap * sizeof *vb->rt);
      atom__mem_free(m, vb->rtev, vb->rtev_cap * sizeof *vb->rtev);
      atom__mem_free(m, vb->rtend, vb->rtend_cap * sizeof *vb->rtend);
    }
    atom__mem_free(m, v->slot, v->nslot * sizeof *v->slot);
  }
  for (uint32_t l = 0; l < a->n_lock; l++) {
    atom__vc_free(m, &a->lock[l].l);
    ends_free(a, &a->lock[l].lend);
  }
  atom__mem_free(m, a->thr, a->thr_cap * sizeof *a->thr);
  atom__mem_free(m, a->open_b, a->open_cap * sizeof *a->open_b);
  atom__mem_free(m, a->var, a->var_cap * sizeof *a->var);
  atom__mem_free(m, a->vbasic, a->vbasic_cap * sizeof *a->vbasic);
  atom__mem_free(m, a->wlast, a->wlast_cap * sizeof *a->wlast);
  atom__mem_free(m, a->lock, a->lock_cap * sizeof *a->lock);
  atom__mem_free(m, a->rellast, a->rellast_cap * sizeof *a->rellast);
  atom__mem_free(m, a->scratch, a->scratch_cap * sizeof *a->scratch);
  atom__mem_free(m, a->cy, sizeof *a->cy);
  pn_free_chunks(a, a->chunks);
  atom__mem_free(m, a, sizeof *a);
}

static int aero_create(void **self, atom_env *env) {
  const char *variant = atom_env_arg(env, "variant");
  int basic;
  if (!variant || strcmp(variant, "optimized") == 0 || strcmp(variant, "opt") == 0)
    basic = 0;
  else if (strcmp(variant, "basic") == 0)
    basic = 1;
  else
    return atom_env_error(env, ATOM_EINVAL, "variant must be basic or optimized (opt), not \"%s\"",
                          variant);
  uint32_t max_threads = 16384;
  const char *mt = atom_env_arg(env, "max_threads");
  if (mt) {
    char *end;
    unsigned long long v = strtoull(mt, &end, 10);
    if (!*mt || *end || v < 1 || v > (1u << 24))
      return atom_env_error(env, ATOM_EINVAL, "max_threads must be 1..16777216, not \"%s\"", mt);
    max_threads = (uint32_t)v;
  }
  aero *a = ATOM__NEW_STATE(env, aero, own_mem);
  if (!a) return atom_env_error(env, ATOM_ENOMEM, "out of memory");
  atom__mem *m = &a->own_mem;
  a->env = env;
  a->mem = m;
  a->basic = basic;
  a->max_threads = max_threads;
  a->collect_at = PN_COLLECT_MIN;
  *self = a;
  return 0;
}

static int aero_stats(void *self, atom_checker_counters *out) {
  const aero *a = self;
  out->nodes = a->n_thr;
  out->edges = a->n_nodes; /* provenance nodes */
  out->clocks = a->clocks;
  return 0;
}

static const char *const aero_arg_keys[] = {"variant", "max_threads", NULL};

const atom_checker atom__checker_aerodrome = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) |
                  ATOM_KIND_BIT(ATOM_ACQUIRE) | ATOM_KIND_BIT(ATOM_RELEASE) |
                  ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) |
                  ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_FENCE),
    .name = "aerodrome",
    .summary = "conflict serializability by vector clocks (003 AeroDrome), online",
    .arg_keys = aero_arg_keys,
    .create = aero_create,
    .on_event = aero_on_event,
    .finish = NULL,
    .destroy = aero_destroy,
    .stats = aero_stats,
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_SOUND | ATOM_CHECKER_PROP_COMPLETE,
};
