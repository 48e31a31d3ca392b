/* A driver's increment/stop race (the Bluetooth driver of Qadeer and Wu, PLDI 2004): a request
 * checks that the device is not stopping, then counts itself as pending; stopping the device
 * sets the flag, drops the driver's own reference and stops the device when nothing is
 * pending. A stop between the check and the increment stops the device under a request.
 *
 * Nothing forces the schedule (DEMO_NATURAL): a natural run rarely shows the bug; run it with
 * schedule=perturb (doc/tsan-rt.md, "Finding bugs that hide").
 *
 * ATOMICITY_OPTIONS: atomic=io_increment,stop_device
 * Buggy: sometimes "a request ran on a stopped device". Fixed (-DFIXED, check and increment
 * under the lock that the stop takes): never. */
#define DEMO_NATURAL
#include <pthread.h>
#include <stdio.h>

#include "demo.h"

static struct device {
  pthread_mutex_t lock;
  int stopping;
  int pending_io; /* requests in progress, plus one for the driver itself */
  int stopped;
} dev = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
int ran_stopped;

static void add_device(void) {
  pthread_mutex_lock(&dev.lock);
  dev.pending_io = 1;
  pthread_mutex_unlock(&dev.lock);
}

static void io_decrement(void) {
  pthread_mutex_lock(&dev.lock);
  if (--dev.pending_io == 0) dev.stopped = 1;
  pthread_mutex_unlock(&dev.lock);
}

/* @return 1 when the request may go on, 0 when the device is stopping. */
int io_increment(void) {
#ifndef FIXED
  if (dev.stopping) return 0; /* check ... */
  pthread_mutex_lock(&dev.lock);
  dev.pending_io++;           /* ... act: the stop may have run in between */
  pthread_mutex_unlock(&dev.lock);
  return 1;
#else
  pthread_mutex_lock(&dev.lock);
  int ok = !dev.stopping;
  if (ok) dev.pending_io++;
  pthread_mutex_unlock(&dev.lock);
  return ok;
#endif
}

void stop_device(void) {
#ifndef FIXED
  dev.stopping = 1;
  io_decrement();
#else
  pthread_mutex_lock(&dev.lock);
  dev.stopping = 1;
  if (--dev.pending_io == 0) dev.stopped = 1;
  pthread_mutex_unlock(&dev.lock);
#endif
}

static void dispatch(void) {
  if (!io_increment()) return;
  pthread_mutex_lock(&dev.lock);
  if (dev.stopped) ran_stopped = 1; /* the request works on the device */
  pthread_mutex_unlock(&dev.lock);
  io_decrement();
}

int main(void) {
  add_device();
  if (demo_run(dispatch, stop_device) != 0) return 2;
  printf("%s\n", ran_stopped ? "a request ran on a stopped device" : "requests and stop in order");
  return 0;
}
