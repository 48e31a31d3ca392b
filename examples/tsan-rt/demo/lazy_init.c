/* Check-then-act on a shared pointer: lazy initialization of a shared object. Both threads
 * can see the pointer NULL and both create the object; one of them is lost, and the threads
 * end up using different objects.
 *
 * ATOMICITY_OPTIONS: atomic=get_config
 * Buggy: 2 configs created. Fixed (-DFIXED): 1 config created. */
#define _POSIX_C_SOURCE 200809L /* pipes */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "demo.h"

struct config {
  int verbose;
  int retries;
};

struct config *shared_config;
int configs_created;

static struct config *new_config(void) {
  struct config *c = malloc(sizeof *c);
  if (!c) abort();
  c->verbose = 1;
  c->retries = 3;
  configs_created++;
  return c;
}

#ifndef FIXED
struct config *get_config(void) {
  if (shared_config == NULL) {      /* check */
    window();                       /* the other thread creates the config here */
    shared_config = new_config();   /* act: overwrites it */
  }
  return shared_config;
}
#else
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;

struct config *get_config(void) {
  pthread_mutex_lock(&config_lock);
  if (shared_config == NULL) shared_config = new_config(); /* check and act together */
  struct config *c = shared_config;
  pthread_mutex_unlock(&config_lock);
  window();
  return c;
}
#endif

static void use_config(void) {
  struct config *c = get_config();
  if (c->retries != 3) abort();
}

int main(void) {
  if (demo_run(use_config, use_config) != 0) return 2;
  printf("%d config%s created\n", configs_created, configs_created == 1 ? "" : "s");
  return 0;
}
