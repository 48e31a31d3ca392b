/* mode=trace at finish: build the event graph; phase 1 (a cycle of directed edges); then the
 * search through undirected edges (cycle_search.c), or with fenced=yes 002 §6.3; robust=yes
 * runs the search on single events. */
#include <inttypes.h>

#include "checkers/tso/tso_internal.h"

/* ---- the trace analysis at finish ---- */

/* Whether a cycle of transactions can turn back anywhere: some transaction that is not unary,
 * or some edge that is not forced. A trace without either (no BEGIN/END, no fork or join right
 * after a write or a buffered read) is TSO-serializable. This is atom__tso_search_turns for the
 * whole trace at once, without building the components first. */
static int graph_may_turn(const trace_graph *T) {
  if (T->nf < T->ne) return 1;
  for (size_t i = 0; i < T->ntx; i++)
    if (!T->tx[i].unary) return 1;
  return 0;
}

/* The builder's state for the buffered trace (T and b zeroed by the caller). */
static int build_start(tso_checker *c, trace_graph *T, graph_builder *b) {
  atom__mem *m = c->mem;
  b->c = c;
  b->T = T;
  T->nvar = atom_env_count(c->env, ATOM_SPACE_VAR);
  b->nth = atom_env_count(c->env, ATOM_SPACE_THREAD);
  b->nlk = atom_env_count(c->env, ATOM_SPACE_LOCK);
  b->phase1 = !c->fenced;
  atom__dg_init(&b->g1, m, sizeof(uint32_t));
  atom__dg_set_edge_payload(&b->g1, 2 * sizeof(uint32_t));
  size_t ng = 0;
  for (size_t i = 0; i < c->nbuf; i++)
    if (c->buf[i].kind != ATOM_BEGIN && c->buf[i].kind != ATOM_END &&
        c->buf[i].kind != ATOM_COMMIT)
      ng++;
  if (!b->nth) b->nth = 1;
  if (!b->nlk) b->nlk = 1;
  b->nvar_cap = T->nvar ? T->nvar : 1;
  T->ev_cap = ng ? ng : 1;
  b->th = atom__mem_calloc(m, b->nth, sizeof *b->th);
  b->var = atom__mem_calloc(m, b->nvar_cap, sizeof *b->var);
  b->rel = atom__mem_alloc(m, b->nlk * sizeof *b->rel);
  T->ev = atom__mem_alloc(m, T->ev_cap * sizeof *T->ev);
  if (!b->th || !b->var || !b->rel || !T->ev) return ATOM_ENOMEM;
  for (size_t i = 0; i < b->nth; i++) b->th[i].txn = b->th[i].nstar = b->th[i].sstar = NONE32;
  for (size_t i = 0; i < b->nlk; i++) b->rel[i] = NONE32;
  return 0;
}

/* The event graph of the buffered events, in one pass; phase 1 reports cycles of directed
 * edges as it goes. */
static int build_graph(tso_checker *c, trace_graph *T, graph_builder *b) {
  int rc;
  for (size_t i = 0; i < c->nbuf; i++) {
    const atom_ev *r = &c->buf[i];
    builder_thread *th = &b->th[r->thread];
    /* progress: building the graph is the first half of the work at finish, the search the
     * second (atom__tso_search_run) */
    if ((i & 4095) == 0) atom_env_progress(c->env, i, 2 * (uint64_t)c->nbuf);
    if (r->kind == ATOM_COMMIT) continue; /* 002 §5: a trace forgets the commits */
    if (r->kind == ATOM_BEGIN) {
      if ((rc = atom__tso_build_new_txn(b, r->thread, 0, r->index, r->loc, &th->txn))) return rc;
      continue;
    }
    if (r->kind == ATOM_END) {
      if (th->txn != NONE32) atom__tso_build_txn_done(b, th->txn);
      th->txn = NONE32;
      continue;
    }
    uint32_t g = (uint32_t)T->nev++;
    uint32_t txn = th->txn;
    int unary = txn == NONE32;
    if (unary && (rc = atom__tso_build_new_txn(b, r->thread, 1, r->index, r->loc, &txn)))
      return rc;
    T->ev[g] = (graph_event){r->kind, r->thread, r->target, txn, NONE32, 0, NONE32, 0,
                             r->index, r->loc};
    T->tx[txn].last_kind = r->kind;
    if (r->kind == ATOM_WRITE) T->tx[txn].has_write = 1;
    if ((rc = atom__tso_build_event(b, r, g))) return rc;
    if (unary) atom__tso_build_txn_done(b, txn);
  }
  return 0;
}

/* 002 §6.3 needs transaction-fenced traces: every transaction that writes ends with a drain (a
 * read-only transaction has nothing in the buffer to hide). The error names the thread as the
 * session's labels do (it is an error message, not a report). */
static int check_fenced(tso_checker *c, const trace_graph *T) {
  for (size_t i = 0; i < T->ntx; i++)
    if (T->tx[i].has_write && !is_drain(T->tx[i].last_kind)) {
      char name[64];
      atom_env_label(c->env, ATOM_SPACE_THREAD, T->tx[i].thread, name, sizeof name);
      return atom_env_error(c->env, ATOM_EINVAL,
                            "tso: fenced=yes, but the transaction of thread %s at event %" PRIu64
                            " writes and does not end with a fence or lock operation",
                            name, T->tx[i].begin_index);
    }
  return 0;
}

/* 002 Thm 3: a transaction-fenced program is TSO-serializable iff it is SC-serializable and
 * robust. SC-serializability of the trace: its execution that commits every write at once (for
 * transaction-fenced traces its TSO conflict graph is the SC one). */
static int check_sc_serializable(tso_checker *c) {
  exec_engine sc;
  int rc = 0;
  atom__tso_exec_init(&sc, c->env, c->mem, 0, "SC (every write committed at once)");
  for (size_t i = 0; i < c->nbuf && !rc; i++) {
    const atom_ev *r = &c->buf[i];
    if (r->kind == ATOM_COMMIT) continue;
    rc = atom__tso_exec_event(&sc, r);
    if (!rc && r->kind == ATOM_WRITE) {
      atom_ev cm = {ATOM_COMMIT, r->thread, r->target, 0, r->index, r->loc};
      rc = atom__tso_exec_event(&sc, &cm);
    }
  }
  atom__tso_exec_free(&sc);
  return rc;
}

/* 002 §6.2 on the transaction graph. */
static int search_transactions(tso_checker *c, const trace_graph *T) {
  uint32_t *node_of = atom__mem_alloc(c->mem, (T->nev ? T->nev : 1) * sizeof *node_of);
  if (!node_of) return ATOM_ENOMEM;
  for (size_t i = 0; i < T->nev; i++) node_of[i] = T->ev[i].txn;
  int rc = atom__tso_search_run(c, T, T->ntx, node_of, T->d_off, T->d_adj, 0);
  atom__mem_free(c->mem, node_of, (T->nev ? T->nev : 1) * sizeof *node_of);
  return rc;
}

/* Robustness (002 §4.2): the same search on single events, with program order kept whole
 * (directed edges: the event graph's plus each event to the next of its thread). */
static int search_robustness(tso_checker *c, const trace_graph *T, size_t nth) {
  atom__mem *m = c->mem;
  uint32_t *dpo_off = NULL, *dpo_adj = NULL;
  size_t ndpo = 0;
  id_list pl = {0};
  uint32_t *last = atom__mem_alloc(m, nth * sizeof *last);
  if (!last) return ATOM_ENOMEM;
  for (size_t i = 0; i < nth; i++) last[i] = NONE32;
  int rc = 0;
  for (uint32_t e = 0; e < T->nev && !rc; e++) {
    for (uint32_t k = T->e_off[e]; k < T->e_off[e + 1] && !rc; k++)
      rc = id_list_push(&pl, m, e) || id_list_push(&pl, m, T->e_adj[k]);
    uint32_t t = T->ev[e].thread;
    if (!rc && last[t] != NONE32) rc = id_list_push(&pl, m, last[t]) || id_list_push(&pl, m, e);
    last[t] = e;
  }
  atom__mem_free(m, last, nth * sizeof *last);
  if (rc || atom__tso_adj_build(m, &pl, T->nev, &dpo_off, &dpo_adj, &ndpo)) rc = ATOM_ENOMEM;
  id_list_free(&pl, m);
  if (!rc) rc = atom__tso_search_run(c, T, T->nev, NULL, dpo_off, dpo_adj, 1);
  atom__mem_free(m, dpo_off, (T->nev + 1) * sizeof *dpo_off);
  atom__mem_free(m, dpo_adj, ndpo * sizeof *dpo_adj);
  return rc;
}

int atom__tso_trace_analyse(tso_checker *c) {
  atom__mem *m = c->mem;
  trace_graph T;
  graph_builder b;
  memset(&T, 0, sizeof T);
  memset(&b, 0, sizeof b);
  int rc;
  if ((rc = build_start(c, &T, &b)) || (rc = build_graph(c, &T, &b))) goto out;
  if (c->fenced && (rc = check_fenced(c, &T))) goto out;
  if (!c->fenced && b.cycles && !c->robust) goto out; /* phase 1 found violations: decided */
  if ((rc = atom__tso_adj_build(m, &T.el, T.nev, &T.e_off, &T.e_adj, &T.ne)) ||
      (rc = atom__tso_adj_build(m, &T.fl, T.nev, &T.f_off, &T.f_adj, &T.nf)) ||
      (rc = atom__tso_adj_build(m, &T.dl, T.ntx, &T.d_off, &T.d_adj, &T.nd)) ||
      (rc = atom__tso_graph_index(&T, m, (uint32_t)b.nth)))
    goto out;
  id_list_free(&T.el, m);
  id_list_free(&T.fl, m);
  id_list_free(&T.dl, m);
  if (c->fenced) rc = check_sc_serializable(c);
  else if (!b.cycles && graph_may_turn(&T)) rc = search_transactions(c, &T);
  if (!rc && (c->fenced || c->robust)) rc = search_robustness(c, &T, b.nth);
out:
  atom__tso_build_free(&b);
  atom__tso_graph_free(&T, m);
  return rc;
}
