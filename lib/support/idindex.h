/* An index of dense ids by a hash the caller computes (internal): support/u64map's companion
 * for keys too big to live in a slot.
 *
 * The caller stores its keys itself (item i: whatever it keeps at position i) and gives the
 * 64-bit hash of a key; the index keeps a 32-bit tag of that hash beside each id and hands out
 * the ids whose tag matches, for the caller to compare keys. A slot is 8 bytes (tag, id), so a
 * probe costs one cache line of the index and, nearly always, one comparison of a key that
 * matches; the hash is not hashed again. The slot of a tag is tag & (cap - 1), so growing the
 * index needs neither the keys nor their hashes.
 *
 * Linear probing, power-of-two capacity, load factor <= 1/2. Removal shifts the later entries
 * of the run back (no tombstones, so probes stay as short as if the id had never been added);
 * it needs no keys either, since an entry's home slot follows from its tag. The capacity never
 * shrinks. Usage, to find a key or add it as item n:
 *
 *   atom__idindex_probe p;
 *   atom__idindex_start(&ix, hash, &p);
 *   for (uint32_t id; (id = atom__idindex_next(&ix, &p)) != ATOM__IDINDEX_END;)
 *     if (same_key(id, key)) return id;
 *   atom__idindex_add(&ix, mem, &p, n);   (p: the probe that just ended, nothing added since)
 */
#ifndef ATOM_SUPPORT_IDINDEX_H
#define ATOM_SUPPORT_IDINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "support/assert.h"
#include "support/mem.h"

#define ATOM__IDINDEX_END UINT32_MAX

typedef struct atom__idindex_slot {
  uint32_t tag;
  uint32_t id_plus1; /* 0 = empty slot */
} atom__idindex_slot;

typedef struct atom__idindex {
  atom__idindex_slot *slots;
  size_t cap; /* power of two, or 0 */
  size_t count;
} atom__idindex;

/* A lookup in progress: the slot to look at next and the tag looked for. */
typedef struct atom__idindex_probe {
  size_t at;
  uint32_t tag;
} atom__idindex_probe;

static inline void atom__idindex_start(const atom__idindex *ix, uint64_t hash,
                                       atom__idindex_probe *p) {
  p->tag = (uint32_t)(hash ^ hash >> 32); /* both halves count: the caller's hash may be weak
                                             in either */
  p->at = ix->cap ? p->tag & (ix->cap - 1) : 0;
}

/* The next id whose tag matches, or ATOM__IDINDEX_END when there is none (then p marks the
 * empty slot where atom__idindex_add puts a new id). */
static inline uint32_t atom__idindex_next(const atom__idindex *ix, atom__idindex_probe *p) {
  if (!ix->cap) return ATOM__IDINDEX_END;
  size_t mask = ix->cap - 1;
  for (;;) {
    const atom__idindex_slot *sl = &ix->slots[p->at];
    if (!sl->id_plus1) return ATOM__IDINDEX_END;
    p->at = (p->at + 1) & mask;
    if (sl->tag == p->tag) return sl->id_plus1 - 1;
  }
}

int atom__idindex_add_grow(atom__idindex *ix, atom__mem *mem, const atom__idindex_probe *p,
                           uint32_t id);

/* Add id under the hash of the probe p, which must have just returned ATOM__IDINDEX_END with
 * no addition since. id < UINT32_MAX. Returns 0 or ATOM_ENOMEM (the index unchanged). Inline
 * while there is room: adding is on the hot path of tables that churn (race-automata's cells);
 * atom__idindex_add_grow doubles the slots. */
static inline int atom__idindex_add(atom__idindex *ix, atom__mem *mem,
                                    const atom__idindex_probe *p, uint32_t id) {
  if ((ix->count + 1) * 2 > ix->cap) return atom__idindex_add_grow(ix, mem, p, id);
  ATOM__ASSERT(id < UINT32_MAX && !ix->slots[p->at].id_plus1);
  ix->slots[p->at].tag = p->tag;
  ix->slots[p->at].id_plus1 = id + 1;
  ix->count++;
  return 0;
}

/* Remove id, added under hash; nothing happens when it is not there. Never fails and never
 * allocates; the other ids stay found (an id's slot may change, so a probe in progress is void
 * after a removal). Inline, like adding: tables that churn (race-automata's cells, the edges of
 * a transaction graph) remove on their hot path. */
static inline void atom__idindex_remove(atom__idindex *ix, uint64_t hash, uint32_t id) {
  if (!ix->cap) return;
  atom__idindex_probe p;
  atom__idindex_start(ix, hash, &p);
  size_t mask = ix->cap - 1, hole = p.at;
  for (;; hole = (hole + 1) & mask) {
    const atom__idindex_slot *sl = &ix->slots[hole];
    if (!sl->id_plus1) return; /* not there */
    if (sl->id_plus1 == id + 1 && sl->tag == p.tag) break;
  }
  /* Backward shift: an entry later in the run moves into the hole unless its home slot lies
   * cyclically in (hole, j] (a probe from there never passes the hole, so it must stay). */
  for (size_t j = (hole + 1) & mask; ix->slots[j].id_plus1; j = (j + 1) & mask) {
    size_t home = ix->slots[j].tag & mask;
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      ix->slots[hole] = ix->slots[j];
      hole = j;
    }
  }
  ix->slots[hole].id_plus1 = 0;
  ix->count--;
}

/* Remove every id, keeping the slots for reuse; costs the capacity, not the count. */
void atom__idindex_clear(atom__idindex *ix);

void atom__idindex_free(atom__idindex *ix, atom__mem *mem);

#endif
