/* Calls every __tsan_* entry point of libatomicity-rt directly (built without instrumentation,
 * linked with -latomicity-rt) and checks that the atomic ones perform their operation.
 * Exit status 0 when every result is right. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int8_t a8;
typedef int16_t a16;
typedef int32_t a32;
typedef int64_t a64;
typedef __int128 a128;

#define ACCESS(n)                                       \
  void __tsan_read##n(void *);                          \
  void __tsan_write##n(void *);                         \
  void __tsan_read##n##_pc(void *, void *);             \
  void __tsan_write##n##_pc(void *, void *);            \
  void __tsan_unaligned_read##n(const void *);          \
  void __tsan_unaligned_write##n(void *);               \
  void __tsan_volatile_read##n(void *);                 \
  void __tsan_volatile_write##n(void *);                \
  void __tsan_unaligned_volatile_read##n(void *);       \
  void __tsan_unaligned_volatile_write##n(void *);      \
  void __tsan_read_write##n(void *);                    \
  void __tsan_unaligned_read_write##n(void *);
ACCESS(1)
ACCESS(2)
ACCESS(4)
ACCESS(8)
ACCESS(16)

#define ATOMIC(n, T)                                                              \
  T __tsan_atomic##n##_load(const volatile T *, int);                            \
  void __tsan_atomic##n##_store(volatile T *, T, int);                           \
  T __tsan_atomic##n##_exchange(volatile T *, T, int);                           \
  T __tsan_atomic##n##_fetch_add(volatile T *, T, int);                          \
  T __tsan_atomic##n##_fetch_sub(volatile T *, T, int);                          \
  T __tsan_atomic##n##_fetch_and(volatile T *, T, int);                          \
  T __tsan_atomic##n##_fetch_or(volatile T *, T, int);                           \
  T __tsan_atomic##n##_fetch_xor(volatile T *, T, int);                          \
  T __tsan_atomic##n##_fetch_nand(volatile T *, T, int);                         \
  int __tsan_atomic##n##_compare_exchange_strong(volatile T *, T *, T, int, int); \
  int __tsan_atomic##n##_compare_exchange_weak(volatile T *, T *, T, int, int);   \
  T __tsan_atomic##n##_compare_exchange_val(volatile T *, T, T, int, int);
ATOMIC(8, a8)
ATOMIC(16, a16)
ATOMIC(32, a32)
ATOMIC(64, a64)
ATOMIC(128, a128)

void __tsan_init(void);
void __tsan_func_entry(void *);
void __tsan_func_exit(void);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
void __tsan_read_range(void *, unsigned long);
void __tsan_write_range(void *, unsigned long);
void __tsan_read_range_pc(void *, unsigned long, void *);
void __tsan_write_range_pc(void *, unsigned long, void *);
void __tsan_vptr_update(void **, void *);
void __tsan_vptr_read(void **);
void *__tsan_memcpy(void *, const void *, unsigned long);
void *__tsan_memmove(void *, const void *, unsigned long);
void *__tsan_memset(void *, int, unsigned long);
void __tsan_atomic_thread_fence(int);
void __tsan_atomic_signal_fence(int);

static int failures;
#define CHECK(c)                                                  \
  do {                                                            \
    if (!(c)) {                                                   \
      fprintf(stderr, "entry_points.c:%d: %s\n", __LINE__, #c);   \
      failures++;                                                 \
    }                                                             \
  } while (0)

#define CALL_ACCESS(n, p)                        \
  __tsan_read##n(p);                             \
  __tsan_write##n(p);                            \
  __tsan_read##n##_pc(p, (void *)main);          \
  __tsan_write##n##_pc(p, (void *)main);         \
  __tsan_unaligned_read##n(p);                   \
  __tsan_unaligned_write##n(p);                  \
  __tsan_volatile_read##n(p);                    \
  __tsan_volatile_write##n(p);                   \
  __tsan_unaligned_volatile_read##n(p);          \
  __tsan_unaligned_volatile_write##n(p);         \
  __tsan_read_write##n(p);                       \
  __tsan_unaligned_read_write##n(p);

/* 0 seq_cst-ish orders: the runtime strengthens every order anyway. */
#define MO 5

#define CHECK_ATOMIC(n, T)                                                  \
  do {                                                                      \
    volatile T x = 0;                                                       \
    __tsan_atomic##n##_store(&x, (T)6, MO);                                 \
    CHECK(__tsan_atomic##n##_load(&x, MO) == 6);                            \
    CHECK(__tsan_atomic##n##_exchange(&x, (T)7, MO) == 6);                  \
    CHECK(__tsan_atomic##n##_fetch_add(&x, (T)3, MO) == 7);                 \
    CHECK(__tsan_atomic##n##_fetch_sub(&x, (T)2, MO) == 10);                \
    CHECK(__tsan_atomic##n##_fetch_and(&x, (T)12, MO) == 8);                \
    CHECK(__tsan_atomic##n##_fetch_or(&x, (T)3, MO) == 8);                  \
    CHECK(__tsan_atomic##n##_fetch_xor(&x, (T)1, MO) == 11);                \
    CHECK(__tsan_atomic##n##_fetch_nand(&x, (T)6, MO) == 10);               \
    CHECK(x == (T)~(T)2);                                                   \
    x = 4;                                                                  \
    T expected = 4;                                                         \
    CHECK(__tsan_atomic##n##_compare_exchange_strong(&x, &expected, 5, MO, MO) == 1); \
    CHECK(x == 5);                                                          \
    CHECK(__tsan_atomic##n##_compare_exchange_strong(&x, &expected, 9, MO, MO) == 0); \
    CHECK(expected == 5 && x == 5);                                         \
    expected = 5;                                                           \
    while (!__tsan_atomic##n##_compare_exchange_weak(&x, &expected, 8, MO, MO)) {} \
    CHECK(x == 8);                                                          \
    CHECK(__tsan_atomic##n##_compare_exchange_val(&x, 8, 1, MO, MO) == 8);  \
    CHECK(__tsan_atomic##n##_compare_exchange_val(&x, 8, 2, MO, MO) == 1);  \
    CHECK(x == 1);                                                          \
  } while (0)

int main(void) {
  static _Alignas(16) unsigned char buf[64];
  __tsan_init();
  __tsan_init(); /* once per translation unit: must be idempotent */
  __tsan_func_entry(__builtin_return_address(0));
  CALL_ACCESS(1, buf)
  CALL_ACCESS(2, buf)
  CALL_ACCESS(4, buf)
  CALL_ACCESS(8, buf)
  CALL_ACCESS(16, buf)
  __tsan_read_range(buf, sizeof buf);
  __tsan_write_range(buf, sizeof buf);
  __tsan_read_range_pc(buf, 8, (void *)main);
  __tsan_write_range_pc(buf, 8, (void *)main);
  void *vptr = buf;
  __tsan_vptr_update(&vptr, buf + 8);
  __tsan_vptr_read(&vptr);
  __tsan_ignore_thread_begin();
  __tsan_write4(buf);
  __tsan_ignore_thread_end();

  char a[16] = "abcdefghijklmno", b[16];
  CHECK(__tsan_memcpy(b, a, sizeof a) == b && memcmp(a, b, sizeof a) == 0);
  CHECK(__tsan_memmove(b + 1, b, 8) == b + 1 && memcmp(b + 1, "abcdefgh", 8) == 0);
  CHECK(__tsan_memset(b, 'z', 4) == b && memcmp(b, "zzzz", 4) == 0);

  CHECK_ATOMIC(8, a8);
  CHECK_ATOMIC(16, a16);
  CHECK_ATOMIC(32, a32);
  CHECK_ATOMIC(64, a64);
  CHECK_ATOMIC(128, a128);
  volatile _Alignas(16) a128 big = 0;
  __tsan_atomic128_store(&big, (a128)1 << 100, MO);
  CHECK(__tsan_atomic128_load(&big, MO) == (a128)1 << 100);
  CHECK(__tsan_atomic128_fetch_add(&big, (a128)1 << 100, MO) == (a128)1 << 100);
  CHECK(big == (a128)1 << 101);
  __tsan_atomic_thread_fence(MO);
  __tsan_atomic_signal_fence(MO);
  __tsan_func_exit();
  if (failures) return 1;
  puts("entry points: ok");
  return 0;
}
