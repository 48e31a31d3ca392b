/* Internal side of atom_env, for built-in checkers. */
#ifndef ATOM_CORE_ENV_H
#define ATOM_CORE_ENV_H

#include "atomicity/checker.h"
#include "support/mem.h"

/* The accounted allocator of this checker instance (what atom_env_realloc uses). */
atom__mem *atom__env_mem(atom_env *env);
/* A yes/no argument: *out = 1 for "yes" or a bare key, 0 for "no", unchanged if not given;
 * anything else is ATOM_EINVAL with a message. */
int atom__env_arg_yes_no(atom_env *env, const char *key, int *out);

#endif
