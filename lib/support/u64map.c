#include "support/u64map.h"

#include "atomicity/error.h"
#include "support/assert.h"

/* Put a key that is not in slots (growing: every key moves once). */
static void insert_slot(atom__u64map_slot *slots, size_t cap, uint64_t key, uint32_t vp1) {
  size_t mask = cap - 1;
  size_t i = (size_t)atom__hash64(key) & mask;
  while (slots[i].value_plus1) i = (i + 1) & mask;
  slots[i].key = key;
  slots[i].value_plus1 = vp1;
}

int atom__u64map_put(atom__u64map *m, atom__mem *mem, uint64_t key, uint32_t value) {
  ATOM__ASSERT((m->cap & (m->cap - 1)) == 0); /* the probe mask needs a power of two */
  ATOM__ASSERT(value < UINT32_MAX);            /* value + 1 must not wrap to "empty" */
  size_t i = 0;
  if (m->cap) {
    size_t mask = m->cap - 1;
    for (i = (size_t)atom__hash64(key) & mask; m->slots[i].value_plus1; i = (i + 1) & mask) {
      if (m->slots[i].key == key) {
        m->slots[i].value_plus1 = value + 1;
        return 0;
      }
    }
  }
  if ((m->count + 1) * 2 <= m->cap) { /* the probe ended at the empty slot the key goes to */
    m->slots[i].key = key;
    m->slots[i].value_plus1 = value + 1;
    m->count++;
    return 0;
  }
  size_t ncap = m->cap ? m->cap * 2 : 16;
  atom__u64map_slot *ns = atom__mem_calloc(mem, ncap, sizeof *ns);
  if (!ns) return ATOM_ENOMEM;
  for (size_t j = 0; j < m->cap; j++)
    if (m->slots[j].value_plus1) insert_slot(ns, ncap, m->slots[j].key, m->slots[j].value_plus1);
  atom__mem_free(mem, m->slots, m->cap * sizeof *m->slots);
  m->slots = ns;
  m->cap = ncap;
  insert_slot(m->slots, m->cap, key, value + 1);
  m->count++;
  ATOM__ASSERT(m->count * 2 <= m->cap); /* load <= 1/2: probes end at an empty slot */
  return 0;
}

void atom__u64map_free(atom__u64map *m, atom__mem *mem) {
  atom__mem_free(mem, m->slots, m->cap * sizeof *m->slots);
  m->slots = NULL;
  m->cap = m->count = 0;
}
