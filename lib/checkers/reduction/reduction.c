/* reduction: Lipton reduction with movers inferred from locksets (000 §4).
 *
 * 000 Thm 4.1: a set of transactions is atomic if every transaction has the form
 * (R+B)*N?(L+B)*, where R, L, B, N are right-, left-, both- and non-movers. 000 Thm 4.2:
 * acquires are right movers, releases left movers, race-free accesses both movers; every other
 * access is a non-mover. FORK and JOIN, which the paper does not treat, are classified by the
 * same argument as RELEASE and ACQUIRE: fork(u) can always move left (no event of u precedes
 * it) but not right (u's first event may follow it), join(u) can always move right (no event
 * of u follows it) but not left. BEGIN/END only delimit; FENCE and COMMIT are not requested.
 *
 * Race-freedom (which accesses are both movers) comes in two variants, argument `lockset`:
 *
 *   precise (default) 000 Thm 4.3: an access is race-free if every conflicting access of
 *           another thread holds a lock in common with it. The paper exempts accesses "part of
 *           initialization", i.e. accesses that cannot run concurrently with another thread's
 *           (its footnote 5). We use the exact form of that requirement: two accesses ordered
 *           by the fork/join happens-before relation are never adjacent in any feasible
 *           schedule (a FORK or JOIN lies between them), so they never race. This covers
 *           initialization before FORK and read-back after JOIN. Deciding it needs every
 *           access of the trace, so the verdict is made at finish.
 *   eraser  000 Thm 4.4 with Eraser's lockset refinement (SBN+97): all accesses of x are race
 *           free if the locks held at every shared access of x have one in common, or if x is
 *           never written while shared. "Shared" is again taken in the exact sense: an access
 *           is exclusive (initialization) while it is ordered by happens-before with every
 *           access of x by other threads. This is tracked online, and a transaction is judged
 *           at its END; since variables only ever lose race-freedom, a transaction that fails
 *           there fails for good and is reported at once, while one that passes is kept (its
 *           access classes only) and reported later, at the access that makes one of its
 *           variables racy, if that breaks its form. The final verdict is that of Thm 4.4 over
 *           the whole trace.
 *
 * Access classes. Accesses are grouped into classes that are equivalent for the analysis
 * (precise: variable, thread, happens-before segment, read/write, held lockset; eraser:
 * variable, thread, exclusive segment), so that the race analysis and the transactions' records
 * are proportional to the number of classes, not of events. A transaction keeps, per class,
 * its first two occurrences: enough to find where its form breaks (see atom__reduction_first_break()).
 *
 * Reports (kind "not-reducible") name the transaction and the two events where the form
 * breaks: two non-movers; a non-mover after a left mover; or a right mover after a non-mover
 * or a left mover.
 *
 * Work bound (precise): the race analysis compares the classes of one variable pairwise, which
 * is quadratic in the classes of a variable. It stops after max_work comparisons; classes not
 * yet found racy are then taken as race free. Making an access a non-mover can only break a
 * form, never repair one, so every report made is still true; the checker ends INCOMPLETE
 * (atom_env_incomplete) because some may be missing. */
#include <inttypes.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "checkers/reduction/reduction.h"
#include "support/argval.h"

static int access_event(reduction *r, thread_state *th, uint32_t t, const atom_ev *ev);

static int ensure_thread(reduction *r, uint32_t t) {
  if (t < r->n_th) return 0;
  if (ATOM__GROW(r->mem, r->th, r->th_cap, (size_t)t + 1)) return ATOM_ENOMEM;
  r->n_th = t + 1;
  return 0;
}

static int reduction_on_event(void *self, const atom_ev *ev) {
  reduction *r = self;
  uint32_t t = ev->thread;
  if (ev->index >= r->events) r->events = ev->index + 1;
  if (ensure_thread(r, t)) return ATOM_ENOMEM;
  thread_state *th = &r->th[t];

  switch (ev->kind) {
  case ATOM_BEGIN:
    atom__reduction_txn_reset(th);
    th->in_txn = 1;
    th->serial = ++r->serial;
    th->begin_index = ev->index;
    th->begin_loc = ev->loc;
    return 0;
  case ATOM_END:
    return atom__reduction_on_end(r, t, ev);
  case ATOM_ACQUIRE:
  case ATOM_RELEASE: {
    atom__ls h = th->held;
    int rc = 0;
    if (ev->kind == ATOM_RELEASE) rc = atom__ls_remove(&r->ls, th->held, ev->target, &h);
    else if (atom__ls_size(&r->ls, th->held) < HELD_MAX)
      rc = atom__ls_add(&r->ls, th->held, ev->target, &h);
    if (rc) return rc;
    th->held = h;
    return th->in_txn ? atom__reduction_txn_note_sync(r, th, ev) : 0;
  }
  case ATOM_FORK:
  case ATOM_JOIN: {
    /* Happens-before first: if it runs out of memory nothing changed, and accesses then only
     * look more concurrent than they are (never less). */
    int rc = ev->kind == ATOM_FORK ? atom__periods_fork(&r->periods, t, ev->target)
                                   : atom__periods_join(&r->periods, t, ev->target);
    if (rc) return rc;
    return th->in_txn ? atom__reduction_txn_note_sync(r, th, ev) : 0;
  }
  case ATOM_READ:
  case ATOM_WRITE: {
    int rc;
    if (ev->flags & (ATOM_EV_ACQUIRE | ATOM_EV_RELEASE)) {
      /* A synchronizing access orders the accesses around it by happens-before (an acquire
       * read starts a segment that follows the releases of its variable, a release write
       * ends its segment), and it is an access of its variable too: another thread's access
       * of that variable may run right before an acquire read (the release it synchronizes
       * with) or right after a release write, so at best an acquire read is a right mover and
       * a release write a left mover, as lock operations are, and only when the race analysis
       * finds them race-free; racy, they are non-movers (a transaction that reads a flag
       * twice around another thread's release is not atomic). Noted as both: the mover, and
       * the access (a non-mover when racy, else a both-mover), in the order that makes the
       * pair mean the weaker of the two (R then N is N; N then L is N). */
      rc = ev->kind == ATOM_READ ? atom__periods_acquire(&r->periods, t, ev->target, NULL) : 0;
      if (!rc && th->in_txn && ev->kind == ATOM_READ) rc = atom__reduction_txn_note_sync(r, th, ev);
      if (!rc) rc = access_event(r, th, t, ev);
      if (!rc && th->in_txn && ev->kind == ATOM_WRITE) rc = atom__reduction_txn_note_sync(r, th, ev);
      if (!rc && ev->kind == ATOM_WRITE) rc = atom__periods_release(&r->periods, t, ev->target);
      return rc;
    }
    return access_event(r, th, t, ev);
  }
  default:
    return 0;
  }
}

/* A READ or WRITE of thread t: its class in the race analysis, its place in t's transaction. */
static int access_event(reduction *r, thread_state *th, uint32_t t, const atom_ev *ev) {
  int rc;
  uint32_t k = NONE;
  if (r->mode == MODE_PRECISE) {
    uint32_t s; /* the access's segment */
    if ((rc = atom__periods_of(&r->periods, t, &s))) return rc;
    if ((rc = atom__reduction_key_get(r, ev->target, t, s, th->held, ev->kind == ATOM_WRITE, &k))) return rc;
    access_class *key = &r->key[k];
    if (key->first_index == NO_INDEX) {
      key->first_index = ev->index;
      key->first_loc = ev->loc;
    }
    return th->in_txn ? atom__reduction_txn_note_access(r, th, k, ev) : 0;
  }
  /* If this fails half-way the access stays "shared": a non-mover as soon as the variable is
   * racy, the conservative side. */
  uint32_t seg = NONE;
  rc = atom__reduction_eraser_access(r, ev, th->held, &seg);
  if (th->in_txn && ev->target < r->var_cap) { /* (not if the variable has no state) */
    int rc2 = atom__reduction_key_get(r, ev->target, t, seg, 0, 0, &k);
    if (!rc2) rc2 = atom__reduction_txn_note_access(r, th, k, ev);
    if (!rc) rc = rc2;
  }
  return rc;
}

static void free_txns(reduction *r) {
  for (size_t i = 0; i < r->ntxn; i++)
    atom__mem_free(r->mem, r->txn[i], txn_size(r->txn[i]->nent, r->txn[i]->nrs));
  atom__mem_free(r->mem, r->txn, r->txn_cap * sizeof *r->txn);
  r->txn = NULL;
  r->ntxn = r->txn_cap = 0;
}

/* Free every table (the struct stays, empty). */
static void release_tables(reduction *r) {
  atom__mem *m = r->mem;
  atom__periods_destroy(&r->periods);
  for (uint32_t t = 0; t < r->n_th; t++) {
    thread_state *th = &r->th[t];
    atom__mem_free(m, th->ent, th->ent_cap * sizeof *th->ent);
    atom__mem_free(m, th->rs, th->rs_cap * sizeof *th->rs);
  }
  atom__mem_free(m, r->th, r->th_cap * sizeof *r->th);
  atom__mem_free(m, r->key, r->key_cap * sizeof *r->key);
  atom__idindex_free(&r->class_of, m);
  atom__rb_free(&r->rb);
  free_txns(r);
  for (size_t i = 0; i < r->npend_slots; i++)
    if (r->pend[i]) {
      kept_txn *t = r->pend[i];
      atom__mem_free(m, t, txn_size(t->nent, t->nrs));
    }
  atom__mem_free(m, r->pend, r->pend_cap * sizeof *r->pend);
  atom__mem_free(m, r->pend_free, r->pend_free_cap * sizeof *r->pend_free);
  for (size_t x = 0; x < r->var_cap; x++) {
    atom__mem_free(m, r->var[x].fr, r->var[x].frcap * sizeof *r->var[x].fr);
    atom__mem_free(m, r->var[x].al, r->var[x].alcap * sizeof *r->var[x].al);
  }
  atom__mem_free(m, r->var, r->var_cap * sizeof *r->var);
  atom__mem_free(m, r->w, r->w_cap * sizeof *r->w);
  atom__mem_free(m, r->isn, r->isn_cap * sizeof *r->isn);
  atom__ls_destroy(&r->ls);
  reduction keep = *r;
  memset(r, 0, sizeof *r);
  r->env = keep.env;
  r->own_mem = keep.own_mem;
  r->mem = &r->own_mem;
  r->mode = keep.mode;
  r->w_free = NONE;
  r->done = keep.done;
  r->finished = keep.finished;
  r->max_work = keep.max_work;
  atom__ls_init(&r->ls, keep.mem);
  atom__rb_init(&r->rb, r->mem);
  atom__periods_init(&r->periods, r->mem);
}

static int reduction_finish(void *self) {
  reduction *r = self;
  if (r->finished) return 0;
  if (r->mode == MODE_ERASER) {
    /* Every transaction still waiting passed with the final locksets (000 Thm 4.4). */
    r->finished = 1;
    release_tables(r); /* the session has copied the reports */
    return 0;
  }
  int rc = atom__reduction_race_analysis(r);
  if (rc) return rc;
  if (r->vars_cut)
    atom_env_incomplete(r->env, r->events,
                        "the race analysis stopped after %" PRIu64 " comparisons (max_work=%" PRIu64
                        "): accesses of %" PRIu32 " variable%s were taken as race free, so some "
                        "transactions were not fully checked",
                        r->work, r->max_work, r->vars_cut, r->vars_cut == 1 ? "" : "s");
  /* r->done: transactions already judged by an earlier attempt that ran out of memory */
  uint64_t total = (uint64_t)r->nkey + r->ntxn;
  for (; r->done < r->ntxn; r->done++) {
    if ((r->done & 4095) == 0) (void)atom_env_progress(r->env, r->nkey + r->done, total);
    kept_txn *t = r->txn[r->done];
    if (atom__reduction_grow_isn(r, t->nent)) return ATOM_ENOMEM;
    for (uint32_t k = 0; k < t->nent; k++) r->isn[k] = (uint8_t)r->key[t->ent[k].key].racy;
    form_break b = atom__reduction_first_break(r, t->ent, t->nent, txn_rs(t), t->nrs, (int)t->has_l, &t->first_l,
                             r->isn);
    if (b.what == BREAK_NONE) continue;
    /* found at the event where the form breaks */
    rc = atom__reduction_report_break(r, &b, t->thread, t->begin_index, t->begin_loc, b.f.index);
    if (rc == ATOM_ENOMEM) return rc;
  }
  (void)atom_env_progress(r->env, total, total);
  r->finished = 1;
  release_tables(r); /* the session has copied the reports */
  return 0;
}

/* ---------------------------------------------------------------- lifecycle */

static void reduction_destroy(void *self) {
  reduction *r = self;
  if (!r) return;
  release_tables(r);
  atom__mem_free(r->mem, r, sizeof *r);
}

static int reduction_create(void **self, atom_env *env) {
  static const char *const locksets[] = {"precise", "eraser", NULL}; /* MODE_* order */
  int mode = MODE_PRECISE;
  int rc = atom__arg_choice(env, "lockset", locksets, &mode);
  if (rc) return rc;
  uint64_t max_work = REDUCTION_MAX_WORK;
  rc = atom__arg_count(env, "max_work", 1ull << 62, "2^62", &max_work);
  if (rc) return rc;
  reduction *r = ATOM__NEW_STATE(env, reduction, own_mem);
  if (!r) return atom_env_error(env, ATOM_ENOMEM, "out of memory");
  atom__mem *m = &r->own_mem;
  r->env = env;
  r->mem = m;
  r->mode = mode;
  r->max_work = max_work;
  r->w_free = NONE;
  atom__ls_init(&r->ls, m);
  atom__rb_init(&r->rb, m);
  atom__periods_init(&r->periods, m);
  *self = r;
  return 0;
}

static int reduction_stats(void *self, atom_checker_counters *out) {
  const reduction *r = self;
  out->nodes = r->mode == MODE_PRECISE ? r->ntxn : r->npend;
  out->edges = r->nkey;
  out->clocks = r->periods.n; /* a clock snapshot per segment */
  return 0;
}

static const char *const reduction_keys[] = {"lockset", "max_work", NULL};

const atom_checker atom__checker_reduction = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_ACQUIRE) |
        ATOM_KIND_BIT(ATOM_RELEASE) | ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) |
        ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END),
    "reduction",
    "Lipton reduction: each transaction must be movers around one non-mover (locksets)",
    reduction_keys,
    reduction_create,
    reduction_on_event,
    reduction_finish,
    reduction_destroy,
    reduction_stats,
    .properties = ATOM_CHECKER_PROP_AT_FINISH | ATOM_CHECKER_PROP_PREDICTIVE | ATOM_CHECKER_PROP_COMPLETE,
};
