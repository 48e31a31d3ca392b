/* commit-node at finish (004 §3-4): inter-edges between concurrent events (Figs. 3 and 5),
 * the unit graph with the ordering links, its biconnected components, the commit-node test of
 * every transaction (Thm 4.1, 4.3, 4.6) and the reports; the goodlock pass for potential
 * deadlocks. The units it reads are recorded by commit_node.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/commit_node/commit_node.h"
#include "support/msgbuf.h"


/* ---- inter-edges (004 Figs. 3 and 5) -------------------------------------------------- */

/* Inter-edges between the same two units are kept only as far as the decision can tell them
 * apart. What it reads of the edges between units U and V is: whether there is one or more than
 * one (a bundle of two or more is a cycle of the unit graph, so it lies inside one biconnected
 * component; a single edge may be a bridge), and, for each node of U (of V), its earliest edge
 * to V (to U): the attachment nodes of the commit-node test, the incidence it picks first, the
 * tree edges of the component search and the edges of a report's cycle path all come from
 * such earliest edges. So an edge is kept iff it is the first edge of one of its endpoints
 * towards the other endpoint's unit (keys node << 32 | other unit: attach_bits or the seen set); a later
 * edge with both keys seen changes neither the components, nor a verdict, nor a report. This
 * also drops exact duplicates. A read that conflicts with every write of a long concurrent
 * transaction thus costs one edge per node and unit, not one per write. */
/* The inter-edge array grows by a quarter, never past max_edges: a doubling array at 9.4
 * million edges would hold 16.8 million slots (most of the overshoot never written). Large
 * blocks are remapped by realloc, so the copies cost little. */
static int edges_grow(commit_node *c) {
  size_t ncap = c->ecap < 1024 ? 1024 : c->ecap + c->ecap / 4;
  if (ncap > c->max_edges) ncap = c->max_edges;
  void *p = atom__mem_realloc(c->mem, c->edges, c->ecap * sizeof *c->edges,
                              ncap * sizeof *c->edges);
  if (!p) return ATOM_ENOMEM;
  c->edges = p;
  c->ecap = ncap;
  return 0;
}

/* The set of (node, unit) keys when the bits do not fit: keys only (the u64map's 16-byte slots
 * also hold a value), linear probing from atom__hash64 of the key, at most three quarters
 * full. Node and unit ids are below 2^32 - 1, so key + 1 is never 0. */
static int seen_has(const commit_node *c, uint64_t key) {
  if (!c->seen_cap) return 0;
  size_t mask = c->seen_cap - 1;
  for (size_t i = atom__hash64(key) & mask;; i = (i + 1) & mask) {
    if (c->seen[i] == key + 1) return 1;
    if (!c->seen[i]) return 0;
  }
}

static int seen_put(commit_node *c, uint64_t key) {
  if ((c->seen_n + 1) * 4 > c->seen_cap * 3) {
    size_t ncap = c->seen_cap ? c->seen_cap * 2 : 1024;
    uint64_t *ns = atom__mem_calloc(c->mem, ncap, sizeof *ns);
    if (!ns) return ATOM_ENOMEM;
    for (size_t j = 0; j < c->seen_cap; j++) {
      if (!c->seen[j]) continue;
      size_t i = atom__hash64(c->seen[j] - 1) & (ncap - 1);
      while (ns[i]) i = (i + 1) & (ncap - 1);
      ns[i] = c->seen[j];
    }
    atom__mem_free(c->mem, c->seen, c->seen_cap * sizeof *c->seen);
    c->seen = ns;
    c->seen_cap = ncap;
  }
  size_t mask = c->seen_cap - 1, i = atom__hash64(key) & mask;
  while (c->seen[i]) i = (i + 1) & mask;
  c->seen[i] = key + 1;
  c->seen_n++;
  return 0;
}

static int add_edge(commit_node *c, uint32_t a, uint32_t b) {
  if (a == b) return 0;
  if (a > b) {
    uint32_t x = a;
    a = b;
    b = x;
  }
  uint32_t ua = c->nodes[a].unit, ub = c->nodes[b].unit;
  if (c->attach_bits) { /* node * units + unit */
    uint64_t ia = (uint64_t)a * c->nu + ub, ib = (uint64_t)b * c->nu + ua;
    uint64_t ma = 1ull << (ia & 63), mb = 1ull << (ib & 63);
    int new_a = !(c->attach_bits[ia >> 6] & ma), new_b = !(c->attach_bits[ib >> 6] & mb);
    if (!new_a && !new_b) return 0;
    if (c->ne >= c->max_edges) return ATOM_ELIMIT;
    if (c->ne == c->ecap && edges_grow(c)) return ATOM_ENOMEM;
    c->attach_bits[ia >> 6] |= ma;
    c->attach_bits[ib >> 6] |= mb;
    c->edges[c->ne++] = (cn_edge){a, b};
    return 0;
  }
  uint64_t ka = (uint64_t)a << 32 | ub, kb = (uint64_t)b << 32 | ua;
  int new_a = !seen_has(c, ka), new_b = !seen_has(c, kb);
  if (!new_a && !new_b) return 0;
  if (c->ne >= c->max_edges) return ATOM_ELIMIT;
  if (c->ne == c->ecap && edges_grow(c)) return ATOM_ENOMEM;
  if ((new_a && seen_put(c, ka)) || (new_b && seen_put(c, kb))) return ATOM_ENOMEM;
  c->edges[c->ne++] = (cn_edge){a, b};
  return 0;
}

/* Does some lock block above node e hold lock l? Returns that block (the outermost), or NONE. */
static uint32_t outer_block(const commit_node *c, uint32_t e, uint32_t l) {
  uint32_t found = NONE;
  for (uint32_t p = c->nodes[e].parent; p != NONE; p = c->nodes[p].parent)
    if (c->nodes[p].kind == K_LOCK && c->nodes[p].target == l) found = p;
  return found;
}

static int concurrent(const commit_node *c, uint32_t a, uint32_t b) {
  return c->nodes[a].unit != c->nodes[b].unit &&
         atom__periods_concurrent(&c->per, c->nodes[a].period, c->nodes[b].period);
}

/* 004 Figs. 3/5 addInterEdge(e, e2). *added: 0 when e is a read that cannot read e2's value
 * because of the common lock (the paper's "ELSE return"). */
/* The outermost common lock rule (004 Figs. 3/5): going down from the root towards e, the
 * first block of a lock that e2 holds too; *n is that block above e and *n2 the outermost
 * block of the same lock above e2, or both NONE when e and e2 hold no common lock. */
static void common_lock_blocks(const commit_node *c, uint32_t e, uint32_t e2, uint32_t *n,
                               uint32_t *n2) {
  uint32_t path[64];
  size_t depth = 0;
  for (uint32_t p = c->nodes[e].parent; p != NONE && depth < 64; p = c->nodes[p].parent)
    path[depth++] = p;
  *n = *n2 = NONE;
  for (size_t i = depth; i-- > 0;) {
    const cn_node *p = &c->nodes[path[i]];
    if (p->kind != K_LOCK) continue;
    uint32_t o = outer_block(c, e2, p->target);
    if (o != NONE) {
      *n = path[i];
      *n2 = o;
      return;
    }
  }
}

static int inter_edge(commit_node *c, uint32_t e, uint32_t e2, int *added) {
  const cn_node *ne = &c->nodes[e];
  uint32_t n, n2;
  common_lock_blocks(c, e, e2, &n, &n2);
  if (added) *added = 1;
  if (n == NONE) return add_edge(c, e, e2);
  if (ne->kind == K_READ && ne->prevw && ne->prevw - 1 >= c->nodes[n].start) {
    /* e reads a write of its own block: it cannot see e2 (lock l keeps them apart). */
    if (added) *added = 0;
    return 0;
  }
  return add_edge(c, n, n2);
}

static int is_write(const cn_node *n) { return n->kind == K_WRITE; }

/* A unit of end-of-run work; every 4096 the session hears how far the analysis is (work_done
 * of work_total: variables whose edges are made, then transactions decided). */
static void tick(commit_node *c) {
  if (++c->work & 4095) return;
  (void)atom_env_progress(c->env, c->work_done, c->work_total);
}

/* Leaves grouped by variable: ids[off[v] .. off[v+1]). */
static int group_leaves(commit_node *c, uint32_t **ids, size_t **off, size_t *nvars) {
  size_t nv = 0;
  for (size_t i = 0; i < c->nn; i++)
    if ((c->nodes[i].kind == K_READ || c->nodes[i].kind == K_WRITE) && c->nodes[i].target + 1 > nv)
      nv = c->nodes[i].target + 1;
  size_t *o = atom__mem_calloc(c->mem, nv + 2, sizeof *o);
  if (!o) return ATOM_ENOMEM;
  size_t total = 0;
  for (size_t i = 0; i < c->nn; i++)
    if (c->nodes[i].kind == K_READ || c->nodes[i].kind == K_WRITE) {
      o[c->nodes[i].target + 2]++;
      total++;
    }
  for (size_t v = 0; v < nv; v++) o[v + 2] += o[v + 1];
  uint32_t *l = atom__mem_calloc(c->mem, total ? total : 1, sizeof *l);
  if (!l) {
    atom__mem_free(c->mem, o, (nv + 2) * sizeof *o);
    return ATOM_ENOMEM;
  }
  for (size_t i = 0; i < c->nn; i++)
    if (c->nodes[i].kind == K_READ || c->nodes[i].kind == K_WRITE)
      l[o[c->nodes[i].target + 1]++] = (uint32_t)i;
  *ids = l;
  *off = o;
  *nvars = nv;
  return 0;
}

static int conflict_edges(commit_node *c, const uint32_t *ids, size_t lo, size_t hi) {
  int rc;
  for (size_t i = lo; i < hi; i++)
    for (size_t j = i + 1; j < hi; j++) {
      uint32_t a = ids[i], b = ids[j];
      tick(c);
      const cn_node *na = &c->nodes[a], *nb = &c->nodes[b];
      if (!is_write(na) && !is_write(nb)) continue;
      if (!concurrent(c, a, b)) continue;
      /* Fig. 3: each read with each write, each write with each write (both orders). */
      if (is_write(nb) && (rc = inter_edge(c, a, b, NULL))) return rc;
      if (is_write(na) && (rc = inter_edge(c, b, a, NULL))) return rc;
    }
  return 0;
}

/* Write w of another thread happens before read r (sync order, fork/join): r may still read
 * it, when w runs after r's own previous write, so w is one of r's potential
 * write-predecessors (Fig. 5's S(e)) although r and w get no inter-edge (the ordering links
 * already connect them). Without this, a read that follows a release by sync order and whose
 * transaction wrote the variable before would be silent in view mode. */
static int ordered_writer(const commit_node *c, uint32_t w, uint32_t r) {
  const cn_node *nw = &c->nodes[w], *nr = &c->nodes[r];
  return nw->unit != nr->unit && c->units[nw->unit].thread != c->units[nr->unit].thread &&
         atom__periods_before(&c->per, nw->period, nr->period);
}

static int view_edges(commit_node *c, const uint32_t *ids, size_t lo, size_t hi) {
  int rc, added;
  uint32_t *s = NULL;
  size_t ns = 0, scap = 0;
  for (size_t i = lo; i < hi; i++) {
    uint32_t r = ids[i];
    if (c->nodes[r].kind != K_READ) continue;
    ns = 0; /* Fig. 5: S(e) = {} */
    for (size_t j = lo; j < hi; j++) {
      uint32_t w = ids[j];
      tick(c);
      if (!is_write(&c->nodes[w])) continue;
      if (concurrent(c, r, w)) {
        if ((rc = inter_edge(c, r, w, &added))) goto out;
        if (!added) continue;
      } else if (!ordered_writer(c, w, r)) {
        continue;
      }
      /* The other potential write-predecessors of r (its own previous write included) get
       * edges with w: r may read either. */
      uint32_t ew = c->nodes[r].wrep;
      if (ATOM__GROW(c->mem, s, scap, ns + 2)) {
        rc = ATOM_ENOMEM;
        goto out;
      }
      if (ew != NONE) {
        size_t k = 0;
        while (k < ns && s[k] != ew) k++;
        if (k == ns) s[ns++] = ew;
      }
      for (size_t k = 0; k < ns; k++)
        if (s[k] != w && concurrent(c, w, s[k]) && (rc = inter_edge(c, w, s[k], NULL))) goto out;
      size_t k = 0;
      while (k < ns && s[k] != w) k++;
      if (k == ns) s[ns++] = w;
    }
  }
  /* Fig. 5: unit-final writes with each other. */
  for (size_t i = lo; i < hi; i++)
    for (size_t j = i + 1; j < hi; j++) {
      uint32_t a = ids[i], b = ids[j];
      if (!c->nodes[a].final || !c->nodes[b].final || !concurrent(c, a, b)) continue;
      if ((rc = inter_edge(c, a, b, NULL)) || (rc = inter_edge(c, b, a, NULL))) goto out;
    }
  rc = 0;
out:
  atom__mem_free(c->mem, s, scap * sizeof *s);
  return rc;
}

/* ---- reports --------------------------------------------------------------------------- */

/* The forest's edges (inter-edges, then links) and their endpoints per unit, for the
 * decision: 20 bytes per edge (its two nodes, its component, two incidences). An incidence is
 * edge << 1 | side: side 0 is the end at e[edge].a, side 1 the end at e[edge].b, so edge ids
 * stay below 2^31 (graph_build). */
typedef struct cn_graph {
  size_t nv, ne;   /* units, edges */
  cn_edge *e;      /* edge endpoints as nodes (the inter-edge array, moved here) */
  size_t ecap;     /* allocated entries of e */
  size_t *off;     /* incidences of unit u: inc[off[u] .. off[u+1]) */
  uint32_t *inc;
  uint32_t *block; /* per edge */
  uint32_t *unit;  /* per node, its unit: 4 bytes that stay in cache where a node is 64 */
  size_t nn;       /* nodes */
} cn_graph;

/* An incidence's edge, its own node, the node at the edge's other end. */
static uint32_t inc_edge(uint32_t x) { return x >> 1; }
static uint32_t inc_node(const cn_graph *g, uint32_t x) {
  return x & 1 ? g->e[x >> 1].b : g->e[x >> 1].a;
}
static uint32_t inc_other(const cn_graph *g, uint32_t x) {
  return x & 1 ? g->e[x >> 1].a : g->e[x >> 1].b;
}

/* Scans of a unit's incidences read edges and nodes far apart (a unit's edges are spread over
 * the whole edge array): fetch the edge of a later incidence, and the other node of a nearer
 * one, whose edge was fetched before. */
#define INC_AHEAD 8
static void inc_prefetch(const cn_graph *g, size_t i, size_t hi) {
  if (i + INC_AHEAD < hi) __builtin_prefetch(&g->e[g->inc[i + INC_AHEAD] >> 1]);
}


static atom_txn_ref unit_ref(const commit_node *c, uint32_t u) {
  const cn_unit *un = &c->units[u];
  return (atom_txn_ref){un->thread, un->kind == U_PLAIN, un->begin_index, un->begin_loc};
}

static atom_ev node_event(const commit_node *c, uint32_t id) {
  const cn_node *n = &c->nodes[id];
  atom_ev ev;
  memset(&ev, 0, sizeof ev);
  static const uint32_t kinds[] = {ATOM_BEGIN, ATOM_ACQUIRE, ATOM_READ,
                                   ATOM_WRITE, ATOM_FORK,    ATOM_JOIN};
  ev.kind = kinds[n->kind];
  ev.thread = c->units[n->unit].thread;
  ev.target = n->kind == K_ROOT ? 0 : n->target;
  ev.index = n->index;
  ev.loc = n->loc;
  return ev;
}


/* The event standing for node id. A root stands for its unit's first event: BEGIN of a
 * transaction, else the node after it when that is the same event (a lock block's acquire). */
static atom_ev node_event_of(const commit_node *c, uint32_t id) {
  const cn_node *n = &c->nodes[id];
  if (n->kind == K_ROOT && c->units[n->unit].kind != U_TXN && id + 1 < n->end &&
      c->nodes[id + 1].index == n->index)
    return node_event(c, id + 1);
  return node_event(c, id);
}

/* Longest cycle told in a report: edges along the path between the two other units. */
#define CYCLE_MAX_PATH 60

/* The shortest path of the forest's unit graph from unit `from` to unit `to` through edges of
 * biconnected component blk, avoiding unit u (it exists: two edges of one component lie on a
 * common simple cycle). Writes the incidences of the path, in order, to path (room for
 * CYCLE_MAX_PATH; incidence k leaves the k-th unit of the path). @return its length, 0 when
 * from == to, SIZE_MAX if none fits (or memory is short: the report is then made without the
 * cycle's edges). */
static size_t cycle_path(commit_node *c, const cn_graph *g, uint32_t blk, uint32_t u,
                         uint32_t from, uint32_t to, uint32_t *path) {
  if (from == to) return 0;
  size_t nv = g->nv;
  if (c->bfs_n < nv) {
    atom__mem_free(c->mem, c->bfs_mark, c->bfs_n * sizeof *c->bfs_mark);
    atom__mem_free(c->mem, c->bfs_prev, c->bfs_n * sizeof *c->bfs_prev);
    atom__mem_free(c->mem, c->bfs_queue, c->bfs_n * sizeof *c->bfs_queue);
    c->bfs_mark = atom__mem_calloc(c->mem, nv, sizeof *c->bfs_mark);
    c->bfs_prev = atom__mem_alloc(c->mem, nv * sizeof *c->bfs_prev);
    c->bfs_queue = atom__mem_alloc(c->mem, nv * sizeof *c->bfs_queue);
    c->bfs_n = nv;
    c->bfs_stamp = 0;
    if (!c->bfs_mark || !c->bfs_prev || !c->bfs_queue) {
      atom__mem_free(c->mem, c->bfs_mark, nv * sizeof *c->bfs_mark);
      atom__mem_free(c->mem, c->bfs_prev, nv * sizeof *c->bfs_prev);
      atom__mem_free(c->mem, c->bfs_queue, nv * sizeof *c->bfs_queue);
      c->bfs_mark = c->bfs_prev = c->bfs_queue = NULL;
      c->bfs_n = 0;
      return SIZE_MAX;
    }
  }
  if (++c->bfs_stamp == 0) {
    memset(c->bfs_mark, 0, c->bfs_n * sizeof *c->bfs_mark);
    c->bfs_stamp = 1;
  }
  uint32_t st = c->bfs_stamp, *mark = c->bfs_mark, *prev = c->bfs_prev, *q = c->bfs_queue;
  size_t head = 0, tail = 0;
  mark[u] = st;
  mark[from] = st;
  q[tail++] = from;
  while (head < tail && mark[to] != st) {
    uint32_t v = q[head++];
    for (size_t i = g->off[v]; i < g->off[v + 1]; i++) {
      uint32_t x = g->inc[i];
      uint32_t w = g->unit[inc_other(g, x)];
      if (g->block[inc_edge(x)] != blk || mark[w] == st) continue;
      mark[w] = st;
      prev[w] = (uint32_t)i;
      q[tail++] = w;
    }
  }
  if (mark[to] != st) return SIZE_MAX;
  size_t n = 0;
  for (uint32_t w = to; w != from; w = g->unit[inc_node(g, g->inc[prev[w]])])
    if (++n > CYCLE_MAX_PATH) return SIZE_MAX;
  size_t k = n;
  for (uint32_t w = to; w != from; w = g->unit[inc_node(g, g->inc[prev[w]])]) path[--k] = prev[w];
  return n;
}

/* Transaction u has communication nodes a and b that do not contain each other, made so by
 * the edges to pa and pb (nodes of other units), which lie on one cycle of the forest (edges
 * of component blk). The report carries that cycle as edges, in cycle order: a to pa, along
 * the path from pa's unit to pb's (each edge's two events), pb to b. */
static int report_violation(commit_node *c, const cn_graph *g, uint32_t blk, uint32_t u,
                            uint32_t a, uint32_t pa, uint32_t b, uint32_t pb) {
  if (c->nodes[a].index > c->nodes[b].index) {
    uint32_t x = a;
    a = b;
    b = x;
    x = pa;
    pa = pb;
    pb = x;
  }
  uint32_t ua = c->nodes[pa].unit, ub = c->nodes[pb].unit;
  uint32_t path[CYCLE_MAX_PATH];
  size_t np = cycle_path(c, g, blk, u, ua, ub, path);
  atom__report_build *rb = &c->rb;
  atom__rb_reset(rb);
  /* The four events the message names, at positions 0..3 ({e0}..{e3}), kept apart so that
   * the positions hold; then the transactions in cycle order: u, then the units of the path. */
  const uint32_t named[4] = {a, b, pa, pb};
  for (int k = 0; k < 4; k++) {
    atom_ev ev = node_event_of(c, named[k]);
    if (atom__rb_event_apart(rb, &ev, NULL)) return ATOM_ENOMEM;
  }
  atom_txn_ref ref = unit_ref(c, u);
  if (atom__rb_txn(rb, &ref)) return ATOM_ENOMEM;
  ref = unit_ref(c, ua);
  if (atom__rb_txn(rb, &ref)) return ATOM_ENOMEM;
  if (np != SIZE_MAX) {
    if (atom__rb_edge_at(rb, 0, 2, 0)) return ATOM_ENOMEM;
    for (size_t i = 0; i < np; i++) {
      uint32_t x = g->inc[path[i]];
      atom_ev from = node_event_of(c, inc_node(g, x)), to = node_event_of(c, inc_other(g, x));
      if (atom__rb_edge_apart(rb, &from, &to, 0)) return ATOM_ENOMEM;
      ref = unit_ref(c, c->nodes[inc_other(g, x)].unit);
      if (atom__rb_txn(rb, &ref)) return ATOM_ENOMEM;
    }
    if (atom__rb_edge_at(rb, 3, 1, ATOM_EDGE_CLOSING)) return ATOM_ENOMEM;
  } else if (ub != ua) {
    ref = unit_ref(c, ub);
    if (atom__rb_txn(rb, &ref)) return ATOM_ENOMEM;
  }
  for (int k = 0; k < 2; k++) {
    const cn_node *n = &c->nodes[named[k]];
    if ((n->kind == K_READ || n->kind == K_WRITE) && atom__rb_var(rb, n->target))
      return ATOM_ENOMEM;
  }
  /* Plain words; the theorem behind it is named on the checker's doc page. */
  const char *msg =
      c->view ? "{t0} is not view-atomic: other transactions can run between {e0} and {e1}: "
                "the order of the first and {e2}, and of the second and {e3}, changes what is "
                "read or left, and no serial order gives the same reads and final values"
              : "{t0} is not conflict-atomic: other transactions can run between {e0} and {e1}: "
                "the first conflicts with {e2}, the second with {e3}, and these conflicts lie "
                "on a cycle that no serial order has";
  /* predicted: a feasible interleaving, not the observed one */
  return atom__rb_submit(rb, c->env, "commit-nodes", c->nodes[b].index, ATOM_REPORT_PREDICTED,
                         msg, 0);
}

/* A lock-order cycle: thread i acquires (or joins) what thread i+1 holds. The message tells
 * each acquisition and the hold it waits behind; the edges run from each acquisition to the
 * acquisition of the same lock by the next thread (both acquire events), in cycle order, when
 * every hold is an acquisition. The message is a template: it names the events by position
 * ({eN}) and the core renders them. */
#define DEADLOCK_MAX 8

/* An event of a lock-order edge: its hold (an ACQUIRE of e->from) or its acquisition (an
 * ACQUIRE, or the JOIN that waits for a thread), at the edge's recorded site. */
static atom_ev lo_event(uint32_t kind, const atom__lo_site *site, uint32_t target) {
  atom_ev ev;
  memset(&ev, 0, sizeof ev);
  ev.kind = kind;
  ev.thread = site->thread;
  ev.target = target;
  ev.index = site->index;
  ev.loc = site->loc;
  return ev;
}

static int on_deadlock(const atom__lo_edge *const *cyc, size_t n, void *payload) {
  commit_node *c = payload;
  atom__report_build *rb = &c->rb;
  uint32_t held_at[DEADLOCK_MAX], acq_at[DEADLOCK_MAX];
  char msg[768];
  size_t off = 0;
  uint64_t at = 0;
  if (n > DEADLOCK_MAX) n = DEADLOCK_MAX;
  int all_held = 1;
  atom__rb_reset(rb);
  atom__msg_append(msg, sizeof msg, &off, "these lock operations can deadlock:");
  for (size_t i = 0; i < n; i++) {
    const atom__lo_edge *e = cyc[i];
    atom_txn_ref ref = {e->acq.thread, 1, e->acq.index, e->acq.loc};
    if (atom__rb_txn(rb, &ref)) return ATOM_ENOMEM;
    held_at[i] = UINT32_MAX;
    if (!(e->from & ATOM__LO_THREAD) && e->from != e->to) {
      atom_ev h = lo_event(ATOM_ACQUIRE, &e->held, e->from);
      if (atom__rb_event_apart(rb, &h, &held_at[i])) return ATOM_ENOMEM;
    } else {
      all_held = 0;
    }
    atom_ev a = lo_event((e->to & ATOM__LO_THREAD) ? ATOM_JOIN : ATOM_ACQUIRE, &e->acq,
                         e->to & ~ATOM__LO_THREAD);
    if (atom__rb_event_apart(rb, &a, &acq_at[i])) return ATOM_ENOMEM;
    if (e->acq.index > at) at = e->acq.index;
    if (e->from == e->to) /* held_at_end(): a hold that never ends */
      atom__msg_append(msg, sizeof msg, &off, "%s {e%" PRIu32 "}, and that thread ends without "
                       "releasing it", i ? ";" : "", acq_at[i]);
    else if (held_at[i] != UINT32_MAX)
      atom__msg_append(msg, sizeof msg, &off, "%s {e%" PRIu32 "} and, still holding it, {e%"
                       PRIu32 "}", i ? ";" : "", held_at[i], acq_at[i]);
    else
      atom__msg_append(msg, sizeof msg, &off, "%s {e%" PRIu32 "} while another thread waits "
                       "for this one to end", i ? ";" : "", acq_at[i]);
  }
  atom__msg_append(msg, sizeof msg, &off, ": in some feasible schedule each waits for the next");
  if (all_held && n >= 2)
    for (size_t i = 0; i < n; i++)
      if (atom__rb_edge_at(rb, acq_at[i], held_at[(i + 1) % n],
                           i + 1 == n ? ATOM_EDGE_CLOSING : 0))
        return ATOM_ENOMEM;
  /* predicted: a feasible interleaving, not the observed one */
  return atom__rb_submit(rb, c->env, "potential-deadlock", at, ATOM_REPORT_PREDICTED, msg, 0);
}

/* A thread that ends holding lock l deadlocks every thread that still has to acquire l: report
 * the first such acquisition of each other thread that need not happen before the hold. */
static int held_at_end(commit_node *c) {
  for (uint32_t t = 0; t < c->th_cap; t++) {
    const cn_thread *th = &c->th[t];
    for (size_t i = 0; i < th->ls_n; i++) {
      const cn_lockent *le = &th->ls[i];
      atom__lo_site hold = {le->acq_index, le->acq_loc, t, le->acq_period};
      uint32_t reported = NONE;
      for (size_t k = 0; k < c->lo.n; k++) {
        const atom__lo_edge *e = &c->lo.e[k];
        if (e->to != le->lock || e->acq.thread == t || e->acq.thread == reported) continue;
        if (e->acq.period != ATOM__PERIOD_NONE &&
            atom__periods_before(&c->per, e->acq.period, hold.period))
          continue;
        atom__lo_edge forever = {le->lock, le->lock, 0, 0, hold, hold};
        const atom__lo_edge *cyc[2] = {e, &forever};
        int rc = on_deadlock(cyc, 2, c);
        if (rc) return rc;
        reported = e->acq.thread;
      }
    }
  }
  return 0;
}

/* ---- the decision (004 Thms 4.1, 4.3, 4.6) -------------------------------------------- */

static int is_txn(const cn_unit *u) { return u->kind != U_PLAIN && !u->dropped; }


static void graph_free(commit_node *c, cn_graph *g) {
  atom__mem_free(c->mem, g->e, g->ecap * sizeof *g->e);
  atom__mem_free(c->mem, g->off, (g->nv + 2) * sizeof *g->off);
  atom__mem_free(c->mem, g->inc, 2 * g->ne * sizeof *g->inc);
  atom__mem_free(c->mem, g->block, g->ne * sizeof *g->block);
  atom__mem_free(c->mem, g->unit, (g->nn ? g->nn : 1) * sizeof *g->unit);
  memset(g, 0, sizeof *g);
}

static int graph_build(commit_node *c, cn_graph *g) {
  memset(g, 0, sizeof *g);
  g->nv = c->nu;
  size_t ne = c->ne;
  for (size_t i = 0; i < c->nl; i++)
    if (c->units[c->links[i].a.unit].first != NONE && c->units[c->links[i].b.unit].first != NONE)
      ne++;
  if (ne > INT32_MAX)
    return atom_env_error(c->env, ATOM_ELIMIT,
                          "more than %d edges in the forest (inter-edges and ordering links)",
                          INT32_MAX);
  size_t n1 = ne ? ne : 1;
  /* The inter-edge array becomes the graph's edge array, sized exactly (inter-edges, then the
   * links): it is not copied, so the edges are held once. */
  cn_edge *e = atom__mem_realloc(c->mem, c->edges, c->ecap * sizeof *c->edges, n1 * sizeof *e);
  if (!e) return ATOM_ENOMEM;
  c->edges = NULL; /* owned by the graph now; c->ne stays, for the stats */
  c->ecap = 0;
  g->e = e;
  g->ecap = n1;
  g->ne = n1; /* allocation size of block and inc, for graph_free */
  g->block = atom__mem_alloc(c->mem, n1 * sizeof *g->block);
  g->off = atom__mem_calloc(c->mem, g->nv + 2, sizeof *g->off);
  g->inc = atom__mem_alloc(c->mem, 2 * n1 * sizeof *g->inc);
  g->nn = c->nn;
  g->unit = atom__mem_alloc(c->mem, (g->nn ? g->nn : 1) * sizeof *g->unit);
  if (!g->block || !g->off || !g->inc || !g->unit) {
    graph_free(c, g);
    return ATOM_ENOMEM;
  }
  for (size_t i = 0; i < c->nn; i++) g->unit[i] = c->nodes[i].unit;
  size_t k = c->ne; /* the inter-edges are in place */
  for (size_t i = 0; i < c->nl; i++) {
    const cn_unit *ua = &c->units[c->links[i].a.unit], *ub = &c->units[c->links[i].b.unit];
    if (ua->first == NONE || ub->first == NONE) continue;
    /* A dropped tree keeps only its root: its leaves' links go to the root. */
    uint32_t la = c->links[i].a.local < ua->n ? c->links[i].a.local : 0;
    uint32_t lb = c->links[i].b.local < ub->n ? c->links[i].b.local : 0;
    e[k].a = ua->first + la;
    e[k].b = ub->first + lb;
    /* A sync link between two accesses under a common lock attaches where an inter-edge would
     * (the common lock rule): the lock keeps their blocks apart, so the order runs between the
     * blocks, not between the accesses (a link at the leaves would make false commit nodes of
     * a block that waits on and signals a condition variable under its mutex). */
    uint32_t n, n2;
    common_lock_blocks(c, e[k].a, e[k].b, &n, &n2);
    if (n != NONE) {
      e[k].a = n;
      e[k].b = n2;
    }
    k++;
  }
  size_t real = k;
  for (size_t i = 0; i < real; i++) {
    g->off[g->unit[e[i].a] + 2]++;
    g->off[g->unit[e[i].b] + 2]++;
  }
  for (size_t u = 0; u < g->nv; u++) g->off[u + 2] += g->off[u + 1];
  for (size_t i = 0; i < real; i++) {
    uint32_t ua = g->unit[e[i].a], ub = g->unit[e[i].b];
    g->inc[g->off[ua + 1]++] = (uint32_t)i << 1;
    g->inc[g->off[ub + 1]++] = (uint32_t)i << 1 | 1;
  }
  for (size_t i = real; i < g->ne; i++) g->block[i] = NONE;
  /* edges beyond `real` do not exist (allocation rounding) */
  return 0;
}

/* Biconnected components of the unit graph (iterative Tarjan on a multigraph: a parallel edge
 * is a back edge, only the tree edge itself is skipped). */
static int graph_blocks(commit_node *c, cn_graph *g) {
  size_t nv = g->nv;
  if (nv == 0) return 0;
  size_t nedges = g->off[nv]; /* incidences */
  uint32_t *disc = atom__mem_calloc(c->mem, nv, sizeof *disc);
  uint32_t *low = atom__mem_calloc(c->mem, nv, sizeof *low);
  size_t *it = atom__mem_calloc(c->mem, nv, sizeof *it);
  uint32_t *pedge = atom__mem_calloc(c->mem, nv, sizeof *pedge);
  uint32_t *stack = atom__mem_calloc(c->mem, nv, sizeof *stack);
  uint32_t *estack = atom__mem_calloc(c->mem, nedges / 2 + 1, sizeof *estack);
  int rc = 0;
  if (!disc || !low || !it || !pedge || !stack || !estack) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  uint32_t time = 0, nblocks = 0;
  size_t es = 0;
  for (size_t r = 0; r < nv; r++) {
    if (disc[r]) continue;
    size_t sp = 0;
    stack[sp++] = (uint32_t)r;
    disc[r] = low[r] = ++time;
    it[r] = g->off[r];
    pedge[r] = NONE;
    while (sp) {
      uint32_t v = stack[sp - 1];
      if (it[v] < g->off[v + 1]) {
        inc_prefetch(g, it[v], g->off[v + 1]);
        uint32_t x = g->inc[it[v]++], xe = inc_edge(x);
        uint32_t w = g->unit[inc_other(g, x)];
        if (xe == pedge[v]) continue;
        if (!disc[w]) {
          estack[es++] = xe;
          disc[w] = low[w] = ++time;
          it[w] = g->off[w];
          pedge[w] = xe;
          stack[sp++] = w;
        } else if (disc[w] < disc[v]) {
          estack[es++] = xe;
          if (disc[w] < low[v]) low[v] = disc[w];
        }
      } else {
        sp--;
        if (sp) {
          uint32_t p = stack[sp - 1];
          if (low[v] < low[p]) low[p] = low[v];
          if (low[v] >= disc[p]) {
            uint32_t b = nblocks++;
            while (es) {
              uint32_t e = estack[--es];
              g->block[e] = b;
              if (e == pedge[v]) break;
            }
          }
        }
      }
    }
  }
out:
  atom__mem_free(c->mem, disc, nv * sizeof *disc);
  atom__mem_free(c->mem, low, nv * sizeof *low);
  atom__mem_free(c->mem, it, nv * sizeof *it);
  atom__mem_free(c->mem, pedge, nv * sizeof *pedge);
  atom__mem_free(c->mem, stack, nv * sizeof *stack);
  atom__mem_free(c->mem, estack, (nedges / 2 + 1) * sizeof *estack);
  return rc;
}

/* Is a an ancestor of (or equal to) b? Nodes of one unit are in pre-order. */
static int contains(const commit_node *c, uint32_t a, uint32_t b) {
  return a <= b && b < c->nodes[a].end;
}

/* Thm 4.1 for unit u: its communication nodes form one chain. On failure *x, *y receive two
 * incidences whose nodes do not contain each other. */
static int one_commit_node(const commit_node *c, const cn_graph *g, uint32_t u, size_t *x,
                           size_t *y) {
  size_t deep = SIZE_MAX;
  for (size_t i = g->off[u]; i < g->off[u + 1]; i++) {
    inc_prefetch(g, i, g->off[u + 1]);
    if (deep == SIZE_MAX || inc_node(g, g->inc[i]) > inc_node(g, g->inc[deep])) deep = i;
  }
  if (deep == SIZE_MAX) return 1;
  uint32_t dn = inc_node(g, g->inc[deep]);
  for (size_t i = g->off[u]; i < g->off[u + 1]; i++)
    if (!contains(c, inc_node(g, g->inc[i]), dn)) {
      *x = i;
      *y = deep;
      return 0;
    }
  return 1;
}

int atom__cn_analyze(commit_node *c) {
  int rc;
  /* Potential deadlocks first: the theorems below assume there are none. */
  if ((rc = atom__lo_find(&c->lo, &c->per, 4, on_deadlock, c)) < 0) return rc;
  if ((rc = held_at_end(c))) return rc;

  uint32_t *ids = NULL;
  size_t *off = NULL, nv = 0;
  if ((rc = group_leaves(c, &ids, &off, &nv))) return rc;
  c->work_total = nv + c->nu;
  /* The seen (node, unit) pairs of add_edge: a bit per pair while that is at most
   * ATTACH_BITS_MAX bits, else (or without the memory) a set entry per pair seen. */
  size_t nbits = (size_t)c->nn * c->nu, nwords = nbits / 64 + 1;
  if (c->nn && nbits / c->nn == c->nu && nbits <= ATTACH_BITS_MAX)
    c->attach_bits = atom__mem_calloc(c->mem, nwords, sizeof *c->attach_bits);
  for (size_t v = 0; v < nv && !rc; v++, c->work_done = v)
    rc = c->view ? view_edges(c, ids, off[v], off[v + 1])
                 : conflict_edges(c, ids, off[v], off[v + 1]);
  if (c->attach_bits) atom__mem_free(c->mem, c->attach_bits, nwords * sizeof *c->attach_bits);
  c->attach_bits = NULL;
  atom__mem_free(c->mem, c->seen, c->seen_cap * sizeof *c->seen);
  c->seen = NULL;
  c->seen_cap = c->seen_n = 0;
  atom__mem_free(c->mem, ids, (off[nv] ? off[nv] : 1) * sizeof *ids);
  atom__mem_free(c->mem, off, (nv + 2) * sizeof *off);
  if (rc == ATOM_ELIMIT)
    return atom_env_error(c->env, ATOM_ELIMIT,
                          "more than %zu inter-edges (raise max_edges; the forest is quadratic "
                          "in the concurrent accesses of one variable)",
                          c->max_edges);
  if (rc) return rc;

  cn_graph g;
  if ((rc = graph_build(c, &g))) return rc;
  /* Thm 4.1 once per unit (each pass reads every incidence's node): the transactions whose
   * communication nodes are not one chain, then the components only if there are any. */
  uint8_t *multi = atom__mem_calloc(c->mem, c->nu ? c->nu : 1, 1);
  if (!multi) {
    graph_free(c, &g);
    return ATOM_ENOMEM;
  }
  int need_blocks = 0;
  size_t x, y;
  for (uint32_t u = 0; u < c->nu; u++)
    if (is_txn(&c->units[u]) && !one_commit_node(c, &g, u, &x, &y)) need_blocks = multi[u] = 1;
  if (need_blocks && !(rc = graph_blocks(c, &g))) {
    /* Thm 4.3 / 4.6: per transaction and biconnected component, the attachment nodes must
     * form a chain; two that do not contain each other lie on one cycle. */
    for (uint32_t u = 0; u < c->nu && !rc; u++) {
      c->work_done = nv + u;
      tick(c);
      if (!multi[u]) continue;
      size_t lo = g.off[u], hi = g.off[u + 1];
      int found = 0;
      for (size_t i = lo; i < hi && !found; i++) {
        uint32_t b = g.block[inc_edge(g.inc[i])];
        /* deepest attachment of this component */
        size_t deep = i;
        for (size_t j = lo; j < hi; j++)
          if (g.block[inc_edge(g.inc[j])] == b &&
              inc_node(&g, g.inc[j]) > inc_node(&g, g.inc[deep]))
            deep = j;
        uint32_t dx = g.inc[deep], dn = inc_node(&g, dx);
        for (size_t j = lo; j < hi; j++)
          if (g.block[inc_edge(g.inc[j])] == b && !contains(c, inc_node(&g, g.inc[j]), dn)) {
            rc = report_violation(c, &g, b, u, inc_node(&g, g.inc[j]), inc_other(&g, g.inc[j]),
                                  dn, inc_other(&g, dx));
            found = 1;
            break;
          }
      }
    }
  }
  atom__mem_free(c->mem, multi, c->nu ? c->nu : 1);
  graph_free(c, &g);
  if (!rc) (void)atom_env_progress(c->env, c->work_total, c->work_total);
  return rc;
}
