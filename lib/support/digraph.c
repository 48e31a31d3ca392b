/* Incremental directed graph with cycle detection and garbage collection (see digraph.h).
 *
 * Cycle detection maintains a topological order `ord` of the live nodes (Pearce and Kelly's
 * dynamic topological sort). Inserting u -> v with ord(u) < ord(v) keeps the order valid and
 * costs O(1). Otherwise only nodes whose rank lies between ord(v) and ord(u) can be affected:
 * a forward search from v (bounded above by ord(u)) either reaches u -- then u -> v closes a
 * cycle -- or yields the set F; a backward search from u (bounded below by ord(v)) yields B;
 * the ranks held by B and F are then redistributed, B first, each set keeping its relative
 * order. Deleting nodes never invalidates an order, so collection needs no extra work. */
#include "support/digraph.h"

#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "support/assert.h"
#include "support/u64map.h" /* atom__hash64 */

#define NIL UINT32_MAX
#define MAX_SLOTS (UINT32_MAX - 1u) /* slot indices stay below NIL */

/* ---- small helpers ---------------------------------------------------------------------- */

static inline atom__dg_node handle_of(const atom__dg *g, uint32_t i) {
  return ((uint64_t)g->vx[i].gen << 32) | i;
}

void atom__dg_init(atom__dg *g, atom__mem *mem, size_t payload_size) {
  memset(g, 0, sizeof *g);
  g->mem = mem;
  g->payload_size = payload_size;
  g->vx_free = NIL;
  g->e_free = NIL;
}

void atom__dg_destroy(atom__dg *g) {
  atom__mem *m = g->mem;
  if (!m) return;
  atom__mem_free(m, g->vx, g->vx_cap * sizeof *g->vx);
  atom__mem_free(m, g->live, g->live_cap * sizeof *g->live);
  if (g->payload_size) atom__mem_free(m, g->pl, g->pl_cap * g->payload_size);
  atom__mem_free(m, g->e, g->e_cap * sizeof *g->e);
  atom__idindex_free(&g->edge_ix, m);
  atom__mem_free(m, g->stk, g->stk_cap * sizeof *g->stk);
  atom__mem_free(m, g->fw, g->fw_cap * sizeof *g->fw);
  atom__mem_free(m, g->bw, g->bw_cap * sizeof *g->bw);
  atom__mem_free(m, g->ords, g->ords_cap * sizeof *g->ords);
  atom__mem_free(m, g->cyc, g->cyc_cap * sizeof *g->cyc);
  if (g->epl_size) atom__mem_free(m, g->epl, g->epl_cap * g->epl_size);
  size_t ps = g->payload_size, es = g->epl_size;
  atom__dg_init(g, m, ps);
  g->epl_size = es;
}

void atom__dg_set_edge_payload(atom__dg *g, size_t size) {
  if (g->e_used == 0) g->epl_size = size;
}

/* ---- edge index: support/idindex over edge indices, keyed by (src, dst) ------------------- */

static inline uint64_t edge_hash(uint32_t s, uint32_t d) {
  return atom__hash64(((uint64_t)s << 32) | d);
}

/* The edge s -> d, or NIL; *p ends where it would be added. */
static inline uint32_t edge_probe(const atom__dg *g, uint32_t s, uint32_t d,
                                  atom__idindex_probe *p) {
  atom__idindex_start(&g->edge_ix, edge_hash(s, d), p);
  for (uint32_t x; (x = atom__idindex_next(&g->edge_ix, p)) != ATOM__IDINDEX_END;)
    if (g->e[x].src == s && g->e[x].dst == d) return x;
  return NIL;
}

/* Make room for one more edge record (its index entry is added by atom__dg_add_edge_labeled). */
static int edge_reserve(atom__dg *g) {
  if (g->e_free == NIL && g->e_used == g->e_cap) {
    if (g->e_cap >= MAX_SLOTS) return ATOM_ENOMEM;
    int rc = ATOM__GROW(g->mem, g->e, g->e_cap, g->e_used + 1);
    if (rc) return rc;
  }
  if (g->epl_size && g->epl_cap < g->e_cap) {
    int rc = atom__grow(g->mem, (void **)&g->epl, &g->epl_cap, g->e_cap, g->epl_size);
    if (rc) return rc;
  }
  return 0;
}

/* The record edge_link takes next. */
static uint32_t edge_next_free(const atom__dg *g) {
  return g->e_free != NIL ? g->e_free : (uint32_t)g->e_used;
}

/* Link record edge_next_free(g), already in the edge index, as s -> d. */
static uint32_t edge_link(atom__dg *g, uint32_t s, uint32_t d) {
  uint32_t ei;
  if (g->e_free != NIL) {
    ei = g->e_free;
    g->e_free = g->e[ei].next_out;
  } else {
    ei = (uint32_t)g->e_used++;
  }
  atom__dg_edge *e = &g->e[ei];
  atom__dg_vx *vs = &g->vx[s], *vd = &g->vx[d];
  ATOM__ASSERT((vs->flags & ATOM__DG_LIVE) && (vd->flags & ATOM__DG_LIVE) && s != d);
  ATOM__ASSERT(vs->ord < vd->ord); /* the order was repaired before the edge goes in */
  e->src = s;
  e->dst = d;
  e->prev_out = NIL;
  e->next_out = vs->out_head;
  if (vs->out_head != NIL) g->e[vs->out_head].prev_out = ei;
  vs->out_head = ei;
  e->prev_in = NIL;
  e->next_in = vd->in_head;
  if (vd->in_head != NIL) g->e[vd->in_head].prev_in = ei;
  vd->in_head = ei;
  vs->nout++;
  vd->nin++;
  g->edges++;
  return ei;
}

static void edge_unlink(atom__dg *g, uint32_t ei) {
  atom__dg_edge *e = &g->e[ei];
  atom__idindex_remove(&g->edge_ix, edge_hash(e->src, e->dst), ei);
  atom__dg_vx *vs = &g->vx[e->src], *vd = &g->vx[e->dst];
  ATOM__ASSERT(vs->nout > 0 && vd->nin > 0 && g->edges > 0);
  if (e->prev_out != NIL) g->e[e->prev_out].next_out = e->next_out;
  else vs->out_head = e->next_out;
  if (e->next_out != NIL) g->e[e->next_out].prev_out = e->prev_out;
  if (e->prev_in != NIL) g->e[e->prev_in].next_in = e->next_in;
  else vd->in_head = e->next_in;
  if (e->next_in != NIL) g->e[e->next_in].prev_in = e->prev_in;
  vs->nout--;
  vd->nin--;
  g->edges--;
  e->src = e->dst = NIL;
  e->next_out = g->e_free;
  g->e_free = ei;
}

/* ---- nodes -------------------------------------------------------------------------------- */

/* Room for slot vx_used (and, the first time, the reserved slot 0 before it) in vx, live and
 * the payloads. Each array grows on its own (a failure leaves the others larger, harmless). */
static int vx_reserve(atom__dg *g) {
  size_t need = g->vx_used ? g->vx_used + 1 : 2;
  if (need > MAX_SLOTS) return ATOM_ENOMEM;
  if (ATOM__GROW(g->mem, g->vx, g->vx_cap, need) || ATOM__GROW(g->mem, g->live, g->live_cap, need))
    return ATOM_ENOMEM;
  if (g->payload_size &&
      atom__grow(g->mem, (void **)&g->pl, &g->pl_cap, need, g->payload_size))
    return ATOM_ENOMEM;
  if (g->vx_used == 0) {
    /* Slot 0 is never handed out, so that NONE (slot 0, generation 0) is never live; its
     * entry in live names no handle (no slot has the index UINT32_MAX). */
    memset(&g->vx[0], 0, sizeof g->vx[0]);
    g->vx[0].gen = 1;
    g->live[0] = ~(atom__dg_node)0;
    g->vx_used = 1;
  }
  return 0;
}

/* atom__dg_add_node in full: a new slot or a recycled one, with or without a payload. */
int atom__dg_add_node_slow(atom__dg *g, atom__dg_node *out) {
  uint32_t i;
  if (g->vx_free != NIL) {
    i = g->vx_free;
    g->vx_free = g->vx[i].aux;
  } else {
    int rc = vx_reserve(g);
    if (rc) return rc;
    i = (uint32_t)g->vx_used++;
    g->vx[i].gen = 1;
  }
  if (g->payload_size) memset(g->pl + (size_t)i * g->payload_size, 0, g->payload_size);
  atom__dg_node_init_(g, i, out);
  return 0;
}

/* Remove node i and its edges; complete successors left without in-edges are pushed on the
 * collection queue *q (linked through aux). */
static void vx_teardown(atom__dg *g, uint32_t i, uint32_t *q) {
  uint32_t ei;
  ATOM__ASSERT(i < g->vx_used && (g->vx[i].flags & ATOM__DG_LIVE) && g->nodes > 0);
  while ((ei = g->vx[i].out_head) != NIL) {
    uint32_t d = g->e[ei].dst;
    edge_unlink(g, ei);
    atom__dg_vx *vd = &g->vx[d];
    if (vd->nin == 0 && (vd->flags & (ATOM__DG_COMPLETE | ATOM__DG_QUEUED)) == ATOM__DG_COMPLETE) {
      vd->flags |= ATOM__DG_QUEUED;
      vd->aux = *q;
      *q = d;
    }
  }
  while ((ei = g->vx[i].in_head) != NIL) edge_unlink(g, ei);
  ATOM__ASSERT(g->vx[i].nin == 0 && g->vx[i].nout == 0);
  if (g->on_collect)
    g->on_collect(handle_of(g, i), g->payload_size ? g->pl + (size_t)i * g->payload_size : NULL,
                  g->collect_ctx);
  atom__dg_free_slot_(g, i);
}

static void collect_queue(atom__dg *g, uint32_t q) {
  while (q != NIL) {
    uint32_t i = q;
    q = g->vx[i].aux;
    vx_teardown(g, i, &q);
  }
}

void atom__dg_delete(atom__dg *g, atom__dg_node n) {
  if (!atom__dg_alive(g, n)) return;
  uint32_t q = NIL;
  vx_teardown(g, (uint32_t)n, &q);
  collect_queue(g, q);
}

/* atom__dg_complete in full. */
int atom__dg_complete_slow(atom__dg *g, atom__dg_node n) {
  if (!atom__dg_alive(g, n)) return 0;
  atom__dg_vx *v = &g->vx[(uint32_t)n];
  v->flags |= ATOM__DG_COMPLETE;
  if (v->nin) return 0;
  /* 003 §5.1: a finished transaction without incoming edges is on no cycle, now or later. */
  if (v->nout == 0 && !g->on_collect) {
    /* the usual case, a node without edges: nothing to unlink and no successor to queue */
    atom__dg_free_slot_(g, (uint32_t)n);
    return 1;
  }
  atom__dg_delete(g, n);
  return 1;
}

size_t atom__dg_cycle(const atom__dg *g, const atom__dg_node **nodes) {
  if (nodes) *nodes = g->cyc;
  return g->ncyc;
}

/* ---- insertion with order maintenance ------------------------------------------------------ */

static int cmp_ordent(const void *a, const void *b) {
  uint64_t x = ((const atom__dg_ordent *)a)->ord, y = ((const atom__dg_ordent *)b)->ord;
  return (x > y) - (x < y);
}

static void sort_ordents(atom__dg_ordent *a, size_t n) {
  if (n > 16) {
    qsort(a, n, sizeof *a, cmp_ordent);
    return;
  }
  for (size_t i = 1; i < n; i++) {
    atom__dg_ordent t = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1].ord > t.ord) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = t;
  }
}

/* Two fresh epochs for the forward and backward marks (marks are never cleared otherwise). */
static uint32_t next_epoch(atom__dg *g) {
  if (g->epoch >= UINT32_MAX - 4) {
    for (size_t i = 0; i < g->vx_used; i++) g->vx[i].mark = 0;
    g->epoch = 0;
  }
  g->epoch += 2;
  return g->epoch;
}

/* Scratch space for a search over at most every live node, reserved before anything changes
 * so that a failed allocation leaves the graph untouched. */
static int reserve_scratch(atom__dg *g) {
  size_t n = g->nodes + 1;
  if (ATOM__GROW(g->mem, g->stk, g->stk_cap, n) || ATOM__GROW(g->mem, g->fw, g->fw_cap, n) ||
      ATOM__GROW(g->mem, g->bw, g->bw_cap, n) || ATOM__GROW(g->mem, g->ords, g->ords_cap, n) ||
      ATOM__GROW(g->mem, g->cyc, g->cyc_cap, n))
    return ATOM_ENOMEM;
  return 0;
}

/* The edge x -> y goes against the order (ord y < ord x). Returns 1 (cycle recorded, nothing
 * changed), 0 (order repaired so that the edge can be linked) or ATOM_ENOMEM. */
static int repair_order(atom__dg *g, uint32_t x, uint32_t y) {
  int rc = reserve_scratch(g);
  if (rc) return rc;
  g->searches++;
  atom__dg_vx *vx = g->vx;
  const uint64_t ub = vx[x].ord, lb = vx[y].ord;
  const uint32_t ef = next_epoch(g), eb = ef + 1;
  size_t sp = 0, nf = 0, nb = 0;

  /* Forward: everything reachable from y ranked below x. Reaching x means a cycle. */
  vx[y].mark = ef;
  vx[y].aux = NIL;
  g->stk[sp++] = y;
  g->fw[nf++] = (atom__dg_ordent){vx[y].ord, y, 0};
  while (sp) {
    uint32_t w = g->stk[--sp];
    for (uint32_t ei = vx[w].out_head; ei != NIL; ei = g->e[ei].next_out) {
      uint32_t d = g->e[ei].dst;
      if (d == x) {
        /* Cycle y -> ... -> w -> x (-> y by the new edge); walk the search tree back. */
        size_t len = 1;
        for (uint32_t p = w; p != NIL; p = vx[p].aux) len++;
        g->ncyc = len;
        g->cyc[--len] = handle_of(g, x);
        for (uint32_t p = w; p != NIL; p = vx[p].aux) g->cyc[--len] = handle_of(g, p);
        return 1;
      }
      if (vx[d].mark != ef && vx[d].ord < ub) {
        vx[d].mark = ef;
        vx[d].aux = w;
        g->stk[sp++] = d;
        g->fw[nf++] = (atom__dg_ordent){vx[d].ord, d, 0};
      }
    }
  }

  /* Backward: everything that reaches x ranked above y. Disjoint from the forward set, or a
   * cycle would have been found. */
  vx[x].mark = eb;
  g->stk[sp++] = x;
  g->bw[nb++] = (atom__dg_ordent){vx[x].ord, x, 0};
  while (sp) {
    uint32_t w = g->stk[--sp];
    for (uint32_t ei = vx[w].in_head; ei != NIL; ei = g->e[ei].next_in) {
      uint32_t s = g->e[ei].src;
      if (vx[s].mark != eb && vx[s].ord > lb) {
        vx[s].mark = eb;
        g->stk[sp++] = s;
        g->bw[nb++] = (atom__dg_ordent){vx[s].ord, s, 0};
      }
    }
  }

  /* Redistribute the ranks: all of B before all of F, each keeping its internal order. */
  sort_ordents(g->fw, nf);
  sort_ordents(g->bw, nb);
  size_t i = 0, j = 0, k = 0;
  while (i < nb || j < nf) {
    if (j == nf || (i < nb && g->bw[i].ord < g->fw[j].ord)) g->ords[k++] = g->bw[i++].ord;
    else g->ords[k++] = g->fw[j++].ord;
  }
  for (i = 0; i < nb; i++) vx[g->bw[i].vx].ord = g->ords[i];
  for (j = 0; j < nf; j++) vx[g->fw[j].vx].ord = g->ords[nb + j];
  return 0;
}

int atom__dg_add_edge_labeled(atom__dg *g, atom__dg_node u, atom__dg_node v,
                              const void *payload) {
  if (u == v || !atom__dg_alive(g, u) || !atom__dg_alive(g, v)) return 0;
  uint32_t ui = (uint32_t)u, vi = (uint32_t)v;
  /* Duplicates: the newest in-edge of v and out-edge of u catch the usual repeat (one
   * transaction reading many variables of another) without hashing. */
  uint32_t h = g->vx[vi].in_head;
  if (h != NIL && g->e[h].src == ui) return 0;
  h = g->vx[ui].out_head;
  if (h != NIL && g->e[h].dst == vi) return 0;
  atom__idindex_probe p;
  if (edge_probe(g, ui, vi, &p) != NIL) return 0;
  int rc = edge_reserve(g);
  if (rc) return rc;
  /* Indexed before the order is repaired, so that running out of memory changes nothing; taken
   * out again when the edge would close a cycle (or the repair runs out of memory). */
  uint32_t ei = edge_next_free(g);
  if ((rc = atom__idindex_add(&g->edge_ix, g->mem, &p, ei))) return rc;
  if (g->vx[ui].ord > g->vx[vi].ord) {
    rc = repair_order(g, ui, vi);
    if (rc) {
      atom__idindex_remove(&g->edge_ix, edge_hash(ui, vi), ei);
      return rc;
    }
  }
  uint32_t linked = edge_link(g, ui, vi);
  ATOM__ASSERT(linked == ei);
  if (g->epl_size) {
    unsigned char *dst = g->epl + (size_t)ei * g->epl_size;
    if (payload) memcpy(dst, payload, g->epl_size);
    else memset(dst, 0, g->epl_size);
  }
  return 0;
}

const void *atom__dg_edge_payload(const atom__dg *g, atom__dg_node u, atom__dg_node v) {
  if (!g->epl_size || !atom__dg_alive(g, u) || !atom__dg_alive(g, v)) return NULL;
  atom__idindex_probe p;
  uint32_t ei = edge_probe(g, (uint32_t)u, (uint32_t)v, &p);
  return ei == NIL ? NULL : g->epl + (size_t)ei * g->epl_size;
}

const void *atom__dg_cycle_edge_payload(const atom__dg *g, size_t i) {
  if (i + 1 >= g->ncyc) return NULL;
  return atom__dg_edge_payload(g, g->cyc[i], g->cyc[i + 1]);
}
