/* What the demos share: a forced schedule, or none.
 *
 * Each demo runs one operation in two threads. The "victim" stops at window(), in the middle of
 * its operation, until the "interferer" has run its whole operation; then it goes on. That is
 * the interleaving that exhibits the bug of the buggy version; the fixed version has the same
 * window, outside its critical section, and the same interleaving is harmless there.
 *
 * The schedule uses two pipes, which the runtime does not record, so it adds no events (a
 * barrier or a semaphore would be recorded, inside the victim's atomic function).
 *
 * With DEMO_NATURAL defined (the NAME-natural builds, and the demos written for schedule=perturb)
 * nothing is forced: window() does nothing and the two threads just run, the victim started
 * first. A natural run then rarely shows the bug; ATOMICITY_OPTIONS="... schedule=perturb"
 * makes it likely (doc/tsan-rt.md, "Finding bugs that hide"). */
#ifndef DEMO_H
#define DEMO_H

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

typedef void (*demo_op)(void);
static demo_op demo_victim_op, demo_interferer_op;

#ifdef DEMO_NATURAL
static inline void window(void) {}

static void *demo_victim_main(void *arg) {
  (void)arg;
  demo_victim_op();
  return NULL;
}

static void *demo_interferer_main(void *arg) {
  (void)arg;
  demo_interferer_op();
  return NULL;
}

/* Run @p victim and @p interferer in two threads, in no particular order; wait for both. */
static int demo_run(demo_op victim, demo_op interferer) {
  pthread_t a, b;
  demo_victim_op = victim;
  demo_interferer_op = interferer;
  if (pthread_create(&a, NULL, demo_victim_main, NULL) != 0 ||
      pthread_create(&b, NULL, demo_interferer_main, NULL) != 0) {
    fprintf(stderr, "cannot start the threads\n");
    return -1;
  }
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
#else
static int demo_go[2], demo_done[2]; /* victim -> interferer, interferer -> victim */
static _Thread_local int demo_victim;

static void demo_pass(int to) {
  char c = 0;
  if (write(to, &c, 1) != 1) perror("demo: write");
}

static void demo_await(int from) {
  char c;
  if (read(from, &c, 1) != 1) perror("demo: read");
}

/* Where the victim lets the interferer run. */
static void window(void) {
  if (!demo_victim) return;
  demo_victim = 0;
  demo_pass(demo_go[1]);
  demo_await(demo_done[0]);
}

static void *demo_victim_main(void *arg) {
  (void)arg;
  demo_victim = 1;
  demo_victim_op();
  return NULL;
}

static void *demo_interferer_main(void *arg) {
  (void)arg;
  demo_await(demo_go[0]);
  demo_interferer_op();
  demo_pass(demo_done[1]);
  return NULL;
}

/* Run @p victim and @p interferer in two threads on the schedule above; wait for both. */
static int demo_run(demo_op victim, demo_op interferer) {
  pthread_t a, b;
  demo_victim_op = victim;
  demo_interferer_op = interferer;
  if (pipe(demo_go) != 0 || pipe(demo_done) != 0 ||
      pthread_create(&a, NULL, demo_victim_main, NULL) != 0 ||
      pthread_create(&b, NULL, demo_interferer_main, NULL) != 0) {
    fprintf(stderr, "cannot start the threads\n");
    return -1;
  }
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  close(demo_go[0]);
  close(demo_go[1]);
  close(demo_done[0]);
  close(demo_done[1]);
  return 0;
}
#endif

#endif
