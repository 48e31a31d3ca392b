/* overwrite: an out-of-tree checker for libatomicity (see README.md). */
#ifndef OVERWRITE_H
#define OVERWRITE_H

#include <atomicity/sys/checker.h>

/* Fill @p vt with the overwrite checker (version ATOM_CHECKER_ABI_VERSION of the vtable).
 * Returns 0 or the error of atom_checker_init(). */
int overwrite_checker_init(atom_checker *vt);

#endif
