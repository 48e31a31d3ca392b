/* Interceptors: the runtime defines these C library functions, so the program (and the
 * libraries it uses, such as libstdc++) call them instead of the C library's; each one records
 * what it does and forwards to the real function found with dlsym(RTLD_NEXT). They are
 * exported without a symbol version, which lets them stand in for versioned references too.
 *
 * An acquire is recorded after the real call obtained the lock, a release before the real call
 * gives it up; a thread's fork before the thread exists, its join after it ended. */
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
  int rc = REAL(pthread_mutex_lock)(m);
  if (acquired(rc)) rt_sync(ATOM_ACQUIRE, ADDR(m), rt_lock_site(ADDR(m), PC()));
  return rc;
}

RT_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m);
int pthread_mutex_trylock(pthread_mutex_t *m) {
  int rc = REAL(pthread_mutex_trylock)(m);
  if (acquired(rc)) rt_sync(ATOM_ACQUIRE, ADDR(m), rt_lock_site(ADDR(m), PC()));
  return rc;
}

RT_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime);
int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime) {
  int rc = REAL(pthread_mutex_timedlock)(m, abstime);
  if (acquired(rc)) rt_sync(ATOM_ACQUIRE, ADDR(m), rt_lock_site(ADDR(m), PC()));
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

/* ---- condition variables: the wait releases the mutex and takes it again */

RT_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  uint64_t pc = PC();
  rt_sync(ATOM_RELEASE, ADDR(m), pc);
  int rc = REAL(pthread_cond_wait)(c, m);
  rt_sync(ATOM_ACQUIRE, ADDR(m), pc);
  return rc;
}

RT_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                     const struct timespec *abstime);
int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  uint64_t pc = PC();
  rt_sync(ATOM_RELEASE, ADDR(m), pc);
  int rc = REAL(pthread_cond_timedwait)(c, m, abstime);
  rt_sync(ATOM_ACQUIRE, ADDR(m), pc);
  return rc;
}

/* ---- semaphores: each post and each successful wait is an atomic read-modify-write of the
 * count (the post recorded before it takes effect, the wait after). */

RT_EXPORT int sem_wait(sem_t *s);
int sem_wait(sem_t *s) {
  int rc = REAL(sem_wait)(s);
  if (rc == 0) rt_access_rmw(ADDR(s), 4, PC());
  return rc;
}

RT_EXPORT int sem_trywait(sem_t *s);
int sem_trywait(sem_t *s) {
  int rc = REAL(sem_trywait)(s);
  if (rc == 0) rt_access_rmw(ADDR(s), 4, PC());
  return rc;
}

RT_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime);
int sem_timedwait(sem_t *s, const struct timespec *abstime) {
  int rc = REAL(sem_timedwait)(s, abstime);
  if (rc == 0) rt_access_rmw(ADDR(s), 4, PC());
  return rc;
}

RT_EXPORT int sem_post(sem_t *s);
int sem_post(sem_t *s) {
  rt_access_rmw(ADDR(s), 4, PC());
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
