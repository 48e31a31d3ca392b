/* Pushing events: interning, validation and normalization (doc/api.md, "Events"),
 * then dispatch to the checkers that asked for the kind.
 *
 * Normalization, done once here for every checker:
 *  - only the outermost BEGIN/END of a thread is forwarded (inner pairs are counted);
 *  - only the outermost ACQUIRE/RELEASE of a re-entrant lock is forwarded;
 *  - ill-formed events are rejected with their own code and never reach a checker;
 *  - JOIN of a thread with an open transaction first closes it (its events are over). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/env.h"
#include "core/error.h"
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

static int intern_slow(atom_session *s, int space, uint64_t key, uint32_t *id) {
  atom__intern *in = &s->ids[space];
  if (in->count >= s->id_limit) {
    static const char *const what[] = {"", "thread", "variable", "lock"};
    return atom__error(ATOM_ELIMIT, "event %" PRIu64 ": more than %u distinct %s keys",
                       s->next_index - 1, s->id_limit, what[space]);
  }
  uint32_t nid = in->count;
  if (ATOM__GROW(&s->mem, in->keys, in->keys_cap, (size_t)nid + 1) ||
      grow_space_state(s, space, nid + 1))
    return atom__error(ATOM_ENOMEM, "out of memory interning a key");
  if (key < ATOM__DIRECT_KEYS) {
    if (ATOM__GROW(&s->mem, in->direct, in->direct_cap, (size_t)key + 1))
      return atom__error(ATOM_ENOMEM, "out of memory interning a key");
    in->direct[key] = nid + 1;
  } else if (atom__u64map_put(&in->map, &s->mem, key, nid)) {
    return atom__error(ATOM_ENOMEM, "out of memory interning a key");
  }
  in->keys[nid] = key;
  in->count = nid + 1;
  *id = nid;
  return 0;
}

/* The id of key, interned if new: the fast paths inline (push_one and its helpers call this
 * on every event), the first sight of a key out of line. */
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

static uint64_t now_ns(void) {
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
static int checker_failed(const atom__sub *sub, const atom_ev *ev, int err) {
  if (err != ATOM_ENOMEM && err != ATOM_ELIMIT) return err;
  atom__env_disable(sub->env, ev->index, err);
  return 0;
}

/* Hand ev to its kind's subscribers, in attach order; skip_batched leaves out those that take
 * blocks (they get ev with the rest of its block). Returns the first error to pass on. */
static inline int dispatch_subs(atom_session *s, const atom_ev *ev, int skip_batched) {
  const atom__sub *sub = s->subs[ev->kind];
  size_t n = s->n_subs[ev->kind];
  int first_err = 0;
  int profile = s->opt.flags & ATOM_PROFILE;
  for (size_t i = 0; i < n; i++) {
    if (sub[i].env->disabled || (skip_batched && sub[i].batched)) continue;
    uint64_t t0 = profile ? now_ns() : 0;
    int err = sub[i].on_event(sub[i].self, ev);
    if (profile) sub[i].env->time_ns += now_ns() - t0;
    if (err) err = atom__env_rc(sub[i].env, "on_event", err);
    if (err < 0 && (err = checker_failed(&sub[i], ev, err)) < 0 && !first_err)
      first_err = err;
  }
  return first_err;
}

int atom__dispatch(atom_session *s, const atom_ev *ev) { return dispatch_subs(s, ev, 0); }

int atom__close_transaction(atom_session *s, uint32_t t, uint64_t index) {
  atom__thread *th = &s->threads[t];
  if (!th->depth) return 0;
  th->depth = 0;
  atom_ev ev = {ATOM_END, t, 0, ATOM_EV_SYNTHETIC, index, 0};
  return atom__dispatch(s, &ev);
}

/* ---- validation ---- */

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

static inline void pending_drain(atom__thread *th) {
  th->pending_len = 0;
  th->pending_head = 0;
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

static int push_one(atom_session *s, const atom_event *e) {
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
  th->started = 1;
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
  if (drain) pending_drain(&s->threads[t]);
  if (e->kind == ATOM_JOIN) pending_drain(&s->threads[x]);
  return err;
}

static int check_pushable(atom_session *s) {
  if (s->finished)
    return atom__error(ATOM_ESTATE, "event %" PRIu64 ": the session is finished",
                       s->next_index);
  return 0;
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
  int err = check_pushable(s);
  if (!err) err = push_one(s, ev);
  if (atom__call_end_inline(s, threadsafe)) err = atom__freed_error("atom_push");
  return err;
}

/* ---- blocks ----
 *
 * atom_push_many validates a run of events into s->block and dispatches the block at once:
 * one call per block to a checker with on_events, and the block event by event, in order, to
 * the others. Every semantic of single pushes is kept, as follows.
 *
 * - Order. Each checker gets the events of its kinds in event order. Within a block the
 *   checkers without on_events get each event in attach order, as atom_push does, and then
 *   each checker with on_events gets the whole block (the order of checkers for one event
 *   was never promised; reports of one checker keep their order).
 * - What goes into a block (block_fill): only events whose validation is known to pass and
 *   that need nothing at dispatch time beyond the event itself: READ, WRITE, ACQUIRE,
 *   RELEASE, BEGIN, END and FENCE without flags, of a known thread, with a known target. Any
 *   other event ends the block: the block is dispatched, then the event takes the single
 *   path (push_one) and is dispatched at once. So:
 *   - an ill-formed event reaches push_one, which rejects it exactly as atom_push does,
 *     after every event before it was dispatched;
 *   - a new key is interned only with the block empty, so atom_env_count() and the id
 *     tables are, for every event of a block, what they were when it was validated;
 *   - COMMIT (the checkers may ask for its write, during its dispatch only), FORK and JOIN
 *     (a JOIN may close the child's transaction with a synthetic END, dispatched at once)
 *     take the single path; so does every event while a checker reads store buffers
 *     (ATOM_CHECKER_PROP_STORE_BUFFER: it sees the buffer as of each event), and a WRITE
 *     that finds its thread's store buffer full (growing it may fail). A drain with no
 *     reader of the buffers (ACQUIRE, RELEASE, FENCE) empties it at validation: only COMMIT
 *     validation, later in event order, looks at it.
 * - Checker errors. ATOM_ENOMEM and ATOM_ELIMIT disable the checker at the failing event's
 *   index, as atom_push does; the rest of the block still reaches the other checkers. Another
 *   error is returned after the whole block was dispatched (the session took its events, so
 *   every checker must see them): the first one in event order, with its message; `done`
 *   then counts the events up to the end of that block (doc/api.md).
 * - A session freed from a callback: nothing more is dispatched; `done` counts the events up
 *   to the one being dispatched (for a checker taking the whole block: the whole block).
 * - ATOM_PROFILE times each checker's share of the block. */

/* The dense id of an interned key, without interning (1 if found), from a direct table held
 * in locals (dir, cap) and the hash map for the other keys. */
static inline int lookup(const uint32_t *dir, size_t cap, const atom__intern *in, uint64_t key,
                         uint32_t *id) {
  if (key < cap) {
    uint32_t v = dir[key];
    *id = v - 1;
    return v != 0;
  }
  return atom__u64map_get(&in->map, key, id);
}

/* The first 8 bytes of an atom_event (kind, flags) of @p kind with flags 0, read as one
 * integer in this machine's byte order (a constant once inlined). */
static inline uint64_t kind_word(uint32_t kind) {
  const uint32_t w[2] = {kind, 0};
  uint64_t v;
  memcpy(&v, w, sizeof v);
  return v;
}

/* Validate events from ev[0] on into the block while they are events a block may hold (see
 * above) and the block has room; return how many were taken. The first event not taken is
 * left untouched. No key is interned here and no thread is joined, so nothing moves and a
 * thread that passed the checks once passes them for the whole call: the direct tables'
 * addresses and sizes are copied into locals (the compiler cannot keep s's fields in registers
 * across the stores below), and the thread of the previous event is kept with its key, so a
 * run of events of one thread looks it up once. The block's length, kinds and the next index
 * are written back at the end. */
static inline __attribute__((always_inline)) size_t block_fill_with(atom_session *s,
                                                                    const atom_event *ev,
                                                                    size_t n,
                                                                    const int track_pending) {
  const atom__intern *tid = &s->ids[ATOM_SPACE_THREAD], *vid = &s->ids[ATOM_SPACE_VAR],
                     *lid = &s->ids[ATOM_SPACE_LOCK];
  const uint32_t *const tdir = tid->direct, *const vdir = vid->direct, *const ldir = lid->direct;
  const size_t tcap = tid->direct_cap, vcap = vid->direct_cap, lcap = lid->direct_cap;
  atom__thread *const threads = s->threads;
  atom__lock *const locks = s->locks;
  atom_ev *const block = s->block;
  size_t room = ATOM__BLOCK - s->block_len;
  uint64_t index = s->next_index;
  uint32_t kinds = s->block_kinds;
  if (n > room) n = room;
  if (!n) return 0;
  atom_ev *o = block + s->block_len; /* where the next event goes */
  const atom_event *e = ev, *const end = ev + n;
  for (; e != end; e++) {
    /* kind and flags in one load: with flags 0 it equals the kind, so every comparison with a
     * kind below also checks flags == 0, and an event with flags falls to the last else */
    uint64_t kf;
    memcpy(&kf, e, sizeof kf);
    uint32_t kind, x = 0; /* kind: set by the branch that knows it */
    /* The thread looked up for every event: keeping the previous event's thread and
     * skipping the lookup when it is the same saved 3 instructions an event but mispredicted
     * the test on traces that switch threads every few events (0.37 more mispredictions an
     * event, slower in time). */
    uint32_t t;
    if (!lookup(tdir, tcap, tid, e->thread, &t)) break;
    atom__thread *th = &threads[t];
    if (th->joined) break;
    int forward = 1;
    /* the accesses first: most events are accesses */
    if (kf == kind_word(ATOM_READ) || kf == kind_word(ATOM_WRITE)) {
      /* READ and WRITE on one path with no branch on which it is: traces mix them at random,
       * and a mispredicted branch costs more than this whole path */
      kind = e->kind;
      kinds |= ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE);
      if (!lookup(vdir, vcap, vid, e->target, &x)) break;
      if (track_pending) {
        /* A WRITE goes into the store buffer if it has room (growing it may fail: the single
         * path). The slot after the pending writes is written for a READ too, which does not
         * count it: that slot holds nothing. */
        size_t plen = th->pending_len, pcap = th->pending_cap;
        uint32_t is_write = kind == ATOM_WRITE;
        if (plen == pcap) {
          if (is_write) break;
        } else {
          th->pending_var[(th->pending_head + plen) & (pcap - 1)] = x;
        }
        th->pending_len = plen + is_write;
      }
    } else if (kf == kind_word(ATOM_BEGIN)) {
      kind = ATOM_BEGIN;
      kinds |= ATOM_KIND_BIT(ATOM_BEGIN);
      if (th->depth == UINT32_MAX) break;
      if (th->depth++) {
        forward = 0; /* inner BEGIN */
      } else {
        th->begin_index = index;
        th->begin_loc = e->loc;
      }
    } else if (kf == kind_word(ATOM_END)) {
      kind = ATOM_END;
      kinds |= ATOM_KIND_BIT(ATOM_END);
      if (!th->depth) break;
      forward = !--th->depth;
    } else if (kf == kind_word(ATOM_ACQUIRE)) {
      kind = ATOM_ACQUIRE;
      kinds |= ATOM_KIND_BIT(ATOM_ACQUIRE);
      if (!lookup(ldir, lcap, lid, e->target, &x)) break;
      atom__lock *lk = &locks[x];
      if (lk->holder_plus1 == t + 1) {
        if (lk->depth == UINT32_MAX) break;
        lk->depth++; /* re-entrant: swallowed, and no drain (as push_one) */
        forward = 0;
      } else {
        if (lk->holder_plus1) break;
        lk->holder_plus1 = t + 1;
        lk->depth = 1;
        if (track_pending) pending_drain(th);
      }
    } else if (kf == kind_word(ATOM_RELEASE)) {
      kind = ATOM_RELEASE;
      kinds |= ATOM_KIND_BIT(ATOM_RELEASE);
      if (!lookup(ldir, lcap, lid, e->target, &x)) break;
      atom__lock *lk = &locks[x];
      if (lk->holder_plus1 != t + 1) break;
      if (--lk->depth) {
        forward = 0;
      } else {
        lk->holder_plus1 = 0;
        if (track_pending) pending_drain(th);
      }
    } else if (kf == kind_word(ATOM_FENCE)) {
      kind = ATOM_FENCE;
      kinds |= ATOM_KIND_BIT(ATOM_FENCE);
      if (track_pending) pending_drain(th);
    } else {
      break; /* FORK, JOIN, COMMIT, an unknown kind, flags */
    }
    th->started = 1;
    /* Written always (o is in the block: fewer than ATOM__BLOCK events are in it here) and
     * kept only when forwarded: no branch on what the trace does. An event of a kind nobody
     * takes is kept too (dropping it cost more per event than the flush's filter by kind). */
    /* flags not written: 0 in every slot of the block since the session was zeroed, and
     * only this loop writes the block (the checkers get it const) */
    ATOM__ASSERT(o->flags == 0);
    o->kind = kind;
    o->thread = t;
    o->target = x;
    o->index = index;
    o->loc = e->loc;
    o += forward;
    index++;
  }
  s->block_len = (size_t)(o - block);
  s->block_kinds = kinds;
  s->next_index = index;
  return (size_t)(e - ev);
}

/* block_fill_with, compiled once for each value of s->track_pending (a constant then: one
 * test and one register less on the accesses' path). */
static size_t block_fill(atom_session *s, const atom_event *ev, size_t n) {
  return s->track_pending ? block_fill_with(s, ev, n, 1) : block_fill_with(s, ev, n, 0);
}

/* The first error of a block in event order, with its message (later checkers may overwrite
 * the thread's last-error message before the block is over). */
typedef struct block_error {
  int err;
  uint64_t index;
  char msg[512];
} block_error;

static void block_error_note(block_error *be, int err, uint64_t index) {
  if (!err || (be->err && be->index <= index)) return;
  be->err = err;
  be->index = index;
  snprintf(be->msg, sizeof be->msg, "%s", atom_last_error());
}

/* The block to env's on_events: the events of its kinds, the rest of the block after an
 * error other than ENOMEM/ELIMIT (on_event would have had them too). */
static void block_to_checker(atom_session *s, atom_env *env, const atom_ev *ev, size_t n,
                             block_error *be) {
  const atom_checker *vt = env->vt;
  if (s->block_kinds & ~vt->event_mask) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (vt->event_mask & ATOM_KIND_BIT(ev[i].kind)) s->block_scratch[m++] = ev[i];
    ev = s->block_scratch;
    n = m;
  }
  while (n && !env->disabled && !s->free_pending) {
    size_t at = n;
    int err = vt->on_events(env->self, ev, n, &at);
    if (!err) break;
    if (at >= n) at = n - 1;
    err = atom__env_rc(env, "on_events", err);
    if (err == ATOM_ENOMEM || err == ATOM_ELIMIT)
      atom__env_disable(env, ev[at].index, err);
    else
      block_error_note(be, err, ev[at].index);
    ev += at + 1;
    n -= at + 1;
  }
}

/* Dispatch the block and empty it. Returns the first error in event order (0 if none). */
static int block_flush(atom_session *s) {
  size_t n = s->block_len;
  if (!n) return 0;
  block_error be;
  be.err = 0;
  s->block_len = 0;
  /* The checkers that take one event at a time, event by event (as atom__dispatch). */
  int skip = s->any_batched;
  uint32_t loop_kinds = s->loop_kinds;
  for (size_t i = 0; i < n && (s->block_kinds & loop_kinds); i++) {
    if (!(loop_kinds & ATOM_KIND_BIT(s->block[i].kind))) continue;
    block_error_note(&be, dispatch_subs(s, &s->block[i], skip), s->block[i].index);
    if (s->free_pending) {
      s->free_index = s->block[i].index; /* the later events are never dispatched */
      break;
    }
  }
  for (size_t i = 0; skip && i < s->n_envs && !s->free_pending; i++) {
    atom_env *env = s->envs[i];
    if (!env->vt->on_events || env->disabled || !(env->vt->event_mask & s->block_kinds))
      continue;
    int profile = s->opt.flags & ATOM_PROFILE;
    uint64_t t0 = profile ? now_ns() : 0;
    block_to_checker(s, env, s->block, n, &be);
    if (profile) env->time_ns += now_ns() - t0;
  }
  s->block_kinds = 0;
  if (be.err) atom__error(be.err, "%s", be.msg);
  return be.err;
}

/* atom_push_many's work: *done is set to the number of events taken (see "blocks" above for
 * a session freed during a block). */
static int push_blocks(atom_session *s, const atom_event *ev, size_t n, size_t *done) {
  int err = 0, batch = !s->keep_pending_src;
  uint64_t base = s->next_index; /* every event taken, accepted or not, uses one index */
  size_t i = 0;
  s->free_index = UINT64_MAX;
  while (i < n) {
    if (batch) {
      i += block_fill(s, ev + i, n - i);
      if (s->block_len == ATOM__BLOCK) {
        if ((err = block_flush(s)) || s->free_pending) break;
        continue;
      }
      if (i == n) break;
    }
    /* ev[i] needs the single path: the block before it first */
    if ((err = block_flush(s)) || s->free_pending) break;
    err = push_one(s, &ev[i++]);
    if (err || s->free_pending) break;
  }
  if (!err && !s->free_pending) err = block_flush(s);
  *done = i;
  if (s->free_pending && s->free_index != UINT64_MAX) *done = (size_t)(s->free_index - base) + 1;
  return err;
}

ATOM_API int atom_push_many(atom_session *s, const atom_event *ev, size_t n, size_t *done) {
  if (done) *done = 0;
  if (!s || (!ev && n)) return atom__error(ATOM_EINVAL, "atom_push_many: NULL argument");
  if (atom__reentered(s)) return atom__reentrant_error("atom_push_many");
  int threadsafe = s->opt.flags & ATOM_THREADSAFE;
  if (threadsafe) pthread_mutex_lock(&s->lock);
  atom__call_begin(s);
  int err = check_pushable(s);
  size_t i = 0;
  if (!err) err = push_blocks(s, ev, n, &i);
  if (atom__call_end(s, threadsafe)) err = atom__freed_error("atom_push_many");
  if (done) *done = i;
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
