/* velodrome: conflict serializability by transaction graph and incremental cycle detection.
 *
 * 003 §2 Def. 1: a trace is conflict serializable iff there is no cycle of distinct
 * transactions T0 <=Txn T1 <=Txn ... <=Txn T0, where T <=Txn T' when some event of T is
 * conflict-happens-before some event of T'. A conflict-happens-before path only ever steps
 * between conflicting events, so it suffices to keep one edge per direct conflict between
 * transactions -- and of those, only the ones not implied by others:
 *   - program order: the thread's previous transaction -> its next one (conflict (a));
 *   - fork: the forker's transaction -> the child's first transaction (b);
 *   - join: the child's last transaction -> the joiner's transaction (c);
 *   - variables: the last writer -> a read or a write, and the last reader of each thread
 *     since the last write -> a write (d); older accesses reach the new one through these;
 *   - locks: the last releaser -> an acquire (e).
 * Every edge points into the transaction performing the current event, so a transaction that
 * has ended never gains an incoming edge again. Hence (003 §5.1) a complete transaction without
 * incoming edges is on no cycle, now or later, and is collected (the graph cascades this to its
 * successors). A unary transaction (an event outside BEGIN..END) is complete at once: it gets a
 * node only if it has a live predecessor, and that node goes as soon as its predecessors go.
 *
 * An edge that would close a cycle is reported and not inserted (support/digraph.h keeps the
 * graph acyclic). The graph is exact up to the first violation, so the verdict is exact; later
 * reports are real cycles, though a cycle that needs a dropped edge is not seen again.
 *
 * Every edge carries a label: the two events that made it, the earlier one in the source
 * transaction and the later one in the target (vd_label). An edge made again by other events
 * keeps its first label (the graph stores one per edge; any one is a true reason, and the first
 * costs nothing on the hot path, where most edges are repeats). So the state that edges come
 * from (last writer, readers, last releaser, forker, a thread's last transaction) remembers the
 * event as well as the transaction. A report hands over the cycle's edges in cycle order, each
 * with its two events, the closing one flagged; an edge between consecutive transactions of one
 * thread is left out, as the report stores them as one run (report_cycle). */
#include <stdint.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "support/digraph.h"
#include "support/report_build.h"

/* How a report names a transaction: kept by velodrome per graph slot (velodrome::txn), not as
 * the graph's node payload, so that a new node costs no zero-fill of a payload it overwrites
 * at once. */
typedef struct vd_txn {
  uint32_t thread;
  uint32_t unary;
  uint64_t begin_index;
  uint64_t begin_loc;
} vd_txn;

/* Edge label: the event of the source transaction and the event of the target that make the
 * edge (from happened first). */
typedef struct vd_label {
  atom_ev from, to;
} vd_label;

/* Entries of a thread's known-predecessor set (a power of two). */
#define VD_NPRED 8

typedef struct vd_thread {
  atom__dg_node cur;    /* node of the open transaction (NONE outside one) */
  /* Nodes u for which offering u -> cur is known to be a no-op: the edge is in the graph (it
   * stays while cur is open: an edge goes only with one of its ends) or u is collected (a handle
   * never comes back alive). Direct-mapped by the node index; NONE (0) in an empty entry is
   * true of it as well. Cleared whenever cur changes. It lets the common access skip the
   * graph: one load and one compare in place of the liveness and duplicate tests. */
  atom__dg_node pred[VD_NPRED];
  atom__dg_node last;   /* the thread's most recent transaction: program-order source */
  atom__dg_node forker; /* transaction that forked the thread, until its first transaction */
  /* the open transaction's BEGIN, for the retry of its node while cur is NONE (vd_begin ran
   * out of memory; the in-line BEGIN, which cannot fail, leaves them stale) */
  uint64_t begin_index;
  uint64_t begin_loc;
  uint32_t in_txn;
  uint32_t pad;
  atom_ev last_ev;      /* the latest event of `last` seen: its BEGIN, END or only event */
  atom_ev fork_ev;      /* the FORK that made `forker` */
  uint64_t pad2[10];    /* a power-of-two size: the per-event index is a shift */
} vd_thread;

_Static_assert(sizeof(vd_thread) == 256, "vd_thread is 256 bytes");

/* An access a variable keeps: its transaction and its event (the kind and the target are
 * implied). 32 bytes. */
typedef struct vd_acc {
  atom__dg_node txn;
  uint64_t index, loc;
  uint32_t thread;
  uint16_t flags;
  uint16_t n; /* in vd_var::r, the readers' number: 0, 1 or VD_MANY; elsewhere unused */
} vd_acc;

/* vd_step picks a variable's entry by ATOM_WRITE - kind (1 for a read, 0 for a write). */
_Static_assert(ATOM_WRITE == ATOM_READ + 1, "READ and WRITE are adjacent kinds");

/* vd_acc::n of a variable with more than one reader: their number is in its vd_more. */
#define VD_MANY 2

/* The event flags a variable keeps in 16 bits (vd_acc::flags). */
_Static_assert((ATOM_EV_SYNTHETIC | ATOM_EV_ACQUIRE | ATOM_EV_RELEASE) <= 0xffffu,
               "velodrome keeps an access's flags in 16 bits");

/* The readers of a variable after its first (velodrome::more, owned: instance allocator): cap
 * entries, n - 1 of them in use when the variable has n > 1 readers. Made when a second thread
 * reads before the next write and kept for good. */
typedef struct vd_more {
  uint32_t cap, n;
  vd_acc r[];
} vd_more;

/* One variable, one cache line (64 bytes; the array is 64-byte aligned, grow_vars): the last
 * writer and its write (w), and the readers since the last write: at most one entry per thread
 * (its latest transaction, which program order puts after the thread's earlier ones). The
 * first reader is always here (r), the others out of line (velodrome::more), so that the usual
 * access -- no reader, or one -- reads and writes this line only and takes no branch on where
 * the readers are. r.txn is NONE when there is no reader: a read or a write then sees "no
 * reader" as "a collected reader", by the same test. w and r have one shape and are also
 * acc[0] and acc[1], so that a read and a write choose the entry they update by their kind,
 * without a branch (vd_step). */
typedef struct vd_var {
  union {
    struct {
      vd_acc w, r;
    };
    vd_acc acc[2];
  };
} vd_var;

_Static_assert(sizeof(vd_var) == 64, "vd_var is one cache line");
#define VD_ALIGN 64

typedef struct vd_lock {
  atom__dg_node rel;
  atom_ev ev; /* the release */
} vd_lock;

/* A report hands over at most this many edges (the closing one included), two events each,
 * and names at most VD_MAX_VARS variables: what the session stores of one report
 * (atom_env_report); the transactions are all handed over so that the session can count the
 * runs. */
#define VD_MAX_EDGES 128

/* Work off the per-event path (a new edge, a new reader thread, events other than accesses)
 * stays out of line, so that the common case runs in a small function. */
#define VD_NOINLINE __attribute__((noinline))
#define VD_LIKELY(x) __builtin_expect(!!(x), 1)
#define VD_MAX_VARS 16

typedef struct velodrome {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  atom__dg g;
  vd_txn *txn;   /* per graph slot: the transaction of the live node there (txn_cap entries) */
  size_t txn_cap;
  vd_thread *th;
  size_t th_cap;
  vd_var *var;   /* var_cap entries, 64-byte aligned inside var_raw */
  size_t var_cap;
  void *var_raw; /* what the allocator returned: var_cap * 64 + VD_ALIGN bytes (owned) */
  vd_more **more; /* per variable: its readers after the first, or NULL (more_cap entries,
                   * each owned; the array is made at the first second reader) */
  size_t more_cap;
  vd_lock *lock; /* last releaser of each lock */
  size_t lock_cap;
  atom__report_build rb; /* report scratch, reused from one report to the next */
} velodrome;

/* The number of readers of x, and its update (x has a vd_more when it is over 1). */
static inline uint32_t nreaders(const velodrome *v, const vd_var *x) {
  return x->r.n < VD_MANY ? x->r.n : v->more[x - v->var]->n;
}
static inline void set_nreaders(velodrome *v, vd_var *x, uint32_t k) {
  if (k < VD_MANY) {
    x->r.n = (uint16_t)k;
    if (k == 0) x->r.txn = ATOM__DG_NONE;
  } else {
    x->r.n = VD_MANY;
    v->more[x - v->var]->n = k;
  }
}

/* Reader i (below its number) of variable x. */
static inline vd_acc *reader(velodrome *v, vd_var *x, uint32_t i) {
  return i ? &v->more[x - v->var]->r[i - 1] : &x->r;
}

/* Access entry a now names transaction h and its event ev (a's n is kept). */
static inline void acc_set(vd_acc *a, atom__dg_node h, const atom_ev *ev) {
  a->txn = h;
  a->index = ev->index;
  a->loc = ev->loc;
  a->thread = ev->thread;
  a->flags = (uint16_t)ev->flags;
}
static inline void acc_copy(vd_acc *a, const vd_acc *from) {
  a->txn = from->txn;
  a->index = from->index;
  a->loc = from->loc;
  a->thread = from->thread;
  a->flags = from->flags;
}

/* The events that label edges, rebuilt from what a variable keeps of them. */
static inline atom_ev acc_ev(const vd_acc *a, atom_kind kind, uint32_t var) {
  return (atom_ev){kind, a->thread, var, a->flags, a->index, a->loc};
}

static int vd_create(void **self, atom_env *env) {
  velodrome *v = ATOM__NEW_STATE(env, velodrome, own_mem);
  if (!v) return ATOM_ENOMEM;
  atom__mem *mem = &v->own_mem;
  v->env = env;
  v->mem = mem;
  atom__dg_init(&v->g, mem, 0);
  atom__dg_set_edge_payload(&v->g, sizeof(vd_label));
  atom__rb_init(&v->rb, mem);
  *self = v;
  return 0;
}

static void vd_destroy(void *self) {
  velodrome *v = self;
  if (!v) return;
  for (size_t i = 0; i < v->more_cap; i++)
    if (v->more[i])
      atom__mem_free(v->mem, v->more[i], sizeof(vd_more) + v->more[i]->cap * sizeof(vd_acc));
  atom__mem_free(v->mem, v->more, v->more_cap * sizeof *v->more);
  if (v->var_raw) atom__mem_free(v->mem, v->var_raw, v->var_cap * sizeof *v->var + VD_ALIGN);
  atom__mem_free(v->mem, v->th, v->th_cap * sizeof *v->th);
  atom__mem_free(v->mem, v->txn, v->txn_cap * sizeof *v->txn);
  atom__mem_free(v->mem, v->lock, v->lock_cap * sizeof *v->lock);
  atom__rb_free(&v->rb);
  atom__dg_destroy(&v->g);
  atom__mem_free(v->mem, v, sizeof *v);
}

static int vd_stats(void *self, atom_checker_counters *out) {
  velodrome *v = self;
  out->nodes = atom__dg_node_count(&v->g);
  out->edges = atom__dg_edge_count(&v->g);
  out->clocks = 0;
  return 0;
}


/* Report the cycle just found by the graph, closed by the edge labelled @p closing (not
 * inserted). The cycle is told from the transaction of the closing event on, so that the closing
 * edge comes last. Work is linear in the cycle's length (the graph's search already was); the
 * edges handed over are bounded (VD_MAX_EDGES). The message is the core's default cycle story. */
static int report_cycle(velodrome *v, const vd_label *closing) {
  atom__report_build *rb = &v->rb;
  atom__rb_reset(rb);
  const atom__dg_node *c;
  size_t n = atom__dg_cycle(&v->g, &c);
  for (size_t i = 0; i < n; i++) {
    const vd_txn *p = &v->txn[(uint32_t)c[i]];
    atom_txn_ref ref = {p->thread, p->unary, p->begin_index, p->begin_loc};
    if (atom__rb_txn(rb, &ref)) return ATOM_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    const vd_label *lb;
    if (i + 1 < n) {
      /* Consecutive transactions of one thread are one run of the report: the edge between
       * them (program order, or a conflict the run implies) needs no events. */
      const atom_txn_ref *a = &rb->txns[i], *b = &rb->txns[i + 1];
      if (a->thread == b->thread && !a->unary && !b->unary) continue;
      if (rb->n_edges + 1 >= VD_MAX_EDGES) continue; /* keep the room of the closing edge */
      lb = atom__dg_cycle_edge_payload(&v->g, i);
      if (!lb) continue;
    } else {
      lb = closing;
    }
    /* an event can end one edge and start the next (a write between two readers): the
     * builder keeps it once */
    if (atom__rb_edge(rb, &lb->from, &lb->to, i + 1 < n ? 0 : ATOM_EDGE_CLOSING))
      return ATOM_ENOMEM;
  }
  if (atom__rb_vars_of_events(rb, VD_MAX_VARS)) return ATOM_ENOMEM;
  return atom__rb_submit(rb, v->env, "conflict-cycle", closing->to.index, 0, NULL, 0);
}

/* Should u -> h be offered to the graph? Not when it is a no-op there (a collected or absent
 * source or target, the same transaction) nor a repeat the graph spots at once (most edges
 * are repeats): those are answered here, before a label is built. */
static inline int edge_needed(const velodrome *v, atom__dg_node u, atom__dg_node h) {
  return u != h && h != ATOM__DG_NONE && atom__dg_alive(&v->g, u) &&
         !atom__dg_edge_recent(&v->g, u, h);
}

/* Add u -> h labelled @p lb (the conflict of lb->from in u with lb->to in h); a cycle is
 * reported. Errors are remembered in *err (the first one wins) so that the event is still
 * applied in full and the state stays coherent. */
static VD_NOINLINE int edge_add(velodrome *v, atom__dg_node u, const vd_label *lb,
                                atom__dg_node h, int *err) {
  int rc = atom__dg_add_edge_labeled(&v->g, u, h, lb);
  if (rc == 0) return 0;
  if (rc == 1) rc = report_cycle(v, lb);
  if (rc < 0 && !*err) *err = rc;
  return 1;
}

/* Remember in @p known (a thread's pred set, or NULL) that offering u -> its open transaction
 * is a no-op from now on. */
static inline void note_pred(atom__dg_node *known, atom__dg_node u) {
  if (known) known[(uint32_t)u & (VD_NPRED - 1)] = u;
}
static inline int is_pred(const atom__dg_node *known, atom__dg_node u) {
  return known[(uint32_t)u & (VD_NPRED - 1)] == u;
}

/* The edge from an event kept as an atom_ev (lock release, fork, a joined thread's end). */
static inline void edge(velodrome *v, atom__dg_node u, const atom_ev *from, atom__dg_node h,
                        const atom_ev *ev, int *err) {
  if (!edge_needed(v, u, h)) return;
  vd_label lb = {*from, *ev};
  edge_add(v, u, &lb, h, err);
}

/* The edges from x's last writer and from its readers; @p known is the pred set of h (h is
 * the thread's open transaction) or NULL. An edge that closed a cycle was not inserted: it is
 * not remembered, so that offering it again searches (and reports) again, as before. */
static inline void edge_from_writer(velodrome *v, const vd_var *x, atom__dg_node h,
                                    const atom_ev *ev, int *err, atom__dg_node *known) {
  if (edge_needed(v, x->w.txn, h)) {
    vd_label lb = {acc_ev(&x->w, ATOM_WRITE, ev->target), *ev};
    if (edge_add(v, x->w.txn, &lb, h, err)) return;
  }
  note_pred(known, x->w.txn);
}
static inline void edge_from_reader(velodrome *v, const vd_acc *r, atom__dg_node h,
                                    const atom_ev *ev, int *err, atom__dg_node *known) {
  if (edge_needed(v, r->txn, h)) {
    vd_label lb = {acc_ev(r, ATOM_READ, ev->target), *ev};
    if (edge_add(v, r->txn, &lb, h, err)) return;
  }
  note_pred(known, r->txn);
}

static int ensure_thread(velodrome *v, uint32_t t) {
  if (t < v->th_cap) return 0;
  return ATOM__GROW(v->mem, v->th, v->th_cap, (size_t)t + 1);
}

/* A new transaction node for thread t, with its program-order and fork in-edges (a node without
 * out-edges closes no cycle, so these never report). @p first is its first event (the target
 * event of those edges). */
static int new_txn(velodrome *v, uint32_t t, int unary, uint64_t index, uint64_t loc,
                   const atom_ev *first, atom__dg_node *out) {
  atom__dg_node h;
  int rc = atom__dg_add_node(&v->g, &h);
  if (rc) return rc;
  uint32_t slot = (uint32_t)h;
  if (slot >= v->txn_cap && ATOM__GROW(v->mem, v->txn, v->txn_cap, (size_t)slot + 1)) {
    atom__dg_delete(&v->g, h);
    return ATOM_ENOMEM;
  }
  v->txn[slot] = (vd_txn){t, (uint32_t)unary, index, loc};
  vd_thread *th = &v->th[t];
  int err = 0;
  if (atom__dg_alive(&v->g, th->last)) {
    vd_label lb = {th->last_ev, *first};
    if ((rc = atom__dg_add_edge_labeled(&v->g, th->last, h, &lb)) < 0) err = rc;
  }
  if (atom__dg_alive(&v->g, th->forker)) {
    vd_label lb = {th->fork_ev, *first};
    if ((rc = atom__dg_add_edge_labeled(&v->g, th->forker, h, &lb)) < 0 && !err) err = rc;
  }
  if (err) {
    atom__dg_delete(&v->g, h);
    return err;
  }
  th->last = h;
  th->last_ev = *first;
  th->forker = ATOM__DG_NONE;
  *out = h;
  return 0;
}

/* Does a unary transaction performing ev have a live predecessor? If not it can never be on a
 * cycle (it is complete at birth and gets no later in-edge) and needs no node at all. */
static int unary_has_pred(velodrome *v, const vd_thread *th, const atom_ev *ev) {
  const atom__dg *g = &v->g;
  if (atom__dg_alive(g, th->last) || atom__dg_alive(g, th->forker)) return 1;
  switch (ev->kind) {
  case ATOM_READ:
  case ATOM_WRITE: {
    if (ev->target >= v->var_cap) return 0;
    vd_var *x = &v->var[ev->target];
    if (atom__dg_alive(g, x->w.txn)) return 1;
    if (ev->kind == ATOM_WRITE)
      for (uint32_t i = 0, nr = nreaders(v, x); i < nr; i++)
        if (atom__dg_alive(g, reader(v, x, i)->txn)) return 1;
    return 0;
  }
  case ATOM_ACQUIRE:
    return ev->target < v->lock_cap && atom__dg_alive(g, v->lock[ev->target].rel);
  case ATOM_JOIN:
    return ev->target < v->th_cap && atom__dg_alive(g, v->th[ev->target].last);
  default:
    return 0;
  }
}

/* Room for @p n readers of variable @p var after its first (more[var] holds at least n). */
static int reserve_more(velodrome *v, size_t var, uint32_t n) {
  if (var >= v->more_cap && ATOM__GROW(v->mem, v->more, v->more_cap, v->var_cap))
    return ATOM_ENOMEM;
  vd_more *m = v->more[var];
  uint32_t cap = m ? m->cap : 0;
  if (n <= cap) return 0;
  uint32_t ncap = cap ? cap : 4;
  while (ncap < n) {
    if (ncap > UINT32_MAX / 2) return ATOM_ENOMEM;
    ncap *= 2;
  }
  m = atom__mem_realloc(v->mem, m, m ? sizeof *m + cap * sizeof(vd_acc) : 0,
                        sizeof *m + (size_t)ncap * sizeof(vd_acc));
  if (!m) return ATOM_ENOMEM;
  m->cap = ncap;
  v->more[var] = m;
  return 0;
}

/* add_reader in full: thread t is not x's last reader, or x has no reader. */
static VD_NOINLINE int add_reader_thread(velodrome *v, vd_var *x, uint32_t t, atom__dg_node h,
                                         const atom_ev *ev) {
  uint32_t nr = nreaders(v, x);
  /* Drop this thread's older entry (program order covers it) and collected readers. */
  uint32_t k = 0;
  for (uint32_t i = 0; i < nr; i++) {
    const vd_acc *r = reader(v, x, i);
    if (r->thread != t && atom__dg_alive(&v->g, r->txn)) {
      if (k != i) acc_copy(reader(v, x, k), r);
      k++;
    }
  }
  set_nreaders(v, x, k);
  if (h == ATOM__DG_NONE) return 0;
  /* a second thread reads before the next write: out of line */
  if (k && reserve_more(v, (size_t)(x - v->var), k)) return ATOM_ENOMEM;
  acc_set(reader(v, x, k), h, ev);
  set_nreaders(v, x, k + 1);
  return 0;
}

/* Record that transaction h (NONE: a collected or node-less one) read x in thread t by ev. */
static inline int add_reader(velodrome *v, vd_var *x, uint32_t t, atom__dg_node h,
                             const atom_ev *ev) {
  uint32_t nr = nreaders(v, x);
  if (VD_LIKELY(nr)) {
    vd_acc *last = reader(v, x, nr - 1);
    if (VD_LIKELY(last->thread == t)) { /* the usual case: same reader again */
      if (last->txn != h) acc_set(last, h, ev); /* h's first read labels its edges */
      return 0;
    }
  }
  return add_reader_thread(v, x, t, h, ev);
}

/* Room for variable ids below @p need. The array is 64-byte aligned so that a variable is one
 * cache line (the allocator promises less): var_raw holds cap * 64 + VD_ALIGN bytes and the
 * array starts at its first aligned address. Grown by realloc (no second copy alive at once);
 * when the new block's alignment differs, the entries are moved to the new aligned start. */
static int grow_vars(velodrome *v, size_t need) {
  size_t cap = v->var_cap ? v->var_cap : 64;
  while (cap < need) {
    if (cap > (SIZE_MAX - VD_ALIGN) / 2 / sizeof(vd_var)) return ATOM_ENOMEM;
    cap *= 2;
  }
  size_t old_bytes = v->var_raw ? v->var_cap * sizeof(vd_var) + VD_ALIGN : 0;
  size_t old_off = v->var_raw ? (size_t)((char *)v->var - (char *)v->var_raw) : 0;
  char *raw = atom__mem_realloc(v->mem, v->var_raw, old_bytes, cap * sizeof(vd_var) + VD_ALIGN);
  if (!raw) return ATOM_ENOMEM;
  size_t off = (VD_ALIGN - (uintptr_t)raw % VD_ALIGN) % VD_ALIGN;
  if (off != old_off && v->var_cap) memmove(raw + off, raw + old_off, v->var_cap * sizeof(vd_var));
  vd_var *a = (vd_var *)(raw + off);
  memset(a + v->var_cap, 0, (cap - v->var_cap) * sizeof *a);
  v->var_raw = raw;
  v->var = a;
  v->var_cap = cap;
  return 0;
}

/* Make room for the state the event touches (its variable, lock or other thread). Returns 1
 * when the event is one velodrome does not look at, 0 to go on, or ATOM_ENOMEM. */
static inline int grow_for(velodrome *v, const atom_ev *ev) {
  switch (ev->kind) {
  case ATOM_READ:
  case ATOM_WRITE:
    if (ev->target >= v->var_cap && grow_vars(v, (size_t)ev->target + 1)) return ATOM_ENOMEM;
    return 0;
  case ATOM_ACQUIRE:
  case ATOM_RELEASE:
    if (ev->target >= v->lock_cap &&
        ATOM__GROW(v->mem, v->lock, v->lock_cap, (size_t)ev->target + 1))
      return ATOM_ENOMEM;
    return 0;
  case ATOM_FORK:
  case ATOM_JOIN:
    return ensure_thread(v, ev->target) ? ATOM_ENOMEM : 0;
  case ATOM_FENCE:
    /* It touches no shared state, but it is an event of its thread (program order, fork and
     * join conflicts apply to it). */
    return 0;
  default:
    return 1;
  }
}

/* The transaction performing ev in thread t: the open one, or a new unary one when it can be
 * on a cycle (NONE otherwise, or when memory ran out: *err). */
static inline atom__dg_node performing_txn(velodrome *v, vd_thread *th, uint32_t t,
                                           const atom_ev *ev, int *err) {
  atom__dg_node h = ATOM__DG_NONE;
  int rc;
  if (th->in_txn) {
    /* Normally created at BEGIN; retried here if that ran out of memory. */
    if (th->cur == ATOM__DG_NONE) {
      memset(th->pred, 0, sizeof th->pred);
      if ((rc = new_txn(v, t, 0, th->begin_index, th->begin_loc, ev, &th->cur)) < 0) *err = rc;
    }
    return th->cur;
  }
  if (unary_has_pred(v, th, ev) && (rc = new_txn(v, t, 1, ev->index, ev->loc, ev, &h)) < 0)
    *err = rc;
  if (h == ATOM__DG_NONE) { /* node-less unary transaction */
    th->last = ATOM__DG_NONE;
    th->forker = ATOM__DG_NONE;
  }
  return h;
}

/* The edges into h that ev makes, and the state it leaves for later events. */
static inline void apply_event(velodrome *v, uint32_t t, atom__dg_node h, const atom_ev *ev,
                               int *err, atom__dg_node *known) {
  int rc;
  switch (ev->kind) {
  case ATOM_READ: {
    vd_var *x = &v->var[ev->target];
    edge_from_writer(v, x, h, ev, err, known);
    if ((rc = add_reader(v, x, t, h, ev)) < 0 && !*err) *err = rc;
    break;
  }
  case ATOM_WRITE: {
    vd_var *x = &v->var[ev->target];
    uint32_t nr = nreaders(v, x);
    if (x->w.txn == h && nr == 0) break; /* h writes x again: nothing changes */
    edge_from_writer(v, x, h, ev, err, known);
    for (uint32_t i = 0; i < nr; i++) edge_from_reader(v, reader(v, x, i), h, ev, err, known);
    set_nreaders(v, x, 0);
    if (x->w.txn != h) acc_set(&x->w, h, ev); /* the transaction's first write labels its edges */
    break;
  }
  case ATOM_ACQUIRE: {
    const vd_lock *l = &v->lock[ev->target];
    if (edge_needed(v, l->rel, h)) {
      vd_label lb = {l->ev, *ev};
      if (edge_add(v, l->rel, &lb, h, err)) break;
    }
    note_pred(known, l->rel);
    break;
  }
  case ATOM_RELEASE:
    v->lock[ev->target].rel = h;
    v->lock[ev->target].ev = *ev;
    break;
  case ATOM_FORK:
    v->th[ev->target].forker = h;
    v->th[ev->target].fork_ev = *ev;
    break;
  case ATOM_JOIN:
    /* the joined thread's last transaction ended (its END, or its only event) before the join */
    edge(v, v->th[ev->target].last, &v->th[ev->target].last_ev, h, ev, err);
    break;
  default:
    break;
  }
}

/* A BEGIN of thread t (th its record): a new transaction and its node. */
static VD_NOINLINE int vd_begin(velodrome *v, vd_thread *th, uint32_t t, const atom_ev *ev) {
  if (th->in_txn) atom__dg_complete(&v->g, th->cur); /* cannot happen after normalization */
  th->in_txn = 1;
  th->begin_index = ev->index;
  th->begin_loc = ev->loc;
  th->cur = ATOM__DG_NONE;
  memset(th->pred, 0, sizeof th->pred);
  return new_txn(v, t, 0, ev->index, ev->loc, ev, &th->cur);
}

/* Any event (vd_event takes the usual ones itself). */
static VD_NOINLINE int vd_event_full(velodrome *v, const atom_ev *ev) {
  uint32_t t = ev->thread;
  if (ensure_thread(v, t)) return ATOM_ENOMEM;
  vd_thread *th = &v->th[t];

  switch (ev->kind) {
  case ATOM_BEGIN:
    return vd_begin(v, th, t, ev);
  case ATOM_END:
    if (th->in_txn && th->cur == th->last) th->last_ev = *ev;
    if (th->in_txn) atom__dg_complete(&v->g, th->cur);
    th->in_txn = 0;
    th->cur = ATOM__DG_NONE;
    return 0;
  default: {
    int rc = grow_for(v, ev);
    if (rc) return rc < 0 ? rc : 0;
    th = &v->th[t]; /* the array may have moved (FORK, JOIN) */
    break;
  }
  }

  int err = 0, unary = !th->in_txn;
  atom__dg_node h = performing_txn(v, th, t, ev, &err);
  apply_event(v, t, h, ev, &err, !unary && h != ATOM__DG_NONE ? th->pred : NULL);
  /* A unary transaction ends with its event; collected at once if nothing leads into it. */
  if (unary) atom__dg_complete(&v->g, h);
  return err;
}

/* An access or an acquire inside a transaction that has its node h (cur is set only then), of
 * a thread and a variable or lock seen before, in full: vd_event_full's steps without its
 * dispatch on the kind, growth checks and transaction bookkeeping. */
static VD_NOINLINE int vd_access(velodrome *v, vd_thread *th, uint32_t t, atom__dg_node h,
                                 const atom_ev *ev) {
  int err = 0;
  apply_event(v, t, h, ev, &err, th->pred);
  return err;
}

/* Is u collected (or NONE)? atom__dg_alive_fast(): every handle velodrome keeps is NONE or
 * came from the graph, and vd_event asks only while its thread has an open node (so the graph
 * has its arrays). */
static inline int vd_gone(const atom__dg *g, atom__dg_node u) {
  return !atom__dg_alive_fast(g, u);
}

/* Is offering u -> h, h the open transaction of the thread whose pred set is @p known, a no-op
 * known without asking the graph about edges: u is h, a known predecessor, or collected? */
static inline int pred_noop(const velodrome *v, const atom__dg_node *known, atom__dg_node u,
                            atom__dg_node h) {
  /* collected first: what the last accessor of a variable or lock usually is by now */
  return vd_gone(&v->g, u) || u == h || is_pred(known, u);
}

/* The usual event, an access, acquire or release inside a transaction that has its node, of a
 * thread and a variable or lock seen before, whose edges are all no-ops (from h itself, from a
 * node of the thread's pred set or from a collected one), is answered here with a few loads and
 * compares and no call, making the stores vd_access would make: a read when x's last reader is
 * the thread itself, or x has no reader, or one collected one (add_reader_thread would drop
 * it); a write when x has no reader or one that is such a node too (x's first reader is inline,
 * so both look at x's line only and a variable with more readers takes vd_access);
 * an acquire whose last releaser is such a node; any release; an END. A BEGIN goes straight
 * to vd_begin. Anything else takes vd_access or vd_event_full. */
static inline __attribute__((always_inline)) int vd_step(velodrome *v, const atom_ev *ev) {
  uint32_t t = ev->thread;
  if (VD_LIKELY(t < v->th_cap)) {
    vd_thread *th = &v->th[t];
    atom__dg_node h = th->cur;
    if (VD_LIKELY(h != ATOM__DG_NONE)) {
      /* accesses first, by one compare (READ and WRITE are adjacent kinds) */
      if (VD_LIKELY(ev->kind - ATOM_READ <= ATOM_WRITE - ATOM_READ)) {
        if (ev->target >= v->var_cap) return vd_event_full(v, ev);
        vd_var *x = &v->var[ev->target];
        if (pred_noop(v, th->pred, x->w.txn, h) && x->r.n <= 1) {
          /* No reader (r.txn NONE, collected by the same test) or one, in x's line. A read:
           * add_reader's outcome when that reader is t's or collected (t's or another thread's:
           * either way h replaces it). A write: the reader's edge is a no-op as well. Either
           * updates its own entry (acc[0] the writer, acc[1] the reader) if h is not in it yet
           * -- h's first access labels its edges -- and leaves one reader, h, or none. */
          uint32_t rd = ATOM_WRITE - ev->kind; /* 1: a read, 0: a write */
          atom__dg_node r = x->r.txn;
          if (vd_gone(&v->g, r) ||
              (rd ? x->r.thread == t : r == h || is_pred(th->pred, r))) {
            vd_acc *a = &x->acc[rd];
            if (a->txn != h) acc_set(a, h, ev);
            x->r.n = (uint16_t)rd;
            x->r.txn = h & -(atom__dg_node)rd; /* a write: NONE; by a mask, not a branch */
            return 0;
          }
        }
        return vd_access(v, th, t, h, ev);
      }
      switch (ev->kind) {
      case ATOM_ACQUIRE:
        if (ev->target >= v->lock_cap) break;
        if (pred_noop(v, th->pred, v->lock[ev->target].rel, h)) return 0;
        return vd_access(v, th, t, h, ev);
      case ATOM_RELEASE:
        if (ev->target >= v->lock_cap) break;
        v->lock[ev->target].rel = h;
        v->lock[ev->target].ev = *ev;
        return 0;
      case ATOM_END: /* vd_event_full's END, knowing that the thread is in a transaction */
        if (h == th->last) th->last_ev = *ev;
        th->in_txn = 0;
        th->cur = ATOM__DG_NONE;
        atom__dg_complete_live(&v->g, h); /* an open transaction's node is never collected */
        return 0;
      default:
        break;
      }
    } else if (ev->kind == ATOM_BEGIN) {
      /* vd_begin's usual case in line: a thread outside a transaction whose previous
       * transaction and forker are collected (no in-edge to add), a recycled graph slot and
       * room for its name. The out-of-line call saved and restored more registers than the
       * rest of this costs. */
      atom__dg *g = &v->g;
      uint32_t i = g->vx_free;
      if (VD_LIKELY(!th->in_txn && i != UINT32_MAX && i < v->txn_cap &&
                    vd_gone(g, th->last) && vd_gone(g, th->forker))) {
        /* atom__dg_add_node's recycled-slot case without its tests: velodrome's graph has no
         * node payload (vd_create) */
        g->vx_free = g->vx[i].aux;
        atom__dg_node_init_(g, i, &h);
        v->txn[i] = (vd_txn){t, 0, ev->index, ev->loc};
        th->in_txn = 1; /* begin_index and begin_loc are read only while cur is NONE: not so */
        memset(th->pred, 0, sizeof th->pred);
        th->cur = h;
        th->last = h;
        th->last_ev = *ev;
        th->forker = ATOM__DG_NONE;
        return 0;
      }
      return vd_begin(v, th, t, ev);
    }
  }
  return vd_event_full(v, ev);
}

static int vd_event(void *self, const atom_ev *ev) { return vd_step(self, ev); }

/* Whether vd_events fetches the slots of a block's variables ahead (0: never; for measuring). */
#ifndef VD_PREFETCH
#define VD_PREFETCH 1
#endif
/* Below this many variable slots (64 bytes each: 256 KB, a core's second-level cache)
 * the table stays in cache and the slots are not fetched ahead: the pass would cost about two
 * instructions an event for a miss the out-of-order core hides anyway. */
#ifndef VD_PREFETCH_MIN_VARS
#define VD_PREFETCH_MIN_VARS 4096
#endif

/* Ask for the slots of the variables of events [e, end). Any event's target is taken as a
 * variable here: a lock's or a BEGIN's (0) names one of the first slots, fetched for nothing
 * and cheaper than testing the kind. Nor is the target tested against the table's size: a
 * prefetch never faults, and the address is computed as an integer, so that one past the
 * table is no pointer arithmetic out of bounds. Out of line: in line, the compiler gave the
 * usual access of vd_events one more jump (cachegrind, 10^3 variables, where this never runs). */
static VD_NOINLINE void vd_fetch(const velodrome *v, const atom_ev *e, const atom_ev *end) {
  for (; e != end; e++)
    __builtin_prefetch(
        (const void *)((uintptr_t)v->var + (uintptr_t)e->target * sizeof(vd_var)), 1);
}

/* The block form: vd_event on each event in turn, exactly (the position of the first failure
 * in *failed, the events after it not taken). With a table of VD_PREFETCH_MIN_VARS slots or
 * more, a first pass asks for the slot of every event's variable before any event is taken (a
 * hint: a slot that moves as the table grows, or a target not seen yet, only wastes the
 * fetch): the misses of the whole block are then in flight together. A session's block holds
 * at most ATOM__BLOCK = 256 events, 256 lines: half of a 32 KB first-level cache. Fetched 8
 * events ahead inside the loop instead, the first 8 events of every block were never fetched
 * (doc/performance.md, "velodrome, round 7"). */
static int vd_events(void *self, const atom_ev *ev, size_t n, size_t *failed) {
  velodrome *v = self;
  const atom_ev *e = ev, *end = ev + n;
#if VD_PREFETCH
  if (v->var_cap >= VD_PREFETCH_MIN_VARS) vd_fetch(v, e, end);
#endif
  /* One pointer walks the block (the failed position is computed from it only on failure). */
  for (; e != end; e++) {
    int err = vd_step(v, e);
    if (err) {
      *failed = (size_t)(e - ev);
      return err;
    }
  }
  return 0;
}

static const char *const vd_keys[] = {NULL};

const atom_checker atom__checker_velodrome = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_ACQUIRE) |
        ATOM_KIND_BIT(ATOM_RELEASE) | ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) |
        ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_FENCE),
    "velodrome",
    "conflict serializability by a transaction graph and its cycles, online",
    vd_keys,
    vd_create,
    vd_event,
    NULL,
    vd_destroy,
    vd_stats,
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_SOUND | ATOM_CHECKER_PROP_COMPLETE,
    .on_events = vd_events,
};
