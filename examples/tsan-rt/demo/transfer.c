/* A two-variable invariant updated in two locked steps: checking + savings is always 100, but
 * a transfer moves the money in two critical sections, and an audit that runs between them
 * sees the money gone.
 *
 * ATOMICITY_OPTIONS: atomic=transfer,audit
 * Buggy: audit sees 50. Fixed (-DFIXED): audit sees 100. */
#define _POSIX_C_SOURCE 200809L /* pipes */
#include <pthread.h>
#include <stdio.h>

#include "demo.h"

static pthread_mutex_t bank_lock = PTHREAD_MUTEX_INITIALIZER;
int checking = 100, savings = 0;
int audited = -1;

#ifndef FIXED
void transfer(int amount) {
  pthread_mutex_lock(&bank_lock);
  checking -= amount;
  pthread_mutex_unlock(&bank_lock);
  window(); /* the invariant is broken here, and an audit runs */
  pthread_mutex_lock(&bank_lock);
  savings += amount;
  pthread_mutex_unlock(&bank_lock);
}
#else
void transfer(int amount) {
  pthread_mutex_lock(&bank_lock);
  checking -= amount; /* both steps in one critical section */
  savings += amount;
  pthread_mutex_unlock(&bank_lock);
  window();
}
#endif

int audit(void) {
  pthread_mutex_lock(&bank_lock);
  int total = checking + savings;
  pthread_mutex_unlock(&bank_lock);
  return total;
}

static void do_transfer(void) { transfer(50); }
static void do_audit(void) { audited = audit(); }

int main(void) {
  if (demo_run(do_transfer, do_audit) != 0) return 2;
  printf("audit saw %d, final %d\n", audited, checking + savings);
  return 0;
}
