/* aerodrome, variant=basic: 003 Algorithm 1 as printed (a read clock R_{t,x} per thread and
 * variable, full comparisons, an END that scans every clock). */

#include "checkers/aerodrome/aerodrome_internal.h"

int atom__aero_basic_read(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  avar_basic *vb = &a->vbasic[x];
  if (t >= vb->n_rt) {
    if (ATOM__GROW(a->mem, vb->rtev, vb->rtev_cap, a->n_thr) ||
        ATOM__GROW(a->mem, vb->rtend, vb->rtend_cap, a->n_thr) ||
        ATOM__GROW(a->mem, vb->rt, vb->rt_cap, a->n_thr))
      return ATOM_ENOMEM;
    for (uint32_t u = vb->n_rt; u < a->n_thr; u++) atom__vc_init(&vb->rt[u]);
    a->clocks += a->n_thr - vb->n_rt;
    vb->n_rt = a->n_thr;
  }
  uint32_t len = max_u32(th->c.len, v->w.len);
  if (reserve(a, &th->c, len) || reserve(a, &vb->rt[t], len)) return ATOM_ENOMEM;
  aev me = cur_aev(a, ev);
  if (v->lastw != t) { /* lines 24-25 */
    if (basic_knows(a, &v->w, t)) {
      expl e = atom__aero_ex_snap(a, &a->wlast[x], VAR_ENDS(v, wend), t);
      note(a, atom__aero_report_edge(a, ev, t, &e, &a->wlast[x]));
    }
    srcd sd = {SD_SNAP, 0, &a->wlast[x], NULL, v, ev};
    thread_join(a, t, &v->w, &sd);
  }
  atom__vc_copy(a->mem, &vb->rt[t], &th->c); /* line 26 */
  vb->rtev[t] = me;
  return 0;
}

int atom__aero_basic_write(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  const avar_basic *vb = &a->vbasic[x];
  uint32_t len = max_u32(th->c.len, v->w.len);
  for (uint32_t u = 0; u < vb->n_rt; u++) len = max_u32(len, vb->rt[u].len);
  if (reserve(a, &th->c, len) || var_reserve_w(a, v, len)) return ATOM_ENOMEM;
  aev me = cur_aev(a, ev);
  if (v->lastw != t) { /* lines 28-29 */
    if (basic_knows(a, &v->w, t)) {
      expl e = atom__aero_ex_snap(a, &a->wlast[x], VAR_ENDS(v, wend), t);
      note(a, atom__aero_report_edge(a, ev, t, &e, &a->wlast[x]));
    }
    srcd sd = {SD_SNAP, 0, &a->wlast[x], NULL, v, ev};
    thread_join(a, t, &v->w, &sd);
  }
  for (uint32_t u = 0; u < vb->n_rt; u++) { /* lines 30-31 */
    if (u == t || vb->rt[u].len == 0) continue; /* R_{u,x} = ⊥: u never read x */
    if (basic_knows(a, &vb->rt[u], t)) {
      expl e = atom__aero_ex_snap(a, &vb->rtev[u], &vb->rtend[u], t);
      note(a, atom__aero_report_edge(a, ev, t, &e, &vb->rtev[u]));
    }
    srcd sd = {SD_SNAP, 0, &vb->rtev[u], &vb->rtend[u], NULL, ev};
    thread_join(a, t, &vb->rt[u], &sd);
  }
  atom__vc_copy(a->mem, &v->w, &th->c); /* lines 32-33 */
  v->lastw = t;
  a->wlast[x] = me;
  return 0;
}

int atom__aero_basic_acquire(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  if (k->lastrel == t) return 0; /* line 14 */
  if (reserve(a, &th->c, max_u32(th->c.len, k->l.len))) return ATOM_ENOMEM;
  if (basic_knows(a, &k->l, t)) { /* line 15 */
    expl e = atom__aero_ex_snap(a, &a->rellast[l], &k->lend, t);
    note(a, atom__aero_report_edge(a, ev, t, &e, &a->rellast[l]));
  }
  srcd sd = {SD_SNAP, 0, &a->rellast[l], &k->lend, NULL, ev};
  thread_join(a, t, &k->l, &sd);
  return 0;
}

int atom__aero_basic_release(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  alock *k = &a->lock[l];
  if (atom__vc_copy(a->mem, &k->l, &a->thr[t].c)) return ATOM_ENOMEM; /* line 17 */
  k->lastrel = t;                                                       /* line 18 */
  a->rellast[l] = cur_aev(a, ev);
  return 0;
}

/* The provenance part of basic_end_one: X learns the other open transactions C_t knows. */
static AERO_RARE void basic_end_learn(aero *a, uint32_t t, const atom__vc *x, const aev *store,
                                      ends *e, avar *owner, uint64_t made) {
  athread *th = &a->thr[t];
  ends view; /* W_x's records (a compound literal would end with the if below) */
  if (!e) {
    view = *VAR_ENDS(owner, wend);
    e = &view;
  }
  const atom__vc_t *s = atom__vc_cdata(&th->c);
  expl right = AERO_UNKNOWN;
  int have = 0;
  for (uint32_t i = 0; i < th->c.len; i++) {
    atom__vc_t b = a->open_b[i];
    if (i == t || s[i] < b || atom__vc_get(x, i) >= b) continue;
    if (!have) {
      right = atom__aero_ex_snap(a, store, e, t);
      have = 1;
    }
    pnode *n = atom__aero_pn_end_at(a, i, ends_get(a, &th->prov, i), &right, made);
    atom__aero_ends_put(a, e, i, n);
  }
}

/* X := C_t^▷ ⊑ X ? C_t ⊔ X : X (lines 42, 44, 46); reserve_only = 1 only reserves room (and,
 * for W_x of variable owner, whose records are passed as e = NULL, room for its records: without it they are lost, and a report on
 * them names fewer edges, as anywhere provenance runs short). X is a stored clock (taken at
 * event store, END provenance in e): record how it learns the other open transactions C_t
 * knows. */
static inline int basic_end_one(aero *a, uint32_t t, atom__vc *x, const aev *store, ends *e,
                                avar *owner, int reserve_only, uint64_t made) {
  athread *th = &a->thr[t];
  if (!atom__vc_leq(&th->cb, x)) return 0;
  if (reserve_only) {
    if (owner) (void)vslot_room(a, owner, a->n_thr - 1);
    return owner ? var_reserve_w(a, owner, th->c.len) : reserve(a, x, th->c.len);
  }
  basic_end_learn(a, t, x, store, e, owner, made);
  atom__vc_join(a->mem, x, &th->c, NULL);
  return 0;
}

int atom__aero_basic_end(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  if (!th->active) return 0;
  for (int pass = 0; pass < 2; pass++) {
    int ro = pass == 0; /* first pass: reserve, so the second cannot fail */
    for (uint32_t u = 0; u < a->n_thr; u++) { /* lines 38-40 */
      if (u == t || !atom__vc_leq(&th->cb, &a->thr[u].c)) continue;
      if (ro) {
        if (reserve(a, &a->thr[u].c, th->c.len)) return ATOM_ENOMEM;
        continue;
      }
      if (basic_knows(a, &th->c, u)) note(a, atom__aero_report_end(a, ev, t, u));
      srcd sd = {SD_END, t, NULL, NULL, NULL, ev};
      thread_join(a, u, &th->c, &sd);
    }
    uint64_t at = ev->index;
    for (uint32_t l = 0; l < a->n_lock; l++) /* lines 41-42 */
      if (basic_end_one(a, t, &a->lock[l].l, &a->rellast[l], &a->lock[l].lend, NULL, ro, at))
        return ATOM_ENOMEM;
    for (uint32_t x = 0; x < a->n_var; x++) { /* lines 43-46 */
      avar *v = &a->var[x];
      avar_basic *vb = &a->vbasic[x];
      if (basic_end_one(a, t, &v->w, &a->wlast[x], NULL, v, ro, at))
        return ATOM_ENOMEM;
      for (uint32_t u = 0; u < vb->n_rt; u++)
        if (basic_end_one(a, t, &vb->rt[u], &vb->rtev[u], &vb->rtend[u], NULL, ro, at))
          return ATOM_ENOMEM;
    }
  }
  th->active = 0;
  a->open_b[th->slot] = NO_TXN;
  a->n_active--;
  return 0;
}
