/* Facts about event kinds, from the one kind table of atomicity/event.h (internal). */
#ifndef ATOM_CORE_KINDS_H
#define ATOM_CORE_KINDS_H

#include <stdint.h>

/* The STD trace operator of a kind ("r", "acq", ...), "?" if it is not a kind. */
const char *atom__kind_op(uint32_t kind);

/* The key space of an event's target (ATOM_SPACE_VAR, _LOCK, _THREAD), 0 if it has none. */
int atom__kind_space(uint32_t kind);

#endif
