/* The aerodrome checker's private header: what its files share (lib/checkers/aerodrome/).
 *
 * The checker decides conflict serializability online by vector clocks (003 AeroDrome); the
 * header comment of aerodrome.c describes the algorithm and its provenance. Its concepts, one
 * file each:
 *   aerodrome.c   the algorithm's description, growth of the per-id tables, clock slots
 *                 (take_slot, release_slot), the handlers both
 *                 variants share (BEGIN, FORK, JOIN), the event dispatch, the vtable
 *   optimized.c   variant=optimized (003 §4.3): known/learned lists, the optimized END
 *   basic.c       variant=basic (003 Alg. 1 as printed)
 *   provenance.c  provenance nodes and their memory, records per clock, explanations (ex_*)
 *   reports.c     a violation's cycle, from provenance to the structured report
 * Functions shared between files are named atom__aero_* (hidden like the rest of lib/); the
 * helpers on the event paths are static inline here, so the split costs no calls. */
#ifndef ATOM_CHECKERS_AERODROME_INTERNAL_H
#define ATOM_CHECKERS_AERODROME_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "support/assert.h"
#include "support/mem.h"
#include "support/report_build.h"
#include "support/vclock.h"

#if defined(__GNUC__) || defined(__clang__)
#define AERO_RARE __attribute__((noinline, cold)) /* provenance work, off the hot paths */
#define AERO_HOT inline __attribute__((always_inline))
#else
#define AERO_RARE
#define AERO_HOT inline
#endif

/* The lowest set bit of m != 0. */
#if defined(__GNUC__) || defined(__clang__)
#define AERO_CTZ64(m) ((uint32_t)__builtin_ctzll(m))
#else
static inline uint32_t AERO_CTZ64(uint64_t m) {
  uint32_t j = 0;
  while (!(m & 1u)) m >>= 1, j++;
  return j;
}
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

/* Provenance (see "Provenance" in the header comment): an immutable node that explains how a
 * clock came to know the open transaction C (thread `of`, number `about`): a path of conflict
 * edges from C to a point. Nodes are shared by the records that point to them; the memory of
 * those no record reaches is reclaimed by atom__aero_pn_collect. */
enum { PN_EDGE = 1, PN_FORK = 2, PN_END = 3, PN_HOLD = 4 };
/* PN_HOLD: a read record of R_x or chR_x (never in a chain): path a, then the read e2.
 * PN_FWD: a node already copied by atom__aero_pn_collect, to a. */
enum { PN_FWD = 5 };
#define PN_ORIGIN 0x1u /* EDGE/FORK: e1 is an event of C itself; END: e2 is an event of V */
#define PN_AT 0x2u     /* END: the path goes on to the store event e2 */
typedef struct pnode {
  uint8_t kind, flags;
  uint16_t depth;
  uint32_t of, about;
  struct pnode *a;     /* EDGE/FORK: the source's path (NULL if origin); END: C →* V; HOLD:
                          the reader's path */
  aev e2;              /* EDGE: the edge e1 -> e2; END: the store event (PN_AT); HOLD: the
                          read. HOLD nodes, the most numerous, end here (pn_size) */
  struct pnode *b;     /* END: V →* the clock */
  uint64_t made;       /* END, EDGE, FORK: index of the event that made it */
  aev e1;              /* EDGE, FORK (the fork) only: END nodes end before it */
} pnode;

/* Per-component provenance of a clock: entry c is a node about a transaction of the thread
 * that owns (or owned) clock slot c; ends_get tells which. */
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

/* "C_t ⊒ C_thr at version ver" (athread.abs, see absorbed()). */
/* The slots whose owners' versions a thread caches (16 bytes each): the cache is per thread
 * and per slot, so with every slot cached 10^4 threads alive at once would hold 1.6 GB of it.
 * A join from a thread of a higher slot is simply not skipped. */
#define ABS_MAX_SLOTS 256u
typedef struct seenv {
  uint32_t thr;
  uint64_t ver;
} seenv;

typedef struct athread { /* hot fields first; 256 bytes on 64-bit targets (a power of two:
                            a->thr[t] is a shift), so the 4-byte fields fill the holes */
  atom__vc c;           /* C_t */
  uint32_t slot;        /* the clock component it owns (see "Slots"): NIL before its first
                           event or fork, SLOT_NONE while it owns none (optimized variant),
                           SLOT_GONE once joined */
  atom__vc_t b;         /* C_t^▷(t): its open transaction's BEGIN value on its slot; NO_TXN
                           while that transaction is not published (see publish()), and in
                           the optimized variant while there is none (knows()) */
  uint16_t active;      /* inside a transaction */
  uint16_t pub;         /* its open transaction is published: it owns a slot, open_b[slot] = b
                           (optimized variant; basic: from the BEGIN) */
  uint32_t seq;         /* its transaction number: grows at each BEGIN, and at publication
                           past every number its slot served before (see publish()) */
  uint32_t overflow;    /* its learned list could not grow: END scans everything */
  uint32_t nslot_b;     /* a->n_slot at the publication of its open transaction: every clock
                           in its learned list has room for that many components (opt_end) */
  uint32_t rank;        /* the slot it would own if every thread alive owned one (taken at its
                           fork or first event, given back when joined: see "Slots"): END
                           reports in this order, as when slots followed the live threads */
  uint32_t n_lthr;      /* (lthr's length) */
  uint64_t ver;         /* bumped whenever c changes */
  uint32_t *lthr;       /* the threads whose clock learned its open transaction (appended by
                           thread_join's crossing test, emptied at END; optimized variant): END
                           joins into those only, whether they own a slot or not */
  size_t cap_lthr;
  kent *known;          /* open transactions c knows (validated lazily), n_known of them */
  size_t cap_known;
  reg *learned;         /* clocks that learned its open transaction, n_learned of them */
  size_t cap_learned;
  uint32_t n_known, n_learned;
  uint64_t begin_index; /* of the open (or last) transaction */
  uint64_t begin_loc;
  atom_ev last;         /* its last event; kind 0 (none) until it performed one. Whether that
                           event belonged to a transaction is not kept: while the thread is
                           outside one, it did iff it was an END (thread_txn) */
  uint32_t rep_seq;     /* seq + 1 of its transaction last reported, 0 = none */
  uint32_t abs_cap;     /* (abs's capacity) */
  uint64_t rep_other;   /* the other transaction of that report */
  ends prov;            /* how C_t learned each open transaction it knows */
  rlog_ent *rlog;       /* reads of its open transaction that taught R_x (at most RLOG_MAX) */
  uint32_t n_rlog, cap_rlog;
  atom__vc cb;          /* C_t^▷ (basic variant) */
  seenv *abs;           /* per slot s: C_t ⊒ the clock of abs[s].thr at version abs[s].ver
                           (optimized variant; a cache, see absorbed()); abs_cap allocated */
  uint64_t seen_bit;    /* SEEN_BIT(its id), kept: the access handlers test and set it in the
                           w_seen and seen masks (a load instead of a shift and a compare) */
  uint32_t pad_[4];     /* (to 256 bytes: records stay aligned to cache lines) */
} athread;

/* What every access touches comes first, `slot` (touched by provenance only) last: a large
 * array usually starts 16 bytes past a cache line (glibc's header of an mmap-ed block), so
 * a 104-byte record spans two or three lines, and an access touches the fields in the order
 * below (the clocks are 16 bytes each: length, capacity, storage). */
typedef struct avar {
  uint32_t lastw;   /* lastWThr_x */
  /* shortcuts (optimized): W_x == C_{w_from} at version w_ver; R_x ⊒ C_{r_from} at r_ver */
  uint32_t w_from, r_from;
  uint32_t rd_other; /* a thread other than lastw read since lastw joined R_x */
  uint32_t hot;      /* accessed since the last atom__aero_var_sweep (which keeps its clocks:
                        they will likely be stored to again) */
  uint32_t nslot;    /* slot's allocated cells */
  uint64_t w_ver, r_ver;
  uint64_t w_seen;  /* threads < 64 whose clock ⊒ the current W_x */
  atom__vc r, chr;  /* R_x, chR_x (optimized) */
  atom__vc w;       /* W_x */
  vslot *slot;      /* provenance records per component (vslot), nslot allocated, grown on
                       first use; W_x's (wend) in both variants, R_x's and chR_x's (rp, cp: the
                       read by another thread that taught it (PN_HOLD) or an END that did
                       (PN_END); ro: its own read) in the optimized one */
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

/* A clock component ("Slots" in aerodrome.c). Owned by one thread at a time; a joined thread's
 * slot goes to the free list and a thread created later continues its counters. */
typedef struct aslot {
  uint32_t owner;     /* the thread that has it, NIL if free */
  uint32_t seq;       /* the number of the last transaction published on it (optimized) */
  atom__vc_t top;     /* the largest value the component ever had: the last BEGIN value
                         given on it (optimized; basic: its owner's own value when joined) */
  uint32_t next_free; /* free list, NIL-terminated */
  uint32_t queued;    /* in the queue of slots that may be stolen (aero.stq) */
} aslot;
#define SLOT_GONE (UINT32_MAX - 1)
#define SLOT_NONE (UINT32_MAX - 2)

/* Memory for provenance nodes, handed out in order (see atom__aero_pn_collect). */
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
} cyc;

#define VFREE_COMP 128u
#define AERO_SLOTS_DEFAULT 32u /* argument slots (see "Slots" in aerodrome.c) */ /* the widest block (in components) a free list takes */

typedef struct aero {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int basic;
  uint32_t max_threads; /* vector clocks make memory grow with its square: see max_threads */
  uint32_t n_thr, n_var, n_lock, n_active;
  athread *thr;
  size_t thr_cap;
  atom__vc_t *open_b; /* per slot: b_t of the open transaction of its owner t, NO_TXN if none */
  size_t open_cap;
  aslot *slots;       /* n_slot in use, slots_cap allocated */
  size_t slots_cap;
  uint32_t n_slot;    /* clock width (optimized variant: see "Slots") */
  uint32_t *rank_next; /* ranks (athread.rank) in use or listed: the free list's links */
  size_t rank_cap;
  uint32_t n_rank, free_rank; /* ranks made; head of the free list of ranks, NIL if empty */
  uint32_t *rsort;    /* END scratch: the knowers to report, sorted by rank */
  size_t rsort_cap;
  uint32_t max_slots; /* argument slots: the width past which a publication steals a slot */
  uint32_t free_slot; /* head of the free list, NIL if empty */
  uint32_t *stq;      /* ring of slots whose owner may have no published open transaction
                         (validated when taken: see atom__aero_publish_slow), each at most once
                         (aslot.queued), oldest first; stq_cap >= slots_cap */
  size_t stq_cap;
  uint32_t stq_head, stq_n;
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
  pchunk *chunks;    /* provenance nodes (see atom__aero_pn_collect), newest chunk first */
  uint64_t n_nodes;  /* provenance nodes held, live or not */
  size_t node_bytes; /* bytes of those nodes */
  size_t collect_at; /* node_bytes at which the next event starts with atom__aero_pn_collect */
  size_t vclk_bytes; /* heap bytes of variable clocks (optimized variant) */
  size_t sweep_at;   /* vclk_bytes at which the next event starts with atom__aero_var_sweep */
  size_t sweep_min;  /* the least sweep_at (argument sweep; 0: every event) */
  void *vfree[VFREE_COMP + 1]; /* free blocks of variable clocks by components (see
                                  "Variable clocks" in aerodrome.c), NULL-terminated lists */
  size_t vfree_bytes;          /* bytes of those blocks (held: counted as the checker's) */
  int sweeping;                /* inside atom__aero_var_sweep */
  kent *scratch;     /* END: open transactions C_t knows */
  size_t scratch_cap;
  cyc *cy;           /* report scratch */
  atom__report_build rb; /* the report being handed over */
  int rep_err;       /* first report failure of the current event (0 between events) */
} aero;

#define PN_CHUNK 65536u     /* bytes of node memory asked for at a time */
#define PN_COLLECT_MIN (4u * PN_CHUNK)

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

/* An explanation of nothing: the knowledge is of unknown provenance. */
#define AERO_UNKNOWN ((expl){NULL, {{0, 0, 0, 0}, 0, 0, 0, 0}, 0})

/* provenance.c */
void atom__aero_pn_free_chunks(aero *a, pchunk *c);
AERO_RARE void atom__aero_pn_collect(aero *a);
pnode *atom__aero_pn_new(aero *a, uint32_t kind, uint32_t flags, uint32_t of, pnode *x,
                         pnode *y, const aev *e1, const aev *e2, uint64_t made);
void atom__aero_ends_put(aero *a, ends *e, uint32_t c, pnode *n);
void atom__aero_ends_free(aero *a, ends *e);
AERO_RARE int atom__aero_vslot_grow(aero *a, avar *v, uint32_t c);
AERO_RARE int atom__aero_rlog_grow(aero *a, athread *th);
expl atom__aero_ex_thread(const aero *a, uint32_t u, uint32_t c, const aev *at);
expl atom__aero_ex_snap(const aero *a, const aev *store, const ends *e, uint32_t c);
expl atom__aero_ex_rp(const aero *a, const avar *v, uint32_t c);
expl atom__aero_ex_chr(const aero *a, const avar *v, uint32_t c);
pnode *atom__aero_pn_end_at(aero *a, uint32_t of, pnode *left, const expl *right, uint64_t made);
AERO_RARE void atom__aero_learn_thread(aero *a, uint32_t u, uint32_t i, const srcd *sd);

/* reports.c */
int atom__aero_report_edge(aero *a, const atom_ev *ev, uint32_t victim, const expl *x,
                           const aev *src);
int atom__aero_report_end(aero *a, const atom_ev *ev, uint32_t t, uint32_t u);

/* basic.c: the event handlers of variant=basic (0, or an error before any change) */
int atom__aero_basic_read(aero *a, const atom_ev *ev);
int atom__aero_basic_write(aero *a, const atom_ev *ev);
int atom__aero_basic_acquire(aero *a, const atom_ev *ev);
int atom__aero_basic_release(aero *a, const atom_ev *ev);
int atom__aero_basic_end(aero *a, const atom_ev *ev);
/* optimized.c: variant=optimized's event and block entries (the dispatch and the handlers
 * compiled together, one copy per instruction set: see atom__aero_opt_events) */
int atom__aero_opt_event(aero *a, const atom_ev *ev);
int atom__aero_opt_events(aero *a, const atom_ev *ev, size_t n, size_t *failed);

/* aerodrome.c: the growth of the per-id tables and the slots (the out-of-line halves of
 * ensure_* and take_slot below), and the handlers both variants share (0, or an error before
 * any change) */
int atom__aero_ensure_threads_slow(aero *a, uint32_t id);
int atom__aero_ensure_vars_slow(aero *a, uint32_t id);
int atom__aero_ensure_locks_slow(aero *a, uint32_t id);
int atom__aero_take_slot_slow(aero *a, uint32_t u);
int atom__aero_publish_slow(aero *a, uint32_t t);
AERO_RARE void atom__aero_note_learner(aero *a, uint32_t o, uint32_t u);
int atom__aero_on_begin(aero *a, const atom_ev *ev);
int atom__aero_on_fork(aero *a, const atom_ev *ev);
int atom__aero_on_join(aero *a, const atom_ev *ev);

static inline atom_txn_ref thread_txn(const aero *a, uint32_t t) {
  const athread *th = &a->thr[t];
  atom_txn_ref r = {t, 0, th->begin_index, th->begin_loc};
  if (!th->active && th->last.kind != ATOM_END) {
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

/* The bytes of a node of this kind: a HOLD has no b, made or e1, an END no e1. */
static inline size_t pn_size(uint32_t kind) {
  return kind == PN_HOLD ? offsetof(pnode, b) : kind == PN_END ? offsetof(pnode, e1)
                                                               : sizeof(pnode);
}

/* The clock component of thread t (it has one). */
static inline uint32_t slot_of(const aero *a, uint32_t t) { return a->thr[t].slot; }

/* The record of e about thread t (at t's slot) if it is about t's current (open) transaction.
 * `of` tells apart the owners of a recycled slot (their transaction numbers continue, so
 * `about` alone would do for an open transaction; the test is cheap and exact). */
static inline pnode *ends_get(const aero *a, const ends *e, uint32_t t) {
  uint32_t c = slot_of(a, t);
  pnode *n = c < e->cap ? e->p[(size_t)c * (e->gap + 1)] : NULL;
  return n && n->about == a->thr[t].seq && n->of == t ? n : NULL;
}

/* 0 if slot c (a clock component) of v exists (grown if needed), else ATOM_ENOMEM (the record
 * is then lost). */
static inline int vslot_room(aero *a, avar *v, uint32_t c) {
  return c < v->nslot ? 0 : atom__aero_vslot_grow(a, v, c);
}

/* R_x learns thread c's open transaction from c's own read (index, loc). This happens at the
 * first read of each variable in most transactions, so the record goes where it is cheapest to
 * write: the reader's log, appended in order (one cache line for several reads), searched only
 * when an edge is named (atom__aero_ex_rp). Past RLOG_MAX reads of one transaction, or without
 * memory for the log, it goes to the variable's slot. */
static inline void rown_origin(aero *a, avar *v, uint32_t c, uint64_t index, uint64_t loc) {
  athread *th = &a->thr[c];
  if (th->n_rlog < th->cap_rlog || (th->n_rlog < RLOG_MAX && !atom__aero_rlog_grow(a, th))) {
    rlog_ent *l = &th->rlog[th->n_rlog++];
    l->index = index;
    l->loc = loc;
    l->var = (uint32_t)(v - a->var);
    return;
  }
  uint32_t k = slot_of(a, c);
  if (vslot_room(a, v, k)) return;
  rown *s = &v->slot[k].ro;
  s->index = index;
  s->loc = loc;
  s->o_about = a->thr[c].seq;
}

/* chR_x learns thread c's open transaction by the read R_x learned it by. */
static inline void rown_alias(aero *a, avar *v, uint32_t c) {
  uint32_t k = slot_of(a, c);
  if (vslot_room(a, v, k)) return;
  v->slot[k].ro.a_about = a->thr[c].seq;
}

static inline int known_expl(const expl *x) { return x->n || x->origin; }

static inline int same_expl(const expl *x, const expl *y) {
  return x->n == y->n && x->origin == y->origin && x->at.index == y->at.index &&
         x->at.txn.thread == y->at.txn.thread;
}

/* A failed report (out of memory in the session) does not stop the event: its update
 * completes and the first such error is returned at the end of the event. */
static inline void note(aero *a, int err) {
  if (err && !a->rep_err) a->rep_err = err;
}

static inline int reserve(aero *a, atom__vc *c, uint32_t n) {
  return n <= c->cap ? 0 : atom__vc_reserve(a->mem, c, n);
}

static inline uint32_t max_u32(uint32_t x, uint32_t y) { return x > y ? x : y; }
static inline uint32_t min_u32(uint32_t x, uint32_t y) { return x < y ? x : y; }

/* The clock kernels. They run over whole chunks (support/vclock.h: storage comes in chunks of
 * ATOM__VC_CHUNK = 8 components, zero past len), c of them, on restrict parameters (distinct
 * storage: compilers drop the run-time overlap checks for those, not always for restrict
 * locals): each chunk is a fixed 8-component body that the compiler turns into one or two
 * vector instructions a step (vpmaxud in the AVX2 copy), with no scalar epilogue and no
 * per-component branch. A chunk past len holds zeros on both sides, so it changes nothing. */
/* d ⊔= s over c chunks. */
static inline void xjoin_n(atom__vc_t *restrict d, const atom__vc_t *restrict s, uint32_t c) {
  for (; c > 0; c--, d += ATOM__VC_CHUNK, s += ATOM__VC_CHUNK)
    for (unsigned k = 0; k < ATOM__VC_CHUNK; k++) d[k] = s[k] > d[k] ? s[k] : d[k];
}
/* dst ⊔= src for a variable or lock clock dst and a thread clock src (distinct storage), room
 * reserved. */
static inline void xjoin(atom__vc *dst, const atom__vc *src) {
  uint32_t n = src->len;
  xjoin_n(dst->p, src->p, atom__vc_chunks(n));
  if (n > dst->len) dst->len = n;
}

/* d := s over c chunks, then zeros over the chunks up to o (keeps [len, cap) zero). */
static inline void xcopy_n(atom__vc_t *restrict d, const atom__vc_t *restrict s, uint32_t c,
                           uint32_t o) {
  for (uint32_t i = 0; i < c; i++, d += ATOM__VC_CHUNK, s += ATOM__VC_CHUNK)
    for (unsigned k = 0; k < ATOM__VC_CHUNK; k++) d[k] = s[k];
  for (uint32_t i = c; i < o; i++, d += ATOM__VC_CHUNK)
    for (unsigned k = 0; k < ATOM__VC_CHUNK; k++) d[k] = 0;
}
/* dst := src for a variable or lock clock dst and a thread clock src (distinct storage), room
 * reserved: atom__vc_copy without the call, the reservation test and memcpy's dispatch (a
 * store copies a clock of a few components). */
static inline void xcopy(atom__vc *dst, const atom__vc *src) {
  ATOM__ASSERT(src->len <= dst->cap);
  xcopy_n(dst->p, src->p, atom__vc_chunks(src->len), atom__vc_chunks(dst->len));
  dst->len = src->len;
}

/* R_x ⊔= src and chR_x ⊔= src[0/skip] in one pass (skip = NIL: chR_x ⊔= src), room reserved
 * (var_reserve_r: both have cap >= src->len). The two clocks are distinct storage (the two
 * halves of R_x's block) and src is a thread clock, so the pointers do not alias. */
static inline void rjoin_n(atom__vc_t *restrict r, atom__vc_t *restrict h,
                           const atom__vc_t *restrict s, uint32_t c) {
  for (; c > 0; c--, r += ATOM__VC_CHUNK, h += ATOM__VC_CHUNK, s += ATOM__VC_CHUNK)
    for (unsigned k = 0; k < ATOM__VC_CHUNK; k++) {
      atom__vc_t y = s[k], x = r[k], z = h[k];
      r[k] = y > x ? y : x;
      h[k] = y > z ? y : z;
    }
}
static inline void rjoin(avar *v, const atom__vc *src, uint32_t skip) {
  uint32_t n = src->len;
  atom__vc_t *h = v->chr.p;
  atom__vc_t keep = skip < n ? h[skip] : 0;
  rjoin_n(v->r.p, h, src->p, atom__vc_chunks(n));
  if (skip < n) h[skip] = keep;
  if (n > v->r.len) v->r.len = n;
  /* the skipped component alone does not lengthen chR_x (as atom__vc_join_except) */
  if (skip != NIL && n == skip + 1) n = skip;
  if (n > v->chr.len) v->chr.len = n;
}

/* Whether some component of s exceeds that of d, over c chunks: a test without a branch per
 * component. With the vector extensions of gcc and clang, the lanes' results are gathered in
 * one vector (the compiler's loop over a scalar `any` vectorizes the chunk loop itself, badly);
 * elsewhere a plain loop. */
#if defined(__GNUC__) || defined(__clang__)
typedef atom__vc_t aero_v8 __attribute__((vector_size(ATOM__VC_CHUNK * sizeof(atom__vc_t))));
typedef uint64_t aero_v8q __attribute__((vector_size(ATOM__VC_CHUNK * sizeof(atom__vc_t))));
static inline int any_above(const atom__vc_t *restrict d, const atom__vc_t *restrict s,
                            uint32_t c) {
  aero_v8 acc = {0};
  for (; c > 0; c--, d += ATOM__VC_CHUNK, s += ATOM__VC_CHUNK) {
    aero_v8 x, y;
    memcpy(&x, d, sizeof x);
    memcpy(&y, s, sizeof y);
    acc |= (aero_v8)(y > x);
  }
  aero_v8q q = (aero_v8q)acc;
  return (q[0] | q[1] | q[2] | q[3]) != 0;
}
#else
static inline int any_above(const atom__vc_t *restrict d, const atom__vc_t *restrict s,
                            uint32_t c) {
  unsigned any = 0;
  for (uint32_t i = 0; i < c * ATOM__VC_CHUNK; i++) any |= s[i] > d[i];
  return (int)any;
}
#endif

AERO_RARE int atom__aero_rclk_grow(aero *a, avar *v, uint32_t n);
AERO_RARE int atom__aero_wclk_grow(aero *a, avar *v, uint32_t n);
AERO_RARE void atom__aero_var_sweep(aero *a);
#define VAR_SWEEP_MIN ((size_t)1 << 20) /* bytes of variable clocks before the first sweep */
#define VAR_SWEEP_PER_VAR 32u            /* bytes allocated per variable between two sweeps */

/* Room for n components, and for as many as there are slots, in a variable's clocks (see
 * "Variable clocks" in aerodrome.c): var_reserve_w for W_x, var_reserve_r for R_x and chR_x,
 * which share one block (an access that touches both misses the cache once). The width of
 * the slots in use is what any clock can receive (see nslot_b). Only these grow a variable's
 * clocks: the atom__vc operations on them must find the room reserved. 0 or ATOM_ENOMEM
 * (unchanged). */
static inline int var_reserve_w(aero *a, avar *v, uint32_t n) {
  n = max_u32(n, a->n_slot);
  return n <= v->w.cap ? 0 : atom__aero_wclk_grow(a, v, n);
}
static inline int var_reserve_r(aero *a, avar *v, uint32_t n) {
  n = max_u32(n, a->n_slot);
  return n <= v->r.cap ? 0 : atom__aero_rclk_grow(a, v, n);
}


static inline int kent_valid(const aero *a, kent e) {
  const athread *o = &a->thr[e.t];
  return o->active && o->seq == e.seq;
}

/* Room for every open transaction thread u could learn during one event: each addition is
 * an open transaction not yet (validly) in the list. */
static inline int known_reserve(aero *a, athread *th) {
  if (a->basic || th->n_known + a->n_active + 1 <= th->cap_known) return 0;
  size_t k = 0;
  for (size_t i = 0; i < th->n_known; i++)
    if (kent_valid(a, th->known[i])) th->known[k++] = th->known[i];
  th->n_known = k;
  return ATOM__GROW(a->mem, th->known, th->cap_known, k + a->n_active + 1);
}

/* C_u := C_u ⊔ src (capacity reserved by the caller). A component crossing the BEGIN value
 * of an open transaction means C_u now learns it: record how (provenance, from sd) and, in
 * the optimized variant, add it to the known list. */
static inline void thread_join(aero *a, uint32_t u, const atom__vc *src, const srcd *sd) {
  athread *th = &a->thr[u];
  atom__vc_t *d = atom__vc_data(&th->c);
  const atom__vc_t *s = atom__vc_cdata(src);
  const atom__vc_t *ob = a->open_b;
  uint32_t n = src->len;
  int grew = 0;
  /* Most joins raise no component, or few: first a test without a branch per component (the
   * compiler vectorizes it), then the loop with the crossing test only if something grows. */
  if (!any_above(d, s, atom__vc_chunks(n))) n = 0;
  for (uint32_t i = 0; i < n; i++)
    if (s[i] > d[i]) {
      if (d[i] < ob[i] && s[i] >= ob[i]) { /* slot i's owner has an open transaction */
        uint32_t o = a->slots[i].owner;
        if (!a->basic) {
          th->known[th->n_known++] = (kent){o, a->thr[o].seq};
          athread *ot = &a->thr[o];
          if (ot->n_lthr < ot->cap_lthr)
            ot->lthr[ot->n_lthr++] = u;
          else
            atom__aero_note_learner(a, o, u);
        }
        atom__aero_learn_thread(a, u, i, sd);
      }
      d[i] = s[i];
      grew = 1;
    }
  if (src->len > th->c.len) th->c.len = src->len;
  if (grew) th->ver++;
}

/* Whether C_t (of th) ⊒ C_u at version ver: th absorbed a snapshot of C_u at that version or
 * later (absorb()). Thread clocks only grow and `ver` counts C_u's changes, so C_u at ver ⊑
 * C_u at any later version ⊑ C_t. A join from a clock known to be C_u at ver (the w_from and
 * l_from shortcuts) then raises nothing and is skipped. Entries are per slot of u and name u,
 * so a slot's next owner never matches its old owner's entry; a joined thread (no slot) never
 * matches. */
static inline int absorbed(const aero *a, const athread *th, uint32_t u, uint64_t ver) {
  if (u >= a->n_thr) return 0; /* NIL: the variable or lock clock is no thread's snapshot */
  uint32_t s = a->thr[u].slot;  /* NIL and SLOT_GONE are beyond abs_cap */
  return s < th->abs_cap && th->abs[s].thr == u && th->abs[s].ver >= ver;
}

AERO_RARE void atom__aero_absorb_grow(aero *a, athread *th, uint32_t s);

/* Note that C_t (of th) ⊒ C_u at version ver (after a join from such a snapshot). Only a
 * cache: without memory for it nothing is noted. */
static inline void absorb(aero *a, athread *th, uint32_t u, uint64_t ver) {
  if (u >= a->n_thr) return;
  uint32_t s = a->thr[u].slot;
  if (s >= a->n_slot) return; /* NIL, SLOT_GONE */
  if (s >= ABS_MAX_SLOTS) return; /* not cached: the join is done (see ABS_MAX_SLOTS) */
  if (s >= th->abs_cap) {
    atom__aero_absorb_grow(a, th, s);
    if (s >= th->abs_cap) return;
  }
  seenv *e = &th->abs[s];
  if (e->thr != u || e->ver < ver) *e = (seenv){u, ver};
}

/* 003 Alg. 1 line 9-12, optimized check: C_t^▷ ⊑ clk iff clk(t) >= b_t. Optimized variant
 * only: there b is NO_TXN, above every component value, while t has no open transaction
 * (and while it is not published), so the test needs no look at `active`. */
static inline int knows(const aero *a, const atom__vc *clk, uint32_t t) {
  return atom__vc_get(clk, slot_of(a, t)) >= a->thr[t].b;
}

/* 003 Alg. 1 line 9-12 */
static inline int basic_knows(const aero *a, const atom__vc *clk, uint32_t t) {
  return a->thr[t].active && atom__vc_leq(&a->thr[t].cb, clk);
}

/* ------------------------------------------------------------------ the event dispatch */

/* The common case (the id is known, the thread has a slot) without a call. */
static inline int ensure_threads(aero *a, uint32_t id) {
  return id < a->n_thr ? 0 : atom__aero_ensure_threads_slow(a, id);
}
static inline int ensure_vars(aero *a, uint32_t id) {
  return id < a->n_var ? 0 : atom__aero_ensure_vars_slow(a, id);
}
static inline int ensure_locks(aero *a, uint32_t id) {
  return id < a->n_lock ? 0 : atom__aero_ensure_locks_slow(a, id);
}
static inline int take_slot(aero *a, uint32_t u) {
  return a->thr[u].slot != NIL ? 0 : atom__aero_take_slot_slow(a, u);
}
/* Thread t's open transaction, if any, becomes visible to other clocks by the event about to
 * be handled (its clock is stored or joined into another): publish it first (optimized
 * variant; see "Slots" in aerodrome.c). 0, or an error before any change. */
static inline int publish(aero *a, uint32_t t) {
  const athread *th = &a->thr[t];
  return th->pub >= th->active ? 0 : atom__aero_publish_slow(a, t);
}

/* What every event does before its handler, in both variants: the collections that run at
 * the start of an event (provenance nodes, variable clocks), the thread table as large as the
 * event's thread id, its thread's slot (then ensure_target). 0, or an error before any change. The dispatches
 * (aerodrome.c for variant=basic, optimized.c) call event_pre, then the kind's handler, then
 * event_post. */
static inline void collect_due(aero *a) {
  if (a->node_bytes >= a->collect_at) atom__aero_pn_collect(a);
  if (a->vclk_bytes >= a->sweep_at) atom__aero_var_sweep(a);
}
/* gc = 0: the caller ran collect_due already (the optimized block loop, once a block: a
 * collection is exact at any event boundary, so once a block only lets memory overshoot by
 * a block's allocations). */
static AERO_HOT int event_pre(aero *a, const atom_ev *ev, int gc) {
  int err; /* a->rep_err is 0 here: event_post clears it, on every path */
  if (gc) collect_due(a);
  if ((err = ensure_threads(a, ev->thread)) != 0 || (err = take_slot(a, ev->thread)) != 0)
    return err;
  return 0;
}

/* The table of the event's target as large as its id (after event_pre; the optimized
 * dispatch tests it in the kind's case of its one switch instead). */
static inline int ensure_target(aero *a, const atom_ev *ev) {
  switch (ev->kind) {
    case ATOM_READ:
    case ATOM_WRITE: return ensure_vars(a, ev->target);
    case ATOM_ACQUIRE:
    case ATOM_RELEASE: return ensure_locks(a, ev->target);
    case ATOM_FORK:
    case ATOM_JOIN: return ensure_threads(a, ev->target);
    default: return 0;
  }
}

/* After the handler (err its result): handlers fail (out of memory) only before changing
 * anything, and the event is then ignored. A report that failed did not stop the update: its
 * error is the event's. */
static AERO_HOT int event_post(aero *a, const atom_ev *ev, int err) {
  if (err) {
    a->rep_err = 0; /* (the next event starts with none) */
    return err;
  }
  a->thr[ev->thread].last = *ev;
  err = a->rep_err;
  a->rep_err = 0;
  return err;
}

/* How many events ahead a block loop prefetches the record of an accessed variable (0: none):
 * a hint (any event's target is taken as a variable; a lock's, a BEGIN's or a target not seen
 * yet only wastes the fetch), so that with many variables its cache miss overlaps the work on
 * the events before it. Only while the variable table is larger than AERO_PREFETCH_MIN_BYTES
 * (about a core's L2 cache): a smaller table stays cached, and the prefetch would only add
 * its instructions to every event. */
#ifndef AERO_PREFETCH_AHEAD
#define AERO_PREFETCH_AHEAD 8
#endif
#define AERO_PREFETCH_MIN_BYTES ((size_t)256 << 10)
/* The length of a block of n events as far as prefetches go (the i-th event prefetches iff
 * i + AERO_PREFETCH_AHEAD < that length): 0 if the table is small, tested once a block (a
 * table that grows within the block starts its prefetches at the next one). */
static inline size_t prefetch_end(const aero *a, size_t n) {
  return (size_t)a->n_var * sizeof(avar) > AERO_PREFETCH_MIN_BYTES ? n : 0;
}
static inline void prefetch_var(const aero *a, const atom_ev *ev, size_t i, size_t end) {
#if AERO_PREFETCH_AHEAD > 0 && (defined(__GNUC__) || defined(__clang__))
  if (i + AERO_PREFETCH_AHEAD < end) {
    /* no bound test on the target: a prefetch never faults, and the address is computed as
     * an integer (a pointer past the array would be undefined behaviour in C, an integer is
     * not) */
    uintptr_t x = ev[i + AERO_PREFETCH_AHEAD].target;
    __builtin_prefetch((const void *)((uintptr_t)a->var + x * sizeof(avar)), 1);
  }
#else
  (void)a, (void)ev, (void)i, (void)end;
#endif
}

#endif
