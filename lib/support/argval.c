#include "support/argval.h"

#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"

int atom__arg_yes_no(atom_env *env, const char *key, int *out) {
  const char *v = atom_env_arg(env, key);
  if (!v) return 0;
  if (strcmp(v, "yes") == 0 || strcmp(v, "") == 0) *out = 1;
  else if (strcmp(v, "no") == 0) *out = 0;
  else return atom_env_error(env, ATOM_EINVAL, "%s must be yes or no, not \"%s\"", key, v);
  return 0;
}

int atom__arg_choice(atom_env *env, const char *key, const char *const *choices, int *out) {
  const char *v = atom_env_arg(env, key);
  if (!v) return 0;
  for (int i = 0; choices[i]; i++)
    if (strcmp(v, choices[i]) == 0) return *out = i, 0;
  /* "mode must be one of conflict, view, not "x"" */
  char list[256];
  size_t len = 0;
  list[0] = '\0';
  for (int i = 0; choices[i]; i++) {
    const char *sep = i ? ", " : "";
    size_t ns = strlen(sep), nc = strlen(choices[i]);
    if (len + ns + nc + 1 > sizeof list) break;
    memcpy(list + len, sep, ns);
    memcpy(list + len + ns, choices[i], nc + 1);
    len += ns + nc;
  }
  return atom_env_error(env, ATOM_EINVAL, "%s must be one of %s, not \"%s\"", key, list, v);
}

int atom__arg_count(atom_env *env, const char *key, uint64_t max, const char *max_text,
                    uint64_t *out) {
  const char *v = atom_env_arg(env, key);
  if (!v) return 0;
  char *end;
  unsigned long long x = strtoull(v, &end, 10);
  if (!*v || *end || x == 0 || x > max || v[0] == '-')
    return atom_env_error(env, ATOM_EINVAL, "%s must be an integer in 1..%s, not \"%s\"", key,
                          max_text, v);
  *out = x;
  return 0;
}
