/* Reordered initialization: a configuration is published (its pointer stored where readers
 * find it) before it is initialized. A reader that finds the pointer in between reads a field
 * that is not set yet.
 *
 * Nothing forces the schedule (DEMO_NATURAL): a natural run rarely shows the bug; run it with
 * schedule=perturb (doc/tsan-rt.md, "Finding bugs that hide").
 *
 * ATOMICITY_OPTIONS: atomic=publish_config,read_config
 * Buggy: sometimes "the reader saw retries = 0". Fixed (-DFIXED, initialize, then publish):
 * always "retries = 3". */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#define DEMO_NATURAL
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "demo.h"

struct config {
  int retries;
};

struct config *current; /* NULL until published */
int seen = -1;

void publish_config(void) {
  struct config *c = calloc(1, sizeof *c);
  if (!c) abort();
#ifndef FIXED
  current = c;    /* published ... */
  c->retries = 3; /* ... before it is initialized */
#else
  c->retries = 3;
  current = c;
#endif
}

/* @return the configured retries, or -1 while no configuration is published. */
int read_config(void) {
  struct config *c = current;
  return c ? c->retries : -1;
}

static void poll_config(void) {
  struct timespec pause = {0, 20000};
  int r;
  while ((r = read_config()) < 0) nanosleep(&pause, NULL);
  seen = r;
}

/* The publisher first reads its configuration (a millisecond), as a real one would: the reader
 * is polling by then. */
static void load_config(void) {
  struct timespec io = {0, 1000000};
  nanosleep(&io, NULL);
  publish_config();
}

int main(void) {
  if (demo_run(poll_config, load_config) != 0) return 2;
  printf("the reader saw retries = %d\n", seen);
  free(current);
  return 0;
}
