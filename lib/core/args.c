#include "core/args.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"

static int key_allowed(const atom_checker *vt, const char *key) {
  if (!vt->arg_keys) return 0;
  for (const char *const *k = vt->arg_keys; *k; k++)
    if (strcmp(*k, key) == 0) return 1;
  return 0;
}

static void allowed_list(const atom_checker *vt, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  if (vt->arg_keys)
    for (const char *const *k = vt->arg_keys; *k && n + 1 < size; k++)
      n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", *k);
  if (!n) snprintf(buf, size, "none");
}

int atom__args_parse(atom_env *env, const char *args) {
  if (!args || !*args) return 0;
  size_t len = strlen(args), n = 1;
  for (size_t i = 0; i < len; i++) n += args[i] == ',';
  env->args = atom__mem_strdup(&env->mem, args);
  env->arg_keys = atom__mem_calloc(&env->mem, n, sizeof *env->arg_keys);
  env->arg_values = atom__mem_calloc(&env->mem, n, sizeof *env->arg_values);
  if (!env->args || !env->arg_keys || !env->arg_values)
    return atom__error(ATOM_ENOMEM, "out of memory parsing arguments");
  env->args_size = n;
  char *p = env->args;
  while (p) {
    char *next = strchr(p, ',');
    if (next) *next++ = '\0';
    char *eq = strchr(p, '=');
    const char *value = "";
    if (eq) {
      *eq = '\0';
      value = eq + 1;
    }
    char allowed[256];
    allowed_list(env->vt, allowed, sizeof allowed);
    if (!*p)
      return atom__error(ATOM_EINVAL, "%s: empty argument name in \"%s\"", env->vt->name, args);
    if (!key_allowed(env->vt, p))
      return atom__error(ATOM_EINVAL, "%s: unknown argument \"%s\" (accepted: %s)",
                         env->vt->name, p, allowed);
    for (size_t i = 0; i < env->n_args; i++)
      if (strcmp(env->arg_keys[i], p) == 0)
        return atom__error(ATOM_EINVAL, "%s: argument \"%s\" given twice", env->vt->name, p);
    env->arg_keys[env->n_args] = p;
    env->arg_values[env->n_args] = value;
    env->n_args++;
    p = next;
  }
  return 0;
}
