/* Read-modify-write on a counter: two threads increment a shared counter; the increment reads
 * the counter, and writes it back later, so one update can be lost.
 *
 * ATOMICITY_OPTIONS: atomic=increment
 * Buggy: counter = 1 (one increment lost). Fixed (-DFIXED): counter = 2. */
#define _POSIX_C_SOURCE 200809L /* pipes */
#include <pthread.h>
#include <stdio.h>

#include "demo.h"

int counter;

#ifndef FIXED
void increment(void) {
  int v = counter; /* read */
  window();        /* the other thread increments here ... */
  counter = v + 1; /* ... and this write overwrites its update */
}
#else
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;

void increment(void) {
  pthread_mutex_lock(&counter_lock);
  counter = counter + 1; /* read and write in one critical section */
  pthread_mutex_unlock(&counter_lock);
  window();
}
#endif

int main(void) {
  if (demo_run(increment, increment) != 0) return 2;
  printf("counter = %d\n", counter);
  return 0;
}
