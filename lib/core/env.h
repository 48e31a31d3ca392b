/* Internal side of atom_env, for built-in checkers. */
#ifndef ATOM_CORE_ENV_H
#define ATOM_CORE_ENV_H

#include "atomicity/checker.h"
#include "support/mem.h"

/* The accounted allocator of this checker instance (what atom_env_realloc uses). */
atom__mem *atom__env_mem(atom_env *env);

#endif
