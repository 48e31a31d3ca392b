/* Helpers the tests use to look inside the library's support structures: accessors, checks of
 * internal invariants and clock operations that the library itself never needs (so they are
 * not shipped in it). They read the structures through the layouts the support headers expose. */
#include "inspect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"

#define NIL UINT32_MAX

/* ---- digraph ---- */

/* The edge s -> d by a walk of s's out-list (the library's own look-up goes through its index,
 * which atom__dg_verify checks separately). */
static uint32_t find_edge(const atom__dg *g, uint32_t s, uint32_t d) {
  for (uint32_t ei = g->vx[s].out_head; ei != NIL; ei = g->e[ei].next_out)
    if (g->e[ei].dst == d) return ei;
  return NIL;
}

void atom__dg_set_collect_hook(atom__dg *g, atom__dg_collect_fn fn, void *ctx) {
  g->on_collect = fn;
  g->collect_ctx = ctx;
}

int atom__dg_is_complete(const atom__dg *g, atom__dg_node n) {
  return atom__dg_alive(g, n) && (g->vx[(uint32_t)n].flags & ATOM__DG_COMPLETE);
}

size_t atom__dg_in_degree(const atom__dg *g, atom__dg_node n) {
  return atom__dg_alive(g, n) ? g->vx[(uint32_t)n].nin : 0;
}

size_t atom__dg_out_degree(const atom__dg *g, atom__dg_node n) {
  return atom__dg_alive(g, n) ? g->vx[(uint32_t)n].nout : 0;
}

int atom__dg_has_edge(const atom__dg *g, atom__dg_node u, atom__dg_node v) {
  if (!atom__dg_alive(g, u) || !atom__dg_alive(g, v)) return 0;
  return find_edge(g, (uint32_t)u, (uint32_t)v) != NIL;
}

int atom__dg_verify(const atom__dg *g) {
  size_t nodes = 0, edges = 0, hashed = 0;
  for (size_t i = 0; i < g->vx_used; i++) {
    const atom__dg_vx *v = &g->vx[i];
    /* live[] names exactly the live nodes by their handles; slot 0 is reserved */
    atom__dg_node h = ((uint64_t)v->gen << 32) | i;
    if (i == 0 && ((v->flags & ATOM__DG_LIVE) || g->live[0] != ~(atom__dg_node)0)) return -12;
    if (i > 0 && g->live[i] != ((v->flags & ATOM__DG_LIVE) ? h : ATOM__DG_NONE)) return -12;
    if (!(v->flags & ATOM__DG_LIVE)) continue;
    nodes++;
    if ((v->flags & ATOM__DG_COMPLETE) && v->nin == 0) return -1;
    size_t n = 0;
    uint32_t prev = NIL;
    for (uint32_t ei = v->out_head; ei != NIL; ei = g->e[ei].next_out) {
      const atom__dg_edge *e = &g->e[ei];
      if (e->src != i || e->prev_out != prev) return -2;
      if (!(g->vx[e->dst].flags & ATOM__DG_LIVE)) return -3;
      if (g->vx[e->dst].ord <= v->ord) return -4;
      prev = ei;
      n++;
    }
    if (n != v->nout) return -6;
    edges += n;
    n = 0;
    prev = NIL;
    for (uint32_t ei = v->in_head; ei != NIL; ei = g->e[ei].next_in) {
      const atom__dg_edge *e = &g->e[ei];
      if (e->dst != i || e->prev_in != prev) return -7;
      prev = ei;
      n++;
    }
    if (n != v->nin) return -8;
  }
  /* The edge index holds every live edge exactly once and nothing else. */
  unsigned char *seen = calloc(g->e_used ? g->e_used : 1, 1);
  if (!seen) return -11;
  int bad = 0;
  for (size_t p = 0; p < g->edge_ix.cap && !bad; p++) {
    if (!g->edge_ix.slots[p].id_plus1) continue;
    uint32_t ei = g->edge_ix.slots[p].id_plus1 - 1;
    bad = ei >= g->e_used || g->e[ei].src == NIL || seen[ei];
    if (!bad) seen[ei] = 1;
    hashed++;
  }
  free(seen);
  if (bad) return -5;
  if (nodes != g->nodes) return -9;
  if (edges != g->edges || hashed != g->edges) return -10;
  return 0;
}

/* ---- vector clocks ---- */

int atom__vc_inc(atom__mem *m, atom__vc *c, uint32_t i) {
  atom__vc_t v = atom__vc_get(c, i);
  if (v == ATOM__VC_MAX) return ATOM_ELIMIT;
  return atom__vc_set(m, c, i, v + 1);
}

void atom__vc_clear(atom__vc *c) {
  if (c->len) memset(atom__vc_data(c), 0, (size_t)c->len * sizeof(atom__vc_t));
  c->len = 0;
}

int atom__vc_equal(const atom__vc *a, const atom__vc *b) {
  return atom__vc_leq(a, b) && atom__vc_leq(b, a);
}

int atom__vc_format(const atom__vc *c, char *buf, size_t size) {
  size_t used = 0;
  int total = 0;
  const atom__vc_t *d = atom__vc_cdata(c);
  if (size) buf[0] = '\0';
  for (uint32_t i = 0; i <= c->len; i++) {
    char tmp[16];
    int n;
    if (i == c->len)
      n = snprintf(tmp, sizeof tmp, ">");
    else
      n = snprintf(tmp, sizeof tmp, "%s%lu", i ? "," : "<", (unsigned long)d[i]);
    if (c->len == 0 && i == 0) n = snprintf(tmp, sizeof tmp, "<>");
    total += n;
    if (size && used + 1 < size) {
      size_t room = size - 1 - used;
      size_t k = (size_t)n < room ? (size_t)n : room;
      memcpy(buf + used, tmp, k);
      used += k;
      buf[used] = '\0';
    }
  }
  return total;
}
