/* A flag handoff with C11 atomics: producer (declared atomic) fills plain data and publishes it
 * with a release store; the consumer thread spins on an acquire load (outside any atomic
 * function: a spin inside one would really be unserializable), then consumer (declared atomic)
 * checks the flag once more with an acquire load and reads the data. Relaxed operations on a
 * statistics counter, which order nothing, and sequentially consistent ones on a done counter
 * are recorded with and without flags respectively. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define ITEMS 16

static long data[ITEMS];
static atomic_int flag;
static atomic_long stats;
static atomic_int done;
static long total;

void producer(void) {
  for (int i = 0; i < ITEMS; i++) data[i] = i * i;
  atomic_fetch_add_explicit(&stats, 1, memory_order_relaxed);
  atomic_store_explicit(&flag, 1, memory_order_release);
}

void consumer(void) {
  if (!atomic_load_explicit(&flag, memory_order_acquire)) return;
  for (int i = 0; i < ITEMS; i++) total += data[i];
  total += atomic_load_explicit(&stats, memory_order_relaxed);
}

static void *produce(void *arg) {
  (void)arg;
  producer();
  atomic_fetch_add(&done, 1);
  return NULL;
}

static void *consume(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&flag, memory_order_acquire)) sched_yield();
  consumer();
  atomic_fetch_add(&done, 1);
  return NULL;
}

int main(void) {
  pthread_t c, p;
  pthread_create(&c, NULL, consume, NULL); /* the consumer first: it waits for the flag */
  pthread_create(&p, NULL, produce, NULL);
  pthread_join(c, NULL);
  pthread_join(p, NULL);
  int expect = 1;
  int swapped = atomic_compare_exchange_strong(&flag, &expect, 2); /* succeeds */
  expect = 1;
  int failed = atomic_compare_exchange_strong_explicit(&flag, &expect, 3, memory_order_acq_rel,
                                                       memory_order_relaxed); /* fails */
  printf("total %ld done %d cas %d %d\n", total, atomic_load(&done), swapped, failed);
  return 0;
}
