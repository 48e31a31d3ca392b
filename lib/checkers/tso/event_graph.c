/* mode=trace: the trace's event graph and its transaction graph (002 §5), built in one pass
 * over the buffered events, and the indexes the search reads (accesses per variable, writes per
 * variable and thread). */
#include "checkers/tso/tso_internal.h"

void atom__tso_graph_free(trace_graph *T, atom__mem *m) {
  atom__mem_free(m, T->ev, T->ev_cap * sizeof *T->ev);
  atom__mem_free(m, T->tx, T->tx_cap * sizeof *T->tx);
  id_list_free(&T->el, m);
  id_list_free(&T->fl, m);
  id_list_free(&T->dl, m);
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

static int pairs_put(builder_pairs *s, atom__mem *m, uint32_t thread, uint32_t ev) {
  for (uint32_t i = s->n; i-- > 0;)
    if (s->p[i].thread == thread) {
      s->p[i].ev = ev;
      return 0;
    }
  if (s->n == s->cap) {
    uint32_t ncap = s->cap ? s->cap * 2 : 2;
    builder_pair *np = atom__mem_realloc(m, s->p, s->cap * sizeof *np, ncap * sizeof *np);
    if (!np) return ATOM_ENOMEM;
    s->p = np;
    s->cap = ncap;
  }
  s->p[s->n++] = (builder_pair){thread, ev};
  return 0;
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
static int build_edge(graph_builder *b, uint32_t src, uint32_t dst, int forced) {
  if (src == NONE32) return 0;
  trace_graph *T = b->T;
  atom__mem *m = b->c->mem;
  if (id_list_push(&T->el, m, src) || id_list_push(&T->el, m, dst)) return ATOM_ENOMEM;
  if (forced && (id_list_push(&T->fl, m, src) || id_list_push(&T->fl, m, dst))) return ATOM_ENOMEM;
  uint32_t ts = T->ev[src].txn, td = T->ev[dst].txn;
  if (ts == td) return 0;
  if (id_list_push(&T->dl, m, ts) || id_list_push(&T->dl, m, td)) return ATOM_ENOMEM;
  if (!b->phase1) return 0;
  uint32_t lb[2] = {src, dst};
  int rc = atom__dg_add_edge_labeled(&b->g1, b->txn_node[ts], b->txn_node[td], lb);
  if (rc == 1) {
    b->cycles++;
    rc = atom__tso_report_directed_cycle(b, src, dst);
  }
  return rc < 0 ? rc : 0;
}

int atom__tso_build_new_txn(graph_builder *b, uint32_t t, int unary, uint64_t index, uint64_t loc,
                            uint32_t *out) {
  trace_graph *T = b->T;
  atom__mem *m = b->c->mem;
  if (T->ntx >= NONE32 - 1)
    return atom_env_error(b->c->env, ATOM_ELIMIT, "tso: more than %u transactions in a trace",
                          NONE32 - 2);
  if (ATOM__GROW(m, T->tx, T->tx_cap, T->ntx + 1)) return ATOM_ENOMEM;
  uint32_t id = (uint32_t)T->ntx;
  T->tx[id] = (graph_txn){t, (uint32_t)unary, index, loc, 0, 0};
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

void atom__tso_build_txn_done(graph_builder *b, uint32_t txn) {
  if (b->phase1) atom__dg_complete(&b->g1, b->txn_node[txn]);
}

/* Edges into g from every earlier event of thread th (see exec_program_order_edges). @p w_forced:
 * whether the effects of the thread's writes and buffered reads come before g (false for fork and
 * for the joiner's own join, which do not drain). */
static int build_program_order_edges(graph_builder *b, const builder_thread *th, uint32_t g,
                                     int w_forced) {
  int rc;
  int nf = w_forced || th->nstar == NONE32 || b->T->ev[th->nstar].kind != ATOM_WRITE;
  if ((rc = build_edge(b, th->nstar, g, nf)) || (rc = build_edge(b, th->sstar, g, 1))) return rc;
  for (size_t i = 0; i < th->rb.n; i++)
    if ((rc = build_edge(b, th->bv[th->rb.a[i]].rb, g, w_forced))) return rc;
  return 0;
}

/* A drain of thread u at position g: its pending writes are committed before g in every
 * execution: their windows end at g and they become settled (ordered before every later access
 * of their variable by another thread). */
static int build_drain(graph_builder *b, builder_thread *u, uint32_t uid, uint32_t g) {
  trace_graph *T = b->T;
  for (size_t i = 0; i < u->pend.n; i++) T->ev[u->pend.a[i]].d = g;
  u->pend.n = 0;
  for (size_t i = 0; i < u->bt.live.n; i++) {
    uint32_t e = u->bt.live.a[i];
    if (u->bv[e].lastw == NONE32) continue;
    int rc = pairs_put(&b->var[u->bt.var[e]].st, b->c->mem, uid, u->bv[e].lastw);
    if (rc) return rc;
  }
  atom__tso_buffer_clear(&u->bt);
  return 0;
}

static void build_after_nonread(builder_thread *th, uint32_t g, int strong) {
  th->nstar = g;
  if (strong) th->sstar = g;
  th->epoch++;
  th->rb.n = 0;
}

/* A READ r at position g: served from the thread's buffer or from memory. */
static int build_read(graph_builder *b, builder_thread *th, const atom_ev *r, uint32_t g) {
  atom__mem *m = b->c->mem;
  graph_event *e = &b->T->ev[g];
  builder_var *v = &b->var[r->target];
  int rc;
  uint32_t k = buffer_find(&th->bt, r->target);
  if (k != NONE32) { /* marked before any edge: a report may tell the read */
    e->flags |= GRAPH_BUFFERED;
    e->wr = th->bv[k].lastw;
  }
  if ((rc = build_edge(b, th->sstar, g, 1))) return rc;
  if (k != NONE32) {
    builder_buffer_view *bv = &th->bv[k];
    if ((rc = build_edge(b, bv->wb, g, 1))) return rc;
    bv->wb = bv->rb = g;
    if (bv->rb_mark != th->epoch + 1) {
      bv->rb_mark = th->epoch + 1;
      if ((rc = id_list_push(&th->rb, m, k))) return rc;
    }
    return 0;
  }
  /* A write of another thread committed before its thread's drain, and the drain came before
   * this read: ordered the same way in every execution. A buffered read has such conflicts
   * only when it is served from memory: they are links (atom__tso_search_links), not edges. */
  for (uint32_t i = 0; i < v->st.n; i++)
    if (v->st.p[i].thread != r->thread && (rc = build_edge(b, v->st.p[i].ev, g, 1))) return rc;
  if ((rc = pairs_put(&v->rd, m, r->thread, g))) return rc;
  th->sstar = g;
  return 0;
}

/* A WRITE r at position g: issued into the thread's buffer, pending until a drain. */
static int build_write(graph_builder *b, builder_thread *th, const atom_ev *r, uint32_t g) {
  atom__mem *m = b->c->mem;
  builder_var *v = &b->var[r->target];
  int rc;
  if ((rc = build_program_order_edges(b, th, g, 1))) return rc;
  /* A read (from memory) before a later write of another thread: the commit follows the
   * issue. */
  for (uint32_t i = 0; i < v->rd.n; i++)
    if (v->rd.p[i].thread != r->thread && (rc = build_edge(b, v->rd.p[i].ev, g, 1))) return rc;
  for (uint32_t i = 0; i < v->st.n; i++)
    if (v->st.p[i].thread != r->thread && (rc = build_edge(b, v->st.p[i].ev, g, 1))) return rc;
  build_after_nonread(th, g, 0);
  uint32_t k = buffer_entry(&th->bt, r->target); /* looked up once */
  if (!buffer_current(&th->bt, k)) {
    if (ATOM__GROW(m, th->bv, th->bv_cap, th->bt.n + 1) ||
        atom__tso_buffer_add(&th->bt, m, r->target, k, &k))
      return ATOM_ENOMEM;
    th->bv[k] = (builder_buffer_view){NONE32, NONE32, NONE32, 0};
  }
  th->bv[k].wb = th->bv[k].lastw = g;
  b->T->ev[g].d = NONE32;
  return id_list_push(&th->pend, m, g);
}

/* A JOIN r of thread r->target at position g: the child's buffer drains, its last events are
 * ordered before the join. */
static int build_join(graph_builder *b, builder_thread *th, const atom_ev *r, uint32_t g) {
  const trace_graph *T = b->T;
  builder_thread *ch = &b->th[r->target];
  int rc;
  if ((rc = build_drain(b, ch, r->target, g))) return rc;
  if (ch->started) {
    /* as in atom__tso_exec_event: u's nstar or sstar may still be its fork, which reaches g
     * through u's own events; an edge fork -> join would name two events that do not conflict */
    uint32_t fn = ch->nstar, fs = ch->sstar;
    if (fn != NONE32 && T->ev[fn].thread != r->target) ch->nstar = NONE32;
    if (fs != NONE32 && T->ev[fs].thread != r->target) ch->sstar = NONE32;
    rc = build_program_order_edges(b, ch, g, 1);
    ch->nstar = fn;
    ch->sstar = fs;
    if (rc) return rc;
  }
  if ((rc = build_program_order_edges(b, th, g, 0))) return rc;
  build_after_nonread(th, g, 1);
  return 0;
}

/* One graph event (R, W, FENCE, ACQUIRE, RELEASE, FORK, JOIN) at position g. */
int atom__tso_build_event(graph_builder *b, const atom_ev *r, uint32_t g) {
  builder_thread *th = &b->th[r->thread];
  int rc;
  th->started = 1;
  switch (r->kind) {
  case ATOM_READ:
    return build_read(b, th, r, g);
  case ATOM_WRITE:
    return build_write(b, th, r, g);
  case ATOM_FENCE:
  case ATOM_ACQUIRE:
  case ATOM_RELEASE:
    if ((rc = build_program_order_edges(b, th, g, 1))) return rc;
    if (r->kind == ATOM_ACQUIRE && (rc = build_edge(b, b->rel[r->target], g, 1))) return rc;
    if (r->kind == ATOM_RELEASE) b->rel[r->target] = g;
    if ((rc = build_drain(b, th, r->thread, g))) return rc;
    build_after_nonread(th, g, 1);
    return 0;
  case ATOM_FORK: {
    if ((rc = build_program_order_edges(b, th, g, 0))) return rc;
    build_after_nonread(th, g, 1);
    builder_thread *ch = &b->th[r->target];
    ch->nstar = ch->sstar = g;
    return 0;
  }
  case ATOM_JOIN:
    return build_join(b, th, r, g);
  default:
    return 0;
  }
}

void atom__tso_build_free(graph_builder *b) {
  atom__mem *m = b->c->mem;
  for (size_t i = 0; b->th && i < b->nth; i++) {
    atom__tso_buffer_free(&b->th[i].bt, m);
    atom__mem_free(m, b->th[i].bv, b->th[i].bv_cap * sizeof *b->th[i].bv);
    id_list_free(&b->th[i].rb, m);
    id_list_free(&b->th[i].pend, m);
  }
  atom__mem_free(m, b->th, b->nth * sizeof *b->th);
  if (b->var)
    for (size_t i = 0; i < b->T->nvar; i++) {
      atom__mem_free(m, b->var[i].rd.p, b->var[i].rd.cap * sizeof(builder_pair));
      atom__mem_free(m, b->var[i].st.p, b->var[i].st.cap * sizeof(builder_pair));
    }
  atom__mem_free(m, b->var, b->nvar_cap * sizeof *b->var);
  atom__mem_free(m, b->rel, b->nlk * sizeof *b->rel);
  atom__mem_free(m, b->txn_node, b->txn_node_cap * sizeof *b->txn_node);
  atom__dg_destroy(&b->g1);
}

/* Counting sort of @p n keys < @p nk: out[] receives 0..n-1 ordered by key (stable);
 * off[0..nk] the start of each key. */
int atom__tso_csr_build(atom__mem *m, const uint32_t *key, size_t n, size_t nk, uint32_t **off_out,
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
int atom__tso_adj_build(atom__mem *m, const id_list *el, size_t nn, uint32_t **off, uint32_t **adj,
                     size_t *nadj) {
  size_t n = el->n / 2;
  uint32_t *key = n ? atom__mem_alloc(m, n * sizeof *key) : NULL;
  if (n && !key) return ATOM_ENOMEM;
  for (size_t i = 0; i < n; i++) key[i] = el->a[2 * i];
  uint32_t *order = NULL;
  int rc = atom__tso_csr_build(m, key, n, nn, off, &order);
  atom__mem_free(m, key, n * sizeof *key);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) order[i] = el->a[2 * order[i] + 1];
  *adj = order;
  *nadj = n;
  return 0;
}

/* Accesses per variable (trace order) and writes per (variable, thread). */
int atom__tso_graph_index(trace_graph *T, atom__mem *m, uint32_t nthreads) {
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
  if ((rc = atom__tso_csr_build(m, key, na, T->nvar, &T->acc_off, &order))) goto out;
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
  if ((rc = atom__tso_csr_build(m, key, nw, nthreads, &toff, &tord))) goto out;
  for (size_t i = 0; i < nw; i++) tord[i] = ids[tord[i]];
  for (size_t i = 0; i < nw; i++) key[i] = T->ev[tord[i]].target;
  if ((rc = atom__tso_csr_build(m, key, nw, T->nvar, &T->wg_off, &order))) goto out;
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
    const graph_event *w = &T->ev[T->ws[i]];
    if (i == 0 || w->target != T->ev[T->ws[i - 1]].target ||
        w->thread != T->ev[T->ws[i - 1]].thread) {
      while (x <= w->target) goff[x++] = (uint32_t)gi;
      T->wg[gi++] = (graph_write_group){w->thread, (uint32_t)i, 0};
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
