#include "core/registry.h"

#include <string.h>

#include "atomicity/session.h"
#include "checkers/builtin.h"

/* Every built-in checker, in the order atom_checker_builtin() lists them. */
static const atom_checker *const builtins[] = {
    &atom__checker_aerodrome,
    &atom__checker_velodrome,
    &atom__checker_commit_node,
    &atom__checker_block,
    &atom__checker_reduction,
    &atom__checker_race_automata,
    &atom__checker_tso,
    &atom__checker_null,
};

static const struct {
  const char *alias;
  const atom_checker *vt;
} aliases[] = {
    {"vector-clock", &atom__checker_aerodrome},
    {"graph", &atom__checker_velodrome},
};

const atom_checker *atom__registry_find(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (strlen(builtins[i]->name) == len && memcmp(builtins[i]->name, name, len) == 0)
      return builtins[i];
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strlen(aliases[i].alias) == len && memcmp(aliases[i].alias, name, len) == 0)
      return aliases[i].vt;
  return NULL;
}

ATOM_API const atom_checker *atom_checker_builtin(size_t i) {
  return i < sizeof builtins / sizeof builtins[0] ? builtins[i] : NULL;
}
