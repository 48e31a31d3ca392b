/* Accesses of every width, unaligned ones, struct copies, memset/memmove and C11 atomics of
 * every width, so that clang emits the whole ABI at -O0..-O2; prints a checksum that must not
 * change under the runtime. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

struct big { long a, b, c, d; };
struct big gb = {1, 2, 3, 4}, gb2 = {5, 6, 7, 8};
char c; short s; int i; long l; __int128 q;
_Atomic char ac; _Atomic short as; _Atomic int ai; _Atomic long al;
struct __attribute__((packed)) pk { char x; short w; int y; long z; } pk;
volatile int vi;

long run(char *buf, int n) {
  c++; s++; i++; l++; q++;
  pk.y++; pk.z++; pk.w++;
  gb = gb2;
  memset(buf, 7, (size_t)n);
  memmove(buf, buf + 1, (size_t)n - 1);
  atomic_fetch_add(&ac, 1); atomic_fetch_sub(&as, 1); atomic_fetch_and(&ai, 1); atomic_fetch_or(&al, 1);
  atomic_fetch_xor(&ai, 3); atomic_exchange(&al, 5); atomic_store(&ai, 3);
  int x = atomic_load(&ai);
  int e = 3;
  atomic_compare_exchange_strong(&ai, &e, 2);
  long le = 5;
  atomic_compare_exchange_weak(&al, &le, 2);
  __atomic_fetch_nand(&i, 1, __ATOMIC_SEQ_CST);
  atomic_thread_fence(memory_order_seq_cst);
  atomic_signal_fence(memory_order_seq_cst);
  vi = vi + 1;
  return x + c + s + i + l + (long)q + pk.y + pk.z + pk.w + gb.d + buf[0] + ac + as + ai + al + vi;
}

static void *thread_main(void *arg) {
  char buf[32];
  return (void *)run(buf, (int)sizeof buf + 0 * (arg != NULL));
}

int main(void) {
  pthread_t t;
  void *r;
  pthread_create(&t, NULL, thread_main, NULL);
  pthread_join(t, &r);
  char buf[32];
  printf("%ld %ld\n", (long)r, run(buf, (int)sizeof buf));
  return 0;
}
