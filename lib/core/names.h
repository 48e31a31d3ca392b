/* Names of keys, per space, for readable reports (internal). */
#ifndef ATOM_CORE_NAMES_H
#define ATOM_CORE_NAMES_H

#include "support/mem.h"
#include "support/u64map.h"

typedef struct atom__names {
  atom__u64map index[5]; /* key -> slot in strings, per space (1..ATOM_SPACE_LOC) */
  char **strings;
  size_t cap, count;
  uint64_t generation; /* changes whenever a name (or a location, core/location.c) changes:
                          rendered report messages older than it are rendered again */
} atom__names;

int atom__names_set(atom__names *n, atom__mem *mem, int space, uint64_t key, const char *name);
const char *atom__names_get(const atom__names *n, int space, uint64_t key);
void atom__names_free(atom__names *n, atom__mem *mem);

#endif
