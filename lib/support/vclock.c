/* Vector clocks that grow with the number of threads (see vclock.h). */
#include "support/vclock.h"

#include <string.h>

#include "atomicity/error.h"
#include "support/assert.h"

void atom__vc_free(atom__mem *m, atom__vc *c) {
  if (c->cap) atom__mem_free(m, c->p, (size_t)c->cap * sizeof(atom__vc_t));
  atom__vc_init(c);
}

int atom__vc_reserve(atom__mem *m, atom__vc *c, uint32_t n) {
  ATOM__ASSERT(c->len <= c->cap && c->cap % ATOM__VC_CHUNK == 0);
  if (n <= c->cap) return 0;
  if (n > ATOM__VC_CAP_MAX) return ATOM_ENOMEM;
  uint64_t ncap = (uint64_t)c->cap * 2;
  if (ncap < n) ncap = n;
  ncap = (ncap + ATOM__VC_CHUNK - 1) / ATOM__VC_CHUNK * ATOM__VC_CHUNK; /* whole chunks */
  if (ncap > ATOM__VC_CAP_MAX) ncap = ATOM__VC_CAP_MAX;
  if (ncap > SIZE_MAX / sizeof(atom__vc_t)) return ATOM_ENOMEM;
  size_t nbytes = (size_t)ncap * sizeof(atom__vc_t);
  atom__vc_t *p = c->cap ? atom__mem_realloc(m, c->p, (size_t)c->cap * sizeof(atom__vc_t), nbytes)
                         : atom__mem_alloc(m, nbytes);
  if (!p) return ATOM_ENOMEM;
  /* Keep the invariant: storage beyond the old capacity reads as 0. */
  memset(p + c->cap, 0, (size_t)(ncap - c->cap) * sizeof(atom__vc_t));
  c->p = p;
  c->cap = (uint32_t)ncap;
  return 0;
}

int atom__vc_set(atom__mem *m, atom__vc *c, uint32_t i, atom__vc_t v) {
  if (i >= c->len) {
    if (v == 0) return 0; /* already 0: do not grow for nothing */
    if (i >= ATOM__VC_CAP_MAX) return ATOM_ENOMEM;
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
  if (src->len) memcpy(d, atom__vc_cdata(src), (size_t)src->len * sizeof(atom__vc_t));
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
