/* uthash, configured for the library (internal): the hash tables that are not on a hot path
 * (names, sets, report signatures, tables keyed by structs or strings). Hot-path tables use
 * the library's one open-addressing map instead: support/idindex.h (ids by the hash of a key
 * the caller keeps) or its front for 64-bit integer keys, support/u64map.h.
 *
 * A file that uses uthash defines ATOM__HASH_MEM, an expression naming the atom__mem* that
 * tables are allocated from wherever a HASH_ macro is used, then includes this header:
 *
 *   #define ATOM__HASH_MEM (self->mem)
 *   #include "support/hashtab.h"
 *
 * Running out of memory never ends the process: an add that cannot allocate leaves the table
 * as it was, and ATOM__HASH_TRY says so:
 *
 *   int rc;
 *   ATOM__HASH_TRY(rc, HASH_ADD_KEYPTR(hh, self->names, s, len, item));
 *   if (rc) { free item; return rc; }   // ATOM_ENOMEM
 */
#ifndef ATOM_SUPPORT_HASHTAB_H
#define ATOM_SUPPORT_HASHTAB_H

#ifndef ATOM__HASH_MEM
#error "define ATOM__HASH_MEM (the atom__mem* of the tables) before including support/hashtab.h"
#endif

#include "atomicity/error.h"
#include "support/mem.h"

/* Set by a failed allocation inside a HASH_ macro; read by ATOM__HASH_TRY. Per thread, as two
 * sessions may run in two threads. */
static _Thread_local int atom__hash_oom;

#define uthash_malloc(sz) atom__mem_alloc((ATOM__HASH_MEM), (sz))
#define uthash_free(ptr, sz) atom__mem_free((ATOM__HASH_MEM), (ptr), (sz))
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (atom__hash_oom = 1)

#include <uthash.h>

/* Run one HASH_ADD* statement; rc becomes 0, or ATOM_ENOMEM if it could not allocate (then the
 * item was not added). */
#define ATOM__HASH_TRY(rc, stmt)                 \
  do {                                           \
    atom__hash_oom = 0;                          \
    stmt;                                        \
    (rc) = atom__hash_oom ? ATOM_ENOMEM : 0;     \
  } while (0)

#endif
