/* A counter on main's stack, bumped by two threads through a pointer: bump() reads it, the
 * other thread bumps it (forced with pipes, which are not recorded), then bump() writes a
 * value computed from the stale read. Reports must name the counter "stack of T0 in main". */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "pipe_turns.h"

static int go[2], done[2];

void bump(int *counter, int victim) {
  int seen = *counter;
  if (victim) {
    pass(go[1]);
    await(done[0]);
  }
  *counter = seen + 1;
}

static void *victim(void *p) {
  bump(p, 1);
  return NULL;
}

static void *interferer(void *p) {
  await(go[0]);
  bump(p, 0);
  pass(done[1]);
  return NULL;
}

int main(void) {
  int counter = 0;
  pthread_t a, b;
  if (pipe(go) != 0 || pipe(done) != 0) return 2;
  pthread_create(&a, NULL, victim, &counter);
  pthread_create(&b, NULL, interferer, &counter);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("counter %d\n", counter);
  return 0;
}
