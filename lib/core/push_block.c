/* atom_push_many: events validated into blocks and each block dispatched at once. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/push_check.h"
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
 *   RELEASE, BEGIN, END and FENCE without flags, of a known thread, with a known target. Any
 *   other event ends the block: the block is dispatched, then the event takes the single
 *   path (atom__push_one, push.c) and is dispatched at once. So:
 *   - an ill-formed event reaches atom__push_one, which rejects it exactly as atom_push does,
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

/* The dense id of an interned key + 1, 0 if not found (without interning), from a direct
 * table held in locals (dir, cap) and the hash map for the other keys. It is the direct
 * table's own value, widened before any arithmetic, so that &a[id] is
 * a + (id + 1) * size - size and the "- size" folds into the displacement of every access
 * through it (with a 32-bit id - 1 it cannot: the subtraction wraps at 2^32). */
static inline size_t lookup_plus1(const uint32_t *dir, size_t cap, const atom__intern *in,
                                  uint64_t key) {
  uint32_t id;
  if (key < cap) return dir[key];
  return atom__u64map_get(&in->map, key, &id) ? (size_t)id + 1 : 0;
}

/* kind | flags << 32 of an event in one 8-byte load, whatever the byte order: it is at most
 * ATOM_KIND_MAX_ only for a known kind (or 0) with flags 0. */
static inline uint64_t kind_flags(const atom_event *e) {
  uint64_t v;
  memcpy(&v, e, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = v >> 32 | v << 32;
#endif
  return v;
}

/* What the fill does with an event of one kind, as numbers rather than branches: a 2PL trace
 * of several threads mixes the kinds at random, and a mispredicted branch on the kind (about
 * 15-20 cycles) cost more than the whole path of an access. Every kind runs the same code;
 * the numbers of a kind make the parts that are not its own work on scratch records.
 *
 * The nesting of BEGIN/END and the re-entrancy of ACQUIRE/RELEASE are one counter: the
 * thread's depth or the lock's, + delta, refused when it leaves 0..UINT32_MAX, and the event
 * forwarded when it goes from 0 or back to 0 (an outermost BEGIN or END, an ACQUIRE or
 * RELEASE that changes the lock's holder). The other kinds count on a scratch lock: 0 + 0,
 * always forwarded. A free lock has depth 0 (locks are zeroed when created; a RELEASE frees
 * the lock only at depth 0), so an ACQUIRE is depth + 1 whether it takes or nests. */
typedef struct fill_kind {
  /* The target's key space (variables, locks; "none" for BEGIN, END, FENCE and the kinds
   * that never go into a block): its direct table, size and intern table. "none" is a
   * one-entry table that holds id 0, and key_mask 0 sends every target to it: the block's
   * target is 0 as before, and the lookup never misses. */
  const uint32_t *dir;
  size_t cap;
  const atom__intern *in;
  uint64_t key_mask;
  /* An ACQUIRE or RELEASE works on lock_base[id] (lock_mask ~0); the other kinds on one of
   * FILL_SCRATCH scratch locks, lock_base[index % FILL_SCRATCH] (scratch_mask): rotating
   * them, an event does not wait for the store of the event before it to read its own. */
  atom__lock *lock_base;
  uint64_t lock_mask;
  uint64_t scratch_mask;
  uintptr_t txn_mask;   /* ~0 for BEGIN and END: the counter is the thread's depth */
  int64_t delta;        /* +1 BEGIN and ACQUIRE, -1 END and RELEASE */
  uint32_t holder_mask; /* ~0 for a lock kind: the scratch locks' holder stays 0 */
  uint32_t bit;         /* ATOM_KIND_BIT, READ and WRITE together (block_kinds: a superset) */
  uint32_t refuse;      /* never in a block: 0, FORK, JOIN, COMMIT */
  uint32_t release;     /* 1: the lock must be its thread's (ACQUIRE: its own or free) */
  uint32_t begin;       /* 1: an outermost one records where the transaction began */
  uint32_t drain;       /* 1: drains the store buffer when forwarded (ACQUIRE, RELEASE, FENCE) */
  uint32_t is_write;
} fill_kind;

#define FILL_SCRATCH 8u

enum { SPACE_VAR, SPACE_LOCK, SPACE_NONE };

/* The constant part of fill_kind, by kind (the space of the target in `cap`). */
static const fill_kind fill_kinds[ATOM_KIND_MAX_ + 1] = {
    [0] = {.cap = SPACE_NONE, .refuse = 1},
    [ATOM_READ] = {.cap = SPACE_VAR, .bit = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE)},
    [ATOM_WRITE] = {.cap = SPACE_VAR,
                    .bit = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE),
                    .is_write = 1},
    [ATOM_ACQUIRE] = {.cap = SPACE_LOCK,
                      .delta = 1,
                      .holder_mask = UINT32_MAX,
                      .bit = ATOM_KIND_BIT(ATOM_ACQUIRE),
                      .drain = 1},
    [ATOM_RELEASE] = {.cap = SPACE_LOCK,
                      .delta = -1,
                      .holder_mask = UINT32_MAX,
                      .bit = ATOM_KIND_BIT(ATOM_RELEASE),
                      .release = 1,
                      .drain = 1},
    [ATOM_FORK] = {.cap = SPACE_NONE, .refuse = 1},
    [ATOM_JOIN] = {.cap = SPACE_NONE, .refuse = 1},
    [ATOM_BEGIN] = {.cap = SPACE_NONE,
                    .txn_mask = UINTPTR_MAX,
                    .delta = 1,
                    .bit = ATOM_KIND_BIT(ATOM_BEGIN),
                    .begin = 1},
    [ATOM_END] = {.cap = SPACE_NONE,
                  .txn_mask = UINTPTR_MAX,
                  .delta = -1,
                  .bit = ATOM_KIND_BIT(ATOM_END)},
    [ATOM_FENCE] = {.cap = SPACE_NONE, .bit = ATOM_KIND_BIT(ATOM_FENCE), .drain = 1},
    [ATOM_COMMIT] = {.cap = SPACE_NONE, .refuse = 1},
};

/* a if c (0 or 1), else b: a conditional move the compiler cannot turn back into a branch */
static inline void *pick(unsigned c, void *a, void *b) {
  uintptr_t m = (uintptr_t)0 - c;
  return (void *)(((uintptr_t)a & m) | ((uintptr_t)b & ~m));
}

/* Validate events from ev[0] on into the block while they are events a block may hold (see
 * above) and the block has room; return how many were taken. The first event not taken is
 * left untouched. No key is interned here and no thread is joined, so nothing moves and a
 * thread that passed the checks once passes them for the whole call: the direct tables'
 * addresses and sizes are copied into a local table by kind (the compiler cannot keep s's
 * fields in registers across the stores below). The block's length, kinds and the next index
 * are written back at the end.
 *
 * Every kind takes one path: the only branches are on the kind being past ATOM_KIND_MAX_
 * (or flags), the thread or target being unknown (and, for a key past the direct table, the
 * hash map's), whether the event is refused (the conditions of all kinds folded into one flag
 * with arithmetic) and whether the store buffer is full. None depends on the mix of kinds. An
 * event refused leaves the loop before it changed anything, and takes the single path, which
 * reports it. */
static inline __attribute__((always_inline)) size_t block_fill_with(atom_session *s,
                                                                    const atom_event *ev,
                                                                    size_t n,
                                                                    const int track_pending) {
  const atom__intern *tid = &s->ids[ATOM_SPACE_THREAD];
  const uint32_t *const tdir = tid->direct;
  const size_t tcap = tid->direct_cap;
  atom__thread *const threads = s->threads;
  atom_ev *const block = s->block;
  size_t room = ATOM__BLOCK - s->block_len;
  uint64_t index = s->next_index;
  uint32_t kinds = s->block_kinds;
  if (n > room) n = room;
  if (!n) return 0;
  static const uint32_t none_dir[1] = {1}; /* key 0 -> id 0 */
  atom__lock scratch[FILL_SCRATCH];        /* holder and depth stay 0 */
  atom__thread sink;                       /* takes the begin_index and loc of other events */
  memset(scratch, 0, sizeof scratch);
  fill_kind kt[ATOM_KIND_MAX_ + 1];
  for (size_t k = 0; k <= ATOM_KIND_MAX_; k++) {
    kt[k] = fill_kinds[k];
    size_t space = fill_kinds[k].cap;
    if (space == SPACE_NONE) {
      kt[k].dir = none_dir;
      kt[k].cap = 1;
      kt[k].in = NULL; /* never read: key 0 < cap */
      kt[k].key_mask = 0;
    } else {
      const atom__intern *in = &s->ids[space == SPACE_VAR ? ATOM_SPACE_VAR : ATOM_SPACE_LOCK];
      kt[k].dir = in->direct;
      kt[k].cap = in->direct_cap;
      kt[k].in = in;
      kt[k].key_mask = UINT64_MAX;
    }
    kt[k].lock_base = space == SPACE_LOCK ? s->locks : scratch;
    kt[k].lock_mask = space == SPACE_LOCK ? UINT64_MAX : 0;
    kt[k].scratch_mask = space == SPACE_LOCK ? 0 : FILL_SCRATCH - 1;
  }
  atom_ev *o = block + s->block_len; /* where the next event goes */
  const atom_event *e = ev, *const end = ev + n;
  for (; e != end; e++) {
    uint64_t kf = kind_flags(e);
    if (kf > ATOM_KIND_MAX_) break; /* flags, or an unknown kind */
    const fill_kind *k = &kt[kf];
    /* The thread looked up for every event: keeping the previous event's thread and
     * skipping the lookup when it is the same saved 3 instructions an event but mispredicted
     * the test on traces that switch threads every few events (0.37 more mispredictions an
     * event, slower in time). */
    size_t t1 = lookup_plus1(tdir, tcap, tid, e->thread); /* the thread's id + 1 */
    if (!t1) break;
    atom__thread *th = &threads[t1 - 1];
    size_t x1 = lookup_plus1(k->dir, k->cap, k->in, e->target & k->key_mask);
    if (!x1) break;
    atom__lock *lk = k->lock_base + (((x1 - 1) & k->lock_mask) | (index & k->scratch_mask));
    uint32_t *cnt = pick(k->txn_mask & 1, &th->depth, &lk->depth);
    uint32_t c = *cnt, h = lk->holder_plus1;
    uint64_t nc64 = (uint64_t)c + (uint64_t)k->delta;
    uint32_t nc = (uint32_t)nc64;
    /* the counter out of range; an ACQUIRE of a lock held by another thread, a RELEASE of a
     * lock not held by its thread (the scratch locks: holder 0, release 0, never) */
    unsigned bad = k->refuse | th->joined | (unsigned)(nc64 >> 32) |
                   ((h != t1) & ((h | k->release) != 0));
    unsigned forward = (c == 0) | (nc == 0);
    size_t plen = 0, pcap = 0;
    if (track_pending) {
      /* A WRITE goes into the store buffer if it has room (growing it may fail: the single
       * path). */
      plen = th->pending_len;
      pcap = th->pending_cap;
      bad |= k->is_write & (plen == pcap);
    }
    if (bad) break;
    *cnt = nc;
    lk->holder_plus1 = (uint32_t)t1 & ((uint32_t)0 - (nc != 0)) & k->holder_mask;
    atom__thread *bt = pick((c == 0) & k->begin, th, &sink); /* an outermost BEGIN */
    bt->begin_index = index;
    bt->begin_loc = e->loc;
    if (track_pending) {
      /* The slot after the pending writes is written for every kind, which does not count
       * it: that slot holds nothing. A full buffer (or none yet) is not written. */
      if (plen != pcap)
        th->pending_var[(th->pending_head + plen) & (pcap - 1)] = (uint32_t)(x1 - 1);
      size_t keep = (size_t)(forward & k->drain) - 1; /* 0 on a drain */
      th->pending_len = (plen + k->is_write) & keep;
      th->pending_head &= keep;
    }
    th->started = 1;
    kinds |= k->bit;
    /* Written always (o is in the block: fewer than ATOM__BLOCK events are in it here) and
     * kept only when forwarded: no branch on what the trace does. An event of a kind nobody
     * takes is kept too (dropping it cost more per event than the flush's filter by kind). */
    /* flags not written: 0 in every slot of the block since the session was zeroed, and
     * only this loop writes the block (the checkers get it const) */
    ATOM__ASSERT(o->flags == 0);
    o->kind = (uint32_t)kf;
    o->thread = (uint32_t)(t1 - 1);
    o->target = (uint32_t)(x1 - 1);
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
    err = atom__push_one(s, &ev[i++]);
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
  int err = atom__check_pushable(s);
  size_t i = 0;
  if (!err) err = push_blocks(s, ev, n, &i);
  if (atom__call_end(s, threadsafe)) err = atom__freed_error("atom_push_many");
  if (done) *done = i;
  return err;
}
