/* A compute-heavy multithreaded program for the tsan-rt benchmark (bench_tsan_rt.py): two
 * threads multiply two N x N matrices (each computes every other row, reading A and B from
 * memory) and add each row's sum to a shared checksum under a mutex (the atomic function
 * add_row). About 2 N^3 reads and N^2 writes. Prints the checksum. */
#include <pthread.h>
#include <stdio.h>

#define N 120

static double a[N][N], b[N][N], c[N][N];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double checksum;

void add_row(double sum) {
  pthread_mutex_lock(&lock);
  checksum += sum;
  pthread_mutex_unlock(&lock);
}

static void *worker(void *arg) {
  int first = (int)(size_t)arg;
  for (int i = first; i < N; i += 2) {
    double row = 0;
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
      c[i][j] = s;
      row += s;
    }
    add_row(row);
  }
  return NULL;
}

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      a[i][j] = (i + j) % 7;
      b[i][j] = (i * j) % 5;
    }
  pthread_t t[2];
  for (size_t i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("checksum %.0f\n", checksum);
  return 0;
}
