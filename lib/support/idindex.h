/* The library's one open-addressing map (internal): an index of 32-bit ids by a 64-bit hash.
 * Every hot-path table of the library is this index or support/u64map, its front for 64-bit
 * integer keys; every other table goes through support/hashtab.h (uthash).
 *
 * The caller stores its keys itself (item i: whatever it keeps at position i) and gives the
 * 64-bit hash of a key; the index keeps a 32-bit tag of that hash beside each id and hands out
 * the ids whose tag matches, for the caller to compare keys. A slot is 8 bytes (tag, id), so a
 * probe costs one cache line of the index and, nearly always, one comparison of a key that
 * matches; the hash is not hashed again. Usage, to find a key or add it as item n:
 *
 *   atom__idindex_probe p;
 *   atom__idindex_start(&ix, hash, &p);
 *   for (uint32_t id; (id = atom__idindex_next(&ix, &p)) != ATOM__IDINDEX_END;)
 *     if (same_key(id, key)) return id;
 *   atom__idindex_add(&ix, mem, &p, n);   (p: the probe that just ended, nothing added since)
 *
 * One implementation, two slot widths. The atom__oamap_* routines below do the probing, the
 * growth and the removal for both; `wide` (a constant at every call, so the compiler keeps one
 * specialized copy per width) says which slots they walk:
 *  - narrow (atom__idindex_slot, 8 bytes): a 32-bit tag, the fold of the caller's hash;
 *  - wide (atom__u64map_slot, 16 bytes): a full 64-bit tag, for support/u64map, whose tag is
 *    atom__hash64 of an integer key: a bijection, so the tag stands for the key and a match
 *    needs no second memory access.
 * (One layout for both was measured and is slower: 16- or 12-byte slots cost the large indexes
 * more cache misses, 8-byte slots with the integer keys kept apart cost every integer lookup a
 * second cache line.)
 *
 * Linear probing, power-of-two capacity, load factor <= 1/2. The home slot of a tag is
 * tag & (cap - 1), so growing needs neither the keys nor hashing again (a wide tag's low bits
 * are well mixed). Removal shifts the later entries of the run back (no tombstones, so probes
 * stay as short as if the id had never been added); it needs no keys either, since an entry's
 * home slot follows from its tag. The capacity never shrinks. */
#ifndef ATOM_SUPPORT_IDINDEX_H
#define ATOM_SUPPORT_IDINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "support/assert.h"
#include "support/mem.h"

#define ATOM__IDINDEX_END UINT32_MAX

/* A bijection of 64-bit numbers that mixes every bit into the low ones. */
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

typedef struct atom__idindex_slot {
  uint32_t tag;
  uint32_t id_plus1; /* 0 = empty slot */
} atom__idindex_slot;

typedef struct atom__u64map_slot {
  uint64_t tag; /* atom__hash64 of the key */
  uint32_t id_plus1; /* the value + 1; 0 = empty slot */
} atom__u64map_slot;

/* A lookup in progress: the slot to look at next and the tag looked for. */
typedef struct atom__oamap_probe {
  size_t at;
  uint64_t tag;
} atom__oamap_probe;

/* ---- the one implementation (slots: an array of cap slots of the width `wide` says) ---- */

static inline uint64_t atom__oamap_tag(const void *slots, size_t i, int wide) {
  return wide ? ((const atom__u64map_slot *)slots)[i].tag
              : ((const atom__idindex_slot *)slots)[i].tag;
}

static inline uint32_t atom__oamap_id_plus1(const void *slots, size_t i, int wide) {
  return wide ? ((const atom__u64map_slot *)slots)[i].id_plus1
              : ((const atom__idindex_slot *)slots)[i].id_plus1;
}

/* Slot i := slot k (entries move within the array during removal). */
static inline void atom__oamap_move(void *slots, size_t i, size_t k, int wide) {
  if (wide) ((atom__u64map_slot *)slots)[i] = ((atom__u64map_slot *)slots)[k];
  else ((atom__idindex_slot *)slots)[i] = ((atom__idindex_slot *)slots)[k];
}

static inline void atom__oamap_set(void *slots, size_t i, uint64_t tag, uint32_t id_plus1,
                                   int wide) {
  if (wide) {
    ((atom__u64map_slot *)slots)[i].tag = tag;
    ((atom__u64map_slot *)slots)[i].id_plus1 = id_plus1;
  } else {
    ((atom__idindex_slot *)slots)[i].tag = (uint32_t)tag;
    ((atom__idindex_slot *)slots)[i].id_plus1 = id_plus1;
  }
}

static inline void atom__oamap_empty(void *slots, size_t i, int wide) {
  if (wide) ((atom__u64map_slot *)slots)[i].id_plus1 = 0;
  else ((atom__idindex_slot *)slots)[i].id_plus1 = 0;
}

static inline void atom__oamap_start(size_t cap, uint64_t tag, atom__oamap_probe *p) {
  p->tag = tag;
  p->at = cap ? (size_t)tag & (cap - 1) : 0;
}

/* The next id whose tag matches, or ATOM__IDINDEX_END when there is none (then p marks the
 * empty slot where atom__oamap_add puts a new id). */
static inline uint32_t atom__oamap_next(const void *slots, size_t cap, atom__oamap_probe *p,
                                        int wide) {
  if (!cap) return ATOM__IDINDEX_END;
  size_t mask = cap - 1;
  for (;;) {
    size_t i = p->at;
    uint32_t idp1 = atom__oamap_id_plus1(slots, i, wide);
    if (!idp1) return ATOM__IDINDEX_END;
    p->at = (i + 1) & mask;
    if (atom__oamap_tag(slots, i, wide) == p->tag) return idp1 - 1;
  }
}

/* Double the slots and add id where a probe of the old ones ended. */
int atom__oamap_add_grow(void **slots, size_t *cap, size_t *count, atom__mem *mem,
                         const atom__oamap_probe *p, uint32_t id, int wide);

/* Add id under the tag of the probe p, which must have just returned ATOM__IDINDEX_END with
 * no addition since. id < UINT32_MAX. Returns 0 or ATOM_ENOMEM (the map unchanged). Inline
 * while there is room: adding is on the hot path of tables that churn (race-automata's cells);
 * atom__oamap_add_grow doubles the slots. */
static inline int atom__oamap_add(void **slots, size_t *cap, size_t *count, atom__mem *mem,
                                  const atom__oamap_probe *p, uint32_t id, int wide) {
  if ((*count + 1) * 2 > *cap) return atom__oamap_add_grow(slots, cap, count, mem, p, id, wide);
  ATOM__ASSERT(id < UINT32_MAX && !atom__oamap_id_plus1(*slots, p->at, wide));
  atom__oamap_set(*slots, p->at, p->tag, id + 1, wide);
  ++*count;
  return 0;
}

/* Remove id, added under tag; nothing happens when it is not there. Never fails and never
 * allocates; the other ids stay found (an id's slot may change, so a probe in progress is void
 * after a removal). Inline, like adding: tables that churn (race-automata's cells, the edges of
 * a transaction graph) remove on their hot path. */
static inline void atom__oamap_remove(void *slots, size_t cap, size_t *count, uint64_t tag,
                                      uint32_t id, int wide) {
  if (!cap) return;
  size_t mask = cap - 1, hole = (size_t)tag & mask;
  for (;; hole = (hole + 1) & mask) {
    uint32_t idp1 = atom__oamap_id_plus1(slots, hole, wide);
    if (!idp1) return; /* not there */
    if (idp1 == id + 1 && atom__oamap_tag(slots, hole, wide) == tag) break;
  }
  /* Backward shift: an entry later in the run moves into the hole unless its home slot lies
   * cyclically in (hole, j] (a probe from there never passes the hole, so it must stay). */
  for (size_t j = (hole + 1) & mask; atom__oamap_id_plus1(slots, j, wide); j = (j + 1) & mask) {
    size_t home = (size_t)atom__oamap_tag(slots, j, wide) & mask;
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      atom__oamap_move(slots, hole, j, wide);
      hole = j;
    }
  }
  atom__oamap_empty(slots, hole, wide);
  --*count;
}

/* ---- the index (narrow slots) ---- */

typedef struct atom__idindex {
  atom__idindex_slot *slots;
  size_t cap; /* power of two, or 0 */
  size_t count;
} atom__idindex;

typedef atom__oamap_probe atom__idindex_probe;

static inline void atom__idindex_start(const atom__idindex *ix, uint64_t hash,
                                       atom__idindex_probe *p) {
  /* both halves count: the caller's hash may be weak in either */
  atom__oamap_start(ix->cap, (uint32_t)(hash ^ hash >> 32), p);
}

static inline uint32_t atom__idindex_next(const atom__idindex *ix, atom__idindex_probe *p) {
  return atom__oamap_next(ix->slots, ix->cap, p, 0);
}

static inline int atom__idindex_add(atom__idindex *ix, atom__mem *mem,
                                    const atom__idindex_probe *p, uint32_t id) {
  void *slots = ix->slots;
  int rc = atom__oamap_add(&slots, &ix->cap, &ix->count, mem, p, id, 0);
  ix->slots = slots;
  return rc;
}

/* Remove id, added under hash (see atom__oamap_remove). */
static inline void atom__idindex_remove(atom__idindex *ix, uint64_t hash, uint32_t id) {
  atom__oamap_remove(ix->slots, ix->cap, &ix->count, (uint32_t)(hash ^ hash >> 32), id, 0);
}

/* Remove every id, keeping the slots for reuse; costs the capacity, not the count. */
void atom__idindex_clear(atom__idindex *ix);

void atom__idindex_free(atom__idindex *ix, atom__mem *mem);

#endif
