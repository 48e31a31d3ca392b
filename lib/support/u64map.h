/* Open-addressing hash map from 64-bit keys to 32-bit values (internal).
 *
 * Linear probing, power-of-two capacity, load factor <= 1/2, no deletion (interning only
 * grows). The hot path (lookup of a present key) is a multiply, a shift and usually one
 * probe. */
#ifndef ATOM_SUPPORT_U64MAP_H
#define ATOM_SUPPORT_U64MAP_H

#include <stdint.h>

#include "support/mem.h"

typedef struct atom__u64map_slot {
  uint64_t key;
  uint32_t value_plus1; /* 0 = empty slot */
} atom__u64map_slot;

typedef struct atom__u64map {
  atom__u64map_slot *slots;
  size_t cap;   /* power of two, or 0 */
  size_t count;
} atom__u64map;

static inline uint64_t atom__hash64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

/* Combine a running hash h with one more value v (signatures, sets). */
static inline uint64_t atom__hash_mix(uint64_t h, uint64_t v) {
  return atom__hash64(h ^ (v + 0x9e3779b97f4a7c15ULL));
}

/* Returns 1 and *value if present, 0 if absent. */
static inline int atom__u64map_get(const atom__u64map *m, uint64_t key, uint32_t *value) {
  if (!m->cap) return 0;
  size_t mask = m->cap - 1;
  for (size_t i = (size_t)atom__hash64(key) & mask;; i = (i + 1) & mask) {
    const atom__u64map_slot *sl = &m->slots[i];
    if (!sl->value_plus1) return 0;
    if (sl->key == key) {
      *value = sl->value_plus1 - 1;
      return 1;
    }
  }
}

/* Insert or replace. Returns 0 or ATOM_ENOMEM (map unchanged). value < UINT32_MAX. */
int atom__u64map_put(atom__u64map *m, atom__mem *mem, uint64_t key, uint32_t value);
void atom__u64map_free(atom__u64map *m, atom__mem *mem);

#endif
