/* What push.c (single events) and push_block.c (blocks) share: the session state checks, the
 * per-kind dispatch and the store-buffer drain (lib/core only). In a header so that both paths
 * inline them: they run on every event. */
#ifndef ATOM_CORE_PUSH_CHECK_H
#define ATOM_CORE_PUSH_CHECK_H

#include <inttypes.h>
#include <time.h>

#include "core/env.h"
#include "core/error.h"
#include "core/session.h"

static inline uint64_t atom__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A checker that runs out of memory or reaches one of its limits is disabled rather than
 * failing the push: the event was accepted by the session and the other checkers, so the
 * caller must not push it again (a push that returns ATOM_ENOMEM has changed nothing), and a
 * checker that missed an event cannot go on deciding. atom_finish reports the disabled
 * checkers; atom_checker_status_get says where and why. Other errors a checker returns reach
 * the caller. */
static inline int atom__checker_failed(const atom__sub *sub, const atom_ev *ev, int err) {
  if (err != ATOM_ENOMEM && err != ATOM_ELIMIT) return err;
  atom__env_disable(sub->env, ev->index, err);
  return 0;
}

/* Hand ev to its kind's subscribers, in attach order; skip_batched leaves out those that take
 * blocks (they get ev with the rest of its block). Returns the first error to pass on. */
static inline int atom__dispatch_subs(atom_session *s, const atom_ev *ev, int skip_batched) {
  const atom__sub *sub = s->subs[ev->kind];
  size_t n = s->n_subs[ev->kind];
  int first_err = 0;
  int profile = s->opt.flags & ATOM_PROFILE;
  for (size_t i = 0; i < n; i++) {
    if (sub[i].env->disabled || (skip_batched && sub[i].batched)) continue;
    uint64_t t0 = profile ? atom__now_ns() : 0;
    int err = sub[i].on_event(sub[i].self, ev);
    if (profile) sub[i].env->time_ns += atom__now_ns() - t0;
    if (err) err = atom__env_rc(sub[i].env, "on_event", err);
    if (err < 0 && (err = atom__checker_failed(&sub[i], ev, err)) < 0 && !first_err)
      first_err = err;
  }
  return first_err;
}

/* Empty thread th's store buffer (a drain: FENCE, an outermost ACQUIRE or RELEASE, a JOIN). */
static inline void atom__pending_drain(atom__thread *th) {
  th->pending_len = 0;
  th->pending_head = 0;
}

/* ATOM_ESTATE once the session is finished: no event is taken any more. */
static inline int atom__check_pushable(atom_session *s) {
  if (s->finished)
    return atom__error(ATOM_ESTATE, "event %" PRIu64 ": the session is finished",
                       s->next_index);
  return 0;
}

/* Validate, normalize and dispatch one event at once (push.c): atom_push's work, and that of
 * atom_push_many for an event a block cannot hold. */
int atom__push_one(atom_session *s, const atom_event *e);

#endif
