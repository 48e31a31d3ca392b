/* Incremental directed graph for transaction graphs (internal).
 *
 * Built for Velodrome-style checkers (003 §2 Def. 1, §5.1) and reused by `tso`: nodes are
 * transactions, an edge T -> T' says T must precede T' in any equivalent serial order, and a
 * violation is a cycle. The graph is kept acyclic: an edge that would close a cycle is NOT
 * inserted; instead atom__dg_add_edge() returns 1 and the cycle can be read back. Keeping the
 * graph a DAG lets it maintain a topological order (Pearce-Kelly dynamic topological sort), so
 * an edge that agrees with the order -- by far the common case, since new edges mostly point
 * into the newest transactions -- costs O(1); only an edge that goes "backwards" in the order
 * searches the affected region between its endpoints.
 *
 * Garbage collection (003 §5.1): a node marked complete can never receive a new incoming edge
 * (callers only add edges into nodes that are still running), so once it has no incoming edge it
 * can never lie on a cycle. Such nodes are deleted at once, and deleting a node may make its
 * complete successors collectable in turn (cascade). The invariant kept at every return: no
 * live node is complete with in-degree 0.
 *
 * Handles: a node is named by a 64-bit handle (generation << 32 | slot). Slots are recycled,
 * generations are not, so a handle kept after its node was collected (say, "the last writer of
 * x") is detected as stale by atom__dg_alive() and every function that takes a handle treats a
 * stale one as absent. ATOM__DG_NONE (0) is never a valid handle.
 *
 * Memory: everything goes through the atom__mem given at init; nodes and edges live in pooled
 * arrays with free lists, and edges are found by (src, dst) through a support/idindex, so the
 * hot path never calls the allocator once they have grown. Duplicate edges between the same
 * ordered pair are never stored twice.
 *
 * Not thread-safe; one graph per checker instance. */
#ifndef ATOM_SUPPORT_DIGRAPH_H
#define ATOM_SUPPORT_DIGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "support/idindex.h"
#include "support/mem.h"

/* A node handle; 0 = none. */
typedef uint64_t atom__dg_node;
#define ATOM__DG_NONE ((atom__dg_node)0)

/* Called for every node the graph deletes (collected or atom__dg_delete), just before its slot
 * is recycled; @p payload is still readable. The hook must not call back into the graph. */
typedef void (*atom__dg_collect_fn)(atom__dg_node n, void *payload, void *ctx);

/* Private layout, exposed only so that the inline look-ups below need no call. */
typedef struct atom__dg_vx {
  uint64_t ord;      /* rank in the maintained topological order */
  uint32_t gen;      /* generation of the slot (never 0) */
  uint32_t flags;    /* live / complete / queued */
  uint32_t nin;      /* in-degree */
  uint32_t nout;     /* out-degree */
  uint32_t out_head; /* most recent out-edge (edge index or nil) */
  uint32_t in_head;  /* most recent in-edge */
  uint32_t mark;     /* search epoch */
  uint32_t aux;      /* search parent; free-list / collection-queue link */
} atom__dg_vx;

typedef struct atom__dg_edge {
  uint32_t src, dst;
  uint32_t next_out, prev_out; /* src's out-list */
  uint32_t next_in, prev_in;   /* dst's in-list */
} atom__dg_edge;

typedef struct atom__dg_ordent {
  uint64_t ord;
  uint32_t vx;
  uint32_t pad;
} atom__dg_ordent;

typedef struct atom__dg {
  atom__mem *mem;
  size_t payload_size;
  /* nodes */
  atom__dg_vx *vx;
  size_t vx_cap, vx_used;    /* slots allocated / ever handed out */
  /* Per slot: the handle of its node while it is live, else NONE. The liveness test is then
   * one compare in a dense array (8 bytes a slot) instead of the generation and flags of a
   * 40-byte record. */
  atom__dg_node *live;
  size_t live_cap;
  unsigned char *pl;         /* payloads, payload_size bytes per slot */
  size_t pl_cap;
  uint32_t vx_free;          /* free-slot list through aux */
  size_t nodes;              /* live */
  uint64_t next_ord;
  /* edges */
  atom__dg_edge *e;
  size_t e_cap, e_used;
  uint32_t e_free;           /* free list through next_out */
  size_t edges;              /* live */
  atom__idindex edge_ix;     /* edge indices by (src, dst) (their keys are in e[]) */
  /* search scratch (reused; grows only) */
  uint32_t epoch;
  uint32_t *stk;
  size_t stk_cap;
  atom__dg_ordent *fw, *bw;
  size_t fw_cap, bw_cap;
  uint64_t *ords;
  size_t ords_cap;
  /* the last cycle found */
  atom__dg_node *cyc;
  size_t ncyc, cyc_cap;
  /* collection hook (optional; set the two fields directly) */
  atom__dg_collect_fn on_collect;
  void *collect_ctx;
  /* counters */
  uint64_t searches;         /* edge insertions that needed a search */
  uint64_t collected;        /* nodes deleted so far */
  /* optional edge payloads (labels), parallel to e[] */
  size_t epl_size;
  unsigned char *epl;
  size_t epl_cap;
} atom__dg;

#define ATOM__DG_LIVE 0x1u
#define ATOM__DG_COMPLETE 0x2u
#define ATOM__DG_QUEUED 0x4u

/* Initialize an empty graph whose nodes each carry @p payload_size bytes (may be 0). No
 * allocation happens here. */
void atom__dg_init(atom__dg *g, atom__mem *mem, size_t payload_size);

/* Free everything (no hook is called). @p g may be re-initialized afterwards. */
void atom__dg_destroy(atom__dg *g);

/* Create a node (not complete, no edges, zero-filled payload) last in the topological order.
 * @return 0 and *out, or ATOM_ENOMEM (graph unchanged). */
int atom__dg_add_node_slow(atom__dg *g, atom__dg_node *out);

/* Make slot i (taken off the free list or new, its generation set) a live node with no
 * edges, last in the topological order; its handle in *out. The payload is the caller's. */
static inline void atom__dg_node_init_(atom__dg *g, uint32_t i, atom__dg_node *out) {
  atom__dg_vx *v = &g->vx[i];
  v->ord = g->next_ord++; /* last in the order: a new node has no edges yet */
  v->flags = ATOM__DG_LIVE;
  v->nin = v->nout = 0;
  v->out_head = v->in_head = UINT32_MAX;
  v->mark = 0;
  v->aux = UINT32_MAX;
  g->nodes++;
  *out = g->live[i] = ((uint64_t)v->gen << 32) | i;
}

static inline int atom__dg_add_node(atom__dg *g, atom__dg_node *out) {
  uint32_t i = g->vx_free;
  /* In line: a recycled slot without a payload to zero (velodrome's case: one node per
   * transaction, the slot of a collected one); the rest out of line. */
  if (i == UINT32_MAX || g->payload_size) return atom__dg_add_node_slow(g, out);
  g->vx_free = g->vx[i].aux;
  atom__dg_node_init_(g, i, out);
  return 0;
}

/* @return non-zero if @p n names a live node. */
static inline int atom__dg_alive(const atom__dg *g, atom__dg_node n) {
  uint32_t i = (uint32_t)n;
  return i < g->vx_used && g->live[i] == n;
}

/* atom__dg_alive() without the bounds test, for callers that hold only NONE or handles that
 * came from this graph (their slot index is below vx_used, which never shrinks) and that ask
 * only once some node was created (so the array exists). NONE is never live: slot 0 is
 * reserved and its entry names no handle. */
static inline int atom__dg_alive_fast(const atom__dg *g, atom__dg_node n) {
  return g->live[(uint32_t)n] == n;
}

/* @return the payload of a live node (valid until the next atom__dg_add_node, which may move
 *         the payload array), or NULL if @p n is stale or none. */
static inline void *atom__dg_payload(atom__dg *g, atom__dg_node n) {
  if (!atom__dg_alive(g, n)) return NULL;
  return g->pl + (size_t)(uint32_t)n * g->payload_size;
}

/* Edge payloads (optional): give every edge @p size bytes, for instance the two events that
 * make the conflict, so that a reported cycle can say why each of its edges exists (velodrome
 * and tso do). One payload per edge, the first: an edge made again keeps the payload it was
 * inserted with, so a repeat costs nothing more than without payloads. Call before the first
 * edge is added. */
void atom__dg_set_edge_payload(atom__dg *g, size_t size);

/* Add the edge u -> v.
 * @return 0 if the edge is now present or need not be: it was added, it already existed, u ==
 *           v (a node's order with itself is no edge), or u or v is stale/none (a collected
 *           node is on no cycle);
 *         1 if the edge would close a cycle: it is NOT added and atom__dg_cycle() returns the
 *           cycle v -> ... -> u (the new edge u -> v closes it);
 *         ATOM_ENOMEM (the graph is unchanged).
 * Adding an edge into a complete node breaks the collection invariant's premise; it is
 * allowed (the node then stays until its in-edges go) but Velodrome never needs it.
 * With payloads (atom__dg_set_edge_payload), a copy of @p payload is stored with an edge when it
 * is inserted (an edge already present keeps the one it was inserted with);
 * atom__dg_add_edge() stores a zero-filled payload. */
int atom__dg_add_edge_labeled(atom__dg *g, atom__dg_node u, atom__dg_node v,
                              const void *payload);
static inline int atom__dg_add_edge(atom__dg *g, atom__dg_node u, atom__dg_node v) {
  return atom__dg_add_edge_labeled(g, u, v, NULL);
}

/* A cheap, partial duplicate test for u -> v, both live: 1 if the edge is v's newest in-edge
 * or u's newest out-edge (the usual repeat: one transaction reading many variables of
 * another), else 0, which says nothing. atom__dg_add_edge_labeled() makes this test first; a
 * caller that builds a payload for each edge it offers can make it before building one. */
static inline int atom__dg_edge_recent(const atom__dg *g, atom__dg_node u, atom__dg_node v) {
  uint32_t ui = (uint32_t)u, vi = (uint32_t)v;
  uint32_t e = g->vx[vi].in_head;
  if (e != UINT32_MAX && g->e[e].src == ui) return 1;
  e = g->vx[ui].out_head;
  return e != UINT32_MAX && g->e[e].dst == vi;
}

/* The payload of the edge from node i to node i + 1 of the last cycle (atom__dg_cycle), for
 * i + 1 < its length, or NULL (no payloads, or i out of range). The closing edge, from the last
 * node to the first, was not inserted: its payload is the one the caller passed. Valid until the
 * next call that changes the graph. */
const void *atom__dg_cycle_edge_payload(const atom__dg *g, size_t i);

/* The payload of the edge u -> v, or NULL if there is none (or no payloads). */
const void *atom__dg_edge_payload(const atom__dg *g, atom__dg_node u, atom__dg_node v);

/* The cycle found by the last atom__dg_add_edge() that returned 1: *nodes receives a pointer
 * to its nodes in edge order (each has an edge to the next, the last one to the first; the
 * first is the v and the last the u of that call). Valid until the next call that searches.
 * @return the number of nodes (0 if none). */
size_t atom__dg_cycle(const atom__dg *g, const atom__dg_node **nodes);

/* Mark @p n complete: it will receive no further incoming edges. If it has none now it is
 * deleted, with every complete successor left without incoming edges (cascade).
 * Stale handles are ignored. @return 1 if @p n was deleted, else 0. */
int atom__dg_complete_slow(atom__dg *g, atom__dg_node n);

/* Private: give back the slot of live node i, which has no edges left (the collection hook,
 * if any, was called). A slot whose generation is exhausted is retired rather than let a
 * handle come back. */
static inline void atom__dg_free_slot_(atom__dg *g, uint32_t i) {
  atom__dg_vx *v = &g->vx[i];
  v->flags = 0;
  g->live[i] = ATOM__DG_NONE;
  g->nodes--;
  g->collected++;
  if (v->gen == UINT32_MAX) return;
  v->gen++;
  v->aux = g->vx_free;
  g->vx_free = i;
}

/* atom__dg_complete() of a node the caller knows to be live (velodrome's open transaction at
 * its END): the same without the liveness test. */
static inline int atom__dg_complete_live(atom__dg *g, atom__dg_node n) {
  uint32_t i = (uint32_t)n;
  atom__dg_vx *v = &g->vx[i];
  /* In line: a node with in-edges stays; a node without any edge has nothing to unlink and no
   * successor to collect, and its slot goes back at once (003 §5.1: a finished transaction
   * without incoming edges is on no cycle, now or later). The rest out of line. */
  if (v->nin) {
    v->flags |= ATOM__DG_COMPLETE;
    return 0;
  }
  if (v->nout || g->on_collect) return atom__dg_complete_slow(g, n);
  atom__dg_free_slot_(g, i);
  return 1;
}

static inline int atom__dg_complete(atom__dg *g, atom__dg_node n) {
  if (!atom__dg_alive(g, n)) return 0;
  return atom__dg_complete_live(g, n);
}

/* Delete @p n and its edges, then collect complete successors left without incoming edges.
 * Stale handles are ignored. Never fails. */
void atom__dg_delete(atom__dg *g, atom__dg_node n);

/* Live nodes and edges. */
static inline size_t atom__dg_node_count(const atom__dg *g) { return g->nodes; }
static inline size_t atom__dg_edge_count(const atom__dg *g) { return g->edges; }

#endif
