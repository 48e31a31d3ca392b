/* FFT-shaped phases: N threads (argv[1], 2..4) run PHASES phases separated by one
 * pthread_barrier_wait. In each phase a thread's work (phase_work, declared atomic) reads what
 * every thread wrote in the previous phase and writes its own slice of the next buffer. Every
 * phase is serializable and the barrier orders the phases: no checker may report anything. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 4
#define SLICE 8
#define PHASES 4

static pthread_barrier_t barrier;
static long buf[2][MAX_THREADS * SLICE]; /* phase p reads buf[p % 2], writes buf[(p + 1) % 2] */
static int nthreads = MAX_THREADS;

void phase_work(int id, int phase) {
  const long *src = buf[phase % 2];
  long *dst = buf[(phase + 1) % 2];
  long sum = 0;
  for (int i = 0; i < nthreads * SLICE; i++) sum += src[i];
  for (int i = id * SLICE; i < (id + 1) * SLICE; i++) dst[i] = (src[i] + sum + i) % 10007;
}

static void *worker(void *arg) {
  int id = (int)(long)arg;
  for (int p = 0; p < PHASES; p++) {
    phase_work(id, p);
    pthread_barrier_wait(&barrier);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) nthreads = atoi(argv[1]);
  if (nthreads < 2 || nthreads > MAX_THREADS) return 2;
  for (int i = 0; i < nthreads * SLICE; i++) buf[0][i] = i;
  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
  pthread_t t[MAX_THREADS];
  for (long i = 0; i < nthreads; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&barrier);
  long check = 0;
  for (int i = 0; i < nthreads * SLICE; i++) check += buf[PHASES % 2][i] * (i + 1);
  printf("phases %d threads %d check %ld\n", PHASES, nthreads, check);
  return 0;
}
