/* The tso checker's private header: what its files share (lib/checkers/tso/).
 *
 * The checker decides TSO-serializability (002: Enea & Farzan, "On Atomicity in Presence of
 * Non-atomic Writes", TACAS 2016). Its concepts, one file each:
 *   checker.c            the vtable, the arguments, mode=auto (buffer until the first COMMIT)
 *   execution.c          mode=execution: the conflict graph of one TSO execution (002 §3-§4)
 *   event_graph.c        mode=trace: the trace's event graph and transaction graph (002 §5)
 *   trace.c              mode=trace at finish: phase 1, the search, fenced=yes, robust=yes
 *   cycle_search.c       the search for cycles through undirected edges (002 §6.2)
 *   search_components.c  where that search can find cycles: components and turns
 *   commit_positions.c   whether commit positions exist that realize a set of links
 *   reports.c            the reports (structured: events, edges, transactions, templates)
 * doc/checkers/tso.md says what the checker decides and how. */
#ifndef ATOM_CHECKERS_TSO_INTERNAL_H
#define ATOM_CHECKERS_TSO_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "atomicity/checker.h"
#include "atomicity/error.h"
#include "support/digraph.h"
#include "support/mem.h"
#include "support/report_build.h"
#include "support/u64map.h"

#define NONE32 UINT32_MAX
/* Private flag on the checker's own copies of events: a buffered read (never reported as is). */
#define EV_BUFFERED 0x80000000u

enum { MODE_AUTO = 0, MODE_EXECUTION = 1, MODE_TRACE = 2 };

static inline int is_drain(uint32_t kind) {
  return kind == ATOM_FENCE || kind == ATOM_ACQUIRE || kind == ATOM_RELEASE;
}

/* A growable array of uint32_t. */
typedef struct id_list {
  uint32_t *a;
  size_t n, cap;
} id_list;

static inline int id_list_push(id_list *v, atom__mem *m, uint32_t x) {
  if (v->n == v->cap && ATOM__GROW(m, v->a, v->cap, v->n + 1)) return ATOM_ENOMEM;
  v->a[v->n++] = x;
  return 0;
}

static inline void id_list_free(id_list *v, atom__mem *m) {
  atom__mem_free(m, v->a, v->cap * sizeof *v->a);
  memset(v, 0, sizeof *v);
}

/* The variables a thread wrote since its last drain (its store-buffer view), as dense entries
 * of the thread: a map from variable to entry (support/u64map: entries are never removed), and
 * per entry the drain count at which it was last made current. A drain makes every entry stale
 * at once by counting (buffer_clear); an entry made current again starts afresh (the caller
 * resets its view). `live` lists the current entries in the order they became current. */
typedef struct buffer_table {
  atom__u64map map; /* variable -> entry */
  uint32_t *var;    /* entry -> variable */
  size_t var_cap;
  uint32_t *mark;   /* entry -> drains + 1 while current */
  size_t mark_cap;
  size_t n;         /* entries */
  id_list live;     /* current entries */
  uint32_t drains;
} buffer_table;

/* The entry of var, current or stale, or NONE32 (var never had one). */
static inline uint32_t buffer_entry(const buffer_table *t, uint32_t var) {
  uint32_t e;
  return atom__u64map_get(&t->map, var, &e) ? e : NONE32;
}

/* Is entry e (from buffer_entry) current? */
static inline int buffer_current(const buffer_table *t, uint32_t e) {
  return e != NONE32 && t->mark[e] == t->drains + 1;
}

/* The current entry of var, or NONE32. */
static inline uint32_t buffer_find(const buffer_table *t, uint32_t var) {
  uint32_t e = buffer_entry(t, var);
  return buffer_current(t, e) ? e : NONE32;
}

/* Make var (not current) current; @p known is buffer_entry(t, var), so that the variable is
 * looked up once. *entry receives its entry, which may be below t->n (a stale one) or t->n - 1
 * (a new one). 0, or ATOM_ENOMEM with the table unchanged. */
int atom__tso_buffer_add(buffer_table *t, atom__mem *m, uint32_t var, uint32_t known,
                         uint32_t *entry);
/* A drain: no entry is current. */
void atom__tso_buffer_clear(buffer_table *t);
void atom__tso_buffer_free(buffer_table *t, atom__mem *m);

/* ==== mode=execution: conflict graph of one TSO execution (002 §3-§4) ======================== */

/* An edge source: the node of a transaction and the event of it that makes the conflict. */
typedef struct exec_src {
  atom__dg_node n;
  atom_ev ev;
} exec_src;

/* Edge payload: the two conflicting events (src in the edge's source transaction). */
typedef struct exec_label {
  atom_ev src, dst;
} exec_label;

/* Node payload of the transaction graph. */
typedef struct exec_txn {
  uint32_t thread, unary;
  uint64_t begin_index, begin_loc;
  uint32_t pending; /* its writes not committed yet: commits may still add in-edges */
  uint32_t ended;
  atom__dg_node next; /* while pending: the thread's next transaction with pending writes */
} exec_txn;

/* Node payload of the write-contraction graph (robust=yes). */
typedef struct exec_rnode {
  atom_ev ev;
  atom_txn_ref txn;
  atom__dg_node next; /* a pending write's node: the node of the thread's next pending write */
} exec_rnode;

/* Per (thread, variable) since the thread's last drain: the store-buffer view. */
typedef struct exec_buffer_view {
  uint32_t pending; /* writes of the variable issued and not committed */
  uint32_t rb_mark; /* == thread epoch + 1: buffered read of it since the last non-read */
  exec_src wb;        /* last w(x) or buffered r(x) */
  exec_src rb;        /* last buffered r(x) since the thread's last non-read event */
} exec_buffer_view;

typedef struct exec_reader {
  uint32_t thread, pad;
  exec_src src;
} exec_reader;

/* Readers of a variable since its last commit: at most one (the latest) per thread. */
typedef struct exec_readers {
  exec_reader *r;
  uint32_t n, cap;
} exec_readers;

typedef struct exec_var {
  exec_src com;   /* last commit */
  exec_readers rd;  /* reads from memory since then */
  exec_src rcom;  /* the same in the write-contraction graph */
  exec_readers rrd;
} exec_var;

typedef struct exec_lock {
  exec_src rel, rrel; /* last release */
} exec_lock;

typedef struct exec_thread {
  atom__dg_node cur; /* open transaction */
  uint32_t in_txn;
  uint32_t epoch;    /* counts the thread's non-read events */
  uint32_t started;  /* it had a graph event: join(u) conflicts with u's events, if any */
  uint32_t npending; /* writes issued and not committed */
  uint64_t begin_index, begin_loc;
  /* program order (see atom__tso_exec_event): the last non-read event, the last strong event
   * (anything but a write or a buffered read), buffered reads since the last non-read, the buffer
   * view */
  exec_src nstar, sstar;
  buffer_table bt;
  exec_buffer_view *bv;
  size_t bv_cap;
  id_list rb;    /* entries of bt with a buffered read since the last non-read */
  /* Pending writes: the session keeps their FIFO (atom_env_commit_source,
   * atom_env_pending_writes); the thread keeps only their graph nodes, linked oldest first
   * through the nodes' payloads: the transactions that have some (exec_txn.next) and, with
   * robust=yes, the writes' own nodes (exec_rnode.next). */
  atom__dg_node ptxn_head, ptxn_tail;
  atom__dg_node pw_head, pw_tail;
  exec_src rcur; /* write-contraction graph: the node that the thread's next event follows */
} exec_thread;

typedef struct exec_engine {
  atom_env *env;
  atom__mem *mem;
  const char *what; /* message prefix, or NULL */
  int robust;
  atom__dg g;  /* transactions */
  atom__dg rg; /* write contraction (robust=yes) */
  exec_thread *th;
  size_t th_cap;
  exec_var *var;
  size_t var_cap;
  exec_lock *lk;
  size_t lk_cap;
  atom__report_build rb; /* report scratch */
} exec_engine;

/* ==== mode=trace: the trace, its event graph and its transaction graph (002 §5) ============== */

#define GRAPH_BUFFERED 0x1u /* a buffered read: a w(x) of its thread earlier, no drain between */

/* A graph event of the trace (BEGIN/END only delimit transactions; COMMIT is not part of a
 * trace). Its number in trace_graph.ev is its position: every directed edge goes forward. */
typedef struct graph_event {
  uint32_t kind, thread, target, txn;
  uint32_t d;  /* a write: position of the drain (or join of its thread) before which it is
                  committed in every execution; NONE32 if none follows */
  uint32_t flags;
  uint32_t wr; /* a buffered read: the write of its thread it may read from the buffer (the
                  read is served from memory iff that write is committed before it) */
  uint32_t pad;
  uint64_t index, loc;
} graph_event;

typedef struct graph_txn {
  uint32_t thread, unary;
  uint64_t begin_index, begin_loc;
  uint32_t has_write, last_kind; /* for fenced=yes */
} graph_txn;

typedef struct graph_write_group {
  uint32_t thread, start, len; /* ws[start .. start+len): writes of one variable by one thread */
} graph_write_group;

typedef struct trace_graph {
  graph_event *ev;
  size_t nev, ev_cap;
  graph_txn *tx;
  size_t ntx, tx_cap;
  /* E: directed event edges, present in every execution, kept transitively reduced as for
   * the execution (CSR, forward); F: those of them that also order the two events' effects
   * (see build_edge) */
  id_list el, fl;        /* pairs src, dst while building */
  uint32_t *e_off, *e_adj, *f_off, *f_adj;
  size_t ne, nf;
  /* D: directed transaction edges (CSR) */
  id_list dl;
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
  graph_write_group *wg;
  uint32_t *ws;
  size_t nwg, nws;
} trace_graph;



static inline atom_ev graph_atom_ev(const trace_graph *T, uint32_t e) {
  const graph_event *g = &T->ev[e];
  atom_ev r = {g->kind, g->thread, g->target, 0, g->index, g->loc};
  if (g->flags & GRAPH_BUFFERED) r.flags = EV_BUFFERED;
  return r;
}

static inline atom_txn_ref graph_txn_ref(const trace_graph *T, uint32_t txn) {
  const graph_txn *x = &T->tx[txn];
  return (atom_txn_ref){x->thread, x->unary, x->begin_index, x->begin_loc};
}

/* Building state, per thread and per variable. */
typedef struct builder_buffer_view {
  uint32_t wb;      /* last w(x) or buffered r(x) since the drain */
  uint32_t lastw;   /* last w(x) since the drain */
  uint32_t rb;      /* last buffered r(x) since the last non-read */
  uint32_t rb_mark; /* == epoch + 1 while rb is current */
} builder_buffer_view;

typedef struct builder_thread {
  uint32_t txn; /* open transaction, NONE32 outside */
  uint32_t nstar, sstar, epoch;
  uint32_t started; /* it had a graph event (see exec_thread) */
  buffer_table bt;
  builder_buffer_view *bv;
  size_t bv_cap;
  id_list rb;   /* bt entries with a buffered read since the last non-read */
  id_list pend; /* writes since the last drain */
} builder_thread;

typedef struct builder_pair {
  uint32_t thread, ev;
} builder_pair;

typedef struct builder_pairs {
  builder_pair *p;
  uint32_t n, cap;
} builder_pairs;

typedef struct builder_var {
  builder_pairs rd; /* the last read of each thread */
  builder_pairs st; /* the last settled write of each thread (its commit precedes a drain) */
} builder_var;

typedef struct graph_builder {
  struct tso_checker *c;
  trace_graph *T;
  builder_thread *th;
  size_t nth;
  builder_var *var;
  size_t nvar_cap;
  uint32_t *rel; /* last release of each lock */
  size_t nlk;
  int phase1;    /* feed the transaction graph to g1 */
  atom__dg g1;   /* phase 1: directed transaction edges only */
  atom__dg_node *txn_node;
  size_t txn_node_cap;
  size_t cycles;
} graph_builder;


/* ==== the checker =========================================================================== */

typedef struct tso_checker {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int mode;   /* asked: MODE_AUTO, MODE_EXECUTION, MODE_TRACE */
  int active; /* decided: MODE_EXECUTION once commits are expected, else MODE_AUTO / MODE_TRACE */
  int fenced, robust;
  uint64_t max_work;
  exec_engine *x;         /* execution engine (MODE_EXECUTION) */
  atom_ev *buf;  /* events kept for trace analysis (or for replay when the first COMMIT comes) */
  size_t nbuf, buf_cap;
  uint64_t last_index;
  uint64_t work; /* search steps spent by the last trace analysis (stats) */
  atom__report_build rb; /* report scratch of the trace analysis */
} tso_checker;


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
 * satisfiable (commit_pos_feasible). This is 002 Thm 4 / Cor. 1 made exact for buffered reads.
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

#define SEARCH_MAX_DEPTH 64
#define SEARCH_MAX_CONSTRAINTS (4 * (SEARCH_MAX_DEPTH + 2))
#define SEARCH_ROW_BUDGET ((size_t)256 << 20) /* bytes of cached reachability rows */

enum { COMMIT_BEFORE_EVENT = 1, COMMIT_AFTER_EVENT = 2, COMMIT_BEFORE_COMMIT = 3 };

/* A constraint on commit positions: COMMIT_BEFORE_EVENT: c(w) before event v; COMMIT_AFTER_EVENT:
 * event v before c(w); COMMIT_BEFORE_COMMIT: c(w) before c(v). */
typedef struct commit_pos_constraint {
  uint32_t type, w, v;
} commit_pos_constraint;

typedef struct search_segment {
  uint32_t T, a, S, b; /* entry node (local), entry event, exit node (local), exit event */
} search_segment;

typedef struct search_level {
  uint64_t *cand;
  size_t cand_words;
  id_list nb;
} search_level;

typedef struct cycle_search {
  tso_checker *c;
  atom__mem *m;
  const trace_graph *T;
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
  id_list nb1;               /* sources of links into a1 */
  uint32_t a1;
  search_level lv[SEARCH_MAX_DEPTH];
  search_segment seg[SEARCH_MAX_DEPTH + 1];
  commit_pos_constraint cons[SEARCH_MAX_CONSTRAINTS];
  size_t ncons;
  size_t found; /* segments of the cycle found, 0 if none */
  int cutoff;
  /* A local pass (see search_component) looks only at events in [lo, hi] around its start node;
   * lo = 0, hi = NONE32 otherwise. */
  uint32_t *npos;   /* node -> its first event (NONE32 if none) */
  int local;
  uint32_t lo, hi;
  id_list rows_made;   /* local pass: rows computed for the current start node */
  uint64_t **pool;  /* local pass: zeroed rows for reuse */
  size_t npool, pool_cap;
  uint32_t *rlo, *rhi; /* local -> the words [rlo, rhi) of its row that may hold bits */
} cycle_search;

static inline uint32_t search_node(const cycle_search *s, uint32_t e) {
  return s->node_of ? s->node_of[e] : e;
}

static inline int search_in_window(const cycle_search *s, uint32_t e) {
  return e >= s->lo && e <= s->hi;
}

static inline int search_tick(cycle_search *s, uint64_t n) {
  s->work += n;
  if (s->work > s->max_work) s->bound = 1;
  return s->bound || s->err;
}

static inline int bit_test(const uint64_t *b, uint32_t i) {
  return (int)((b[i >> 6] >> (i & 63)) & 1);
}
static inline void bit_set(uint64_t *b, uint32_t i) { b[i >> 6] |= 1ull << (i & 63); }

/* First index i in a[0..n) with a[i] >= key (a sorted). */
static inline uint32_t lower_bound(const uint32_t *a, uint32_t n, uint32_t key) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}


/* Which links atom__tso_search_links lists. */
enum {
  LINKS_FIRST_ONLY = 1, /* at most one link */
  LINKS_NO_WINDOW = 2   /* leave out the U links (the windows of the writes of other threads) */
};

/* ---- execution.c ---- */
void atom__tso_exec_init(exec_engine *x, atom_env *env, atom__mem *mem, int robust,
                         const char *what);
void atom__tso_exec_free(exec_engine *x);
/* One normalized event of the execution (a COMMIT commits the thread's oldest pending write). */
int atom__tso_exec_event(exec_engine *x, const atom_ev *ev);

/* ---- event_graph.c ---- */
void atom__tso_graph_free(trace_graph *T, atom__mem *m);
int atom__tso_build_new_txn(graph_builder *b, uint32_t t, int unary, uint64_t index, uint64_t loc,
                            uint32_t *out);
void atom__tso_build_txn_done(graph_builder *b, uint32_t txn);
int atom__tso_build_event(graph_builder *b, const atom_ev *r, uint32_t g);
void atom__tso_build_free(graph_builder *b);
int atom__tso_csr_build(atom__mem *m, const uint32_t *key, size_t n, size_t nk,
                        uint32_t **off_out, uint32_t **out);
int atom__tso_adj_build(atom__mem *m, const id_list *el, size_t nn, uint32_t **off,
                        uint32_t **adj, size_t *nadj);
int atom__tso_graph_index(trace_graph *T, atom__mem *m, uint32_t nthreads);

/* ---- trace.c ---- */
int atom__tso_trace_analyse(tso_checker *c);

/* ---- cycle_search.c ---- */
int atom__tso_search_links(cycle_search *s, uint32_t v, int out, id_list *res, int flags);
void atom__tso_search_forced_reach(cycle_search *s, uint32_t a, uint32_t comp, size_t limit);
int atom__tso_search_path(cycle_search *s, uint32_t u, uint32_t v, id_list *out);
int atom__tso_search_run(tso_checker *c, const trace_graph *T, size_t nn, const uint32_t *node_of,
                         const uint32_t *d_off, const uint32_t *d_adj, int robust);

/* ---- search_components.c ---- */
int atom__tso_search_components(cycle_search *s);
int atom__tso_search_turns(cycle_search *s, unsigned char *has);

/* ---- commit_positions.c ---- */
int atom__tso_commit_pos_try_link(cycle_search *s, uint32_t b, uint32_t a);

/* ---- reports.c ---- */
int atom__tso_report_exec_cycle(exec_engine *x, atom__dg *g, const exec_label *closing,
                                int robust);
int atom__tso_report_exec_self(exec_engine *x, atom__dg_node n, const exec_label *lb);
int atom__tso_report_directed_cycle(graph_builder *b, uint32_t src, uint32_t dst);
int atom__tso_report_search_cycle(cycle_search *s, int robust);
int atom__tso_report_search_bound(tso_checker *c, int robust, uint64_t work);

#endif
