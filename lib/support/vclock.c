/* Vector clocks that grow with the number of threads (see vclock.h). */
#include "support/vclock.h"

#include <string.h>

#include "atomicity/error.h"
#include "support/assert.h"

void atom__vc_free(atom__mem *m, atom__vc *c) {
  if (c->cap > ATOM__VC_INLINE) atom__mem_free(m, c->u.heap, (size_t)c->cap * sizeof(atom__vc_t));
  atom__vc_init(c);
}

int atom__vc_reserve(atom__mem *m, atom__vc *c, uint32_t n) {
  ATOM__ASSERT(c->len <= c->cap && c->cap >= ATOM__VC_INLINE);
  if (n <= c->cap) return 0;
  uint64_t ncap = (uint64_t)c->cap * 2;
  if (ncap < n) ncap = n;
  if (ncap > UINT32_MAX) ncap = UINT32_MAX;
  if (ncap > SIZE_MAX / sizeof(atom__vc_t)) return ATOM_ENOMEM;
  size_t nbytes = (size_t)ncap * sizeof(atom__vc_t);
  atom__vc_t *p;
  if (c->cap > ATOM__VC_INLINE) {
    p = atom__mem_realloc(m, c->u.heap, (size_t)c->cap * sizeof(atom__vc_t), nbytes);
    if (!p) return ATOM_ENOMEM;
  } else {
    p = atom__mem_alloc(m, nbytes);
    if (!p) return ATOM_ENOMEM;
    memcpy(p, c->u.in, sizeof c->u.in);
  }
  /* Keep the invariant: storage beyond the old capacity reads as 0. */
  memset(p + c->cap, 0, (size_t)(ncap - c->cap) * sizeof(atom__vc_t));
  c->u.heap = p;
  c->cap = (uint32_t)ncap;
  return 0;
}

int atom__vc_set(atom__mem *m, atom__vc *c, uint32_t i, atom__vc_t v) {
  if (i >= c->len) {
    if (v == 0) return 0; /* already 0: do not grow for nothing */
    if (i == UINT32_MAX) return ATOM_ENOMEM;
    int err = atom__vc_reserve(m, c, i + 1);
    if (err) return err;
    c->len = i + 1;
  }
  ATOM__ASSERT(i < c->len && c->len <= c->cap);
  atom__vc_data(c)[i] = v;
  return 0;
}

int atom__vc_copy(atom__mem *m, atom__vc *dst, const atom__vc *src) {
  if (dst == src) return 0;
  int err = atom__vc_reserve(m, dst, src->len);
  if (err) return err;
  atom__vc_t *d = atom__vc_data(dst);
  memcpy(d, atom__vc_cdata(src), (size_t)src->len * sizeof(atom__vc_t));
  if (dst->len > src->len) memset(d + src->len, 0, (size_t)(dst->len - src->len) * sizeof(atom__vc_t));
  dst->len = src->len;
  return 0;
}

int atom__vc_leq(const atom__vc *a, const atom__vc *b) {
  const atom__vc_t *x = atom__vc_cdata(a), *y = atom__vc_cdata(b);
  uint32_t n = a->len < b->len ? a->len : b->len;
  for (uint32_t i = 0; i < n; i++)
    if (x[i] > y[i]) return 0;
  for (uint32_t i = n; i < a->len; i++)
    if (x[i]) return 0;
  return 1;
}
