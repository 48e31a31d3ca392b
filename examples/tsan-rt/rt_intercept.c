/* Interceptors: the runtime defines these C library functions, so the program (and the
 * libraries it uses, such as libstdc++) call them instead of the C library's; each one records
 * what it does and forwards to the real function found with dlsym(RTLD_NEXT). They are
 * exported without a symbol version, which lets them stand in for versioned references too.
 *
 * An acquire is recorded after the real call obtained the lock, a release before the real call
 * gives it up; a thread's fork before the thread exists, its join after it ended. Barriers,
 * pthread_once, condition variables and semaphores are flagged accesses of the object: a
 * release write before the real call lets another thread go on, an acquire read after it
 * returned (see "synchronization objects" below). */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "rt.h"

#define PC() RT_CALLER_PC()
#define ADDR(p) ((uint64_t)(uintptr_t)(p))
#define REAL(name) (rt_fn.name ? rt_fn.name : (rt_resolve(), rt_fn.name))

/* ---- memory */

/* Before the real functions are known (very early calls): byte loops that no compiler turns
 * back into a call to the function being defined. */
static void *copy_bytes(void *dst, const void *src, size_t n) {
  volatile unsigned char *d = dst;
  const volatile unsigned char *s = src;
  if (d < s) {
    for (size_t i = 0; i < n; i++) d[i] = s[i];
  } else {
    for (size_t i = n; i-- > 0;) d[i] = s[i];
  }
  return dst;
}

RT_EXPORT void *memcpy(void *dst, const void *src, size_t n);
RT_EXPORT void *memmove(void *dst, const void *src, size_t n);
RT_EXPORT void *memset(void *dst, int c, size_t n);

void *memcpy(void *dst, const void *src, size_t n) {
  if (!rt_fn.memcpy) {
    rt_resolve();
    if (!rt_fn.memcpy) return copy_bytes(dst, src, n);
  }
  if (!rt_busy && RT_ACTIVE()) {
    rt_range(ADDR(src), n, 0, PC());
    rt_range(ADDR(dst), n, 1, PC());
  }
  return rt_fn.memcpy(dst, src, n);
}

void *memmove(void *dst, const void *src, size_t n) {
  if (!rt_fn.memmove) {
    rt_resolve();
    if (!rt_fn.memmove) return copy_bytes(dst, src, n);
  }
  if (!rt_busy && RT_ACTIVE()) {
    rt_range(ADDR(src), n, 0, PC());
    rt_range(ADDR(dst), n, 1, PC());
  }
  return rt_fn.memmove(dst, src, n);
}

void *memset(void *dst, int c, size_t n) {
  if (!rt_fn.memset) {
    rt_resolve();
    if (!rt_fn.memset) {
      volatile unsigned char *d = dst;
      for (size_t i = 0; i < n; i++) d[i] = (unsigned char)c;
      return dst;
    }
  }
  if (!rt_busy && RT_ACTIVE()) rt_range(ADDR(dst), n, 1, PC());
  return rt_fn.memset(dst, c, n);
}

/* ---- threads */

typedef struct start_arg {
  void *(*fn)(void *);
  void *arg;
  uint64_t id;
} start_arg;

static void *thread_start(void *p) {
  rt_busy = 1;
  start_arg st = *(start_arg *)p;
  free(p);
  rt_busy = 0;
  rt_thread_start(st.id);
  return st.fn(st.arg);
}

RT_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                             void *arg);
int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  if (rt_busy || !RT_ACTIVE()) return REAL(pthread_create)(th, attr, fn, arg);
  rt_busy = 1;
  start_arg *st = malloc(sizeof *st);
  rt_busy = 0;
  if (!st) return REAL(pthread_create)(th, attr, fn, arg);
  uint64_t pc = PC();
  st->fn = fn;
  st->arg = arg;
  st->id = rt_thread_fork(pc);
  if (st->id == UINT64_MAX) {
    free(st);
    return REAL(pthread_create)(th, attr, fn, arg);
  }
  uint64_t id = st->id;
  int rc = REAL(pthread_create)(th, attr, thread_start, st);
  if (rc != 0) {
    free(st);
    rt_thread_fork_failed(id, pc);
  }
  return rc;
}

RT_EXPORT int pthread_join(pthread_t th, void **ret);
int pthread_join(pthread_t th, void **ret) {
  int rc = REAL(pthread_join)(th, ret);
  if (rc == 0) rt_thread_joined(th, PC());
  return rc;
}

RT_EXPORT int pthread_tryjoin_np(pthread_t th, void **ret);
int pthread_tryjoin_np(pthread_t th, void **ret) {
  int rc = REAL(pthread_tryjoin_np)(th, ret);
  if (rc == 0) rt_thread_joined(th, PC());
  return rc;
}

RT_EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime);
int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime) {
  int rc = REAL(pthread_timedjoin_np)(th, ret, abstime);
  if (rc == 0) rt_thread_joined(th, PC());
  return rc;
}

RT_EXPORT void pthread_exit(void *ret) __attribute__((noreturn));
void pthread_exit(void *ret) {
  /* Frames still open: the transaction ends here (the key destructor then forgets the thread). */
  rt_thread_close_txn(PC());
  REAL(pthread_exit)(ret);
}

/* ---- mutexes, read-write locks, spin locks */

static int acquired(int rc) { return rc == 0 || rc == EOWNERDEAD; }

RT_EXPORT int pthread_mutex_lock(pthread_mutex_t *m);
int pthread_mutex_lock(pthread_mutex_t *m) {
  rt_perturb_acquire(ADDR(m), PC()); /* may pause: schedule=perturb */
  int rc = REAL(pthread_mutex_lock)(m);
  if (acquired(rc)) rt_sync_loc(ATOM_ACQUIRE, ADDR(m), rt_lock_site(ADDR(m), PC()));
  return rc;
}

RT_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m);
int pthread_mutex_trylock(pthread_mutex_t *m) {
  int rc = REAL(pthread_mutex_trylock)(m);
  if (acquired(rc)) rt_sync_loc(ATOM_ACQUIRE, ADDR(m), rt_lock_site(ADDR(m), PC()));
  return rc;
}

RT_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime);
int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime) {
  rt_perturb_acquire(ADDR(m), PC()); /* may pause: schedule=perturb */
  int rc = REAL(pthread_mutex_timedlock)(m, abstime);
  if (acquired(rc)) rt_sync_loc(ATOM_ACQUIRE, ADDR(m), rt_lock_site(ADDR(m), PC()));
  return rc;
}

RT_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m);
int pthread_mutex_unlock(pthread_mutex_t *m) {
  rt_sync(ATOM_RELEASE, ADDR(m), PC());
  rt_lock_dropped(ADDR(m));
  return REAL(pthread_mutex_unlock)(m);
}

RT_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l);
int pthread_rwlock_rdlock(pthread_rwlock_t *l) {
  int rc = REAL(pthread_rwlock_rdlock)(l);
  if (rc == 0) rt_rwlock(l, 0, 1, PC());
  return rc;
}

RT_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) {
  int rc = REAL(pthread_rwlock_tryrdlock)(l);
  if (rc == 0) rt_rwlock(l, 0, 1, PC());
  return rc;
}

RT_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime);
int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime) {
  int rc = REAL(pthread_rwlock_timedrdlock)(l, abstime);
  if (rc == 0) rt_rwlock(l, 0, 1, PC());
  return rc;
}

RT_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l);
int pthread_rwlock_wrlock(pthread_rwlock_t *l) {
  int rc = REAL(pthread_rwlock_wrlock)(l);
  if (rc == 0) rt_rwlock(l, 1, 1, PC());
  return rc;
}

RT_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l);
int pthread_rwlock_trywrlock(pthread_rwlock_t *l) {
  int rc = REAL(pthread_rwlock_trywrlock)(l);
  if (rc == 0) rt_rwlock(l, 1, 1, PC());
  return rc;
}

RT_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime);
int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime) {
  int rc = REAL(pthread_rwlock_timedwrlock)(l, abstime);
  if (rc == 0) rt_rwlock(l, 1, 1, PC());
  return rc;
}

RT_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l);
int pthread_rwlock_unlock(pthread_rwlock_t *l) {
  rt_rwlock(l, 0, 0, PC());
  return REAL(pthread_rwlock_unlock)(l);
}

RT_EXPORT int pthread_spin_lock(pthread_spinlock_t *l);
int pthread_spin_lock(pthread_spinlock_t *l) {
  rt_perturb_acquire(ADDR(l), PC()); /* may pause: schedule=perturb */
  int rc = REAL(pthread_spin_lock)(l);
  if (rc == 0) rt_sync(ATOM_ACQUIRE, ADDR(l), PC());
  return rc;
}

RT_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l);
int pthread_spin_trylock(pthread_spinlock_t *l) {
  int rc = REAL(pthread_spin_trylock)(l);
  if (rc == 0) rt_sync(ATOM_ACQUIRE, ADDR(l), PC());
  return rc;
}

RT_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l);
int pthread_spin_unlock(pthread_spinlock_t *l) {
  rt_sync(ATOM_RELEASE, ADDR(l), PC());
  return REAL(pthread_spin_unlock)(l);
}

/* ---- synchronization objects as flagged accesses (doc/tsan-rt.md, "Synchronization").
 *
 * A release is a WRITE|RELEASE of the object, recorded before the real call can let another
 * thread go on; an acquire is a READ|ACQUIRE of it, recorded after the real call returned. The
 * predictive checkers order every release write of an object before every later acquire read
 * of it by another thread; the online checkers see plain conflicting accesses. They are
 * recorded for threads that ignore accesses too (as lock operations are), so that the order
 * they create is never missing. */

static void sync_access(const void *obj, int acquire, int release, uint64_t pc) {
  if (RT_UNLIKELY(rt_busy) || !RT_ACTIVE()) return;
  rt_thread *t = rt_self;
  if (RT_UNLIKELY(!t) && !(t = rt_thread_get())) return;
  rt_busy = 1;
  rt_lock();
  rt_share_locked(t, ADDR(obj));
  if (acquire) rt_push_flagged(ATOM_READ, ATOM_FLAG_ACQUIRE, t->id, ADDR(obj), pc);
  if (release) rt_push_flagged(ATOM_WRITE, ATOM_FLAG_RELEASE, t->id, ADDR(obj), pc);
  rt_unlock();
  rt_busy = 0;
}

/* The C library functions intercepted only here, resolved on first use (the pointers are
 * written once, with the same value by every thread that races to resolve them). */
static struct {
  int (*barrier_wait)(pthread_barrier_t *);
  int (*once)(pthread_once_t *, void (*)(void));
  int (*cond_signal)(pthread_cond_t *);
  int (*cond_broadcast)(pthread_cond_t *);
  int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
  int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
} next;

static void resolve_next(void **slot, const char *name) {
  int busy = rt_busy;
  rt_busy = 1; /* dlsym may allocate or copy: not the program's events */
  void *p = dlsym(RTLD_NEXT, name);
  rt_busy = busy;
  if (p) __atomic_store_n(slot, p, __ATOMIC_RELEASE);
}

#define NEXT(field, name) \
  (next.field ? next.field : (resolve_next((void **)(void *)&next.field, name), next.field))

/* pthread_barrier_wait: arriving, a thread reads (acquire) and writes (release) the barrier;
 * leaving, it reads it again (acquire). So every thread's events before the barrier happen
 * before every thread's events after it: each departure comes after every arrival. */
RT_EXPORT int pthread_barrier_wait(pthread_barrier_t *b);
int pthread_barrier_wait(pthread_barrier_t *b) {
  uint64_t pc = PC();
  sync_access(b, 1, 1, pc);
  int rc = NEXT(barrier_wait, "pthread_barrier_wait")(b);
  if (rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD) sync_access(b, 1, 0, pc);
  return rc;
}

/* pthread_once: the thread that runs the init routine writes (release) the control after the
 * routine returned; every caller reads it (acquire) after pthread_once returned. The routine
 * takes no argument, so the real pthread_once is given a trampoline that finds the call in a
 * thread-local. The trampoline copies it before running the routine: a routine that calls
 * pthread_once itself (nested initialization) replaces it, and the nested call restores it. A
 * routine that unwinds (cancellation, a C++ exception) did not complete: nothing is released. */
typedef struct once_call {
  pthread_once_t *control;
  void (*routine)(void);
  uint64_t pc;
} once_call;

static RT_TLS once_call once_current;

static void once_trampoline(void) {
  once_call c = once_current;
  c.routine();
  sync_access(c.control, 0, 1, c.pc);
}

RT_EXPORT int pthread_once(pthread_once_t *o, void (*routine)(void));
int pthread_once(pthread_once_t *o, void (*routine)(void)) {
  int (*real)(pthread_once_t *, void (*)(void)) = NEXT(once, "pthread_once");
  if (rt_busy || !RT_ACTIVE()) return real(o, routine);
  uint64_t pc = PC();
  once_call saved = once_current;
  once_current = (once_call){o, routine, pc};
  int rc = real(o, once_trampoline);
  once_current = saved;
  if (rc == 0) sync_access(o, 1, 0, pc);
  return rc;
}

/* ---- condition variables: a signal or broadcast writes (release) the condition variable; a
 * wait releases the mutex, and when it was woken (not on a timeout or an error) reads
 * (acquire) the condition variable after it took the mutex again. A spurious wake-up is
 * ordered after the signals before it, which can only hide a prediction. */

RT_EXPORT int pthread_cond_signal(pthread_cond_t *c);
int pthread_cond_signal(pthread_cond_t *c) {
  sync_access(c, 0, 1, PC());
  return NEXT(cond_signal, "pthread_cond_signal")(c);
}

RT_EXPORT int pthread_cond_broadcast(pthread_cond_t *c);
int pthread_cond_broadcast(pthread_cond_t *c) {
  sync_access(c, 0, 1, PC());
  return NEXT(cond_broadcast, "pthread_cond_broadcast")(c);
}

static void cond_woken(pthread_cond_t *c, pthread_mutex_t *m, int rc, uint64_t pc) {
  rt_sync(ATOM_ACQUIRE, ADDR(m), pc);
  if (rc == 0) sync_access(c, 1, 0, pc);
}

/* A wait is a cancellation point, and a thread cancelled in it owns the mutex again before its
 * cleanup handlers run (POSIX pthread_cond_wait): the handler that unlocks it must find the lock
 * held. The waits register a handler of their own, innermost, that records that ACQUIRE; it
 * runs after the C library re-locked the mutex and before the program's handlers. What the wait
 * needs after the handler is registered (a setjmp) is read from this addressable struct, which
 * a longjmp cannot clobber. */
typedef struct cond_waiter {
  pthread_mutex_t *m;
  uint64_t pc;
  int (*clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
} cond_waiter;

static void cond_cancelled(void *arg) {
  const cond_waiter *w = arg;
  rt_sync(ATOM_ACQUIRE, ADDR(w->m), w->pc);
}

RT_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  cond_waiter w = {m, PC(), NULL};
  rt_sync(ATOM_RELEASE, ADDR(m), w.pc);
  int rc;
  pthread_cleanup_push(cond_cancelled, &w);
  rc = REAL(pthread_cond_wait)(c, w.m);
  pthread_cleanup_pop(0);
  cond_woken(c, m, rc, w.pc);
  return rc;
}

RT_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                     const struct timespec *abstime);
int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  cond_waiter w = {m, PC(), NULL};
  rt_sync(ATOM_RELEASE, ADDR(m), w.pc);
  int rc;
  pthread_cleanup_push(cond_cancelled, &w);
  rc = REAL(pthread_cond_timedwait)(c, w.m, abstime);
  pthread_cleanup_pop(0);
  cond_woken(c, m, rc, w.pc);
  return rc;
}

/* glibc 2.30; C++'s std::condition_variable waits on the steady clock through it. */
RT_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                     const struct timespec *abstime);
int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                           const struct timespec *abstime) {
  cond_waiter w = {m, PC(), NEXT(cond_clockwait, "pthread_cond_clockwait")};
  if (!w.clockwait) return ENOSYS;
  rt_sync(ATOM_RELEASE, ADDR(m), w.pc);
  int rc;
  pthread_cleanup_push(cond_cancelled, &w);
  rc = w.clockwait(c, w.m, clock, abstime);
  pthread_cleanup_pop(0);
  cond_woken(c, m, rc, w.pc);
  return rc;
}

/* ---- semaphores: a post writes (release) the semaphore before it takes effect; a successful
 * wait reads (acquire) it after it returned. */

RT_EXPORT int sem_wait(sem_t *s);
int sem_wait(sem_t *s) {
  int rc = REAL(sem_wait)(s);
  if (rc == 0) sync_access(s, 1, 0, PC());
  return rc;
}

RT_EXPORT int sem_trywait(sem_t *s);
int sem_trywait(sem_t *s) {
  int rc = REAL(sem_trywait)(s);
  if (rc == 0) sync_access(s, 1, 0, PC());
  return rc;
}

RT_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime);
int sem_timedwait(sem_t *s, const struct timespec *abstime) {
  int rc = REAL(sem_timedwait)(s, abstime);
  if (rc == 0) sync_access(s, 1, 0, PC());
  return rc;
}

RT_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime);
int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime) {
  int (*real)(sem_t *, clockid_t, const struct timespec *) =
      NEXT(sem_clockwait, "sem_clockwait");
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  int rc = real(s, clock, abstime);
  if (rc == 0) sync_access(s, 1, 0, PC());
  return rc;
}

RT_EXPORT int sem_post(sem_t *s);
int sem_post(sem_t *s) {
  sync_access(s, 0, 1, PC());
  return REAL(sem_post)(s);
}

/* ---- C++ function-local statics: the initializing thread writes the guard when it releases
 * it; a thread that finds the object initialized has read it. */

RT_EXPORT int __cxa_guard_acquire(int64_t *guard);
RT_EXPORT void __cxa_guard_release(int64_t *guard);
RT_EXPORT void __cxa_guard_abort(int64_t *guard);

int __cxa_guard_acquire(int64_t *guard) {
  int rc = REAL(cxa_guard_acquire)(guard);
  if (rc == 0) rt_access(ADDR(guard), 1, 0, PC());
  return rc;
}

void __cxa_guard_release(int64_t *guard) {
  rt_access(ADDR(guard), 1, 1, PC());
  REAL(cxa_guard_release)(guard);
}

void __cxa_guard_abort(int64_t *guard) { REAL(cxa_guard_abort)(guard); }
