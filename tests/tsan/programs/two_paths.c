/* One atomic function, bump(), reached through two call paths (via_a, via_b) by the victim,
 * each time split by the interferer's bump (forced with pipes, which are not recorded): the
 * same bug twice, through different stacks. It must be one report with two occurrences. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "pipe_turns.h"

static int go[2], done[2];
int counter;

void bump(int victim) {
  int seen = counter;
  if (victim) {
    pass(go[1]);
    await(done[0]);
  }
  counter = seen + 1;
}

__attribute__((noinline)) void via_a(void) { bump(1); }
__attribute__((noinline)) void via_b(void) { bump(1); }

static void *victim(void *p) {
  (void)p;
  via_a();
  via_b();
  return NULL;
}

static void *interferer(void *p) {
  (void)p;
  for (int i = 0; i < 2; i++) {
    await(go[0]);
    bump(0);
    pass(done[1]);
  }
  return NULL;
}

int main(void) {
  pthread_t a, b;
  if (pipe(go) != 0 || pipe(done) != 0) return 2;
  pthread_create(&a, NULL, victim, NULL);
  pthread_create(&b, NULL, interferer, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("counter %d\n", counter);
  return 0;
}
