/* The built-in checkers' vtables; the registry (core/registry.c) lists them. */
#ifndef ATOM_CHECKERS_BUILTIN_H
#define ATOM_CHECKERS_BUILTIN_H

#include "atomicity/checker.h"

extern const atom_checker atom__checker_null;
extern const atom_checker atom__checker_aerodrome;
extern const atom_checker atom__checker_velodrome;
extern const atom_checker atom__checker_commit_node;
extern const atom_checker atom__checker_block;
extern const atom_checker atom__checker_reduction;
extern const atom_checker atom__checker_race_automata;
extern const atom_checker atom__checker_tso;

#endif
