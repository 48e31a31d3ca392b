/* Threads that end with an atomic function still open.
 *   exits pthread_exit   a thread calls pthread_exit inside an atomic function
 *   exits exit           a thread calls exit(4) inside an atomic function while main waits
 *   exits return         main returns while a thread sleeps inside an atomic function */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int shared;
static const char *mode;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

static void nap(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

void work_in_transaction(void) {
  shared++;
  if (!strcmp(mode, "pthread_exit")) pthread_exit(NULL);
  if (!strcmp(mode, "exit")) {
    fflush(stdout);
    exit(4);
  }
  nap(10000); /* "return": main ends meanwhile */
  shared++;
}

static void *thread_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&gate);
  pthread_mutex_unlock(&gate);
  work_in_transaction();
  return NULL;
}

int main(int argc, char **argv) {
  mode = argc > 1 ? argv[1] : "pthread_exit";
  pthread_t t;
  printf("start %s\n", mode);
  pthread_create(&t, NULL, thread_main, NULL);
  if (!strcmp(mode, "return")) {
    nap(100);
    printf("main returns\n");
    return 5;
  }
  if (!strcmp(mode, "exit")) {
    for (;;) nap(1000);
  }
  pthread_join(t, NULL);
  printf("joined, shared = %d\n", shared);
  return 0;
}
