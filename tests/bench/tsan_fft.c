/* An FFT-like kernel for the tsan-rt benchmark (bench_tsan_rt.py): four threads run the
 * butterfly stages of a radix-2 transform over one shared array of 2^m complex numbers (m = 13,
 * or the argument of -m), each thread taking a quarter of the butterflies of a stage, with a barrier between stages (so a
 * thread reads in one stage what another wrote in the one before). Each thread adds the energy
 * of its part to a shared total under a mutex after each stage (the atomic function
 * add_energy). The transform is run 4 times. Prints the total.
 *
 * Usage: tsan_fft [-m LOG_N]   (LOG_N from 2 to 24; the arrays are allocated for it)
 *
 * ATOMICITY_OPTIONS: atomic=add_energy */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 4

static int LOG_N = 13, N = 1 << 13;
static double *re, *im, *tw_re, *tw_im;
static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double energy;

void add_energy(double e) {
  pthread_mutex_lock(&lock);
  energy += e;
  pthread_mutex_unlock(&lock);
}

static void *worker(void *arg) {
  int id = (int)(size_t)arg;
  for (int round = 0; round < ROUNDS; round++) {
    for (int s = 1; s <= LOG_N; s++) {
      int half = 1 << (s - 1), step = N >> s;
      double e = 0;
      /* butterfly b of N/2: group b / half, offset b % half */
      for (int b = id; b < N / 2; b += THREADS) {
        int i = (b / half) * 2 * half + b % half, j = i + half, k = (b % half) * step;
        double xr = re[j] * tw_re[k] - im[j] * tw_im[k];
        double xi = re[j] * tw_im[k] + im[j] * tw_re[k];
        re[j] = (re[i] - xr) * 0.5;
        im[j] = (im[i] - xi) * 0.5;
        re[i] = (re[i] + xr) * 0.5;
        im[i] = (im[i] + xi) * 0.5;
        e += re[i] * re[i] + im[j] * im[j];
      }
      add_energy(e);
      pthread_barrier_wait(&barrier);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "-m")) {
    LOG_N = atoi(argv[2]);
    if (LOG_N < 2 || LOG_N > 24) {
      fprintf(stderr, "tsan_fft: -m %s: expected 2 to 24\n", argv[2]);
      return 2;
    }
    N = 1 << LOG_N;
  } else if (argc != 1) {
    fprintf(stderr, "usage: tsan_fft [-m LOG_N]\n");
    return 2;
  }
  re = malloc(N * sizeof *re);
  im = malloc(N * sizeof *im);
  tw_re = malloc(N / 2 * sizeof *tw_re);
  tw_im = malloc(N / 2 * sizeof *tw_im);
  if (!re || !im || !tw_re || !tw_im) {
    fprintf(stderr, "tsan_fft: out of memory\n");
    return 1;
  }
  for (int i = 0; i < N; i++) {
    re[i] = (i * 7919) % 101 - 50;
    im[i] = (i * 104729) % 89 - 44;
  }
  for (int k = 0; k < N / 2; k++) {
    tw_re[k] = cos(-2 * M_PI * k / N);
    tw_im[k] = sin(-2 * M_PI * k / N);
  }
  pthread_barrier_init(&barrier, NULL, THREADS);
  pthread_t t[THREADS];
  for (size_t i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  printf("energy %.3e\n", energy);
  free(re);
  free(im);
  free(tw_re);
  free(tw_im);
  return 0;
}
