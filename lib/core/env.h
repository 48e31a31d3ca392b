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
/* Argument @p key as a count in 1..@p max (written @p max_text in the error): *out is left as
 * it is when the key is absent. @return 0, ATOM_EINVAL with a message naming the key. */
int atom__env_arg_count(atom_env *env, const char *key, uint64_t max, const char *max_text,
                        uint64_t *out);
/* What a checker's @p callback ("create", "on_event", "finish", "stats") returned, made safe to
 * hand to the caller: 0 stays 0; a known negative ATOM_E* code passes through, with a message
 * naming the checker if the checker left none; anything else (a positive value, an unknown
 * code) becomes ATOM_ECHECKER with a message naming the checker, the callback and the value, so
 * atom_last_error() never describes an older failure. Call it only when @p rc is non-zero. */
int atom__env_rc(const atom_env *env, const char *callback, int rc);

#endif
