/* tso: TSO-serializability (002: Enea & Farzan, "On Atomicity in Presence of Non-atomic
 * Writes", TACAS 2016), of one TSO execution (mode=execution) or of a trace, that is of every
 * TSO execution that commits the trace's writes somewhere later (mode=trace).
 *
 * Events (doc/checkers/tso.md): WRITE is the issue of a write into the thread's store buffer; COMMIT(x)
 * is the commit of the thread's oldest pending write (FIFO, validated by the core); FENCE,
 * ACQUIRE and RELEASE drain the buffer: the writes still pending are committed just before them,
 * in order. A JOIN commits the joined thread's pending writes just before it (the core refuses
 * events of a joined thread). Writes still pending at the end are never committed.
 *
 * Conflict relation (002 §4.1 reconstructed, doc/checkers/tso.md): two events of different threads conflict
 * when they touch one variable and one is a commit, except that a read served from its own
 * thread's store buffer conflicts with no commit of another thread; issues conflict with nothing
 * in other threads; rel(l) -> acq(l), fork(u) -> events of u, events of u -> join(u). Events of
 * one thread conflict in program order, except: a commit conflicts only with its own write and
 * with later fences and lock operations; w(x) then r(y), y != x; and a buffered read r(x) (a w(x)
 * of the thread earlier, no fence or lock operation between) then r(y), y != x. A commit belongs
 * to the transaction of its write, whenever it happens.
 *
 * mode=execution: the conflict graph over transactions with incremental cycle detection
 * (support/digraph.h, shared with velodrome), one edge per direct conflict that is not implied by
 * others (see xe_* below). robust=yes adds the write-contraction graph of 002 §4.2 (every write
 * merged with its commit, every other event alone, program order kept whole): a cycle there means
 * the execution has no SC-equivalent ("non-robust").
 *
 * mode=trace: a write stands for issue and commit (002 §5). The event graph has a directed edge
 * where every execution orders the pair (same thread; rel -> acq, fork, join; a read before a
 * later write of another thread; a write whose thread drains before the other access) and an
 * undirected edge between a write and a later access of the variable by another thread inside
 * the write's window (before its thread's next drain). 002 Thm 5 / Cor. 1: the trace is not
 * TSO-serializable iff some cycle of the transaction graph can be oriented along its undirected
 * edges by a valid (acyclic) orientation of the event graph. A buffered read's conflicts with
 * other threads exist only in executions where it reads from memory, so they are conditional
 * links too, and each candidate cycle is checked exactly against the commit positions it needs
 * (ms_feasible). First the directed edges alone (digraph, at the event that closes a cycle); then
 * the search of 002 §6.2 for simple cycles (ms_* below), bounded by max_work. fenced=yes:
 * 002 §6.3, SC-serializability plus robustness.
 *
 * mode=auto (the default): events are buffered until the first COMMIT, which selects execution
 * semantics (the buffer is replayed); without any COMMIT the trace is analysed at finish. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "support/argval.h"
#include "support/msgbuf.h"
#include "core/kinds.h"
#include "support/digraph.h"

#define NONE32 UINT32_MAX
/* Private flag on the checker's own copies of events: a buffered read (never reported as is). */
#define EVF_BUF 0x80000000u

enum { MODE_AUTO = 0, MODE_EXEC = 1, MODE_TRACE = 2 };

static int is_drain(uint32_t kind) {
  return kind == ATOM_FENCE || kind == ATOM_ACQUIRE || kind == ATOM_RELEASE;
}

/* ---- messages ------------------------------------------------------------------------------ */

typedef struct mbuf {
  char s[1024];
  size_t off;
} mbuf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void madd(mbuf *m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  atom__msg_vappend(m->s, sizeof m->s, &m->off, fmt, ap);
  va_end(ap);
}

/* Distinct variables of the memory events among @p ev (at most @p cap). */
static size_t collect_vars(const atom_ev *ev, size_t n, uint32_t *out, size_t cap) {
  size_t k = 0;
  for (size_t i = 0; i < n && k < cap; i++) {
    if (ev[i].kind != ATOM_READ && ev[i].kind != ATOM_WRITE && ev[i].kind != ATOM_COMMIT) continue;
    size_t j = 0;
    while (j < k && out[j] != ev[i].target) j++;
    if (j == k) out[k++] = ev[i].target;
  }
  return k;
}

/* Reports (spec version 2): the witness events are the two events of every edge of the cycle,
 * in cycle order, and the edges name them; the message is a template ({eN}: witness event N)
 * that the session renders in its one notation. At most TSO_MAX_EDGES edges are handed over
 * (what the session stores of one report), the closing one always. */
#define TSO_MAX_EDGES 128
/* A message names at most this many edges (the rest are in the report's edge list), so that
 * the template always fits its buffer whole. */
#define TSO_MSG_EDGES 16

/* Append the text @p s to a template, doubling braces so that they read as themselves. */
static void madd_lit(mbuf *m, const char *s) {
  for (; *s; s++) madd(m, *s == '{' ? "{{" : *s == '}' ? "}}" : "%c", *s);
}

/* Which of n cycle edges a report keeps: the first TSO_MAX_EDGES - 1 and the last. */
static int edge_kept(size_t i, size_t n) { return i + 1 == n || i + 1 < TSO_MAX_EDGES; }

/* ---- a small map from variables to dense entries, cleared at once (a store-buffer view) ----- */

typedef struct vtab {
  uint64_t *slot; /* (var + 1) << 32 | entry; 0 = empty */
  size_t cap;     /* power of two, or 0 */
  uint32_t *var;  /* var of each entry */
  uint32_t *pos;  /* slot of each entry */
  size_t n, ecap;
} vtab;

static inline size_t vt_hash(uint32_t var) {
  uint64_t k = ((uint64_t)var + 1) * 0x9E3779B97F4A7C15ull;
  return (size_t)(k >> 29);
}

static uint32_t vt_find(const vtab *t, uint32_t var) {
  if (!t->n) return NONE32;
  size_t mask = t->cap - 1;
  uint64_t key = (uint64_t)var + 1;
  for (size_t i = vt_hash(var) & mask;; i = (i + 1) & mask) {
    uint64_t s = t->slot[i];
    if (!s) return NONE32;
    if ((s >> 32) == key) return (uint32_t)s;
  }
}

/* Room for one more entry (so that vt_add cannot fail). */
static int vt_reserve(vtab *t, atom__mem *m) {
  if (t->n + 1 > t->ecap) {
    size_t ncap = t->ecap ? t->ecap * 2 : 8;
    uint32_t *nv = atom__mem_alloc(m, ncap * sizeof *nv);
    uint32_t *np = nv ? atom__mem_alloc(m, ncap * sizeof *np) : NULL;
    if (!np) {
      atom__mem_free(m, nv, ncap * sizeof *nv);
      return ATOM_ENOMEM;
    }
    if (t->n) {
      memcpy(nv, t->var, t->n * sizeof *nv);
      memcpy(np, t->pos, t->n * sizeof *np);
    }
    atom__mem_free(m, t->var, t->ecap * sizeof *t->var);
    atom__mem_free(m, t->pos, t->ecap * sizeof *t->pos);
    t->var = nv;
    t->pos = np;
    t->ecap = ncap;
  }
  if ((t->n + 1) * 2 > t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 16;
    uint64_t *ns = atom__mem_calloc(m, ncap, sizeof *ns);
    if (!ns) return ATOM_ENOMEM;
    for (size_t e = 0; e < t->n; e++) {
      size_t i = vt_hash(t->var[e]) & (ncap - 1);
      while (ns[i]) i = (i + 1) & (ncap - 1);
      ns[i] = (((uint64_t)t->var[e] + 1) << 32) | e;
      t->pos[e] = (uint32_t)i;
    }
    atom__mem_free(m, t->slot, t->cap * sizeof *t->slot);
    t->slot = ns;
    t->cap = ncap;
  }
  return 0;
}

/* Add an absent var (after vt_reserve). @return its entry. */
static uint32_t vt_add(vtab *t, uint32_t var) {
  size_t mask = t->cap - 1, i = vt_hash(var) & mask;
  while (t->slot[i]) i = (i + 1) & mask;
  uint32_t e = (uint32_t)t->n++;
  t->slot[i] = (((uint64_t)var + 1) << 32) | e;
  t->var[e] = var;
  t->pos[e] = (uint32_t)i;
  return e;
}

static void vt_clear(vtab *t) {
  for (size_t e = 0; e < t->n; e++) t->slot[t->pos[e]] = 0;
  t->n = 0;
}

static void vt_free(vtab *t, atom__mem *m) {
  atom__mem_free(m, t->slot, t->cap * sizeof *t->slot);
  atom__mem_free(m, t->var, t->ecap * sizeof *t->var);
  atom__mem_free(m, t->pos, t->ecap * sizeof *t->pos);
  memset(t, 0, sizeof *t);
}

/* A growable array of uint32_t. */
typedef struct u32v {
  uint32_t *a;
  size_t n, cap;
} u32v;

static int u32v_push(u32v *v, atom__mem *m, uint32_t x) {
  if (v->n == v->cap && ATOM__GROW(m, v->a, v->cap, v->n + 1)) return ATOM_ENOMEM;
  v->a[v->n++] = x;
  return 0;
}

static void u32v_free(u32v *v, atom__mem *m) {
  atom__mem_free(m, v->a, v->cap * sizeof *v->a);
  memset(v, 0, sizeof *v);
}

/* ==== mode=execution: conflict graph of one TSO execution (002 §3-§4) ======================== */

/* An edge source: the node of a transaction and the event of it that makes the conflict. */
typedef struct xe_src {
  atom__dg_node n;
  atom_ev ev;
} xe_src;

/* Edge payload: the two conflicting events (src in the edge's source transaction). */
typedef struct xe_label {
  atom_ev src, dst;
} xe_label;

/* Node payload of the transaction graph. */
typedef struct xe_txn {
  uint32_t thread, unary;
  uint64_t begin_index, begin_loc;
  uint32_t pending; /* its writes not committed yet: commits may still add in-edges */
  uint32_t ended;
} xe_txn;

/* Node payload of the write-contraction graph (robust=yes). */
typedef struct xe_rnode {
  atom_ev ev;
  atom_txn_ref txn;
} xe_rnode;

/* Per (thread, variable) since the thread's last drain: the store-buffer view. */
typedef struct xe_bv {
  uint32_t pending; /* writes of the variable issued and not committed */
  uint32_t rb_mark; /* == thread epoch + 1: buffered read of it since the last non-read */
  xe_src wb;        /* last w(x) or buffered r(x) */
  xe_src rb;        /* last buffered r(x) since the thread's last non-read event */
} xe_bv;

/* A pending write, in the thread's FIFO. */
typedef struct xe_pw {
  uint32_t var, pad;
  atom__dg_node txn;  /* its transaction */
  atom__dg_node rnode; /* its write-contraction node (robust=yes) */
  atom_ev ev;
} xe_pw;

typedef struct xe_rd {
  uint32_t thread, pad;
  xe_src src;
} xe_rd;

/* Readers of a variable since its last commit: at most one (the latest) per thread. */
typedef struct xe_rdset {
  xe_rd *r;
  uint32_t n, cap;
} xe_rdset;

typedef struct xe_var {
  xe_src com;   /* last commit */
  xe_rdset rd;  /* reads from memory since then */
  xe_src rcom;  /* the same in the write-contraction graph */
  xe_rdset rrd;
} xe_var;

typedef struct xe_lock {
  xe_src rel, rrel; /* last release */
} xe_lock;

typedef struct xe_thread {
  atom__dg_node cur; /* open transaction */
  uint32_t in_txn;
  uint32_t epoch;    /* counts the thread's non-read events */
  uint32_t started;  /* it had a graph event: join(u) conflicts with u's events, if any */
  uint32_t pad;
  uint64_t begin_index, begin_loc;
  /* program order (see xe_event): the last non-read event, the last strong event (anything but
   * a write or a buffered read), buffered reads since the last non-read, the buffer view */
  xe_src nstar, sstar;
  vtab bt;
  xe_bv *bv;
  size_t bv_cap;
  u32v rb;    /* entries of bt with a buffered read since the last non-read */
  xe_pw *q;   /* pending writes, FIFO */
  size_t qhead, qlen, qcap;
  xe_src rcur; /* write-contraction graph: the node that the thread's next event follows */
} xe_thread;

typedef struct xe {
  atom_env *env;
  atom__mem *mem;
  const char *what; /* message prefix, or NULL */
  int robust;
  atom__dg g;  /* transactions */
  atom__dg rg; /* write contraction (robust=yes) */
  xe_thread *th;
  size_t th_cap;
  xe_var *var;
  size_t var_cap;
  xe_lock *lk;
  size_t lk_cap;
  /* report scratch */
  atom_txn_ref *refs;
  size_t refs_cap;
  atom_ev *wit;
  size_t wit_cap;
  atom_edge_ref eref[TSO_MAX_EDGES];
} xe;

static void xe_init(xe *x, atom_env *env, atom__mem *mem, int robust, const char *what) {
  memset(x, 0, sizeof *x);
  x->env = env;
  x->mem = mem;
  x->robust = robust;
  x->what = what;
  atom__dg_init(&x->g, mem, sizeof(xe_txn));
  atom__dg_set_edge_payload(&x->g, sizeof(xe_label));
  atom__dg_init(&x->rg, mem, sizeof(xe_rnode));
  atom__dg_set_edge_payload(&x->rg, sizeof(xe_label));
}

static void rdset_free(xe_rdset *s, atom__mem *m) {
  atom__mem_free(m, s->r, s->cap * sizeof *s->r);
  memset(s, 0, sizeof *s);
}

static void xe_thread_free(xe_thread *t, atom__mem *m) {
  vt_free(&t->bt, m);
  atom__mem_free(m, t->bv, t->bv_cap * sizeof *t->bv);
  t->bv = NULL;
  t->bv_cap = 0;
  u32v_free(&t->rb, m);
  atom__mem_free(m, t->q, t->qcap * sizeof *t->q);
  t->q = NULL;
  t->qcap = t->qlen = t->qhead = 0;
}

static void xe_free(xe *x) {
  atom__mem *m = x->mem;
  for (size_t i = 0; i < x->th_cap; i++) xe_thread_free(&x->th[i], m);
  for (size_t i = 0; i < x->var_cap; i++) {
    rdset_free(&x->var[i].rd, m);
    rdset_free(&x->var[i].rrd, m);
  }
  atom__mem_free(m, x->th, x->th_cap * sizeof *x->th);
  atom__mem_free(m, x->var, x->var_cap * sizeof *x->var);
  atom__mem_free(m, x->lk, x->lk_cap * sizeof *x->lk);
  atom__mem_free(m, x->refs, x->refs_cap * sizeof *x->refs);
  atom__mem_free(m, x->wit, x->wit_cap * sizeof *x->wit);
  atom__dg_destroy(&x->g);
  atom__dg_destroy(&x->rg);
  memset(x, 0, sizeof *x);
}

/* Report the cycle just found in graph @p g (transactions, or the write contraction when
 * @p robust), closed by the edge labelled @p closing. The cycle is told from the node the
 * closing edge enters, so that the closing edge comes last. */
static int xe_report(xe *x, atom__dg *g, const xe_label *closing, int robust) {
  const atom__dg_node *c;
  size_t n = atom__dg_cycle(g, &c);
  if (!n) return 0;
  if (ATOM__GROW(x->mem, x->refs, x->refs_cap, n) ||
      ATOM__GROW(x->mem, x->wit, x->wit_cap, 2 * TSO_MAX_EDGES))
    return ATOM_ENOMEM;
  size_t nref = 0, nwit = 0, ne = 0, nbuf = 0;
  for (size_t k = 0; k < n; k++) {
    atom_txn_ref r;
    if (robust) {
      r = ((const xe_rnode *)atom__dg_payload(g, c[k]))->txn;
    } else {
      const xe_txn *p = atom__dg_payload(g, c[k]);
      r = (atom_txn_ref){p->thread, p->unary, p->begin_index, p->begin_loc};
    }
    if (!nref || memcmp(&x->refs[nref - 1], &r, sizeof r) != 0) x->refs[nref++] = r;
    if (!edge_kept(k, n)) continue;
    const xe_label *lb = k + 1 < n ? atom__dg_cycle_edge_payload(g, k) : closing;
    if (!lb) continue;
    x->eref[ne++] = (atom_edge_ref){(uint32_t)nwit, (uint32_t)nwit + 1,
                                    k + 1 < n ? 0 : ATOM_EDGE_CLOSING, 0};
    x->wit[nwit++] = lb->src;
    x->wit[nwit++] = lb->dst;
  }
  if (nref > 1 && memcmp(&x->refs[0], &x->refs[nref - 1], sizeof x->refs[0]) == 0) nref--;
  mbuf m = {{0}, 0};
  if (x->what) {
    madd_lit(&m, x->what);
    madd(&m, ": ");
  }
  if (robust) madd(&m, "no SC-equivalent execution (a cycle of events once each write is "
                       "merged with its commit): ");
  madd(&m, "a cycle of %zu conflicts:", ne);
  for (size_t i = 0; i < ne && i < TSO_MSG_EDGES; i++)
    madd(&m, "%s{e%u} before {e%u}", i ? "; " : " ", x->eref[i].from, x->eref[i].to);
  if (ne > TSO_MSG_EDGES) madd(&m, "; and %zu more", ne - TSO_MSG_EDGES);
  for (size_t i = 0; i < nwit && i < 2 * TSO_MSG_EDGES; i++) {
    if (!(x->wit[i].flags & EVF_BUF)) continue;
    madd(&m, "%s{e%zu}", nbuf++ ? ", " : "; buffered reads: ", i);
  }
  for (size_t i = 0; i < nwit; i++) x->wit[i].flags &= ~EVF_BUF;
  uint32_t vars[8];
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = robust ? "non-robust" : "tso-cycle";
  spec.event_index = closing->dst.index;
  spec.txns = x->refs;
  spec.n_txns = nref;
  spec.events = x->wit;
  spec.n_events = nwit;
  spec.n_vars = collect_vars(x->wit, nwit, vars, 8);
  spec.vars = spec.n_vars ? vars : NULL;
  spec.message = m.s;
  spec.edges = x->eref;
  spec.n_edges = ne;
  return atom_env_report(x->env, &spec);
}

/* A write-contraction node that an event merged into it reaches back at the write's commit:
 * the write precedes the event in program order (or through a fork), the event precedes the
 * commit. Edges: the write to the event (program order or fork), the event to the commit
 * (closing). */
static int xe_report_self(xe *x, atom__dg_node n, const xe_label *lb) {
  const xe_rnode *p = atom__dg_payload(&x->rg, n);
  atom_ev wit[3] = {p->ev, lb->src, lb->dst};
  mbuf m = {{0}, 0};
  if (x->what) {
    madd_lit(&m, x->what);
    madd(&m, ": ");
  }
  madd(&m, "no SC-equivalent execution: {e0}, then {e1}, then {e2}, which commits the write "
           "of {e0}: the write and its commit cannot be one step");
  for (int i = 0; i < 3; i++) wit[i].flags &= ~EVF_BUF;
  atom_edge_ref edges[2] = {{0, 1, 0, 0}, {1, 2, ATOM_EDGE_CLOSING, 0}};
  uint32_t var = p->ev.target;
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "non-robust";
  spec.event_index = lb->dst.index;
  spec.txns = &p->txn;
  spec.n_txns = 1;
  spec.events = wit;
  spec.n_events = 3;
  spec.vars = &var;
  spec.n_vars = 1;
  spec.message = m.s;
  spec.edges = edges;
  spec.n_edges = 2;
  return atom_env_report(x->env, &spec);
}

/* Add from -> to in graph g for the conflict (from->ev, dst); a cycle is reported. The first
 * error is kept in *err and the event is still applied in full. */
static void xe_edge(xe *x, atom__dg *g, const xe_src *from, atom__dg_node to, const atom_ev *dst,
                    int *err) {
  if (from->n == ATOM__DG_NONE || to == ATOM__DG_NONE) return;
  xe_label lb = {from->ev, *dst};
  if (from->n == to && g == &x->rg && atom__dg_alive(g, to)) {
    /* Only a commit adds an edge into an existing node of the write contraction, and an event
     * merged into that node comes after its write: a real cycle (see xe_robust). */
    int rc = xe_report_self(x, to, &lb);
    if (rc < 0 && !*err) *err = rc;
    return;
  }
  int rc = atom__dg_add_edge_labeled(g, from->n, to, &lb);
  if (rc == 1) rc = xe_report(x, g, &lb, g == &x->rg);
  if (rc < 0 && !*err) *err = rc;
}

static int xe_grow(xe *x, uint32_t t, const atom_ev *ev) {
  size_t need = (size_t)t + 1;
  if (ev->kind == ATOM_FORK || ev->kind == ATOM_JOIN) {
    if ((size_t)ev->target + 1 > need) need = (size_t)ev->target + 1;
  }
  if (need > x->th_cap && ATOM__GROW(x->mem, x->th, x->th_cap, need)) return ATOM_ENOMEM;
  if ((ev->kind == ATOM_READ || ev->kind == ATOM_WRITE || ev->kind == ATOM_COMMIT) &&
      ev->target >= x->var_cap && ATOM__GROW(x->mem, x->var, x->var_cap, (size_t)ev->target + 1))
    return ATOM_ENOMEM;
  if ((ev->kind == ATOM_ACQUIRE || ev->kind == ATOM_RELEASE) && ev->target >= x->lk_cap &&
      ATOM__GROW(x->mem, x->lk, x->lk_cap, (size_t)ev->target + 1))
    return ATOM_ENOMEM;
  return 0;
}

/* Record (or replace) thread t's latest reader entry. */
static int rdset_put(xe_rdset *s, atom__mem *m, uint32_t t, const xe_src *src) {
  if (s->n && s->r[s->n - 1].thread == t) {
    s->r[s->n - 1].src = *src;
    return 0;
  }
  for (uint32_t i = 0; i < s->n; i++)
    if (s->r[i].thread == t) {
      s->r[i].src = *src;
      return 0;
    }
  if (s->n == s->cap) {
    uint32_t ncap = s->cap ? s->cap * 2 : 2;
    xe_rd *nr = atom__mem_realloc(m, s->r, s->cap * sizeof *nr, ncap * sizeof *nr);
    if (!nr) return ATOM_ENOMEM;
    s->r = nr;
    s->cap = ncap;
  }
  s->r[s->n++] = (xe_rd){t, 0, *src};
  return 0;
}

static xe_txn *xe_txn_of(xe *x, atom__dg_node n) { return atom__dg_payload(&x->g, n); }

static void xe_txn_done(xe *x, atom__dg_node n) {
  xe_txn *p = xe_txn_of(x, n);
  if (p && p->ended && !p->pending) atom__dg_complete(&x->g, n);
}

/* Commit thread t's oldest pending write (an explicit COMMIT, or one implied by a drain or a
 * join: then @p cev is made up with the drain's index and loc). */
static void xe_commit(xe *x, uint32_t t, const atom_ev *cev, int *err) {
  xe_thread *th = &x->th[t];
  if (!th->qlen) return; /* cannot happen: the core validates commits */
  xe_pw pw = th->q[th->qhead];
  th->qhead = (th->qhead + 1) % th->qcap;
  th->qlen--;
  xe_var *v = &x->var[pw.var];
  /* 002 §4.1: the commit conflicts with earlier commits of x and with earlier reads of x from
   * memory in other threads; the last commit and the readers since then imply the rest (two
   * commits of one thread are ordered through their writes, w -> w in program order). */
  xe_edge(x, &x->g, &v->com, pw.txn, cev, err);
  for (uint32_t i = 0; i < v->rd.n; i++) xe_edge(x, &x->g, &v->rd.r[i].src, pw.txn, cev, err);
  v->com = (xe_src){pw.txn, *cev};
  v->rd.n = 0;
  uint32_t e = vt_find(&th->bt, pw.var);
  if (e != NONE32 && th->bv[e].pending) th->bv[e].pending--;
  xe_txn *p = xe_txn_of(x, pw.txn);
  if (p && p->pending) p->pending--;
  xe_txn_done(x, pw.txn);
  if (x->robust) {
    xe_edge(x, &x->rg, &v->rcom, pw.rnode, cev, err);
    for (uint32_t i = 0; i < v->rrd.n; i++) xe_edge(x, &x->rg, &v->rrd.r[i].src, pw.rnode, cev, err);
    v->rcom = (xe_src){pw.rnode, *cev};
    v->rrd.n = 0;
    atom__dg_complete(&x->rg, pw.rnode);
  }
}

static void xe_commit_all(xe *x, uint32_t t, const atom_ev *at, int *err) {
  xe_thread *th = &x->th[t];
  while (th->qlen) {
    atom_ev cev = {ATOM_COMMIT, t, th->q[th->qhead].var, 0, at->index, at->loc};
    xe_commit(x, t, &cev, err);
  }
}

/* Edges into h from every earlier event of the thread: a non-read conflicts with all of them in
 * program order; nstar, sstar and the buffered reads since nstar reach the others. */
static void xe_po_all(xe *x, xe_thread *th, atom__dg_node h, const atom_ev *ev, int *err) {
  xe_edge(x, &x->g, &th->nstar, h, ev, err);
  xe_edge(x, &x->g, &th->sstar, h, ev, err);
  for (size_t i = 0; i < th->rb.n; i++) xe_edge(x, &x->g, &th->bv[th->rb.a[i]].rb, h, ev, err);
}

static void xe_after_nonread(xe_thread *th, atom__dg_node h, const atom_ev *ev, int strong) {
  th->nstar = (xe_src){h, *ev};
  if (strong) th->sstar = th->nstar;
  th->epoch++;
  th->rb.n = 0;
}

static int xe_new_txn(xe *x, uint32_t t, int unary, uint64_t index, uint64_t loc,
                      atom__dg_node *out) {
  atom__dg_node h;
  int rc = atom__dg_add_node(&x->g, &h);
  if (rc) return rc;
  xe_txn *p = xe_txn_of(x, h);
  *p = (xe_txn){t, (uint32_t)unary, index, loc, 0, 0};
  *out = h;
  return 0;
}

/* robust=yes: the write-contraction graph (002 §4.2). Program order is kept whole, so a thread's
 * events form a chain; an event with no in-edge but program order is merged into the node
 * before it (its out-edges then leave that node, which reaches it anyway). A write always gets a
 * node of its own, which its commit joins later. */
static int xe_robust(xe *x, uint32_t t, const atom_ev *ev, int served, int *err) {
  xe_thread *th = &x->th[t];
  const xe_src *cross = NULL;
  if (ev->kind == ATOM_READ && !served) cross = &x->var[ev->target].rcom;
  else if (ev->kind == ATOM_ACQUIRE) cross = &x->lk[ev->target].rrel;
  else if (ev->kind == ATOM_JOIN && x->th[ev->target].started) cross = &x->th[ev->target].rcur;
  int own = ev->kind == ATOM_WRITE || (cross && atom__dg_alive(&x->rg, cross->n));
  if (own) {
    atom__dg_node n;
    int rc = atom__dg_add_node(&x->rg, &n);
    if (rc) return rc;
    xe_rnode *p = atom__dg_payload(&x->rg, n);
    p->ev = *ev;
    p->ev.flags &= ~EVF_BUF;
    p->txn = th->in_txn ? (atom_txn_ref){t, 0, th->begin_index, th->begin_loc}
                        : (atom_txn_ref){t, 1, ev->index, ev->loc};
    xe_edge(x, &x->rg, &th->rcur, n, ev, err);
    if (cross) xe_edge(x, &x->rg, cross, n, ev, err);
    th->rcur = (xe_src){n, *ev};
    if (ev->kind == ATOM_WRITE) {
      th->q[(th->qhead + th->qlen - 1) % th->qcap].rnode = n;
    } else {
      atom__dg_complete(&x->rg, n);
    }
  }
  /* Later edges leave the event's node but name the event itself. */
  xe_src me = {th->rcur.n, *ev};
  int rc = 0;
  switch (ev->kind) {
  case ATOM_READ:
    if (!served) rc = rdset_put(&x->var[ev->target].rrd, x->mem, t, &me);
    break;
  case ATOM_RELEASE: x->lk[ev->target].rrel = me; break;
  case ATOM_FORK: x->th[ev->target].rcur = me; break;
  default: break;
  }
  return rc;
}

static int xe_event(xe *x, const atom_ev *ev) {
  uint32_t t = ev->thread;
  if (xe_grow(x, t, ev)) return ATOM_ENOMEM;
  xe_thread *th = &x->th[t];
  int err = 0, rc;

  switch (ev->kind) {
  case ATOM_BEGIN:
    th->in_txn = 1;
    th->begin_index = ev->index;
    th->begin_loc = ev->loc;
    th->cur = ATOM__DG_NONE;
    return xe_new_txn(x, t, 0, ev->index, ev->loc, &th->cur);
  case ATOM_END:
    if (th->in_txn && th->cur != ATOM__DG_NONE) {
      xe_txn *p = xe_txn_of(x, th->cur);
      if (p) p->ended = 1;
      xe_txn_done(x, th->cur);
    }
    th->in_txn = 0;
    th->cur = ATOM__DG_NONE;
    return 0;
  case ATOM_COMMIT:
    xe_commit(x, t, ev, &err);
    return err;
  case ATOM_WRITE: {
    /* Everything this event needs is reserved first: it cannot be half-applied. */
    if (vt_reserve(&th->bt, x->mem) || ATOM__GROW(x->mem, th->bv, th->bv_cap, th->bt.n + 1))
      return ATOM_ENOMEM;
    if (th->qlen == th->qcap) {
      size_t ncap = th->qcap ? th->qcap * 2 : 8;
      xe_pw *nq = atom__mem_alloc(x->mem, ncap * sizeof *nq);
      if (!nq) return ATOM_ENOMEM;
      for (size_t i = 0; i < th->qlen; i++) nq[i] = th->q[(th->qhead + i) % th->qcap];
      atom__mem_free(x->mem, th->q, th->qcap * sizeof *th->q);
      th->q = nq;
      th->qcap = ncap;
      th->qhead = 0;
    }
    break;
  }
  case ATOM_READ:
    if (th->rb.n == th->rb.cap && ATOM__GROW(x->mem, th->rb.a, th->rb.cap, th->rb.n + 1))
      return ATOM_ENOMEM;
    break;
  default:
    break;
  }

  /* Writes still in a buffer are committed just before a drain, or before the JOIN of their
   * thread (doc/checkers/tso.md: FENCE and lock operations drain; a joined thread has no later events). */
  if (is_drain(ev->kind)) xe_commit_all(x, t, ev, &err);
  if (ev->kind == ATOM_JOIN) {
    atom_ev at = *ev;
    at.thread = ev->target;
    xe_commit_all(x, ev->target, &at, &err);
  }

  /* The transaction performing the event. */
  atom__dg_node h = ATOM__DG_NONE;
  int unary = !th->in_txn;
  if (unary) {
    if ((rc = xe_new_txn(x, t, 1, ev->index, ev->loc, &h)) < 0) return rc;
  } else {
    if (th->cur == ATOM__DG_NONE &&
        (rc = xe_new_txn(x, t, 0, th->begin_index, th->begin_loc, &th->cur)) < 0)
      return rc;
    h = th->cur;
  }

  int served = 0;
  th->started = 1;
  switch (ev->kind) {
  case ATOM_READ: {
    xe_var *v = &x->var[ev->target];
    uint32_t e = vt_find(&th->bt, ev->target);
    int buffered = e != NONE32; /* 002 §4.1 "buffered read": a w(x) since the last drain */
    served = buffered && th->bv[e].pending > 0; /* served from the store buffer */
    atom_ev evb = *ev;
    if (buffered) evb.flags |= EVF_BUF;
    /* Program order: a read conflicts with earlier strong events and, when buffered, with the
     * thread's w(x) / buffered r(x) since the drain; not with w(y) or buffered r(y), y != x. */
    xe_edge(x, &x->g, &th->sstar, h, &evb, &err);
    if (buffered) xe_edge(x, &x->g, &th->bv[e].wb, h, &evb, &err);
    if (!served) {
      xe_edge(x, &x->g, &v->com, h, &evb, &err);
      xe_src me = {h, evb};
      if ((rc = rdset_put(&v->rd, x->mem, t, &me)) < 0 && !err) err = rc;
    }
    if (buffered) {
      xe_bv *b = &th->bv[e];
      b->wb = (xe_src){h, evb};
      b->rb = b->wb;
      if (b->rb_mark != th->epoch + 1) {
        b->rb_mark = th->epoch + 1;
        th->rb.a[th->rb.n++] = e; /* reserved above */
      }
    } else {
      th->sstar = (xe_src){h, evb};
    }
    break;
  }
  case ATOM_WRITE: {
    xe_po_all(x, th, h, ev, &err);
    xe_after_nonread(th, h, ev, 0);
    uint32_t e = vt_find(&th->bt, ev->target);
    if (e == NONE32) {
      e = vt_add(&th->bt, ev->target);
      memset(&th->bv[e], 0, sizeof th->bv[e]);
    }
    th->bv[e].wb = (xe_src){h, *ev};
    th->bv[e].pending++;
    th->q[(th->qhead + th->qlen) % th->qcap] = (xe_pw){ev->target, 0, h, ATOM__DG_NONE, *ev};
    th->qlen++;
    xe_txn_of(x, h)->pending++;
    break;
  }
  case ATOM_FENCE:
  case ATOM_ACQUIRE:
  case ATOM_RELEASE:
    xe_po_all(x, th, h, ev, &err);
    if (ev->kind == ATOM_ACQUIRE) xe_edge(x, &x->g, &x->lk[ev->target].rel, h, ev, &err);
    if (ev->kind == ATOM_RELEASE) x->lk[ev->target].rel = (xe_src){h, *ev};
    xe_after_nonread(th, h, ev, 1);
    vt_clear(&th->bt);
    break;
  case ATOM_FORK: {
    xe_po_all(x, th, h, ev, &err);
    xe_after_nonread(th, h, ev, 1);
    /* fork(u) conflicts with every event of u: as if u's program order started with it. */
    xe_thread *ch = &x->th[ev->target];
    ch->nstar = ch->sstar = (xe_src){h, *ev};
    break;
  }
  case ATOM_JOIN: {
    /* Every event of u conflicts with join(u); u's nstar, sstar and buffered reads reach them
     * (a thread without events has no conflict with its fork or join). */
    xe_thread *ch = &x->th[ev->target];
    if (ch->started) {
      /* u's nstar or sstar may still be its fork (u did only reads, or only writes): the fork
       * reaches the join through u's own events, and an edge fork -> join would name two events
       * that do not conflict. */
      xe_src fn = ch->nstar, fs = ch->sstar;
      if (fn.ev.thread != ev->target) ch->nstar.n = ATOM__DG_NONE;
      if (fs.ev.thread != ev->target) ch->sstar.n = ATOM__DG_NONE;
      xe_po_all(x, ch, h, ev, &err);
      ch->nstar = fn;
      ch->sstar = fs;
    }
    xe_po_all(x, th, h, ev, &err);
    xe_after_nonread(th, h, ev, 1);
    break;
  }
  default:
    break;
  }

  if (x->robust && (rc = xe_robust(x, t, ev, served, &err)) < 0 && !err) err = rc;

  if (unary) {
    xe_txn *p = xe_txn_of(x, h);
    if (p) p->ended = 1;
    xe_txn_done(x, h);
  }
  return err;
}

/* ==== mode=trace: the trace, its event graph and its transaction graph (002 §5) ============== */

#define TG_BUF 0x1u /* a buffered read: a w(x) of its thread earlier, no drain between */

/* A graph event of the trace (BEGIN/END only delimit transactions; COMMIT is not part of a
 * trace). Its number in tg.ev is its position: every directed edge goes forward. */
typedef struct tg_ev {
  uint32_t kind, thread, target, txn;
  uint32_t d;  /* a write: position of the drain (or join of its thread) before which it is
                  committed in every execution; NONE32 if none follows */
  uint32_t flags;
  uint32_t wr; /* a buffered read: the write of its thread it may read from the buffer (the
                  read is served from memory iff that write is committed before it) */
  uint32_t pad;
  uint64_t index, loc;
} tg_ev;

typedef struct tg_txn {
  uint32_t thread, unary;
  uint64_t begin_index, begin_loc;
  uint32_t has_write, last_kind; /* for fenced=yes */
} tg_txn;

typedef struct tg_wgroup {
  uint32_t thread, start, len; /* ws[start .. start+len): writes of one variable by one thread */
} tg_wgroup;

typedef struct tg {
  tg_ev *ev;
  size_t nev, ev_cap;
  tg_txn *tx;
  size_t ntx, tx_cap;
  /* E: directed event edges, present in every execution, kept transitively reduced as for
   * the execution (CSR, forward); F: those of them that also order the two events' effects
   * (see tb_edge) */
  u32v el, fl;        /* pairs src, dst while building */
  uint32_t *e_off, *e_adj, *f_off, *f_adj;
  size_t ne, nf;
  /* D: directed transaction edges (CSR) */
  u32v dl;
  uint32_t *d_off, *d_adj;
  size_t nd;
  /* accesses of each variable in trace order, and each access's place among them */
  uint32_t nvar;
  uint32_t *acc_off, *acc, *acc_idx;
  uint32_t *acc_other; /* acc index -> the next access of the variable by another thread (or the
                          end of the variable's accesses) */
  size_t nacc;
  /* writes of each variable grouped by thread (for the writes pending at a position) */
  uint32_t *wg_off;
  tg_wgroup *wg;
  uint32_t *ws;
  size_t nwg, nws;
} tg;

static void tg_free(tg *T, atom__mem *m) {
  atom__mem_free(m, T->ev, T->ev_cap * sizeof *T->ev);
  atom__mem_free(m, T->tx, T->tx_cap * sizeof *T->tx);
  u32v_free(&T->el, m);
  u32v_free(&T->fl, m);
  u32v_free(&T->dl, m);
  atom__mem_free(m, T->e_off, (T->nev + 1) * sizeof *T->e_off);
  atom__mem_free(m, T->e_adj, T->ne * sizeof *T->e_adj);
  atom__mem_free(m, T->f_off, (T->nev + 1) * sizeof *T->f_off);
  atom__mem_free(m, T->f_adj, T->nf * sizeof *T->f_adj);
  atom__mem_free(m, T->d_off, (T->ntx + 1) * sizeof *T->d_off);
  atom__mem_free(m, T->d_adj, T->nd * sizeof *T->d_adj);
  atom__mem_free(m, T->acc_off, ((size_t)T->nvar + 1) * sizeof *T->acc_off);
  atom__mem_free(m, T->acc, T->nacc * sizeof *T->acc);
  atom__mem_free(m, T->acc_other, (T->nacc ? T->nacc : 1) * sizeof *T->acc_other);
  atom__mem_free(m, T->acc_idx, T->nev * sizeof *T->acc_idx);
  atom__mem_free(m, T->wg_off, ((size_t)T->nvar + 1) * sizeof *T->wg_off);
  atom__mem_free(m, T->wg, T->nwg * sizeof *T->wg);
  atom__mem_free(m, T->ws, T->nws * sizeof *T->ws);
  memset(T, 0, sizeof *T);
}

static atom_ev tg_atom_ev(const tg *T, uint32_t e) {
  const tg_ev *g = &T->ev[e];
  atom_ev r = {g->kind, g->thread, g->target, 0, g->index, g->loc};
  if (g->flags & TG_BUF) r.flags = EVF_BUF;
  return r;
}

static atom_txn_ref tg_ref(const tg *T, uint32_t txn) {
  const tg_txn *x = &T->tx[txn];
  return (atom_txn_ref){x->thread, x->unary, x->begin_index, x->begin_loc};
}

/* Building state, per thread and per variable. */
typedef struct tb_bv {
  uint32_t wb;      /* last w(x) or buffered r(x) since the drain */
  uint32_t lastw;   /* last w(x) since the drain */
  uint32_t rb;      /* last buffered r(x) since the last non-read */
  uint32_t rb_mark; /* == epoch + 1 while rb is current */
} tb_bv;

typedef struct tb_thread {
  uint32_t txn; /* open transaction, NONE32 outside */
  uint32_t nstar, sstar, epoch;
  uint32_t started; /* it had a graph event (see xe_thread) */
  vtab bt;
  tb_bv *bv;
  size_t bv_cap;
  u32v rb;   /* bt entries with a buffered read since the last non-read */
  u32v pend; /* writes since the last drain */
} tb_thread;

typedef struct tb_pair {
  uint32_t thread, ev;
} tb_pair;

typedef struct tb_pairs {
  tb_pair *p;
  uint32_t n, cap;
} tb_pairs;

typedef struct tb_var {
  tb_pairs rd; /* the last read of each thread */
  tb_pairs st; /* the last settled write of each thread (its commit precedes a drain) */
} tb_var;

typedef struct tb {
  struct tso *c;
  tg *T;
  tb_thread *th;
  size_t nth;
  tb_var *var;
  size_t nvar_cap;
  uint32_t *rel; /* last release of each lock */
  size_t nlk;
  int phase1;    /* feed the transaction graph to g1 */
  atom__dg g1;   /* phase 1: directed transaction edges only */
  atom__dg_node *txn_node;
  size_t txn_node_cap;
  size_t cycles;
} tb;

static int pairs_put(tb_pairs *s, atom__mem *m, uint32_t thread, uint32_t ev) {
  for (uint32_t i = s->n; i-- > 0;)
    if (s->p[i].thread == thread) {
      s->p[i].ev = ev;
      return 0;
    }
  if (s->n == s->cap) {
    uint32_t ncap = s->cap ? s->cap * 2 : 2;
    tb_pair *np = atom__mem_realloc(m, s->p, s->cap * sizeof *np, ncap * sizeof *np);
    if (!np) return ATOM_ENOMEM;
    s->p = np;
    s->cap = ncap;
  }
  s->p[s->n++] = (tb_pair){thread, ev};
  return 0;
}

/* ==== the checker =========================================================================== */

typedef struct tso {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int mode;   /* asked: MODE_AUTO, MODE_EXEC, MODE_TRACE */
  int active; /* decided: MODE_EXEC once commits are expected, else MODE_AUTO / MODE_TRACE */
  int fenced, robust;
  uint64_t max_work;
  xe *x;         /* execution engine (MODE_EXEC) */
  atom_ev *buf;  /* events kept for trace analysis (or for replay when the first COMMIT comes) */
  size_t nbuf, buf_cap;
  uint64_t last_index;
  uint64_t work; /* search steps spent by the last trace analysis (stats) */
} tso;

/* ---- building the trace graph ---- */

/* Phase 1 (002 §6.2 "if the directed edges of CG already form a cycle"): report a cycle of
 * directed transaction edges, closed by the event edge src -> dst. */
static int tb_report(tb *b, uint32_t src, uint32_t dst) {
  tg *T = b->T;
  tso *c = b->c;
  const atom__dg_node *cy;
  size_t n = atom__dg_cycle(&b->g1, &cy);
  if (!n) return 0;
  atom_txn_ref *refs = atom__mem_calloc(c->mem, n, sizeof *refs);
  atom_ev *wit = atom__mem_calloc(c->mem, 2 * TSO_MAX_EDGES, sizeof *wit);
  atom_edge_ref *eref = atom__mem_calloc(c->mem, TSO_MAX_EDGES, sizeof *eref);
  int rc = ATOM_ENOMEM;
  if (!refs || !wit || !eref) goto out;
  /* told from the transaction the closing edge enters: the closing edge comes last */
  size_t nwit = 0, ne = 0, nbuf = 0;
  for (size_t k = 0; k < n; k++) {
    refs[k] = tg_ref(T, *(const uint32_t *)atom__dg_payload(&b->g1, cy[k]));
    if (!edge_kept(k, n)) continue;
    uint32_t lb[2] = {src, dst};
    const uint32_t *p = k + 1 < n ? atom__dg_cycle_edge_payload(&b->g1, k) : lb;
    if (!p) continue;
    eref[ne++] = (atom_edge_ref){(uint32_t)nwit, (uint32_t)nwit + 1,
                                 k + 1 < n ? 0 : ATOM_EDGE_CLOSING, 0};
    wit[nwit++] = tg_atom_ev(T, p[0]);
    wit[nwit++] = tg_atom_ev(T, p[1]);
  }
  mbuf m = {{0}, 0};
  madd(&m, "a cycle of %zu directed edges (conflicts that every execution of the trace has):",
       ne);
  for (size_t i = 0; i < ne && i < TSO_MSG_EDGES; i++)
    madd(&m, "%s{e%u} before {e%u}", i ? "; " : " ", eref[i].from, eref[i].to);
  if (ne > TSO_MSG_EDGES) madd(&m, "; and %zu more", ne - TSO_MSG_EDGES);
  for (size_t i = 0; i < nwit; i++) {
    if ((wit[i].flags & EVF_BUF) && i < 2 * TSO_MSG_EDGES)
      madd(&m, "%s{e%zu}", nbuf++ ? ", " : "; buffered reads: ", i);
    wit[i].flags = 0;
  }
  uint32_t vars[8];
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "tso-cycle";
  spec.event_index = T->ev[dst].index;
  spec.txns = refs;
  spec.n_txns = n;
  spec.events = wit;
  spec.n_events = nwit;
  spec.n_vars = collect_vars(wit, nwit, vars, 8);
  spec.vars = spec.n_vars ? vars : NULL;
  spec.message = m.s;
  spec.edges = eref;
  spec.n_edges = ne;
  rc = atom_env_report(c->env, &spec);
out:
  atom__mem_free(c->mem, refs, n * sizeof *refs);
  atom__mem_free(c->mem, wit, 2 * TSO_MAX_EDGES * sizeof *wit);
  atom__mem_free(c->mem, eref, TSO_MAX_EDGES * sizeof *eref);
  return rc;
}

/* A directed event edge src -> dst (src earlier), and its transaction edge. The edge is
 * *forced* when it also orders the events' effects in every execution. The effect of a write
 * is its commit; of a read served from memory, the read; of a read served from the buffer, a
 * point just after the commit of the latest earlier write of its variable by its thread (the
 * one it reads from; its thread's later writes commit after that one, its later drains too).
 * Every conflict of an execution goes forward in effect order, so a cycle needs an edge that
 * goes backward, and only edges that are not forced can. Those are w -> fork and w -> join of
 * the same thread and r -> fork, r -> join for a buffered read r (neither drains the buffer);
 * w(x) -> r(x) is forced. Forced edges decide which segments of a cycle are free. */
static int tb_edge(tb *b, uint32_t src, uint32_t dst, int forced) {
  if (src == NONE32) return 0;
  tg *T = b->T;
  atom__mem *m = b->c->mem;
  if (u32v_push(&T->el, m, src) || u32v_push(&T->el, m, dst)) return ATOM_ENOMEM;
  if (forced && (u32v_push(&T->fl, m, src) || u32v_push(&T->fl, m, dst))) return ATOM_ENOMEM;
  uint32_t ts = T->ev[src].txn, td = T->ev[dst].txn;
  if (ts == td) return 0;
  if (u32v_push(&T->dl, m, ts) || u32v_push(&T->dl, m, td)) return ATOM_ENOMEM;
  if (!b->phase1) return 0;
  uint32_t lb[2] = {src, dst};
  int rc = atom__dg_add_edge_labeled(&b->g1, b->txn_node[ts], b->txn_node[td], lb);
  if (rc == 1) {
    b->cycles++;
    rc = tb_report(b, src, dst);
  }
  return rc < 0 ? rc : 0;
}

static int tb_new_txn(tb *b, uint32_t t, int unary, uint64_t index, uint64_t loc, uint32_t *out) {
  tg *T = b->T;
  atom__mem *m = b->c->mem;
  if (T->ntx >= NONE32 - 1)
    return atom_env_error(b->c->env, ATOM_ELIMIT, "tso: more than %u transactions in a trace",
                          NONE32 - 2);
  if (ATOM__GROW(m, T->tx, T->tx_cap, T->ntx + 1)) return ATOM_ENOMEM;
  uint32_t id = (uint32_t)T->ntx;
  T->tx[id] = (tg_txn){t, (uint32_t)unary, index, loc, 0, 0};
  if (b->phase1) {
    if (ATOM__GROW(m, b->txn_node, b->txn_node_cap, T->ntx + 1)) return ATOM_ENOMEM;
    int rc = atom__dg_add_node(&b->g1, &b->txn_node[id]);
    if (rc) return rc;
    *(uint32_t *)atom__dg_payload(&b->g1, b->txn_node[id]) = id;
  }
  T->ntx++;
  *out = id;
  return 0;
}

static void tb_txn_done(tb *b, uint32_t txn) {
  if (b->phase1) atom__dg_complete(&b->g1, b->txn_node[txn]);
}

/* Edges into g from every earlier event of thread th (see xe_po_all). @p w_forced: whether the
 * effects of the thread's writes and buffered reads come before g (false for fork and for the
 * joiner's own join, which do not drain). */
static int tb_po_all(tb *b, const tb_thread *th, uint32_t g, int w_forced) {
  int rc;
  int nf = w_forced || th->nstar == NONE32 || b->T->ev[th->nstar].kind != ATOM_WRITE;
  if ((rc = tb_edge(b, th->nstar, g, nf)) || (rc = tb_edge(b, th->sstar, g, 1))) return rc;
  for (size_t i = 0; i < th->rb.n; i++)
    if ((rc = tb_edge(b, th->bv[th->rb.a[i]].rb, g, w_forced))) return rc;
  return 0;
}

/* A drain of thread u at position g: its pending writes are committed before g in every
 * execution: their windows end at g and they become settled (ordered before every later access
 * of their variable by another thread). */
static int tb_drain(tb *b, tb_thread *u, uint32_t uid, uint32_t g) {
  tg *T = b->T;
  for (size_t i = 0; i < u->pend.n; i++) T->ev[u->pend.a[i]].d = g;
  u->pend.n = 0;
  for (size_t e = 0; e < u->bt.n; e++) {
    if (u->bv[e].lastw == NONE32) continue;
    int rc = pairs_put(&b->var[u->bt.var[e]].st, b->c->mem, uid, u->bv[e].lastw);
    if (rc) return rc;
  }
  vt_clear(&u->bt);
  return 0;
}

static void tb_after_nonread(tb_thread *th, uint32_t g, int strong) {
  th->nstar = g;
  if (strong) th->sstar = g;
  th->epoch++;
  th->rb.n = 0;
}

/* One graph event (R, W, FENCE, ACQUIRE, RELEASE, FORK, JOIN) at position g. */
static int tb_graph_event(tb *b, const atom_ev *r, uint32_t g) {
  tg *T = b->T;
  atom__mem *m = b->c->mem;
  tb_thread *th = &b->th[r->thread];
  tg_ev *e = &T->ev[g];
  int rc;
  th->started = 1;
  switch (r->kind) {
  case ATOM_READ: {
    tb_var *v = &b->var[r->target];
    uint32_t k = vt_find(&th->bt, r->target);
    if (k != NONE32) {
      e->flags |= TG_BUF;
      e->wr = th->bv[k].lastw;
    }
    if ((rc = tb_edge(b, th->sstar, g, 1))) return rc;
    if (k != NONE32 && (rc = tb_edge(b, th->bv[k].wb, g, 1))) return rc;
    if (k == NONE32) {
      /* A write of another thread committed before its thread's drain, and the drain came
       * before this read: ordered the same way in every execution. A buffered read has such
       * conflicts only when it is served from memory: they are links (ms_links), not edges. */
      for (uint32_t i = 0; i < v->st.n; i++)
        if (v->st.p[i].thread != r->thread && (rc = tb_edge(b, v->st.p[i].ev, g, 1))) return rc;
      if ((rc = pairs_put(&v->rd, m, r->thread, g))) return rc;
    }
    if (k != NONE32) {
      tb_bv *bv = &th->bv[k];
      bv->wb = bv->rb = g;
      if (bv->rb_mark != th->epoch + 1) {
        bv->rb_mark = th->epoch + 1;
        if ((rc = u32v_push(&th->rb, m, k))) return rc;
      }
    } else {
      th->sstar = g;
    }
    return 0;
  }
  case ATOM_WRITE: {
    tb_var *v = &b->var[r->target];
    if ((rc = tb_po_all(b, th, g, 1))) return rc;
    /* A read (from memory) before a later write of another thread: the commit follows the
     * issue. */
    for (uint32_t i = 0; i < v->rd.n; i++)
      if (v->rd.p[i].thread != r->thread && (rc = tb_edge(b, v->rd.p[i].ev, g, 1))) return rc;
    for (uint32_t i = 0; i < v->st.n; i++)
      if (v->st.p[i].thread != r->thread && (rc = tb_edge(b, v->st.p[i].ev, g, 1))) return rc;
    tb_after_nonread(th, g, 0);
    uint32_t k = vt_find(&th->bt, r->target);
    if (k == NONE32) {
      if (vt_reserve(&th->bt, m) || ATOM__GROW(m, th->bv, th->bv_cap, th->bt.n + 1))
        return ATOM_ENOMEM;
      k = vt_add(&th->bt, r->target);
      th->bv[k] = (tb_bv){NONE32, NONE32, NONE32, 0};
    }
    th->bv[k].wb = th->bv[k].lastw = g;
    e->d = NONE32;
    return u32v_push(&th->pend, m, g);
  }
  case ATOM_FENCE:
  case ATOM_ACQUIRE:
  case ATOM_RELEASE:
    if ((rc = tb_po_all(b, th, g, 1))) return rc;
    if (r->kind == ATOM_ACQUIRE && (rc = tb_edge(b, b->rel[r->target], g, 1))) return rc;
    if (r->kind == ATOM_RELEASE) b->rel[r->target] = g;
    if ((rc = tb_drain(b, th, r->thread, g))) return rc;
    tb_after_nonread(th, g, 1);
    return 0;
  case ATOM_FORK: {
    if ((rc = tb_po_all(b, th, g, 0))) return rc;
    tb_after_nonread(th, g, 1);
    tb_thread *ch = &b->th[r->target];
    ch->nstar = ch->sstar = g;
    return 0;
  }
  case ATOM_JOIN: {
    tb_thread *ch = &b->th[r->target];
    if ((rc = tb_drain(b, ch, r->target, g))) return rc;
    if (ch->started) {
      /* as in xe_event: u's nstar or sstar may still be its fork, which reaches g through u's
       * own events; an edge fork -> join would name two events that do not conflict */
      uint32_t fn = ch->nstar, fs = ch->sstar;
      if (fn != NONE32 && T->ev[fn].thread != r->target) ch->nstar = NONE32;
      if (fs != NONE32 && T->ev[fs].thread != r->target) ch->sstar = NONE32;
      rc = tb_po_all(b, ch, g, 1);
      ch->nstar = fn;
      ch->sstar = fs;
      if (rc) return rc;
    }
    if ((rc = tb_po_all(b, th, g, 0))) return rc;
    tb_after_nonread(th, g, 1);
    return 0;
  }
  default:
    return 0;
  }
}

static void tb_free(tb *b) {
  atom__mem *m = b->c->mem;
  for (size_t i = 0; b->th && i < b->nth; i++) {
    vt_free(&b->th[i].bt, m);
    atom__mem_free(m, b->th[i].bv, b->th[i].bv_cap * sizeof *b->th[i].bv);
    u32v_free(&b->th[i].rb, m);
    u32v_free(&b->th[i].pend, m);
  }
  atom__mem_free(m, b->th, b->nth * sizeof *b->th);
  if (b->var)
    for (size_t i = 0; i < b->T->nvar; i++) {
      atom__mem_free(m, b->var[i].rd.p, b->var[i].rd.cap * sizeof(tb_pair));
      atom__mem_free(m, b->var[i].st.p, b->var[i].st.cap * sizeof(tb_pair));
    }
  atom__mem_free(m, b->var, b->nvar_cap * sizeof *b->var);
  atom__mem_free(m, b->rel, b->nlk * sizeof *b->rel);
  atom__mem_free(m, b->txn_node, b->txn_node_cap * sizeof *b->txn_node);
  atom__dg_destroy(&b->g1);
}

/* Counting sort of @p n keys < @p nk: out[] receives 0..n-1 ordered by key (stable);
 * off[0..nk] the start of each key. */
static int csr_build(atom__mem *m, const uint32_t *key, size_t n, size_t nk, uint32_t **off_out,
                     uint32_t **out) {
  uint32_t *off = atom__mem_calloc(m, nk + 1, sizeof *off);
  uint32_t *o = n ? atom__mem_alloc(m, n * sizeof *o) : NULL;
  if (!off || (n && !o)) {
    atom__mem_free(m, off, (nk + 1) * sizeof *off);
    atom__mem_free(m, o, n * sizeof *o);
    return ATOM_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) off[key[i] + 1]++;
  for (size_t k = 0; k < nk; k++) off[k + 1] += off[k];
  for (size_t i = 0; i < n; i++) o[off[key[i]]++] = (uint32_t)i;
  for (size_t k = nk; k > 0; k--) off[k] = off[k - 1];
  off[0] = 0;
  *off_out = off;
  *out = o;
  return 0;
}

/* Adjacency (CSR) of the pairs in el (src, dst, src, dst, ...) over nn sources. */
static int adj_build(atom__mem *m, const u32v *el, size_t nn, uint32_t **off, uint32_t **adj,
                     size_t *nadj) {
  size_t n = el->n / 2;
  uint32_t *key = n ? atom__mem_alloc(m, n * sizeof *key) : NULL;
  if (n && !key) return ATOM_ENOMEM;
  for (size_t i = 0; i < n; i++) key[i] = el->a[2 * i];
  uint32_t *order = NULL;
  int rc = csr_build(m, key, n, nn, off, &order);
  atom__mem_free(m, key, n * sizeof *key);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) order[i] = el->a[2 * order[i] + 1];
  *adj = order;
  *nadj = n;
  return 0;
}

/* Accesses per variable (trace order) and writes per (variable, thread). */
static int tg_index(tg *T, atom__mem *m, uint32_t nthreads) {
  size_t na = 0, nw = 0;
  for (size_t i = 0; i < T->nev; i++) {
    if (T->ev[i].kind == ATOM_READ || T->ev[i].kind == ATOM_WRITE) na++;
    if (T->ev[i].kind == ATOM_WRITE) nw++;
  }
  uint32_t *key = atom__mem_alloc(m, (na + 1) * sizeof *key);
  uint32_t *ids = atom__mem_alloc(m, (na + 1) * sizeof *ids);
  T->acc_idx = T->nev ? atom__mem_alloc(m, T->nev * sizeof *T->acc_idx) : NULL;
  int rc = ATOM_ENOMEM;
  uint32_t *order = NULL, *toff = NULL, *tord = NULL;
  if (!key || !ids || (T->nev && !T->acc_idx)) goto out;
  size_t k = 0;
  for (size_t i = 0; i < T->nev; i++)
    if (T->ev[i].kind == ATOM_READ || T->ev[i].kind == ATOM_WRITE) {
      ids[k] = (uint32_t)i;
      key[k++] = T->ev[i].target;
    }
  if ((rc = csr_build(m, key, na, T->nvar, &T->acc_off, &order))) goto out;
  for (size_t i = 0; i < na; i++) {
    order[i] = ids[order[i]];
    T->acc_idx[order[i]] = (uint32_t)i;
  }
  T->acc = order;
  order = NULL;
  T->nacc = na;
  T->acc_other = atom__mem_alloc(m, (na ? na : 1) * sizeof *T->acc_other);
  if (!T->acc_other) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  for (uint32_t x = 0; x < T->nvar; x++)
    for (uint32_t i = T->acc_off[x + 1], end = i; i-- > T->acc_off[x];) {
      int next_other = i + 1 == end || T->ev[T->acc[i + 1]].thread != T->ev[T->acc[i]].thread;
      T->acc_other[i] = next_other ? i + 1 : T->acc_other[i + 1];
    }
  /* writes: stable sort by thread, then by variable: (variable, thread, position) */
  k = 0;
  for (size_t i = 0; i < T->nev; i++)
    if (T->ev[i].kind == ATOM_WRITE) {
      ids[k] = (uint32_t)i;
      key[k++] = T->ev[i].thread;
    }
  if ((rc = csr_build(m, key, nw, nthreads, &toff, &tord))) goto out;
  for (size_t i = 0; i < nw; i++) tord[i] = ids[tord[i]];
  for (size_t i = 0; i < nw; i++) key[i] = T->ev[tord[i]].target;
  if ((rc = csr_build(m, key, nw, T->nvar, &T->wg_off, &order))) goto out;
  for (size_t i = 0; i < nw; i++) order[i] = tord[order[i]];
  T->ws = order;
  order = NULL;
  T->nws = nw;
  /* groups: runs of one thread inside each variable's writes */
  size_t ng = 0;
  for (size_t i = 0; i < nw; i++)
    if (i == 0 || T->ev[T->ws[i]].target != T->ev[T->ws[i - 1]].target ||
        T->ev[T->ws[i]].thread != T->ev[T->ws[i - 1]].thread)
      ng++;
  T->wg = atom__mem_alloc(m, (ng ? ng : 1) * sizeof *T->wg);
  if (!T->wg) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  T->nwg = ng ? ng : 1;
  uint32_t *goff = T->wg_off; /* reused: per variable, first group */
  size_t gi = 0;
  uint32_t x = 0;
  for (size_t i = 0; i < nw; i++) {
    const tg_ev *w = &T->ev[T->ws[i]];
    if (i == 0 || w->target != T->ev[T->ws[i - 1]].target || w->thread != T->ev[T->ws[i - 1]].thread) {
      while (x <= w->target) goff[x++] = (uint32_t)gi;
      T->wg[gi++] = (tg_wgroup){w->thread, (uint32_t)i, 0};
    }
    T->wg[gi - 1].len++;
  }
  while (x <= T->nvar) goff[x++] = (uint32_t)gi;
  rc = 0;
out:
  atom__mem_free(m, key, (na + 1) * sizeof *key);
  atom__mem_free(m, ids, (na + 1) * sizeof *ids);
  atom__mem_free(m, toff, ((size_t)nthreads + 1) * sizeof *toff);
  atom__mem_free(m, tord, nw * sizeof *tord);
  atom__mem_free(m, order, nw * sizeof *order);
  return rc;
}

/* ==== 002 §6.2: cycles through undirected edges ============================================== */

/* The search runs on nodes (transactions for TSO-serializability; single events for
 * robustness) joined by the directed edges D that every execution has, and on *links*: the
 * conflicts whose presence or direction depends on where the commits are placed.
 *  - U (002 §5 undirected edges): a write w and a later access e of its variable by another
 *    thread inside w's window (before w's thread drains): w -> e if w commits before e (before
 *    e's commit if e is a write), e -> w otherwise.
 *  - A buffered read r (a write w_r of its thread pending at r, possibly) conflicts with other
 *    threads' commits only when it is served from memory, that is when w_r commits before r:
 *    its links r -> w' (a later write of another thread) and w -> r (a write of another thread
 *    committed before r) exist under that condition only, and so do its U links.
 * Each link imposes constraints on the commit positions; a set of links is realized by one
 * execution iff its constraints, with FIFO order and each commit inside its window, are
 * satisfiable (ms_feasible). This is 002 Thm 4 / Cor. 1 made exact for buffered reads.
 *
 * A cycle is a sequence of segments, each entering a node T at event a, following directed
 * edges to a node S (T = S allowed) and leaving at event b along a link b -> a' into the next
 * segment. 002 Prop. 3-5: it suffices to look for *simple* cycles, where no segment's entry
 * reaches another segment's exit by directed edges (else the cycle shortens, and drops
 * constraints). A realizable cycle has a *free* segment (002 Prop. 3 (i)): one whose entry does
 * not precede its exit by edges that order their effects in every execution (forced edges, F),
 * or the effects would be ordered in a circle. So the search starts every cycle at a free
 * segment and extends it link by link, with the simplicity conditions and the constraints'
 * satisfiability as pruning. The entries of a simple cycle form an antichain of the directed
 * graph, so the depth is bounded by the number of its chains (002 §6.2: per thread, two chains
 * plus one per variable read from the buffer); cycles are searched with increasing depth.
 * Everything is confined to one strongly connected component of the graph of edges and links
 * (a cycle cannot leave it), and every step counts against max_work. */

#define MS_MAX_DEPTH 64
#define MS_MAX_CONS (4 * (MS_MAX_DEPTH + 2))
#define MS_ROW_BUDGET ((size_t)256 << 20) /* bytes of cached reachability rows */

enum { MC_UB = 1, MC_LB = 2, MC_PREC = 3 };

/* A constraint on commit positions: MC_UB: c(w) before event v; MC_LB: event v before c(w);
 * MC_PREC: c(w) before c(v). */
typedef struct ms_cons {
  uint32_t type, w, v;
} ms_cons;

typedef struct ms_seg {
  uint32_t T, a, S, b; /* entry node (local), entry event, exit node (local), exit event */
} ms_seg;

typedef struct ms_level {
  uint64_t *cand;
  size_t cand_words;
  u32v nb;
} ms_level;

typedef struct ms {
  tso *c;
  atom__mem *m;
  const tg *T;
  size_t nn;                     /* nodes */
  const uint32_t *node_of;       /* event -> node; NULL: the node is the event */
  const uint32_t *d_off, *d_adj; /* directed edges between nodes */
  uint64_t work, max_work;
  int bound; /* max_work or the row budget was reached */
  int err;   /* ATOM_ENOMEM */
  uint32_t *comp;                /* node -> component */
  uint32_t *in_off, *in_ev;      /* node -> its events with incoming links */
  uint32_t *out_off, *out_ev;    /* node -> its events with outgoing links */
  size_t nin, nout;
  uint32_t *cn_off, *cn;         /* component -> its nodes */
  size_t ncomp;
  /* the component being searched */
  uint32_t cur;
  const uint32_t *cnodes; /* local -> node */
  size_t ncn, words;
  uint32_t *loc;          /* node -> local */
  uint64_t **row;         /* reachability rows (directed edges), computed on demand */
  size_t row_bytes;
  uint64_t *hasout;       /* locals with events with outgoing links */
  uint32_t *queue;        /* BFS (events or locals) */
  uint32_t *parent;       /* path reconstruction (locals) */
  uint32_t *estamp, ecur; /* per event: reached from a1 by forced edges */
  uint32_t *nstamp, ncur; /* per event: has a link into a1 */
  u32v nb1;               /* sources of links into a1 */
  uint32_t a1;
  ms_level lv[MS_MAX_DEPTH];
  ms_seg seg[MS_MAX_DEPTH + 1];
  ms_cons cons[MS_MAX_CONS];
  size_t ncons;
  size_t found; /* segments of the cycle found, 0 if none */
  int cutoff;
  /* A local pass (see ms_search_comp) looks only at events in [lo, hi] around its start node;
   * lo = 0, hi = NONE32 otherwise. */
  uint32_t *npos;   /* node -> its first event (NONE32 if none) */
  int local;
  uint32_t lo, hi;
  u32v rows_made;   /* local pass: rows computed for the current start node */
  uint64_t **pool;  /* local pass: zeroed rows for reuse */
  size_t npool, pool_cap;
  uint32_t *rlo, *rhi; /* local -> the words [rlo, rhi) of its row that may hold bits */
} ms;

static inline uint32_t ms_node(const ms *s, uint32_t e) { return s->node_of ? s->node_of[e] : e; }

static inline int ms_in_window(const ms *s, uint32_t e) { return e >= s->lo && e <= s->hi; }

static inline int ms_tick(ms *s, uint64_t n) {
  s->work += n;
  if (s->work > s->max_work) s->bound = 1;
  return s->bound || s->err;
}

static inline int bit(const uint64_t *b, uint32_t i) { return (int)((b[i >> 6] >> (i & 63)) & 1); }
static inline void setbit(uint64_t *b, uint32_t i) { b[i >> 6] |= 1ull << (i & 63); }

/* First index i in a[0..n) with a[i] >= key (a sorted). */
static uint32_t lower_bound(const uint32_t *a, uint32_t n, uint32_t key) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

enum {
  MS_FIRST_ONLY = 1, /* at most one link */
  MS_NO_U = 2        /* leave out the U links (the windows of the writes of other threads) */
};

/* The links of access v: with @p out, the events a of links v -> a; else the events b of
 * links b -> v. Appended to @p res; @p flags: MS_FIRST_ONLY, MS_NO_U. */
static int ms_links(ms *s, uint32_t v, int out, u32v *res, int flags) {
  int first_only = flags & MS_FIRST_ONLY;
  const tg *T = s->T;
  const tg_ev *e = &T->ev[v];
  if (e->kind != ATOM_READ && e->kind != ATOM_WRITE) return 0;
  uint32_t x = e->target;
  const uint32_t *acc = T->acc + T->acc_off[x];
  uint32_t nacc = T->acc_off[x + 1] - T->acc_off[x];
  const tg_wgroup *own = NULL;
#define MS_ADD(ev_)                                                  \
  do {                                                               \
    if (!ms_in_window(s, (ev_))) break;                              \
    if (u32v_push(res, s->m, (ev_))) return s->err = ATOM_ENOMEM;    \
    if (first_only) return 0;                                        \
  } while (0)
  for (uint32_t gi = T->wg_off[x]; gi < T->wg_off[x + 1]; gi++) {
    const tg_wgroup *g = &T->wg[gi];
    const uint32_t *w = T->ws + g->start;
    if (ms_tick(s, 1)) return s->err;
    if (g->thread == e->thread) {
      own = g;
      continue;
    }
    uint32_t k = lower_bound(w, g->len, v); /* writes of g before v */
    /* U: writes of g still in their window at v */
    for (uint32_t i = k; !(flags & MS_NO_U) && i-- > 0;) {
      if (T->ev[w[i]].d <= v || w[i] < s->lo) break;
      if (ms_tick(s, 1)) return s->err;
      MS_ADD(w[i]);
    }
    if (e->kind == ATOM_READ && (e->flags & TG_BUF)) {
      if (out && k < g->len) MS_ADD(w[k]); /* r -> the first later write of g */
      if (!out) {                          /* the last write of g committed before r */
        uint32_t lo = 0, hi = g->len;
        while (lo < hi) {
          uint32_t mid = lo + (hi - lo) / 2;
          if (T->ev[w[mid]].d < v) lo = mid + 1;
          else hi = mid;
        }
        if (lo > 0) MS_ADD(w[lo - 1]);
      }
    }
  }
  if (e->kind != ATOM_WRITE) return 0;
  /* U: later accesses inside v's window */
  uint32_t ai = T->acc_idx[v] - T->acc_off[x];
  for (uint32_t i = ai + 1; i < nacc && acc[i] < e->d && acc[i] <= s->hi;) {
    if (ms_tick(s, 1)) return s->err;
    if (T->ev[acc[i]].thread == e->thread) { /* skip the thread's own accesses at once */
      i = T->acc_other[T->acc_off[x] + i] - T->acc_off[x];
      continue;
    }
    MS_ADD(acc[i]);
    i++;
  }
  if (!own) return 0;
  const uint32_t *w = T->ws + own->start;
  uint32_t k = lower_bound(w, own->len, v); /* w[k] == v */
  if (out) {
    /* v -> buffered reads of other threads for which v is the last write of its thread
     * committed before them */
    uint32_t dv = e->d, d2 = k + 1 < own->len ? T->ev[w[k + 1]].d : NONE32;
    if (dv == NONE32 || d2 <= dv) return 0;
    for (uint32_t i = lower_bound(acc, nacc, dv); i < nacc && acc[i] < d2 && acc[i] <= s->hi; i++) {
      if (ms_tick(s, 1)) return s->err;
      const tg_ev *r = &T->ev[acc[i]];
      if (r->thread != e->thread && r->kind == ATOM_READ && (r->flags & TG_BUF)) MS_ADD(acc[i]);
    }
  } else {
    /* buffered reads of other threads for which v is the first later write of its thread */
    uint32_t prev = k > 0 ? w[k - 1] : NONE32;
    for (uint32_t i = ai; i-- > 0 && (prev == NONE32 || acc[i] > prev) && acc[i] >= s->lo;) {
      if (ms_tick(s, 1)) return s->err;
      const tg_ev *r = &T->ev[acc[i]];
      if (r->thread != e->thread && r->kind == ATOM_READ && (r->flags & TG_BUF)) MS_ADD(acc[i]);
    }
  }
#undef MS_ADD
  return 0;
}

/* ---- constraints on commit positions ---- */

static int ms_push_cons(ms *s, uint32_t type, uint32_t w, uint32_t v) {
  if (s->ncons >= MS_MAX_CONS) return -1;
  s->cons[s->ncons++] = (ms_cons){type, w, v};
  return 0;
}

/* The constraints of link b -> a. @return 0, or -1 if there is no room (treated as a cutoff). */
static int ms_link_cons(ms *s, uint32_t b, uint32_t a) {
  const tg *T = s->T;
  const tg_ev *eb = &T->ev[b], *ea = &T->ev[a];
  int rc = 0;
  if (eb->kind == ATOM_WRITE && ea->kind == ATOM_WRITE) {
    rc = ms_push_cons(s, MC_PREC, b, a);
  } else if (eb->kind == ATOM_WRITE) { /* c(b) before the read a, served from memory */
    rc = ms_push_cons(s, MC_UB, b, a);
    if (!rc && (ea->flags & TG_BUF)) rc = ms_push_cons(s, MC_UB, ea->wr, a);
  } else { /* the read b before c(a), b served from memory */
    if (b > a) rc = ms_push_cons(s, MC_LB, a, b);
    if (!rc && (eb->flags & TG_BUF)) rc = ms_push_cons(s, MC_UB, eb->wr, b);
  }
  return rc;
}

/* Can the commits be placed to satisfy s->cons? Each commit c(w) lies after w, before w's
 * drain, in FIFO order with the other commits of its thread; positions are reals between the
 * trace's events, so the bounds and the precedences (acyclic) must leave each an open gap. */
static int ms_feasible(ms *s) {
  uint32_t w[2 * MS_MAX_CONS];
  uint32_t lo[2 * MS_MAX_CONS], hi[2 * MS_MAX_CONS];
  uint32_t pa[3 * MS_MAX_CONS], pb[3 * MS_MAX_CONS], indeg[2 * MS_MAX_CONS], ord[2 * MS_MAX_CONS];
  size_t n = 0, np = 0;
  const tg *T = s->T;
  ms_tick(s, s->ncons);
  for (size_t i = 0; i < s->ncons; i++) {
    uint32_t ids[2] = {s->cons[i].w, s->cons[i].v};
    for (int k = 0; k < (s->cons[i].type == MC_PREC ? 2 : 1); k++) {
      size_t j = 0;
      while (j < n && w[j] != ids[k]) j++;
      if (j == n) {
        w[n] = ids[k];
        lo[n] = ids[k];
        hi[n] = T->ev[ids[k]].d;
        n++;
      }
    }
  }
  for (size_t i = 0; i < s->ncons; i++) {
    const ms_cons *k = &s->cons[i];
    size_t a = 0, b = 0;
    while (w[a] != k->w) a++;
    if (k->type == MC_UB && k->v < hi[a]) hi[a] = k->v;
    if (k->type == MC_LB && k->v > lo[a]) lo[a] = k->v;
    if (k->type == MC_PREC) {
      while (w[b] != k->v) b++;
      pa[np] = (uint32_t)a;
      pb[np++] = (uint32_t)b;
    }
  }
  /* FIFO between the commits of one thread: each to the next of its thread (by position) */
  for (size_t i = 0; i < n; i++) ord[i] = (uint32_t)i;
  for (size_t i = 1; i < n; i++) { /* insertion sort by (thread, position) */
    uint32_t k = ord[i];
    size_t j = i;
    while (j > 0 && (T->ev[w[ord[j - 1]]].thread > T->ev[w[k]].thread ||
                     (T->ev[w[ord[j - 1]]].thread == T->ev[w[k]].thread && w[ord[j - 1]] > w[k]))) {
      ord[j] = ord[j - 1];
      j--;
    }
    ord[j] = k;
  }
  for (size_t i = 0; i + 1 < n; i++)
    if (T->ev[w[ord[i]]].thread == T->ev[w[ord[i + 1]]].thread) {
      pa[np] = ord[i];
      pb[np++] = ord[i + 1];
    }
  /* topological order (Kahn); a cycle of precedences cannot be satisfied */
  for (size_t i = 0; i < n; i++) indeg[i] = 0;
  for (size_t i = 0; i < np; i++) indeg[pb[i]]++;
  size_t h = 0, t = 0;
  for (size_t i = 0; i < n; i++)
    if (!indeg[i]) ord[t++] = (uint32_t)i;
  while (h < t) {
    uint32_t u = ord[h++];
    for (size_t i = 0; i < np; i++)
      if (pa[i] == u && --indeg[pb[i]] == 0) ord[t++] = pb[i];
  }
  if (t < n) return 0;
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < np; i++)
      if (pa[i] == ord[k] && lo[pb[i]] < lo[ord[k]]) lo[pb[i]] = lo[ord[k]];
  for (size_t k = n; k-- > 0;)
    for (size_t i = 0; i < np; i++)
      if (pb[i] == ord[k] && hi[pa[i]] > hi[ord[k]]) hi[pa[i]] = hi[ord[k]];
  for (size_t i = 0; i < n; i++)
    if (lo[i] >= hi[i]) return 0;
  return 1;
}

/* Add the constraints of link b -> a; @return 1 if they can still be satisfied (else they are
 * removed again). */
static int ms_try_link(ms *s, uint32_t b, uint32_t a) {
  size_t mark = s->ncons;
  if (ms_link_cons(s, b, a) || !ms_feasible(s)) {
    if (s->ncons >= MS_MAX_CONS) s->cutoff = 1;
    s->ncons = mark;
    return 0;
  }
  return 1;
}

/* ---- components ---- */

static uint32_t uf_find(uint32_t *p, uint32_t x) {
  uint32_t r = x;
  while (p[r] != r) r = p[r];
  while (p[x] != r) {
    uint32_t n = p[x];
    p[x] = r;
    x = n;
  }
  return r;
}

/* Strongly connected components of the directed graph (off, adj) over n vertices (Tarjan,
 * iterative). scc[v] receives the component number. */
static int scc_tarjan(atom__mem *m, size_t n, const uint32_t *off, const uint32_t *adj,
                      uint32_t *scc, size_t *nscc) {
  size_t n1 = n ? n : 1;
  uint32_t *idx = atom__mem_alloc(m, n1 * sizeof *idx);
  uint32_t *low = atom__mem_alloc(m, n1 * sizeof *low);
  uint32_t *stk = atom__mem_alloc(m, n1 * sizeof *stk);
  uint32_t *cs = atom__mem_alloc(m, n1 * sizeof *cs); /* call stack: vertex */
  uint32_t *ci = atom__mem_alloc(m, n1 * sizeof *ci); /* call stack: next edge */
  unsigned char *on = atom__mem_calloc(m, n1, 1);
  int rc = ATOM_ENOMEM;
  if (!idx || !low || !stk || !cs || !ci || !on) goto out;
  for (size_t v = 0; v < n; v++) idx[v] = NONE32;
  uint32_t next = 0, sp = 0, count = 0;
  for (size_t root = 0; root < n; root++) {
    if (idx[root] != NONE32) continue;
    size_t depth = 1;
    cs[0] = (uint32_t)root;
    ci[0] = off[root];
    idx[root] = low[root] = next++;
    stk[sp++] = (uint32_t)root;
    on[root] = 1;
    while (depth) {
      uint32_t v = cs[depth - 1];
      if (ci[depth - 1] < off[v + 1]) {
        uint32_t w = adj[ci[depth - 1]++];
        if (idx[w] == NONE32) {
          idx[w] = low[w] = next++;
          stk[sp++] = w;
          on[w] = 1;
          cs[depth] = w;
          ci[depth] = off[w];
          depth++;
        } else if (on[w] && idx[w] < low[v]) {
          low[v] = idx[w];
        }
        continue;
      }
      if (low[v] == idx[v]) {
        uint32_t w;
        do {
          w = stk[--sp];
          on[w] = 0;
          scc[w] = count;
        } while (w != v);
        count++;
      }
      depth--;
      if (depth && low[v] < low[cs[depth - 1]]) low[cs[depth - 1]] = low[v];
    }
  }
  *nscc = count;
  rc = 0;
out:
  atom__mem_free(m, idx, n1 * sizeof *idx);
  atom__mem_free(m, low, n1 * sizeof *low);
  atom__mem_free(m, stk, n1 * sizeof *stk);
  atom__mem_free(m, cs, n1 * sizeof *cs);
  atom__mem_free(m, ci, n1 * sizeof *ci);
  atom__mem_free(m, on, n1);
  return rc;
}

/* comp[]: strongly connected components of the directed edges plus every link. A write's U
 * links join it to a contiguous run of its variable's accesses (its window), so whole runs are
 * merged first (accesses of the write's own thread in the run too: a coarser partition only
 * costs time); a buffered read's other links are added as edges. Also in_off/in_ev and
 * out_off/out_ev: each node's events with incoming and outgoing links. */
static int ms_components(ms *s) {
  const tg *T = s->T;
  atom__mem *m = s->m;
  size_t nn = s->nn, nn1 = nn ? nn : 1, na1 = T->nacc ? T->nacc : 1;
  int rc = ATOM_ENOMEM;
  uint32_t *p = atom__mem_alloc(m, nn1 * sizeof *p);
  uint32_t *jmp = atom__mem_alloc(m, na1 * sizeof *jmp);
  uint32_t *grp = atom__mem_alloc(m, nn1 * sizeof *grp);
  uint32_t *gscc = NULL, *qoff = NULL, *qadj = NULL, *il = NULL, *ik = NULL, *ol = NULL,
           *ok = NULL, *order = NULL;
  u32v ql = {0};
  size_t ngrp = 0, nq = 0, ni = 0, no = 0;
  if (!p || !jmp || !grp) goto out;
  for (size_t i = 0; i < nn; i++) p[i] = (uint32_t)i;
  for (size_t i = 0; i < T->nacc; i++) jmp[i] = (uint32_t)i;
  for (uint32_t x = 0; x < T->nvar; x++) {
    uint32_t end = T->acc_off[x + 1];
    for (uint32_t i = T->acc_off[x]; i < end; i++) {
      const tg_ev *w = &T->ev[T->acc[i]];
      if (w->kind != ATOM_WRITE) continue;
      uint32_t lo = i + 1 + lower_bound(T->acc + i + 1, end - i - 1, w->d);
      if (ms_tick(s, 1)) goto done;
      /* link each access of the run to the next, skipping links made before */
      for (uint32_t k = uf_find(jmp, i); k + 1 < lo; k = uf_find(jmp, k + 1)) {
        uint32_t a = uf_find(p, ms_node(s, T->acc[k])), b = uf_find(p, ms_node(s, T->acc[k + 1]));
        if (a != b) p[a] = b;
        jmp[k] = k + 1;
        if (ms_tick(s, 1)) goto done;
      }
    }
  }
  for (size_t i = 0; i < nn; i++) grp[i] = NONE32;
  for (size_t i = 0; i < nn; i++) {
    uint32_t r = uf_find(p, (uint32_t)i);
    if (grp[r] == NONE32) grp[r] = (uint32_t)ngrp++;
  }
  for (size_t i = 0; i < nn; i++) grp[i] = grp[uf_find(p, (uint32_t)i)];
  /* the quotient graph: directed edges, then the links of buffered reads */
  for (size_t u = 0; u < nn; u++)
    for (uint32_t k = s->d_off[u]; k < s->d_off[u + 1]; k++) {
      uint32_t a = grp[u], b = grp[s->d_adj[k]];
      if (a != b && (u32v_push(&ql, m, a) || u32v_push(&ql, m, b))) goto out;
    }
  il = atom__mem_alloc(m, na1 * sizeof *il);
  ik = atom__mem_alloc(m, na1 * sizeof *ik);
  ol = atom__mem_alloc(m, na1 * sizeof *ol);
  ok = atom__mem_alloc(m, na1 * sizeof *ok);
  if (!il || !ik || !ol || !ok) goto out;
  for (size_t i = 0; i < T->nacc; i++) {
    uint32_t e = T->acc[i];
    for (int out = 0; out < 2; out++) {
      s->nb1.n = 0;
      int buffered = T->ev[e].kind == ATOM_READ && (T->ev[e].flags & TG_BUF);
      if (ms_links(s, e, out, &s->nb1, MS_FIRST_ONLY)) goto out;
      if (s->bound) goto done;
      if (s->nb1.n && out) {
        ol[no] = e;
        ok[no++] = ms_node(s, e);
      }
      if (s->nb1.n && !out) {
        il[ni] = e;
        ik[ni++] = ms_node(s, e);
      }
      if (!buffered) continue;
      /* a buffered read's U links are inside the runs merged above; its other links are edges */
      s->nb1.n = 0;
      if (ms_links(s, e, out, &s->nb1, MS_NO_U)) goto out;
      if (s->bound) goto done;
      for (size_t q = 0; q < s->nb1.n; q++) {
        uint32_t a = grp[ms_node(s, e)], b = grp[ms_node(s, s->nb1.a[q])];
        if (!out) {
          uint32_t t = a;
          a = b;
          b = t;
        }
        if (a != b && (u32v_push(&ql, m, a) || u32v_push(&ql, m, b))) goto out;
      }
    }
  }
  if (ms_tick(s, ql.n)) goto done;
  if ((rc = adj_build(m, &ql, ngrp, &qoff, &qadj, &nq))) goto out;
  rc = ATOM_ENOMEM;
  gscc = atom__mem_alloc(m, (ngrp ? ngrp : 1) * sizeof *gscc);
  if (!gscc) goto out;
  if ((rc = scc_tarjan(m, ngrp, qoff, qadj, gscc, &s->ncomp))) goto out;
  rc = ATOM_ENOMEM;
  s->comp = atom__mem_alloc(m, nn1 * sizeof *s->comp);
  if (!s->comp) goto out;
  for (size_t i = 0; i < nn; i++) s->comp[i] = gscc[grp[i]];
  if (csr_build(m, ik, ni, nn, &s->in_off, &order)) goto out;
  for (size_t i = 0; i < ni; i++) order[i] = il[order[i]];
  s->in_ev = order;
  s->nin = ni;
  order = NULL;
  if (csr_build(m, ok, no, nn, &s->out_off, &order)) goto out;
  for (size_t i = 0; i < no; i++) order[i] = ol[order[i]];
  s->out_ev = order;
  s->nout = no;
  order = NULL;
  if (csr_build(m, s->comp, nn, s->ncomp, &s->cn_off, &s->cn)) goto out;
done:
  rc = 0;
out:
  atom__mem_free(m, p, nn1 * sizeof *p);
  atom__mem_free(m, jmp, na1 * sizeof *jmp);
  atom__mem_free(m, grp, nn1 * sizeof *grp);
  atom__mem_free(m, gscc, (ngrp ? ngrp : 1) * sizeof *gscc);
  atom__mem_free(m, qoff, (ngrp + 1) * sizeof *qoff);
  atom__mem_free(m, qadj, nq * sizeof *qadj);
  atom__mem_free(m, il, na1 * sizeof *il);
  atom__mem_free(m, ik, na1 * sizeof *ik);
  atom__mem_free(m, ol, na1 * sizeof *ol);
  atom__mem_free(m, ok, na1 * sizeof *ok);
  u32v_free(&ql, m);
  if (rc) s->err = rc;
  return rc;
}

/* ---- the search in one component ---- */

/* The nodes of the component reachable from local l by directed edges (itself included). */
static uint64_t *ms_row(ms *s, uint32_t l) {
  if (s->row[l]) return s->row[l];
  size_t bytes = s->words * sizeof(uint64_t), zeroed = 0;
  uint64_t *r = NULL;
  if (s->local && s->npool) {
    r = s->pool[--s->npool];
  } else {
    if (s->row_bytes + bytes > MS_ROW_BUDGET) {
      s->bound = 1;
      return NULL;
    }
    r = atom__mem_calloc(s->m, s->words, sizeof *r);
    if (!r) {
      s->err = ATOM_ENOMEM;
      return NULL;
    }
    s->row_bytes += bytes;
    zeroed = s->words;
  }
  if (s->local && u32v_push(&s->rows_made, s->m, l)) {
    atom__mem_free(s->m, r, bytes);
    s->row_bytes -= bytes;
    s->err = ATOM_ENOMEM;
    return NULL;
  }
  s->row[l] = r;
  size_t qh = 0, qt = 0;
  uint32_t lo = l, hi = l;
  setbit(r, l);
  s->queue[qt++] = l;
  while (qh < qt) {
    uint32_t u = s->cnodes[s->queue[qh++]];
    for (uint32_t k = s->d_off[u]; k < s->d_off[u + 1]; k++) {
      uint32_t v = s->d_adj[k];
      if (s->comp[v] != s->cur || (s->local && !ms_in_window(s, s->npos[v]))) continue;
      uint32_t lv = s->loc[v];
      if (!bit(r, lv)) {
        setbit(r, lv);
        s->queue[qt++] = lv;
        if (lv < lo) lo = lv;
        if (lv > hi) hi = lv;
      }
    }
  }
  s->rlo[l] = lo / 64;
  s->rhi[l] = hi / 64 + 1;
  ms_tick(s, zeroed + qt);
  return r;
}

/* Mark (estamp == ecur) the events of component comp that a reaches by forced edges, a itself
 * included, inside the window. Beyond a's own successors at most @p limit events are marked. */
static void ms_freach(ms *s, uint32_t a, uint32_t comp, size_t limit) {
  const tg *T = s->T;
  if (++s->ecur == 0) {
    memset(s->estamp, 0, (T->nev + 1) * sizeof *s->estamp);
    s->ecur = 1;
  }
  size_t qh = 0, qt = 0;
  s->estamp[a] = s->ecur;
  s->queue[qt++] = a;
  while (qh < qt) {
    uint32_t e = s->queue[qh++];
    for (uint32_t k = T->f_off[e]; k < T->f_off[e + 1] && (e == a || qt < limit); k++) {
      uint32_t f = T->f_adj[k];
      if (s->estamp[f] == s->ecur || s->comp[ms_node(s, f)] != comp || !ms_in_window(s, f))
        continue;
      s->estamp[f] = s->ecur;
      s->queue[qt++] = f;
    }
  }
  ms_tick(s, qt);
}

static int ms_level_cand(ms *s, ms_level *L) {
  if (L->cand_words >= s->words) return 0;
  uint64_t *n = atom__mem_alloc(s->m, s->words * sizeof *n);
  if (!n) return s->err = ATOM_ENOMEM;
  atom__mem_free(s->m, L->cand, L->cand_words * sizeof *L->cand);
  L->cand = n;
  L->cand_words = s->words;
  return 0;
}

/* Entry j (1-based; seg[j-1].T and .a are set): close the cycle into a1, or extend it. */
static int ms_dfs(ms *s, size_t j, size_t depth) {
  if (ms_tick(s, 1)) return 0;
  ms_seg *sg = &s->seg[j - 1];
  uint64_t *rj = ms_row(s, sg->T);
  if (!rj) return 0;
  for (size_t i = 0; i < s->nb1.n; i++) {
    uint32_t b = s->nb1.a[i], nb = ms_node(s, b);
    if (s->comp[nb] != s->cur) continue;
    uint32_t S = s->loc[nb];
    if (!bit(rj, S)) continue;
    int ok = 1;
    for (size_t l = 0; l + 1 < j && ok; l++) ok = !bit(s->row[s->seg[l].T], S);
    if (ok && ms_try_link(s, b, s->a1)) {
      sg->S = S;
      sg->b = b;
      s->found = j;
      return 1;
    }
  }
  if (j >= depth || j >= MS_MAX_DEPTH) {
    s->cutoff = 1;
    return 0;
  }
  ms_level *L = &s->lv[j];
  if (ms_level_cand(s, L)) return 0;
  size_t wlo = s->rlo[sg->T], whi = s->rhi[sg->T];
  for (size_t w = wlo; w < whi; w++) {
    uint64_t c = rj[w] & s->hasout[w];
    for (size_t l = 0; l + 1 < j; l++) c &= ~s->row[s->seg[l].T][w];
    L->cand[w] = c;
  }
  ms_tick(s, whi - wlo);
  for (size_t w = wlo; w < whi; w++) {
    for (uint64_t c = L->cand[w]; c; c &= c - 1) {
      uint32_t S = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(c));
      uint32_t node = s->cnodes[S];
      for (uint32_t k = s->out_off[node]; k < s->out_off[node + 1]; k++) {
        uint32_t b = s->out_ev[k];
        L->nb.n = 0;
        if (ms_links(s, b, 1, &L->nb, 0) || s->bound) return 0;
        for (size_t i = 0; i < L->nb.n; i++) {
          uint32_t a = L->nb.a[i], na = ms_node(s, a);
          if (a == s->a1 || s->comp[na] != s->cur) continue; /* closing: done above */
          uint32_t Tn = s->loc[na];
          int ok = 1;
          for (size_t l = 0; l < j && ok; l++) ok = !bit(s->row[s->seg[l].T], Tn);
          if (!ok) continue;
          uint64_t *rt = ms_row(s, Tn);
          if (!rt) return 0;
          ok = !bit(rt, S);
          for (size_t l = 0; l + 1 < j && ok; l++) ok = !bit(rt, s->seg[l].S);
          if (!ok) continue;
          size_t mark = s->ncons;
          if (!ms_try_link(s, b, a)) continue;
          sg->S = S;
          sg->b = b;
          s->seg[j] = (ms_seg){Tn, a, 0, 0};
          if (ms_dfs(s, j + 1, depth)) return 1;
          s->ncons = mark;
          if (s->bound || s->err) return 0;
        }
      }
    }
  }
  return 0;
}

static void ms_pool_free(ms *s) {
  for (size_t i = 0; i < s->npool; i++)
    atom__mem_free(s->m, s->pool[i], s->words * sizeof(uint64_t));
  atom__mem_free(s->m, s->pool, s->pool_cap * sizeof *s->pool);
  s->row_bytes -= s->npool * s->words * sizeof(uint64_t);
  s->pool = NULL;
  s->npool = s->pool_cap = 0;
}

static void ms_comp_free(ms *s) {
  if (s->row)
    for (size_t i = 0; i < s->ncn; i++)
      atom__mem_free(s->m, s->row[i], s->words * sizeof(uint64_t));
  atom__mem_free(s->m, s->row, s->ncn * sizeof *s->row);
  atom__mem_free(s->m, s->hasout, s->words * sizeof *s->hasout);
  ms_pool_free(s);
  atom__mem_free(s->m, s->rlo, s->ncn * sizeof *s->rlo);
  atom__mem_free(s->m, s->rhi, s->ncn * sizeof *s->rhi);
  s->row = NULL;
  s->hasout = NULL;
  s->rlo = s->rhi = NULL;
  s->row_bytes = 0;
}

/* Local pass: the rows computed since the last start node, cleared, back into the pool. */
static void ms_rows_recycle(ms *s) {
  for (size_t k = 0; k < s->rows_made.n; k++) {
    uint32_t l = s->rows_made.a[k];
    uint64_t *r = s->row[l];
    s->row[l] = NULL;
    memset(r + s->rlo[l], 0, (s->rhi[l] - s->rlo[l]) * sizeof *r);
    ms_tick(s, s->rhi[l] - s->rlo[l]);
    if (s->npool == s->pool_cap && ATOM__GROW(s->m, s->pool, s->pool_cap, s->npool + 1)) {
      atom__mem_free(s->m, r, s->words * sizeof *r);
      s->row_bytes -= s->words * sizeof *r;
      continue;
    }
    s->pool[s->npool++] = r;
  }
  s->rows_made.n = 0;
}

/* A local pass moves to start node i: the window around it, and no rows of the last one. */
static void ms_local_start(ms *s, uint32_t i, uint32_t span) {
  uint32_t p = s->npos[s->cnodes[i]];
  s->lo = p > span ? p - span : 0;
  s->hi = p < NONE32 - span ? p + span : NONE32 - 1;
  ms_rows_recycle(s);
}

/* One pass over component s->cur: cycles of 1, 2, ... segments from every start (within the
 * window of each start node when s->local, span @p span). @return 1 when a cycle was found. */
static int ms_search_pass(ms *s, uint32_t span) {
  int found = 0;
  for (size_t depth = 1; depth <= MS_MAX_DEPTH && !found; depth++) {
    s->cutoff = 0;
    for (uint32_t i = 0; i < s->ncn && !found; i++) {
      uint32_t node = s->cnodes[i];
      if (s->in_off[node + 1] == s->in_off[node]) continue;
      if (s->local) ms_local_start(s, i, span);
      uint64_t *r1 = ms_row(s, i);
      if (!r1) return 0;
      for (uint32_t k = s->in_off[node]; k < s->in_off[node + 1] && !found; k++) {
        uint32_t a1 = s->in_ev[k];
        int have_nb1 = 0; /* the links into a1, listed at the first free pair */
        s->a1 = a1;
        ms_freach(s, a1, s->cur, SIZE_MAX);
        if (s->bound) return 0;
        /* a free first segment: a1 ... b1, a1 not ordered before b1 by forced edges */
        for (size_t w = s->rlo[i]; w < s->rhi[i] && !found; w++) {
          for (uint64_t cw = r1[w] & s->hasout[w]; cw && !found; cw &= cw - 1) {
            uint32_t S = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cw));
            uint32_t sn = s->cnodes[S];
            for (uint32_t kb = s->out_off[sn]; kb < s->out_off[sn + 1] && !found; kb++) {
              uint32_t b1 = s->out_ev[kb];
              if (ms_tick(s, 1)) return 0;
              if (s->estamp[b1] == s->ecur) continue;
              if (!have_nb1) {
                s->nb1.n = 0;
                if (ms_links(s, a1, 0, &s->nb1, 0) || s->bound) return 0;
                if (++s->ncur == 0) {
                  memset(s->nstamp, 0, (s->T->nev + 1) * sizeof *s->nstamp);
                  s->ncur = 1;
                }
                for (size_t q = 0; q < s->nb1.n; q++) s->nstamp[s->nb1.a[q]] = s->ncur;
                have_nb1 = 1;
              }
              s->seg[0] = (ms_seg){i, a1, S, b1};
              s->ncons = 0;
              if (s->nstamp[b1] == s->ncur && ms_try_link(s, b1, a1)) { /* b1 -> a1 */
                s->found = 1;
                found = 1;
                break;
              }
              if (depth < 2) {
                s->cutoff = 1;
                continue;
              }
              ms_level *L = &s->lv[0];
              L->nb.n = 0;
              if (ms_links(s, b1, 1, &L->nb, 0) || s->bound) return 0;
              for (size_t q = 0; q < L->nb.n && !found; q++) {
                uint32_t a2 = L->nb.a[q], n2 = ms_node(s, a2);
                if (a2 == a1 || s->comp[n2] != s->cur) continue;
                uint32_t T2 = s->loc[n2];
                if (bit(r1, T2)) continue;
                uint64_t *r2 = ms_row(s, T2);
                if (!r2) return 0;
                if (bit(r2, S)) continue;
                s->ncons = 0;
                if (!ms_try_link(s, b1, a2)) continue;
                s->seg[1] = (ms_seg){T2, a2, 0, 0};
                found = ms_dfs(s, 2, depth);
                if (s->bound || s->err) return 0;
              }
            }
          }
        }
      }
    }
    if (!s->cutoff) break;
    if (depth == MS_MAX_DEPTH && !found) s->bound = 1;
  }
  return found;
}

/* Search component c: @return 1 when a cycle was found (s->seg, s->found).
 *
 * Local passes first: with spans 4, 64 and 1 024 (while the span is short of the component), the
 * search around each start node looks only at events at most a span away, with an eighth of the
 * remaining max_work each. Cycles are usually local, and a local pass costs about the span per
 * start instead of the whole component. A local pass may miss cycles, never invents one (every
 * cycle is still checked against the commit-position constraints; windows only drop links and
 * shorten the reachability used for pruning). Then the full pass, which decides. */
static int ms_search_comp(ms *s, uint32_t c) {
  static const uint32_t spans[] = {4, 64, 1024};
  s->cur = c;
  s->cnodes = s->cn + s->cn_off[c];
  s->ncn = s->cn_off[c + 1] - s->cn_off[c];
  s->words = (s->ncn + 63) / 64;
  for (size_t i = 0; i < s->ncn; i++) s->loc[s->cnodes[i]] = (uint32_t)i;
  s->row = atom__mem_calloc(s->m, s->ncn, sizeof *s->row);
  s->hasout = atom__mem_calloc(s->m, s->words, sizeof *s->hasout);
  s->rlo = atom__mem_alloc(s->m, s->ncn * sizeof *s->rlo);
  s->rhi = atom__mem_alloc(s->m, s->ncn * sizeof *s->rhi);
  if (!s->row || !s->hasout || !s->rlo || !s->rhi || ms_level_cand(s, &s->lv[0])) {
    s->err = ATOM_ENOMEM;
    return 0;
  }
  for (size_t i = 0; i < s->ncn; i++)
    if (s->out_off[s->cnodes[i] + 1] > s->out_off[s->cnodes[i]]) setbit(s->hasout, (uint32_t)i);
  int found = 0;
  uint64_t max_work = s->max_work;
  uint32_t first = NONE32, last = 0; /* the component's extent in the trace */
  for (size_t i = 0; i < s->ncn; i++) {
    uint32_t p = s->npos[s->cnodes[i]];
    if (p == NONE32) continue;
    if (p < first) first = p;
    if (p > last) last = p;
  }
  for (size_t p = 0; p < sizeof spans / sizeof *spans && !found; p++) {
    /* a window that always covers the component is the full pass */
    if (first == NONE32 || last - first <= spans[p] || s->work >= max_work) break;
    s->local = 1;
    s->max_work = s->work + (max_work - s->work) / 8;
    found = ms_search_pass(s, spans[p]);
    ms_rows_recycle(s);
    ms_pool_free(s);
    s->local = 0;
    s->lo = 0;
    s->hi = NONE32;
    s->max_work = max_work;
    if (s->err) return 0;
    if (s->work <= max_work) s->bound = 0; /* the pass's share, or the row budget: go on */
  }
  if (!found && !s->bound) found = ms_search_pass(s, 0);
  return found;
}

/* The directed path from local u to local v (u reaches v), as nodes appended to out. */
static int ms_path(ms *s, uint32_t u, uint32_t v, u32v *out) {
  size_t qh = 0, qt = 0;
  for (size_t i = 0; i < s->ncn; i++) s->parent[i] = NONE32;
  s->parent[u] = u;
  s->queue[qt++] = u;
  while (qh < qt && s->parent[v] == NONE32) {
    uint32_t x = s->queue[qh++], n = s->cnodes[x];
    for (uint32_t k = s->d_off[n]; k < s->d_off[n + 1]; k++) {
      uint32_t y = s->d_adj[k];
      if (s->comp[y] != s->cur || s->parent[s->loc[y]] != NONE32) continue;
      s->parent[s->loc[y]] = x;
      s->queue[qt++] = s->loc[y];
    }
  }
  if (s->parent[v] == NONE32) return 0; /* cannot happen: v is in u's row */
  size_t start = out->n, len = 0;
  for (uint32_t x = v;; x = s->parent[x]) {
    if (u32v_push(out, s->m, s->cnodes[x])) return ATOM_ENOMEM;
    len++;
    if (x == u) break;
  }
  for (size_t i = 0; i < len / 2; i++) { /* reverse into u .. v */
    uint32_t t = out->a[start + i];
    out->a[start + i] = out->a[start + len - 1 - i];
    out->a[start + len - 1 - i] = t;
  }
  return 0;
}

/* "the commit of {e3}" / "{e4}": a write stands for its commit in an orientation. */
static void madd_side(mbuf *m, const atom_ev *e, size_t i) {
  madd(m, "%s{e%zu}", e->kind == ATOM_WRITE ? "the commit of " : "", i);
}

/* An edge of a reported cycle: two events (positions in the trace graph), and whether it is a
 * link oriented by the search (else a directed edge, in trace order). */
typedef struct ms_cedge {
  uint32_t from, to, link;
} ms_cedge;

/* Label the directed stretches of a found cycle with events. hop[q] holds the two nodes of the
 * transaction edge q (source, destination); cy[q] receives an event edge of the trace graph
 * between them. With transactions as nodes, every transaction edge was made from such an event
 * edge (tb_edge), so one scan of the trace's events and directed edges finds them all: the work
 * is linear in the trace, once per report, and a search makes at most one report. With events
 * as nodes (robustness) the transaction edge is the event edge. A hop without a label (none can
 * be) keeps NONE32 and is left out of the report by the caller. */
static int ms_label_hops(ms *s, const uint32_t *hop, ms_cedge *cy, size_t n) {
  const tg *T = s->T;
  size_t left = 0;
  for (size_t q = 0; q < n; q++) {
    if (cy[q].link) continue;
    if (!s->node_of) {
      cy[q].from = hop[2 * q];
      cy[q].to = hop[2 * q + 1];
    } else {
      left++;
    }
  }
  if (!left) return 0;
  /* hops by source node: head[node] (s->parent, free once the paths are made), next[q] */
  uint32_t *head = s->parent, *next = atom__mem_alloc(s->m, n * sizeof *next);
  if (!next) return ATOM_ENOMEM;
  for (size_t i = 0; i < s->nn; i++) head[i] = NONE32;
  for (size_t q = 0; q < n; q++) {
    if (cy[q].link) continue;
    next[q] = head[hop[2 * q]];
    head[hop[2 * q]] = (uint32_t)q;
  }
  for (uint32_t u = 0; u < T->nev && left; u++) {
    uint32_t nu = ms_node(s, u);
    if (head[nu] == NONE32) continue;
    for (uint32_t k = T->e_off[u]; k < T->e_off[u + 1] && left; k++) {
      uint32_t v = T->e_adj[k], nv = ms_node(s, v);
      if (nv == nu) continue;
      for (uint32_t q = head[nu]; q != NONE32; q = next[q])
        if (cy[q].from == NONE32 && hop[2 * q + 1] == nv) {
          cy[q].from = u;
          cy[q].to = v;
          left--;
        }
    }
  }
  atom__mem_free(s->m, next, n * sizeof *next);
  return 0;
}

/* Report the cycle in s->seg: kind "tso-cycle" (transactions) or "non-robust" (events).
 *
 * The edges are the whole cycle in order, each with its two events: every segment's directed
 * stretch from its entry to its exit as event edges of the trace graph (one per transaction
 * edge of the path, ms_label_hops), then the link that leaves it, oriented as the cycle needs it
 * (the effect of from before that of to; a write's effect is its commit, so from may come later
 * in the trace). The edges chain through transactions: each ends in the transaction the next
 * one starts from. The cycle is told so that it ends with the edge whose destination comes
 * latest in the trace; that edge is flagged closing and the report is made at its destination
 * (by then every edge's destination event, for a write its issue, has happened). The witness
 * events after the edges' ones are the writes that buffered reads of links read from. */
static int ms_report(ms *s, int robust) {
  tso *c = s->c;
  const tg *T = s->T;
  size_t m = s->found;
  u32v path = {0};
  atom_txn_ref *refs = NULL;
  atom_ev *wit = NULL;
  atom_edge_ref *eref = NULL;
  ms_cedge *cy = NULL, *kept = NULL;
  uint32_t *hop = NULL;
  size_t *seg_off = atom__mem_alloc(c->mem, (m + 1) * sizeof *seg_off);
  size_t ncy = 0, ne = 0, nref = 0, wit_cap = 0, nwit = 0, refs_cap = 0;
  int rc = seg_off ? 0 : ATOM_ENOMEM;
  for (size_t l = 0; l < m && !rc; l++) {
    seg_off[l] = path.n;
    rc = ms_path(s, s->seg[l].T, s->seg[l].S, &path);
  }
  if (!rc) {
    seg_off[m] = path.n;
    ncy = path.n; /* path.n - m hops and m links */
    refs_cap = path.n ? path.n : 1;
    refs = atom__mem_alloc(c->mem, refs_cap * sizeof *refs);
    cy = atom__mem_alloc(c->mem, (ncy ? ncy : 1) * sizeof *cy);
    kept = atom__mem_alloc(c->mem, (ncy ? ncy : 1) * sizeof *kept);
    hop = atom__mem_alloc(c->mem, 2 * (ncy ? ncy : 1) * sizeof *hop);
    if (!refs || !cy || !kept || !hop) rc = ATOM_ENOMEM;
  }
  if (rc) goto out;
  for (size_t i = 0; i < path.n; i++) {
    uint32_t txn = robust ? T->ev[path.a[i]].txn : path.a[i];
    atom_txn_ref r = tg_ref(T, txn);
    if (!nref || memcmp(&refs[nref - 1], &r, sizeof r) != 0) refs[nref++] = r;
  }
  if (nref > 1 && memcmp(&refs[0], &refs[nref - 1], sizeof refs[0]) == 0) nref--;
  /* the cycle in the search's order: segment l's hops, then its link into segment l + 1 */
  size_t q = 0;
  for (size_t l = 0; l < m; l++) {
    for (size_t k = seg_off[l]; k + 1 < seg_off[l + 1]; k++, q++) {
      cy[q] = (ms_cedge){NONE32, NONE32, 0};
      hop[2 * q] = path.a[k];
      hop[2 * q + 1] = path.a[k + 1];
    }
    cy[q++] = (ms_cedge){s->seg[l].b, s->seg[(l + 1) % m].a, 1};
  }
  if ((rc = ms_label_hops(s, hop, cy, ncy))) goto out;
  /* told so that the edge with the latest destination comes last */
  size_t closing = 0, nk = 0;
  for (size_t i = 0; i < ncy; i++)
    if (cy[i].to != NONE32 && (cy[closing].to == NONE32 || cy[i].to >= cy[closing].to))
      closing = i;
  for (size_t i = 1; i <= ncy; i++) {
    const ms_cedge *e = &cy[(closing + i) % ncy];
    if (e->from != NONE32) kept[nk++] = *e;
  }
  ne = nk < TSO_MAX_EDGES ? nk : TSO_MAX_EDGES;
  wit_cap = 4 * (ne ? ne : 1);
  wit = atom__mem_alloc(c->mem, wit_cap * sizeof *wit);
  eref = atom__mem_alloc(c->mem, (ne ? ne : 1) * sizeof *eref);
  if (!wit || !eref) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  size_t nedge = 0;
  for (size_t i = 0; i < nk; i++) {
    if (!edge_kept(i, nk)) continue;
    eref[nedge] = (atom_edge_ref){(uint32_t)nwit, (uint32_t)nwit + 1,
                                  i + 1 == nk ? ATOM_EDGE_CLOSING : 0, 0};
    kept[nedge++] = kept[i]; /* compacted in place: nedge <= i */
    wit[nwit++] = tg_atom_ev(T, kept[i].from);
    wit[nwit++] = tg_atom_ev(T, kept[i].to);
  }
  mbuf mb = {{0}, 0};
  if (robust) madd(&mb, "no SC-equivalent execution of the trace: a cycle of events once each "
                        "write is merged with its commit");
  else madd(&mb, "a cycle of transactions in some execution of the trace");
  madd(&mb, " (%zu conflict%s; undirected edges oriented as marked)", nk, nk == 1 ? "" : "s");
  for (size_t l = 0; l < ne && l < TSO_MSG_EDGES; l++) {
    madd(&mb, l ? "; " : ": ");
    if (kept[l].link) {
      madd_side(&mb, &wit[2 * l], 2 * l);
      madd(&mb, " before ");
      madd_side(&mb, &wit[2 * l + 1], 2 * l + 1);
      madd(&mb, " (oriented)");
    } else {
      madd(&mb, "{e%zu} before {e%zu}", 2 * l, 2 * l + 1);
    }
  }
  if (ne > TSO_MSG_EDGES) madd(&mb, "; and %zu more", ne - TSO_MSG_EDGES);
  /* the buffered reads of the links spelled out: they conflict with other threads' commits
   * only when served from memory */
  size_t nbuf = 0, nedge_wit = nwit;
  for (size_t i = 0; i < nedge_wit && i < 2 * TSO_MSG_EDGES && nwit < 256; i++) {
    const tg_ev *r = &T->ev[i % 2 ? kept[i / 2].to : kept[i / 2].from];
    if (!kept[i / 2].link || r->kind != ATOM_READ || !(r->flags & TG_BUF)) continue;
    wit[nwit] = tg_atom_ev(T, r->wr);
    madd(&mb, nbuf++ ? ", " : "; buffered reads (served from memory: their thread's write "
                                "committed before them): ");
    madd(&mb, "{e%zu} after the commit of {e%zu}", i, nwit);
    nwit++;
  }
  for (size_t i = 0; i < nwit; i++) wit[i].flags = 0;
  uint32_t vars[8];
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = robust ? "non-robust" : "tso-cycle";
  spec.event_index = ne ? wit[2 * ne - 1].index : c->last_index;
  spec.txns = refs;
  spec.n_txns = nref;
  spec.events = wit;
  spec.n_events = nwit;
  spec.n_vars = collect_vars(wit, nwit, vars, 8);
  spec.vars = spec.n_vars ? vars : NULL;
  spec.message = mb.s;
  spec.edges = eref;
  spec.n_edges = ne;
  rc = atom_env_report(c->env, &spec);
out:
  u32v_free(&path, c->mem);
  atom__mem_free(c->mem, seg_off, (m + 1) * sizeof *seg_off);
  atom__mem_free(c->mem, refs, refs_cap * sizeof *refs);
  atom__mem_free(c->mem, cy, (ncy ? ncy : 1) * sizeof *cy);
  atom__mem_free(c->mem, kept, (ncy ? ncy : 1) * sizeof *kept);
  atom__mem_free(c->mem, hop, 2 * (ncy ? ncy : 1) * sizeof *hop);
  atom__mem_free(c->mem, wit, wit_cap * sizeof *wit);
  atom__mem_free(c->mem, eref, (ne ? ne : 1) * sizeof *eref);
  return rc;
}

/* The search stopped at max_work without deciding: the checker is INCOMPLETE, not a
 * violation (an inconclusive search proves nothing either way). */
static int report_bound(tso *c, int robust, uint64_t work) {
  return atom_env_incomplete(c->env, c->last_index,
                             "the %s search through undirected edges stopped after %" PRIu64
                             " steps (max_work=%" PRIu64 "): the trace was only partly checked",
                             robust ? "robustness" : "TSO-serializability", work, c->max_work);
}

/* Mark in has[] (bit 2) the components in which a cycle can turn back.
 *
 * A segment of a cycle walks from its entry event a through nodes to its exit event b: inside a
 * node from the event it entered at (a, or the target of an edge from another node) to an event
 * it leaves from (b, or the source of an edge to another node). If in every node of the
 * component each entry event reaches, by forced edges, every target of the node's edges to other
 * nodes and every exit event of the node other than itself, then every segment's entry reaches
 * its exit by forced edges: no segment is free and the component holds no realizable cycle
 * (see ms_search_comp). The forced reach is explored up to MS_TURN_REACH events per entry
 * (besides the entry's own successors), and nodes of more than MS_TURN_EVENTS events are taken to
 * turn; both only make the test coarser. */
#define MS_TURN_REACH 32
#define MS_TURN_EVENTS 64
static int ms_turns(ms *s, unsigned char *has) {
  const tg *T = s->T;
  size_t nev = T->nev, nn = s->nn;
  /* event edges: the event graph's (transactions), or the search's own (single events) */
  const uint32_t *eo = s->node_of ? T->e_off : s->d_off, *ea = s->node_of ? T->e_adj : s->d_adj;
  unsigned char *mark = atom__mem_calloc(s->m, nev + 1, 1); /* 1: entry, 2: exit by a link */
  uint32_t *noff = NULL, *nevs = NULL;
  int rc = ATOM_ENOMEM;
  if (!mark) goto out;
  if (s->node_of) {
    if (csr_build(s->m, s->node_of, nev, nn, &noff, &nevs)) goto out;
  }
  for (size_t i = 0; i < s->nin; i++) mark[s->in_ev[i]] |= 1;
  for (size_t i = 0; i < s->nout; i++) mark[s->out_ev[i]] |= 2;
  for (uint32_t u = 0; u < nev; u++)
    for (uint32_t k = eo[u]; k < eo[u + 1]; k++) {
      uint32_t v = ea[k], nu = ms_node(s, u), nv = ms_node(s, v);
      if (nu != nv && s->comp[nu] == s->comp[nv]) mark[v] |= 1;
    }
  for (uint32_t x = 0; x < nev; x++) {
    uint32_t nx = ms_node(s, x), c = s->comp[nx];
    if (!(mark[x] & 1) || (has[c] & 2)) continue;
    uint32_t first = s->node_of ? noff[nx] : x, end = s->node_of ? noff[nx + 1] : x + 1;
    if (end - first > MS_TURN_EVENTS) {
      has[c] |= 2;
      continue;
    }
    ms_freach(s, x, c, MS_TURN_REACH);
    int turns = 0;
    for (uint32_t i = first; i < end && !turns; i++) {
      uint32_t y = s->node_of ? nevs[i] : i;
      if ((mark[y] & 2) && y != x && s->estamp[y] != s->ecur) turns = 1;
      for (uint32_t k = eo[y]; k < eo[y + 1] && !turns; k++) {
        uint32_t v = ea[k], nv = ms_node(s, v);
        if (nv != nx && s->comp[nv] == c && s->estamp[v] != s->ecur) turns = 1;
      }
    }
    if (turns) has[c] |= 2;
    if (ms_tick(s, end - first)) break;
  }
  rc = 0;
out:
  atom__mem_free(s->m, mark, nev + 1);
  atom__mem_free(s->m, noff, (nn + 1) * sizeof *noff);
  atom__mem_free(s->m, nevs, nev * sizeof *nevs);
  return rc;
}

/* Run the search over nn nodes with directed edges (d_off, d_adj); report what it finds. */
static int ms_run(tso *c, const tg *T, size_t nn, const uint32_t *node_of, const uint32_t *d_off,
                  const uint32_t *d_adj, int robust) {
  ms s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.m = c->mem;
  s.T = T;
  s.nn = nn;
  s.node_of = node_of;
  s.d_off = d_off;
  s.d_adj = d_adj;
  s.max_work = c->max_work;
  size_t nq = (T->nev > nn ? T->nev : nn) + 1, nev1 = T->nev + 1;
  unsigned char *has = NULL;
  int rc = 0, found = 0;
  s.loc = atom__mem_alloc(s.m, (nn + 1) * sizeof *s.loc);
  s.parent = atom__mem_alloc(s.m, (nn + 1) * sizeof *s.parent);
  s.queue = atom__mem_alloc(s.m, nq * sizeof *s.queue);
  s.estamp = atom__mem_calloc(s.m, nev1, sizeof *s.estamp);
  s.nstamp = atom__mem_calloc(s.m, nev1, sizeof *s.nstamp);
  s.npos = atom__mem_alloc(s.m, (nn + 1) * sizeof *s.npos);
  if (!s.loc || !s.parent || !s.queue || !s.estamp || !s.nstamp || !s.npos) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  s.hi = NONE32;
  for (size_t i = 0; i < nn; i++) s.npos[i] = NONE32;
  for (uint32_t e = T->nev; e-- > 0;) s.npos[ms_node(&s, e)] = e;
  if ((rc = ms_components(&s))) goto out;
  if (!s.bound) {
    has = atom__mem_calloc(s.m, s.ncomp + 1, 1);
    if (!has) {
      rc = ATOM_ENOMEM;
      goto out;
    }
    /* has[k] & 1: component k has an event with an incoming link. has[k] & 2: a cycle can turn
     * back in k (ms_turns). Without a turn, k holds no realizable cycle. */
    for (size_t i = 0; i < s.nin; i++) has[s.comp[ms_node(&s, s.in_ev[i])]] |= 1;
    if ((rc = ms_turns(&s, has))) goto out;
    for (uint32_t k = 0; k < s.ncomp && !found && !s.bound && !s.err; k++) {
      if ((k & 63) == 0)
        atom_env_progress(c->env, c->nbuf + (uint64_t)c->nbuf * k / s.ncomp, 2 * (uint64_t)c->nbuf);
      if (has[k] != 3 || s.cn_off[k + 1] - s.cn_off[k] < 2) continue;
      found = ms_search_comp(&s, k);
      if (found) rc = ms_report(&s, robust);
      ms_comp_free(&s);
    }
  }
  if (!rc && s.err) rc = s.err;
  if (!rc && s.bound && !found) rc = report_bound(c, robust, s.work);
out:
  c->work += s.work;
  ms_comp_free(&s);
  atom__mem_free(s.m, has, s.ncomp + 1);
  atom__mem_free(s.m, s.loc, (nn + 1) * sizeof *s.loc);
  atom__mem_free(s.m, s.parent, (nn + 1) * sizeof *s.parent);
  atom__mem_free(s.m, s.queue, nq * sizeof *s.queue);
  atom__mem_free(s.m, s.estamp, nev1 * sizeof *s.estamp);
  atom__mem_free(s.m, s.nstamp, nev1 * sizeof *s.nstamp);
  atom__mem_free(s.m, s.comp, (nn ? nn : 1) * sizeof *s.comp);
  atom__mem_free(s.m, s.in_off, (nn + 1) * sizeof *s.in_off);
  atom__mem_free(s.m, s.in_ev, s.nin * sizeof *s.in_ev);
  atom__mem_free(s.m, s.out_off, (nn + 1) * sizeof *s.out_off);
  atom__mem_free(s.m, s.out_ev, s.nout * sizeof *s.out_ev);
  atom__mem_free(s.m, s.cn_off, (s.ncomp + 1) * sizeof *s.cn_off);
  atom__mem_free(s.m, s.cn, nn * sizeof *s.cn);
  u32v_free(&s.nb1, s.m);
  u32v_free(&s.rows_made, s.m);
  atom__mem_free(s.m, s.npos, (nn + 1) * sizeof *s.npos);
  for (size_t i = 0; i < MS_MAX_DEPTH; i++) {
    atom__mem_free(s.m, s.lv[i].cand, s.lv[i].cand_words * sizeof *s.lv[i].cand);
    u32v_free(&s.lv[i].nb, s.m);
  }
  return rc;
}
/* ---- the trace analysis at finish ---- */

/* Whether a cycle of transactions can turn back anywhere: some transaction that is not unary,
 * or some edge that is not forced. A trace without either (no BEGIN/END, no fork or join right
 * after a write or a buffered read) is TSO-serializable. This is ms_turns for the whole trace at
 * once, without building the components first. */
static int tg_may_turn(const tg *T) {
  if (T->nf < T->ne) return 1;
  for (size_t i = 0; i < T->ntx; i++)
    if (!T->tx[i].unary) return 1;
  return 0;
}

static int tso_trace(tso *c) {
  atom__mem *m = c->mem;
  uint32_t nthreads = atom_env_count(c->env, ATOM_SPACE_THREAD);
  tg T;
  tb b;
  memset(&T, 0, sizeof T);
  memset(&b, 0, sizeof b);
  b.c = c;
  b.T = &T;
  T.nvar = atom_env_count(c->env, ATOM_SPACE_VAR);
  b.nth = nthreads;
  b.nlk = atom_env_count(c->env, ATOM_SPACE_LOCK);
  b.phase1 = !c->fenced;
  atom__dg_init(&b.g1, m, sizeof(uint32_t));
  atom__dg_set_edge_payload(&b.g1, 2 * sizeof(uint32_t));
  uint32_t *dpo_off = NULL, *dpo_adj = NULL, *node_of = NULL;
  size_t ndpo = 0;
  u32v pl = {0};
  int rc = ATOM_ENOMEM;
  size_t ng = 0;
  for (size_t i = 0; i < c->nbuf; i++)
    if (c->buf[i].kind != ATOM_BEGIN && c->buf[i].kind != ATOM_END &&
        c->buf[i].kind != ATOM_COMMIT)
      ng++;
  if (!b.nth) b.nth = 1;
  if (!b.nlk) b.nlk = 1;
  b.nvar_cap = T.nvar ? T.nvar : 1;
  T.ev_cap = ng ? ng : 1;
  b.th = atom__mem_calloc(m, b.nth, sizeof *b.th);
  b.var = atom__mem_calloc(m, b.nvar_cap, sizeof *b.var);
  b.rel = atom__mem_alloc(m, b.nlk * sizeof *b.rel);
  T.ev = atom__mem_alloc(m, T.ev_cap * sizeof *T.ev);
  if (!b.th || !b.var || !b.rel || !T.ev) goto out;
  for (size_t i = 0; i < b.nth; i++) b.th[i].txn = b.th[i].nstar = b.th[i].sstar = NONE32;
  for (size_t i = 0; i < b.nlk; i++) b.rel[i] = NONE32;

  for (size_t i = 0; i < c->nbuf; i++) {
    const atom_ev *r = &c->buf[i];
    tb_thread *th = &b.th[r->thread];
    /* progress: building the graph is the first half of the work at finish, the search the
     * second (ms_run) */
    if ((i & 4095) == 0) atom_env_progress(c->env, i, 2 * (uint64_t)c->nbuf);
    if (r->kind == ATOM_COMMIT) continue; /* 002 §5: a trace forgets the commits */
    if (r->kind == ATOM_BEGIN) {
      if ((rc = tb_new_txn(&b, r->thread, 0, r->index, r->loc, &th->txn))) goto out;
      continue;
    }
    if (r->kind == ATOM_END) {
      if (th->txn != NONE32) tb_txn_done(&b, th->txn);
      th->txn = NONE32;
      continue;
    }
    uint32_t g = (uint32_t)T.nev++;
    uint32_t txn = th->txn;
    int unary = txn == NONE32;
    if (unary && (rc = tb_new_txn(&b, r->thread, 1, r->index, r->loc, &txn))) goto out;
    T.ev[g] = (tg_ev){r->kind, r->thread, r->target, txn, NONE32, 0, NONE32, 0, r->index, r->loc};
    T.tx[txn].last_kind = r->kind;
    if (r->kind == ATOM_WRITE) T.tx[txn].has_write = 1;
    if ((rc = tb_graph_event(&b, r, g))) goto out;
    if (unary) tb_txn_done(&b, txn);
  }

  if (c->fenced) {
    /* 002 §6.3 needs transaction-fenced traces: every transaction that writes ends with a drain
     * (a read-only transaction has nothing in the buffer to hide). */
    for (size_t i = 0; i < T.ntx; i++)
      if (T.tx[i].has_write && !is_drain(T.tx[i].last_kind)) {
        char name[64];
        atom_env_label(c->env, ATOM_SPACE_THREAD, T.tx[i].thread, name, sizeof name);
        rc = atom_env_error(c->env, ATOM_EINVAL,
                            "tso: fenced=yes, but the transaction of thread %s at event %" PRIu64
                            " writes and does not end with a fence or lock operation",
                            name, T.tx[i].begin_index);
        goto out;
      }
  }
  if (!c->fenced && b.cycles && !c->robust) { /* phase 1 found violations: the verdict is in */
    rc = 0;
    goto out;
  }
  if ((rc = adj_build(m, &T.el, T.nev, &T.e_off, &T.e_adj, &T.ne)) ||
      (rc = adj_build(m, &T.fl, T.nev, &T.f_off, &T.f_adj, &T.nf)) ||
      (rc = adj_build(m, &T.dl, T.ntx, &T.d_off, &T.d_adj, &T.nd)) ||
      (rc = tg_index(&T, m, b.nth)))
    goto out;
  u32v_free(&T.el, m);
  u32v_free(&T.fl, m);
  u32v_free(&T.dl, m);

  if (c->fenced) {
    /* 002 Thm 3: a transaction-fenced program is TSO-serializable iff it is SC-serializable and
     * robust. SC-serializability of the trace: its execution that commits every write at once
     * (for transaction-fenced traces its TSO conflict graph is the SC one). */
    xe sc;
    xe_init(&sc, c->env, m, 0, "SC (every write committed at once)");
    for (size_t i = 0; i < c->nbuf && !rc; i++) {
      const atom_ev *r = &c->buf[i];
      if (r->kind == ATOM_COMMIT) continue;
      rc = xe_event(&sc, r);
      if (!rc && r->kind == ATOM_WRITE) {
        atom_ev cm = {ATOM_COMMIT, r->thread, r->target, 0, r->index, r->loc};
        rc = xe_event(&sc, &cm);
      }
    }
    xe_free(&sc);
    if (rc) goto out;
  } else if (!b.cycles && tg_may_turn(&T)) {
    /* 002 §6.2 on the transaction graph */
    node_of = atom__mem_alloc(m, (T.nev ? T.nev : 1) * sizeof *node_of);
    if (!node_of) {
      rc = ATOM_ENOMEM;
      goto out;
    }
    for (size_t i = 0; i < T.nev; i++) node_of[i] = T.ev[i].txn;
    if ((rc = ms_run(c, &T, T.ntx, node_of, T.d_off, T.d_adj, 0))) goto out;
  }
  if (c->fenced || c->robust) {
    /* Robustness (002 §4.2): the same search on single events, with program order kept whole
     * (directed edges: the event graph's plus each event to the next of its thread). */
    uint32_t *last = atom__mem_alloc(m, b.nth * sizeof *last);
    if (!last) {
      rc = ATOM_ENOMEM;
      goto out;
    }
    for (size_t i = 0; i < b.nth; i++) last[i] = NONE32;
    rc = 0;
    for (uint32_t e = 0; e < T.nev && !rc; e++) {
      for (uint32_t k = T.e_off[e]; k < T.e_off[e + 1] && !rc; k++)
        rc = u32v_push(&pl, m, e) || u32v_push(&pl, m, T.e_adj[k]);
      uint32_t t = T.ev[e].thread;
      if (!rc && last[t] != NONE32) rc = u32v_push(&pl, m, last[t]) || u32v_push(&pl, m, e);
      last[t] = e;
    }
    atom__mem_free(m, last, b.nth * sizeof *last);
    if (rc || (rc = adj_build(m, &pl, T.nev, &dpo_off, &dpo_adj, &ndpo))) {
      rc = ATOM_ENOMEM;
      goto out;
    }
    u32v_free(&pl, m);
    if ((rc = ms_run(c, &T, T.nev, NULL, dpo_off, dpo_adj, 1))) goto out;
  }
  rc = 0;
out:
  u32v_free(&pl, m);
  atom__mem_free(m, dpo_off, (T.nev + 1) * sizeof *dpo_off);
  atom__mem_free(m, dpo_adj, ndpo * sizeof *dpo_adj);
  atom__mem_free(m, node_of, (T.nev ? T.nev : 1) * sizeof *node_of);
  tb_free(&b);
  tg_free(&T, m);
  return rc;
}

/* ---- vtable ---- */

static int tso_to_exec(tso *c) {
  xe *x = atom__mem_alloc(c->mem, sizeof *x);
  if (!x) return ATOM_ENOMEM;
  xe_init(x, c->env, c->mem, c->robust, NULL);
  /* Replay what was buffered before the first COMMIT: its writes are still pending. */
  for (size_t i = 0; i < c->nbuf; i++) {
    int rc = xe_event(x, &c->buf[i]);
    if (rc < 0) {
      xe_free(x);
      atom__mem_free(c->mem, x, sizeof *x);
      return rc;
    }
  }
  atom__mem_free(c->mem, c->buf, c->buf_cap * sizeof *c->buf);
  c->buf = NULL;
  c->nbuf = c->buf_cap = 0;
  c->x = x;
  c->active = MODE_EXEC;
  return 0;
}

static int tso_event(void *self, const atom_ev *ev) {
  tso *c = self;
  c->last_index = ev->index;
  if (c->active == MODE_EXEC) return xe_event(c->x, ev);
  if (ev->kind == ATOM_COMMIT) {
    if (c->mode == MODE_TRACE) return 0; /* a trace forgets its commits (002 §5) */
    int rc = tso_to_exec(c);
    return rc ? rc : xe_event(c->x, ev);
  }
  if (c->nbuf >= (size_t)NONE32 - 2)
    return atom_env_error(c->env, ATOM_ELIMIT,
                          "tso: event %" PRIu64 ": a trace analysis holds at most %u events",
                          ev->index, NONE32 - 2);
  if (c->nbuf == c->buf_cap && ATOM__GROW(c->mem, c->buf, c->buf_cap, c->nbuf + 1))
    return ATOM_ENOMEM;
  c->buf[c->nbuf++] = *ev;
  return 0;
}

static int tso_finish(void *self) {
  tso *c = self;
  if (c->active == MODE_EXEC) return 0;
  int rc = tso_trace(c);
  atom__mem_free(c->mem, c->buf, c->buf_cap * sizeof *c->buf);
  c->buf = NULL;
  c->nbuf = c->buf_cap = 0;
  return rc;
}

static void tso_destroy(void *self) {
  tso *c = self;
  if (!c) return;
  if (c->x) {
    xe_free(c->x);
    atom__mem_free(c->mem, c->x, sizeof *c->x);
  }
  atom__mem_free(c->mem, c->buf, c->buf_cap * sizeof *c->buf);
  atom__mem_free(c->mem, c, sizeof *c);
}

static int tso_create(void **self, atom_env *env) {
  int mode = MODE_AUTO, fenced = 0, robust = 0, rc;
  uint64_t max_work = 100000000u;
  const char *v = atom_env_arg(env, "mode");
  if (!v || strcmp(v, "auto") == 0) mode = MODE_AUTO;
  else if (strcmp(v, "execution") == 0) mode = MODE_EXEC;
  else if (strcmp(v, "trace") == 0) mode = MODE_TRACE;
  else return atom_env_error(env, ATOM_EINVAL, "mode must be auto, execution or trace, not \"%s\"", v);
  if ((rc = atom__arg_yes_no(env, "fenced", &fenced)) ||
      (rc = atom__arg_yes_no(env, "robust", &robust))) return rc;
  if (fenced && mode == MODE_EXEC)
    return atom_env_error(env, ATOM_EINVAL, "fenced=yes applies to mode=trace (or auto), not to "
                                            "mode=execution");
  if ((v = atom_env_arg(env, "max_work"))) {
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || *v == '-' || n < 1)
      return atom_env_error(env, ATOM_EINVAL, "max_work must be a positive integer, not \"%s\"", v);
    max_work = n;
  }
  atom__mem first;
  atom__mem_init_env(&first, env);
  tso *c = atom__mem_calloc(&first, 1, sizeof *c);
  if (!c) return ATOM_ENOMEM;
  c->own_mem = first;
  atom__mem *m = &c->own_mem;
  c->env = env;
  c->mem = m;
  c->mode = mode;
  c->active = mode;
  c->fenced = fenced;
  c->robust = robust;
  c->max_work = max_work;
  if (mode == MODE_EXEC) {
    c->x = atom__mem_alloc(m, sizeof *c->x);
    if (!c->x) {
      atom__mem_free(m, c, sizeof *c);
      return ATOM_ENOMEM;
    }
    xe_init(c->x, env, m, robust, NULL);
  }
  *self = c;
  return 0;
}

static int tso_stats(void *self, atom_checker_counters *out) {
  tso *c = self;
  out->clocks = 0;
  if (c->x) {
    out->nodes = atom__dg_node_count(&c->x->g) + atom__dg_node_count(&c->x->rg);
    out->edges = atom__dg_edge_count(&c->x->g) + atom__dg_edge_count(&c->x->rg);
  } else {
    out->nodes = c->nbuf; /* events held for the trace analysis */
    out->edges = 0;
  }
  return 0;
}

static const char *const tso_keys[] = {"mode", "fenced", "robust", "max_work", NULL};

const atom_checker atom__checker_tso = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) |
                  ATOM_KIND_BIT(ATOM_ACQUIRE) | ATOM_KIND_BIT(ATOM_RELEASE) |
                  ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) | ATOM_KIND_BIT(ATOM_BEGIN) |
                  ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_FENCE) | ATOM_KIND_BIT(ATOM_COMMIT),
    .name = "tso",
    .summary = "TSO-serializability of an execution with commits, or of every TSO execution of a "
               "trace",
    .arg_keys = tso_keys,
    .create = tso_create,
    .on_event = tso_event,
    .finish = tso_finish,
    .destroy = tso_destroy,
    .stats = tso_stats,
    /* Predictive: without COMMIT events (mode=auto on a trace, mode=trace) it judges every TSO
     * execution of the trace (002 Def. 3), not only one order of the commits. */
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_AT_FINISH | ATOM_CHECKER_PROP_SOUND |
                  ATOM_CHECKER_PROP_COMPLETE | ATOM_CHECKER_PROP_PREDICTIVE,
};
