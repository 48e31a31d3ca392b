/* reduction: the not-reducible report of a transaction. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/reduction/reduction.h"
#include "support/msgbuf.h"


/* A non-mover is a non-mover because of a race: in precise mode the access of another thread
 * it races with (the partner class's first access), which becomes a witness event. @return 1
 * and *out when there is one. */
static int partner_event(const reduction *r, const named_event *n, atom_ev *out) {
  if (r->mode != MODE_PRECISE) return 0;
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
 * f; the partners of nm[i], when known, follow from position 2 (partner_pos[i]). */
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
      atom__msg_append(msg, size, &off, "{v%zu} is shared, written and unprotected since event "
                       "%llu", i, (unsigned long long)r->var[nm[i]->target].racy_index);
    }
  }
  if (nn) atom__msg_append(msg, size, &off, ")");
}

int atom__reduction_report_break(reduction *r, const form_break *b, uint32_t thread, uint64_t begin_index,
                        uint64_t begin_loc, uint64_t found_at) {
  const named_event *c = &b->c, *f = &b->f;
  /* The same transaction code may break its form at different places: keep them apart. */
  uint64_t extra = atom__hash64(atom__hash64(c->loc ^ ((uint64_t)c->kind << 56)) ^ f->loc ^
                                ((uint64_t)f->kind << 48) ^ (uint64_t)b->what);
  /* A repeat of a reported signature only counts an occurrence: skip the message. */
  struct seen_signature *seen = &r->seen[atom__hash64(begin_loc ^ extra) & 255];
  int repeat = seen->used && seen->loc == begin_loc && seen->extra == extra;

  atom_txn_ref ref = {thread, 0, begin_index, begin_loc};
  atom_ev evs[4];
  size_t ne = 2;
  evs[0] = (atom_ev){c->kind, thread, c->target, 0, c->index, c->loc};
  evs[1] = (atom_ev){f->kind, thread, f->target, 0, f->index, f->loc};
  const named_event *nm[2];
  size_t nv = named_vars(b, nm), partner_pos[2] = {SIZE_MAX, SIZE_MAX};
  uint32_t vars[2];
  for (size_t i = 0; i < nv; i++) {
    vars[i] = nm[i]->target;
    if (partner_event(r, nm[i], &evs[ne])) partner_pos[i] = ne++;
  }
  char msg[640];
  if (!repeat) break_message(r, b, nm, nv, partner_pos, msg, sizeof msg);
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.flags = ATOM_REPORT_PREDICTED; /* a feasible interleaving, not the observed one */
  spec.kind = "not-reducible";
  spec.event_index = found_at;
  spec.txns = &ref;
  spec.n_txns = 1;
  spec.events = evs;
  spec.n_events = ne;
  spec.vars = nv ? vars : NULL;
  spec.n_vars = nv;
  spec.message = repeat ? NULL : msg;
  spec.signature_extra = extra;
  int rc = atom_env_report(r->env, &spec);
  if (rc == 0 && !repeat) *seen = (struct seen_signature){begin_loc, extra, 1, 0};
  return rc;
}

int atom__reduction_grow_isn(reduction *r, size_t n) {
  return ATOM__GROW(r->mem, r->isn, r->isn_cap, n ? n : 1);
}
