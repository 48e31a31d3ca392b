/* Checker argument values (internal): the one parser of yes/no, one-of-a-list and bounded
 * counts, for every checker.
 *
 * Each function reads `key` with atom_env_arg(); an absent key leaves *out as it is (the
 * caller's default) and returns 0; a malformed value is reported with atom_env_error() (a
 * message naming the key, what is accepted and the value) and its ATOM_EINVAL returned, so
 * `if ((rc = atom__arg_yes_no(env, "strict", &strict))) return rc;` is all a create needs. */
#ifndef ATOM_SUPPORT_ARGVAL_H
#define ATOM_SUPPORT_ARGVAL_H

#include <stdint.h>

#include "atomicity/sys/checker.h"

/* "yes" (or the bare key) is 1, "no" is 0. */
int atom__arg_yes_no(atom_env *env, const char *key, int *out);

/* One of `choices` (a NULL-terminated list): *out is its position. */
int atom__arg_choice(atom_env *env, const char *key, const char *const *choices, int *out);

/* A decimal count in 1..max; max_text is how max is written in the error ("2^48"). */
int atom__arg_count(atom_env *env, const char *key, uint64_t max, const char *max_text,
                    uint64_t *out);

#endif
