/* Check-then-act under the wrong lock: a box office sells seats under sales_lock, but closing
 * the sales (returning the unsold seats) takes admin_lock. A sale checks and updates the seat
 * count in one critical section, of a lock the closing does not take: the closing can come
 * between the check and the update, and a seat is both sold and returned.
 *
 * Nothing forces the schedule (DEMO_NATURAL): a natural run rarely shows the bug; run it with
 * schedule=perturb (doc/tsan-rt.md, "Finding bugs that hide").
 *
 * ATOMICITY_OPTIONS: atomic=sell,close_sales
 * Buggy: sometimes 1 sold + 10 returned of 10 seats. Fixed (-DFIXED, one lock): always 10. */
#define DEMO_NATURAL
#include <pthread.h>
#include <stdio.h>

#include "demo.h"

static pthread_mutex_t sales_lock = PTHREAD_MUTEX_INITIALIZER;
#ifndef FIXED
static pthread_mutex_t admin_lock = PTHREAD_MUTEX_INITIALIZER;
#define CLOSING_LOCK admin_lock /* the wrong lock */
#else
#define CLOSING_LOCK sales_lock
#endif

int seats = 10;
int sold, returned;

void sell(void) {
  pthread_mutex_lock(&sales_lock);
  int left = seats;   /* check ... */
  if (left > 0) {
    seats = left - 1; /* ... act: the closing may have run in between */
    sold++;
  }
  pthread_mutex_unlock(&sales_lock);
}

void close_sales(void) {
  pthread_mutex_lock(&CLOSING_LOCK);
  returned = seats;
  seats = 0;
  pthread_mutex_unlock(&CLOSING_LOCK);
}

int main(void) {
  if (demo_run(sell, close_sales) != 0) return 2;
  printf("%d sold + %d returned of 10 seats\n", sold, returned);
  return 0;
}
