/* A lost update (an atomicity violation), then an abnormal end while the victim's transaction
 * is still open:
 *   crash abort     the victim calls abort()
 *   crash segv      the victim writes through a null pointer (SIGSEGV)
 *   crash _exit     the victim calls _exit(3)
 *   crash exit2     the victim and main call exit() at once (a pipe lines them up)
 *   crash handler   main installs a SIGSEGV handler (after the runtime's), then the victim
 *                   crashes; the handler prints a line and restores the default action
 *   crash return    no abnormal end: main returns 0
 * The schedule is forced with pipes, which the runtime does not record (a barrier would be
 * recorded, inside the victim's transaction): the victim reads the counter, the interferer runs
 * its whole increment, the victim writes the counter back. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int counter;
static const char *mode;
static int enter[2], leave[2], both_exit[2]; /* pipes: one byte passes each */

static void pass(int *p) {
  char c = 0;
  if (write(p[1], &c, 1) != 1) perror("crash: write");
}

static void await(int *p) {
  char c;
  if (read(p[0], &c, 1) != 1) perror("crash: read");
}

static void the_end(void) {
  fflush(stdout);
  if (!strcmp(mode, "abort")) abort();
  if (!strcmp(mode, "segv") || !strcmp(mode, "handler")) *(volatile int *)(uintptr_t)0 = 1;
  if (!strcmp(mode, "_exit")) _exit(3);
  if (!strcmp(mode, "exit2")) {
    pass(both_exit); /* main exits at the same moment */
    exit(5);
  }
}

void increment(int victim) {
  int v = counter;
  if (victim) {
    pass(enter);
    await(leave);
  }
  counter = v + 1;
  if (victim) the_end();
}

static void *victim_main(void *arg) {
  (void)arg;
  increment(1);
  return NULL;
}

static void *interferer_main(void *arg) {
  (void)arg;
  await(enter);
  increment(0);
  pass(leave);
  return NULL;
}

static void on_segv(int sig) {
  static const char line[] = "program handler: SIGSEGV\n";
  ssize_t k = write(2, line, sizeof line - 1);
  (void)k;
  signal(sig, SIG_DFL); /* returning runs the faulting store again: the default action */
}

int main(int argc, char **argv) {
  mode = argc > 1 ? argv[1] : "return";
  if (!strcmp(mode, "handler")) signal(SIGSEGV, on_segv);
  if (pipe(enter) || pipe(leave) || pipe(both_exit)) return 2;
  printf("start %s\n", mode);
  pthread_t a, b;
  pthread_create(&a, NULL, victim_main, NULL);
  pthread_create(&b, NULL, interferer_main, NULL);
  pthread_join(b, NULL);
  if (!strcmp(mode, "exit2")) {
    await(both_exit);
    exit(6);
  }
  pthread_join(a, NULL);
  printf("counter = %d\n", counter);
  return 0;
}
