/* The one parser of checker arguments "key=value,key=value" (internal). */
#ifndef ATOM_CORE_ARGS_H
#define ATOM_CORE_ARGS_H

#include "core/session.h"

/* Parse args into env (keys checked against env->vt->arg_keys). Unknown or repeated keys and
 * empty keys are ATOM_EINVAL with a message naming the key. */
int atom__args_parse(atom_env *env, const char *args);

#endif
