/* block: a set of fixed-size keys, numbered in insertion order (sites and tuples).
 *
 * The 64-bit hash of a key's words indexes a support/u64map; the rare keys whose hashes
 * collide are chained through next[], so a lookup is one map probe and, nearly always, one
 * comparison of the key. */
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
  atom__mem_free(m, s->next, s->next_cap * sizeof *s->next);
  atom__u64map_free(&s->first, m);
  atom__block_keyset_init(s, s->kw);
}

int atom__block_keyset_add(atom__mem *m, block_keyset *s, const uint32_t *key, uint32_t *item,
                           int *added) {
  *added = 0;
  uint64_t h = key_hash(key, s->kw);
  uint32_t it, last = NONE32;
  if (atom__u64map_get(&s->first, h, &it)) {
    for (; it != NONE32; it = s->next[it]) {
      if (memcmp(keyset_key(s, it), key, s->kw * sizeof *key) == 0) {
        *item = it;
        return 0;
      }
      last = it;
    }
  }
  if (s->n >= UINT32_MAX - 2) return ATOM_ELIMIT;
  if (ATOM__GROW(m, s->keys, s->kcap, (s->n + 1) * s->kw) ||
      ATOM__GROW(m, s->next, s->next_cap, s->n + 1))
    return ATOM_ENOMEM;
  uint32_t id = (uint32_t)s->n;
  /* A new hash goes into the map (the only step that can fail after the growth above); a
   * colliding one is chained behind the last item of its hash. */
  if (last == NONE32 && atom__u64map_put(&s->first, m, h, id)) return ATOM_ENOMEM;
  if (last != NONE32) s->next[last] = id;
  memcpy(s->keys + s->n * s->kw, key, s->kw * sizeof *key);
  s->next[id] = NONE32;
  s->n++;
  *item = id;
  *added = 1;
  return 0;
}
