/* The __tsan_* entry points that clang emits for -fsanitize=thread (the ThreadSanitizer
 * instrumentation ABI: one entry point per access size, fixed-width integer arguments, memory
 * orders as int). Each one records an event through rt_core.c; the atomic ones also perform
 * the operation, since the program depends on its result. README.md lists them all. */
#include <string.h>

#include "rt.h"

typedef int8_t a8;
typedef int16_t a16;
typedef int32_t a32;
typedef int64_t a64;
typedef __int128 a128;

#define PC() RT_CALLER_PC()
#define ADDR(p) ((uint64_t)(uintptr_t)(p))

/* Every exported entry point is declared once here (they have no header: the compiler knows
 * them), which also keeps -Wmissing-prototypes quiet. */
#define DECL_ACCESS(n)                                                  \
  RT_EXPORT void __tsan_read##n(void *addr);                            \
  RT_EXPORT void __tsan_write##n(void *addr);                           \
  RT_EXPORT void __tsan_read##n##_pc(void *addr, void *pc);             \
  RT_EXPORT void __tsan_write##n##_pc(void *addr, void *pc);            \
  RT_EXPORT void __tsan_unaligned_read##n(const void *addr);            \
  RT_EXPORT void __tsan_unaligned_write##n(void *addr);                 \
  RT_EXPORT void __tsan_volatile_read##n(void *addr);                   \
  RT_EXPORT void __tsan_volatile_write##n(void *addr);                  \
  RT_EXPORT void __tsan_unaligned_volatile_read##n(void *addr);         \
  RT_EXPORT void __tsan_unaligned_volatile_write##n(void *addr);        \
  RT_EXPORT void __tsan_read_write##n(void *addr);                      \
  RT_EXPORT void __tsan_unaligned_read_write##n(void *addr);

#define DEF_ACCESS(n)                                                                     \
  void __tsan_read##n(void *addr) { rt_access(ADDR(addr), n, 0, PC()); }                  \
  void __tsan_write##n(void *addr) { rt_access(ADDR(addr), n, 1, PC()); }                 \
  void __tsan_read##n##_pc(void *addr, void *pc) { rt_access(ADDR(addr), n, 0, ADDR(pc)); } \
  void __tsan_write##n##_pc(void *addr, void *pc) { rt_access(ADDR(addr), n, 1, ADDR(pc)); } \
  void __tsan_unaligned_read##n(const void *addr) { rt_access(ADDR(addr), n, 0, PC()); }  \
  void __tsan_unaligned_write##n(void *addr) { rt_access(ADDR(addr), n, 1, PC()); }       \
  void __tsan_volatile_read##n(void *addr) { rt_access(ADDR(addr), n, 0, PC()); }         \
  void __tsan_volatile_write##n(void *addr) { rt_access(ADDR(addr), n, 1, PC()); }        \
  void __tsan_unaligned_volatile_read##n(void *addr) { rt_access(ADDR(addr), n, 0, PC()); } \
  void __tsan_unaligned_volatile_write##n(void *addr) { rt_access(ADDR(addr), n, 1, PC()); } \
  void __tsan_read_write##n(void *addr) { rt_access_rmw(ADDR(addr), n, PC()); }           \
  void __tsan_unaligned_read_write##n(void *addr) { rt_access_rmw(ADDR(addr), n, PC()); }

DECL_ACCESS(1)
DECL_ACCESS(2)
DECL_ACCESS(4)
DECL_ACCESS(8)
DECL_ACCESS(16)
DEF_ACCESS(1)
DEF_ACCESS(2)
DEF_ACCESS(4)
DEF_ACCESS(8)
DEF_ACCESS(16)

RT_EXPORT void __tsan_read_range(void *addr, unsigned long size);
RT_EXPORT void __tsan_write_range(void *addr, unsigned long size);
RT_EXPORT void __tsan_read_range_pc(void *addr, unsigned long size, void *pc);
RT_EXPORT void __tsan_write_range_pc(void *addr, unsigned long size, void *pc);
void __tsan_read_range(void *addr, unsigned long size) { rt_range(ADDR(addr), size, 0, PC()); }
void __tsan_write_range(void *addr, unsigned long size) { rt_range(ADDR(addr), size, 1, PC()); }
void __tsan_read_range_pc(void *addr, unsigned long size, void *pc) {
  rt_range(ADDR(addr), size, 0, ADDR(pc));
}
void __tsan_write_range_pc(void *addr, unsigned long size, void *pc) {
  rt_range(ADDR(addr), size, 1, ADDR(pc));
}

/* C++ virtual calls: the object's vtable pointer is read, and written by constructors. */
RT_EXPORT void __tsan_vptr_update(void **vptr_p, void *new_val);
RT_EXPORT void __tsan_vptr_read(void **vptr_p);
void __tsan_vptr_update(void **vptr_p, void *new_val) {
  if (*vptr_p != new_val) rt_access(ADDR(vptr_p), sizeof(void *), 1, PC());
}
void __tsan_vptr_read(void **vptr_p) { rt_access(ADDR(vptr_p), sizeof(void *), 0, PC()); }

/* Function entry: the argument is the caller's return address; the callee is identified by
 * this hook's own return address, which lies inside the callee. */
RT_EXPORT void __tsan_func_entry(void *caller_pc);
RT_EXPORT void __tsan_func_exit(void);
/* The callee's stack pointer when it called this hook is 16 bytes above this hook's frame
 * address (the return address and the saved frame pointer: the runtime is built with frame
 * pointers); the callee's frame lies above it (rt_stack_owner names stack addresses by it). */
void __tsan_func_entry(void *caller_pc) {
  rt_func_entry(PC(), ADDR(caller_pc), (uint64_t)(uintptr_t)__builtin_frame_address(0) + 16);
}
void __tsan_func_exit(void) { rt_func_exit(PC()); }

RT_EXPORT void __tsan_ignore_thread_begin(void);
RT_EXPORT void __tsan_ignore_thread_end(void);
void __tsan_ignore_thread_begin(void) {
  rt_thread *t = rt_thread_get();
  if (t) t->ignore++;
}
void __tsan_ignore_thread_end(void) {
  rt_thread *t = rt_self;
  if (t && t->ignore > 0) t->ignore--;
}

/* Called by every instrumented translation unit's constructor: initialize once. */
RT_EXPORT void __tsan_init(void);
void __tsan_init(void) {
  rt_init();
  rt_init_atexit();
}

/* Newer compilers call these instead of memcpy/memset/memmove (rt_intercept.c). */
RT_EXPORT void *__tsan_memcpy(void *dst, const void *src, unsigned long size);
RT_EXPORT void *__tsan_memmove(void *dst, const void *src, unsigned long size);
RT_EXPORT void *__tsan_memset(void *dst, int c, unsigned long size);
void *__tsan_memcpy(void *dst, const void *src, unsigned long size) {
  rt_range(ADDR(src), size, 0, PC());
  rt_range(ADDR(dst), size, 1, PC());
  if (!rt_fn.memcpy) rt_resolve();
  return rt_fn.memcpy(dst, src, size);
}
void *__tsan_memmove(void *dst, const void *src, unsigned long size) {
  rt_range(ADDR(src), size, 0, PC());
  rt_range(ADDR(dst), size, 1, PC());
  if (!rt_fn.memmove) rt_resolve();
  return rt_fn.memmove(dst, src, size);
}
void *__tsan_memset(void *dst, int c, unsigned long size) {
  rt_range(ADDR(dst), size, 1, PC());
  if (!rt_fn.memset) rt_resolve();
  return rt_fn.memset(dst, c, size);
}

/* ---- atomics: performed under the event lock when recording, so that the recorded order is
 * the order in which they took effect (so a release write recorded just after the operation,
 * still under the lock, is recorded before any thread can act on it). The requested memory
 * order is strengthened to sequential consistency, which every program tolerates, but it
 * decides the recorded flags (doc/tsan-rt.md, "Synchronization"). */

/* Memory orders as the compiler passes them: 0 relaxed, 1 consume, 2 acquire, 3 release,
 * 4 acq_rel, 5 seq_cst. Bits above 15 (hints some compilers add) are not part of the order. */
static uint32_t acquire_flag(int mo) {
  mo &= 0x7fff;
  return mo == 1 || mo == 2 || mo == 4 || mo == 5 ? ATOM_FLAG_ACQUIRE : 0;
}
static uint32_t release_flag(int mo) {
  mo &= 0x7fff;
  return mo == 3 || mo == 4 || mo == 5 ? ATOM_FLAG_RELEASE : 0;
}

static rt_thread *atomic_enter(void) {
  if (RT_UNLIKELY(rt_busy) || !__atomic_load_n(&rt_active, __ATOMIC_ACQUIRE)) return NULL;
  rt_thread *t = rt_self;
  if (RT_UNLIKELY(!t) && !(t = rt_thread_get())) return NULL;
  if (t->ignore) return NULL;
  rt_busy = 1;
  rt_lock();
  return t;
}

/* A read (acquire when mo says so) and/or a write (release when mo says so). */
static void atomic_leave(rt_thread *t, uint64_t addr, int read, int write, int mo, uint64_t pc) {
  if (!t) return;
  rt_share_locked(t, addr);
  if (read) rt_push_flagged(ATOM_READ, acquire_flag(mo), t->id, addr, pc);
  if (write) rt_push_flagged(ATOM_WRITE, release_flag(mo), t->id, addr, pc);
  rt_unlock();
  rt_busy = 0;
}

#define SC __ATOMIC_SEQ_CST

#define DECL_ATOMIC(n, T)                                                                   \
  RT_EXPORT T __tsan_atomic##n##_load(const volatile T *a, int mo);                       \
  RT_EXPORT void __tsan_atomic##n##_store(volatile T *a, T v, int mo);                    \
  RT_EXPORT T __tsan_atomic##n##_exchange(volatile T *a, T v, int mo);                    \
  RT_EXPORT T __tsan_atomic##n##_fetch_add(volatile T *a, T v, int mo);                   \
  RT_EXPORT T __tsan_atomic##n##_fetch_sub(volatile T *a, T v, int mo);                   \
  RT_EXPORT T __tsan_atomic##n##_fetch_and(volatile T *a, T v, int mo);                   \
  RT_EXPORT T __tsan_atomic##n##_fetch_or(volatile T *a, T v, int mo);                    \
  RT_EXPORT T __tsan_atomic##n##_fetch_xor(volatile T *a, T v, int mo);                   \
  RT_EXPORT T __tsan_atomic##n##_fetch_nand(volatile T *a, T v, int mo);                  \
  RT_EXPORT int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, \
                                                           int fmo);                        \
  RT_EXPORT int __tsan_atomic##n##_compare_exchange_weak(volatile T *a, T *c, T v, int mo,  \
                                                         int fmo);                          \
  RT_EXPORT T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo);

/* Widths up to 64 bits: the compiler's atomic builtins. */
#define LOAD_N(a) __atomic_load_n(a, SC)
#define STORE_N(a, v) __atomic_store_n(a, v, SC)
#define XCHG_N(a, v) __atomic_exchange_n(a, v, SC)
#define CAS_N(a, c, v) __atomic_compare_exchange_n(a, c, v, 0, SC, SC)

#define DEF_RMW(n, T, name, builtin)                                  \
  T __tsan_atomic##n##_##name(volatile T *a, T v, int mo) {           \
    rt_thread *t = atomic_enter();                                    \
    T old = builtin(a, v, SC);                                        \
    atomic_leave(t, ADDR(a), 1, 1, mo, PC());                         \
    return old;                                                       \
  }

#define DEF_ATOMIC(n, T)                                                                      \
  T __tsan_atomic##n##_load(const volatile T *a, int mo) {                                    \
    rt_thread *t = atomic_enter();                                                            \
    T v = LOAD_N(a);                                                                          \
    atomic_leave(t, ADDR(a), 1, 0, mo, PC());                                                 \
    return v;                                                                                 \
  }                                                                                           \
  void __tsan_atomic##n##_store(volatile T *a, T v, int mo) {                                 \
    rt_thread *t = atomic_enter();                                                            \
    STORE_N(a, v);                                                                            \
    atomic_leave(t, ADDR(a), 0, 1, mo, PC());                                                 \
  }                                                                                           \
  T __tsan_atomic##n##_exchange(volatile T *a, T v, int mo) {                                 \
    rt_thread *t = atomic_enter();                                                            \
    T old = XCHG_N(a, v);                                                                     \
    atomic_leave(t, ADDR(a), 1, 1, mo, PC());                                                 \
    return old;                                                                               \
  }                                                                                           \
  DEF_RMW(n, T, fetch_add, __atomic_fetch_add)                                                \
  DEF_RMW(n, T, fetch_sub, __atomic_fetch_sub)                                                \
  DEF_RMW(n, T, fetch_and, __atomic_fetch_and)                                                \
  DEF_RMW(n, T, fetch_or, __atomic_fetch_or)                                                  \
  DEF_RMW(n, T, fetch_xor, __atomic_fetch_xor)                                                \
  DEF_RMW(n, T, fetch_nand, __atomic_fetch_nand)                                              \
  int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo) { \
    rt_thread *t = atomic_enter();                                                            \
    int ok = CAS_N(a, c, v);                                                                  \
    atomic_leave(t, ADDR(a), 1, ok, ok ? mo : fmo, PC());                                     \
    return ok;                                                                                \
  }                                                                                           \
  int __tsan_atomic##n##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo) {   \
    rt_thread *t = atomic_enter();                                                            \
    int ok = CAS_N(a, c, v);                                                                  \
    atomic_leave(t, ADDR(a), 1, ok, ok ? mo : fmo, PC());                                     \
    return ok;                                                                                \
  }                                                                                           \
  T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo) {       \
    rt_thread *t = atomic_enter();                                                            \
    int ok = CAS_N(a, &c, v);                                                                 \
    atomic_leave(t, ADDR(a), 1, ok, ok ? mo : fmo, PC());                                     \
    return c;                                                                                 \
  }

DECL_ATOMIC(8, a8)
DECL_ATOMIC(16, a16)
DECL_ATOMIC(32, a32)
DECL_ATOMIC(64, a64)
DECL_ATOMIC(128, a128)
DEF_ATOMIC(8, a8)
DEF_ATOMIC(16, a16)
DEF_ATOMIC(32, a32)
DEF_ATOMIC(64, a64)

/* 128 bits: cmpxchg16b (built with -mcx16), so that no libatomic is needed. */
static a128 cas128(volatile a128 *a, a128 expect, a128 desired) {
  return __sync_val_compare_and_swap(a, expect, desired);
}
static a128 load128(const volatile a128 *a) { return cas128((volatile a128 *)a, 0, 0); }

enum { OP_XCHG, OP_ADD, OP_SUB, OP_AND, OP_OR, OP_XOR, OP_NAND };

static a128 rmw128(volatile a128 *a, a128 v, int op) {
  a128 old = load128(a);
  for (;;) {
    a128 nv;
    switch (op) {
    case OP_ADD: nv = (a128)((unsigned __int128)old + (unsigned __int128)v); break;
    case OP_SUB: nv = (a128)((unsigned __int128)old - (unsigned __int128)v); break;
    case OP_AND: nv = old & v; break;
    case OP_OR: nv = old | v; break;
    case OP_XOR: nv = old ^ v; break;
    case OP_NAND: nv = ~(old & v); break;
    default: nv = v; break;
    }
    a128 seen = cas128(a, old, nv);
    if (seen == old) return old;
    old = seen;
  }
}

#define DEF_RMW128(name, op)                                        \
  a128 __tsan_atomic128_##name(volatile a128 *a, a128 v, int mo) {  \
    rt_thread *t = atomic_enter();                                  \
    a128 old = rmw128(a, v, op);                                    \
    atomic_leave(t, ADDR(a), 1, 1, mo, PC());                       \
    return old;                                                     \
  }

a128 __tsan_atomic128_load(const volatile a128 *a, int mo) {
  rt_thread *t = atomic_enter();
  a128 v = load128(a);
  atomic_leave(t, ADDR(a), 1, 0, mo, PC());
  return v;
}
void __tsan_atomic128_store(volatile a128 *a, a128 v, int mo) {
  rt_thread *t = atomic_enter();
  rmw128(a, v, OP_XCHG);
  atomic_leave(t, ADDR(a), 0, 1, mo, PC());
}
DEF_RMW128(exchange, OP_XCHG)
DEF_RMW128(fetch_add, OP_ADD)
DEF_RMW128(fetch_sub, OP_SUB)
DEF_RMW128(fetch_and, OP_AND)
DEF_RMW128(fetch_or, OP_OR)
DEF_RMW128(fetch_xor, OP_XOR)
DEF_RMW128(fetch_nand, OP_NAND)

static int cas128_strong(volatile a128 *a, a128 *c, a128 v, int mo, int fmo, uint64_t pc) {
  rt_thread *t = atomic_enter();
  a128 seen = cas128(a, *c, v);
  int ok = seen == *c;
  if (!ok) *c = seen;
  atomic_leave(t, ADDR(a), 1, ok, ok ? mo : fmo, pc);
  return ok;
}
int __tsan_atomic128_compare_exchange_strong(volatile a128 *a, a128 *c, a128 v, int mo, int fmo) {
  return cas128_strong(a, c, v, mo, fmo, PC());
}
int __tsan_atomic128_compare_exchange_weak(volatile a128 *a, a128 *c, a128 v, int mo, int fmo) {
  return cas128_strong(a, c, v, mo, fmo, PC());
}
a128 __tsan_atomic128_compare_exchange_val(volatile a128 *a, a128 c, a128 v, int mo, int fmo) {
  cas128_strong(a, &c, v, mo, fmo, PC());
  return c;
}

RT_EXPORT void __tsan_atomic_thread_fence(int mo);
RT_EXPORT void __tsan_atomic_signal_fence(int mo);
/* Fences are performed (as sequentially consistent) but not recorded: the flags of a fence
 * would belong to the relaxed accesses around it, which the checkers cannot see. */
void __tsan_atomic_thread_fence(int mo) {
  (void)mo;
  __atomic_thread_fence(SC);
}
void __tsan_atomic_signal_fence(int mo) {
  (void)mo;
  __atomic_signal_fence(SC);
}
