/* Hash-consed lock sets (internal).
 *
 * The lockset tests of 000 §4 (Thms 4.3, 4.4) and the blocks of 000 §5 (held(e), h12) compare
 * sets of locks over and over. Here a set of dense lock ids is a small integer: equal sets get
 * equal ids, so a thread's held(e) is one 32-bit value that can be stored with every access
 * and compared in O(1). Id ATOM__LS_EMPTY (0) is the empty set. Sets are immutable; the
 * operations that derive one from another (add, remove, meet) are memoized, so tracking the
 * locks a thread holds costs one hash probe per ACQUIRE/RELEASE once the set has been seen.
 *
 * Sets are stored flat (sorted arrays), which suits the few locks a thread holds at once; a
 * caller that may see a thread hold thousands should cap what it tracks (growing one set lock by
 * lock makes every intermediate set: quadratic storage).
 *
 * Every allocation goes through the owner's atom__mem; an operation that fails returns
 * ATOM_ENOMEM (or ATOM_ELIMIT past 2^32 sets) and leaves the table as it was (the memo tables
 * may have grown). */
#ifndef ATOM_SUPPORT_LOCKSET_H
#define ATOM_SUPPORT_LOCKSET_H

#include <stddef.h>
#include <stdint.h>

#include "support/idindex.h"
#include "support/mem.h"
#include "support/u64map.h"

typedef uint32_t atom__ls;
#define ATOM__LS_EMPTY 0u

typedef struct atom__ls_rec {
  uint32_t off; /* first element in pool */
  uint32_t len; /* number of locks */
  uint64_t hash;
} atom__ls_rec;

typedef struct atom__lsets {
  atom__mem *mem;
  uint32_t *pool; /* the elements of every set, each set sorted ascending */
  size_t pool_len, pool_cap;
  atom__ls_rec *rec; /* set id -> its elements */
  size_t n, rec_cap;
  atom__idindex index; /* content hash -> set id (the empty set, id 0, is not in it) */
  atom__u64map add_memo, remove_memo, meet_memo;
  uint32_t *scratch; /* room to build one set */
  size_t scratch_cap;
} atom__lsets;

/* An empty table holding only the empty set. Allocates nothing. */
void atom__ls_init(atom__lsets *t, atom__mem *mem);
void atom__ls_destroy(atom__lsets *t);

/* The id of the set of the @p n locks at @p locks (any order, duplicates allowed). */
int atom__ls_make(atom__lsets *t, const uint32_t *locks, size_t n, atom__ls *out);
/* *out := s ∪ {lock}. */
int atom__ls_add(atom__lsets *t, atom__ls s, uint32_t lock, atom__ls *out);
/* *out := s \ {lock}. */
int atom__ls_remove(atom__lsets *t, atom__ls s, uint32_t lock, atom__ls *out);
/* *out := a ∩ b. */
int atom__ls_meet(atom__lsets *t, atom__ls a, atom__ls b, atom__ls *out);

/* a ∩ b = ∅ (no allocation). */
int atom__ls_disjoint(const atom__lsets *t, atom__ls a, atom__ls b);
/* lock ∈ s. */
int atom__ls_contains(const atom__lsets *t, atom__ls s, uint32_t lock);
/* One lock of a ∩ b, or UINT32_MAX if they are disjoint. */
uint32_t atom__ls_common(const atom__lsets *t, atom__ls a, atom__ls b);

static inline uint32_t atom__ls_size(const atom__lsets *t, atom__ls s) {
  return t->rec ? t->rec[s].len : 0;
}
/* The locks of s, ascending; valid until the next call that creates a set. */
static inline const uint32_t *atom__ls_elems(const atom__lsets *t, atom__ls s) {
  return t->rec ? t->pool + t->rec[s].off : NULL;
}
/* Number of distinct sets made so far (the empty set included). */
static inline size_t atom__ls_count(const atom__lsets *t) { return t->n ? t->n : 1; }

#endif
