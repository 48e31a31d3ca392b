/* Shared memory inside transactions, for the tsan-rt benchmark (doc/performance.md, "tsan-rt"):
 * THREADS threads (default 2) each run one long atomic function (work) that adds 1 to every
 * element of one shared array of 4096 ints, ROUNDS times over (default 200). The main thread
 * runs work once first, so the array is no worker's own: every access of a worker is recorded
 * under the runtime's lock (neither the owned-memory path nor skip_idle applies). The workers
 * start together (a barrier), so with 2 their transactions are open at once and they contend
 * for the lock; with 1 there is no contention.
 *
 * Usage: tsan_shared [ROUNDS [THREADS]]   (accesses of the workers: THREADS x ROUNDS x 4096 x
 *                                          2, a read and a write each)
 *
 * ATOMICITY_OPTIONS: atomic=work */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096
#define MAX_THREADS 8

static int shared[N];
static int rounds = 1;
static pthread_barrier_t start;

void work(void) {
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < N; i++) shared[i] += 1; /* a read and a write, racing on purpose */
}

static void *worker(void *arg) {
  (void)arg;
  pthread_barrier_wait(&start);
  work();
  return NULL;
}

int main(int argc, char **argv) {
  int n_rounds = argc > 1 ? atoi(argv[1]) : 200, threads = argc > 2 ? atoi(argv[2]) : 2;
  if (n_rounds < 1 || threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "usage: tsan_shared [ROUNDS [THREADS]] (THREADS from 1 to %d)\n",
            MAX_THREADS);
    return 2;
  }
  work(); /* one round by the main thread: the array is no worker's own */
  rounds = n_rounds;
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  pthread_t t[MAX_THREADS];
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  long sum = 0;
  for (int i = 0; i < N; i++) sum += shared[i] > 0;
  printf("touched %ld\n", sum); /* the same in every schedule (the values race) */
  return 0;
}
