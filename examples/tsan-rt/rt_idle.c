/* Accesses while no transaction is open (skip_idle=yes; doc/tsan-rt.md, "How events are
 * ordered").
 *
 * A cycle of transactions (a violation for aerodrome and velodrome, which judge conflict
 * serializability) leaves a transaction X and comes back into it: every event on it lies, in
 * the recorded order, between two events of X, so X is open when it happens. An access made
 * while no transaction is open in any thread is on no cycle. Leaving it out removes no edge
 * between the other events (conflicts are between pairs of events, not "the last access"),
 * so every cycle stays and none appears: the verdicts are the same. A hook that reads 0 while
 * another thread begins a transaction ran, in real time, before that BEGIN was counted: its
 * access belongs before the BEGIN (an order equivalent to the recorded one, as the owned
 * buffer's are). Not for the other checkers, which reason about other orders of the events
 * (the predictive ones) or about every conflicting pair (race-automata, tso): with any of
 * them attached, every access is recorded.
 *
 * The count of open transactions is kept by rt_push_event (rt_core.c) under the event lock;
 * the test (rt_idle, in rt.h) is inline in the access hooks and takes no lock. */
#include <string.h>

#include "rt.h"

int rt_skip_idle;
long rt_open_txns;

/* @return 1 when every attached checker is aerodrome or velodrome (any variant). */
static int only_serializability_checkers(const rt_options *o) {
  for (size_t i = 0; i < o->n_checkers; i++) {
    const char *c = o->checkers[i];
    size_t n = strcspn(c, ":");
    if (!(n == 9 && !strncmp(c, "aerodrome", 9)) && !(n == 9 && !strncmp(c, "velodrome", 9)))
      return 0;
  }
  return o->n_checkers > 0;
}

void rt_idle_setup(const rt_options *o) {
  /* Not with a recording (it keeps every access), a perturbed schedule (it watches every
   * access) or lock_blocks=yes (the checkers then form units of lock blocks themselves: the
   * runtime does not see those transactions open). */
  rt_skip_idle = o->skip_idle && !o->record && o->schedule != RT_SCHEDULE_PERTURB &&
                 !o->lock_blocks && only_serializability_checkers(o);
}
