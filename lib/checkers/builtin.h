/* The built-in checkers' vtables, declared from the one list (checkers/list.def); the registry
 * (core/registry.c) lists them. A built-in checker includes this header, which brings the
 * plugin layer, and nothing from core: it uses only what a plugin can use. */
#ifndef ATOM_CHECKERS_BUILTIN_H
#define ATOM_CHECKERS_BUILTIN_H

#include "atomicity/sys/checker.h"

#define CHECKER(ident, name) extern const atom_checker atom__checker_##ident;
#define ALIAS(ident, alias)
#include "checkers/list.def"

#endif
