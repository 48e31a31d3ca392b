// Lock blocks nobody declared atomic, taken through a lock()/unlock() wrapper pair: bump() reads
// and writes the counter in one lock block while reset() writes it without the lock. The block
// is a unit only with lock_blocks=yes, and then its report names bump() and the line of its
// lock() call, not the wrapper.
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void lock(void) { pthread_mutex_lock(&mu); }
static void unlock(void) { pthread_mutex_unlock(&mu); }

static void bump(void) {
  lock(); /* BUMP-LOCK */
  int c = counter;
  counter = c + 1;
  unlock();
}

static void reset(void) { counter = 0; }

static void *bumper(void *arg) {
  (void)arg;
  bump();
  return NULL;
}

static void *resetter(void *arg) {
  (void)arg;
  reset();
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, bumper, NULL);
  pthread_create(&b, NULL, resetter, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("done\n");
  return 0;
}
