/* A small open-addressing hash map (linear probing) from non-zero uint64_t keys to values.
 * Used for thread handles, read-write lock readers and the pc -> atomic cache; the callers
 * hold the lock that protects each map. */
#include <stdlib.h>

#include "rt.h"

#define EMPTY 0u
#define DELETED UINT64_MAX

static size_t slot_of(uint64_t key, size_t cap) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

int rt_map_get(const rt_map *m, uint64_t key, uint64_t *val) {
  if (!m->cap) return 0;
  for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) {
      *val = m->vals[i];
      return 1;
    }
    if (m->keys[i] == EMPTY) return 0;
  }
}

static int grow(rt_map *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  if (m->live * 4 < m->cap) cap = m->cap; /* mostly tombstones: rehash in place */
  uint64_t *keys = calloc(cap, sizeof *keys), *vals = calloc(cap, sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    uint64_t k = m->keys[i];
    if (k == EMPTY || k == DELETED) continue;
    size_t j = slot_of(k, cap);
    while (keys[j] != EMPTY) j = (j + 1) & (cap - 1);
    keys[j] = k;
    vals[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  m->used = m->live;
  return 0;
}

int rt_map_put(rt_map *m, uint64_t key, uint64_t val) {
  if ((m->used + 1) * 4 >= m->cap * 3 && grow(m) != 0) return -1;
  size_t tomb = SIZE_MAX;
  for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) {
      m->vals[i] = val;
      return 0;
    }
    if (m->keys[i] == DELETED && tomb == SIZE_MAX) tomb = i;
    if (m->keys[i] == EMPTY) {
      if (tomb != SIZE_MAX) {
        i = tomb;
      } else {
        m->used++;
      }
      m->keys[i] = key;
      m->vals[i] = val;
      m->live++;
      return 0;
    }
  }
}

void rt_map_del(rt_map *m, uint64_t key) {
  if (!m->cap) return;
  for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) {
      m->keys[i] = DELETED;
      m->live--;
      return;
    }
    if (m->keys[i] == EMPTY) return;
  }
}

void rt_map_free(rt_map *m) {
  free(m->keys);
  free(m->vals);
  m->keys = m->vals = NULL;
  m->cap = m->used = m->live = 0;
}
