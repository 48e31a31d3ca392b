/* reduction: the not-reducible report of a transaction. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/reduction/reduction.h"
#include "support/msgbuf.h"


/* A non-mover is a non-mover because of a race, shown as a witness event: in precise mode the
 * access of another thread it races with (the partner class's first access); with eraser the
 * access that made its variable racy. @return 1 and *out when there is one. */
static int partner_event(const reduction *r, const named_event *n, atom_ev *out) {
  if (r->mode != MODE_PRECISE) {
    if (n->target >= r->var_cap || !r->var[n->target].racy) return 0;
    *out = r->var[n->target].racy_ev;
    return 1;
  }
  const access_class *k = &r->key[n->key];
  if (k->partner == NONE) return 0;
  const access_class *p = &r->key[k->partner];
  if (p->first_index == NO_INDEX) return 0;
  *out = (atom_ev){p->write ? ATOM_WRITE : ATOM_READ, p->thread, p->var, 0, p->first_index,
                   p->first_loc};
  return 1;
}

/* A named event is a non-mover access: an access with a class (a synchronizing access, a
 * mover like a lock operation, has none). */
static int is_nonmover(const named_event *n) { return is_access(n->kind) && n->key != NONE; }

/* The variables of the witness events that are accesses (non-movers), once each. */
static size_t named_vars(const form_break *b, const named_event **nm) {
  size_t nn = 0;
  if (is_nonmover(&b->c)) nm[nn++] = &b->c;
  if (is_nonmover(&b->f) && !(nn && b->c.target == b->f.target)) nm[nn++] = &b->f;
  return nn;
}

/* The message template ({t0}, {eN}, {vN}: rendered by the session). Events 0 and 1 are c and
 * f; the partner (or racy access) of nm[i], when known, is event partner_pos[i]. */
static void break_message(const reduction *r, const form_break *b, const named_event *const *nm,
                          size_t nn, const size_t *partner_pos, char *msg, size_t size) {
  size_t off = 0;
  atom__msg_append(msg, size, &off, "{t0} cannot be reduced to one atomic step: ");
  if (b->what == BREAK_TWO_NONMOVERS)
    atom__msg_append(msg, size, &off, "{e0} and {e1} both race with other threads, so another "
                     "thread's access can come between them");
  else if (b->what == BREAK_NONMOVER_AFTER_LEFT)
    atom__msg_append(msg, size, &off, "{e1} races with other threads after {e0} let them in, so "
                     "another thread's access can come between them");
  else
    atom__msg_append(msg, size, &off, "{e1} comes after {e0}, %s, so another thread can run "
                     "between them", is_nonmover(&b->c) ? "an access that races with other threads"
                                                        : "which let other threads in");
  /* why the non-movers are non-movers, once per variable */
  for (size_t i = 0; i < nn; i++) {
    atom__msg_append(msg, size, &off, i ? "; " : " (");
    if (r->mode == MODE_PRECISE) {
      if (partner_pos[i] != SIZE_MAX)
        atom__msg_append(msg, size, &off, "another thread accesses {v%zu} with no common lock: "
                         "{e%zu}", i, partner_pos[i]);
      else
        atom__msg_append(msg, size, &off, "{v%zu} is accessed by another thread with no common "
                         "lock", i);
    } else {
      if (partner_pos[i] != SIZE_MAX)
        atom__msg_append(msg, size, &off, "{v%zu} is shared, written and unprotected since "
                         "{e%zu}", i, partner_pos[i]);
      else
        atom__msg_append(msg, size, &off, "{v%zu} is shared, written and unprotected", i);
    }
  }
  if (nn) atom__msg_append(msg, size, &off, ")");
}

int atom__reduction_report_break(reduction *r, const form_break *b, uint32_t thread,
                                 uint64_t begin_index, uint64_t begin_loc, uint64_t found_at) {
  const named_event *c = &b->c, *f = &b->f;
  /* The same transaction code may break its form at different places: keep them apart. */
  uint64_t extra = atom__hash64(atom__hash64(c->loc ^ ((uint64_t)c->kind << 56)) ^ f->loc ^
                                ((uint64_t)f->kind << 48) ^ (uint64_t)b->what);
  atom__report_build *rb = &r->rb;
  atom__rb_reset(rb);
  atom_txn_ref ref = {thread, 0, begin_index, begin_loc};
  int rc = atom__rb_txn(rb, &ref);
  /* A repeat (the session holds a report of this begin location and extra) only counts an
   * occurrence; the session's signatures tell, so the message is composed once per report. */
  if (!rc) rc = atom__rb_repeat(rb, r->env, "not-reducible", extra);
  if (rc) return rc < 0 ? rc : 0;
  atom_ev ec = {c->kind, thread, c->target, 0, c->index, c->loc};
  atom_ev ef = {f->kind, thread, f->target, 0, f->index, f->loc};
  const named_event *nm[2];
  size_t nv = named_vars(b, nm), partner_pos[2] = {SIZE_MAX, SIZE_MAX};
  rc = atom__rb_event(rb, &ec, NULL);
  if (!rc) rc = atom__rb_event(rb, &ef, NULL);
  for (size_t i = 0; i < nv && !rc; i++) {
    atom_ev pe;
    uint32_t pos;
    rc = atom__rb_var(rb, nm[i]->target);
    if (!rc && partner_event(r, nm[i], &pe) && !(rc = atom__rb_event(rb, &pe, &pos)))
      partner_pos[i] = pos;
  }
  if (rc) return rc;
  char msg[640];
  break_message(r, b, nm, nv, partner_pos, msg, sizeof msg);
  /* a feasible interleaving, not the observed one */
  return atom__rb_submit(rb, r->env, "not-reducible", found_at, ATOM_REPORT_PREDICTED, msg, extra);
}

int atom__reduction_grow_isn(reduction *r, size_t n) {
  return ATOM__GROW(r->mem, r->isn, r->isn_cap, n ? n : 1);
}
