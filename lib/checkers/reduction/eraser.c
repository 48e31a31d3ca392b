/* reduction, lockset=eraser (000 Thm 4.4): per-variable state kept online, and the
 * transactions that passed at their END but may still fail, waiting on their classes. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/reduction/reduction.h"

static int w_alloc(reduction *r, uint32_t *out) {
  if (r->w_free != NONE) {
    *out = r->w_free;
    r->w_free = r->w[r->w_free].next;
    return 0;
  }
  if (r->nw >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(r->mem, r->w, r->w_cap, r->nw + 1)) return ATOM_ENOMEM;
  *out = (uint32_t)r->nw++;
  return 0;
}

static void w_release(reduction *r, uint32_t i) {
  r->w[i].txn = NONE;
  r->w[i].next = r->w_free;
  r->w[i].prev = NONE;
  r->w_free = i;
}

static int w_sentinel(reduction *r, uint32_t *out) {
  uint32_t s;
  if (w_alloc(r, &s)) return ATOM_ENOMEM;
  r->w[s] = (waiter){s, s, NONE, NONE};
  *out = s;
  return 0;
}

static void w_unlink(reduction *r, uint32_t i) {
  waiter *w = &r->w[i];
  r->w[w->prev].next = w->next;
  r->w[w->next].prev = w->prev;
}

static void w_link(reduction *r, uint32_t list, uint32_t i) {
  waiter *w = &r->w[i];
  w->prev = r->w[list].prev;
  w->next = list;
  r->w[w->prev].next = i;
  r->w[list].prev = i;
}

/* Drop a pending transaction and its waiters. */
void atom__reduction_pend_release(reduction *r, kept_txn *t) {
  for (uint32_t k = 0; k < t->nent; k++)
    if (t->ent[k].aux != NONE) {
      w_unlink(r, t->ent[k].aux);
      w_release(r, t->ent[k].aux);
      t->ent[k].aux = NONE;
    }
  r->pend[t->slot] = NULL;
  r->pend_free[r->npend_free++] = t->slot; /* room reserved when the slot was taken */
  r->npend--;
  atom__mem_free(r->mem, t, txn_size(t->nent, t->nrs));
}

/* ---------------------------------------------------------------- eraser: variables */

static int ensure_var(reduction *r, uint32_t x) {
  if (x < r->var_cap) return 0;
  size_t old = r->var_cap;
  if (ATOM__GROW(r->mem, r->var, r->var_cap, (size_t)x + 1)) return ATOM_ENOMEM;
  for (size_t i = old; i < r->var_cap; i++) {
    r->var[i].c_top = 1;
    r->var[i].nx_waiters = NONE;
  }
  return 0;
}

static int alive_find(const eraser_var *v, uint32_t uid) {
  uint32_t lo = 0, hi = v->nal;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (v->al[mid].uid < uid) lo = mid + 1;
    else hi = mid;
  }
  return lo < v->nal && v->al[lo].uid == uid ? (int)lo : -1;
}

/* Is an access of class k a non-mover now? (eraser) */
int atom__reduction_eraser_is_n(const reduction *r, const access_class *k) {
  if (k->var >= r->var_cap) return 1; /* no state (out of memory): the conservative side */
  const eraser_var *v = &r->var[k->var];
  if (!v->racy) return 0;
  return k->seg == NONE || alive_find(v, k->seg) < 0;
}

/* A waiter's class became a non-mover: re-judge its transaction. */
static int fire(reduction *r, uint32_t wi, uint64_t at) {
  waiter *w = &r->w[wi];
  kept_txn *t = r->pend[w->txn];
  class_use *e = &t->ent[w->entry];
  w_unlink(r, wi);
  w_release(r, wi);
  e->aux = NONE;
  e->is_n = 1;
  t->nwait--;
  if (atom__reduction_grow_isn(r, t->nent)) return ATOM_ENOMEM;
  for (uint32_t k = 0; k < t->nent; k++) r->isn[k] = t->ent[k].is_n;
  form_break b = atom__reduction_first_break(r, t->ent, t->nent, txn_rs(t), t->nrs, (int)t->has_l, &t->first_l,
                           r->isn);
  int rc = 0;
  if (b.what != BREAK_NONE) {
    rc = atom__reduction_report_break(r, &b, t->thread, t->begin_index, t->begin_loc, at);
    atom__reduction_pend_release(r, t);
  } else if (t->nwait == 0) {
    atom__reduction_pend_release(r, t);
  }
  return rc;
}

/* Fire every waiter of a list (the list's sentinel stays). */
static int fire_all(reduction *r, uint32_t list, uint64_t at) {
  int err = 0;
  while (r->w[list].next != list) {
    int rc = fire(r, r->w[list].next, at);
    if (rc && !err) err = rc;
  }
  return err;
}

/* The shared accesses of x now include those of segment a (it lost its exclusivity). */
static int fold(reduction *r, eraser_var *v, atom__ls ls, uint32_t wrote) {
  atom__ls nc = ls;
  if (!v->c_top && atom__ls_meet(&r->ls, v->c, ls, &nc)) return ATOM_ENOMEM;
  v->c = nc;
  v->c_top = 0;
  v->shared_write |= (uint8_t)(wrote != 0);
  return 0;
}

/* Room for one more frontier entry, alive segment and the waiter sentinel of x, so that the
 * state changes of an access cannot fail half-way. */
static int access_room(reduction *r, eraser_var *v) {
  if (v->nfr + 1 > v->frcap) {
    size_t cap = v->frcap;
    if (ATOM__GROW(r->mem, v->fr, cap, (size_t)v->nfr + 1)) return ATOM_ENOMEM;
    v->frcap = (uint32_t)cap;
  }
  if (v->nal + 1 > v->alcap) {
    size_t cap = v->alcap;
    if (ATOM__GROW(r->mem, v->al, cap, (size_t)v->nal + 1)) return ATOM_ENOMEM;
    v->alcap = (uint32_t)cap;
  }
  if (v->nx_waiters == NONE && w_sentinel(r, &v->nx_waiters)) return ATOM_ENOMEM;
  return 0;
}

/* Is the access of thread u in segment cu ordered after every earlier access of x? Updates the
 * frontier (the last accesses concurrent with it, and it) and the remembered witnesses. */
static int frontier_access(reduction *r, eraser_var *v, uint32_t u, uint32_t cu) {
  /* A remembered earlier access of another thread that is concurrent with it says no at once
   * (the usual case once x is shared: it stays so until u joins). */
  for (uint32_t i = 0; i < v->nwit; i++) {
    if (v->wit[i].thread == u || seg_precedes(r, v->wit[i].period, cu)) continue;
    /* keep u's last access in the frontier: replace its entry or add one */
    uint32_t j = 0;
    while (j < v->nfr && v->fr[j].thread != u) j++;
    v->fr[j] = (front_access){u, cu};
    if (j == v->nfr) v->nfr++;
    return 0;
  }
  /* Frontier: drop the last accesses that happen before this one; those left are concurrent
   * with it. Exclusive so far iff none of another thread is left. */
  uint32_t k = 0;
  for (uint32_t i = 0; i < v->nfr; i++) {
    front_access f = v->fr[i];
    if (f.thread == u || seg_precedes(r, f.period, cu)) continue;
    uint32_t j = 0; /* remember it: its thread's slot, a free one, or the second */
    while (j < v->nwit && v->wit[j].thread != f.thread) j++;
    if (j == 2) j = 1;
    v->wit[j] = f;
    if (j == v->nwit) v->nwit++;
    v->fr[k++] = f;
  }
  v->nfr = k;
  v->fr[v->nfr++] = (front_access){u, cu};
  return k == 0;
}

/* Exclusive segments that do not happen before segment cu lose their exclusivity (the alive
 * ones form a happens-before chain, so they are a suffix). */
static int expire_segments(reduction *r, eraser_var *v, uint32_t cu) {
  while (v->nal) {
    exclusive_segment *a = &v->al[v->nal - 1];
    if (seg_precedes(r, a->period, cu)) break;
    if (fold(r, v, a->ls, a->wrote)) return ATOM_ENOMEM;
    /* its waiters are now waiters on shared accesses */
    uint32_t s = a->waiters;
    while (r->w[s].next != s) {
      uint32_t wi = r->w[s].next;
      w_unlink(r, wi);
      w_link(r, v->nx_waiters, wi);
    }
    w_release(r, s);
    v->nal--;
  }
  return 0;
}

/* 000 Thm 4.3/4.4 "initialization": the access (thread u, segment cu, lockset h, a write if w)
 * is ordered with every access of x so far; it joins or opens the exclusive segment *seg. */
static int exclusive_access(reduction *r, eraser_var *v, uint32_t u, uint32_t cu, atom__ls h,
                            int w, uint32_t *seg) {
  exclusive_segment *top = v->nal ? &v->al[v->nal - 1] : NULL;
  if (top && top->period == cu) {
    atom__ls nl;
    if (atom__ls_meet(&r->ls, top->ls, h, &nl)) return ATOM_ENOMEM;
    top->ls = nl;
    top->wrote |= (uint32_t)w;
  } else {
    uint32_t s;
    if (w_sentinel(r, &s)) return ATOM_ENOMEM;
    v->al[v->nal++] = (exclusive_segment){u, cu, v->next_uid++, h, (uint32_t)w, s};
    top = &v->al[v->nal - 1];
  }
  *seg = top->uid;
  return 0;
}

/* eraser: the state of x after access ev (held lockset h); *seg receives the exclusive segment
 * the access belongs to, or NONE if it is shared. */
int atom__reduction_eraser_access(reduction *r, const atom_ev *ev, atom__ls h, uint32_t *seg) {
  uint32_t x = ev->target, u = ev->thread, cu; /* cu: the access's segment (period) */
  if (ensure_var(r, x) || atom__periods_of(&r->periods, u, &cu)) return ATOM_ENOMEM;
  eraser_var *v = &r->var[x];
  int w = ev->kind == ATOM_WRITE;
  if (access_room(r, v)) return ATOM_ENOMEM; /* first: nothing below fails half-way */
  int after_all = frontier_access(r, v, u, cu);
  if (expire_segments(r, v, cu)) return ATOM_ENOMEM;
  if (after_all) {
    if (exclusive_access(r, v, u, cu, h, w, seg)) return ATOM_ENOMEM;
  } else {
    if (fold(r, v, h, (uint32_t)w)) return ATOM_ENOMEM;
    *seg = NONE;
  }
  /* 000 Thm 4.4 with Eraser's read-shared refinement. */
  if (!v->racy && v->shared_write && !v->c_top && v->c == ATOM__LS_EMPTY) {
    v->racy = 1;
    v->racy_ev = *ev;
  }
  return v->racy ? fire_all(r, v->nx_waiters, ev->index) : 0;
}

/* eraser: keep a transaction that passed at its END, waiting on the classes that may still
 * turn into non-movers. */
int atom__reduction_pend_add(reduction *r, uint32_t t) {
  if (r->npend_slots >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(r->mem, r->pend, r->pend_cap, r->npend_slots + 1) ||
      ATOM__GROW(r->mem, r->pend_free, r->pend_free_cap, r->npend_slots + 1))
    return ATOM_ENOMEM;
  kept_txn *x = atom__reduction_txn_freeze(r, t);
  if (!x) return ATOM_ENOMEM;
  uint32_t slot = r->npend_free ? r->pend_free[--r->npend_free] : (uint32_t)r->npend_slots++;
  x->slot = slot;
  r->pend[slot] = x;
  r->npend++;
  for (uint32_t k = 0; k < x->nent; k++) {
    class_use *e = &x->ent[k];
    e->is_n = r->isn[k];
    e->aux = NONE;
    if (e->is_n) continue;
    const access_class *key = &r->key[e->key];
    eraser_var *v = &r->var[key->var];
    int a = key->seg == NONE ? -1 : alive_find(v, key->seg);
    uint32_t list = a >= 0 ? v->al[a].waiters : v->nx_waiters;
    uint32_t wi;
    if (w_alloc(r, &wi)) {
      atom__reduction_pend_release(r, x); /* unlinks the waiters made so far */
      return ATOM_ENOMEM;
    }
    r->w[wi].txn = slot;
    r->w[wi].entry = k;
    w_link(r, list, wi);
    e->aux = wi;
    x->nwait++;
  }
  return 0;
}
