#include "core/names.h"

#include "atomicity/error.h"

int atom__names_set(atom__names *n, atom__mem *mem, int space, uint64_t key, const char *name) {
  char *copy = atom__mem_strdup(mem, name);
  if (!copy) return ATOM_ENOMEM;
  n->generation++;
  uint32_t slot;
  if (atom__u64map_get(&n->index[space], key, &slot)) {
    atom__mem_strfree(mem, n->strings[slot]);
    n->strings[slot] = copy;
    return 0;
  }
  if (n->count >= UINT32_MAX - 1 || ATOM__GROW(mem, n->strings, n->cap, n->count + 1) ||
      atom__u64map_put(&n->index[space], mem, key, (uint32_t)n->count)) {
    atom__mem_strfree(mem, copy);
    return ATOM_ENOMEM;
  }
  n->strings[n->count++] = copy;
  return 0;
}

const char *atom__names_get(const atom__names *n, int space, uint64_t key) {
  uint32_t slot;
  if (space < 1 || space > 4 || !atom__u64map_get(&n->index[space], key, &slot)) return NULL;
  return n->strings[slot];
}

void atom__names_free(atom__names *n, atom__mem *mem) {
  for (size_t i = 0; i < n->count; i++) atom__mem_strfree(mem, n->strings[i]);
  atom__mem_free(mem, n->strings, n->cap * sizeof *n->strings);
  for (int i = 0; i < 5; i++) atom__u64map_free(&n->index[i], mem);
  n->strings = NULL;
  n->cap = n->count = 0;
}
