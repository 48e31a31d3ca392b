/* The tso checker's reports: structured data (transactions, witness events, conflict edges,
 * variables) through support/report_build.h, and a template ({eN}: witness event N) that says
 * how the edges go; the session renders every event itself. */
#include <inttypes.h>
#include <stdarg.h>

#include "checkers/tso/tso_internal.h"
#include "support/msgbuf.h"
#include "support/rotate.h"

/* ---- messages ------------------------------------------------------------------------------ */

typedef struct template_buf {
  char s[1024];
  size_t off;
} template_buf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void template_add(template_buf *m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  atom__msg_vappend(m->s, sizeof m->s, &m->off, fmt, ap);
  va_end(ap);
}

/* A transaction of the cycle, unless it is the one just added (a cycle may pass through a
 * transaction on two consecutive edges). */
static int add_txn(atom__report_build *rb, const atom_txn_ref *r) {
  if (rb->n_txns && memcmp(&rb->txns[rb->n_txns - 1], r, sizeof *r) == 0) return 0;
  return atom__rb_txn(rb, r);
}

/* Hand the report over: the last transaction goes if it is the first again (the cycle closed
 * there); the variables of the witness reads, writes and commits (at most 8, in event order);
 * the checker's private flag comes off every event. */
static int submit(atom__report_build *rb, atom_env *env, const char *kind, uint64_t index,
                  const char *message, int name_vars) {
  if (rb->n_txns > 1 && memcmp(&rb->txns[0], &rb->txns[rb->n_txns - 1], sizeof *rb->txns) == 0)
    rb->n_txns--;
  for (size_t i = 0; i < rb->n_events; i++) {
    const atom_ev *e = &rb->events[i];
    rb->events[i].flags &= ~EV_BUFFERED;
    if (!name_vars || rb->n_vars >= 8) continue;
    if (e->kind != ATOM_READ && e->kind != ATOM_WRITE && e->kind != ATOM_COMMIT) continue;
    if (atom__rb_var(rb, e->target)) return ATOM_ENOMEM;
  }
  return atom__rb_submit(rb, env, kind, index, 0, message, 0);
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
static void template_add_literal(template_buf *m, const char *s) {
  for (; *s; s++) template_add(m, *s == '{' ? "{{" : *s == '}' ? "}}" : "%c", *s);
}

/* Which of n cycle edges a report keeps: the first TSO_MAX_EDGES - 1 and the last. */
static int edge_kept(size_t i, size_t n) { return i + 1 == n || i + 1 < TSO_MAX_EDGES; }

/* The edges of a cycle just built in rb, as "{eA} before {eB}" (the first TSO_MSG_EDGES), then
 * its buffered reads among the events those name. */
static void template_add_cycle(template_buf *m, const atom__report_build *rb) {
  size_t ne = rb->n_edges, nbuf = 0;
  for (size_t i = 0; i < ne && i < TSO_MSG_EDGES; i++)
    template_add(m, "%s{e%u} before {e%u}", i ? "; " : " ", rb->edges[i].from, rb->edges[i].to);
  if (ne > TSO_MSG_EDGES) template_add(m, "; and %zu more", ne - TSO_MSG_EDGES);
  for (size_t i = 0; i < rb->n_events && i < 2 * TSO_MSG_EDGES; i++)
    if (rb->events[i].flags & EV_BUFFERED)
      template_add(m, "%s{e%zu}", nbuf++ ? ", " : "; buffered reads: ", i);
}

/* Report the cycle just found in graph @p g (transactions, or the write contraction when
 * @p robust), closed by the edge labelled @p closing. The cycle is told from the node the
 * closing edge enters, so that the closing edge comes last. */
int atom__tso_report_exec_cycle(exec_engine *x, atom__dg *g, const exec_label *closing,
                                int robust) {
  const atom__dg_node *c;
  size_t n = atom__dg_cycle(g, &c);
  if (!n) return 0;
  atom__report_build *rb = &x->rb;
  atom__rb_reset(rb);
  for (size_t k = 0; k < n; k++) {
    atom_txn_ref r;
    if (robust) {
      r = ((const exec_rnode *)atom__dg_payload(g, c[k]))->txn;
    } else {
      const exec_txn *p = atom__dg_payload(g, c[k]);
      r = (atom_txn_ref){p->thread, p->unary, p->begin_index, p->begin_loc};
    }
    if (add_txn(rb, &r)) return ATOM_ENOMEM;
    if (!edge_kept(k, n)) continue;
    const exec_label *lb = k + 1 < n ? atom__dg_cycle_edge_payload(g, k) : closing;
    if (!lb) continue;
    if (atom__rb_edge_apart(rb, &lb->src, &lb->dst, k + 1 < n ? 0 : ATOM_EDGE_CLOSING))
      return ATOM_ENOMEM;
  }
  template_buf m = {{0}, 0};
  if (x->what) {
    template_add_literal(&m, x->what);
    template_add(&m, ": ");
  }
  if (robust) template_add(&m, "no SC-equivalent execution (a cycle of events once each write is "
                               "merged with its commit): ");
  template_add(&m, "a cycle of %zu conflicts:", rb->n_edges);
  template_add_cycle(&m, rb);
  return submit(rb, x->env, robust ? "non-robust" : "tso-cycle", closing->dst.index, m.s, 1);
}

/* A write-contraction node that an event merged into it reaches back at the write's commit:
 * the write precedes the event in program order (or through a fork), the event precedes the
 * commit. Edges: the write to the event (program order or fork), the event to the commit
 * (closing). */
int atom__tso_report_exec_self(exec_engine *x, atom__dg_node n, const exec_label *lb) {
  const exec_rnode *p = atom__dg_payload(&x->rg, n);
  atom__report_build *rb = &x->rb;
  atom__rb_reset(rb);
  template_buf m = {{0}, 0};
  if (x->what) {
    template_add_literal(&m, x->what);
    template_add(&m, ": ");
  }
  template_add(&m, "no SC-equivalent execution: {e0}, then {e1}, then {e2}, which commits the "
                   "write of {e0}: the write and its commit cannot be one step");
  uint32_t pos;
  if (atom__rb_txn(rb, &p->txn) || atom__rb_event_apart(rb, &p->ev, &pos) ||
      atom__rb_event_apart(rb, &lb->src, &pos) || atom__rb_event_apart(rb, &lb->dst, &pos) ||
      atom__rb_var(rb, p->ev.target) ||
      /* the write to the event (program order or fork), the event to the commit (closing) */
      atom__rb_edge_at(rb, 0, 1, 0) || atom__rb_edge_at(rb, 1, 2, ATOM_EDGE_CLOSING))
    return ATOM_ENOMEM;
  return submit(rb, x->env, "non-robust", lb->dst.index, m.s, 0);
}

/* Phase 1 (002 §6.2 "if the directed edges of CG already form a cycle"): report a cycle of
 * directed transaction edges, closed by the event edge src -> dst. */
int atom__tso_report_directed_cycle(graph_builder *b, uint32_t src, uint32_t dst) {
  trace_graph *T = b->T;
  tso_checker *c = b->c;
  const atom__dg_node *cy;
  size_t n = atom__dg_cycle(&b->g1, &cy);
  if (!n) return 0;
  atom__report_build *rb = &c->rb;
  atom__rb_reset(rb);
  /* told from the transaction the closing edge enters: the closing edge comes last */
  for (size_t k = 0; k < n; k++) {
    atom_txn_ref r = graph_txn_ref(T, *(const uint32_t *)atom__dg_payload(&b->g1, cy[k]));
    if (atom__rb_txn(rb, &r)) return ATOM_ENOMEM;
    if (!edge_kept(k, n)) continue;
    uint32_t lb[2] = {src, dst};
    const uint32_t *p = k + 1 < n ? atom__dg_cycle_edge_payload(&b->g1, k) : lb;
    if (!p) continue;
    atom_ev from = graph_atom_ev(T, p[0]), to = graph_atom_ev(T, p[1]);
    if (atom__rb_edge_apart(rb, &from, &to, k + 1 < n ? 0 : ATOM_EDGE_CLOSING))
      return ATOM_ENOMEM;
  }
  template_buf m = {{0}, 0};
  template_add(&m, "a cycle of %zu directed edges (conflicts that every execution of the trace "
                   "has):", rb->n_edges);
  template_add_cycle(&m, rb);
  return submit(rb, c->env, "tso-cycle", T->ev[dst].index, m.s, 1);
}

/* The directed path from local u to local v (u reaches v), as nodes appended to out. */
int atom__tso_search_path(cycle_search *s, uint32_t u, uint32_t v, id_list *out) {
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
    if (id_list_push(out, s->m, s->cnodes[x])) return ATOM_ENOMEM;
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
static void template_add_side(template_buf *m, const atom_ev *e, size_t i) {
  template_add(m, "%s{e%zu}", e->kind == ATOM_WRITE ? "the commit of " : "", i);
}

/* An edge of a reported cycle: two events (positions in the trace graph), and whether it is a
 * link oriented by the search (else a directed edge, in trace order). */
typedef struct cycle_edge {
  uint32_t from, to, link;
} cycle_edge;

/* Label the directed stretches of a found cycle with events. hop[q] holds the two nodes of the
 * transaction edge q (source, destination); cy[q] receives an event edge of the trace graph
 * between them. With transactions as nodes, every transaction edge was made from such an event
 * edge (build_edge), so one scan of the trace's events and directed edges finds them all: the work
 * is linear in the trace, once per report, and a search makes at most one report. With events
 * as nodes (robustness) the transaction edge is the event edge. A hop without a label (none can
 * be) keeps NONE32 and is left out of the report by the caller. */
static int report_label_hops(cycle_search *s, const uint32_t *hop, cycle_edge *cy, size_t n) {
  const trace_graph *T = s->T;
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
    uint32_t nu = search_node(s, u);
    if (head[nu] == NONE32) continue;
    for (uint32_t k = T->e_off[u]; k < T->e_off[u + 1] && left; k++) {
      uint32_t v = T->e_adj[k], nv = search_node(s, v);
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

/* The cycle in s->seg as edges in the search's order (segment l's hops, labelled with events by
 * report_label_hops, then its link into segment l + 1), and its transactions into rb. *cy_out
 * is allocated with max(*ncy_out, 1) entries. */
static int search_cycle_edges(cycle_search *s, int robust, atom__report_build *rb,
                              cycle_edge **cy_out, size_t *ncy_out) {
  tso_checker *c = s->c;
  const trace_graph *T = s->T;
  size_t m = s->found, ncy = 0;
  id_list path = {0};
  uint32_t *hop = NULL;
  cycle_edge *cy = NULL;
  size_t *seg_off = atom__mem_alloc(c->mem, (m + 1) * sizeof *seg_off);
  int rc = seg_off ? 0 : ATOM_ENOMEM;
  for (size_t l = 0; l < m && !rc; l++) {
    seg_off[l] = path.n;
    rc = atom__tso_search_path(s, s->seg[l].T, s->seg[l].S, &path);
  }
  if (!rc) {
    seg_off[m] = path.n;
    ncy = path.n; /* path.n - m hops and m links */
    cy = atom__mem_alloc(c->mem, (ncy ? ncy : 1) * sizeof *cy);
    hop = atom__mem_alloc(c->mem, 2 * (ncy ? ncy : 1) * sizeof *hop);
    if (!cy || !hop) rc = ATOM_ENOMEM;
  }
  for (size_t i = 0; i < path.n && !rc; i++) {
    atom_txn_ref r = graph_txn_ref(T, robust ? T->ev[path.a[i]].txn : path.a[i]);
    rc = add_txn(rb, &r);
  }
  if (rc) goto out;
  size_t q = 0;
  for (size_t l = 0; l < m; l++) {
    for (size_t k = seg_off[l]; k + 1 < seg_off[l + 1]; k++, q++) {
      cy[q] = (cycle_edge){NONE32, NONE32, 0};
      hop[2 * q] = path.a[k];
      hop[2 * q + 1] = path.a[k + 1];
    }
    cy[q++] = (cycle_edge){s->seg[l].b, s->seg[(l + 1) % m].a, 1};
  }
  rc = report_label_hops(s, hop, cy, ncy);
out:
  id_list_free(&path, c->mem);
  atom__mem_free(c->mem, seg_off, (m + 1) * sizeof *seg_off);
  atom__mem_free(c->mem, hop, 2 * (ncy ? ncy : 1) * sizeof *hop);
  if (rc) {
    atom__mem_free(c->mem, cy, (ncy ? ncy : 1) * sizeof *cy);
    cy = NULL;
  }
  *cy_out = cy;
  *ncy_out = ncy;
  return rc;
}

/* The template of a search report over its ne first edges (cy[l]: whether edge l is a link),
 * then the buffered reads of the links spelled out, each with the write it reads from added as
 * a witness event: they conflict with other threads' commits only when served from memory. */
static int search_cycle_template(const cycle_search *s, int robust, atom__report_build *rb,
                                 const cycle_edge *cy, size_t ne, size_t nk, template_buf *mb) {
  const trace_graph *T = s->T;
  if (robust) template_add(mb, "no SC-equivalent execution of the trace: a cycle of events once "
                               "each write is merged with its commit");
  else template_add(mb, "a cycle of transactions in some execution of the trace");
  template_add(mb, " (%zu conflict%s; undirected edges oriented as marked)", nk,
               nk == 1 ? "" : "s");
  for (size_t l = 0; l < ne && l < TSO_MSG_EDGES; l++) {
    template_add(mb, l ? "; " : ": ");
    if (cy[l].link) {
      template_add_side(mb, &rb->events[2 * l], 2 * l);
      template_add(mb, " before ");
      template_add_side(mb, &rb->events[2 * l + 1], 2 * l + 1);
      template_add(mb, " (oriented)");
    } else {
      template_add(mb, "{e%zu} before {e%zu}", 2 * l, 2 * l + 1);
    }
  }
  if (ne > TSO_MSG_EDGES) template_add(mb, "; and %zu more", ne - TSO_MSG_EDGES);
  size_t nbuf = 0, nedge_wit = rb->n_events;
  for (size_t i = 0; i < nedge_wit && i < 2 * TSO_MSG_EDGES && rb->n_events < 256; i++) {
    const graph_event *r = &T->ev[i % 2 ? cy[i / 2].to : cy[i / 2].from];
    if (!cy[i / 2].link || r->kind != ATOM_READ || !(r->flags & GRAPH_BUFFERED)) continue;
    atom_ev w = graph_atom_ev(T, r->wr);
    uint32_t pos;
    if (atom__rb_event_apart(rb, &w, &pos)) return ATOM_ENOMEM;
    template_add(mb, nbuf++ ? ", " : "; buffered reads (served from memory: their thread's write "
                                     "committed before them): ");
    template_add(mb, "{e%zu} after the commit of {e%u}", i, pos);
  }
  return 0;
}

/* Report the cycle in s->seg: kind "tso-cycle" (transactions) or "non-robust" (events).
 *
 * The edges are the whole cycle in order, each with its two events: every segment's directed
 * stretch from its entry to its exit as event edges of the trace graph (one per transaction
 * edge of the path, report_label_hops), then the link that leaves it, oriented as the cycle needs
 * it (the effect of from before that of to; a write's effect is its commit, so from may come later
 * in the trace). The edges chain through transactions: each ends in the transaction the next
 * one starts from. The cycle is told so that it ends with the edge whose destination comes
 * latest in the trace; that edge is flagged closing and the report is made at its destination
 * (by then every edge's destination event, for a write its issue, has happened). The witness
 * events after the edges' ones are the writes that buffered reads of links read from. */
int atom__tso_report_search_cycle(cycle_search *s, int robust) {
  tso_checker *c = s->c;
  const trace_graph *T = s->T;
  atom__report_build *rb = &c->rb;
  atom__rb_reset(rb);
  cycle_edge *cy;
  size_t ncy, closing = 0, nk = 0, ne = 0;
  int rc = search_cycle_edges(s, robust, rb, &cy, &ncy);
  if (rc) return rc;
  /* told so that the edge with the latest destination comes last; unlabelled hops left out */
  for (size_t i = 0; i < ncy; i++)
    if (cy[i].to != NONE32 && (cy[closing].to == NONE32 || cy[i].to >= cy[closing].to))
      closing = i;
  if (ncy) atom__rotate(cy, ncy, sizeof *cy, (closing + 1) % ncy);
  for (size_t i = 0; i < ncy; i++)
    if (cy[i].from != NONE32) cy[nk++] = cy[i];
  for (size_t i = 0; i < nk && !rc; i++) {
    if (!edge_kept(i, nk)) continue;
    atom_ev from = graph_atom_ev(T, cy[i].from), to = graph_atom_ev(T, cy[i].to);
    cy[ne++] = cy[i]; /* compacted in place: ne <= i */
    rc = atom__rb_edge_apart(rb, &from, &to, i + 1 == nk ? ATOM_EDGE_CLOSING : 0);
  }
  template_buf mb = {{0}, 0};
  if (!rc) rc = search_cycle_template(s, robust, rb, cy, ne, nk, &mb);
  if (!rc)
    rc = submit(rb, c->env, robust ? "non-robust" : "tso-cycle",
                ne ? rb->events[2 * ne - 1].index : c->last_index, mb.s, 1);
  atom__mem_free(c->mem, cy, (ncy ? ncy : 1) * sizeof *cy);
  return rc;
}

/* The search stopped at max_work without deciding: the checker is INCOMPLETE, not a
 * violation (an inconclusive search proves nothing either way). */
int atom__tso_report_search_bound(tso_checker *c, int robust, uint64_t work) {
  return atom_env_incomplete(c->env, c->last_index,
                             "the %s search through undirected edges stopped after %" PRIu64
                             " steps (max_work=%" PRIu64 "): the trace was only partly checked",
                             robust ? "robustness" : "TSO-serializability", work, c->max_work);
}

