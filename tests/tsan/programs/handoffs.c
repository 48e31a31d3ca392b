/* Handoffs through a condition variable and through a semaphore, forced to happen in one
 * order: put_item/take_item and fill/drain are declared atomic; the consumer of each handoff
 * really waits (the semaphore through sem_clockwait). Timed waits that nobody ends time out and
 * must not be recorded as acquires. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER; /* nobody signals it */
static sem_t waiting; /* the consumer holds the mutex and is about to wait */
static sem_t full;    /* the semaphore handoff */
static sem_t empty;   /* nobody posts it */
static int ready;
static long item, slot[4];
static long taken, drained;

void put_item(void) { item = 42; }
void take_item(void) { taken = item; }
void fill(void) {
  for (int i = 0; i < 4; i++) slot[i] = 10 + i;
}
void drain(void) {
  for (int i = 0; i < 4; i++) drained += slot[i];
}

static struct timespec soon_on(clockid_t clock, long ms) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  ts.tv_nsec += ms * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  return ts;
}

static struct timespec soon(long ms) { return soon_on(CLOCK_REALTIME, ms); }

static void *consumer(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mutex);
  sem_post(&waiting); /* the producer can lock the mutex only once this thread waits */
  while (!ready) pthread_cond_wait(&cond, &mutex);
  pthread_mutex_unlock(&mutex);
  take_item();
  struct timespec ts = soon_on(CLOCK_MONOTONIC, 10000);
  if (sem_clockwait(&full, CLOCK_MONOTONIC, &ts) != 0) perror("sem_clockwait");
  drain();
  return NULL;
}

int main(void) {
  sem_init(&waiting, 0, 0);
  sem_init(&full, 0, 0);
  sem_init(&empty, 0, 0);
  pthread_t t;
  pthread_create(&t, NULL, consumer, NULL);
  sem_wait(&waiting);
  put_item();
  pthread_mutex_lock(&mutex);
  ready = 1;
  pthread_cond_signal(&cond);
  pthread_mutex_unlock(&mutex);
  fill();
  sem_post(&full);

  struct timespec ts = soon(10);
  pthread_mutex_lock(&mutex);
  int timed_cond = pthread_cond_timedwait(&never, &mutex, &ts);
  ts = soon_on(CLOCK_MONOTONIC, 10);
  int clock_cond = pthread_cond_clockwait(&never, &mutex, CLOCK_MONOTONIC, &ts);
  pthread_mutex_unlock(&mutex);
  ts = soon(10);
  int timed_sem = sem_timedwait(&empty, &ts) == -1 ? errno : 0;
  ts = soon_on(CLOCK_MONOTONIC, 10);
  int clock_sem = sem_clockwait(&empty, CLOCK_MONOTONIC, &ts) == -1 ? errno : 0;
  int tried = sem_trywait(&empty) == -1 ? errno : 0;

  pthread_join(t, NULL);
  printf("taken %ld drained %ld timeouts %d %d %d %d %d\n", taken, drained,
         timed_cond == ETIMEDOUT, clock_cond == ETIMEDOUT, timed_sem == ETIMEDOUT,
         clock_sem == ETIMEDOUT, tried == EAGAIN);
  return 0;
}
