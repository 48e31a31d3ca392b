/* Every intercepted synchronization primitive, with a protected counter: must run exactly as
 * without the runtime, and every recorded event must be well-formed. bump_all (declared atomic
 * by the test) takes each primitive in turn, one critical section after another, so two calls
 * that overlap would not be serializable: `gate`, held for the whole call, makes every
 * schedule serializable, which is what the test asserts. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define N 200

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static long by_mutex, by_rw, by_spin, by_sem, by_rec;
static _Atomic long by_atomic;
static int ready;
struct pair { long a, b; } shared_pair = {1, 2}, copies[N];

static struct timespec soon(long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += ms * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  return ts;
}

void bump_all(int i) {
  pthread_mutex_lock(&gate);
  struct timespec ts = soon(5000);
  if (i % 3 == 0) pthread_mutex_lock(&mutex);
  else if (i % 3 == 1) { while (pthread_mutex_trylock(&mutex) == EBUSY) {} }
  else pthread_mutex_timedlock(&mutex, &ts);
  by_mutex++;
  copies[i] = shared_pair; /* a struct copy */
  pthread_mutex_unlock(&mutex);

  pthread_mutex_lock(&rec);
  pthread_mutex_lock(&rec);
  by_rec++;
  pthread_mutex_unlock(&rec);
  pthread_mutex_unlock(&rec);

  if (i % 2) pthread_rwlock_wrlock(&rw);
  else { while (pthread_rwlock_trywrlock(&rw) == EBUSY) {} }
  by_rw++;
  pthread_rwlock_unlock(&rw);
  long seen;
  if (i % 2) pthread_rwlock_rdlock(&rw);
  else pthread_rwlock_timedrdlock(&rw, &ts);
  seen = by_rw;
  pthread_rwlock_unlock(&rw);
  (void)seen;

  if (i % 2) pthread_spin_lock(&spin);
  else { while (pthread_spin_trylock(&spin) == EBUSY) {} }
  by_spin++;
  pthread_spin_unlock(&spin);

  sem_wait(&sem);
  by_sem++;
  sem_post(&sem);

  atomic_fetch_add(&by_atomic, 1);
  pthread_mutex_unlock(&gate);
}

static void *worker(void *arg) {
  int id = *(int *)arg;
  pthread_mutex_lock(&mutex);
  while (!ready) pthread_cond_wait(&cond, &mutex);
  pthread_mutex_unlock(&mutex);
  for (int i = id; i < N; i += 2) bump_all(i);
  return NULL;
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&rec, &attr);
  pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
  sem_init(&sem, 0, 1);
  pthread_t t[2];
  int ids[2] = {0, 1};
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &ids[i]);
  struct timespec ts = soon(10); /* nobody signals: times out */
  pthread_mutex_lock(&mutex);
  ready = 1;
  pthread_cond_broadcast(&cond);
  pthread_cond_timedwait(&cond, &mutex, &ts);
  pthread_mutex_unlock(&mutex);
  ts = soon(5000);
  pthread_join(t[0], NULL);
  if (pthread_tryjoin_np(t[1], NULL) != 0) pthread_timedjoin_np(t[1], NULL, &ts);
  long sum = 0;
  for (int i = 0; i < N; i++) sum += copies[i].a + copies[i].b;
  printf("%ld %ld %ld %ld %ld %ld %ld\n", by_mutex, by_rec, by_rw, by_spin, by_sem,
         (long)by_atomic, sum);
  return 3; /* a status of its own, which the runtime must keep */
}
