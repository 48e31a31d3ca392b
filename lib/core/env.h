/* Internal side of atom_env, for built-in checkers. */
#ifndef ATOM_CORE_ENV_H
#define ATOM_CORE_ENV_H

#include "atomicity/sys/checker.h"
#include "support/mem.h"

/* What a checker's @p callback ("create", "on_event", "finish", "stats") returned, made safe to
 * hand to the caller: 0 stays 0; a known negative ATOM_E* code passes through, with a message
 * naming the checker if the checker left none; anything else (a positive value, an unknown
 * code) becomes ATOM_ECHECKER with a message naming the checker, the callback and the value, so
 * atom_last_error() never describes an older failure. Call it only when @p rc is non-zero. */
int atom__env_rc(const atom_env *env, const char *callback, int rc);

#endif
