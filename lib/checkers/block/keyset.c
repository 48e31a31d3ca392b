/* block: a set of fixed-size keys, numbered in insertion order (sites and tuples).
 *
 * The 64-bit hash of a key's words finds its item through a support/idindex; the index hands
 * out the items whose hash tag matches, and the key decides. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"

static uint64_t key_hash(const uint32_t *k, unsigned kw) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ kw;
  for (unsigned i = 0; i < kw; i++) h = atom__hash64(h ^ ((uint64_t)k[i] * 0x632be59bd9b4e019ull + i));
  return h;
}

void atom__block_keyset_init(block_keyset *s, unsigned kw) {
  memset(s, 0, sizeof *s);
  s->kw = kw;
}

void atom__block_keyset_free(atom__mem *m, block_keyset *s) {
  atom__mem_free(m, s->keys, s->kcap * sizeof *s->keys);
  atom__idindex_free(&s->index, m);
  atom__block_keyset_init(s, s->kw);
}

int atom__block_keyset_add(atom__mem *m, block_keyset *s, const uint32_t *key, uint32_t *item,
                           int *added) {
  *added = 0;
  atom__idindex_probe p;
  atom__idindex_start(&s->index, key_hash(key, s->kw), &p);
  for (uint32_t it; (it = atom__idindex_next(&s->index, &p)) != ATOM__IDINDEX_END;) {
    if (memcmp(keyset_key(s, it), key, s->kw * sizeof *key) == 0) {
      *item = it;
      return 0;
    }
  }
  if (s->n >= UINT32_MAX - 2) return ATOM_ELIMIT;
  if (ATOM__GROW(m, s->keys, s->kcap, (s->n + 1) * s->kw)) return ATOM_ENOMEM;
  uint32_t id = (uint32_t)s->n;
  /* the last step that can fail: on failure the key is not there and the grown array is
   * merely roomier */
  if (atom__idindex_add(&s->index, m, &p, id)) return ATOM_ENOMEM;
  memcpy(s->keys + s->n * s->kw, key, s->kw * sizeof *key);
  s->n++;
  *item = id;
  *added = 1;
  return 0;
}
