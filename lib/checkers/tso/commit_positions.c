/* Commit-position feasibility: the constraints that a set of links puts on where each write is
 * committed, and whether some placement satisfies them all (with FIFO order per thread and each
 * commit inside its window). */
#include "checkers/tso/tso_internal.h"

/* ---- constraints on commit positions ---- */

static int commit_pos_push(cycle_search *s, uint32_t type, uint32_t w, uint32_t v) {
  if (s->ncons >= SEARCH_MAX_CONSTRAINTS) return -1;
  s->cons[s->ncons++] = (commit_pos_constraint){type, w, v};
  return 0;
}

/* The constraints of link b -> a. @return 0, or -1 if there is no room (treated as a cutoff). */
static int commit_pos_link(cycle_search *s, uint32_t b, uint32_t a) {
  const trace_graph *T = s->T;
  const graph_event *eb = &T->ev[b], *ea = &T->ev[a];
  int rc = 0;
  if (eb->kind == ATOM_WRITE && ea->kind == ATOM_WRITE) {
    rc = commit_pos_push(s, COMMIT_BEFORE_COMMIT, b, a);
  } else if (eb->kind == ATOM_WRITE) { /* c(b) before the read a, served from memory */
    rc = commit_pos_push(s, COMMIT_BEFORE_EVENT, b, a);
    if (!rc && (ea->flags & GRAPH_BUFFERED))
      rc = commit_pos_push(s, COMMIT_BEFORE_EVENT, ea->wr, a);
  } else { /* the read b before c(a), b served from memory */
    if (b > a) rc = commit_pos_push(s, COMMIT_AFTER_EVENT, a, b);
    if (!rc && (eb->flags & GRAPH_BUFFERED))
      rc = commit_pos_push(s, COMMIT_BEFORE_EVENT, eb->wr, b);
  }
  return rc;
}

/* Can the commits be placed to satisfy s->cons? Each commit c(w) lies after w, before w's
 * drain, in FIFO order with the other commits of its thread; positions are reals between the
 * trace's events, so the bounds and the precedences (acyclic) must leave each an open gap. */
static int commit_pos_feasible(cycle_search *s) {
  uint32_t w[2 * SEARCH_MAX_CONSTRAINTS];
  uint32_t lo[2 * SEARCH_MAX_CONSTRAINTS], hi[2 * SEARCH_MAX_CONSTRAINTS];
  uint32_t pa[3 * SEARCH_MAX_CONSTRAINTS], pb[3 * SEARCH_MAX_CONSTRAINTS],
      indeg[2 * SEARCH_MAX_CONSTRAINTS], ord[2 * SEARCH_MAX_CONSTRAINTS];
  size_t n = 0, np = 0;
  const trace_graph *T = s->T;
  search_tick(s, s->ncons);
  for (size_t i = 0; i < s->ncons; i++) {
    uint32_t ids[2] = {s->cons[i].w, s->cons[i].v};
    for (int k = 0; k < (s->cons[i].type == COMMIT_BEFORE_COMMIT ? 2 : 1); k++) {
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
    const commit_pos_constraint *k = &s->cons[i];
    size_t a = 0, b = 0;
    while (w[a] != k->w) a++;
    if (k->type == COMMIT_BEFORE_EVENT && k->v < hi[a]) hi[a] = k->v;
    if (k->type == COMMIT_AFTER_EVENT && k->v > lo[a]) lo[a] = k->v;
    if (k->type == COMMIT_BEFORE_COMMIT) {
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
int atom__tso_commit_pos_try_link(cycle_search *s, uint32_t b, uint32_t a) {
  size_t mark = s->ncons;
  if (commit_pos_link(s, b, a) || !commit_pos_feasible(s)) {
    if (s->ncons >= SEARCH_MAX_CONSTRAINTS) s->cutoff = 1;
    s->ncons = mark;
    return 0;
  }
  return 1;
}
