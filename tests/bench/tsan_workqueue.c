/* A lock-heavy program for the tsan-rt benchmark (bench_tsan_rt.py): a work queue protected by
 * a mutex and two condition variables. The main thread enqueues 20000 jobs; four workers take
 * them, each job filling and summing a 64-int buffer of the worker's own (memory no other
 * thread touches), and add the result to a shared total under the queue's mutex (the atomic
 * function record_result). Prints the total.
 *
 * ATOMICITY_OPTIONS: atomic=record_result */
#include <pthread.h>
#include <stdio.h>

#define JOBS 20000
#define WORKERS 4
#define CAP 64
#define WORK 64

static int queue[CAP];
static int head, count, closed;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;
static long total;

static void put(int job) {
  pthread_mutex_lock(&mu);
  while (count == CAP) pthread_cond_wait(&not_full, &mu);
  queue[(head + count++) % CAP] = job;
  pthread_cond_signal(&not_empty);
  pthread_mutex_unlock(&mu);
}

/* @return 0 and *job, or -1 when the queue is closed and empty. */
static int take(int *job) {
  pthread_mutex_lock(&mu);
  while (count == 0 && !closed) pthread_cond_wait(&not_empty, &mu);
  if (count == 0) {
    pthread_mutex_unlock(&mu);
    return -1;
  }
  *job = queue[head];
  head = (head + 1) % CAP;
  count--;
  pthread_cond_signal(&not_full);
  pthread_mutex_unlock(&mu);
  return 0;
}

void record_result(long r) {
  pthread_mutex_lock(&mu);
  total += r;
  pthread_mutex_unlock(&mu);
}

static void *worker(void *arg) {
  (void)arg;
  int buf[WORK];
  int job;
  while (take(&job) == 0) {
    long sum = 0;
    for (int i = 0; i < WORK; i++) buf[i] = (job * 31 + i) % 1000;
    for (int i = 0; i < WORK; i++) sum += buf[i];
    record_result(sum);
  }
  return NULL;
}

int main(void) {
  pthread_t t[WORKERS];
  for (size_t i = 0; i < WORKERS; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int j = 0; j < JOBS; j++) put(j);
  pthread_mutex_lock(&mu);
  closed = 1;
  pthread_cond_broadcast(&not_empty);
  pthread_mutex_unlock(&mu);
  for (int i = 0; i < WORKERS; i++) pthread_join(t[i], NULL);
  printf("total %ld\n", total);
  return 0;
}
