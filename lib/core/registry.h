/* The table of built-in checkers, and the vtable versions the core knows (internal). */
#ifndef ATOM_CORE_REGISTRY_H
#define ATOM_CORE_REGISTRY_H

#include "atomicity/sys/checker.h"

/* The built-in checker called name (or one of its aliases), or NULL. */
const atom_checker *atom__registry_find(const char *name, size_t len);

/* Size of atom_checker as version @p version laid it out (a plugin built against an older
 * header has a shorter struct: only that prefix may be read or written); 0 for a version the
 * core does not know. */
size_t atom__checker_size(unsigned version);

#endif
