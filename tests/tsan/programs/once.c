/* pthread_once used by several threads: init_table runs once (and itself initializes a second
 * object with a nested pthread_once); every thread then reads the table in use_table (declared
 * atomic). */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_once_t inner_once = PTHREAD_ONCE_INIT;
static long table[8], scale, sums[THREADS];

static void init_scale(void) { scale = 3; }

static void init_table(void) {
  pthread_once(&inner_once, init_scale);
  for (int i = 0; i < 8; i++) table[i] = i * scale;
}

void use_table(int id) {
  long s = 0;
  for (int i = 0; i < 8; i++) s += table[i];
  sums[id] = s;
}

static void *worker(void *arg) {
  int id = (int)(long)arg;
  pthread_once(&once, init_table);
  use_table(id);
  return NULL;
}

int main(void) {
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  long total = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    total += sums[i];
  }
  printf("total %ld\n", total);
  return 0;
}
