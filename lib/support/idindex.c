/* An index of dense ids by a caller's hash (see idindex.h). */
#include "support/idindex.h"

#include <string.h>

#include "atomicity/error.h"
#include "support/assert.h"

static void place(atom__idindex_slot *slots, size_t cap, uint32_t tag, uint32_t id_plus1) {
  size_t mask = cap - 1, i = tag & mask;
  while (slots[i].id_plus1) i = (i + 1) & mask;
  slots[i].tag = tag;
  slots[i].id_plus1 = id_plus1;
}

int atom__idindex_add_grow(atom__idindex *ix, atom__mem *mem, const atom__idindex_probe *p,
                           uint32_t id) {
  ATOM__ASSERT((ix->cap & (ix->cap - 1)) == 0); /* the probe mask needs a power of two */
  ATOM__ASSERT(id < UINT32_MAX);                /* id + 1 must not wrap to "empty" */
  ATOM__ASSERT(!ix->cap || !ix->slots[p->at].id_plus1); /* p ended at an empty slot */
  size_t ncap = ix->cap ? ix->cap * 2 : 16;
  /* the slot of a tag is tag & mask: 32-bit tags address at most 2^32 slots */
  if ((uint64_t)ncap > (uint64_t)UINT32_MAX + 1 || ncap < ix->cap) return ATOM_ENOMEM;
  atom__idindex_slot *ns = atom__mem_calloc(mem, ncap, sizeof *ns);
  if (!ns) return ATOM_ENOMEM;
  for (size_t i = 0; i < ix->cap; i++)
    if (ix->slots[i].id_plus1) place(ns, ncap, ix->slots[i].tag, ix->slots[i].id_plus1);
  place(ns, ncap, p->tag, id + 1);
  atom__mem_free(mem, ix->slots, ix->cap * sizeof *ix->slots);
  ix->slots = ns;
  ix->cap = ncap;
  ix->count++;
  ATOM__ASSERT(ix->count * 2 <= ix->cap); /* load <= 1/2: probes end at an empty slot */
  return 0;
}

void atom__idindex_clear(atom__idindex *ix) {
  if (ix->cap) memset(ix->slots, 0, ix->cap * sizeof *ix->slots);
  ix->count = 0;
}

void atom__idindex_free(atom__idindex *ix, atom__mem *mem) {
  atom__mem_free(mem, ix->slots, ix->cap * sizeof *ix->slots);
  ix->slots = NULL;
  ix->cap = ix->count = 0;
}
