/* The library's one open-addressing map: growth, and the index's clearing and freeing (see
 * idindex.h). */
#include "support/idindex.h"

#include <string.h>

#include "atomicity/error.h"
#include "support/assert.h"

static size_t slot_size(int wide) {
  return wide ? sizeof(atom__u64map_slot) : sizeof(atom__idindex_slot);
}

/* Put an entry that is not in slots (growing: every entry moves once). */
static void place(void *slots, size_t cap, uint64_t tag, uint32_t id_plus1, int wide) {
  size_t mask = cap - 1, i = (size_t)tag & mask;
  while (atom__oamap_id_plus1(slots, i, wide)) i = (i + 1) & mask;
  atom__oamap_set(slots, i, tag, id_plus1, wide);
}

int atom__oamap_add_grow(void **slots, size_t *cap, size_t *count, atom__mem *mem,
                         const atom__oamap_probe *p, uint32_t id, int wide) {
  ATOM__ASSERT((*cap & (*cap - 1)) == 0); /* the probe mask needs a power of two */
  ATOM__ASSERT(id < UINT32_MAX);          /* id + 1 must not wrap to "empty" */
  ATOM__ASSERT(!*cap || !atom__oamap_id_plus1(*slots, p->at, wide)); /* p ended at an empty slot */
  size_t ncap = *cap ? *cap * 2 : 16, size = slot_size(wide);
  /* the home slot of a narrow tag is tag & mask: 32-bit tags address at most 2^32 slots */
  if ((uint64_t)ncap > (uint64_t)UINT32_MAX + 1 || ncap < *cap) return ATOM_ENOMEM;
  void *ns = atom__mem_calloc(mem, ncap, size);
  if (!ns) return ATOM_ENOMEM;
  for (size_t i = 0; i < *cap; i++) {
    uint32_t idp1 = atom__oamap_id_plus1(*slots, i, wide);
    if (idp1) place(ns, ncap, atom__oamap_tag(*slots, i, wide), idp1, wide);
  }
  place(ns, ncap, p->tag, id + 1, wide);
  atom__mem_free(mem, *slots, *cap * size);
  *slots = ns;
  *cap = ncap;
  ++*count;
  ATOM__ASSERT(*count * 2 <= *cap); /* load <= 1/2: probes end at an empty slot */
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
