/* aerodrome, variant=optimized (003 §4.3): one read clock R_x and one check-read clock chR_x
 * per variable, component tests, and an END that visits only the clocks that learned of the
 * ending transaction (see "Optimized END" in aerodrome.c). */

#include "checkers/aerodrome/aerodrome_internal.h"
#include "support/multiversion.h"

static atom__vc *reg_clock(aero *a, reg r) {
  switch (r.kind) {
    case REG_W: return &a->var[r.id].w;
    case REG_R: return &a->var[r.id].r;
    default: return &a->lock[r.id].l;
  }
}

/* The learned list of o is full: grow it. 0, or 1 if it cannot (or need not) grow: the
 * transaction then scans everything at its END (overflow), where the list is not read. */
static AERO_RARE int learn_grow(aero *a, athread *o) {
  if (o->overflow) return 1;
  if (ATOM__GROW(a->mem, o->learned, o->cap_learned, o->n_learned + 1)) {
    o->overflow = 1;
    return 1;
  }
  return 0;
}

/* Append r to the learned list of t's open transaction. Never fails: if the list cannot
 * grow, the transaction falls back to the full scan at its END. The overflow test is in the
 * growth path only: a list that failed to grow stays full until the END empties it (an
 * overflow set by the learner list, atom__aero_note_learner, lets appends go on: harmless,
 * the END's scan does not read them). */
static void learn(aero *a, uint32_t t, reg r) {
  athread *o = &a->thr[t];
  if (o->n_learned == o->cap_learned && learn_grow(a, o)) return;
  o->learned[o->n_learned++] = r;
}

/* The walk of register_from over the open transactions of other threads src knows. */
static void register_known(aero *a, athread *src, reg r, const atom__vc *x) {
  size_t k = 0;
  for (size_t i = 0; i < src->n_known; i++) {
    kent e = src->known[i];
    if (!kent_valid(a, e)) continue;
    src->known[k++] = e;
    if (atom__vc_get(x, slot_of(a, e.t)) < a->thr[e.t].b) learn(a, e.t, r);
  }
  src->n_known = k;
}

/* Clock X (about to receive C_u's knowledge) learns the open transactions C_u knows that it
 * did not know: register it with each. Call before the store. u's own open transaction is not
 * in its known list (see on_begin): it is tested first, without a walk. Drops the stale
 * entries of u's list on the way (this runs at every store, so the list stays as short as the
 * set of open transactions u knows). */
static inline void register_from(aero *a, uint32_t u, reg r, const atom__vc *x) {
  athread *src = &a->thr[u];
  if (src->pub && atom__vc_get(x, src->slot) < src->b) learn(a, u, r);
  if (src->n_known) register_known(a, src, r, x);
}

/* R_x learns the open transactions of other threads C_t knows (register_read): record the
 * read and how C_t knew each (003 §4.3: chR_x learns them too, as it learns only from readers
 * other than the transaction's thread). Out of line: most threads know none. */
static AERO_RARE void register_read_known(aero *a, uint32_t t, uint32_t x, const atom_ev *ev) {
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  aev me;
  int have_me = 0;
  size_t k = 0;
  for (size_t i = 0; i < th->n_known; i++) {
    kent e = th->known[i];
    if (!kent_valid(a, e)) continue;
    th->known[k++] = e;
    atom__vc_t b = a->thr[e.t].b;
    uint32_t ks = slot_of(a, e.t);
    int r_learns = atom__vc_get(&v->r, ks) < b;
    int c_learns = atom__vc_get(&v->chr, ks) < b;
    if (r_learns) learn(a, e.t, (reg){REG_R, x});
    if (!r_learns && !c_learns) continue;
    if (!have_me) {
      me = cur_aev(a, ev);
      have_me = 1;
    }
    if (vslot_room(a, v, ks)) continue; /* out of memory: the record is lost */
    vslot *sl = &v->slot[ks];
    pnode *n = ends_get(a, &th->prov, e.t);
    *(r_learns ? &sl->rp : &sl->cp) =
        n ? atom__aero_pn_new(a, PN_HOLD, 0, e.t, n, NULL, NULL, &me, ev->index) : NULL;
    if (r_learns && c_learns) rown_alias(a, v, e.t); /* the same read taught both */
  }
  th->n_known = k;
}

/* register_from for R_x at a read by t (before its joins), and provenance: R_x and chR_x
 * learn the open transactions C_t knows. t's own: R_x learns it from this read (chR_x never
 * does); the others: register_read_known. */
static inline void register_read(aero *a, uint32_t t, uint32_t x, const atom_ev *ev) {
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  if (th->pub && atom__vc_get(&v->r, th->slot) < th->b) {
    learn(a, t, (reg){REG_R, x});
    rown_origin(a, v, t, ev->index, ev->loc);
  }
  if (th->n_known) register_read_known(a, t, x, ev);
}

static AERO_HOT int opt_read(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  int err = publish(a, t); /* R_x ⊔= C_t */
  if (err) return err;
  /* line 24: the last writer's W_x ⊑ C_t already; w_seen: t joined this W_x before;
   * absorbed: W_x is a snapshot of a clock C_t has absorbed since (the join raises nothing) */
  int join_w = v->lastw != t && !(v->w_seen & th->seen_bit);
  if (join_w && absorbed(a, th, v->w_from, v->w_ver)) {
    join_w = 0;
    v->w_seen |= th->seen_bit;
  }
  /* line 26 as §4.3: R_x ⊔= C_t, chR_x ⊔= C_t[0/t]; skip if R_x ⊒ C_t already */
  int store_r = join_w || !(v->r_from == t && v->r_ver == th->ver);
  uint32_t len = th->c.len;
  if (join_w) len = max_u32(len, v->w.len);
  if ((join_w && (reserve(a, &th->c, len) || known_reserve(a, th))) ||
      (store_r && var_reserve_r(a, v, len)))
    return ATOM_ENOMEM;

  if (v->lastw != t) {
    if (knows(a, &v->w, t)) { /* line 25 */
      expl e = atom__aero_ex_snap(a, &a->wlast[x], VAR_ENDS(v, wend), t);
      note(a, atom__aero_report_edge(a, ev, t, &e, &a->wlast[x]));
    }
    if (join_w) {
      srcd sd = {SD_SNAP, 0, &a->wlast[x], NULL, v, ev};
      thread_join(a, t, &v->w, &sd);
      v->w_seen |= th->seen_bit;
      absorb(a, th, v->w_from, v->w_ver);
    }
    v->rd_other = 1;
  }
  if (!(v->r_from == t && v->r_ver == th->ver)) {
    register_read(a, t, x, ev);
    rjoin(v, &th->c, th->slot); /* reserved */
    v->r_from = t;
    v->r_ver = th->ver;
  }
  v->hot = 1;
  return 0;
}

static AERO_HOT int opt_write(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  int err = publish(a, t); /* W_x := C_t */
  if (err) return err;
  int join_w = v->lastw != t && !(v->w_seen & th->seen_bit) &&
               !absorbed(a, th, v->w_from, v->w_ver); /* see opt_read */
  /* lines 30-31: R_x ⊑ C_t if t wrote last and nobody else read since (see avar) */
  int join_r = !(v->lastw == t && !v->rd_other);
  uint32_t len = th->c.len;
  if (join_w) len = max_u32(len, v->w.len);
  if (join_r) len = max_u32(len, v->r.len);
  if (((join_w || join_r) && (reserve(a, &th->c, len) || known_reserve(a, th))) ||
      var_reserve_w(a, v, len))
    return ATOM_ENOMEM;

  if (v->lastw != t) {
    if (knows(a, &v->w, t)) { /* line 29 */
      expl e = atom__aero_ex_snap(a, &a->wlast[x], VAR_ENDS(v, wend), t);
      note(a, atom__aero_report_edge(a, ev, t, &e, &a->wlast[x]));
    }
    if (join_w) {
      srcd sd = {SD_SNAP, 0, &a->wlast[x], NULL, v, ev};
      thread_join(a, t, &v->w, &sd);
    }
  }
  /* lines 30-31 (§4.3): some R_{u,x}, u != t, knows t's transaction iff chR_x(t) >= b_t */
  if (knows(a, &v->chr, t)) {
    expl e = atom__aero_ex_chr(a, v, t);
    note(a, atom__aero_report_edge(a, ev, t, &e, NULL));
  }
  if (join_r) {
    srcd sd = {SD_RREC, 0, NULL, NULL, v, ev};
    thread_join(a, t, &v->r, &sd);
  }
  /* lines 32-33: W_x := C_t, unless W_x is C_t already */
  if (!(v->w_from == t && v->w_ver == th->ver)) {
    register_from(a, t, (reg){REG_W, x}, &v->w);
    xcopy(&v->w, &th->c); /* reserved */
    v->w_from = t;
    v->w_ver = th->ver;
  }
  v->w_seen = th->seen_bit;
  v->lastw = t;
  v->rd_other = 0;
  v->hot = 1;
  a->wlast[x] = cur_aev(a, ev);
  return 0;
}

static AERO_HOT int opt_acquire(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  if (k->lastrel == t || k->lastrel == NIL) return 0; /* line 14 (L_l = ⊥ if never released) */
  int join = !(k->seen & th->seen_bit);
  if (join && absorbed(a, th, k->l_from, k->l_ver)) { /* L_l ⊑ C_t: see opt_read */
    join = 0;
    k->seen |= th->seen_bit;
  }
  if (join && (reserve(a, &th->c, max_u32(th->c.len, k->l.len)) || known_reserve(a, th)))
    return ATOM_ENOMEM;
  if (knows(a, &k->l, t)) { /* line 15 */
    expl e = atom__aero_ex_snap(a, &a->rellast[l], &k->lend, t);
    note(a, atom__aero_report_edge(a, ev, t, &e, &a->rellast[l]));
  }
  if (join) {
    srcd sd = {SD_SNAP, 0, &a->rellast[l], &k->lend, NULL, ev};
    thread_join(a, t, &k->l, &sd);
    k->seen |= th->seen_bit;
    absorb(a, th, k->l_from, k->l_ver);
  }
  return 0;
}

static AERO_HOT int opt_release(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  int err = publish(a, t); /* L_l := C_t */
  if (err) return err;
  if (reserve(a, &k->l, max_u32(th->c.len, a->n_slot))) return ATOM_ENOMEM; /* see nslot_b */
  /* lines 17-18 */
  if (!(k->l_from == t && k->l_ver == th->ver)) {
    register_from(a, t, (reg){REG_L, l}, &k->l);
    xcopy(&k->l, &th->c); /* reserved */
    k->l_from = t;
    k->l_ver = th->ver;
  }
  k->seen = th->seen_bit;
  k->lastrel = t;
  a->rellast[l] = cur_aev(a, ev);
  return 0;
}

/* A variable's record (a cell of its vslot) := an END node: e's transaction (thread of) →* T
 * (left) →* the clock (right). */
static void end_record(aero *a, pnode **cell, uint32_t of, pnode *left, const expl *right,
                       uint64_t made) {
  *cell = atom__aero_pn_end_at(a, of, left, right, made);
}

/* The provenance part of opt_end_update: X (and chR_x) learn the other open transactions C_t
 * knows, through T. Kept apart so that the common END update (nothing new to learn) stays a
 * test and a join. */
static AERO_RARE void opt_end_learn(aero *a, uint32_t t, reg r, atom__vc *x, size_t nk,
                                    uint64_t made) {
  athread *th = &a->thr[t];
  avar *v = r.kind == REG_L ? NULL : &a->var[r.id];
  expl right, rightc; /* how X (and chR_x) know t's transaction: set when first needed */
  int have = 0;
  for (size_t i = 0; i < nk; i++) {
    kent e = a->scratch[i];
    atom__vc_t b = a->thr[e.t].b;
    uint32_t k = slot_of(a, e.t);
    int learns = atom__vc_get(x, k) < b;
    int c_learns = r.kind == REG_R && atom__vc_get(&v->chr, k) < b;
    if (learns) learn(a, e.t, r);
    if (!learns && !c_learns) continue;
    /* provenance: e's transaction →* T (C_t), T →* X */
    if (!have) {
      have = 1;
      if (r.kind == REG_W) {
        right = atom__aero_ex_snap(a, &a->wlast[r.id], VAR_ENDS(v, wend), t);
        rightc = right;
      } else if (r.kind == REG_L) {
        right = atom__aero_ex_snap(a, &a->rellast[r.id], &a->lock[r.id].lend, t);
        rightc = right;
      } else {
        right = atom__aero_ex_rp(a, v, t);
        rightc = atom__vc_get(&v->chr, th->slot) >= th->b ? atom__aero_ex_chr(a, v, t) : right;
      }
    }
    pnode *left = ends_get(a, &th->prov, e.t);
    if (r.kind != REG_L && vslot_room(a, v, k)) continue; /* out of memory: record lost */
    if (r.kind == REG_W) {
      end_record(a, &v->slot[k].wend, e.t, left, &right, made);
    } else if (r.kind == REG_L) {
      ends *le = &a->lock[r.id].lend;
      atom__aero_ends_put(a, le, k, atom__aero_pn_end_at(a, e.t, left, &right, made));
    } else {
      if (learns) end_record(a, &v->slot[k].rp, e.t, left, &right, made);
      if (c_learns) {
        /* R_x and chR_x usually know T by the same read: then chR_x's record is R_x's */
        if (learns && same_expl(&right, &rightc))
          rown_alias(a, v, e.t);
        else
          end_record(a, &v->slot[k].cp, e.t, left, &rightc, made);
      }
    }
  }
}

static AERO_HOT void opt_end_update(aero *a, uint32_t t, uint32_t ts, atom__vc_t b,
                                    const atom__vc *ct, reg r, size_t nk, uint64_t made);

/* The full scan of lines 41-46, for a transaction whose learned list could not grow. */
static AERO_RARE void opt_end_scan(aero *a, uint32_t t, size_t nk, uint64_t made) {
  athread *th = &a->thr[t];
  uint32_t ts = th->slot;
  for (uint32_t x = 0; x < a->n_var; x++) {
    opt_end_update(a, t, ts, th->b, &th->c, (reg){REG_W, x}, nk, made);
    opt_end_update(a, t, ts, th->b, &th->c, (reg){REG_R, x}, nk, made);
  }
  for (uint32_t l = 0; l < a->n_lock; l++)
    opt_end_update(a, t, ts, th->b, &th->c, (reg){REG_L, l}, nk, made);
}

/* opt_end_update for a stored clock x (W_x or L_l) with its shortcuts: x == C_{*from} at
 * version *ver, known to the threads in *seen. */
static inline void end_update_stored(aero *a, uint32_t t, uint32_t ts, atom__vc_t b,
                                     const atom__vc *ct, reg r, size_t nk, uint64_t made,
                                     atom__vc *x, uint32_t *from, uint64_t *ver, uint64_t *seen) {
  if (atom__vc_get(x, ts) < b) return;
  if (nk) opt_end_learn(a, t, r, x, nk, made);
  ATOM__ASSERT(ct->len <= x->cap);
  xjoin(x, ct);
  int mine = *from == t;
  *from = mine ? t : NIL;
  *ver = a->thr[t].ver;
  *seen = mine ? SEEN_BIT(t) : 0;
}

/* Lines 41-46 for one registered clock: X := C_t^▷ ⊑ X ? C_t ⊔ X : X, registering X with the
 * other open transactions C_t knows (in a->scratch[0..nk)). */
static AERO_HOT void opt_end_update(aero *a, uint32_t t, uint32_t ts, atom__vc_t b,
                                    const atom__vc *ct, reg r, size_t nk, uint64_t made) {
  /* One switch on the kind, each case with its clock at hand (the common END update is a
   * test and a join). When X changes, the shortcuts no longer hold, except when X was a
   * snapshot of C_t (t stored it in its transaction): C_t only grows, so X ⊔ C_t is C_t now,
   * at its version. */
  switch (r.kind) {
    case REG_R: {
      avar *v = &a->var[r.id];
      if (atom__vc_get(&v->r, ts) < b) return; /* see "Optimized END" */
      if (nk) opt_end_learn(a, t, r, &v->r, nk, made);
      ATOM__ASSERT(ct->len <= v->r.cap); /* reserved (see opt_end): the join cannot grow */
      rjoin(v, ct, NIL); /* R_x and chR_x (same capacity) */
      return;
    }
    case REG_W: {
      avar *v = &a->var[r.id];
      end_update_stored(a, t, ts, b, ct, r, nk, made, &v->w, &v->w_from, &v->w_ver, &v->w_seen);
      return;
    }
    default: {
      alock *k = &a->lock[r.id];
      end_update_stored(a, t, ts, b, ct, r, nk, made, &k->l, &k->l_from, &k->l_ver, &k->seen);
      return;
    }
  }
}

static int opt_end_reserve(aero *a, reg r, uint32_t t, uint32_t ts, uint32_t len) {
  atom__vc *x = reg_clock(a, r);
  if (atom__vc_get(x, ts) < a->thr[t].b) return 0;
  return r.kind == REG_L   ? reserve(a, x, max_u32(len, a->n_slot))
         : r.kind == REG_W ? var_reserve_w(a, &a->var[r.id], len)
                           : var_reserve_r(a, &a->var[r.id], len);
}

/* Whether thread u's clock knows the open transaction of th (thread t) at its END: u's clock
 * exists (a joined thread's is never read again) and has reached th's BEGIN value. */
static inline int end_knower(const aero *a, const athread *th, uint32_t t, uint32_t u) {
  const athread *uh = &a->thr[u];
  return u != t && uh->slot != SLOT_GONE && uh->slot != NIL &&
         atom__vc_get(&uh->c, th->slot) >= th->b;
}

/* The reports of lines 38-40 at END(t): each knower u whose transaction C_t knows (gathered
 * in a->rsort), in the order of their ranks (athread.rank). A report is made once per pair of transactions, as
 * its thread's last report (reported() in reports.c), so the order decides which repeats
 * count; ranks give the order of the clock slots when every thread alive owned one. */
static AERO_RARE void end_reports(aero *a, const atom_ev *ev, uint32_t t, size_t n) {
  uint32_t *r = a->rsort;
  for (size_t i = 1; i < n; i++) { /* few: insertion sort by rank */
    uint32_t u = r[i];
    size_t j = i;
    for (; j > 0 && a->thr[r[j - 1]].rank > a->thr[u].rank; j--) r[j] = r[j - 1];
    r[j] = u;
  }
  for (size_t i = 0; i < n; i++) note(a, atom__aero_report_end(a, ev, t, r[i]));
}

static AERO_HOT int opt_end(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  uint32_t len = th->c.len;
  if (!th->active) return 0;

  if (!th->pub) { /* nobody but C_t knew the transaction: nothing to pass on */
    th->active = 0;
    return 0;
  }
  uint32_t ts = th->slot;
  /* Reserve everything first so that the update below cannot fail half-way. The thread
   * clocks that know t's transaction learned it by a join whose crossing test put their
   * thread in th->lthr (thread_join), once each; a joined thread performs no event again (its
   * clock is never read) and is skipped. If the list could not grow (overflow), every thread
   * is tested instead, here and below. */
  int all = th->overflow;
  size_t nw = all ? a->n_thr : th->n_lthr;
  for (size_t i = 0; i < nw; i++) {
    uint32_t u = all ? (uint32_t)i : th->lthr[i];
    if (!end_knower(a, th, t, u)) continue;
    if (reserve(a, &a->thr[u].c, len) || known_reserve(a, &a->thr[u])) return ATOM_ENOMEM;
  }
  if (nw > a->rsort_cap && ATOM__GROW(a->mem, a->rsort, a->rsort_cap, nw)) return ATOM_ENOMEM;
  if (!th->overflow && (a->n_slot <= ATOM__VC_CHUNK || a->n_slot == th->nslot_b)) {
    /* Nothing to reserve: every clock that knows t's transaction has storage (a component
     * is not zero), hence room for a chunk of ATOM__VC_CHUNK components, and a clock
     * in the learned list was stored (or updated at an END) after t's BEGIN, by a store that
     * reserved room for every slot of that time, at least th->nslot_b = a->n_slot >= len.
     * The clocks updated here then have room for every slot in use, so the invariant holds
     * for the other open transactions they are registered with below (their BEGIN was no
     * later than now). Otherwise (slots were added since the BEGIN) the loops reserve. */
  } else if (th->overflow) {
    for (uint32_t x = 0; x < a->n_var; x++)
      if (opt_end_reserve(a, (reg){REG_W, x}, t, ts, len) ||
          opt_end_reserve(a, (reg){REG_R, x}, t, ts, len))
        return ATOM_ENOMEM;
    for (uint32_t l = 0; l < a->n_lock; l++)
      if (opt_end_reserve(a, (reg){REG_L, l}, t, ts, len)) return ATOM_ENOMEM;
  } else {
    for (size_t i = 0; i < th->n_learned; i++)
      if (opt_end_reserve(a, th->learned[i], t, ts, len)) return ATOM_ENOMEM;
  }
  if (th->n_known + 1 > a->scratch_cap &&
      ATOM__GROW(a->mem, a->scratch, a->scratch_cap, th->n_known + 1))
    return ATOM_ENOMEM;

  /* lines 38-40: threads whose clock knows t's transaction (found above, O(T) like the join;
   * the joins below change only C_u, so the set is still the same). The reports after the
   * joins, in the order of the knowers' ranks (end_reports): a report reads what t and u know
   * of each other's transaction (clocks, provenance), which no join here changes. */
  size_t nrep = 0;
  for (size_t i = 0; i < nw; i++) {
    uint32_t u = all ? (uint32_t)i : th->lthr[i];
    if (!end_knower(a, th, t, u)) continue;
    if (knows(a, &th->c, u)) a->rsort[nrep++] = u;
    srcd sd = {SD_END, t, NULL, NULL, NULL, ev};
    thread_join(a, u, &th->c, &sd);
    absorb(a, &a->thr[u], t, th->ver);
  }
  if (nrep) end_reports(a, ev, t, nrep);
  /* The other open transactions C_t knows: clocks updated below learn them too. */
  size_t nk = 0;
  for (size_t i = 0; i < th->n_known; i++) {
    kent e = th->known[i];
    if (e.t != t && kent_valid(a, e)) a->scratch[nk++] = e;
  }
  /* lines 41-46, restricted to the clocks that learned t's transaction */
  if (th->overflow) {
    opt_end_scan(a, t, nk, ev->index);
  } else {
    for (size_t i = 0; i < th->n_learned; i++)
      opt_end_update(a, t, ts, th->b, &th->c, th->learned[i], nk, ev->index);
  }
  th->n_learned = 0;
  th->n_lthr = 0;
  th->overflow = 0;
  th->active = 0;
  th->pub = 0;
  th->b = NO_TXN; /* (knows()) */
  a->open_b[ts] = NO_TXN;
  a->n_active--;
  /* t keeps its slot for its next publication unless another thread needs it first */
  if (!a->slots[ts].queued) {
    a->slots[ts].queued = 1;
    a->stq[(a->stq_head + a->stq_n++) % a->stq_cap] = ts;
  }
  return 0;
}

/* ------------------------------------------------------------------ the dispatch */

/* One event: the shared prologue (event_pre: its rare parts are calls), the kind's handler
 * (inline, but for the BEGIN, FORK and JOIN that both variants share), event_post. */
static AERO_HOT int opt_event(aero *a, const atom_ev *ev, int gc) {
  int err = event_pre(a, ev, gc);
  if (err) return err;
  /* each case grows the table its target indexes first (ensure_target, in the one switch) */
  switch (ev->kind) {
    case ATOM_READ: if (!(err = ensure_vars(a, ev->target))) err = opt_read(a, ev); break;
    case ATOM_WRITE: if (!(err = ensure_vars(a, ev->target))) err = opt_write(a, ev); break;
    case ATOM_ACQUIRE: if (!(err = ensure_locks(a, ev->target))) err = opt_acquire(a, ev); break;
    case ATOM_RELEASE: if (!(err = ensure_locks(a, ev->target))) err = opt_release(a, ev); break;
    case ATOM_FORK:
      if (!(err = ensure_threads(a, ev->target))) err = atom__aero_on_fork(a, ev);
      break;
    case ATOM_JOIN:
      if (!(err = ensure_threads(a, ev->target))) err = atom__aero_on_join(a, ev);
      break;
    case ATOM_BEGIN: err = atom__aero_on_begin(a, ev); break;
    case ATOM_END: err = opt_end(a, ev); break;
    /* FENCE: no clock work (it touches no shared state), but it is an event of its thread:
     * a thread whose only events are fences still conflicts with its fork and join. */
    case ATOM_FENCE: break;
    default: return 0;
  }
  return event_post(a, ev, err);
}

/* The entries (aerodrome.c's vtable functions call them): the block loop and the one-event
 * form, each ONE function with the dispatch and the handlers inlined in it, cloned for the
 * instruction sets of support/multiversion.h (a clone is called from this file only, hence
 * the plain exported wrappers). One call per block, and within it none per event but the rare
 * paths'. */
static ATOM__CLONES int opt_events(aero *a, const atom_ev *ev, size_t n, size_t *failed) {
  /* The collections' thresholds are tested once a block (event_pre), but at every event with
   * argument sweep=1 (tests: sweep at every event), by the one-event entry. */
  if (a->sweep_min == 1) {
    for (size_t i = 0; i < n; i++) {
      int err = atom__aero_opt_event(a, &ev[i]);
      if (err) {
        *failed = i;
        return err;
      }
    }
    return 0;
  }
  collect_due(a);
  size_t pf = prefetch_end(a, n);
  for (size_t i = 0; i < n; i++) {
    prefetch_var(a, ev, i, pf);
    int err = opt_event(a, &ev[i], 0);
    if (err) {
      *failed = i;
      return err;
    }
  }
  return 0;
}

static ATOM__CLONES int opt_event1(aero *a, const atom_ev *ev) { return opt_event(a, ev, 1); }

int atom__aero_opt_events(aero *a, const atom_ev *ev, size_t n, size_t *failed) {
  return opt_events(a, ev, n, failed);
}
int atom__aero_opt_event(aero *a, const atom_ev *ev) { return opt_event1(a, ev); }
