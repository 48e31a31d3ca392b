/* The search of 002 §6.2 for cycles through undirected edges (the idea is told in
 * tso_internal.h above struct cycle_search): the links of an access, the depth-first extension
 * of a cycle segment by segment, the passes over one component, and the run over all. */
#include "checkers/tso/tso_internal.h"

/* The links of access v: with @p out, the events a of links v -> a; else the events b of
 * links b -> v. Appended to @p res; @p flags: LINKS_FIRST_ONLY, LINKS_NO_WINDOW. */
int atom__tso_search_links(cycle_search *s, uint32_t v, int out, id_list *res, int flags) {
  int first_only = flags & LINKS_FIRST_ONLY;
  const trace_graph *T = s->T;
  const graph_event *e = &T->ev[v];
  if (e->kind != ATOM_READ && e->kind != ATOM_WRITE) return 0;
  uint32_t x = e->target;
  const uint32_t *acc = T->acc + T->acc_off[x];
  uint32_t nacc = T->acc_off[x + 1] - T->acc_off[x];
  const graph_write_group *own = NULL;
#define LINKS_ADD(ev_)                                                  \
  do {                                                               \
    if (!search_in_window(s, (ev_))) break;                              \
    if (id_list_push(res, s->m, (ev_))) return s->err = ATOM_ENOMEM;    \
    if (first_only) return 0;                                        \
  } while (0)
  for (uint32_t gi = T->wg_off[x]; gi < T->wg_off[x + 1]; gi++) {
    const graph_write_group *g = &T->wg[gi];
    const uint32_t *w = T->ws + g->start;
    if (search_tick(s, 1)) return s->err;
    if (g->thread == e->thread) {
      own = g;
      continue;
    }
    uint32_t k = lower_bound(w, g->len, v); /* writes of g before v */
    /* U: writes of g still in their window at v */
    for (uint32_t i = k; !(flags & LINKS_NO_WINDOW) && i-- > 0;) {
      if (T->ev[w[i]].d <= v || w[i] < s->lo) break;
      if (search_tick(s, 1)) return s->err;
      LINKS_ADD(w[i]);
    }
    if (e->kind == ATOM_READ && (e->flags & GRAPH_BUFFERED)) {
      if (out && k < g->len) LINKS_ADD(w[k]); /* r -> the first later write of g */
      if (!out) {                          /* the last write of g committed before r */
        uint32_t lo = 0, hi = g->len;
        while (lo < hi) {
          uint32_t mid = lo + (hi - lo) / 2;
          if (T->ev[w[mid]].d < v) lo = mid + 1;
          else hi = mid;
        }
        if (lo > 0) LINKS_ADD(w[lo - 1]);
      }
    }
  }
  if (e->kind != ATOM_WRITE) return 0;
  /* U: later accesses inside v's window */
  uint32_t ai = T->acc_idx[v] - T->acc_off[x];
  for (uint32_t i = ai + 1; i < nacc && acc[i] < e->d && acc[i] <= s->hi;) {
    if (search_tick(s, 1)) return s->err;
    if (T->ev[acc[i]].thread == e->thread) { /* skip the thread's own accesses at once */
      i = T->acc_other[T->acc_off[x] + i] - T->acc_off[x];
      continue;
    }
    LINKS_ADD(acc[i]);
    i++;
  }
  if (!own) return 0;
  const uint32_t *w = T->ws + own->start;
  uint32_t k = lower_bound(w, own->len, v); /* w[k] == v */
  if (out) {
    /* v -> buffered reads of other threads for which v is the last write of its thread
     * committed before them */
    uint32_t dv = e->d, d2 = k + 1 < own->len ? T->ev[w[k + 1]].d : NONE32;
    if (dv == NONE32 || d2 <= dv) return 0;
    for (uint32_t i = lower_bound(acc, nacc, dv); i < nacc && acc[i] < d2 && acc[i] <= s->hi; i++) {
      if (search_tick(s, 1)) return s->err;
      const graph_event *r = &T->ev[acc[i]];
      if (r->thread != e->thread && r->kind == ATOM_READ && (r->flags & GRAPH_BUFFERED))
        LINKS_ADD(acc[i]);
    }
  } else {
    /* buffered reads of other threads for which v is the first later write of its thread */
    uint32_t prev = k > 0 ? w[k - 1] : NONE32;
    for (uint32_t i = ai; i-- > 0 && (prev == NONE32 || acc[i] > prev) && acc[i] >= s->lo;) {
      if (search_tick(s, 1)) return s->err;
      const graph_event *r = &T->ev[acc[i]];
      if (r->thread != e->thread && r->kind == ATOM_READ && (r->flags & GRAPH_BUFFERED))
        LINKS_ADD(acc[i]);
    }
  }
#undef LINKS_ADD
  return 0;
}

/* ---- the search in one component ---- */

/* The nodes of the component reachable from local l by directed edges (itself included). */
static uint64_t *search_row(cycle_search *s, uint32_t l) {
  if (s->row[l]) return s->row[l];
  size_t bytes = s->words * sizeof(uint64_t), zeroed = 0;
  uint64_t *r = NULL;
  if (s->local && s->npool) {
    r = s->pool[--s->npool];
  } else {
    if (s->row_bytes + bytes > SEARCH_ROW_BUDGET) {
      s->bound = 1;
      return NULL;
    }
    r = atom__mem_calloc(s->m, s->words, sizeof *r);
    if (!r) {
      s->err = ATOM_ENOMEM;
      return NULL;
    }
    s->row_bytes += bytes;
    zeroed = s->words;
  }
  if (s->local && id_list_push(&s->rows_made, s->m, l)) {
    atom__mem_free(s->m, r, bytes);
    s->row_bytes -= bytes;
    s->err = ATOM_ENOMEM;
    return NULL;
  }
  s->row[l] = r;
  size_t qh = 0, qt = 0;
  uint32_t lo = l, hi = l;
  bit_set(r, l);
  s->queue[qt++] = l;
  while (qh < qt) {
    uint32_t u = s->cnodes[s->queue[qh++]];
    for (uint32_t k = s->d_off[u]; k < s->d_off[u + 1]; k++) {
      uint32_t v = s->d_adj[k];
      if (s->comp[v] != s->cur || (s->local && !search_in_window(s, s->npos[v]))) continue;
      uint32_t lv = s->loc[v];
      if (!bit_test(r, lv)) {
        bit_set(r, lv);
        s->queue[qt++] = lv;
        if (lv < lo) lo = lv;
        if (lv > hi) hi = lv;
      }
    }
  }
  s->rlo[l] = lo / 64;
  s->rhi[l] = hi / 64 + 1;
  search_tick(s, zeroed + qt);
  return r;
}

/* Mark (estamp == ecur) the events of component comp that a reaches by forced edges, a itself
 * included, inside the window. Beyond a's own successors at most @p limit events are marked. */
void atom__tso_search_forced_reach(cycle_search *s, uint32_t a, uint32_t comp, size_t limit) {
  const trace_graph *T = s->T;
  if (++s->ecur == 0) {
    memset(s->estamp, 0, (T->nev + 1) * sizeof *s->estamp);
    s->ecur = 1;
  }
  size_t qh = 0, qt = 0;
  s->estamp[a] = s->ecur;
  s->queue[qt++] = a;
  while (qh < qt) {
    uint32_t e = s->queue[qh++];
    for (uint32_t k = T->f_off[e]; k < T->f_off[e + 1] && (e == a || qt < limit); k++) {
      uint32_t f = T->f_adj[k];
      if (s->estamp[f] == s->ecur || s->comp[search_node(s, f)] != comp || !search_in_window(s, f))
        continue;
      s->estamp[f] = s->ecur;
      s->queue[qt++] = f;
    }
  }
  search_tick(s, qt);
}

static int search_level_cand(cycle_search *s, search_level *L) {
  if (L->cand_words >= s->words) return 0;
  uint64_t *n = atom__mem_alloc(s->m, s->words * sizeof *n);
  if (!n) return s->err = ATOM_ENOMEM;
  atom__mem_free(s->m, L->cand, L->cand_words * sizeof *L->cand);
  L->cand = n;
  L->cand_words = s->words;
  return 0;
}

/* Entry j (1-based; seg[j-1].T and .a are set): close the cycle into a1, or extend it. */
static int search_extend(cycle_search *s, size_t j, size_t depth) {
  if (search_tick(s, 1)) return 0;
  search_segment *sg = &s->seg[j - 1];
  uint64_t *rj = search_row(s, sg->T);
  if (!rj) return 0;
  for (size_t i = 0; i < s->nb1.n; i++) {
    uint32_t b = s->nb1.a[i], nb = search_node(s, b);
    if (s->comp[nb] != s->cur) continue;
    uint32_t S = s->loc[nb];
    if (!bit_test(rj, S)) continue;
    int ok = 1;
    for (size_t l = 0; l + 1 < j && ok; l++) ok = !bit_test(s->row[s->seg[l].T], S);
    if (ok && atom__tso_commit_pos_try_link(s, b, s->a1)) {
      sg->S = S;
      sg->b = b;
      s->found = j;
      return 1;
    }
  }
  if (j >= depth || j >= SEARCH_MAX_DEPTH) {
    s->cutoff = 1;
    return 0;
  }
  search_level *L = &s->lv[j];
  if (search_level_cand(s, L)) return 0;
  size_t wlo = s->rlo[sg->T], whi = s->rhi[sg->T];
  for (size_t w = wlo; w < whi; w++) {
    uint64_t c = rj[w] & s->hasout[w];
    for (size_t l = 0; l + 1 < j; l++) c &= ~s->row[s->seg[l].T][w];
    L->cand[w] = c;
  }
  search_tick(s, whi - wlo);
  for (size_t w = wlo; w < whi; w++) {
    for (uint64_t c = L->cand[w]; c; c &= c - 1) {
      uint32_t S = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(c));
      uint32_t node = s->cnodes[S];
      for (uint32_t k = s->out_off[node]; k < s->out_off[node + 1]; k++) {
        uint32_t b = s->out_ev[k];
        L->nb.n = 0;
        if (atom__tso_search_links(s, b, 1, &L->nb, 0) || s->bound) return 0;
        for (size_t i = 0; i < L->nb.n; i++) {
          uint32_t a = L->nb.a[i], na = search_node(s, a);
          if (a == s->a1 || s->comp[na] != s->cur) continue; /* closing: done above */
          uint32_t Tn = s->loc[na];
          int ok = 1;
          for (size_t l = 0; l < j && ok; l++) ok = !bit_test(s->row[s->seg[l].T], Tn);
          if (!ok) continue;
          uint64_t *rt = search_row(s, Tn);
          if (!rt) return 0;
          ok = !bit_test(rt, S);
          for (size_t l = 0; l + 1 < j && ok; l++) ok = !bit_test(rt, s->seg[l].S);
          if (!ok) continue;
          size_t mark = s->ncons;
          if (!atom__tso_commit_pos_try_link(s, b, a)) continue;
          sg->S = S;
          sg->b = b;
          s->seg[j] = (search_segment){Tn, a, 0, 0};
          if (search_extend(s, j + 1, depth)) return 1;
          s->ncons = mark;
          if (s->bound || s->err) return 0;
        }
      }
    }
  }
  return 0;
}

static void search_pool_free(cycle_search *s) {
  for (size_t i = 0; i < s->npool; i++)
    atom__mem_free(s->m, s->pool[i], s->words * sizeof(uint64_t));
  atom__mem_free(s->m, s->pool, s->pool_cap * sizeof *s->pool);
  s->row_bytes -= s->npool * s->words * sizeof(uint64_t);
  s->pool = NULL;
  s->npool = s->pool_cap = 0;
}

static void search_component_free(cycle_search *s) {
  if (s->row)
    for (size_t i = 0; i < s->ncn; i++)
      atom__mem_free(s->m, s->row[i], s->words * sizeof(uint64_t));
  atom__mem_free(s->m, s->row, s->ncn * sizeof *s->row);
  atom__mem_free(s->m, s->hasout, s->words * sizeof *s->hasout);
  search_pool_free(s);
  atom__mem_free(s->m, s->rlo, s->ncn * sizeof *s->rlo);
  atom__mem_free(s->m, s->rhi, s->ncn * sizeof *s->rhi);
  s->row = NULL;
  s->hasout = NULL;
  s->rlo = s->rhi = NULL;
  s->row_bytes = 0;
}

/* Local pass: the rows computed since the last start node, cleared, back into the pool. */
static void search_rows_recycle(cycle_search *s) {
  for (size_t k = 0; k < s->rows_made.n; k++) {
    uint32_t l = s->rows_made.a[k];
    uint64_t *r = s->row[l];
    s->row[l] = NULL;
    memset(r + s->rlo[l], 0, (s->rhi[l] - s->rlo[l]) * sizeof *r);
    search_tick(s, s->rhi[l] - s->rlo[l]);
    if (s->npool == s->pool_cap && ATOM__GROW(s->m, s->pool, s->pool_cap, s->npool + 1)) {
      atom__mem_free(s->m, r, s->words * sizeof *r);
      s->row_bytes -= s->words * sizeof *r;
      continue;
    }
    s->pool[s->npool++] = r;
  }
  s->rows_made.n = 0;
}

/* A local pass moves to start node i: the window around it, and no rows of the last one. */
static void search_local_start(cycle_search *s, uint32_t i, uint32_t span) {
  uint32_t p = s->npos[s->cnodes[i]];
  s->lo = p > span ? p - span : 0;
  s->hi = p < NONE32 - span ? p + span : NONE32 - 1;
  search_rows_recycle(s);
}

/* One pass over component s->cur: cycles of 1, 2, ... segments from every start (within the
 * window of each start node when s->local, span @p span). @return 1 when a cycle was found. */
static int search_pass(cycle_search *s, uint32_t span) {
  int found = 0;
  for (size_t depth = 1; depth <= SEARCH_MAX_DEPTH && !found; depth++) {
    s->cutoff = 0;
    for (uint32_t i = 0; i < s->ncn && !found; i++) {
      uint32_t node = s->cnodes[i];
      if (s->in_off[node + 1] == s->in_off[node]) continue;
      if (s->local) search_local_start(s, i, span);
      uint64_t *r1 = search_row(s, i);
      if (!r1) return 0;
      for (uint32_t k = s->in_off[node]; k < s->in_off[node + 1] && !found; k++) {
        uint32_t a1 = s->in_ev[k];
        int have_nb1 = 0; /* the links into a1, listed at the first free pair */
        s->a1 = a1;
        atom__tso_search_forced_reach(s, a1, s->cur, SIZE_MAX);
        if (s->bound) return 0;
        /* a free first segment: a1 ... b1, a1 not ordered before b1 by forced edges */
        for (size_t w = s->rlo[i]; w < s->rhi[i] && !found; w++) {
          for (uint64_t cw = r1[w] & s->hasout[w]; cw && !found; cw &= cw - 1) {
            uint32_t S = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(cw));
            uint32_t sn = s->cnodes[S];
            for (uint32_t kb = s->out_off[sn]; kb < s->out_off[sn + 1] && !found; kb++) {
              uint32_t b1 = s->out_ev[kb];
              if (search_tick(s, 1)) return 0;
              if (s->estamp[b1] == s->ecur) continue;
              if (!have_nb1) {
                s->nb1.n = 0;
                if (atom__tso_search_links(s, a1, 0, &s->nb1, 0) || s->bound) return 0;
                if (++s->ncur == 0) {
                  memset(s->nstamp, 0, (s->T->nev + 1) * sizeof *s->nstamp);
                  s->ncur = 1;
                }
                for (size_t q = 0; q < s->nb1.n; q++) s->nstamp[s->nb1.a[q]] = s->ncur;
                have_nb1 = 1;
              }
              s->seg[0] = (search_segment){i, a1, S, b1};
              s->ncons = 0;
              if (s->nstamp[b1] == s->ncur &&
                  atom__tso_commit_pos_try_link(s, b1, a1)) { /* b1 -> a1 */
                s->found = 1;
                found = 1;
                break;
              }
              if (depth < 2) {
                s->cutoff = 1;
                continue;
              }
              search_level *L = &s->lv[0];
              L->nb.n = 0;
              if (atom__tso_search_links(s, b1, 1, &L->nb, 0) || s->bound) return 0;
              for (size_t q = 0; q < L->nb.n && !found; q++) {
                uint32_t a2 = L->nb.a[q], n2 = search_node(s, a2);
                if (a2 == a1 || s->comp[n2] != s->cur) continue;
                uint32_t T2 = s->loc[n2];
                if (bit_test(r1, T2)) continue;
                uint64_t *r2 = search_row(s, T2);
                if (!r2) return 0;
                if (bit_test(r2, S)) continue;
                s->ncons = 0;
                if (!atom__tso_commit_pos_try_link(s, b1, a2)) continue;
                s->seg[1] = (search_segment){T2, a2, 0, 0};
                found = search_extend(s, 2, depth);
                if (s->bound || s->err) return 0;
              }
            }
          }
        }
      }
    }
    if (!s->cutoff) break;
    if (depth == SEARCH_MAX_DEPTH && !found) s->bound = 1;
  }
  return found;
}

/* Search component c: @return 1 when a cycle was found (s->seg, s->found).
 *
 * Local passes first: with spans 4, 64 and 1 024 (while the span is short of the component), the
 * search around each start node looks only at events at most a span away, with an eighth of the
 * remaining max_work each. Cycles are usually local, and a local pass costs about the span per
 * start instead of the whole component. A local pass may miss cycles, never invents one (every
 * cycle is still checked against the commit-position constraints; windows only drop links and
 * shorten the reachability used for pruning). Then the full pass, which decides. */
static int search_component(cycle_search *s, uint32_t c) {
  static const uint32_t spans[] = {4, 64, 1024};
  s->cur = c;
  s->cnodes = s->cn + s->cn_off[c];
  s->ncn = s->cn_off[c + 1] - s->cn_off[c];
  s->words = (s->ncn + 63) / 64;
  for (size_t i = 0; i < s->ncn; i++) s->loc[s->cnodes[i]] = (uint32_t)i;
  s->row = atom__mem_calloc(s->m, s->ncn, sizeof *s->row);
  s->hasout = atom__mem_calloc(s->m, s->words, sizeof *s->hasout);
  s->rlo = atom__mem_alloc(s->m, s->ncn * sizeof *s->rlo);
  s->rhi = atom__mem_alloc(s->m, s->ncn * sizeof *s->rhi);
  if (!s->row || !s->hasout || !s->rlo || !s->rhi || search_level_cand(s, &s->lv[0])) {
    s->err = ATOM_ENOMEM;
    return 0;
  }
  for (size_t i = 0; i < s->ncn; i++)
    if (s->out_off[s->cnodes[i] + 1] > s->out_off[s->cnodes[i]]) bit_set(s->hasout, (uint32_t)i);
  int found = 0;
  uint64_t max_work = s->max_work;
  uint32_t first = NONE32, last = 0; /* the component's extent in the trace */
  for (size_t i = 0; i < s->ncn; i++) {
    uint32_t p = s->npos[s->cnodes[i]];
    if (p == NONE32) continue;
    if (p < first) first = p;
    if (p > last) last = p;
  }
  for (size_t p = 0; p < sizeof spans / sizeof *spans && !found; p++) {
    /* a window that always covers the component is the full pass */
    if (first == NONE32 || last - first <= spans[p] || s->work >= max_work) break;
    s->local = 1;
    s->max_work = s->work + (max_work - s->work) / 8;
    found = search_pass(s, spans[p]);
    search_rows_recycle(s);
    search_pool_free(s);
    s->local = 0;
    s->lo = 0;
    s->hi = NONE32;
    s->max_work = max_work;
    if (s->err) return 0;
    if (s->work <= max_work) s->bound = 0; /* the pass's share, or the row budget: go on */
  }
  if (!found && !s->bound) found = search_pass(s, 0);
  return found;
}


/* Run the search over nn nodes with directed edges (d_off, d_adj); report what it finds. */
int atom__tso_search_run(tso_checker *c, const trace_graph *T, size_t nn, const uint32_t *node_of,
                         const uint32_t *d_off, const uint32_t *d_adj, int robust) {
  cycle_search s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.m = c->mem;
  s.T = T;
  s.nn = nn;
  s.node_of = node_of;
  s.d_off = d_off;
  s.d_adj = d_adj;
  s.max_work = c->max_work;
  size_t nq = (T->nev > nn ? T->nev : nn) + 1, nev1 = T->nev + 1;
  unsigned char *has = NULL;
  int rc = 0, found = 0;
  s.loc = atom__mem_alloc(s.m, (nn + 1) * sizeof *s.loc);
  s.parent = atom__mem_alloc(s.m, (nn + 1) * sizeof *s.parent);
  s.queue = atom__mem_alloc(s.m, nq * sizeof *s.queue);
  s.estamp = atom__mem_calloc(s.m, nev1, sizeof *s.estamp);
  s.nstamp = atom__mem_calloc(s.m, nev1, sizeof *s.nstamp);
  s.npos = atom__mem_alloc(s.m, (nn + 1) * sizeof *s.npos);
  if (!s.loc || !s.parent || !s.queue || !s.estamp || !s.nstamp || !s.npos) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  s.hi = NONE32;
  for (size_t i = 0; i < nn; i++) s.npos[i] = NONE32;
  for (uint32_t e = T->nev; e-- > 0;) s.npos[search_node(&s, e)] = e;
  if ((rc = atom__tso_search_components(&s))) goto out;
  if (!s.bound) {
    has = atom__mem_calloc(s.m, s.ncomp + 1, 1);
    if (!has) {
      rc = ATOM_ENOMEM;
      goto out;
    }
    /* has[k] & 1: component k has an event with an incoming link. has[k] & 2: a cycle can turn
     * back in k (atom__tso_search_turns). Without a turn, k holds no realizable cycle. */
    for (size_t i = 0; i < s.nin; i++) has[s.comp[search_node(&s, s.in_ev[i])]] |= 1;
    if ((rc = atom__tso_search_turns(&s, has))) goto out;
    for (uint32_t k = 0; k < s.ncomp && !found && !s.bound && !s.err; k++) {
      if ((k & 63) == 0)
        atom_env_progress(c->env, c->nbuf + (uint64_t)c->nbuf * k / s.ncomp, 2 * (uint64_t)c->nbuf);
      if (has[k] != 3 || s.cn_off[k + 1] - s.cn_off[k] < 2) continue;
      found = search_component(&s, k);
      if (found) rc = atom__tso_report_search_cycle(&s, robust);
      search_component_free(&s);
    }
  }
  if (!rc && s.err) rc = s.err;
  if (!rc && s.bound && !found) rc = atom__tso_report_search_bound(c, robust, s.work);
out:
  c->work += s.work;
  search_component_free(&s);
  atom__mem_free(s.m, has, s.ncomp + 1);
  atom__mem_free(s.m, s.loc, (nn + 1) * sizeof *s.loc);
  atom__mem_free(s.m, s.parent, (nn + 1) * sizeof *s.parent);
  atom__mem_free(s.m, s.queue, nq * sizeof *s.queue);
  atom__mem_free(s.m, s.estamp, nev1 * sizeof *s.estamp);
  atom__mem_free(s.m, s.nstamp, nev1 * sizeof *s.nstamp);
  atom__mem_free(s.m, s.comp, (nn ? nn : 1) * sizeof *s.comp);
  atom__mem_free(s.m, s.in_off, (nn + 1) * sizeof *s.in_off);
  atom__mem_free(s.m, s.in_ev, s.nin * sizeof *s.in_ev);
  atom__mem_free(s.m, s.out_off, (nn + 1) * sizeof *s.out_off);
  atom__mem_free(s.m, s.out_ev, s.nout * sizeof *s.out_ev);
  atom__mem_free(s.m, s.cn_off, (s.ncomp + 1) * sizeof *s.cn_off);
  atom__mem_free(s.m, s.cn, nn * sizeof *s.cn);
  id_list_free(&s.nb1, s.m);
  id_list_free(&s.rows_made, s.m);
  atom__mem_free(s.m, s.npos, (nn + 1) * sizeof *s.npos);
  for (size_t i = 0; i < SEARCH_MAX_DEPTH; i++) {
    atom__mem_free(s.m, s.lv[i].cand, s.lv[i].cand_words * sizeof *s.lv[i].cand);
    id_list_free(&s.lv[i].nb, s.m);
  }
  return rc;
}
