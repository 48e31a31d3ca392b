/* Where the search can find a cycle: the strongly connected components of the graph of
 * directed edges and links, and which of them a cycle can turn back in. */
#include "checkers/tso/tso_internal.h"
#include "support/unionfind.h"

/* Strongly connected components of the directed graph (off, adj) over n vertices (Tarjan,
 * iterative). scc[v] receives the component number. */
static int strong_components(atom__mem *m, size_t n, const uint32_t *off, const uint32_t *adj,
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

/* Merge (p: union-find over nodes) the nodes of each run of accesses that a write's window
 * covers. jmp skips the accesses already linked to their next. @return 1 if the search's bound
 * was reached. */
static int merge_windows(cycle_search *s, uint32_t *p, uint32_t *jmp) {
  const trace_graph *T = s->T;
  for (size_t i = 0; i < s->nn; i++) p[i] = (uint32_t)i;
  for (size_t i = 0; i < T->nacc; i++) jmp[i] = (uint32_t)i;
  for (uint32_t x = 0; x < T->nvar; x++) {
    uint32_t end = T->acc_off[x + 1];
    for (uint32_t i = T->acc_off[x]; i < end; i++) {
      const graph_event *w = &T->ev[T->acc[i]];
      if (w->kind != ATOM_WRITE) continue;
      uint32_t lo = i + 1 + lower_bound(T->acc + i + 1, end - i - 1, w->d);
      if (search_tick(s, 1)) return 1;
      /* link each access of the run to the next, skipping links made before */
      for (uint32_t k = atom__uf_find(jmp, i); k + 1 < lo; k = atom__uf_find(jmp, k + 1)) {
        uint32_t a = atom__uf_find(p, search_node(s, T->acc[k]));
        uint32_t b = atom__uf_find(p, search_node(s, T->acc[k + 1]));
        if (a != b) p[a] = b;
        jmp[k] = k + 1;
        if (search_tick(s, 1)) return 1;
      }
    }
  }
  return 0;
}

/* Number the classes of p in order of their first node: grp[node] = its group. @return the
 * number of groups. */
static size_t number_groups(uint32_t *p, uint32_t *grp, size_t nn) {
  size_t ngrp = 0;
  for (size_t i = 0; i < nn; i++) grp[i] = NONE32;
  for (size_t i = 0; i < nn; i++) {
    uint32_t r = atom__uf_find(p, (uint32_t)i);
    if (grp[r] == NONE32) grp[r] = (uint32_t)ngrp++;
  }
  for (size_t i = 0; i < nn; i++) grp[i] = grp[atom__uf_find(p, (uint32_t)i)];
  return ngrp;
}

/* The accesses with links, in trace order: those with incoming links (il: event, ik: node) and
 * those with outgoing links (ol, ok); and the quotient edges (ql) of a buffered read's links
 * other than U (a buffered read's U links are inside the runs merged). @return 0, 1 if the
 * bound was reached, or ATOM_ENOMEM. */
static int link_ends(cycle_search *s, const uint32_t *grp, id_list *ql, uint32_t *il,
                     uint32_t *ik, size_t *ni, uint32_t *ol, uint32_t *ok, size_t *no) {
  const trace_graph *T = s->T;
  for (size_t i = 0; i < T->nacc; i++) {
    uint32_t e = T->acc[i];
    for (int out = 0; out < 2; out++) {
      s->nb1.n = 0;
      int buffered = T->ev[e].kind == ATOM_READ && (T->ev[e].flags & GRAPH_BUFFERED);
      if (atom__tso_search_links(s, e, out, &s->nb1, LINKS_FIRST_ONLY)) return ATOM_ENOMEM;
      if (s->bound) return 1;
      if (s->nb1.n && out) {
        ol[*no] = e;
        ok[(*no)++] = search_node(s, e);
      }
      if (s->nb1.n && !out) {
        il[*ni] = e;
        ik[(*ni)++] = search_node(s, e);
      }
      if (!buffered) continue;
      s->nb1.n = 0;
      if (atom__tso_search_links(s, e, out, &s->nb1, LINKS_NO_WINDOW)) return ATOM_ENOMEM;
      if (s->bound) return 1;
      for (size_t q = 0; q < s->nb1.n; q++) {
        uint32_t a = grp[search_node(s, e)], b = grp[search_node(s, s->nb1.a[q])];
        if (!out) {
          uint32_t t = a;
          a = b;
          b = t;
        }
        if (a != b && (id_list_push(ql, s->m, a) || id_list_push(ql, s->m, b))) return ATOM_ENOMEM;
      }
    }
  }
  return 0;
}

/* The events of each node named in ev_of (n of them, node_of_ev[i] their nodes), as CSR. */
static int events_by_node(cycle_search *s, const uint32_t *ev_of, const uint32_t *node_of_ev,
                          size_t n, uint32_t **off, uint32_t **evs) {
  uint32_t *order = NULL;
  if (atom__tso_csr_build(s->m, node_of_ev, n, s->nn, off, &order)) return ATOM_ENOMEM;
  for (size_t i = 0; i < n; i++) order[i] = ev_of[order[i]];
  *evs = order;
  return 0;
}

/* comp[]: strongly connected components of the directed edges plus every link. A write's U
 * links join it to a contiguous run of its variable's accesses (its window), so whole runs are
 * merged first (accesses of the write's own thread in the run too: a coarser partition only
 * costs time); a buffered read's other links are added as edges. Also in_off/in_ev and
 * out_off/out_ev: each node's events with incoming and outgoing links. */
int atom__tso_search_components(cycle_search *s) {
  const trace_graph *T = s->T;
  atom__mem *m = s->m;
  size_t nn = s->nn, nn1 = nn ? nn : 1, na1 = T->nacc ? T->nacc : 1;
  int rc = ATOM_ENOMEM;
  uint32_t *p = atom__mem_alloc(m, nn1 * sizeof *p);
  uint32_t *jmp = atom__mem_alloc(m, na1 * sizeof *jmp);
  uint32_t *grp = atom__mem_alloc(m, nn1 * sizeof *grp);
  uint32_t *gscc = NULL, *qoff = NULL, *qadj = NULL, *il = NULL, *ik = NULL, *ol = NULL,
           *ok = NULL;
  id_list ql = {0};
  size_t ngrp = 0, nq = 0, ni = 0, no = 0;
  if (!p || !jmp || !grp) goto out;
  if (merge_windows(s, p, jmp)) goto done;
  ngrp = number_groups(p, grp, nn);
  /* the quotient graph: directed edges, then the links of buffered reads */
  for (size_t u = 0; u < nn; u++)
    for (uint32_t k = s->d_off[u]; k < s->d_off[u + 1]; k++) {
      uint32_t a = grp[u], b = grp[s->d_adj[k]];
      if (a != b && (id_list_push(&ql, m, a) || id_list_push(&ql, m, b))) goto out;
    }
  il = atom__mem_alloc(m, na1 * sizeof *il);
  ik = atom__mem_alloc(m, na1 * sizeof *ik);
  ol = atom__mem_alloc(m, na1 * sizeof *ol);
  ok = atom__mem_alloc(m, na1 * sizeof *ok);
  if (!il || !ik || !ol || !ok) goto out;
  if ((rc = link_ends(s, grp, &ql, il, ik, &ni, ol, ok, &no)) < 0) goto out;
  if (rc == 1) goto done;
  if (search_tick(s, ql.n)) goto done;
  if ((rc = atom__tso_adj_build(m, &ql, ngrp, &qoff, &qadj, &nq))) goto out;
  rc = ATOM_ENOMEM;
  gscc = atom__mem_alloc(m, (ngrp ? ngrp : 1) * sizeof *gscc);
  if (!gscc) goto out;
  if ((rc = strong_components(m, ngrp, qoff, qadj, gscc, &s->ncomp))) goto out;
  rc = ATOM_ENOMEM;
  s->comp = atom__mem_alloc(m, nn1 * sizeof *s->comp);
  if (!s->comp) goto out;
  for (size_t i = 0; i < nn; i++) s->comp[i] = gscc[grp[i]];
  if (events_by_node(s, il, ik, ni, &s->in_off, &s->in_ev)) goto out;
  s->nin = ni;
  if (events_by_node(s, ol, ok, no, &s->out_off, &s->out_ev)) goto out;
  s->nout = no;
  if (atom__tso_csr_build(m, s->comp, nn, s->ncomp, &s->cn_off, &s->cn)) goto out;
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
  id_list_free(&ql, m);
  if (rc) s->err = rc;
  return rc;
}

/* Mark in has[] (bit 2) the components in which a cycle can turn back.
 *
 * A segment of a cycle walks from its entry event a through nodes to its exit event b: inside a
 * node from the event it entered at (a, or the target of an edge from another node) to an event
 * it leaves from (b, or the source of an edge to another node). If in every node of the
 * component each entry event reaches, by forced edges, every target of the node's edges to other
 * nodes and every exit event of the node other than itself, then every segment's entry reaches
 * its exit by forced edges: no segment is free and the component holds no realizable cycle
 * (see search_component). The forced reach is explored up to TURN_REACH events per entry
 * (besides the entry's own successors), and nodes of more than TURN_EVENTS events are taken to
 * turn; both only make the test coarser. */
#define TURN_REACH 32
#define TURN_EVENTS 64
int atom__tso_search_turns(cycle_search *s, unsigned char *has) {
  const trace_graph *T = s->T;
  size_t nev = T->nev, nn = s->nn;
  /* event edges: the event graph's (transactions), or the search's own (single events) */
  const uint32_t *eo = s->node_of ? T->e_off : s->d_off, *ea = s->node_of ? T->e_adj : s->d_adj;
  unsigned char *mark = atom__mem_calloc(s->m, nev + 1, 1); /* 1: entry, 2: exit by a link */
  uint32_t *noff = NULL, *nevs = NULL;
  int rc = ATOM_ENOMEM;
  if (!mark) goto out;
  if (s->node_of) {
    if (atom__tso_csr_build(s->m, s->node_of, nev, nn, &noff, &nevs)) goto out;
  }
  for (size_t i = 0; i < s->nin; i++) mark[s->in_ev[i]] |= 1;
  for (size_t i = 0; i < s->nout; i++) mark[s->out_ev[i]] |= 2;
  for (uint32_t u = 0; u < nev; u++)
    for (uint32_t k = eo[u]; k < eo[u + 1]; k++) {
      uint32_t v = ea[k], nu = search_node(s, u), nv = search_node(s, v);
      if (nu != nv && s->comp[nu] == s->comp[nv]) mark[v] |= 1;
    }
  for (uint32_t x = 0; x < nev; x++) {
    uint32_t nx = search_node(s, x), c = s->comp[nx];
    if (!(mark[x] & 1) || (has[c] & 2)) continue;
    uint32_t first = s->node_of ? noff[nx] : x, end = s->node_of ? noff[nx + 1] : x + 1;
    if (end - first > TURN_EVENTS) {
      has[c] |= 2;
      continue;
    }
    atom__tso_search_forced_reach(s, x, c, TURN_REACH);
    int turns = 0;
    for (uint32_t i = first; i < end && !turns; i++) {
      uint32_t y = s->node_of ? nevs[i] : i;
      if ((mark[y] & 2) && y != x && s->estamp[y] != s->ecur) turns = 1;
      for (uint32_t k = eo[y]; k < eo[y + 1] && !turns; k++) {
        uint32_t v = ea[k], nv = search_node(s, v);
        if (nv != nx && s->comp[nv] == c && s->estamp[v] != s->ecur) turns = 1;
      }
    }
    if (turns) has[c] |= 2;
    if (search_tick(s, end - first)) break;
  }
  rc = 0;
out:
  atom__mem_free(s->m, mark, nev + 1);
  atom__mem_free(s->m, noff, (nn + 1) * sizeof *noff);
  atom__mem_free(s->m, nevs, nev * sizeof *nevs);
  return rc;
}

