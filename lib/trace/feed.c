/* atom_trace_feed(): a reader's events into a session, in batches. */
#include <inttypes.h>
#include <stdio.h>

#include "atomicity/error.h"
#include "atomicity/session.h"
#include "atomicity/trace.h"
#include "core/error.h"
#include "core/push_vouched.h"
#include "support/assert.h"
#include "trace/std_reader.h"

/* The session's verdicts on ill-formed events: the event is dropped, the session goes on. */
static int is_rejection(int err) {
  switch (err) {
    case ATOM_EKIND:
    case ATOM_EENDNOBEGIN:
    case ATOM_ENOTHELD:
    case ATOM_EHELD:
    case ATOM_EJOINED:
    case ATOM_ENOPENDING:
    case ATOM_EFORK:
    case ATOM_EJOIN: return 1;
    default: return 0;
  }
}

/* Hand every name the reader learned since the last call to the session, so that each is
 * registered before the first event that uses it is pushed; with it the variable's atomic set,
 * if the sets file or the prefix policy gives it one (sets.c). */
static int register_names(atom_session *s, atom_trace_reader *r) {
  uint64_t *named = atom__trace_reader_named(r);
  for (int what = ATOM_SPACE_THREAD; what <= ATOM_SPACE_LOCK; what++) {
    uint64_t n = atom__trace_reader_name_count(r, what);
    while (named[what - 1] < n) {
      uint64_t key = named[what - 1] + 1;
      const char *name = atom_trace_reader_name(r, what, key);
      int rc = atom_set_name(s, what, key, name);
      uint64_t set;
      if (!rc && what == ATOM_SPACE_VAR) {
        rc = atom__trace_sets_lookup(*atom__trace_reader_sets(r), atom__trace_reader_mem(r),
                                     name, &set);
        rc = rc > 0 ? atom_declare_set(s, key, set) : rc;
      }
      if (rc) return rc;
      named[what - 1] = key;
    }
  }
  /* "#name" directives after the token names, so that the display name wins. */
  size_t n, *done;
  const atom__trace_directive *d = atom__trace_reader_directives(r, &n, &done);
  for (; *done < n; ++*done) {
    int rc = atom_set_name(s, d[*done].space, d[*done].key, d[*done].text);
    if (rc) return rc;
  }
  return 0;
}

ATOM_API int atom_trace_feed(atom_session *s, atom_trace_reader *r, uint64_t max_events,
                             uint64_t *pushed, atom_trace_reject_fn on_reject, void *payload) {
  uint64_t done = 0;
  int rc = 0;
  if (pushed) *pushed = 0;
  if (!s || !r) return atom__error(ATOM_EINVAL, "atom_trace_feed: NULL argument");
  atom__trace_batch *b = atom__trace_reader_batch(r);
  if (!b) return ATOM_ENOMEM;
  for (;;) {
    if (max_events && done >= max_events) {
      rc = 1;
      break;
    }
    if (b->head == b->count) {
      uint64_t left = max_events ? max_events - done : 0;
      int st = atom__trace_reader_fill(r, left > SIZE_MAX ? SIZE_MAX : (size_t)left);
      if (b->count == 0) {
        rc = st; /* 0 at end of input, or the reader's error */
        break;
      }
      /* A parse error after some events: those are pushed first; the error is sticky and
       * ends the next fill. */
    }
    rc = register_names(s, r);
    if (rc) break;
    size_t n = b->count - b->head, took = 0;
    if (max_events && n > max_events - done) n = (size_t)(max_events - done);
    /* the keys of the batch's events number the reader's names (std_reader.h): the session
     * may skip testing them against its tables */
    uint64_t thread_max = atom__trace_reader_name_count(r, ATOM_SPACE_THREAD);
    uint64_t var_max = atom__trace_reader_name_count(r, ATOM_SPACE_VAR);
#if defined(ATOM_ASSERTIONS) && ATOM_ASSERTIONS
    for (size_t i = 0; i < n; i++) { /* what the reader vouches for: a key above reads out of bounds */
      const atom_event *e = &b->ev[b->head + i];
      ATOM__ASSERT(e->thread <= thread_max);
      ATOM__ASSERT((e->kind != ATOM_READ && e->kind != ATOM_WRITE) || e->target <= var_max);
    }
#endif
    rc = atom__push_many_bounded(s, b->ev + b->head, n, &took, thread_max, var_max);
    b->head += took;
    done += took;
    if (took) atom__trace_reader_set_line(r, b->line[b->head - 1]);
    if (rc == 0) continue;
    if (!is_rejection(rc) || took == 0) break;
    if (on_reject) {
      char msg[640];
      snprintf(msg, sizeof msg, "%s:%" PRIu64 ": %s", atom__trace_reader_display(r),
               b->line[b->head - 1], atom_last_error());
      if (on_reject(r, rc, msg, payload)) {
        rc = atom__error(ATOM_ECALLBACK, "%s:%" PRIu64 ": stopped by the reject callback",
                         atom__trace_reader_display(r), b->line[b->head - 1]);
        break;
      }
    }
    rc = 0;
  }
  if (pushed) *pushed = done;
  return rc;
}
