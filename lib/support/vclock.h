/* Vector clocks that grow with the number of threads (internal).
 *
 * A clock is an array of 32-bit components indexed by dense thread id. Components at or
 * beyond `len` are 0, so a clock only grows when a component it must hold becomes non-zero
 * (or when it is copied from a longer clock): clocks of a trace whose threads appear over time
 * never need to be resized all at once, and there is no thread limit.
 *
 * A clock always points at its storage (no inline area: one representation, no branch per
 * access), which is allocated in whole chunks of ATOM__VC_CHUNK components, so that the loops
 * of the checkers (joins, copies, comparisons) run over whole 8-wide vector units with no
 * scalar epilogue: the AVX2 copy of a hot path (support/multiversion.h) does a chunk in one
 * instruction, the SSE2 baseline in two or a few. ⊥ has no storage (cap 0, p NULL): a zeroed
 * struct is a valid ⊥.
 *
 * Invariants: cap is 0 or a multiple of ATOM__VC_CHUNK, at most ATOM__VC_CAP_MAX; len <= cap;
 * the storage in [len, cap) is zero. Every operation keeps them. So a loop over the chunks
 * that cover [0, len) of a clock (atom__vc_chunks) stays within its storage and reads zeros
 * past len.
 *
 * Memory goes through an atom__mem (accounted to its owner). Operations that may need room
 * return 0 or ATOM_ENOMEM and leave the clock unchanged on failure; callers that must not fail
 * half-way through an event reserve first (atom__vc_reserve), after which the operations on
 * clocks no wider than the reserved capacity cannot fail.
 *
 * Structs are relocatable (they may be moved with memcpy / realloc of an enclosing array). */
#ifndef ATOM_SUPPORT_VCLOCK_H
#define ATOM_SUPPORT_VCLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "support/mem.h"

#define ATOM__VC_CHUNK 8u                  /* components per storage unit */
#define ATOM__VC_CAP_MAX (UINT32_MAX & ~7u) /* largest capacity (a whole number of chunks) */

typedef uint32_t atom__vc_t;
#define ATOM__VC_MAX UINT32_MAX

typedef struct atom__vc {
  uint32_t len;   /* components [0, len) may be non-zero */
  uint32_t cap;   /* storage size: 0 (p is NULL) or a multiple of ATOM__VC_CHUNK */
  atom__vc_t *p;  /* the storage, owned by the clock (atom__vc_free) */
} atom__vc;

/* ⊥: all components 0. Never fails, allocates nothing. */
static inline void atom__vc_init(atom__vc *c) {
  c->len = 0;
  c->cap = 0;
  c->p = NULL;
}

/* Release the storage; the clock is ⊥ afterwards (still usable). Accepts a clock that was
 * only initialized. */
void atom__vc_free(atom__mem *m, atom__vc *c);

/* The storage (NULL for a clock without any: then len is 0). */
static inline atom__vc_t *atom__vc_data(atom__vc *c) { return c->p; }
static inline const atom__vc_t *atom__vc_cdata(const atom__vc *c) { return c->p; }

/* The chunks that cover n components (n <= ATOM__VC_CAP_MAX: no overflow). */
static inline uint32_t atom__vc_chunks(uint32_t n) { return (n + ATOM__VC_CHUNK - 1) / ATOM__VC_CHUNK; }

/* Make room for n components (geometric growth). 0 or ATOM_ENOMEM (clock unchanged). */
int atom__vc_reserve(atom__mem *m, atom__vc *c, uint32_t n);

/* Component i (0 beyond len). */
static inline atom__vc_t atom__vc_get(const atom__vc *c, uint32_t i) {
  return i < c->len ? atom__vc_cdata(c)[i] : 0;
}

/* c(i) := v. 0 or ATOM_ENOMEM. */
int atom__vc_set(atom__mem *m, atom__vc *c, uint32_t i, atom__vc_t v);

/* dst := src. 0 or ATOM_ENOMEM (dst unchanged). */
int atom__vc_copy(atom__mem *m, atom__vc *dst, const atom__vc *src);

/* dst := dst ⊔ src. 0 or ATOM_ENOMEM (dst unchanged). If changed is not NULL it receives 1
 * when some component of dst grew, else 0. Inline: joins are the inner loop of the vector
 * clock checkers (an aerodrome END joins its clock into every clock that learned of it). The
 * loop has no branch per component, so short clocks cost a few instructions each. */
static inline int atom__vc_join(atom__mem *m, atom__vc *dst, const atom__vc *src, int *changed) {
  uint32_t n = src->len;
  if (n > dst->cap) {
    int err = atom__vc_reserve(m, dst, n);
    if (err) return err;
  }
  atom__vc_t *d = atom__vc_data(dst);
  const atom__vc_t *s = atom__vc_cdata(src);
  unsigned grew = 0;
  for (uint32_t i = 0; i < n; i++) {
    atom__vc_t x = d[i], y = s[i];
    grew |= y > x;
    d[i] = y > x ? y : x;
  }
  if (n > dst->len) dst->len = n;
  if (changed) *changed = (int)grew;
  return 0;
}

/* dst := dst ⊔ src[0/skip] (src with component skip taken as 0; AeroDrome's check-read clock,
 * 003 §4.3). 0 or ATOM_ENOMEM (dst unchanged). */
static inline int atom__vc_join_except(atom__mem *m, atom__vc *dst, const atom__vc *src,
                                       uint32_t skip) {
  uint32_t n = src->len;
  /* Do not let the skipped component alone lengthen dst. */
  if (n == skip + 1 && skip != UINT32_MAX) n = skip;
  if (n > dst->cap) {
    int err = atom__vc_reserve(m, dst, n);
    if (err) return err;
  }
  atom__vc_t *d = atom__vc_data(dst);
  const atom__vc_t *s = atom__vc_cdata(src);
  atom__vc_t keep = skip < n ? d[skip] : 0;
  for (uint32_t i = 0; i < n; i++) {
    atom__vc_t x = d[i], y = s[i];
    d[i] = y > x ? y : x;
  }
  if (skip < n) d[skip] = keep;
  if (n > dst->len) dst->len = n;
  return 0;
}

/* a ⊑ b (every component of a <= that of b). */
int atom__vc_leq(const atom__vc *a, const atom__vc *b);

#endif
