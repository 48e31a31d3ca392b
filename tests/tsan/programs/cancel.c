/* A thread cancelled inside pthread_cond_wait, inside an atomic function: the mutex is locked
 * again before the cleanup handler that unlocks it runs, so every recorded event is
 * well-formed. Deterministic: main can lock the mutex only once the waiter released it by
 * entering the wait, and the condition is never signalled, so the waiter is cancelled there. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int started, never;
static long shared;

static void unlock(void *arg) { pthread_mutex_unlock(arg); }

__attribute__((noinline)) static void wait_in_transaction(void) {
  pthread_mutex_lock(&m);
  shared++;
  started = 1;
  pthread_cleanup_push(unlock, &m);
  while (!never) pthread_cond_wait(&c, &m);
  pthread_cleanup_pop(1);
}

static void *waiter(void *arg) {
  (void)arg;
  wait_in_transaction();
  return NULL;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, waiter, NULL) != 0) return 2;
  for (;;) {
    pthread_mutex_lock(&m);
    int ready = started; /* set under m: once seen, the waiter is inside the wait */
    pthread_mutex_unlock(&m);
    if (ready) break;
    sched_yield();
  }
  pthread_mutex_lock(&m);
  pthread_cancel(t);
  pthread_mutex_unlock(&m);
  void *res;
  pthread_join(t, &res);
  pthread_mutex_lock(&m); /* the cleanup handler released it */
  shared++;
  pthread_mutex_unlock(&m);
  printf("%s %ld\n", res == PTHREAD_CANCELED ? "cancelled" : "not cancelled", shared);
  return 0;
}
