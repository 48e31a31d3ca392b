/* The session's internal state (lib/core only). */
#ifndef ATOM_CORE_SESSION_H
#define ATOM_CORE_SESSION_H

#include <pthread.h>
#include <stdatomic.h>

#include "atomicity/sys/checker.h"
#include "atomicity/session.h"
#include "core/location.h"
#include "core/names.h"
#include "core/report.h"
#include "support/mem.h"
#include "support/u64map.h"

/* Key -> dense id for one key space. Small keys (trace files number names 1, 2, 3, ...) are
 * looked up in a direct table; others through the hash map. */
#define ATOM__DIRECT_KEYS 65536u
/* Distinct keys per space: dense ids are 32-bit, and two values stay reserved. */
#define ATOM__MAX_IDS (UINT32_MAX - 2u)

typedef struct atom__intern {
  uint32_t *direct;     /* direct[key] = id + 1 for key < direct_cap */
  size_t direct_cap;
  atom__u64map map;     /* other keys */
  uint64_t *keys;       /* id -> key */
  size_t keys_cap;
  uint32_t count;
} atom__intern;

/* The rest of a pending WRITE as the checkers saw it (its thread is the buffer's, its variable
 * in pending_var), kept only for checkers that read the store buffer. */
typedef struct atom__pending_source {
  uint64_t index, loc;
  uint32_t flags;
} atom__pending_source;

typedef struct atom__thread {
  uint32_t depth;        /* BEGIN nesting depth */
  uint8_t started;       /* an event of it was accepted */
  uint8_t forked;
  uint8_t joined;
  uint64_t begin_index;  /* of its open outermost transaction */
  uint64_t begin_loc;
  /* TSO: the store buffer, a FIFO of the writes issued and not yet committed, kept only while
   * a checker subscribes to COMMIT. A ring of pending_cap entries (a power of two, or 0): their
   * variables, which a COMMIT must match, and, only while a checker reads the store buffer
   * (ATOM_CHECKER_PROP_STORE_BUFFER, s->keep_pending_src), the rest of each write. A COMMIT
   * takes the oldest one (atom_env_commit_source); a drain empties it. */
  uint32_t *pending_var;
  atom__pending_source *pending_src;
  size_t pending_cap, pending_head, pending_len;
} atom__thread;

/* The @p i-th oldest pending write of thread @p t as the checkers saw it (keep_pending_src). */
static inline atom_ev atom__pending_write(const atom__thread *th, uint32_t t, size_t i) {
  size_t at = (th->pending_head + i) & (th->pending_cap - 1);
  const atom__pending_source *src = &th->pending_src[at];
  atom_ev ev = {ATOM_WRITE, t, th->pending_var[at], src->flags, src->index, src->loc};
  return ev;
}

typedef struct atom__lock {
  uint32_t holder_plus1; /* 0 = free */
  uint32_t depth;        /* re-entrant acquisitions */
} atom__lock;

struct atom_env {
  atom_session *session;
  /* The checker's vtable as the current version: vt points to vt_copy, the caller's vtable
   * copied up to the size of its version with later members left 0, so the core reads every
   * member without asking which version it came in. */
  const atom_checker *vt;
  atom_checker vt_copy;
  void *self;
  size_t index;
  atom__mem mem;
  char *args;            /* copy of the args string, split in place */
  size_t args_size;
  const char **arg_keys; /* parsed: key i -> value i */
  const char **arg_values;
  size_t n_args;
  uint64_t time_ns;
  uint64_t progress_ns;  /* when atom_env_progress last forwarded (monotonic ns) */
  uint64_t reports;      /* distinct reports made, stored or dropped */
  uint64_t stored;       /* of them, stored (max_reports_per_checker caps it) */
  uint64_t occurrences;
  int disabled;          /* out of memory or a limit: gets no more events (verdict partial) */
  /* Its atom_checker_status: state ATOM_CHECKER_*, where it stopped, why (reason allocated in
   * the session's core memory, reason_size bytes; freed with the env), the disabling code. */
  uint32_t state;
  uint64_t stopped_at;
  char *reason;
  size_t reason_size;
  int error;
  /* The spec it was attached with ("aerodrome:variant=basic"), for output labels; NULL when
   * attached as a vtable (then the name serves). Core memory, freed with the env. */
  char *spec;
};

/* A checker subscribed to one kind. */
typedef struct atom__sub {
  int (*on_event)(void *self, const atom_ev *ev);
  void *self;
  atom_env *env;
  int batched;              /* it has on_events: a block reaches it whole, not event by event */
} atom__sub;

/* Events atom_push_many() validated and not yet dispatched (push_block.c): a block is
 * dispatched when full, before an event it cannot hold, and before the call returns. */
#define ATOM__BLOCK 256u

struct atom_session {
  atom_options opt;
  atom__allocator alloc;
  atom__mem mem;            /* the core's own memory */
  pthread_mutex_t lock;     /* ATOM_THREADSAFE */
  /* Re-entrancy guard (doc/threading.md "Callbacks"): while a call runs checkers or the report
   * callback, the marker of the thread running it; 0 otherwise. Atomic because, with
   * ATOM_THREADSAFE, other threads read it before they wait for the mutex; a thread only ever
   * finds its own marker here when it is inside that call. */
  atomic_uintptr_t busy_owner;
  int free_pending;         /* atom_session_free was called from a callback: free on return */
  uint64_t next_index;
  uint64_t rejected;
  int finished;
  int finish_status;

  atom__intern ids[4];      /* indexed by atom_space */
  uint32_t id_limit;        /* distinct keys per space (ATOM__MAX_IDS; tests may lower it) */
  atom__thread *threads;
  size_t threads_cap;
  /* A cache for the block fill (push_block.c): thread key -> id + 1 for the threads whose
   * events need no look at their record (interned, started: an event of theirs was accepted,
   * and not joined), 0 for the others and unknown ones. Small keys only (< ATOM__DIRECT_KEYS);
   * an entry is set when the thread starts (push.c) and cleared when it is joined, the only
   * way out. A 0 only sends the fill to the full checks: memory for it may be missing. */
  uint32_t *thread_live;
  size_t thread_live_cap;
  atom__lock *locks;
  size_t locks_cap;
  int track_pending;        /* some checker wants COMMIT: keep the store buffers */
  int keep_pending_src;     /* some checker reads them (ATOM_CHECKER_PROP_STORE_BUFFER) */
  /* During the dispatch of a COMMIT: the WRITE it commits (atom_env_commit_source). */
  atom_ev commit_source;
  int has_commit_source;

  atom_env **envs;
  size_t n_envs, envs_cap;
  atom__sub *subs[ATOM_KIND_MAX_ + 1];
  size_t n_subs[ATOM_KIND_MAX_ + 1];
  int any_batched;          /* some env has on_events */
  uint32_t loop_kinds;      /* ATOM_KIND_BIT of the kinds some env without on_events takes */

  /* The block being built by atom_push_many (empty between calls): block_len events of the
   * kinds in block_kinds (ATOM_KIND_BIT; a superset: it may name a kind the block lost to a
   * swallowed or refused event, and READ with WRITE go in together). block_scratch holds the
   * events of one checker's kinds when it does not want them all. When the session is freed
   * from a callback during a block, free_index is the index of the event being dispatched
   * then (UINT64_MAX: not known to the event, a checker was taking the whole block). */
  atom_ev block[ATOM__BLOCK];
  atom_ev block_scratch[ATOM__BLOCK];
  size_t block_len;
  uint32_t block_kinds;
  uint64_t free_index;

  atom__names names;
  atom__locations locations; /* described locs (location.c) */
  atom__u64map sets;        /* variable key -> index in set_keys */
  uint64_t *set_keys;
  size_t set_keys_cap, n_set_keys;

  atom__reports reports;
};

/* Dense id of key in space (1..3), interning it. Returns 0 or ATOM_ENOMEM / ATOM_ELIMIT. */
int atom__intern_id(atom_session *s, int space, uint64_t key, uint32_t *id);
/* Intern key, known not to be interned yet, as the next id of space: 0, or ATOM_ELIMIT (id_limit
 * reached) or ATOM_ENOMEM, with no message set and nothing changed (atom__intern_id sets it). */
int atom__intern_new(atom_session *s, int space, uint64_t key, uint32_t *id);
/* Id of an already-interned key; 1 if found. */
int atom__intern_find(const atom_session *s, int space, uint64_t key, uint32_t *id);
uint64_t atom__intern_key(const atom_session *s, int space, uint32_t id);

/* Dispatch ev to the subscribers of its kind. */
int atom__dispatch(atom_session *s, const atom_ev *ev);

/* Close an open transaction of thread t with a synthetic END carrying index (finish, join). */
int atom__close_transaction(atom_session *s, uint32_t t, uint64_t index);

/* Label of a key for messages: its name, else its decimal value. */
const char *atom__key_label(const atom_session *s, int space, uint64_t key, char *buf,
                            size_t size);

void atom__env_free(atom_env *env);

/* How outputs name attached checker i: its attach spec ("aerodrome:variant=basic"), else its
 * name; NULL if i is out of range. Valid until the session is freed. */
const char *atom__checker_label(const atom_session *s, size_t i);

/* Mark env DISABLED at event index because its callback failed with err (ATOM_ENOMEM or
 * ATOM_ELIMIT): it gets no more events. The reason is the checker's last-error message when
 * it set one, else the code's description. Never fails (a reason that cannot be stored is
 * replaced by a fixed one). */
void atom__env_disable(atom_env *env, uint64_t index, int err);
/* Re-entrancy (session.c). A public function that changes the session or runs user code first
 * checks atom__reentered() and fails with atom__reentrant_error(); the calls that run checkers
 * or the report callback bracket that work with atom__call_begin() (after taking the mutex)
 * and atom__call_end() (which releases the mutex and, if a callback freed the session, frees
 * it: the caller must not touch s when it returns 1). */
int atom__reentered(const atom_session *s);
int atom__reentrant_error(const char *fn);
void atom__call_begin(atom_session *s);
int atom__call_end(atom_session *s, int unlock);
/* The same for a hot call (atom_push): the calling thread's marker fetched once
 * (atom__self_marker: a thread-local access, a function call in a shared library), then
 * compared and stored in line. atom__reentered_as(s, atom__self_marker()) is
 * atom__reentered(s); atom__call_begin_as likewise. */
uintptr_t atom__self_marker(void);
static inline int atom__reentered_as(const atom_session *s, uintptr_t me) {
  return atomic_load_explicit(&s->busy_owner, memory_order_relaxed) == me;
}
static inline void atom__call_begin_as(atom_session *s, uintptr_t me) {
  atomic_store_explicit(&s->busy_owner, me, memory_order_relaxed);
}
/* atom__call_end with its common case in line: no mutex to release, no session to free. */
static inline int atom__call_end_inline(atom_session *s, int unlock) {
  if (unlock || s->free_pending) return atom__call_end(s, unlock);
  atomic_store_explicit(&s->busy_owner, 0, memory_order_relaxed);
  return 0;
}
/* ATOM_ESTATE: the session was freed by a callback during fn (returned after atom__call_end). */
int atom__freed_error(const char *fn);

#endif
