/* Calls bump() of libdlbump.so, loaded by dlopen("./libdlbump.so") (argument "dlopen") or
 * linked and found through LD_LIBRARY_PATH=. (argument "linked"), run from the library's
 * directory. The other thread writes the counter in the middle of bump(), deterministically
 * (semaphores): an atomicity violation inside the library, which the runtime must see.
 * "dl_main PATH unlink" removes the library's file after loading it. */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static sem_t in_bump, written;
static long *count_p;

static void in_the_middle(void) {
  sem_post(&in_bump);
  sem_wait(&written);
}

static void *other(void *arg) {
  (void)arg;
  sem_wait(&in_bump);
  *count_p = 100;
  sem_post(&written);
  return NULL;
}

#ifdef LINKED
extern long counter;
extern void (*hook)(void);
void bump(void);
#endif

int main(int argc, char **argv) {
  void (*bump_fn)(void);
  void (**hook_ptr)(void);
#ifdef LINKED
  (void)argc;
  (void)argv;
  count_p = &counter;
  hook_ptr = &hook;
  bump_fn = bump;
#else
  void *lib = dlopen(argc > 1 ? argv[1] : "./libdlbump.so", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  count_p = dlsym(lib, "counter");
  hook_ptr = dlsym(lib, "hook");
  bump_fn = (void (*)(void))dlsym(lib, "bump");
  if (!count_p || !hook_ptr || !bump_fn) return 3;
  /* "unlink": the file is gone before bump() is first entered, so nothing can name it */
  if (argc > 2 && strcmp(argv[2], "unlink") == 0 && unlink(argv[1]) != 0) return 4;
#endif
  *hook_ptr = in_the_middle;
  sem_init(&in_bump, 0, 0);
  sem_init(&written, 0, 0);
  pthread_t t;
  pthread_create(&t, NULL, other, NULL);
  bump_fn();
  pthread_join(t, NULL);
  printf("%ld\n", *count_p);
  return 0;
}
