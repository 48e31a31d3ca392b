/* The built-in checkers (from checkers/list.def) and the vtable versions the core accepts. */
#include "core/registry.h"

#include <stddef.h>
#include <string.h>

#include "atomicity/error.h"
#include "atomicity/session.h"
#include "checkers/builtin.h"
#include "core/error.h"

/* Every built-in checker, in the order atom_checker_builtin() lists them. */
static const atom_checker *const builtins[] = {
#define CHECKER(ident, name) &atom__checker_##ident,
#define ALIAS(ident, alias)
#include "checkers/list.def"
};

static const struct {
  const char *alias;
  const atom_checker *vt;
} aliases[] = {
#define CHECKER(ident, name)
#define ALIAS(ident, alias) {alias, &atom__checker_##ident},
#include "checkers/list.def"
};

/* A built-in's name in list.def and in its vtable are one name: checked once, in the tests
 * (test_plugins.c), because a vtable's name is not a constant expression here. */

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

/* One case per version the core ever shipped: a version's size is where the next version's
 * first member starts. Never remove a case (plugins built against that header still run). */
size_t atom__checker_size(unsigned version) {
  switch (version) {
  case 1: return offsetof(atom_checker, properties); /* 0.1 */
  case 2: return offsetof(atom_checker, on_events);  /* 0.3: properties */
  case 3: return sizeof(atom_checker);               /* 0.4: on_events */
  default: return 0;
  }
}

ATOM_API int atom_checker_init(atom_checker *vt, unsigned version) {
  if (!vt) return atom__error(ATOM_EINVAL, "atom_checker_init: NULL vtable");
  size_t size = atom__checker_size(version);
  if (!size)
    return atom__error(ATOM_EINVAL,
                       "atom_checker_init: unknown vtable version %u (this library knows 1 to "
                       "%d)",
                       version, ATOM_CHECKER_ABI_VERSION);
  memset(vt, 0, size);
  vt->abi_version = version;
  return 0;
}
