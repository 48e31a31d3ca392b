/* reduction: the end of a transaction -- judged at once, kept for finish, or pending. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/reduction/reduction.h"

void atom__reduction_txn_reset(thread_state *th) {
  th->in_txn = 0;
  th->nent = 0;
  th->nrs = 0;
  th->has_l = 0;
  th->rs_done = 0;
}

/* Copy the open transaction of th into a block. */
kept_txn *atom__reduction_txn_freeze(reduction *r, uint32_t t) {
  thread_state *th = &r->th[t];
  kept_txn *x = atom__mem_alloc(r->mem, txn_size((uint32_t)th->nent, (uint32_t)th->nrs));
  if (!x) return NULL;
  x->thread = t;
  x->nent = (uint32_t)th->nent;
  x->nrs = (uint32_t)th->nrs;
  x->has_l = th->has_l;
  x->slot = NONE;
  x->nwait = 0;
  x->begin_index = th->begin_index;
  x->begin_loc = th->begin_loc;
  x->first_l = th->first_l;
  if (th->nent) memcpy(x->ent, th->ent, th->nent * sizeof *th->ent);
  if (th->nrs) memcpy(txn_rs(x), th->rs, th->nrs * sizeof *th->rs);
  return x;
}

/* Could the open transaction of th fail if more of its classes turned into non-movers? Adding
 * non-movers never repairs a break, so it can iff it fails with all of them non-movers. */
int atom__reduction_can_still_fail(reduction *r, const thread_state *th) {
  uint8_t *all = r->isn + th->nent; /* the second half of the scratch (atom__reduction_grow_isn(2 * nent)) */
  memset(all, 1, th->nent);
  form_break b = atom__reduction_first_break(r, th->ent, th->nent, th->rs, th->nrs, (int)th->has_l, &th->first_l,
                           all);
  return b.what != BREAK_NONE;
}


int atom__reduction_on_end(reduction *r, uint32_t t, const atom_ev *ev) {
  thread_state *th = &r->th[t];
  if (!th->in_txn) return 0;
  int rc = 0;
  if (atom__reduction_grow_isn(r, 2 * th->nent)) {
    atom__reduction_txn_reset(th);
    return ATOM_ENOMEM;
  }
  if (r->mode == MODE_ERASER) {
    /* Classes only ever turn into non-movers, so a failure now is final. */
    for (size_t k = 0; k < th->nent; k++)
      r->isn[k] = (uint8_t)atom__reduction_eraser_is_n(r, &r->key[th->ent[k].key]);
    form_break b = atom__reduction_first_break(r, th->ent, th->nent, th->rs, th->nrs, (int)th->has_l,
                             &th->first_l, r->isn);
    if (b.what != BREAK_NONE)
      rc = atom__reduction_report_break(r, &b, t, th->begin_index, th->begin_loc, ev->index);
    else if (atom__reduction_can_still_fail(r, th))
      rc = atom__reduction_pend_add(r, t);
  } else {
    /* precise: decided at finish, unless it passes whichever classes turn out racy. */
    if (atom__reduction_can_still_fail(r, th)) {
      kept_txn *x = NULL;
      if (ATOM__GROW(r->mem, r->txn, r->txn_cap, r->ntxn + 1) || !(x = atom__reduction_txn_freeze(r, t)))
        rc = ATOM_ENOMEM;
      else
        r->txn[r->ntxn++] = x;
    }
  }
  /* On failure (out of memory) the transaction's verdict is lost, never the state. */
  atom__reduction_txn_reset(th);
  return rc;
}
