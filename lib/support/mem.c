#include "support/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "atomicity/sys/checker.h"
#include "atomicity/error.h"
#include "support/assert.h"

static void *system_malloc(size_t size, void *payload) {
  (void)payload;
  return malloc(size);
}
static void *system_realloc(void *ptr, size_t size, void *payload) {
  (void)payload;
  return realloc(ptr, size);
}
static void system_free(void *ptr, void *payload) {
  (void)payload;
  free(ptr);
}

const atom__allocator atom__system_allocator = {system_malloc, system_realloc, system_free, NULL};

/* Blocks of at least this size are tables indexed by variable, lock or thread id: with 10^6
 * variables their accesses land at random over tens of megabytes, and with 4 KiB pages nearly
 * every one also misses the TLB. */
#define HUGE_HINT_BYTES ((size_t)4 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Ask the kernel for transparent huge pages on the whole 2 MiB pages inside a large block
 * (Linux with transparent_hugepage=madvise, the default of many distributions; `always` needs
 * no hint). Advice only: any failure (another kind of memory, another system) changes
 * nothing, and the block is the caller's as before. */
static void hint_huge_pages(void *p, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (size < HUGE_HINT_BYTES) return;
  uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  uintptr_t hi = ((uintptr_t)p + size) & ~(HUGE_PAGE - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p;
  (void)size;
#endif
}

void atom__mem_init(atom__mem *m, const atom__allocator *alloc) {
  m->alloc = alloc ? alloc : &atom__system_allocator;
  m->env = NULL;
  m->bytes = 0;
  m->peak = 0;
}

void atom__mem_init_env(atom__mem *m, struct atom_env *env) {
  m->alloc = NULL;
  m->env = env;
  m->bytes = 0;
  m->peak = 0;
}

void *atom__mem_new_state(struct atom_env *env, size_t size, size_t mem_offset) {
  atom__mem first;
  atom__mem_init_env(&first, env);
  void *p = atom__mem_calloc(&first, 1, size);
  if (p) memcpy((char *)p + mem_offset, &first, sizeof first);
  return p;
}

void *atom__mem_realloc(atom__mem *m, void *ptr, size_t old_size, size_t new_size) {
  if (m->env) {
    if (new_size == 0) {
      /* count first: m may live inside the block being freed (a checker's own state) */
      ATOM__ASSERT(!ptr || m->bytes >= old_size); /* freeing more than was allocated */
      if (ptr) m->bytes -= old_size;
      atom_env_realloc(m->env, ptr, old_size, 0);
      return NULL;
    }
    ATOM__ASSERT(!ptr || m->bytes >= old_size);
    void *p = atom_env_realloc(m->env, ptr, old_size, new_size);
    if (!p) return NULL;
    hint_huge_pages(p, new_size);
    m->bytes = m->bytes - (ptr ? old_size : 0) + new_size;
    if (m->bytes > m->peak) m->peak = m->bytes;
    return p;
  }
  const atom__allocator *a = m->alloc;
  if (new_size == 0) {
    if (ptr) {
      ATOM__ASSERT(m->bytes >= old_size);
      a->free_fn(ptr, a->payload);
      m->bytes -= old_size;
    }
    return NULL;
  }
  ATOM__ASSERT(!ptr || m->bytes >= old_size);
  void *p = ptr ? a->realloc_fn(ptr, new_size, a->payload) : a->malloc_fn(new_size, a->payload);
  if (!p) return NULL;
  hint_huge_pages(p, new_size);
  m->bytes = m->bytes - (ptr ? old_size : 0) + new_size;
  if (m->bytes > m->peak) m->peak = m->bytes;
  return p;
}

void *atom__mem_calloc(atom__mem *m, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  size_t bytes = n * size;
  if (bytes == 0) bytes = 1; /* a valid pointer; callers free it with size 0, see mem.h */
  void *p = atom__mem_alloc(m, bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

char *atom__mem_strdup(atom__mem *m, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = atom__mem_alloc(m, n);
  if (p) memcpy(p, s, n);
  return p;
}

int atom__grow(atom__mem *m, void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t ncap = *cap ? *cap : 8;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2) return ATOM_ENOMEM;
    ncap *= 2;
  }
  if (elem && ncap > SIZE_MAX / elem) return ATOM_ENOMEM;
  void *p = atom__mem_realloc(m, *arr, *cap * elem, ncap * elem);
  if (!p) return ATOM_ENOMEM;
  memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
  *arr = p;
  *cap = ncap;
  return 0;
}
