/* A stale read used after unlock: a withdrawal reads the balance under the lock, releases it,
 * decides on the value it read, and writes a balance computed from that stale value.
 *
 * ATOMICITY_OPTIONS: atomic=withdraw
 * Buggy: both withdrawals of 60 succeed on a balance of 100 (balance 40). Fixed (-DFIXED):
 * the second one is refused (balance 40, 1 refused). */
#define _POSIX_C_SOURCE 200809L /* pipes */
#include <pthread.h>
#include <stdio.h>

#include "demo.h"

static pthread_mutex_t account_lock = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;
int withdrawn, refused;

#ifndef FIXED
int withdraw(int amount) {
  pthread_mutex_lock(&account_lock);
  int seen = balance; /* read under the lock ... */
  pthread_mutex_unlock(&account_lock);
  window(); /* ... the other thread withdraws here ... */
  if (seen < amount) return 0;
  pthread_mutex_lock(&account_lock);
  balance = seen - amount; /* ... and this is computed from a stale value */
  pthread_mutex_unlock(&account_lock);
  return 1;
}
#else
int withdraw(int amount) {
  pthread_mutex_lock(&account_lock);
  int ok = balance >= amount; /* decide and update on the same value */
  if (ok) balance -= amount;
  pthread_mutex_unlock(&account_lock);
  window();
  return ok;
}
#endif

static pthread_mutex_t totals_lock = PTHREAD_MUTEX_INITIALIZER;

static void take_60(void) {
  int ok = withdraw(60);
  pthread_mutex_lock(&totals_lock);
  if (ok) withdrawn += 60;
  else refused++;
  pthread_mutex_unlock(&totals_lock);
}

int main(void) {
  if (demo_run(take_60, take_60) != 0) return 2;
  printf("withdrawn %d from 100, balance %d, %d refused\n", withdrawn, balance, refused);
  return 0;
}
