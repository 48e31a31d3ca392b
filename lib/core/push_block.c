/* atom_push_many: events validated into blocks and each block dispatched at once. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/push_check.h"
#include "core/push_vouched.h"
#include "core/session.h"
#include "support/assert.h"

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
 *   RELEASE, BEGIN, END and FENCE without flags, of a known thread, with a known target (or
 *   a new variable or lock, below). Any other event ends the block: the block is dispatched,
 *   then the event takes the single path (atom__push_one, push.c) and is dispatched at once.
 *   So:
 *   - an ill-formed event reaches atom__push_one, which rejects it exactly as atom_push does,
 *     after every event before it was dispatched;
 *   - a new variable or lock key is interned by the fill, its event kept in the block, only
 *     while every checker a block's event may reach takes blocks (no checker without
 *     on_events takes a kind a block holds) and no store buffers are kept (block_new_key).
 *     A checker taking a block then sees atom_env_count() count every id of the block, and
 *     every one of them has its key: ids are dense and given in event order, as single
 *     pushes give them, so each id of the block is the one atom_push would have given, and
 *     the count is the one on_event would see at the block's last event (doc/api.md). With
 *     any other checker attached, a new key is interned only with the block empty (the
 *     event takes the single path), so the count is, for every event a checker gets one at
 *     a time, what atom_push would make it. A key that cannot be interned (ATOM_ELIMIT at
 *     id_limit, ATOM_ENOMEM) ends the block with nothing changed: its event takes the
 *     single path, which fails on it with the exact error and message;
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

/* The dense id + 1 of key in @p space from the session's hash map (keys past the direct
 * table), 0 if not interned. In line, its state read through s: a call in the fill's loop
 * would leave it 6 registers that survive calls, and the loop needs more. */
static inline size_t map_lookup_plus1(const atom_session *s, int space, uint64_t key) {
  uint32_t id;
  return atom__u64map_get(&s->ids[space].map, key, &id) ? (size_t)id + 1 : 0;
}

/* The dense id + 1 of an interned key of @p space, 0 if not interned, without interning. The
 * direct table's own value, widened before any arithmetic, so that &a[id] is
 * a + (id + 1) * size - size and the "- size" folds into the displacement of every access
 * through it (with a 32-bit id - 1 it cannot: the subtraction wraps at 2^32). */
static inline size_t lookup_plus1(const atom_session *s, int space, const uint32_t *dir,
                                  size_t cap, uint64_t key) {
  if (key < cap) return dir[key];
  return map_lookup_plus1(s, space, key);
}

/* The id + 1 of thread @p key if the fill may take its events, else 0: interned, started (its
 * first event takes the single path, which starts it) and not joined. For the threads that
 * thread_live does not know (session.h). */
static inline size_t thread_checked_plus1(const atom_session *s, uint64_t key) {
  const atom__intern *tid = &s->ids[ATOM_SPACE_THREAD];
  size_t t1 = lookup_plus1(s, ATOM_SPACE_THREAD, tid->direct, tid->direct_cap, key);
  if (!t1 || s->threads[t1 - 1].joined || !s->threads[t1 - 1].started) return 0;
  return t1;
}

/* With many variables (some past the direct table, in the hash map), their lookups miss the
 * cache: the fill asks for the one PREFETCH_AHEAD events later while it works on this one.
 * The target is taken as a variable whatever the kind (a lock's or none: one line fetched for
 * nothing, cheaper than a test of the kind). The map's slot where a lookup starts is also
 * where interning a new key looks first. */
#define PREFETCH_AHEAD 8

static inline void prefetch_var(const atom_session *s, uint64_t key) {
  const atom__intern *vid = &s->ids[ATOM_SPACE_VAR];
  if (key < vid->direct_cap) {
    __builtin_prefetch(&vid->direct[key]);
  } else if (vid->map.cap) {
    __builtin_prefetch(&vid->map.slots[atom__hash64(key) & (vid->map.cap - 1)]);
  }
}

/* The id + 1 of new key @p key of @p space (ATOM_SPACE_VAR or ATOM_SPACE_LOCK), interned for
 * the block fill, or 0: the event must take the single path (see "blocks" above: a checker
 * that takes events one at a time could be dispatched an event of the block and see the count
 * of a later one; store buffers: a WRITE may still end the block after its key was interned;
 * interning failed). Out of line: a new key is rare next to the lookups. */
static __attribute__((noinline, cold)) size_t block_new_key(atom_session *s, int space,
                                                             uint64_t key) {
  const uint32_t block_kinds = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) |
                               ATOM_KIND_BIT(ATOM_ACQUIRE) | ATOM_KIND_BIT(ATOM_RELEASE) |
                               ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END) |
                               ATOM_KIND_BIT(ATOM_FENCE);
  uint32_t id;
  if ((s->loop_kinds & block_kinds) || s->track_pending || atom__intern_new(s, space, key, &id))
    return 0;
  return (size_t)id + 1;
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
 * left untouched. No thread is interned or joined here, so the live threads' table and its size
 * do not move: they are copied into locals (the compiler cannot keep s's fields in registers
 * across the stores below). A new variable or lock (block_new_key) may move the variables'
 * direct table, the locks and the hash maps: they are read through s on the paths that need
 * them.
 * The variables' table was in locals too, which the compiler kept on the stack: a reload
 * from there and a compare cost one instruction more than a compare with s's field. The
 * block's length, kinds and the next index are written back at the end. With @p bounded the
 * caller vouched that every thread key is below the live threads' table's size and every
 * access's variable key below the variables' direct table's size (block_fill): those two
 * tests are left out. */
static inline __attribute__((always_inline)) size_t block_fill_with(atom_session *s,
                                                                    const atom_event *ev,
                                                                    size_t n,
                                                                    const int track_pending,
                                                                    const int prefetch,
                                                                    const int bounded) {
  const uint32_t *const live = s->thread_live;
  const size_t livecap = s->thread_live_cap;
  atom_ev *const block = s->block;
  size_t room = ATOM__BLOCK - s->block_len;
  uint64_t index = s->next_index;
  uint32_t kinds = s->block_kinds;
  if (n > room) n = room;
  if (!n) return 0;
  atom_ev *o = block + s->block_len; /* where the next event goes */
  /* READ and WRITE named in kinds whether or not the block gets one (a superset, which
   * session.h allows): not one instruction an access for it. A block of other kinds only
   * costs a checker that takes neither a copy of its kinds' events in block_flush. */
  kinds |= ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE);
  const atom_event *e = ev, *const end = ev + n;
  if (prefetch)
    for (size_t i = 0; i < PREFETCH_AHEAD && i < n; i++) prefetch_var(s, ev[i].target);
  for (; e != end; e++) {
    if (prefetch && end - e > PREFETCH_AHEAD) prefetch_var(s, e[PREFETCH_AHEAD].target);
    /* kind and flags in one load: with flags 0 it equals the kind, so every comparison with a
     * kind below also checks flags == 0, and an event with flags falls to the last else */
    uint64_t kf;
    memcpy(&kf, e, sizeof kf);
    uint32_t kind, x = 0; /* kind: set by the branch that knows it */
    /* The thread looked up for every event: keeping the previous event's thread and
     * skipping the lookup when it is the same saved 3 instructions an event but mispredicted
     * the test on traces that switch threads every few events (0.37 more mispredictions an
     * event, slower in time). A live thread (started, not joined: session.h) is one load from
     * thread_live and no look at its record, which an access does not need; any other goes
     * through the full checks, and one not started yet to the single path, which starts it. */
    uint64_t tk = e->thread;
    uint32_t t; /* the thread's id: live[tk] - 1, the subtraction's borrow testing for 0 */
    if (__builtin_expect(__builtin_sub_overflow(bounded || tk < livecap ? live[tk] : 0, 1u, &t),
                         0)) {
      size_t c1 = thread_checked_plus1(s, tk);
      if (!c1) break;
      t = (uint32_t)(c1 - 1);
    }
    size_t t1 = (size_t)t + 1; /* the thread's id + 1 (the locks' holder_plus1) */
    size_t forward = 1; /* as wide as a pointer: o += forward needs no widening */
    /* the accesses first: most events are accesses. Marked likely so that their path falls
     * through into the stores at the loop's end (no jump back to them): 0.5 instructions an
     * event less, and in cachegrind's branch model this branch mispredicts 0.03 an event less
     * with that layout */
    if (__builtin_expect(kf == kind_word(ATOM_READ) || kf == kind_word(ATOM_WRITE), 1)) {
      /* READ and WRITE on one path with no branch on which it is: traces mix them at random,
       * and a mispredicted branch costs more than this whole path */
      kind = (uint32_t)kf; /* READ and WRITE are in kinds already (below) */
      size_t x1 = bounded ? s->ids[ATOM_SPACE_VAR].direct[e->target]
                          : lookup_plus1(s, ATOM_SPACE_VAR, s->ids[ATOM_SPACE_VAR].direct,
                                         s->ids[ATOM_SPACE_VAR].direct_cap, e->target);
      if (__builtin_expect(!x1, 0) && !(x1 = block_new_key(s, ATOM_SPACE_VAR, e->target))) break;
      x = (uint32_t)(x1 - 1);
      if (track_pending) {
        /* A WRITE goes into the store buffer if it has room (growing it may fail: the single
         * path). The slot after the pending writes is written for a READ too, which does not
         * count it: that slot holds nothing. */
        atom__thread *th = &s->threads[t1 - 1];
        size_t plen = th->pending_len, pcap = th->pending_cap;
        uint32_t is_write = kind - ATOM_READ; /* READ 1, WRITE 2 */
        if (plen == pcap) {
          if (is_write) break;
        } else {
          th->pending_var[(th->pending_head + plen) & (pcap - 1)] = x;
        }
        th->pending_len = plen + is_write;
      }
    } else if (kf == kind_word(ATOM_BEGIN)) {
      atom__thread *th = &s->threads[t1 - 1];
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
      atom__thread *th = &s->threads[t1 - 1];
      kind = ATOM_END;
      kinds |= ATOM_KIND_BIT(ATOM_END);
      if (!th->depth) break;
      forward = !--th->depth;
    } else if (kf == kind_word(ATOM_ACQUIRE)) {
      kind = ATOM_ACQUIRE;
      kinds |= ATOM_KIND_BIT(ATOM_ACQUIRE);
      const atom__intern *lid = &s->ids[ATOM_SPACE_LOCK];
      size_t l1 = lookup_plus1(s, ATOM_SPACE_LOCK, lid->direct, lid->direct_cap, e->target);
      if (!l1 && !(l1 = block_new_key(s, ATOM_SPACE_LOCK, e->target))) break;
      x = (uint32_t)(l1 - 1);
      atom__lock *lk = &s->locks[l1 - 1];
      if (lk->holder_plus1 == t1) {
        if (lk->depth == UINT32_MAX) break;
        lk->depth++; /* re-entrant: swallowed, and no drain (as atom__push_one) */
        forward = 0;
      } else {
        if (lk->holder_plus1) break;
        lk->holder_plus1 = (uint32_t)t1;
        lk->depth = 1;
        if (track_pending) atom__pending_drain(&s->threads[t1 - 1]);
      }
    } else if (kf == kind_word(ATOM_RELEASE)) {
      kind = ATOM_RELEASE;
      kinds |= ATOM_KIND_BIT(ATOM_RELEASE);
      const atom__intern *lid = &s->ids[ATOM_SPACE_LOCK];
      size_t l1 = lookup_plus1(s, ATOM_SPACE_LOCK, lid->direct, lid->direct_cap, e->target);
      if (!l1) break;
      x = (uint32_t)(l1 - 1);
      atom__lock *lk = &s->locks[l1 - 1];
      if (lk->holder_plus1 != t1) break;
      if (--lk->depth) {
        forward = 0;
      } else {
        lk->holder_plus1 = 0;
        if (track_pending) atom__pending_drain(&s->threads[t1 - 1]);
      }
    } else if (kf == kind_word(ATOM_FENCE)) {
      kind = ATOM_FENCE;
      kinds |= ATOM_KIND_BIT(ATOM_FENCE);
      if (track_pending) atom__pending_drain(&s->threads[t1 - 1]);
    } else {
      break; /* FORK, JOIN, COMMIT, an unknown kind, flags */
    }
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
 * test and one register less on the accesses' path), and without store buffers once more
 * with prefetching and once more for keys known in range. */
static __attribute__((noinline)) size_t block_fill_prefetch(atom_session *s,
                                                             const atom_event *ev, size_t n) {
  return block_fill_with(s, ev, n, 0, 1, 0);
}

/* The bounds a caller vouches for (atom__push_many_bounded): every event's thread key is at
 * most thread_max, every READ's and WRITE's target at most var_max. UINT64_MAX: none. (Lock
 * keys keep their test: leaving it out saved 0.2 instructions an event on a 2PL trace, and a
 * trace without locks has no lock table to be within.) */
typedef struct key_bounds {
  uint64_t thread_max, var_max;
} key_bounds;

static size_t block_fill(atom_session *s, const atom_event *ev, size_t n, key_bounds kb) {
  if (s->track_pending) return block_fill_with(s, ev, n, 1, 0, 0);
  /* Keys known within the direct tables (a reader's keys count its names, and the tables
   * grow as the keys are interned): no test of a key against a table's size. */
  if (kb.thread_max < s->thread_live_cap && kb.var_max < s->ids[ATOM_SPACE_VAR].direct_cap)
    return block_fill_with(s, ev, n, 0, 0, 1);
  /* Prefetching pays once variables spill out of the direct table into the hash map: before
   * that every variable's entry is in a table of at most 256 KiB, mostly in the cache, and
   * the prefetch would cost instructions for nothing. */
  if (s->ids[ATOM_SPACE_VAR].map.count) return block_fill_prefetch(s, ev, n);
  return block_fill_with(s, ev, n, 0, 0, 0);
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
    block_error_note(&be, atom__dispatch_subs(s, &s->block[i], skip), s->block[i].index);
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
    uint64_t t0 = profile ? atom__now_ns() : 0;
    block_to_checker(s, env, s->block, n, &be);
    if (profile) env->time_ns += atom__now_ns() - t0;
  }
  s->block_kinds = 0;
  if (be.err) atom__error(be.err, "%s", be.msg);
  return be.err;
}

/* atom_push_many's work: *done is set to the number of events taken (see "blocks" above for
 * a session freed during a block). */
static int push_blocks(atom_session *s, const atom_event *ev, size_t n, size_t *done,
                       key_bounds kb) {
  int err = 0, batch = !s->keep_pending_src;
  uint64_t base = s->next_index; /* every event taken, accepted or not, uses one index */
  size_t i = 0;
  s->free_index = UINT64_MAX;
  while (i < n) {
    if (batch) {
      i += block_fill(s, ev + i, n - i, kb);
      if (s->block_len == ATOM__BLOCK) {
        if ((err = block_flush(s)) || s->free_pending) break;
        continue;
      }
      if (i == n) break;
    }
    /* ev[i] needs the single path: the block before it first */
    if ((err = block_flush(s)) || s->free_pending) break;
    err = atom__push_one(s, &ev[i++]);
    if (err || s->free_pending) break;
  }
  if (!err && !s->free_pending) err = block_flush(s);
  *done = i;
  if (s->free_pending && s->free_index != UINT64_MAX) *done = (size_t)(s->free_index - base) + 1;
  return err;
}

/* atom_push_many, and atom__push_many_bounded with bounds (UINT64_MAX: none). */
static int push_many(atom_session *s, const atom_event *ev, size_t n, size_t *done,
                     key_bounds kb) {
  if (done) *done = 0;
  if (!s || (!ev && n)) return atom__error(ATOM_EINVAL, "atom_push_many: NULL argument");
  if (atom__reentered(s)) return atom__reentrant_error("atom_push_many");
  int threadsafe = s->opt.flags & ATOM_THREADSAFE;
  if (threadsafe) pthread_mutex_lock(&s->lock);
  atom__call_begin(s);
  int err = atom__check_pushable(s);
  size_t i = 0;
  if (!err) err = push_blocks(s, ev, n, &i, kb);
  if (atom__call_end(s, threadsafe)) err = atom__freed_error("atom_push_many");
  if (done) *done = i;
  return err;
}

ATOM_API int atom_push_many(atom_session *s, const atom_event *ev, size_t n, size_t *done) {
  return push_many(s, ev, n, done, (key_bounds){UINT64_MAX, UINT64_MAX});
}

int atom__push_many_bounded(atom_session *s, const atom_event *ev, size_t n, size_t *done,
                            uint64_t thread_max, uint64_t var_max) {
  return push_many(s, ev, n, done, (key_bounds){thread_max, var_max});
}
