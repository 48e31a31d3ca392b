/* A map from 64-bit integer keys to 32-bit values (internal): support/idindex, the library's
 * one open-addressing map, with wide slots. A slot holds atom__hash64 of the key, a bijection,
 * so the hash stands for the key: a lookup is a multiply, a shift and usually one probe, all in
 * one cache line. No removal (interning only grows). */
#ifndef ATOM_SUPPORT_U64MAP_H
#define ATOM_SUPPORT_U64MAP_H

#include <stdint.h>

#include "support/idindex.h"
#include "support/mem.h"

typedef struct atom__u64map {
  atom__u64map_slot *slots;
  size_t cap; /* power of two, or 0 */
  size_t count;
} atom__u64map;

/* Returns 1 and *value if present, 0 if absent. */
static inline int atom__u64map_get(const atom__u64map *m, uint64_t key, uint32_t *value) {
  atom__oamap_probe p;
  atom__oamap_start(m->cap, atom__hash64(key), &p);
  uint32_t v = atom__oamap_next(m->slots, m->cap, &p, 1);
  if (v == ATOM__IDINDEX_END) return 0;
  *value = v;
  return 1;
}

/* Insert or replace. Returns 0 or ATOM_ENOMEM (map unchanged). value < UINT32_MAX. */
int atom__u64map_put(atom__u64map *m, atom__mem *mem, uint64_t key, uint32_t value);
void atom__u64map_free(atom__u64map *m, atom__mem *mem);

#endif
