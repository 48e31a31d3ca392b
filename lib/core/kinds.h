/* Facts about event kinds (internal). The public ones, atom_kind_name() and atom_kind_space(),
 * are declared in atomicity/event.h and defined in kinds.c; nothing else is left here. Kept
 * only while some checkers still include it: they use the public functions. */
#ifndef ATOM_CORE_KINDS_H
#define ATOM_CORE_KINDS_H

#include "atomicity/event.h"

#endif
