/* Descriptions of program locations: function, file, line, stack (internal; public API in
 * atomicity/location.h). */
#ifndef ATOM_CORE_LOCATION_H
#define ATOM_CORE_LOCATION_H

#include <stdint.h>

#include "support/mem.h"
#include "support/u64map.h"

typedef struct atom__location {
  char *function, *file; /* NULL if unknown */
  uint32_t line;
  uint32_t n_frames;
  uint64_t *frames;      /* n_frames locs, headline first */
} atom__location;

typedef struct atom__locations {
  atom__u64map index;    /* loc -> position in list */
  atom__location *list;
  size_t count, cap;
} atom__locations;

void atom__locations_free(atom__locations *l, atom__mem *mem);

#endif
