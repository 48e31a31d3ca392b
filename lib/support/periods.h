/* Thread periods and their happens-before order: fork/join and sync order (internal).
 *
 * 004 §7.4: the execution of a thread is cut into *periods* by its fork and join events; a
 * period happens before another when it must end before the other starts, which (tracking
 * fork and join only, as the paper does) is the reflexive-transitive closure of program order,
 * "the forker's period before the fork -> the child's first period" and "the child's last
 * period -> the joiner's period after the join". Two events of different threads are
 * concurrent (some feasible schedule may run them in either order, locks aside) iff their
 * periods are unordered.
 *
 * Each period stores a vector-clock snapshot: component u is 1 + the ordinal of the latest
 * period of thread u known to precede it (0: none). A snapshot is dense (components 0 .. len-1,
 * the order test is O(1)) while that costs at most 4 x its nonzero components + 16 words, and
 * sparse otherwise (sorted (thread, component) pairs, the test is a binary search): so memory is
 * O(the nonzero components of all snapshots), linear in the periods when threads know few
 * others (many high-numbered threads that each fork no longer cost threads^2), whatever the
 * thread ids; a chain of forks, where each thread follows all earlier ones, is quadratic in any
 * vector-clock representation.
 *
 * Sync order (doc/api.md "Synchronization") extends the same order: a release write of
 * variable x ends its thread's period as a fork does, and x keeps a clock of every period that
 * ended in a release of x; an acquire read of x moves its thread to a new period that follows
 * that clock (the join of all earlier releases of x), as a join does. An acquire that learns
 * nothing new stays in the current period, so spinning on a flag costs no periods.
 *
 * Usage: call atom__periods_of() for the thread of every event (it creates a root thread's
 * first period on demand) and atom__periods_fork()/atom__periods_join() at FORK/JOIN;
 * atom__periods_acquire() BEFORE taking the period of an acquire read (the read is the first
 * event of the new period) and atom__periods_release() AFTER taking the period of a release
 * write (the write is the last event of its period). Every
 * allocation goes through the owner's atom__mem; on ATOM_ENOMEM nothing changed. Checkers that
 * need fork/join concurrency (commit-node, block) share this. */
#ifndef ATOM_SUPPORT_PERIODS_H
#define ATOM_SUPPORT_PERIODS_H

#include <stddef.h>
#include <stdint.h>

#include "support/mem.h"

#define ATOM__PERIOD_NONE UINT32_MAX

typedef struct atom__period {
  uint32_t thread;
  uint32_t ordinal; /* 0, 1, 2, ... within its thread */
  uint32_t vc_off;  /* snapshot: pool[vc_off .. ) */
  uint32_t vc_len;  /* dense: components 0 .. vc_len-1; with ATOM__PERIOD_SPARSE: that many
                       (thread, component) pairs, by increasing thread */
} atom__period;

#define ATOM__PERIOD_SPARSE 0x80000000u

typedef struct atom__periods {
  atom__mem *mem;
  atom__period *p;
  size_t n, cap;
  uint32_t *pool;
  size_t pool_len, pool_cap;
  uint32_t *cur; /* per thread: its current period, ATOM__PERIOD_NONE before its first */
  size_t cur_cap;
  uint8_t *cut;  /* per thread: its current period ended in a release; its next event starts
                    a new one */
  size_t cut_cap;
  struct atom__relclock {
    uint32_t *vc; /* same encoding as a snapshot: 1 + ordinal of the latest release period */
    uint32_t len, cap;
  } *rel;        /* per variable */
  size_t rel_cap;
  uint32_t *tmp;     /* scratch of add_period: a dense clock, zero between calls */
  size_t tmp_cap;
  uint32_t *touched; /* scratch of add_period: its nonzero components */
  size_t touched_cap;
} atom__periods;

void atom__periods_init(atom__periods *ps, atom__mem *mem);
void atom__periods_destroy(atom__periods *ps);

/* atom__periods_of when t has no period yet or its period ended in a release. */
int atom__periods_of_slow(atom__periods *ps, uint32_t t, uint32_t *out);

/* The current period of thread t (created as a root's first period if t has none). Inline:
 * checkers ask it for every access, and nearly always the period exists already. */
static inline int atom__periods_of(atom__periods *ps, uint32_t t, uint32_t *out) {
  if (t < ps->cur_cap && t < ps->cut_cap && ps->cur[t] != ATOM__PERIOD_NONE && !ps->cut[t]) {
    *out = ps->cur[t];
    return 0;
  }
  return atom__periods_of_slow(ps, t, out);
}

/* Thread t forks u: t moves to a new period; u's first period follows t's old one. */
int atom__periods_fork(atom__periods *ps, uint32_t t, uint32_t u);

/* Thread t joins u: t moves to a new period that follows u's current one. */
int atom__periods_join(atom__periods *ps, uint32_t t, uint32_t u);

/* Thread t releases variable x (a release write, in t's current period): x's clock learns the
 * period, which ends here (t's next event starts a new one). */
int atom__periods_release(atom__periods *ps, uint32_t t, uint32_t x);

/* Thread t acquires variable x (an acquire read): t moves to a new period that follows every
 * earlier release of x, unless its current period already does. *moved (if not NULL) is set
 * to 1 when t moved to a new period, 0 otherwise. */
int atom__periods_acquire(atom__periods *ps, uint32_t t, uint32_t x, int *moved);

/* Component u of a sparse snapshot (binary search). */
uint32_t atom__periods_sparse_get(const atom__periods *ps, const atom__period *q, uint32_t u);

/* Component u of period q's snapshot. */
static inline uint32_t atom__periods_component(const atom__periods *ps, const atom__period *q,
                                               uint32_t u) {
  if (!(q->vc_len & ATOM__PERIOD_SPARSE)) return u < q->vc_len ? ps->pool[q->vc_off + u] : 0;
  return atom__periods_sparse_get(ps, q, u);
}

/* 1 if period a happens before period b (a != b), else 0. */
static inline int atom__periods_before(const atom__periods *ps, uint32_t a, uint32_t b) {
  const atom__period *pa = &ps->p[a], *pb = &ps->p[b];
  if (pa->thread == pb->thread) return pa->ordinal < pb->ordinal;
  return atom__periods_component(ps, pb, pa->thread) > pa->ordinal;
}

/* 1 if events in periods a and b may run in either order: different threads, unordered. */
static inline int atom__periods_concurrent(const atom__periods *ps, uint32_t a, uint32_t b) {
  return ps->p[a].thread != ps->p[b].thread && !atom__periods_before(ps, a, b) &&
         !atom__periods_before(ps, b, a);
}

#endif
