/* Names of memory: what a variable or a lock of a report is, in words.
 *
 *   a global        its symbol, "balance" or "table+8"
 *   a heap block    "heap block of 16 bytes allocated at new_account at bank.c:12" (", +8"
 *                   when the address is not the block's start)
 *   a thread stack  "stack of T2 in worker" (the function whose frame holds it, when the
 *                   thread is still in it)
 *
 * Heap blocks: malloc, calloc, realloc, free, posix_memalign, aligned_alloc and memalign are
 * intercepted (operator new and delete call them) and forwarded to the C library's own entry
 * points (__libc_malloc, ...: no dlsym, which itself allocates). A live block is an entry of
 * an open-addressing map from its start to its size and allocation stack (a stack id from
 * rt_stack.c), so malloc and free cost a map operation under heap_mu; an address is looked up
 * only when a report names it, by a scan of the map. At most RT_HEAP_BLOCKS live blocks are
 * tracked: blocks allocated beyond that are not named (said once). The runtime's own
 * allocations (rt_busy) are not tracked.
 *
 * Locks: heap_mu is taken after the event lock when both are held, never before it; malloc
 * takes depot_mu (rt_stack.c) before heap_mu, not inside it. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static pthread_mutex_t heap_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_map blocks; /* start -> size << 24 | allocation stack id (0: unknown) */
static int heap_full_said;

#define STACK_BITS 24

static void track(void *p, size_t size, uint64_t pc) {
  if (!p || RT_UNLIKELY(rt_busy) || !RT_ACTIVE()) return;
  rt_thread *t = rt_self;
  rt_busy = 1;
  uint64_t loc = t ? rt_stack_loc_alloc(t, pc) : 0;
  if (loc >= (UINT64_C(1) << STACK_BITS)) loc = 0; /* a bare pc: the depot was full */
  rt_fn.pthread_mutex_lock(&heap_mu);
  if (blocks.live < RT_HEAP_BLOCKS) rt_map_put(&blocks, (uint64_t)(uintptr_t)p, (uint64_t)size << STACK_BITS | loc);
  else if (!heap_full_said++)
    rt_note("more than %u live heap blocks: blocks allocated from now on are not named",
            (unsigned)RT_HEAP_BLOCKS);
  rt_fn.pthread_mutex_unlock(&heap_mu);
  rt_busy = 0;
}

static void untrack(void *p) {
  if (!p || RT_UNLIKELY(rt_busy) || !RT_ACTIVE()) return;
  int busy = rt_busy;
  rt_busy = 1;
  rt_fn.pthread_mutex_lock(&heap_mu);
  rt_map_del(&blocks, (uint64_t)(uintptr_t)p);
  rt_fn.pthread_mutex_unlock(&heap_mu);
  rt_busy = busy;
}

RT_EXPORT void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  track(p, n, RT_CALLER_PC());
  return p;
}

RT_EXPORT void *calloc(size_t n, size_t size) {
  void *p = __libc_calloc(n, size);
  track(p, n * size, RT_CALLER_PC());
  return p;
}

RT_EXPORT void *realloc(void *old, size_t n) {
  untrack(old);
  void *p = __libc_realloc(old, n);
  if (p) track(p, n, RT_CALLER_PC());
  return p;
}

RT_EXPORT void free(void *p) {
  untrack(p);
  __libc_free(p);
}

RT_EXPORT void *memalign(size_t align, size_t n) {
  void *p = __libc_memalign(align, n);
  track(p, n, RT_CALLER_PC());
  return p;
}

RT_EXPORT void *aligned_alloc(size_t align, size_t n) {
  void *p = __libc_memalign(align, n);
  track(p, n, RT_CALLER_PC());
  return p;
}

RT_EXPORT int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
  void *p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  track(p, n, RT_CALLER_PC());
  *out = p;
  return 0;
}

/* The live block holding addr: 1 with its start, size and allocation stack, else 0. */
static int block_of(uint64_t addr, uint64_t *start, uint64_t *size, uint64_t *loc) {
  int found = 0;
  if (!rt_name_lock(&heap_mu)) return 0;
  for (size_t i = 0; i < blocks.cap && !found; i++) {
    uint64_t k = blocks.keys[i];
    if (k == 0 || k == UINT64_MAX) continue;
    uint64_t n = blocks.vals[i] >> STACK_BITS;
    if (addr >= k && addr < k + (n ? n : 1)) {
      *start = k;
      *size = n;
      *loc = blocks.vals[i] & ((UINT64_C(1) << STACK_BITS) - 1);
      found = 1;
    }
  }
  rt_fn.pthread_mutex_unlock(&heap_mu);
  return found;
}

static void describe_addr(uint64_t addr, char *buf, size_t size) {
  rt_symbol s;
  uint64_t start, n, loc, tid, fn;
  if (rt_sym_data(addr, &s) == 0) {
    if (s.offset) snprintf(buf, size, "%s+%" PRIu64, s.function, s.offset);
    else snprintf(buf, size, "%s", s.function);
  } else if (block_of(addr, &start, &n, &loc)) {
    char at[600];
    if (loc) rt_describe_loc(loc, at, sizeof at);
    else snprintf(at, sizeof at, "an unknown site");
    int len = snprintf(buf, size, "heap block of %" PRIu64 " byte%s allocated at %s", n,
                       n == 1 ? "" : "s", at);
    if (addr != start && len >= 0 && (size_t)len < size)
      snprintf(buf + len, size - (size_t)len, ", +%" PRIu64, addr - start);
  } else if (rt_stack_owner(addr, &tid, &fn)) {
    rt_symbol f;
    if (fn && rt_sym_code(fn, &f) == 0 && f.function)
      snprintf(buf, size, "stack of T%" PRIu64 " in %s", tid, f.function);
    else
      snprintf(buf, size, "stack of T%" PRIu64, tid);
  } else {
    snprintf(buf, size, "memory at 0x%" PRIx64, addr);
  }
}

const char *rt_key_name(int space, uint64_t key, char *buf, size_t size) {
  if (space == ATOM_SPACE_THREAD) {
    snprintf(buf, size, "T%" PRIu64, key);
    return buf;
  }
  uint64_t reader = key >> 48; /* a reader's key of a read-write lock (rt_core.c) */
  uint64_t addr = key & ((UINT64_C(1) << 48) - 1);
  char base[800];
  describe_addr(addr, base, sizeof base);
  if (space == ATOM_SPACE_LOCK && reader)
    snprintf(buf, size, "%s(read by T%" PRIu64 ")", base, reader - 1);
  else
    snprintf(buf, size, "%s", base);
  return buf;
}
