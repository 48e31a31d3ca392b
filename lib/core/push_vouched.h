/* What the core offers the trace layer besides its error helpers: a push of events whose keys
 * the caller vouches for (push_block.c). */
#ifndef ATOM_CORE_PUSH_VOUCHED_H
#define ATOM_CORE_PUSH_VOUCHED_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/event.h"
#include "atomicity/session.h"

/* atom_push_many for a caller that vouches for its keys (a trace reader: its keys number its
 * names): every event's thread key is at most thread_max, and every READ's and WRITE's target
 * at most var_max (UINT64_MAX: nothing vouched). Once both bounds are within the session's
 * direct tables (the live threads', the variables'), blocks are filled without testing those
 * keys against the tables' sizes; what is accepted, refused and dispatched is as with
 * atom_push_many. A key above its bound may be read out of bounds: the bounds must hold. */
int atom__push_many_bounded(atom_session *s, const atom_event *ev, size_t n, size_t *done,
                            uint64_t thread_max, uint64_t var_max);

#endif
