/* The runtime's state: configuration, the session, threads, and the one lock that serializes
 * events so that the recorded order is a real linearization of the execution.
 *
 * Ordering rules (doc/tsan-rt.md): an access is recorded by the hook that the compiler places
 * just before it; an acquire is recorded after the lock was obtained, a release before it is
 * given up, a fork before the child exists, a join after the child ended. So every event that
 * happens-before another is recorded before it. */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

rt_real rt_fn;
int rt_active;
int rt_have_atomic;
RT_TLS rt_thread *rt_self;
RT_TLS int rt_busy;

static struct {
  int init_state;        /* 0 not started, 1 running, 2 done */
  int atexit_done;
  int end_state;         /* RT_END_*: who finishes the run, and whether it is done */
  int violations;        /* the run ended with at least one report (valid when done) */
  int in_child;          /* a fork child: no checking, no output */
  int json_dirty;        /* a report arrived: rewrite the JSON report file */
  const atom_report **pending; /* reports found during the current atom_push / atom_finish */
  size_t n_pending, cap_pending;
  size_t suppressed;     /* reports matched by suppressions= */
  atom_suppressions *suppressions;
  int json_failed;       /* the JSON report file could not be written (said once) */
  pid_t pid;             /* this process (a vfork child shares g but not the pid) */
  rt_options opt;
  atom_session *session;
  atom_trace_writer *writer;
  FILE *report;          /* NULL = stderr */
  pthread_mutex_t lock;  /* serializes events */
  pthread_mutex_t pc_lock; /* the pc -> atomic maps */
  pthread_key_t key;     /* runs rt_thread_end at thread exit */
  uint64_t next_tid;
  rt_thread *threads;    /* live threads, in start order */
  rt_map handles;        /* pthread_t -> id + 1 */
  rt_map rwlocks;        /* rwlock address -> struct rwstate * */
  rt_map pc_atomic;      /* return address in a function -> 1 + atomic */
  rt_map fn_atomic;      /* function start -> 1 + atomic */
  unsigned char *matched; /* per atomic name / range: was it ever entered */
  uint64_t unnamed_code;  /* distinct function entry pcs no symbol table named (pc_lock) */
  uint64_t events, rejected;
  uint64_t n_repeats, n_idle; /* accesses not pushed, of threads that ended (under the lock) */
  char first_reject[300];
  char program[4096];
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .pc_lock = PTHREAD_MUTEX_INITIALIZER};

/* A read-write lock: its writer and the threads that ever read-locked it. A reader t holds the
 * per-thread key rdkey(L, t); a writer holds L and every reader's key, so readers do not order
 * each other but writers and readers do. */
typedef struct rwstate {
  uint64_t writer; /* id + 1, 0 if none */
  uint64_t *readers;
  size_t n, cap;
} rwstate;

static uint64_t rdkey(uint64_t lock, uint64_t tid) { return lock ^ ((tid + 1) << 48); }

void rt_note(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "atomicity-rt: %s\n", buf);
}

/* ---- real functions */

#define RESOLVE(field, name)                                            \
  do {                                                                  \
    if (!rt_fn.field) {                                                 \
      void *p_ = dlsym(RTLD_NEXT, name);                                \
      if (p_) __atomic_store_n((void **)(void *)&rt_fn.field, p_, __ATOMIC_RELEASE); \
    }                                                                   \
  } while (0)

void rt_resolve(void) {
  int busy = rt_busy;
  rt_busy = 1;
  RESOLVE(memcpy, "memcpy");
  RESOLVE(memmove, "memmove");
  RESOLVE(memset, "memset");
  RESOLVE(pthread_create, "pthread_create");
  RESOLVE(pthread_join, "pthread_join");
  RESOLVE(pthread_tryjoin_np, "pthread_tryjoin_np");
  RESOLVE(pthread_timedjoin_np, "pthread_timedjoin_np");
  RESOLVE(pthread_exit, "pthread_exit");
  RESOLVE(pthread_mutex_lock, "pthread_mutex_lock");
  RESOLVE(pthread_mutex_trylock, "pthread_mutex_trylock");
  RESOLVE(pthread_mutex_timedlock, "pthread_mutex_timedlock");
  RESOLVE(pthread_mutex_unlock, "pthread_mutex_unlock");
  RESOLVE(pthread_rwlock_rdlock, "pthread_rwlock_rdlock");
  RESOLVE(pthread_rwlock_tryrdlock, "pthread_rwlock_tryrdlock");
  RESOLVE(pthread_rwlock_timedrdlock, "pthread_rwlock_timedrdlock");
  RESOLVE(pthread_rwlock_wrlock, "pthread_rwlock_wrlock");
  RESOLVE(pthread_rwlock_trywrlock, "pthread_rwlock_trywrlock");
  RESOLVE(pthread_rwlock_timedwrlock, "pthread_rwlock_timedwrlock");
  RESOLVE(pthread_rwlock_unlock, "pthread_rwlock_unlock");
  RESOLVE(pthread_spin_lock, "pthread_spin_lock");
  RESOLVE(pthread_spin_trylock, "pthread_spin_trylock");
  RESOLVE(pthread_spin_unlock, "pthread_spin_unlock");
  RESOLVE(pthread_cond_wait, "pthread_cond_wait");
  RESOLVE(pthread_cond_timedwait, "pthread_cond_timedwait");
  RESOLVE(sem_wait, "sem_wait");
  RESOLVE(sem_trywait, "sem_trywait");
  RESOLVE(sem_timedwait, "sem_timedwait");
  RESOLVE(sem_post, "sem_post");
  RESOLVE(cxa_guard_acquire, "__cxa_guard_acquire");
  RESOLVE(cxa_guard_release, "__cxa_guard_release");
  RESOLVE(cxa_guard_abort, "__cxa_guard_abort");
  rt_busy = busy;
}

/* ---- the event lock */

void rt_lock(void) { rt_fn.pthread_mutex_lock(&g.lock); }
void rt_unlock(void) { rt_fn.pthread_mutex_unlock(&g.lock); }

static int active(void) { return __atomic_load_n(&rt_active, __ATOMIC_ACQUIRE); }

static void write_json_file(void);
static void flush_reports(void);

void rt_push_flagged(uint32_t kind, uint32_t flags, uint64_t thread, uint64_t target,
                     uint64_t loc) {
  if (!rt_active) return; /* under the lock: finish clears it under the lock too */
  /* The calling thread's own event: its buffered accesses come first (program order), and
   * its next owned accesses are a new segment (this event may have changed what it knows). */
  rt_thread *self = rt_self;
  if (self && self->id == thread) {
    rt_pend_flush(self);
    self->seg++;
  }
  rt_push_event(kind, flags, thread, target, loc);
}

void rt_push_event(uint32_t kind, uint32_t flags, uint64_t thread, uint64_t target,
                   uint64_t loc) {
  if (!rt_active) return; /* a buffered access flushed after the end of the run */
  /* The count skip_idle reads (rt_idle.c), kept here where every BEGIN and END passes. */
  if (kind == ATOM_BEGIN) __atomic_store_n(&rt_open_txns, rt_open_txns + 1, __ATOMIC_RELEASE);
  else if (kind == ATOM_END) __atomic_store_n(&rt_open_txns, rt_open_txns - 1, __ATOMIC_RELEASE);
  atom_event ev = {kind, flags, thread, target, loc};
  g.events++;
  /* A new stack: the session learns its site before a report can name it (rt_stack.c). */
  if (RT_UNLIKELY(loc && !rt_stack_is_sited(loc))) rt_stack_site(g.session, loc);
  int rc = atom_push(g.session, &ev);
  if (rc == 0) {
    if (g.writer) rt_names_record(g.writer, &ev); /* "#name" directives before first use */
    if (g.writer) atom_trace_writer_write(g.writer, &ev);
  } else if (g.rejected++ == 0) {
    snprintf(g.first_reject, sizeof g.first_reject, "%s", atom_last_error());
  }
  if (RT_UNLIKELY(g.n_pending)) flush_reports();
  if (RT_UNLIKELY(g.json_dirty)) write_json_file();
}

void rt_push(uint32_t kind, uint64_t thread, uint64_t target, uint64_t loc) {
  rt_push_flagged(kind, 0, thread, target, loc);
}


/* ---- threads */

static void thread_link(rt_thread *t) {
  t->prev = NULL;
  t->next = g.threads;
  if (g.threads) g.threads->prev = t;
  g.threads = t;
  char name[32];
  snprintf(name, sizeof name, "T%llu", (unsigned long long)t->id);
  atom_set_name(g.session, ATOM_SPACE_THREAD, t->id, name);
}

static void thread_unlink(rt_thread *t) {
  if (t->prev) t->prev->next = t->next;
  else if (g.threads == t) g.threads = t->next;
  if (t->next) t->next->prev = t->prev;
  t->next = t->prev = NULL;
}

rt_thread *rt_threads(void) { return g.threads; }

/* The calling thread's stack range, for naming stack addresses (rt_heap.c). */
static void thread_stack(rt_thread *t) {
  pthread_attr_t a;
  void *lo = NULL;
  size_t n = 0;
  if (pthread_getattr_np(pthread_self(), &a) != 0) return;
  if (pthread_attr_getstack(&a, &lo, &n) == 0 && lo) {
    t->stack_lo = (uint64_t)(uintptr_t)lo;
    t->stack_hi = t->stack_lo + n;
  }
  pthread_attr_destroy(&a);
}

/* A thread record for the calling thread (rt_busy set by the caller). */
static rt_thread *thread_new(uint64_t id) {
  rt_thread *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->id = id;
  thread_stack(t);
  return t;
}

int rt_stack_owner(uint64_t addr, uint64_t *tid, uint64_t *fn) {
  for (rt_thread *t = g.threads; t; t = t->next) {
    if (addr < t->stack_lo || addr >= t->stack_hi) continue;
    *tid = t->id;
    *fn = 0;
    /* The frame holding addr: the innermost whose stack pointer at entry is at or below it
     * (frames grow down). Another thread's shadow stack is read as it changes: a stale frame
     * only gives a wrong function name. */
    long d = __atomic_load_n(&t->depth, __ATOMIC_RELAXED);
    if (d > RT_FRAMES) d = RT_FRAMES;
    for (long i = d; i-- > 0;) {
      uint64_t sp = __atomic_load_n(&t->frames[i].sp, __ATOMIC_RELAXED);
      if (sp && sp <= addr) {
        *fn = __atomic_load_n(&t->frames[i].fn, __ATOMIC_RELAXED);
        break;
      }
    }
    return 1;
  }
  return 0;
}

/* At thread exit (pthread key destructor): close an open transaction, forget the thread. */
static void thread_end(void *p) {
  rt_thread *t = p;
  rt_busy = 1;
  rt_perturb_thread_end();
  rt_lock();
  rt_pend_flush(t); /* before it is forgotten: nobody else could find its buffer */
  g.n_repeats += t->n_repeats;
  g.n_idle += t->n_idle;
  if (t->txn_depth) rt_push(ATOM_END, t->id, 0, 0);
  t->txn_depth = 0;
  thread_unlink(t);
  rt_unlock();
  rt_self = NULL;
  free(t);
  rt_crash_thread_end();
  /* rt_busy stays set: whatever this thread still runs is not recorded. */
}

rt_thread *rt_thread_get(void) {
  if (RT_LIKELY(rt_self != NULL)) return rt_self;
  if (!active() || rt_busy) return NULL;
  /* A thread the runtime did not see start: a root thread with the next id. */
  rt_busy = 1;
  rt_thread *t = thread_new(0);
  if (t) {
    rt_lock();
    t->id = g.next_tid++;
    thread_link(t);
    rt_unlock();
    pthread_setspecific(g.key, t);
    rt_self = t;
    rt_crash_thread_start();
  }
  rt_busy = 0;
  return t;
}

uint64_t rt_thread_fork(uint64_t pc) {
  rt_thread *t = rt_thread_get();
  if (!t) return UINT64_MAX;
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  rt_lock();
  uint64_t id = UINT64_MAX;
  if (rt_active) {
    id = g.next_tid++;
    rt_push(ATOM_FORK, t->id, id, loc);
  }
  rt_unlock();
  rt_busy = 0;
  return id;
}

void rt_thread_fork_failed(uint64_t child, uint64_t pc) {
  rt_thread *t = rt_self;
  if (!t) return;
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  rt_lock();
  rt_push(ATOM_JOIN, t->id, child, loc);
  rt_unlock();
  rt_busy = 0;
}

void rt_thread_start(uint64_t id) {
  rt_busy = 1;
  rt_thread *t = thread_new(id);
  if (t) {
    rt_lock();
    thread_link(t);
    rt_map_put(&g.handles, (uint64_t)pthread_self(), id + 1);
    rt_unlock();
    pthread_setspecific(g.key, t);
    rt_self = t;
    rt_crash_thread_start();
  }
  rt_busy = 0;
}

void rt_thread_joined(pthread_t th, uint64_t pc) {
  rt_thread *t = rt_thread_get();
  if (!t) return;
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  rt_lock();
  uint64_t v;
  if (rt_map_get(&g.handles, (uint64_t)th, &v)) {
    rt_push(ATOM_JOIN, t->id, v - 1, loc);
    rt_map_del(&g.handles, (uint64_t)th);
  }
  rt_unlock();
  rt_busy = 0;
}

void rt_thread_close_txn(uint64_t pc) {
  rt_thread *t = rt_self;
  if (!t || rt_busy) return;
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  rt_lock();
  if (t->txn_depth) rt_push(ATOM_END, t->id, 0, loc);
  t->txn_depth = 0;
  rt_unlock();
  rt_busy = 0;
}

/* ---- accesses and synchronization */

void rt_access(uint64_t addr, uint64_t size, int write, uint64_t pc) {
  if (RT_UNLIKELY(rt_busy) || !active()) return;
  rt_thread *t = rt_self;
  if (RT_UNLIKELY(!t) && !(t = rt_thread_get())) return;
  if (t->ignore || rt_idle(t)) return;
  uint64_t prev = 0;
  if (rt_owned && size <= 8 && rt_owned_access(t, addr, write, pc, &prev)) return;
  uint32_t kind = write ? ATOM_WRITE : ATOM_READ;
  rt_perturb_access(t, addr, write, pc);
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  rt_lock();
  if (prev) rt_flush_owner(prev); /* the owner's accesses to addr come before this one */
  if (size <= 8) {
    rt_push(kind, t->id, addr, loc);
  } else {
    for (uint64_t a = addr; a < addr + size; a += 4) {
      rt_share_locked(t, a);
      rt_push(kind, t->id, a, loc);
    }
  }
  rt_perturb_note(t, addr, write);
  rt_unlock();
  rt_busy = 0;
}

void rt_access_rmw(uint64_t addr, uint64_t size, uint64_t pc) {
  if (RT_UNLIKELY(rt_busy) || !active()) return;
  rt_thread *t = rt_self;
  if (RT_UNLIKELY(!t) && !(t = rt_thread_get())) return;
  if (t->ignore || rt_idle(t)) return;
  rt_perturb_access(t, addr, 1, pc);
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  rt_lock();
  for (uint64_t a = addr; a < addr + (size <= 8 ? 1 : size); a += 4) {
    rt_share_locked(t, a);
    rt_push(ATOM_READ, t->id, a, loc);
    rt_push(ATOM_WRITE, t->id, a, loc);
  }
  rt_perturb_note(t, addr, 1);
  rt_unlock();
  rt_busy = 0;
}

void rt_range(uint64_t addr, uint64_t size, int write, uint64_t pc) {
  if (RT_UNLIKELY(rt_busy) || !size || !active()) return;
  rt_thread *t = rt_self;
  if (RT_UNLIKELY(!t) && !(t = rt_thread_get())) return;
  if (t->ignore || rt_idle(t)) return;
  uint32_t kind = write ? ATOM_WRITE : ATOM_READ;
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  rt_lock();
  for (uint64_t a = addr & ~(uint64_t)3; a < addr + size; a += 4) {
    rt_share_locked(t, a);
    rt_push(kind, t->id, a, loc);
  }
  rt_unlock();
  rt_busy = 0;
}

/* The calling thread's record if a synchronization event of it is to be pushed, else NULL. */
static rt_thread *sync_thread(void) {
  if (RT_UNLIKELY(rt_busy) || !active()) return NULL;
  rt_thread *t = rt_self;
  return RT_LIKELY(t) ? t : rt_thread_get();
}

/* Push a synchronization event of t (rt_busy set by the caller). */
static void sync_push(rt_thread *t, uint32_t kind, uint64_t target, uint64_t loc) {
  rt_lock();
  rt_push(kind, t->id, target, loc);
  rt_perturb_sync(t, kind, target);
  rt_unlock();
}

void rt_sync(uint32_t kind, uint64_t target, uint64_t pc) {
  rt_thread *t = sync_thread();
  if (!t) return;
  rt_busy = 1;
  sync_push(t, kind, target, rt_stack_loc(t, pc));
  rt_busy = 0;
}

void rt_sync_loc(uint32_t kind, uint64_t target, uint64_t loc) {
  rt_thread *t = sync_thread();
  if (!t) return;
  rt_busy = 1;
  sync_push(t, kind, target, loc);
  rt_busy = 0;
}

static rwstate *rw_get(uint64_t lock) {
  uint64_t v;
  if (rt_map_get(&g.rwlocks, lock, &v)) return (rwstate *)(uintptr_t)v;
  rwstate *s = calloc(1, sizeof *s);
  if (s && rt_map_put(&g.rwlocks, lock, (uint64_t)(uintptr_t)s) != 0) {
    free(s);
    s = NULL;
  }
  return s;
}

void rt_rwlock(void *lock, int write, int acquire, uint64_t pc) {
  if (RT_UNLIKELY(rt_busy) || !active()) return;
  rt_thread *t = rt_self;
  if (RT_UNLIKELY(!t) && !(t = rt_thread_get())) return;
  uint64_t L = (uint64_t)(uintptr_t)lock;
  rt_busy = 1;
  pc = rt_stack_loc(t, pc); /* from here on, the loc */
  rt_lock();
  rwstate *s = rw_get(L);
  if (s) {
    if (!acquire) write = s->writer == t->id + 1; /* unlock: which kind did this thread hold */
    if (write && acquire) {
      s->writer = t->id + 1;
      rt_push(ATOM_ACQUIRE, t->id, L, pc);
      for (size_t i = 0; i < s->n; i++) rt_push(ATOM_ACQUIRE, t->id, rdkey(L, s->readers[i]), pc);
    } else if (write) {
      for (size_t i = s->n; i-- > 0;) rt_push(ATOM_RELEASE, t->id, rdkey(L, s->readers[i]), pc);
      rt_push(ATOM_RELEASE, t->id, L, pc);
      s->writer = 0;
    } else if (acquire) {
      size_t i = 0;
      while (i < s->n && s->readers[i] != t->id) i++;
      if (i == s->n) {
        if (s->n == s->cap) {
          size_t cap = s->cap ? 2 * s->cap : 4;
          uint64_t *r = realloc(s->readers, cap * sizeof *r);
          if (r) {
            s->readers = r;
            s->cap = cap;
          }
        }
        if (s->n < s->cap) s->readers[s->n++] = t->id;
      }
      rt_push(ATOM_ACQUIRE, t->id, rdkey(L, t->id), pc);
    } else {
      rt_push(ATOM_RELEASE, t->id, rdkey(L, t->id), pc);
    }
  }
  rt_unlock();
  rt_busy = 0;
}

/* ---- atomic functions */

static int file_matches(const char *path, const char *want) {
  size_t lp = strlen(path), lw = strlen(want);
  if (lw > lp) return 0;
  if (strcmp(path + lp - lw, want) != 0) return 0;
  return lp == lw || path[lp - lw - 1] == '/';
}

static int name_matches(const char *pattern, const rt_symbol *s) {
  if (!fnmatch(pattern, s->raw, 0) || !fnmatch(pattern, s->function, 0)) return 1;
  const char *paren = strchr(s->function, '(');
  if (!paren || paren == s->function) return 0;
  char bare[512];
  size_t n = (size_t)(paren - s->function);
  if (n >= sizeof bare) return 0;
  memcpy(bare, s->function, n);
  bare[n] = '\0';
  return !fnmatch(pattern, bare, 0);
}

/* Decide whether the function containing pc is declared atomic (caller holds pc_lock). */
static uint64_t decide(uint64_t pc) {
  rt_symbol s;
  if (rt_sym_code(pc, &s) != 0 || !s.function) {
    g.unnamed_code++;
    return 0;
  }
  uint64_t v;
  if (rt_map_get(&g.fn_atomic, s.start, &v)) return v - 1;
  int atomic = 0;
  for (size_t i = 0; i < g.opt.n_atomic; i++)
    if (name_matches(g.opt.atomic[i], &s)) {
      atomic = 1;
      if (g.matched) g.matched[i] = 1;
    }
  if (g.opt.n_ranges) {
    const char *file;
    unsigned line;
    if (rt_sym_function_line(s.start, &file, &line) == 0)
      for (size_t i = 0; i < g.opt.n_ranges; i++) {
        const struct rt_range *r = &g.opt.ranges[i];
        if (line >= r->first && line <= r->last && file_matches(file, r->file)) {
          atomic = 1;
          if (g.matched) g.matched[g.opt.n_atomic + i] = 1;
        }
      }
  }
  if (atomic && g.opt.verbosity >= 2) {
    const char *file = NULL;
    unsigned line = 0;
    rt_sym_function_line(s.start, &file, &line);
    if (file) rt_note("atomic function %s (%s:%u)", s.function, file, line);
    else rt_note("atomic function %s", s.function);
  }
  rt_map_put(&g.fn_atomic, s.start, (uint64_t)atomic + 1);
  return (uint64_t)atomic;
}

static int is_atomic(rt_thread *t, uint64_t pc) {
  size_t slot = (size_t)((pc >> 2) ^ (pc >> 11)) & 255;
  if (t->cache[slot].pc == pc) return (int)t->cache[slot].atomic;
  rt_busy = 1;
  rt_fn.pthread_mutex_lock(&g.pc_lock);
  uint64_t v;
  if (rt_map_get(&g.pc_atomic, pc, &v)) {
    v--;
  } else {
    v = decide(pc);
    rt_map_put(&g.pc_atomic, pc, v + 1);
  }
  rt_fn.pthread_mutex_unlock(&g.pc_lock);
  rt_busy = 0;
  t->cache[slot].pc = pc;
  t->cache[slot].atomic = v;
  return (int)v;
}

atom_trace_writer *rt_recording(void) { return rt_active ? g.writer : NULL; }

void rt_func_entry(uint64_t pc, uint64_t caller, uint64_t sp) {
  if (RT_UNLIKELY(rt_busy)) return;
  rt_thread *t = rt_self;
  if (RT_UNLIKELY(!t) && !(t = rt_thread_get())) return;
  long d = t->depth + 1;
  if (RT_LIKELY(d <= RT_FRAMES)) {
    struct rt_frame *f = &t->frames[d - 1];
    if (f->site != caller) { /* the same call again keeps the cached stack ids */
      f->site = caller;
      rt_stack_entered(t, d);
    }
    /* read by other threads naming a stack address (rt_stack_owner) */
    __atomic_store_n(&f->fn, pc, __ATOMIC_RELAXED);
    __atomic_store_n(&f->sp, sp, __ATOMIC_RELAXED);
  }
  __atomic_store_n(&t->depth, d, __ATOMIC_RELAXED);
  if (t->txn_depth || !rt_have_atomic || t->ignore || !active()) return;
  if (!is_atomic(t, pc)) return;
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  rt_lock();
  if (rt_active) {
    rt_push(ATOM_BEGIN, t->id, 0, loc); /* gives the session loc's site (rt_stack_site) */
    t->txn_depth = t->depth;
    rt_perturb_begin();
  }
  rt_unlock();
  rt_busy = 0;
}

void rt_func_exit(uint64_t pc) {
  if (RT_UNLIKELY(rt_busy)) return;
  rt_thread *t = rt_self;
  if (RT_UNLIKELY(!t)) return;
  if (RT_UNLIKELY(t->txn_depth) && t->txn_depth >= t->depth) {
    rt_busy = 1;
    uint64_t loc = rt_stack_loc(t, pc);
    rt_lock();
    rt_push(ATOM_END, t->id, 0, loc);
    t->txn_depth = 0;
    rt_unlock();
    rt_busy = 0;
  }
  if (RT_UNLIKELY(t->n_holds)) rt_names_exit(t); /* lock wrappers are learned here */
  if (t->depth > 0) __atomic_store_n(&t->depth, t->depth - 1, __ATOMIC_RELAXED);
}

/* ---- start and end */

static rt_output output(void) {
  rt_output o = {&g.opt, g.session, g.program, g.events, g.rejected, g.suppressions,
                 g.suppressed};
  return o;
}

/* Name a variable, lock or thread of a report (outside callbacks: atom_set_name refuses to run
 * inside one). Heap blocks are named again each time: an address may be another block now. */
static void name_key(int space, uint64_t key) {
  char buf[1000];
  if (space == ATOM_SPACE_THREAD && atom_get_name(g.session, space, key)) return;
  atom_set_name(g.session, space, key, rt_key_name(space, key, buf, sizeof buf));
}

/* Hand on one report: a suppressed one is only counted; else text is written now, and the JSON
 * report file is marked for rewriting. */
static void deliver(const atom_report *r) {
  if (g.suppressions && atom_suppressions_match(g.suppressions, r)) {
    g.suppressed++;
  } else if (g.opt.format == RT_FORMAT_TEXT) {
    rt_output o = output();
    rt_report_one(g.report ? g.report : stderr, &o, r);
  } else if (g.opt.report && g.opt.format == RT_FORMAT_JSON) {
    g.json_dirty = 1;
  }
}

/* Reports found by the last atom_push / atom_finish: name what they mention, then print them
 * (text) or mark the JSON report file for rewriting. Suppressed reports are counted only. */
static void flush_reports(void) {
  for (size_t k = 0; k < g.n_pending; k++) {
    const atom_report *r = g.pending[k];
    for (size_t i = 0, n = atom_report_var_count(r); i < n; i++)
      name_key(ATOM_SPACE_VAR, atom_report_var(r, i));
    for (size_t i = 0, n = atom_report_event_count(r); i < n; i++) {
      atom_event ev;
      if (atom_report_event(r, i, &ev, NULL) != 0) continue;
      int space = atom_kind_space(ev.kind);
      if (space) name_key(space, ev.target);
    }
    deliver(r);
  }
  g.n_pending = 0;
}

/* A new distinct report (from atom_push under the lock, or from atom_finish): its stacks are
 * told to the session now (allowed inside the callback); the report waits in g.pending until
 * the call returns (flush_reports), since names cannot be set inside a callback. A report
 * that is not stored (beyond the session's cap) does not outlive the callback: it is printed
 * now, with the names known so far. */
static void on_report(const atom_report *r, void *payload) {
  (void)payload;
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    uint64_t loc = 0;
    if (atom_report_txn(r, i, NULL, NULL, &loc) == 0) rt_stack_describe(g.session, loc);
  }
  for (size_t i = 0, n = atom_report_event_count(r); i < n; i++) {
    atom_event ev;
    if (atom_report_event(r, i, &ev, NULL) == 0) rt_stack_describe(g.session, ev.loc);
  }
  size_t count = atom_report_count(g.session);
  int stored = count && atom_report_get(g.session, count - 1) == r;
  if (stored && g.n_pending == g.cap_pending) {
    size_t cap = g.cap_pending ? 2 * g.cap_pending : 16;
    const atom_report **v = realloc(g.pending, cap * sizeof *v);
    if (v) {
      g.pending = v;
      g.cap_pending = cap;
    }
  }
  if (stored && g.n_pending < g.cap_pending) g.pending[g.n_pending++] = r;
  else deliver(r);
}

static void write_json_file(void) {
  g.json_dirty = 0;
  rt_output o = output();
  if (rt_report_json_file(g.opt.report, &o) != 0 && !g.json_failed++)
    rt_note("report=%s: cannot write: %s", g.opt.report, strerror(errno));
}

static void run_unchecked(void) {
  if (g.writer) atom_trace_writer_close(g.writer);
  g.writer = NULL;
  atom_session_free(g.session);
  g.session = NULL;
  if (g.report) fclose(g.report);
  g.report = NULL;
}

static void at_fork_child(void) {
  /* The child is another process: it neither checks nor prints (the parent does). */
  __atomic_store_n(&rt_active, 0, __ATOMIC_RELEASE);
  g.in_child = 1;
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  g.lock = fresh;
  g.pc_lock = fresh;
}

/* The whole of file path (malloc'ed, the caller frees it) and its length; NULL with errno set
 * when it cannot be read. */
static char *read_whole(const char *path, size_t *len) {
  FILE *f = fopen(path, "re");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap);
  while (text) {
    n += fread(text + n, 1, cap - n, f);
    if (n < cap) break; /* end of file or an error (ferror below) */
    char *more = realloc(text, cap * 2);
    if (!more) {
      free(text);
      text = NULL;
      break;
    }
    text = more;
    cap *= 2;
  }
  int e = text && ferror(f) ? EIO : errno;
  if (text && ferror(f)) {
    free(text);
    text = NULL;
  }
  fclose(f);
  errno = e;
  *len = n;
  return text;
}

static int configure(void) {
  char err[600];
  if (rt_options_parse(&g.opt, getenv("ATOMICITY_OPTIONS"), err, sizeof err) != 0) {
    rt_note("ATOMICITY_OPTIONS: %s; running unchecked", err);
    return -1;
  }
  if (rt_perturb_setup(&g.opt) != 0) return -1;
  if (g.opt.suppressions) {
    /* Read whole; the rules are the library's (atom_suppressions_parse). */
    size_t len = 0;
    char *text = read_whole(g.opt.suppressions, &len);
    if (!text) {
      rt_note("ATOMICITY_OPTIONS: suppressions=%s: cannot read: %s; running unchecked",
              g.opt.suppressions, strerror(errno));
      return -1;
    }
    int rc = atom_suppressions_parse(&g.suppressions, text, len);
    free(text);
    if (rc != 0) {
      rt_note("ATOMICITY_OPTIONS: suppressions=%s: %s; running unchecked", g.opt.suppressions,
              atom_last_error());
      return -1;
    }
  }
  rt_stack_depth = g.opt.stack_depth;
  rt_owned_setup(&g.opt);
  rt_idle_setup(&g.opt);
  size_t n_decl = g.opt.n_atomic + g.opt.n_ranges;
  if (n_decl) g.matched = calloc(n_decl, 1);
  if (g.opt.n_ranges && !rt_sym_have_lines() && g.opt.verbosity >= 1)
    rt_note("atomic_file: file:line ranges need DWARF line information, which this build "
            "cannot read (no libdw); only function names are used");
  if (!n_decl && !g.opt.record && !g.opt.lock_blocks) { /* lock_blocks=yes: lock blocks are units */
    if (g.opt.verbosity >= 1)
      rt_note("no atomic functions declared (ATOMICITY_OPTIONS=atomic=fn1,fn2, "
              "atomic_file=PATH or lock_blocks=yes); running unchecked");
    return -1;
  }
  ssize_t n = readlink("/proc/self/exe", g.program, sizeof g.program - 1);
  g.program[n > 0 ? n : 0] = '\0';
  atom_options ao;
  atom_options_init(&ao, ATOM_OPTIONS_VERSION);
  ao.on_report = on_report;
  if (atom_session_new(&g.session, &ao) != 0) {
    rt_note("cannot create a session: %s; running unchecked", atom_last_error());
    return -1;
  }
  char spec[512];
  for (size_t i = 0; i < g.opt.n_checkers; i++)
    if (rt_options_attach_spec(&g.opt, i, spec, sizeof spec) != 0 ||
        atom_session_attach(g.session, spec) != 0) {
      rt_note("ATOMICITY_OPTIONS: checkers=%s: %s; running unchecked", g.opt.checkers[i],
              atom_last_error());
      return -1;
    }
  if (g.opt.record && atom_trace_writer_open(&g.writer, g.opt.record) != 0) {
    rt_note("ATOMICITY_OPTIONS: record=%s: %s; running unchecked", g.opt.record,
            atom_last_error());
    return -1;
  }
  if (g.opt.report && g.opt.format == RT_FORMAT_JSON) {
    /* A complete (empty) document from the start: the file is valid however the run ends. */
    rt_output o = output();
    if (rt_report_json_file(g.opt.report, &o) != 0) {
      rt_note("ATOMICITY_OPTIONS: report=%s: cannot write: %s; running unchecked", g.opt.report,
              strerror(errno));
      return -1;
    }
  } else if (g.opt.report) {
    g.report = fopen(g.opt.report, "w");
    if (!g.report) {
      rt_note("ATOMICITY_OPTIONS: report=%s: cannot open for writing; running unchecked",
              g.opt.report);
      return -1;
    }
  }
  if (pthread_key_create(&g.key, thread_end) != 0) {
    rt_note("cannot create a thread key; running unchecked");
    return -1;
  }
  return 0;
}

void rt_init(void) {
  if (__atomic_load_n(&g.init_state, __ATOMIC_ACQUIRE) == 2) return;
  int expected = 0;
  if (!__atomic_compare_exchange_n(&g.init_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    return; /* another thread initializes; this one is not recorded until it is done */
  int busy = rt_busy;
  rt_busy = 1;
  rt_resolve();
  if (configure() == 0) {
    rt_thread *t = thread_new(0);
    if (t) {
      g.next_tid = 1;
      g.pid = getpid();
      thread_link(t);
      rt_map_put(&g.handles, (uint64_t)pthread_self(), 1);
      pthread_setspecific(g.key, t);
      rt_self = t;
      pthread_atfork(NULL, NULL, at_fork_child);
      rt_have_atomic = g.opt.n_atomic + g.opt.n_ranges > 0;
      rt_crash_init(g.opt.crash_timeout);
      rt_crash_thread_start();
      __atomic_store_n(&rt_active, 1, __ATOMIC_RELEASE);
    } else {
      run_unchecked();
    }
  } else {
    run_unchecked();
  }
  __atomic_store_n(&g.init_state, 2, __ATOMIC_RELEASE);
  rt_busy = busy;
}

static int cmp_thread(const void *a, const void *b) {
  const rt_thread *x = *(rt_thread *const *)a, *y = *(rt_thread *const *)b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* ---- the end of the run
 *
 * One thread finishes the run: it claims g.end_state (RT_END_RUNNING -> RT_END_FINISHING), and
 * every other thread that reaches an end (a second exit(), the library destructor, a fatal
 * signal) waits until it is RT_END_DONE. The work itself is end_check() then end_write(),
 * run by finish() at a normal exit, or by rt_crash.c in a child process at an abnormal end. */

/* Close every open transaction (threads still running or cut off), save the recording, run the
 * checkers' end. The caller holds the lock, or is the only thread (the crash child). */
static void end_check(void) {
  rt_owned_flush_all();
  for (rt_thread *t = g.threads; t; t = t->next) { /* threads still running: as they are now */
    g.n_repeats += __atomic_load_n(&t->n_repeats, __ATOMIC_RELAXED);
    g.n_idle += __atomic_load_n(&t->n_idle, __ATOMIC_RELAXED);
  }
  size_t n = 0;
  for (rt_thread *t = g.threads; t; t = t->next) n++;
  rt_thread **v = n ? calloc(n, sizeof *v) : NULL;
  if (v) {
    n = 0;
    for (rt_thread *t = g.threads; t; t = t->next) v[n++] = t;
    qsort(v, n, sizeof *v, cmp_thread);
    for (size_t i = 0; i < n; i++)
      if (v[i]->txn_depth) {
        rt_push(ATOM_END, v[i]->id, 0, 0);
        v[i]->txn_depth = 0;
      }
    free(v);
  } else {
    for (rt_thread *t = g.threads; t; t = t->next) /* no memory: not in thread order */
      if (t->txn_depth) {
        rt_push(ATOM_END, t->id, 0, 0);
        t->txn_depth = 0;
      }
  }
  __atomic_store_n(&rt_active, 0, __ATOMIC_RELEASE);
  /* The recording is complete before the checkers' end, which may be long. */
  if (g.writer && atom_trace_writer_close(g.writer) != 0)
    rt_note("record=%s: %s", g.opt.record, atom_last_error());
  g.writer = NULL;
  atom_finish(g.session); /* the predictive checkers report here (on_report) */
  flush_reports();
}

/* Write the JSON document or the text summary, and the notes. @return the number of reports. */
static size_t end_write(void) {
  rt_output o = output();
  size_t reports;
  if (g.opt.format == RT_FORMAT_JSON && g.opt.report) {
    write_json_file();
    reports = atom_report_count(g.session) + atom_report_dropped(g.session);
  } else {
    reports = rt_report_all(g.report ? g.report : stderr, &o);
  }
  reports = reports > g.suppressed ? reports - g.suppressed : 0; /* suppressed: not a failure */
  if (g.report) {
    fclose(g.report);
    g.report = NULL;
  }
  if (g.opt.verbosity >= 2 && (rt_owned || rt_skip_idle))
    rt_note("accesses not recorded: %llu made while no transaction was open (skip_idle), "
            "%llu repeats of accesses to memory one thread owned (owned)",
            (unsigned long long)g.n_idle, (unsigned long long)g.n_repeats);
  if (g.opt.verbosity >= 1) {
    if (g.rejected)
      rt_note("%llu events were ill-formed and dropped; the first: %s",
              (unsigned long long)g.rejected, g.first_reject);
    for (size_t i = 0; g.matched && i < g.opt.n_atomic + g.opt.n_ranges; i++) {
      if (g.matched[i]) continue;
      /* Blame inlining only when every entered function could be named: code that could not
       * be is where an atomic function may have run unrecognized. */
      if (i < g.opt.n_atomic && g.unnamed_code)
        rt_note("atomic function '%s' was never recognized: %llu entered function%s could not "
                "be named (a symbol table that could not be read)",
                g.opt.atomic[i], (unsigned long long)g.unnamed_code,
                g.unnamed_code == 1 ? "" : "s");
      else if (i < g.opt.n_atomic)
        rt_note("atomic function '%s' was never entered: not called, inlined (build with "
                "-fno-inline or -O0), or not compiled with -fsanitize=thread",
                g.opt.atomic[i]);
      else
        rt_note("no function starts in %s:%u-%u (atomic_file)", g.opt.ranges[i - g.opt.n_atomic].file,
                g.opt.ranges[i - g.opt.n_atomic].first, g.opt.ranges[i - g.opt.n_atomic].last);
    }
  }
  return reports;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int rt_end_usable(void) {
  return g.session && !g.in_child && __atomic_load_n(&g.init_state, __ATOMIC_ACQUIRE) == 2 &&
         getpid() == g.pid;
}

int rt_end_claim(void) {
  int expected = RT_END_RUNNING;
  return __atomic_compare_exchange_n(&g.end_state, &expected, RT_END_FINISHING, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int rt_end_state(void) { return __atomic_load_n(&g.end_state, __ATOMIC_ACQUIRE); }

int rt_end_wait(long ms) {
  for (long waited = 0; rt_end_state() != RT_END_DONE; waited++) {
    if (ms >= 0 && waited >= ms) return -1;
    nap_ms(1);
  }
  return 0;
}

int rt_end_trylock(long ms) {
  for (long waited = 0;; waited++) {
    if (rt_fn.pthread_mutex_trylock(&g.lock) == 0) return 1;
    if (waited >= ms) return 0;
    nap_ms(1);
  }
}

int rt_end_child(void) {
  /* Only this thread exists here: stdio locks held by threads of the parent must not be
   * waited for. */
  __fsetlocking(stderr, FSETLOCKING_BYCALLER);
  if (g.report) __fsetlocking(g.report, FSETLOCKING_BYCALLER);
  rt_crash_child = 1; /* the stack depot and heap map: try their locks (a stack not read is
                       * left undescribed, a block unnamed) */
  end_check();
  return end_write() > 0;
}

void rt_end_done(int violations, int locked) {
  g.violations = violations > 0 || (violations < 0 && atom_report_count(g.session) > 0);
  __atomic_store_n(&rt_active, 0, __ATOMIC_RELEASE);
  /* The child wrote the trace's tail, the reports and the JSON file through descriptors shared
   * with this process: this copy's buffers must not be written again. */
  g.writer = NULL;
  g.report = NULL;
  __atomic_store_n(&g.end_state, RT_END_DONE, __ATOMIC_RELEASE);
  if (locked) rt_unlock();
}

int rt_exit_status(int status) {
  if (rt_end_state() == RT_END_DONE && g.violations && g.opt.exitcode > 0) return g.opt.exitcode;
  return status;
}

/* End of a normal run (exit, or main returning): close open transactions, finish the checkers,
 * print, and choose the exit status. Run once; a second thread that gets here (two threads
 * calling exit, the library destructor) waits until the first is done. */
static void finish(void) {
  if (!rt_end_usable()) return;
  int busy = rt_busy;
  rt_busy = 1;
  if (!rt_end_claim()) {
    rt_end_wait(-1);
    rt_busy = busy;
    return;
  }
  rt_lock();
  end_check();
  rt_unlock();
  size_t reports = end_write();
  g.violations = reports > 0;
  if (reports && g.opt.exitcode > 0) {
    /* Before RT_END_DONE: a second exit() waiting for it cannot end with its own status. */
    fflush(NULL);
    rt_real_exit(g.opt.exitcode);
  }
  __atomic_store_n(&g.end_state, RT_END_DONE, __ATOMIC_RELEASE);
  rt_busy = busy;
}

static void at_exit(void) { finish(); }

void rt_init_atexit(void) {
  if (__atomic_exchange_n(&g.atexit_done, 1, __ATOMIC_ACQ_REL)) return;
  atexit(at_exit);
}

__attribute__((constructor)) static void rt_ctor(void) { rt_init(); }

/* In case no instrumented code registered the atexit handler (a program without __tsan_init);
 * and where a second thread's exit gets to the library destructors while the first one still
 * prints (exit() called in one thread while main returns in another), it waits here. */
__attribute__((destructor)) static void rt_dtor(void) { finish(); }
