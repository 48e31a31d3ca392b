/* The table of built-in checkers (internal). */
#ifndef ATOM_CORE_REGISTRY_H
#define ATOM_CORE_REGISTRY_H

#include "atomicity/checker.h"

/* The built-in checker called name (or one of its aliases), or NULL. */
const atom_checker *atom__registry_find(const char *name, size_t len);

#endif
