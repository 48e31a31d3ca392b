/* reduction: access classes, and what the open transaction records of them. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/reduction/reduction.h"

static uint64_t key_hash(uint32_t var, uint32_t thread, uint32_t seg, uint32_t ls, uint32_t w) {
  uint64_t h = atom__hash64(((uint64_t)var << 32 | thread) ^ 0x5bd1e9955bd1e995ULL);
  h = atom__hash64(h ^ ((uint64_t)seg << 32 | ls));
  return atom__hash64(h ^ w);
}

/* The id of an access class, made if new. Classes are found through the hash of their fields
 * in a support/idindex. */
int atom__reduction_key_get(reduction *r, uint32_t var, uint32_t thread, uint32_t seg,
                            uint32_t ls, uint32_t w, uint32_t *out) {
  atom__idindex_probe p;
  atom__idindex_start(&r->class_of, key_hash(var, thread, seg, ls, w), &p);
  for (uint32_t it; (it = atom__idindex_next(&r->class_of, &p)) != ATOM__IDINDEX_END;) {
    const access_class *k = &r->key[it];
    if (k->var == var && k->thread == thread && k->seg == seg && k->ls == ls && k->write == w) {
      *out = it;
      return 0;
    }
  }
  if (r->nkey >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(r->mem, r->key, r->key_cap, r->nkey + 1) ||
      atom__idindex_add(&r->class_of, r->mem, &p, (uint32_t)r->nkey))
    return ATOM_ENOMEM;
  uint32_t id = (uint32_t)r->nkey++;
  access_class *k = &r->key[id];
  memset(k, 0, sizeof *k);
  k->var = var;
  k->thread = thread;
  k->seg = seg;
  k->ls = ls;
  k->write = w;
  k->partner = NONE;
  k->first_index = NO_INDEX;
  *out = id;
  return 0;
}

/* Record an access of class k by the open transaction of th. */
int atom__reduction_txn_note_access(reduction *r, thread_state *th, uint32_t k, const atom_ev *ev) {
  access_class *key = &r->key[k];
  if (key->stamp == th->serial && key->entry < th->nent) {
    class_use *e = &th->ent[key->entry];
    if (e->count == 1) {
      e->i2 = ev->index;
      e->l2 = ev->loc;
      e->kind2 = (uint8_t)ev->kind;
    }
    if (e->count < UINT32_MAX) e->count++;
    return 0;
  }
  if (ATOM__GROW(r->mem, th->ent, th->ent_cap, th->nent + 1)) return ATOM_ENOMEM;
  class_use *e = &th->ent[th->nent];
  memset(e, 0, sizeof *e);
  e->key = k;
  e->aux = NONE;
  e->count = 1;
  e->kind1 = (uint8_t)ev->kind;
  e->i1 = ev->index;
  e->l1 = ev->loc;
  key->stamp = th->serial;
  key->entry = (uint32_t)th->nent++;
  return 0;
}

/* Record a synchronization event of the open transaction: every right mover up to the first
 * one after the first left mover (later ones can never be where the form first breaks), and
 * the first left mover. */
int atom__reduction_txn_note_sync(reduction *r, thread_state *th, const atom_ev *ev) {
  int right = ev->kind == ATOM_ACQUIRE || ev->kind == ATOM_JOIN || ev->kind == ATOM_READ;
  sync_event s = {ev->index, ev->loc, ev->kind, ev->target};
  if (!right) {
    if (!th->has_l) {
      th->has_l = 1;
      th->first_l = s;
    }
    return 0;
  }
  if (th->rs_done) return 0;
  if (ATOM__GROW(r->mem, th->rs, th->rs_cap, th->nrs + 1)) return ATOM_ENOMEM;
  th->rs[th->nrs++] = s;
  if (th->has_l) th->rs_done = 1;
  return 0;
}
