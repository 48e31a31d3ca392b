/* atomicity-rt: the pieces the runtime's source files share.
 *
 * The runtime is the one place in the project with process-global state (STYLE.md, practice 8):
 * a program has one runtime. Everything here is internal and hidden (-fvisibility=hidden); only
 * the __tsan_* entry points and the intercepted functions are exported (RT_EXPORT).
 *
 * Linux x86_64 only (ELF symbol tables, glibc's dlsym(RTLD_NEXT), x86_64 16-byte atomics). */
#ifndef ATOMICITY_RT_H
#define ATOMICITY_RT_H

#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <atomicity.h>

#define RT_EXPORT __attribute__((visibility("default")))
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RT_TLS __thread __attribute__((tls_model("initial-exec")))
#define RT_ACTIVE() __atomic_load_n(&rt_active, __ATOMIC_RELAXED)
#define RT_CALLER_PC() ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* ---- rt_map.c: a small open-addressing map from non-zero uint64_t keys to uint64_t values. */
typedef struct rt_map {
  uint64_t *keys; /* 0 = empty, UINT64_MAX = deleted */
  uint64_t *vals;
  size_t cap, used, live;
} rt_map;

/** @return 1 and *val if @p key is present, else 0. */
int rt_map_get(const rt_map *m, uint64_t key, uint64_t *val);
/** Insert or replace. @return 0, or -1 when out of memory. */
int rt_map_put(rt_map *m, uint64_t key, uint64_t val);
void rt_map_del(rt_map *m, uint64_t key);
void rt_map_free(rt_map *m);

/* ---- rt_options.c: ATOMICITY_OPTIONS. */
enum { RT_FORMAT_TEXT, RT_FORMAT_JSON, RT_FORMAT_SARIF, RT_FORMAT_HTML };
enum { RT_SCHEDULE_NATURAL, RT_SCHEDULE_PERTURB };

typedef struct rt_options {
  char **atomic;        /* function names or fnmatch patterns (atomic= and atomic_file=) */
  size_t n_atomic;
  struct rt_range {     /* file:line ranges from atomic_file= */
    char *file;
    unsigned first, last;
  } *ranges;
  size_t n_ranges;
  char **checkers;      /* specs for atom_session_attach ("aerodrome:variant=basic") */
  size_t n_checkers;
  char *record;         /* STD trace path, or NULL */
  char *report;         /* NULL = stderr */
  int format;           /* RT_FORMAT_* */
  long max_reports;     /* printed per checker; -1 = all */
  int exitcode;         /* status of a run with a violation (default 66); 0 = keep the program's */
  int eager;            /* accepted for compatibility: text reports are always written as found */
  int crash_timeout;    /* seconds the reporting at an abnormal end may take (rt_crash.c) */
  int verbosity;        /* 0 reports only, 1 (default) + notes and summary, 2 + decisions */
  int schedule;         /* RT_SCHEDULE_* */
  int have_seed;        /* seed= given */
  uint64_t seed;
  long perturb_wait_ms;   /* longest single pause */
  long perturb_budget_ms; /* total pauses per thread */
  int lock_blocks;      /* lock blocks outside atomic functions are units (default 0) */
  int stack_depth;      /* frames kept per event's stack (default 8) */
  char *suppressions;   /* suppressions= file, or NULL */
  int owned;            /* owned=yes (default): memory one thread owns skips the event lock */
  int skip_idle;        /* skip_idle=yes (default): no access recorded while no transaction is
                         * open, when every checker judges conflict serializability */
} rt_options;

/**
 * Parse @p text (the value of ATOMICITY_OPTIONS; NULL = defaults) into @p o.
 * @return 0, or -1 with a one-line message in @p err.
 */
int rt_options_parse(rt_options *o, const char *text, char *err, size_t err_size);
void rt_options_free(rt_options *o);
/**
 * The spec to attach checker @p i with: as given, plus lock_blocks=yes|no (the lock_blocks
 * option) for the checkers that take it, unless the spec sets it itself.
 * @return 0, or -1 if it does not fit in @p size.
 */
int rt_options_attach_spec(const rt_options *o, size_t i, char *buf, size_t size);

/* ---- rt_symbolize.c: program counters and addresses to names and source lines. */
typedef struct rt_symbol {
  const char *function; /* demangled when it is a C++ name; NULL if unknown */
  const char *raw;      /* the symbol as in the ELF symbol table; NULL if unknown */
  uint64_t start;       /* address of the function (or object) */
  uint64_t offset;      /* pc - start */
  const char *module;   /* path of the object file; NULL if unknown */
  const char *file;     /* source file (from DWARF line info); NULL if unknown */
  unsigned line;        /* 0 if unknown */
} rt_symbol;

/** Find the function containing @p pc (a return address: the call is at pc - 1). @return 0 or -1. */
int rt_sym_code(uint64_t pc, rt_symbol *out);
/** Find the global variable containing @p addr. @return 0 or -1. */
int rt_sym_data(uint64_t addr, rt_symbol *out);
/** Source line of the first instruction of the function starting at @p start. @return 0 or -1. */
int rt_sym_function_line(uint64_t start, const char **file, unsigned *line);
/** @return 1 when DWARF line information can be read (libdw), else 0. */
int rt_sym_have_lines(void);
/** @return 1 if @p path (a module's path, may be NULL) is a system library's: under /lib/,
 *  /lib64/, /usr/lib/ or /usr/lib64/. */
int rt_sym_system_object(const char *path);

/* ---- rt_core.c: global state, events, threads. */
#define RT_FRAMES 64 /* shadow stack entries kept per thread (deeper frames are not named) */
#define RT_HOLDS 8   /* locks tracked per thread for learning lock wrappers */
#define RT_STACK_CACHE 64 /* per-thread (pc, callers) -> stack id cache entries */
#define RT_PEND 512       /* owned-memory accesses buffered per thread (a power of two) */
#define RT_SEEN 1024      /* per-thread cache of the owned accesses of the current segment */
#define RT_SHARED_CACHE 1024 /* per-thread cache of granules seen shared */

typedef struct rt_thread {
  uint64_t id;         /* thread key: 0 = main, then 1, 2, ... in creation order */
  long depth;          /* instrumented frames open */
  long txn_depth;      /* depth of the outermost atomic frame, 0 = no transaction open */
  int ignore;          /* __tsan_ignore_thread_begin nesting; dead threads too */
  struct rt_thread *next, *prev; /* the list of live threads */
  struct { uint64_t pc; uint64_t atomic; } cache[256]; /* pc -> atomic? (pc + 1 when atomic) */
  /* Shadow stack (rt_names.c): frames[d - 1] is the frame at depth d, while d <= RT_FRAMES. */
  struct rt_frame {
    uint64_t fn;   /* a pc inside the callee (the entry hook's return address) */
    uint64_t site; /* the call site: the return address in the caller */
    uint64_t sp;   /* the callee's stack pointer at entry: its frame is [sp, caller's sp) */
  } frames[RT_FRAMES];
  /* Stack ids (rt_stack.c): callers[d - 1] is the id of the callers' part of a stack at depth
   * d, valid while callers_ok[d - 1]; scache maps (pc, callers) to a stack id. */
  uint32_t callers[RT_FRAMES];
  unsigned char callers_ok[RT_FRAMES];
  struct { uint64_t pc; uint32_t callers, id; } scache[RT_STACK_CACHE];
  uint64_t stack_lo, stack_hi; /* the thread's stack (pthread_getattr_np), 0 if unknown */
  struct rt_hold {
    uint64_t lock;
    long depth;    /* the frame that holds it now (a wrapper hands it to its caller) */
    uint64_t at;   /* the loc its ACQUIRE is named after */
  } holds[RT_HOLDS];
  int n_holds;
  /* Owned memory (rt_owned.c; doc/tsan-rt.md, "How events are ordered"). seg
   * counts the events this thread pushed itself: the accesses between two of them form a
   * segment. pend is a ring written by this thread only (pend_tail, release) and emptied under
   * the event lock by whichever thread holds it (pend_head): accesses to memory this thread
   * owns, in program order, not yet pushed. seen: the owned accesses already buffered in this
   * segment (a read after an access, or a write after a write, to the same address in the same
   * segment is dropped). */
  uint64_t seg;
  uint64_t pend_head, pend_tail;
  struct rt_pend { uint64_t addr, loc; uint32_t kind; } pend[RT_PEND];
  struct { uint64_t addr, seg; uint64_t write; } seen[RT_SEEN];
  uint64_t shared[RT_SHARED_CACHE]; /* granule keys seen shared (RT_GRANULE_KEY) */
  uint64_t n_repeats, n_idle; /* accesses not pushed: repeats of owned ones, made while no
                               * transaction was open (added to the totals at the thread's end) */
} rt_thread;

/* Functions of the C library the interceptors forward to (dlsym(RTLD_NEXT)). */
typedef struct rt_real {
  int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
  int (*pthread_join)(pthread_t, void **);
  int (*pthread_tryjoin_np)(pthread_t, void **);
  int (*pthread_timedjoin_np)(pthread_t, void **, const struct timespec *);
  void (*pthread_exit)(void *) __attribute__((noreturn));
  int (*pthread_mutex_lock)(pthread_mutex_t *);
  int (*pthread_mutex_trylock)(pthread_mutex_t *);
  int (*pthread_mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
  int (*pthread_mutex_unlock)(pthread_mutex_t *);
  int (*pthread_rwlock_rdlock)(pthread_rwlock_t *);
  int (*pthread_rwlock_tryrdlock)(pthread_rwlock_t *);
  int (*pthread_rwlock_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
  int (*pthread_rwlock_wrlock)(pthread_rwlock_t *);
  int (*pthread_rwlock_trywrlock)(pthread_rwlock_t *);
  int (*pthread_rwlock_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
  int (*pthread_rwlock_unlock)(pthread_rwlock_t *);
  int (*pthread_spin_lock)(pthread_spinlock_t *);
  int (*pthread_spin_trylock)(pthread_spinlock_t *);
  int (*pthread_spin_unlock)(pthread_spinlock_t *);
  int (*pthread_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
  int (*pthread_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
  int (*sem_wait)(sem_t *);
  int (*sem_trywait)(sem_t *);
  int (*sem_timedwait)(sem_t *, const struct timespec *);
  int (*sem_post)(sem_t *);
  int (*cxa_guard_acquire)(int64_t *);
  void (*cxa_guard_release)(int64_t *);
  void (*cxa_guard_abort)(int64_t *);
  void *(*memcpy)(void *, const void *, size_t);
  void *(*memmove)(void *, const void *, size_t);
  void *(*memset)(void *, int, size_t);
} rt_real;

extern rt_real rt_fn;
/* 1 while events are recorded: configured, initialized, not finished, not in a fork child. */
extern int rt_active;
/* 1 when at least one atomic function or range is declared. */
extern int rt_have_atomic;

/* The calling thread; NULL before the runtime knows it. */
extern RT_TLS rt_thread *rt_self;
/* Non-zero while the calling thread runs runtime code: interceptors then only forward. */
extern RT_TLS int rt_busy;

/** Resolve rt_fn (idempotent, safe to call early). */
void rt_resolve(void);
/** Initialize once (idempotent). */
void rt_init(void);
/** Register the atexit handler once (from __tsan_init, so that it runs before library destructors). */
void rt_init_atexit(void);

/** @return the calling thread, adopting an unknown thread as a root thread; NULL if not active. */
rt_thread *rt_thread_get(void);

/** Take / drop the lock that serializes events. rt_busy must already be set. */
void rt_lock(void);
void rt_unlock(void);

/** Push one event (caller holds the lock). Ignored when the runtime is no longer active. */
void rt_push(uint32_t kind, uint64_t thread, uint64_t target, uint64_t loc);

/** Push one event as it is, without first pushing the calling thread's buffered accesses
 *  (caller holds the lock): what rt_push_flagged and the owned-memory flush build on. Keeps
 *  the count of open transactions (rt_open_txns). */
void rt_push_event(uint32_t kind, uint32_t flags, uint64_t thread, uint64_t target,
                   uint64_t loc);

/** The live threads, most recently started first (caller holds the event lock). */
rt_thread *rt_threads(void);

/** As rt_push, with atom_event::flags: ATOM_FLAG_ACQUIRE on a READ, ATOM_FLAG_RELEASE on a
 *  WRITE (caller holds the lock). */
void rt_push_flagged(uint32_t kind, uint32_t flags, uint64_t thread, uint64_t target,
                     uint64_t loc);

/** Record an access of @p size bytes at @p addr by the calling thread (takes the lock). */
void rt_access(uint64_t addr, uint64_t size, int write, uint64_t pc);
/** Record a read and then a write of @p size bytes at @p addr (one read-modify-write). */
void rt_access_rmw(uint64_t addr, uint64_t size, uint64_t pc);
/** Record an access to a range (memcpy, memset): one event per 4-byte word. */
void rt_range(uint64_t addr, uint64_t size, int write, uint64_t pc);
/** Push a synchronization event of the calling thread (ACQUIRE, RELEASE, ...). */
void rt_sync(uint32_t kind, uint64_t target, uint64_t pc);

/** Function entry and exit of the calling thread (pc identifies the function; caller is the
 *  return address in the calling function; sp the callee's stack pointer). */
void rt_func_entry(uint64_t pc, uint64_t caller, uint64_t sp);
/** As rt_sync, with a loc already computed (a stack id). */
void rt_sync_loc(uint32_t kind, uint64_t target, uint64_t loc);
/** Which live thread's stack holds @p addr: 1 with its id and the function whose frame holds it
 *  (0 if unknown), else 0. Caller holds the event lock. */
int rt_stack_owner(uint64_t addr, uint64_t *tid, uint64_t *fn);
void rt_func_exit(uint64_t pc);

/** The recording, if record= is on and the run is not finished (caller holds the event lock). */
atom_trace_writer *rt_recording(void);

/* ---- rt_names.c: lock sites named after user code; names in recordings. */

/** The loc (a stack id) to push for an ACQUIRE of @p lock at @p pc: the stack from the call
 *  site in the first frame up the stack that is not a lock wrapper. Tracks the hold for
 *  learning wrappers. */
uint64_t rt_lock_site(uint64_t lock, uint64_t pc);
/** The calling thread released @p lock. */
void rt_lock_dropped(uint64_t lock);
/** Before the frame at t->depth returns, if t holds locks: learn wrappers (takes the locks). */
void rt_names_exit(rt_thread *t);
/** @return 1 if @p pc is in a lock wrapper learned late (its acquisitions name its caller). */
int rt_names_is_wrapper_pc(uint64_t pc);
/** @return 1 if @p s is library code: a source in a system header or a system library's
 *  module (doc/tsan-rt.md, "Stacks"). */
int rt_sym_is_system(const rt_symbol *s);
/** Write the "#name" directives an event needs before it is recorded (caller holds the event
 *  lock). */
void rt_names_record(atom_trace_writer *w, const atom_event *ev);

/** Thread management for the interceptors. */
uint64_t rt_thread_fork(uint64_t pc);                    /* new child id, FORK pushed */
void rt_thread_fork_failed(uint64_t child, uint64_t pc); /* creation failed: JOIN pushed */
void rt_thread_start(uint64_t id);                       /* in the child */
void rt_thread_joined(pthread_t th, uint64_t pc);        /* after a successful join */
void rt_thread_close_txn(uint64_t pc);                   /* thread ends with frames open */
void rt_rwlock(void *lock, int write, int acquire, uint64_t pc);

/* ---- rt_owned.c: memory one thread owns (doc/tsan-rt.md, "How events are ordered"). Its
 * accesses of at most 8 bytes are buffered in the thread's ring (rt_thread.pend) without the
 * event lock, and pushed in program order under the lock. */
extern int rt_owned; /* the owned path is on (owned=yes, no record=, no perturb); set once */

/** At initialization: map the ownership table, and turn the path on unless @p o says
 *  owned=no, record= or schedule=perturb (or the table cannot be mapped). */
void rt_owned_setup(const rt_options *o);
/** The key of the 8-byte granule holding @p addr in the ownership table and in
 *  rt_thread.shared (never 0: 0 marks a free entry). */
#define RT_GRANULE_KEY(addr) (((addr) >> 3) + 1)
/** rt_owned_access past its first test: the ownership table (@p key: RT_GRANULE_KEY). */
int rt_owned_lookup(rt_thread *t, uint64_t addr, uint64_t key, int write, uint64_t pc,
                    uint64_t *prev);
/** The fast path of an access of at most 8 bytes by the calling thread @p t (rt_busy clear):
 *  @return 1 when it was buffered or dropped (the granule is t's), 0 when it goes through the
 *  lock; then *@p prev is the previous owner (id + 1) whose buffer rt_flush_owner must push
 *  first, or 0. Inline because its first test, a granule this thread already saw shared (for
 *  good: it needs no look-up again), is the whole of it for shared memory. */
static inline int rt_owned_access(rt_thread *t, uint64_t addr, int write, uint64_t pc,
                                  uint64_t *prev) {
  uint64_t key = RT_GRANULE_KEY(addr);
  if (t->shared[(size_t)key & (RT_SHARED_CACHE - 1)] == key) {
    *prev = 0;
    return 0;
  }
  return rt_owned_lookup(t, addr, key, write, pc, prev);
}
/** Push @p t's buffered accesses in order (caller holds the event lock; @p t is the calling
 *  thread or a live thread found under the lock). */
void rt_pend_flush(rt_thread *t);
/** Push the buffer of the live thread whose owner word is @p owner (id + 1; caller holds the
 *  event lock). */
void rt_flush_owner(uint64_t owner);
/** Push every live thread's buffer (the end of the run; caller holds the event lock). */
void rt_owned_flush_all(void);
/** Before a locked push of an access to @p addr by @p t (caller holds the event lock): the
 *  address is no longer owned by one thread, and its owner's buffered accesses are pushed
 *  first. Every READ or WRITE pushed outside rt_access calls it. */
void rt_share_locked(rt_thread *t, uint64_t addr);

/* ---- rt_idle.c: accesses while no transaction is open (skip_idle=yes; doc/tsan-rt.md, "How
 * events are ordered"): with only aerodrome and velodrome attached, such an access is on no
 * cycle and is not recorded. */
extern int rt_skip_idle;  /* on (rt_idle_setup); set once */
extern long rt_open_txns; /* transactions open in all threads (written under the event lock
                           * by rt_push_event, read without it) */

/** At initialization: skip_idle is on when @p o asks for it, nothing records or perturbs,
 *  lock_blocks=no, and every checker is aerodrome or velodrome. */
void rt_idle_setup(const rt_options *o);
/** @return 1 when an access of @p t now is on no cycle (no transaction open anywhere), and
 *  counts it as not recorded. Lock-free: inline in the access hooks. */
static inline int rt_idle(rt_thread *t) {
  if (!rt_skip_idle || __atomic_load_n(&rt_open_txns, __ATOMIC_ACQUIRE) != 0) return 0;
  __atomic_store_n(&t->n_idle, t->n_idle + 1, __ATOMIC_RELAXED); /* read at the end */
  return 1;
}

/* ---- rt_core.c: the end of the run, shared with rt_crash.c. */
enum { RT_END_RUNNING, RT_END_FINISHING, RT_END_DONE }; /* g.end_state */

/** @return 1 when this process has a session whose end can be run (not a fork child). */
int rt_end_usable(void);
/** @return 1 when the caller now owns the end of the run (RUNNING -> FINISHING), else 0. */
int rt_end_claim(void);
/** @return RT_END_*. */
int rt_end_state(void);
/** Wait until the end is done, at most @p ms milliseconds (-1: no bound). @return 0 or -1. */
int rt_end_wait(long ms);
/** Take the event lock, waiting at most @p ms milliseconds. @return 1 if taken, else 0. */
int rt_end_trylock(long ms);
/** In the crash child (the only thread): close transactions, flush the recording, finish the
 * checkers, write the reports. @return 1 when there is at least one violation, else 0. */
int rt_end_child(void);
/** In the crashed process, after the child: the end is done (@p violations: 1, 0, or -1 when
 * unknown); this process's copies of the writer and report stream are dropped unwritten. Drops
 * the event lock when @p locked. */
void rt_end_done(int violations, int locked);
/** The status to exit with: exitcode= when the run is done and found a violation, else @p status. */
int rt_exit_status(int status);

/* ---- rt_crash.c: fatal signals, _exit/_Exit, concurrent exit(). */
/** Install the fatal-signal handlers (once, at initialization). */
void rt_crash_init(int timeout_seconds);
/** An alternate signal stack for the calling thread (so that a stack overflow is reported). */
void rt_crash_thread_start(void);
/** Remove the calling thread's alternate signal stack (thread exit). */
void rt_crash_thread_end(void);
/** The C library's _exit (not the runtime's interceptor). */
void rt_real_exit(int status) __attribute__((noreturn));

/* ---- rt_stack.c: stack ids (the loc of every event) and their frames. */
#define RT_DEPOT_CAP (UINT32_C(1) << 20) /* most distinct stacks (nodes) kept; ids below it */
extern int rt_stack_depth;               /* stack_depth= */
extern int rt_crash_child;               /* set in the crash child: see rt_name_lock */
/** Take @p mu (the depot's, the heap map's); in the crash child only try it. @return 1 if
 *  taken. */
int rt_name_lock(pthread_mutex_t *mu);

/** The stack id of an event at @p pc of thread @p t (its own thread) in the frame at depth
 *  @p d / at its current depth. A bare pc when the depot is full. */
uint64_t rt_stack_loc_at(rt_thread *t, uint64_t pc, long d);
static inline uint64_t rt_stack_loc(rt_thread *t, uint64_t pc) {
  /* The hot path, inline: the callers' id and the (pc, callers) pair are cached. */
  long d = t->depth;
  if (RT_LIKELY(d > 0 && d <= RT_FRAMES && t->callers_ok[d - 1])) {
    uint32_t callers = t->callers[d - 1];
    size_t slot = (size_t)((pc >> 1) ^ (pc >> 9) ^ callers) & (RT_STACK_CACHE - 1);
    if (RT_LIKELY(t->scache[slot].pc == pc && t->scache[slot].callers == callers))
      return t->scache[slot].id;
  }
  return rt_stack_loc_at(t, pc, d);
}
/** As rt_stack_loc for an allocation at @p pc: the frame of the calling instrumented
 *  function is kept even when @p pc is in the C++ library (operator new). */
uint64_t rt_stack_loc_alloc(rt_thread *t, uint64_t pc);
#define RT_FRAME_ENTRY (UINT64_C(1) << 63) /* depot pc tag: a function's entry frame */
/** Clean a path lexically ("a/b/../c" -> "a/c") into @p out. */
void rt_path_clean(const char *in, char *out, size_t size);
/** Thread @p t entered a frame at depth @p d from another site: cached ids are stale. */
void rt_stack_entered(rt_thread *t, long d);
/** The pcs of @p loc's frames, innermost first. @return how many (at most @p max). */
size_t rt_stack_frames(uint64_t loc, uint64_t *pcs, size_t max);
/** The frames of @p loc into @p pcs and the headline frame's symbol into *@p sym (may be
 *  NULL). @return the headline frame's position. */
size_t rt_stack_headline(uint64_t loc, uint64_t *pcs, size_t max, rt_symbol *sym);
/** Tell session @p s the location and stack of @p loc (once; caller holds the event lock). */
void rt_stack_describe(atom_session *s, uint64_t loc);
/* Give the session the stack of @p loc, once, before any report names it (rt_push does, for
 * every new loc): its frames from the headline frame outwards, the first standing for the
 * headline's (function, file, line). The session counts a transaction's begin location as
 * that frame when it deduplicates, so one atomic function reached through two call paths, or
 * one access under two different library frames, is one bug (caller holds the event lock).
 * Symbolizes each new pc once (a map per pc): cheap enough for every new stack. */
void rt_stack_site(atom_session *s, uint64_t loc);
extern uint64_t rt_sited_ids[]; /* rt_stack.c: a bit per depot id given its stack */
int rt_stack_pc_sited(uint64_t loc);
/* Was @p loc given its stack (rt_stack_site)? Caller holds the event lock. */
static inline int rt_stack_is_sited(uint64_t loc) {
  if (loc < RT_DEPOT_CAP) return (int)(rt_sited_ids[loc >> 6] >> (loc & 63) & 1);
  return rt_stack_pc_sited(loc);
}

/* ---- rt_heap.c: heap blocks (malloc interception) and names of memory. */
#define RT_HEAP_BLOCKS (1u << 20) /* most live heap blocks tracked */

/* ---- rt_perturb.c: schedule=perturb (doc/tsan-rt.md, "Finding bugs that hide"). The hooks
 * return at once with schedule=natural. */
/** Set up from the options (seed chosen here when not given). @return 0, or -1 (unchecked). */
int rt_perturb_setup(const rt_options *o);
/** @return 1 and the seed in *seed with schedule=perturb, else 0. */
int rt_perturb_seed(uint64_t *seed);
/** One summary line ("schedule=perturb seed=N: ...") with schedule=perturb, else nothing. */
void rt_perturb_summary(FILE *out);
/** Before an access of the calling thread @p t (not under the event lock): may pause it. */
void rt_perturb_access(rt_thread *t, uint64_t addr, int write, uint64_t pc);
/** Before the calling thread tries to take @p lock (interceptors): may pause it. */
void rt_perturb_acquire(uint64_t lock, uint64_t pc);
/** After an access was pushed (under the event lock): history, footprint, wake a paused thread. */
void rt_perturb_note(rt_thread *t, uint64_t addr, int write);
/** After an ACQUIRE or RELEASE of a lock was pushed (under the event lock). */
void rt_perturb_sync(rt_thread *t, uint32_t kind, uint64_t lock);
/** A transaction began on the calling thread (under the event lock). */
void rt_perturb_begin(void);
/** The calling thread ends: a thread paused for it stops waiting. */
void rt_perturb_thread_end(void);

/* ---- rt_report.c: printing the results. */
typedef struct rt_output {
  const rt_options *opt;
  atom_session *session;
  const char *program;
  uint64_t events, rejected;
  const atom_suppressions *suppressions; /* suppressions=, or NULL */
  size_t suppressed;                     /* reports it matched */
} rt_output;

/** JSON, SARIF, HTML: the whole document. Text: the summary (the reports were printed by rt_report_one as they
 * were found). @return the number of distinct reports. */
size_t rt_report_all(FILE *out, const rt_output *o);
/** Name of a key as reports print it (rt_heap.c): T<id>, a global's symbol, a heap block, a
 *  thread's stack; "memory at 0x..." when unknown. */
const char *rt_key_name(int space, uint64_t key, char *buf, size_t size);
/** A location as reports print it: "fn at file:line", "fn+0x1c (module)" or "0x...". */
void rt_describe_loc(uint64_t loc, char *buf, size_t size);
/** Text: print one report as it is found, and flush. */
void rt_report_one(FILE *out, const rt_output *o, const atom_report *r);
/** JSON: write the whole document to PATH.tmp, then rename it over @p path, so that @p path is
 * always a complete document. @return 0, or -1 with errno. */
int rt_report_json_file(const char *path, const rt_output *o);

/** Messages of the runtime: "atomicity-rt: ..." on standard error. */
void rt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
