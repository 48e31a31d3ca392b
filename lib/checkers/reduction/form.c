/* reduction: where a transaction leaves the form (R+B)*N?(L+B)* (000 Thm 4.1). */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/reduction/reduction.h"

static named_event named_access(const reduction *r, const class_use *e, int second) {
  named_event n;
  n.index = second ? e->i2 : e->i1;
  n.loc = second ? e->l2 : e->l1;
  n.kind = second ? e->kind2 : e->kind1;
  n.target = r->key[e->key].var;
  n.key = e->key;
  return n;
}

static named_event named_sync(const sync_event *s) {
  named_event n = {s->index, s->loc, s->kind, s->target, NONE};
  return n;
}

/* Where does (R+B)*N?(L+B)* first fail on this transaction, given which entries are non-movers
 * (isn)? Scanning left to right, the transaction commits at its first non-mover or first left
 * mover c, whichever comes first; the form breaks at the first of: a second non-mover, a
 * non-mover after a left mover, a right mover after c. Occurrences beyond the second of a class
 * never matter: if a class has a third, its second is already a second non-mover. */
form_break atom__reduction_first_break(const reduction *r, const class_use *ent, size_t nent,
                            const sync_event *rs, size_t nrs, int has_l, const sync_event *first_l,
                            const uint8_t *isn) {
  form_break b;
  memset(&b, 0, sizeof b);
  size_t n1 = (size_t)-1; /* entry of the first non-mover */
  uint64_t i1 = NO_INDEX, i2 = NO_INDEX;
  size_t n2 = (size_t)-1;
  int n2_second = 0;
  for (size_t k = 0; k < nent; k++) {
    if (!isn[k]) continue;
    const class_use *e = &ent[k];
    /* candidates: e->i1, and e->i2 if count >= 2 */
    if (e->i1 < i1) {
      i2 = i1;
      n2 = n1;
      n2_second = 0;
      i1 = e->i1;
      n1 = k;
    } else if (e->i1 < i2) {
      i2 = e->i1;
      n2 = k;
      n2_second = 0;
    }
    if (e->count >= 2 && e->i2 < i2) {
      i2 = e->i2;
      n2 = k;
      n2_second = 1;
    }
  }
  uint64_t il = has_l ? first_l->index : NO_INDEX;
  /* A racy release write is a non-mover and a left mover at one index: the non-mover first. */
  uint64_t c = i1 <= il ? i1 : il;
  if (c == NO_INDEX) return b; /* no non-mover, no left mover: R and B only */
  uint64_t f = NO_INDEX;
  if (i1 <= il) {
    b.c = named_access(r, &ent[n1], 0);
    if (i2 != NO_INDEX) {
      f = i2;
      b.what = BREAK_TWO_NONMOVERS;
      b.f = named_access(r, &ent[n2], n2_second);
    }
  } else {
    b.c = named_sync(first_l);
    if (i1 != NO_INDEX) {
      f = i1;
      b.what = BREAK_NONMOVER_AFTER_LEFT;
      b.f = named_access(r, &ent[n1], 0);
    }
  }
  for (size_t k = 0; k < nrs; k++)
    if (rs[k].index > c) {
      if (rs[k].index < f) {
        b.what = BREAK_RIGHT_AFTER;
        b.f = named_sync(&rs[k]);
      }
      break;
    }
  return b;
}
