/* 64-bit integer keys to 32-bit values: support/idindex's wide slots (see u64map.h). */
#include "support/u64map.h"

#include "support/assert.h"

int atom__u64map_put(atom__u64map *m, atom__mem *mem, uint64_t key, uint32_t value) {
  ATOM__ASSERT(value < UINT32_MAX); /* value + 1 must not wrap to "empty" */
  atom__oamap_probe p;
  atom__oamap_start(m->cap, atom__hash64(key), &p);
  if (atom__oamap_next(m->slots, m->cap, &p, 1) != ATOM__IDINDEX_END) {
    m->slots[(p.at - 1) & (m->cap - 1)].id_plus1 = value + 1; /* the tag is the key: replace */
    return 0;
  }
  void *slots = m->slots;
  int rc = atom__oamap_add(&slots, &m->cap, &m->count, mem, &p, value, 1);
  m->slots = slots;
  return rc;
}

void atom__u64map_free(atom__u64map *m, atom__mem *mem) {
  atom__mem_free(mem, m->slots, m->cap * sizeof *m->slots);
  m->slots = NULL;
  m->cap = m->count = 0;
}
