/* Pushing events: interning, validation and normalization (doc/api.md, "Events"),
 * then dispatch to the checkers that asked for the kind. atom_push_many, which validates runs
 * of events into blocks, is in push_block.c.
 *
 * Normalization, done once here for every checker:
 *  - only the outermost BEGIN/END of a thread is forwarded (inner pairs are counted);
 *  - only the outermost ACQUIRE/RELEASE of a re-entrant lock is forwarded;
 *  - ill-formed events are rejected with their own code and never reach a checker;
 *  - JOIN of a thread with an open transaction first closes it (its events are over). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/env.h"
#include "core/error.h"
#include "core/push_check.h"
#include "core/session.h"
#include "support/assert.h"

/* ---- interning ---- */

int atom__intern_find(const atom_session *s, int space, uint64_t key, uint32_t *id) {
  const atom__intern *in = &s->ids[space];
  if (key < in->direct_cap) {
    uint32_t v = in->direct[key];
    if (!v) return 0;
    *id = v - 1;
    return 1;
  }
  int found = atom__u64map_get(&in->map, key, id);
  ATOM__ASSERT(!found || *id < in->count); /* ids are dense: 0 .. count-1 */
  return found;
}

uint64_t atom__intern_key(const atom_session *s, int space, uint32_t id) {
  const atom__intern *in = &s->ids[space];
  return id < in->count ? in->keys[id] : 0;
}

static int grow_space_state(atom_session *s, int space, uint32_t count) {
  if (space == ATOM_SPACE_THREAD) return ATOM__GROW(&s->mem, s->threads, s->threads_cap, count);
  if (space == ATOM_SPACE_LOCK) return ATOM__GROW(&s->mem, s->locks, s->locks_cap, count);
  return 0;
}

int atom__intern_new(atom_session *s, int space, uint64_t key, uint32_t *id) {
  atom__intern *in = &s->ids[space];
  if (in->count >= s->id_limit) return ATOM_ELIMIT;
  uint32_t nid = in->count;
  /* A failure leaves the key not interned and count as it was (only capacities may grow). */
  if (ATOM__GROW(&s->mem, in->keys, in->keys_cap, (size_t)nid + 1) ||
      grow_space_state(s, space, nid + 1))
    return ATOM_ENOMEM;
  if (key < ATOM__DIRECT_KEYS) {
    if (ATOM__GROW(&s->mem, in->direct, in->direct_cap, (size_t)key + 1)) return ATOM_ENOMEM;
    in->direct[key] = nid + 1;
  } else if (atom__u64map_put(&in->map, &s->mem, key, nid)) {
    return ATOM_ENOMEM;
  }
  in->keys[nid] = key;
  in->count = nid + 1;
  *id = nid;
  return 0;
}

static int intern_slow(atom_session *s, int space, uint64_t key, uint32_t *id) {
  int err = atom__intern_new(s, space, key, id);
  if (err == ATOM_ELIMIT) {
    static const char *const what[] = {"", "thread", "variable", "lock"};
    return atom__error(ATOM_ELIMIT, "event %" PRIu64 ": more than %u distinct %s keys",
                       s->next_index - 1, s->id_limit, what[space]);
  }
  if (err) return atom__error(ATOM_ENOMEM, "out of memory interning a key");
  return 0;
}

/* The id of key, interned if new: the fast paths inline (atom__push_one and its helpers call
 * this on every event), the first sight of a key out of line. */
static inline int intern(atom_session *s, int space, uint64_t key, uint32_t *id) {
  const atom__intern *in = &s->ids[space];
  if (key < in->direct_cap) {
    uint32_t v = in->direct[key];
    if (v) {
      *id = v - 1;
      ATOM__ASSERT(*id < in->count);
      return 0;
    }
  } else if (atom__u64map_get(&in->map, key, id)) {
    ATOM__ASSERT(*id < in->count);
    return 0;
  }
  return intern_slow(s, space, key, id);
}

int atom__intern_id(atom_session *s, int space, uint64_t key, uint32_t *id) {
  return intern(s, space, key, id);
}

const char *atom__key_label(const atom_session *s, int space, uint64_t key, char *buf,
                            size_t size) {
  const char *name = atom__names_get(&s->names, space, key);
  if (name) return name;
  snprintf(buf, size, "%" PRIu64, key);
  return buf;
}

/* ---- dispatch ---- */

int atom__dispatch(atom_session *s, const atom_ev *ev) {
  return atom__dispatch_subs(s, ev, 0);
}

int atom__close_transaction(atom_session *s, uint32_t t, uint64_t index) {
  atom__thread *th = &s->threads[t];
  if (!th->depth) return 0;
  th->depth = 0;
  atom_ev ev = {ATOM_END, t, 0, ATOM_EV_SYNTHETIC, index, 0};
  return atom__dispatch(s, &ev);
}

/* ---- validation ---- */

/* Thread t (key @p key) has its first event accepted: started, and live for the block fill
 * (session.h, thread_live) if its key is small. Out of memory for the table only leaves the
 * thread to the fill's full checks. */
static void thread_start(atom_session *s, uint64_t key, atom__thread *th, uint32_t t) {
  th->started = 1;
  if (key < ATOM__DIRECT_KEYS &&
      !ATOM__GROW(&s->mem, s->thread_live, s->thread_live_cap, (size_t)key + 1))
    s->thread_live[key] = t + 1;
}

/* Reject an ill-formed event: count it, set the message, return err.
 * Message: "event 12: RELEASE of lock m by thread t2: the thread does not hold the lock". */
static int reject(atom_session *s, int err, uint64_t index, const atom_event *e,
                  const char *what) {
  static const char *const space_word[] = {"", "thread", "variable", "lock"};
  char tb[32], xb[32], op[128];
  s->rejected++;
  int space = atom_kind_space(e->kind);
  const char *kind = atom_kind_name((int)e->kind);
  if (!kind)
    snprintf(op, sizeof op, "kind %u (flags 0x%x)", (unsigned)e->kind, (unsigned)e->flags);
  else if (space)
    snprintf(op, sizeof op, "%s of %s %s", kind, space_word[space],
             atom__key_label(s, space, e->target, xb, sizeof xb));
  else
    snprintf(op, sizeof op, "%s", kind);
  return atom__error(err, "event %" PRIu64 ": %s by thread %s: %s", index, op,
                     atom__key_label(s, ATOM_SPACE_THREAD, e->thread, tb, sizeof tb), what);
}

/* Grow thread th's store buffer to twice its size, oldest write first. */
static int pending_grow(atom_session *s, atom__thread *th) {
  size_t cap = th->pending_cap, ncap = cap ? cap * 2 : 8, mask = cap - 1;
  uint32_t *var = atom__mem_alloc(&s->mem, ncap * sizeof *var);
  atom__pending_source *src = NULL;
  if (var && s->keep_pending_src && !(src = atom__mem_alloc(&s->mem, ncap * sizeof *src))) {
    atom__mem_free(&s->mem, var, ncap * sizeof *var);
    var = NULL;
  }
  if (!var) return atom__error(ATOM_ENOMEM, "out of memory recording a pending write");
  for (size_t i = 0; i < th->pending_len; i++) {
    var[i] = th->pending_var[(th->pending_head + i) & mask];
    if (src) src[i] = th->pending_src[(th->pending_head + i) & mask];
  }
  atom__mem_free(&s->mem, th->pending_var, cap * sizeof *var);
  atom__mem_free(&s->mem, th->pending_src, cap * sizeof *src);
  th->pending_var = var;
  th->pending_src = src;
  th->pending_cap = ncap;
  th->pending_head = 0;
  return 0;
}

/* Append @p write (its target a variable id) to thread th's store buffer. */
static inline int pending_push(atom_session *s, atom__thread *th, const atom_ev *write) {
  int err;
  if (th->pending_len == th->pending_cap && (err = pending_grow(s, th))) return err;
  size_t at = (th->pending_head + th->pending_len) & (th->pending_cap - 1);
  th->pending_var[at] = write->target;
  if (th->pending_src)
    th->pending_src[at] = (atom__pending_source){write->index, write->loc, write->flags};
  th->pending_len++;
  return 0;
}

/* What the validation helpers below return besides 0 (dispatch the event) and a negative
 * error (the event is rejected): the event is accepted but swallowed, nothing is dispatched
 * (an inner BEGIN, END, re-entrant ACQUIRE or RELEASE; a COMMIT nobody models). */
#define SWALLOWED 1

/* The only flags: ACQUIRE on a READ, RELEASE on a WRITE (doc/api.md "Synchronization"). */
static inline int event_flags(atom_session *s, uint64_t index, const atom_event *e,
                              uint32_t *evflags) {
  *evflags = 0;
  if (!e->flags) return 0;
  if (e->kind == ATOM_READ && e->flags == ATOM_FLAG_ACQUIRE)
    *evflags = ATOM_EV_ACQUIRE;
  else if (e->kind == ATOM_WRITE && e->flags == ATOM_FLAG_RELEASE)
    *evflags = ATOM_EV_RELEASE;
  else
    return reject(s, ATOM_EKIND, index, e,
                  "invalid flags (ACQUIRE is valid only on a READ, RELEASE only on a WRITE)");
  return 0;
}

/* A COMMIT of variable x: it must commit the thread's oldest pending write, which the
 * checkers may then ask for (s->commit_source). */
static inline int commit_event(atom_session *s, uint64_t index, const atom_event *e,
                               atom__thread *th, uint32_t x) {
  if (!s->track_pending) return SWALLOWED; /* no checker models store buffers */
  if (!th->pending_len)
    return reject(s, ATOM_ENOPENDING, index, e, "no pending write of the thread to commit");
  if (th->pending_var[th->pending_head] != x)
    return reject(s, ATOM_ENOPENDING, index, e,
                  "the thread's oldest pending write is to another variable (commits are "
                  "FIFO)");
  if (th->pending_src) s->commit_source = atom__pending_write(th, (uint32_t)(th - s->threads), 0);
  th->pending_head = (th->pending_head + 1) & (th->pending_cap - 1);
  th->pending_len--;
  return 0;
}

static inline int acquire_event(atom_session *s, uint64_t index, const atom_event *e, uint32_t t,
                                uint32_t *x) {
  int err = intern(s, ATOM_SPACE_LOCK, e->target, x);
  if (err) return err;
  atom__lock *lk = &s->locks[*x];
  if (lk->holder_plus1 == t + 1) {
    if (lk->depth == UINT32_MAX) return reject(s, ATOM_ELIMIT, index, e, "re-entrancy too deep");
    lk->depth++; /* re-entrant: swallowed */
    return SWALLOWED;
  }
  if (lk->holder_plus1)
    return reject(s, ATOM_EHELD, index, e, "the lock is held by another thread");
  lk->holder_plus1 = t + 1;
  lk->depth = 1;
  return 0;
}

static inline int release_event(atom_session *s, uint64_t index, const atom_event *e, uint32_t t,
                                uint32_t *x) {
  uint32_t l;
  if (!atom__intern_find(s, ATOM_SPACE_LOCK, e->target, &l) || s->locks[l].holder_plus1 != t + 1)
    return reject(s, ATOM_ENOTHELD, index, e, "the thread does not hold the lock");
  *x = l;
  if (--s->locks[l].depth) return SWALLOWED; /* inner release of a re-entrant lock */
  s->locks[l].holder_plus1 = 0;
  return 0;
}

/* FORK and JOIN intern the other thread, which may move s->threads. */
static int fork_event(atom_session *s, uint64_t index, const atom_event *e, uint32_t t,
                      uint32_t *x) {
  int err = intern(s, ATOM_SPACE_THREAD, e->target, x);
  if (err) return err;
  atom__thread *child = &s->threads[*x];
  if (*x == t) return reject(s, ATOM_EFORK, index, e, "a thread cannot fork itself");
  if (child->started || child->forked || child->joined)
    return reject(s, ATOM_EFORK, index, e,
                  "the child already exists (FORK must precede every event of the child)");
  child->forked = 1;
  return 0;
}

static int join_event(atom_session *s, uint64_t index, const atom_event *e, uint32_t t,
                      uint32_t *x) {
  int err = intern(s, ATOM_SPACE_THREAD, e->target, x);
  if (err) return err;
  if (*x == t) return reject(s, ATOM_EJOIN, index, e, "a thread cannot join itself");
  if (s->threads[*x].joined) return reject(s, ATOM_EJOIN, index, e, "already joined");
  /* The child's events are over: a transaction it left open ends here, with the JOIN's
   * index (so the indices of later events still count pushes). */
  if (s->threads[*x].depth && (err = atom__close_transaction(s, *x, index))) return err;
  s->threads[*x].joined = 1;
  if (e->target < s->thread_live_cap) s->thread_live[e->target] = 0; /* no longer live */
  return 0;
}

static inline int begin_event(atom_session *s, uint64_t index, const atom_event *e,
                              atom__thread *th) {
  if (th->depth == UINT32_MAX) return reject(s, ATOM_ELIMIT, index, e, "nesting too deep");
  if (th->depth++) return SWALLOWED; /* inner BEGIN */
  th->begin_index = index;
  th->begin_loc = e->loc;
  return 0;
}

static inline int end_event(atom_session *s, uint64_t index, const atom_event *e,
                            atom__thread *th) {
  if (!th->depth) return reject(s, ATOM_EENDNOBEGIN, index, e, "END without a matching BEGIN");
  if (--th->depth) return SWALLOWED; /* inner END */
  return 0;
}

int atom__push_one(atom_session *s, const atom_event *e) {
  uint64_t index = s->next_index++;
  if (e->kind < ATOM_READ || e->kind > ATOM_COMMIT)
    return reject(s, ATOM_EKIND, index, e, "unknown event kind");
  uint32_t evflags;
  int err = event_flags(s, index, e, &evflags);
  if (err) return err;
  uint32_t t = 0, x = 0; /* t: set by atom__intern_id on success (-O3 cannot see it) */
  if ((err = intern(s, ATOM_SPACE_THREAD, e->thread, &t))) return err;
  atom__thread *th = &s->threads[t];
  if (th->joined) return reject(s, ATOM_EJOINED, index, e, "the thread was already joined");
  atom_ev ev = {e->kind, t, 0, evflags, index, e->loc};
  int drain = 0; /* the event empties the thread's store buffer (after its dispatch) */

  switch (e->kind) {
    case ATOM_READ:
      err = intern(s, ATOM_SPACE_VAR, e->target, &x);
      break;
    case ATOM_WRITE:
      if ((err = intern(s, ATOM_SPACE_VAR, e->target, &x))) break;
      if (s->track_pending) {
        atom_ev w = ev;
        w.target = x;
        err = pending_push(s, th, &w);
      }
      break;
    case ATOM_COMMIT:
      if (!(err = intern(s, ATOM_SPACE_VAR, e->target, &x)))
        err = commit_event(s, index, e, th, x);
      break;
    case ATOM_FENCE:
      drain = 1;
      break;
    case ATOM_ACQUIRE:
      err = acquire_event(s, index, e, t, &x);
      drain = 1; /* a locked instruction drains the store buffer (x86) */
      break;
    case ATOM_RELEASE:
      err = release_event(s, index, e, t, &x);
      drain = 1;
      break;
    case ATOM_FORK:
      err = fork_event(s, index, e, t, &x);
      th = &s->threads[t]; /* interning may have moved the array */
      break;
    case ATOM_JOIN:
      err = join_event(s, index, e, t, &x);
      th = &s->threads[t];
      break;
    case ATOM_BEGIN:
      err = begin_event(s, index, e, th);
      break;
    case ATOM_END:
      err = end_event(s, index, e, th);
      break;
    default:
      break;
  }
  if (err < 0) return err;
  if (!th->started) thread_start(s, e->thread, th, t);
  if (err == SWALLOWED) return 0;
  ev.target = x;
  if (!drain && e->kind != ATOM_COMMIT && e->kind != ATOM_JOIN) /* most events: a tail call */
    return s->n_subs[e->kind] ? atom__dispatch(s, &ev) : 0;
  if (!s->n_subs[e->kind]) {
    err = 0;
  } else if (e->kind != ATOM_COMMIT) {
    err = atom__dispatch(s, &ev);
  } else {
    /* The checkers may ask which write this commits, during this dispatch only. */
    s->has_commit_source = 1;
    err = atom__dispatch(s, &ev);
    s->has_commit_source = 0;
  }
  /* A drain empties the buffer after its dispatch, so that the checkers can still read the
   * writes it commits (atom_env_pending_writes); so does the JOIN of a thread, which has no
   * later events. */
  if (drain) atom__pending_drain(&s->threads[t]);
  if (e->kind == ATOM_JOIN) atom__pending_drain(&s->threads[x]);
  return err;
}

ATOM_API int atom_push(atom_session *s, const atom_event *ev) {
  if (!s || !ev) return atom__error(ATOM_EINVAL, "atom_push: NULL argument");
  /* Before the mutex: with ATOM_THREADSAFE the callback's thread holds it already. The
   * thread's marker is fetched once for the check and the call's start. */
  uintptr_t me = atom__self_marker();
  if (atom__reentered_as(s, me)) return atom__reentrant_error("atom_push");
  int threadsafe = s->opt.flags & ATOM_THREADSAFE;
  if (threadsafe) pthread_mutex_lock(&s->lock);
  atom__call_begin_as(s, me);
  int err = atom__check_pushable(s);
  if (!err) err = atom__push_one(s, ev);
  if (atom__call_end_inline(s, threadsafe)) err = atom__freed_error("atom_push");
  return err;
}


#define ATOM_PUSH_HELPER_(fn, kind)                                                   \
  ATOM_API int fn(atom_session *s, uint64_t thread, uint64_t target, uint64_t loc) { \
    atom_event e = {kind, 0, thread, target, loc};                                   \
    return atom_push(s, &e);                                                          \
  }
ATOM_PUSH_HELPER_(atom_read, ATOM_READ)
ATOM_PUSH_HELPER_(atom_write, ATOM_WRITE)
ATOM_PUSH_HELPER_(atom_acquire, ATOM_ACQUIRE)
ATOM_PUSH_HELPER_(atom_release, ATOM_RELEASE)
ATOM_PUSH_HELPER_(atom_fork, ATOM_FORK)
ATOM_PUSH_HELPER_(atom_join, ATOM_JOIN)
ATOM_PUSH_HELPER_(atom_commit, ATOM_COMMIT)
#undef ATOM_PUSH_HELPER_

ATOM_API int atom_begin(atom_session *s, uint64_t thread, uint64_t loc) {
  atom_event e = {ATOM_BEGIN, 0, thread, 0, loc};
  return atom_push(s, &e);
}
ATOM_API int atom_end(atom_session *s, uint64_t thread, uint64_t loc) {
  atom_event e = {ATOM_END, 0, thread, 0, loc};
  return atom_push(s, &e);
}
ATOM_API int atom_fence(atom_session *s, uint64_t thread, uint64_t loc) {
  atom_event e = {ATOM_FENCE, 0, thread, 0, loc};
  return atom_push(s, &e);
}
