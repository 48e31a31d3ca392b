/* Memory one thread owns (doc/tsan-rt.md, "How events are ordered").
 *
 * owned publish: thread A initializes x alone (outside any transaction: x is A's), then, in
 * the middle of B's atomic function checked(), reads y (which checked() wrote) and writes x
 * again; checked() then reads x. The cycle checked() -> A (y) -> checked() (x) goes through
 * A's write of x to memory only A had touched: a violation that must be reported. The schedule
 * is forced with pipes, which the runtime does not record; A stays alive, doing nothing the
 * runtime sees, until checked() has read x (so only the publication of x can put A's write
 * before that read).
 *
 * owned private: two threads each write and read their own array 1000 times (no memory in
 * common, no synchronization); main then sums both in the atomic function sum_up.
 *
 * ATOMICITY_OPTIONS: atomic=checked,sum_up */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pipe_turns.h"

static int to_a[2], to_b[2], fin[2];
int x, y, sink;

void checked(void) {
  y = 1;          /* B writes y (B's own so far) */
  pass(to_a[1]);  /* A runs: reads y, writes x */
  await(to_b[0]);
  sink = x;       /* B reads x: x was A's alone until now */
}

static void *thread_a(void *arg) {
  (void)arg;
  for (int i = 0; i < 100; i++) x = i; /* x is A's */
  await(to_a[0]);
  x = y + 1; /* reads y (shared now), writes x (still A's) */
  pass(to_b[1]);
  await(fin[0]); /* alive until checked() is done */
  return NULL;
}

static void *thread_b(void *arg) {
  (void)arg;
  checked();
  pass(fin[1]);
  return NULL;
}

#define WORDS 64
static int mine[2][WORDS];

static void *thread_private(void *arg) {
  int *a = mine[(size_t)arg];
  for (int rep = 0; rep < 1000; rep++)
    for (int i = 0; i < WORDS; i++) a[i] += rep;
  return NULL;
}

long sum_up(void) {
  long s = 0;
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < WORDS; i++) s += mine[t][i];
  return s;
}

int main(int argc, char **argv) {
  pthread_t a, b;
  if (argc > 1 && !strcmp(argv[1], "publish")) {
    if (pipe(to_a) || pipe(to_b) || pipe(fin)) return 2;
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
  } else {
    pthread_create(&a, NULL, thread_private, (void *)0);
    pthread_create(&b, NULL, thread_private, (void *)1);
  }
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  if (argc > 1 && !strcmp(argv[1], "publish")) printf("x = %d, sink = %d\n", x, sink);
  else printf("sum = %ld\n", sum_up());
  return 0;
}
