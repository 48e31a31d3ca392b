/* schedule=perturb: make rare interleavings happen by pausing threads inside transactions.
 *
 * The online checkers (aerodrome, velodrome) never raise a false alarm, but they only see the
 * interleaving that happened, and the bad one is rare. This file pauses a thread at chosen
 * points inside an open transaction so that another thread's conflicting access falls between
 * two of its events (doc/tsan-rt.md, "Finding bugs that hide"). The strategy combines:
 *
 *  - AtomFuzzer (Park & Sen, FSE 2008): pause a thread inside an atomic block just before it
 *    touches again what the block touched before (here: an address it accessed, a lock it
 *    released), and let the other threads run;
 *  - CTrigger (Park, Lu & Zhou, ASPLOS 2009): aim at unserializable interleavings, i.e. points
 *    whose address (or an earlier address of the same transaction) was accessed in a
 *    conflicting way by another thread; CTrigger learns them from profiling runs, we learn
 *    them from the run so far, in a bounded table;
 *  - the pause WAITS (bounded by perturb_wait=) until another thread makes the awaited step
 *    (a conflicting access to the pending address, an acquire of the pending lock) or is about
 *    to block on a lock the paused thread holds, rather than sleeping blindly;
 *  - PCT (Burckhardt et al., ASPLOS 2010) for the randomness: decisions come from a seeded
 *    generator, so seed=N repeats the choices; a thread pauses at the k-th candidate of a site
 *    with probability 1/k, so loops cost a logarithmic number of pauses.
 *
 * Rules: never pause while holding the event lock (the hooks run before rt_lock or only do
 * bookkeeping under it), never outside a transaction, at most one paused thread at a time (the
 * others are the ones it waits for), at most one pause per address or lock per transaction,
 * and at most perturb_budget= milliseconds of pauses per thread.
 *
 * Memory is bounded: a history table of HIST_SIZE entries (address -> last writer, last reader,
 * last thread that acquired it as a lock; a collision overwrites the entry), and per thread a
 * footprint of the current transaction of at most FP_MAX addresses, REL_MAX released locks and
 * HELD_MAX held locks (more are not remembered: fewer candidates, never a wrong report). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

#define HIST_SIZE 4096 /* entries of the history table (power of two) */
#define FP_MAX 16      /* addresses remembered per transaction */
#define REL_MAX 8      /* locks released per transaction */
#define HELD_MAX 8     /* locks held, for the wake-before-blocking rule */
#define SITES 64       /* per-thread pause counters, by hash of the pc */

enum { K_READ = 1, K_WRITE = 2, K_PAUSED = 4 };
#define LOCK_TAG (UINT64_C(1) << 63) /* history key of a lock: never a user address */

/* One history entry: ids + 1 of the last threads that wrote / read the address (or acquired
 * it, for a lock key). Written under the event lock, read without it (a heuristic: a torn
 * entry only changes a decision). */
typedef struct hist_entry {
  uint64_t key;
  uint64_t writer, reader;
} hist_entry;

/* Per-thread state (thread-local: only its thread touches it). */
typedef struct pt_state {
  uint64_t counter;          /* decisions drawn so far (the PRNG's position) */
  uint64_t spent_ns;         /* total pause time */
  uint64_t pauses;
  unsigned events;           /* accesses and acquires in the current transaction */
  unsigned n_fp, n_rel, n_held;
  uint64_t fp[FP_MAX];       /* addresses accessed in the current transaction */
  unsigned char fp_kind[FP_MAX];
  uint64_t rel[REL_MAX];     /* locks released in the current transaction */
  unsigned char rel_kind[REL_MAX];
  uint64_t held_lock[HELD_MAX]; /* program locks held (mutexes and spin locks) */
  uint32_t site[SITES];      /* candidates seen per site */
  uint64_t wake_gen;         /* a pause to end at this thread's next hook (0 = none) */
} pt_state;

static RT_TLS pt_state pt;

static struct {
  int on;                     /* schedule=perturb */
  uint64_t seed;
  uint64_t wait_ns, budget_ns;
  hist_entry hist[HIST_SIZE];
  /* The paused thread, if any; guarded by mu (waiting is also read without it). */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int waiting;                /* a thread is paused; cleared by whoever ends the pause */
  uint64_t gen;               /* number of the current (or last) pause */
  uint64_t waiter;            /* thread id */
  uint64_t pending;           /* the awaited address, or lock key | LOCK_TAG */
  int pending_write;
  uint64_t held[HELD_MAX];    /* the paused thread's locks */
  unsigned n_held;
  uint64_t total_pauses, total_ns, woken_count;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t mix(uint64_t x) { /* splitmix64's finalizer */
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int rt_perturb_setup(const rt_options *o) {
  P.on = o->schedule == RT_SCHEDULE_PERTURB;
  if (!P.on) return 0;
  if (o->have_seed) {
    P.seed = o->seed;
  } else {
    /* Time and pid: different runs explore different schedules. Kept to 32 bits so that the
     * printed seed is easy to pass back with seed=. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    P.seed = (mix(t) ^ mix((uint64_t)getpid())) & UINT64_C(0xffffffff);
  }
  P.wait_ns = (uint64_t)o->perturb_wait_ms * 1000000u;
  P.budget_ns = (uint64_t)o->perturb_budget_ms * 1000000u;
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca) != 0) return -1;
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(&P.cv, &ca);
  pthread_condattr_destroy(&ca);
  if (rc != 0) {
    P.on = 0;
    return -1;
  }
  return 0;
}

void rt_perturb_summary(FILE *out) {
  if (!P.on) return;
  fprintf(out,
          "atomicity-rt: schedule=perturb seed=%llu: %llu pause%s (%llu ended by another "
          "thread's step), %llu ms paused\n",
          (unsigned long long)P.seed, (unsigned long long)P.total_pauses,
          P.total_pauses == 1 ? "" : "s", (unsigned long long)P.woken_count,
          (unsigned long long)(P.total_ns / 1000000u));
}

int rt_perturb_seed(uint64_t *seed) {
  if (!P.on) return 0;
  *seed = P.seed;
  return 1;
}

/* ---- the history table */

static hist_entry *hist_slot(uint64_t key) { return &P.hist[mix(key) & (HIST_SIZE - 1)]; }

/* Did a thread other than @p tid touch @p key in a way that conflicts with @p kind? */
static int hist_conflict(uint64_t key, uint64_t tid, int kind) {
  hist_entry *h = hist_slot(key);
  if (__atomic_load_n(&h->key, __ATOMIC_RELAXED) != key) return 0;
  uint64_t w = __atomic_load_n(&h->writer, __ATOMIC_RELAXED);
  uint64_t r = __atomic_load_n(&h->reader, __ATOMIC_RELAXED);
  if (w && w != tid + 1) return 1;
  return (kind & K_WRITE) && r && r != tid + 1;
}

static void hist_note(uint64_t key, uint64_t tid, int write) {
  hist_entry *h = hist_slot(key);
  if (h->key != key) {
    __atomic_store_n(&h->key, key, __ATOMIC_RELAXED);
    __atomic_store_n(&h->writer, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&h->reader, 0, __ATOMIC_RELAXED);
  }
  __atomic_store_n(write ? &h->writer : &h->reader, tid + 1, __ATOMIC_RELAXED);
}

/* ---- the transaction's footprint */

static int fp_find(uint64_t addr) {
  for (unsigned i = 0; i < pt.n_fp; i++)
    if (pt.fp[i] == addr) return (int)i;
  return -1;
}

static int rel_find(uint64_t lock) {
  for (unsigned i = 0; i < pt.n_rel; i++)
    if (pt.rel[i] == lock) return (int)i;
  return -1;
}

/* ---- deciding and pausing */

/* Draw the decision for a candidate at @p pc: the k-th candidate of a site pauses with
 * probability 1/k (PCT-like: few, random pauses in loops, the first one always). */
static int draw(const rt_thread *t, uint64_t pc) {
  uint32_t *k = &pt.site[mix(pc) & (SITES - 1)];
  uint64_t r = mix(P.seed ^ mix(t->id + 1) ^ mix(++pt.counter));
  uint32_t n = ++*k;
  return r % n == 0;
}

/* Pause the calling thread until another thread makes the awaited step, or the wait ends. */
static void pause_for(const rt_thread *t, uint64_t pending, int pending_write) {
  uint64_t start = now_ns();
  int busy = rt_busy;
  rt_busy = 1; /* the real functions, unrecorded */
  rt_fn.pthread_mutex_lock(&P.mu);
  if (P.waiting) { /* another thread is paused: this one is what it waits for */
    rt_fn.pthread_mutex_unlock(&P.mu);
    rt_busy = busy;
    return;
  }
  P.waiting = 1;
  uint64_t gen = ++P.gen;
  P.waiter = t->id;
  P.pending = pending;
  P.pending_write = pending_write;
  P.n_held = pt.n_held < HELD_MAX ? pt.n_held : HELD_MAX;
  memcpy(P.held, pt.held_lock, P.n_held * sizeof P.held[0]);
  uint64_t left = P.budget_ns - pt.spent_ns;
  uint64_t wait = P.wait_ns < left ? P.wait_ns : left;
  uint64_t end = start + wait;
  struct timespec dl = {(time_t)(end / 1000000000u), (long)(end % 1000000000u)};
  while (P.waiting && P.gen == gen &&
         rt_fn.pthread_cond_timedwait(&P.cv, &P.mu, &dl) != ETIMEDOUT) {
  }
  if (P.waiting && P.gen == gen) P.waiting = 0; /* the wait ended */
  uint64_t spent = now_ns() - start;
  P.total_pauses++;
  P.total_ns += spent;
  rt_fn.pthread_mutex_unlock(&P.mu);
  rt_busy = busy;
  pt.pauses++;
  pt.spent_ns += spent;
}

/* End the pause @p gen if it still runs (caller holds P.mu). */
static void end_pause(uint64_t gen) {
  if (P.waiting && P.gen == gen) {
    P.waiting = 0;
    P.woken_count++;
    pthread_cond_broadcast(&P.cv);
  }
}

/* The calling thread made the step a paused thread waited for at its previous access: that
 * access has now been performed (this is a later hook of the same thread), so the paused
 * thread may go on. Ending the pause at the access's own hook would let the paused thread run
 * before the access is performed, and the recorded order would not be the real one. */
static void flush_wake(void) {
  if (RT_LIKELY(!pt.wake_gen)) return;
  int busy = rt_busy;
  rt_busy = 1;
  rt_fn.pthread_mutex_lock(&P.mu);
  end_pause(pt.wake_gen);
  rt_fn.pthread_mutex_unlock(&P.mu);
  rt_busy = busy;
  pt.wake_gen = 0;
}

void rt_perturb_begin(void) {
  if (!P.on) return;
  flush_wake();
  pt.events = 0;
  pt.n_fp = 0;
  pt.n_rel = 0;
}

static int may_pause(const rt_thread *t) {
  return P.on && t->txn_depth && pt.events && pt.spent_ns < P.budget_ns &&
         !__atomic_load_n(&P.waiting, __ATOMIC_RELAXED) && RT_ACTIVE();
}

void rt_perturb_access(rt_thread *t, uint64_t addr, int write, uint64_t pc) {
  if (!P.on) return;
  flush_wake();
  if (!may_pause(t)) return;
  int kind = write ? K_WRITE : K_READ;
  int i = fp_find(addr);
  if (i >= 0 && (pt.fp_kind[i] & K_PAUSED)) return;
  /* AtomFuzzer: the transaction touches this address again. CTrigger: another thread touched
   * it, or an earlier address of this transaction, in a conflicting way. */
  int candidate = i >= 0 || hist_conflict(addr, t->id, kind);
  for (unsigned j = 0; !candidate && j < pt.n_fp; j++)
    candidate = hist_conflict(pt.fp[j], t->id, pt.fp_kind[j]);
  if (!candidate || !draw(t, pc)) return;
  if (i < 0 && pt.n_fp < FP_MAX) {
    i = (int)pt.n_fp++;
    pt.fp[i] = addr;
    pt.fp_kind[i] = 0;
  }
  if (i >= 0) pt.fp_kind[i] |= K_PAUSED;
  pause_for(t, addr, write);
}

void rt_perturb_acquire(uint64_t lock, uint64_t pc) {
  if (!P.on || rt_busy || !RT_ACTIVE()) return;
  rt_thread *t = rt_self;
  if (!t || t->ignore) return;
  flush_wake();
  /* About to block on a lock that the paused thread holds: end its pause, or both wait. */
  if (__atomic_load_n(&P.waiting, __ATOMIC_RELAXED) && P.waiter != t->id) {
    rt_busy = 1;
    rt_fn.pthread_mutex_lock(&P.mu);
    for (unsigned i = 0; P.waiting && P.waiter != t->id && i < P.n_held; i++)
      if (P.held[i] == lock) end_pause(P.gen);
    rt_fn.pthread_mutex_unlock(&P.mu);
    rt_busy = 0;
  }
  if (!may_pause(t)) return;
  int i = rel_find(lock);
  if (i >= 0 && (pt.rel_kind[i] & K_PAUSED)) return;
  /* AtomFuzzer: the transaction takes again a lock it released (two-stage locking). CTrigger:
   * another thread took it, or touched an earlier address of this transaction. */
  int candidate = i >= 0 || hist_conflict(lock | LOCK_TAG, t->id, K_WRITE);
  for (unsigned j = 0; !candidate && j < pt.n_fp; j++)
    candidate = hist_conflict(pt.fp[j], t->id, pt.fp_kind[j]);
  if (!candidate || !draw(t, pc)) return;
  if (i < 0 && pt.n_rel < REL_MAX) {
    i = (int)pt.n_rel++;
    pt.rel[i] = lock;
    pt.rel_kind[i] = 0;
  }
  if (i >= 0) pt.rel_kind[i] |= K_PAUSED;
  pause_for(t, lock | LOCK_TAG, 1);
}

/* ---- bookkeeping after an event (the caller holds the event lock: no pause here) */

/* Another thread's event on @p key: the step the paused thread waits for? @p now: end the pause
 * at once (an acquire: it has happened), else at this thread's next hook (an access: it is
 * performed after its hook returns). */
static void wake_if(uint64_t tid, uint64_t key, int write, int now) {
  if (!__atomic_load_n(&P.waiting, __ATOMIC_RELAXED)) return;
  int busy = rt_busy;
  rt_busy = 1;
  rt_fn.pthread_mutex_lock(&P.mu);
  if (P.waiting && P.waiter != tid && P.pending == key && (write || P.pending_write)) {
    if (now) end_pause(P.gen);
    else pt.wake_gen = P.gen;
  }
  rt_fn.pthread_mutex_unlock(&P.mu);
  rt_busy = busy;
}

void rt_perturb_note(rt_thread *t, uint64_t addr, int write) {
  if (!P.on) return;
  flush_wake(); /* a step of an earlier access (this access's hook came after it) */
  hist_note(addr, t->id, write);
  if (t->txn_depth) {
    pt.events++;
    int i = fp_find(addr);
    if (i < 0 && pt.n_fp < FP_MAX) {
      i = (int)pt.n_fp++;
      pt.fp[i] = addr;
      pt.fp_kind[i] = 0;
    }
    if (i >= 0) pt.fp_kind[i] |= write ? K_WRITE : K_READ;
  }
  wake_if(t->id, addr, write, 0);
}

void rt_perturb_sync(rt_thread *t, uint32_t kind, uint64_t lock) {
  if (!P.on) return;
  flush_wake();
  if (kind == ATOM_ACQUIRE) {
    if (pt.n_held < HELD_MAX) pt.held_lock[pt.n_held++] = lock;
    hist_note(lock | LOCK_TAG, t->id, 1);
    if (t->txn_depth) pt.events++;
    wake_if(t->id, lock | LOCK_TAG, 1, 1);
  } else if (kind == ATOM_RELEASE) {
    for (unsigned i = pt.n_held; i-- > 0;)
      if (pt.held_lock[i] == lock) {
        pt.held_lock[i] = pt.held_lock[--pt.n_held];
        break;
      }
    if (t->txn_depth && rel_find(lock) < 0 && pt.n_rel < REL_MAX) {
      pt.rel[pt.n_rel] = lock;
      pt.rel_kind[pt.n_rel++] = 0;
    }
  }
}

void rt_perturb_thread_end(void) {
  if (!P.on) return;
  flush_wake();
  if (!__atomic_load_n(&P.waiting, __ATOMIC_RELAXED)) return;
  /* A thread that ends will not make the awaited step. */
  rt_fn.pthread_mutex_lock(&P.mu);
  if (P.waiting && P.waiter != (rt_self ? rt_self->id : UINT64_MAX)) end_pause(P.gen);
  rt_fn.pthread_mutex_unlock(&P.mu);
}
