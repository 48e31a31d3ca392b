/* Union-find over dense ids 0..n-1 (internal).
 *
 * The caller owns the parent array (n entries, filled by atom__uf_init); find compresses paths
 * by halving, so a sequence of operations is close to linear. */
#ifndef ATOM_SUPPORT_UNIONFIND_H
#define ATOM_SUPPORT_UNIONFIND_H

#include <stddef.h>
#include <stdint.h>

/* Every id its own class. */
static inline void atom__uf_init(uint32_t *parent, size_t n) {
  for (size_t i = 0; i < n; i++) parent[i] = (uint32_t)i;
}

/* The representative of x's class. */
static inline uint32_t atom__uf_find(uint32_t *parent, uint32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

/* Merge the classes of a and b; the representative of a's class represents the union.
 * Returns the representative. */
static inline uint32_t atom__uf_union(uint32_t *parent, uint32_t a, uint32_t b) {
  uint32_t ra = atom__uf_find(parent, a), rb = atom__uf_find(parent, b);
  parent[rb] = ra;
  return ra;
}

#endif
