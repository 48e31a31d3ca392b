/* block: on_event() records the trace as units (see block.c for what a unit is). */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"

static int ensure_thread(block *b, uint32_t t) {
  if (t < b->th_cap) return 0;
  return ATOM__GROW(b->mem, b->th, b->th_cap, (size_t)t + 1);
}

int atom__block_cur_period(block *b, uint32_t t, uint32_t *p) {
  int rc = atom__periods_of(&b->periods, t, p);
  if (rc) return rc;
  if (*p > PERIOD_LIMIT) return atom_env_error(b->env, ATOM_ELIMIT, "too many thread periods");
  return 0;
}

static int buf_append(block *b, block_thread *th, uint32_t kind, uint32_t target, const atom_ev *ev,
                      uint32_t period) {
  if (th->n == th->cap && ATOM__GROW(b->mem, th->buf, th->cap, th->n + 1)) return ATOM_ENOMEM;
  th->buf[th->n++] = (block_record){ev->index, ev->loc, target, kind | period << 2};
  return 0;
}

static void unit_open(block_thread *th, const atom_ev *ev, uint32_t period) {
  th->open = 1;
  th->n = 0;
  th->begin_index = ev->index;
  th->begin_loc = ev->loc;
  th->pfirst = period;
}

/* Store a finished unit: its records go to the log. */
static int unit_store(block *b, uint32_t t, const block_record *recs, size_t n, uint64_t begin_index,
                      uint64_t begin_loc, uint32_t pfirst, uint32_t plast, int unary, int open) {
  if (n > UINT32_MAX) return atom_env_error(b->env, ATOM_ELIMIT, "transaction too long");
  if (b->unit_n >= UINT32_MAX - 1) return atom_env_error(b->env, ATOM_ELIMIT, "too many units");
  if (ATOM__GROW(b->mem, b->unit, b->unit_cap, b->unit_n + 1)) return ATOM_ENOMEM;
  if (n && ATOM__GROW(b->mem, b->log, b->log_cap, b->log_n + n)) return ATOM_ENOMEM;
  if (n) memcpy(b->log + b->log_n, recs, n * sizeof *recs);
  block_unit *u = &b->unit[b->unit_n++];
  *u = (block_unit){begin_index, begin_loc, b->log_n, (uint32_t)n, t, pfirst, plast, 0,
                 (uint32_t)unary | (uint32_t)open << 1, ATOM__LS_EMPTY, ATOM__LS_EMPTY};
  b->log_n += n;
  return 0;
}

/* A release of `lock`: take the innermost open acquisition of it off stack[0 .. *depth) (positions
 * in buf, oldest first) and return its position, or NONE32 when none is open. */
static uint32_t pop_acquire(const block_record *buf, uint32_t *stack, size_t *depth,
                            uint32_t lock) {
  size_t j = *depth;
  while (j > 0 && buf[stack[j - 1]].target != lock) j--;
  if (j == 0) return NONE32;
  uint32_t acq = stack[j - 1];
  for (; j < *depth; j++) stack[j - 1] = stack[j];
  (*depth)--;
  return acq;
}

/* lock_blocks=no: a lock block outside transactions is not atomic, so each of its accesses is
 * a unary unit; but the unit keeps the acquisitions and releases of the locks held at that
 * access, so that its held set, which decides feasibility (000 Thm 5.1), stays exact. */
static int split_lock_block(block *b, uint32_t t, block_thread *th, int open) {
  size_t n = th->n;
  uint32_t *match = NULL, *stack = NULL; /* match[acq] = position of its release, or n */
  block_record *piece = NULL;
  int rc = 0;
  if (!n) return 0;
  if (!(match = atom__mem_alloc(b->mem, n * sizeof *match)) ||
      !(stack = atom__mem_alloc(b->mem, n * sizeof *stack)) ||
      !(piece = atom__mem_alloc(b->mem, (2 * n + 1) * sizeof *piece))) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  size_t depth = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = rec_kind(&th->buf[i]);
    if (k == REC_ACQUIRE) {
      match[i] = (uint32_t)n;
      stack[depth++] = (uint32_t)i;
    } else if (k == REC_RELEASE) {
      uint32_t acq = pop_acquire(th->buf, stack, &depth, th->buf[i].target);
      if (acq != NONE32) match[acq] = (uint32_t)i;
    }
  }
  depth = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const block_record *r = &th->buf[i];
    uint32_t k = rec_kind(r);
    if (k == REC_ACQUIRE) {
      stack[depth++] = (uint32_t)i;
      continue;
    }
    if (k == REC_RELEASE) {
      (void)pop_acquire(th->buf, stack, &depth, r->target);
      continue;
    }
    size_t m = 0;
    for (size_t j = 0; j < depth; j++) piece[m++] = th->buf[stack[j]];
    piece[m++] = *r;
    for (size_t j = depth; j-- > 0;) /* releases in the order they happen */
      if (match[stack[j]] < n) piece[m++] = th->buf[match[stack[j]]];
    for (size_t a = depth + 1; a + 1 < m; a++) /* insertion sort: depth is small */
      for (size_t c = a + 1; c > depth + 1 && piece[c].index < piece[c - 1].index; c--) {
        block_record x = piece[c];
        piece[c] = piece[c - 1];
        piece[c - 1] = x;
      }
    int forever = 0; /* it keeps a lock for good: the trace ended inside the block */
    for (size_t j = 0; j < depth; j++) forever |= open && match[stack[j]] == n;
    rc = unit_store(b, t, piece, m, r->index, r->loc, rec_period(&piece[0]),
                    rec_period(&piece[m - 1]), 1, forever);
  }
out:
  atom__mem_free(b->mem, match, n * sizeof *match);
  atom__mem_free(b->mem, stack, n * sizeof *stack);
  atom__mem_free(b->mem, piece, (2 * n + 1) * sizeof *piece);
  return rc;
}

/* open: the unit is still open when the trace ends (its thread keeps a lock for good). */
int atom__block_unit_close(block *b, uint32_t t, block_thread *th, uint32_t period, int open) {
  th->open = 0;
  if (th->lock_only) {
    th->lock_only = 0;
    return split_lock_block(b, t, th, open);
  }
  return unit_store(b, t, th->buf, th->n, th->begin_index, th->begin_loc, th->pfirst, period, 0,
                    open);
}

static int note_var(block *b, uint32_t x, uint32_t t, int write) {
  if (x >= b->var_cap && ATOM__GROW(b->mem, b->var, b->var_cap, (size_t)x + 1)) return ATOM_ENOMEM;
  block_var *v = &b->var[x];
  if (!v->thread_plus1) v->thread_plus1 = t + 1;
  else if (v->thread_plus1 != t + 1) v->multi = 1;
  if (write) v->written = 1;
  return 0;
}

static int note_fj(block *b, uint32_t t, uint32_t u) {
  if (ATOM__GROW(b->mem, b->fj, b->fj_cap, b->fj_n + 2)) return ATOM_ENOMEM;
  b->fj[b->fj_n++] = t;
  b->fj[b->fj_n++] = u;
  return 0;
}

int atom__block_on_event(void *self, const atom_ev *ev) {
  block *b = self;
  uint32_t t = ev->thread, p;
  int rc;
  if (b->analysed) return 0;
  if (ev->index >= b->events) b->events = ev->index + 1;
  if ((rc = ensure_thread(b, t))) return rc;
  block_thread *th = &b->th[t];
  switch (ev->kind) {
  case ATOM_BEGIN:
    if ((rc = atom__block_cur_period(b, t, &p))) return rc;
    if (!th->open) unit_open(th, ev, p);
    th->lock_only = 0; /* a transaction inside a lock block extends over the block */
    th->in_txn = 1;
    return 0;
  case ATOM_END:
    th->in_txn = 0;
    if (th->open && th->nheld == 0) {
      if ((rc = atom__block_cur_period(b, t, &p))) return rc;
      return atom__block_unit_close(b, t, th, p, 0);
    }
    return 0;
  case ATOM_ACQUIRE: {
    /* The inside/outside state changes whatever fails below: the unit structure stays right,
     * only a record may be missing after ATOM_ENOMEM. */
    if ((rc = atom__block_cur_period(b, t, &p))) return rc;
    if (ev->target >= b->nlocks) b->nlocks = ev->target + 1;
    if (!th->open) {
      unit_open(th, ev, p);
      th->lock_only = !b->lock_blocks;
    }
    th->nheld++;
    return buf_append(b, th, REC_ACQUIRE, ev->target, ev, p);
  }
  case ATOM_RELEASE: {
    if ((rc = atom__block_cur_period(b, t, &p))) return rc;
    if (th->nheld) th->nheld--;
    int e1 = th->open ? buf_append(b, th, REC_RELEASE, ev->target, ev, p) : 0;
    int e2 = th->open && th->nheld == 0 && !th->in_txn ? atom__block_unit_close(b, t, th, p, 0) : 0;
    return e1 ? e1 : e2;
  }
  case ATOM_READ:
  case ATOM_WRITE: {
    /* Sync order (periods.h): an acquire read is the first event of the period that follows
     * the variable's releases, a release write the last event of its period. */
    if ((ev->flags & ATOM_EV_ACQUIRE) &&
        (rc = atom__periods_acquire(&b->periods, t, ev->target, NULL)))
      return rc;
    if ((rc = atom__block_cur_period(b, t, &p))) return rc;
    if ((rc = note_var(b, ev->target, t, ev->kind == ATOM_WRITE))) return rc;
    /* scope=all: threads that synchronize through a variable are related like fork/join. */
    if (b->scope_all && (ev->flags & (ATOM_EV_ACQUIRE | ATOM_EV_RELEASE)) &&
        b->var[ev->target].thread_plus1 != t + 1 &&
        (rc = note_fj(b, t, b->var[ev->target].thread_plus1 - 1)))
      return rc;
    uint32_t k = ev->kind == ATOM_WRITE ? REC_WRITE : REC_READ;
    if (th->open) {
      rc = buf_append(b, th, k, ev->target, ev, p);
    } else {
      block_record r = {ev->index, ev->loc, ev->target, k | p << 2};
      rc = unit_store(b, t, &r, 1, ev->index, ev->loc, p, p, 1, 0);
    }
    if (!rc && (ev->flags & ATOM_EV_RELEASE))
      rc = atom__periods_release(&b->periods, t, ev->target);
    return rc;
  }
  case ATOM_FORK:
    /* The fork is the last event of the forker's period (periods.h). */
    if ((rc = atom__block_cur_period(b, t, &p)) || (rc = atom__periods_fork(&b->periods, t, ev->target)))
      return rc;
    if (b->scope_all && (rc = note_fj(b, t, ev->target))) return rc;
    if (!th->open) return unit_store(b, t, NULL, 0, ev->index, ev->loc, p, p, 1, 0);
    return 0;
  case ATOM_JOIN:
    /* The join is the first event of the joiner's new period. */
    if ((rc = atom__periods_join(&b->periods, t, ev->target)) || (rc = atom__block_cur_period(b, t, &p)))
      return rc;
    if (b->scope_all && (rc = note_fj(b, t, ev->target))) return rc;
    if (!th->open) return unit_store(b, t, NULL, 0, ev->index, ev->loc, p, p, 1, 0);
    return 0;
  case ATOM_FENCE:
    if (th->open) return 0;
    if ((rc = atom__block_cur_period(b, t, &p))) return rc;
    return unit_store(b, t, NULL, 0, ev->index, ev->loc, p, p, 1, 0);
  default:
    return 0;
  }
}
