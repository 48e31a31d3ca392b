#include "support/lockset.h"

#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"

void atom__ls_init(atom__lsets *t, atom__mem *mem) {
  memset(t, 0, sizeof *t);
  t->mem = mem;
}

void atom__ls_destroy(atom__lsets *t) {
  if (!t || !t->mem) return;
  atom__mem *m = t->mem;
  atom__mem_free(m, t->pool, t->pool_cap * sizeof *t->pool);
  atom__mem_free(m, t->rec, t->rec_cap * sizeof *t->rec);
  atom__idindex_free(&t->index, m);
  atom__mem_free(m, t->scratch, t->scratch_cap * sizeof *t->scratch);
  atom__u64map_free(&t->add_memo, m);
  atom__u64map_free(&t->remove_memo, m);
  atom__u64map_free(&t->meet_memo, m);
  memset(t, 0, sizeof *t);
  t->mem = m;
}

static uint64_t content_hash(const uint32_t *e, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
  for (size_t i = 0; i < n; i++) h = atom__hash64(h ^ (e[i] + 0x632be59bd9b4e019ULL));
  return h;
}

static int same(const atom__lsets *t, atom__ls s, const uint32_t *e, size_t n, uint64_t h) {
  const atom__ls_rec *r = &t->rec[s];
  return r->hash == h && r->len == n && memcmp(t->pool + r->off, e, n * sizeof *e) == 0;
}

/* Room for the empty set as id 0 (the first time anything is made). */
static int ensure_empty(atom__lsets *t) {
  if (t->n) return 0;
  if (ATOM__GROW(t->mem, t->rec, t->rec_cap, 1)) return ATOM_ENOMEM;
  t->rec[0] = (atom__ls_rec){0, 0, content_hash(NULL, 0)};
  t->n = 1;
  return 0;
}

/* The id of the sorted, duplicate-free set e[0..n). e must not point into the pool. */
static int intern(atom__lsets *t, const uint32_t *e, size_t n, atom__ls *out) {
  if (n == 0) {
    *out = ATOM__LS_EMPTY;
    return 0;
  }
  if (ensure_empty(t)) return ATOM_ENOMEM;
  uint64_t h = content_hash(e, n);
  atom__idindex_probe p;
  atom__idindex_start(&t->index, h, &p);
  for (uint32_t id; (id = atom__idindex_next(&t->index, &p)) != ATOM__IDINDEX_END;)
    if (same(t, id, e, n, h)) {
      *out = id;
      return 0;
    }
  if (t->n >= UINT32_MAX - 1 || t->pool_len + n > UINT32_MAX) return ATOM_ELIMIT;
  /* Reserve everything first so that nothing changes on failure (p: nothing added since). */
  if (ATOM__GROW(t->mem, t->pool, t->pool_cap, t->pool_len + n)) return ATOM_ENOMEM;
  if (ATOM__GROW(t->mem, t->rec, t->rec_cap, t->n + 1)) return ATOM_ENOMEM;
  if (atom__idindex_add(&t->index, t->mem, &p, (uint32_t)t->n)) return ATOM_ENOMEM;
  atom__ls s = (atom__ls)t->n;
  memcpy(t->pool + t->pool_len, e, n * sizeof *e);
  t->rec[s] = (atom__ls_rec){(uint32_t)t->pool_len, (uint32_t)n, h};
  t->pool_len += n;
  t->n++;
  *out = s;
  return 0;
}

static int scratch(atom__lsets *t, size_t n) {
  return ATOM__GROW(t->mem, t->scratch, t->scratch_cap, n ? n : 1);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

int atom__ls_make(atom__lsets *t, const uint32_t *locks, size_t n, atom__ls *out) {
  if (scratch(t, n)) return ATOM_ENOMEM;
  uint32_t *e = t->scratch;
  if (n) memcpy(e, locks, n * sizeof *e);
  /* sorted here, once, so that no caller sorts first: a set may be big (every lock a unit
   * takes) */
  size_t i = 1;
  while (i < n && e[i - 1] <= e[i]) i++;
  if (i < n) qsort(e, n, sizeof *e, cmp_u32);
  size_t k = 0;
  for (i = 0; i < n; i++)
    if (k == 0 || e[k - 1] != e[i]) e[k++] = e[i];
  return intern(t, e, k, out);
}

static inline uint64_t pair_key(uint32_t a, uint32_t b) { return (uint64_t)a << 32 | b; }

int atom__ls_add(atom__lsets *t, atom__ls s, uint32_t lock, atom__ls *out) {
  if (atom__ls_contains(t, s, lock)) { /* no memo entry for what changes nothing */
    *out = s;
    return 0;
  }
  uint32_t v;
  uint64_t key = pair_key(s, lock);
  if (atom__u64map_get(&t->add_memo, key, &v)) {
    *out = v;
    return 0;
  }
  uint32_t n = atom__ls_size(t, s);
  if (scratch(t, (size_t)n + 1)) return ATOM_ENOMEM;
  const uint32_t *src = atom__ls_elems(t, s);
  uint32_t *e = t->scratch;
  size_t k = 0, i = 0;
  while (i < n && src[i] < lock) e[k++] = src[i++];
  if (i == n || src[i] != lock) e[k++] = lock;
  while (i < n) e[k++] = src[i++];
  atom__ls r;
  int rc = intern(t, e, k, &r);
  if (rc) return rc;
  if (atom__u64map_put(&t->add_memo, t->mem, key, r)) return ATOM_ENOMEM;
  *out = r;
  return 0;
}

int atom__ls_remove(atom__lsets *t, atom__ls s, uint32_t lock, atom__ls *out) {
  if (!atom__ls_contains(t, s, lock)) {
    *out = s;
    return 0;
  }
  uint32_t v;
  uint64_t key = pair_key(s, lock);
  if (atom__u64map_get(&t->remove_memo, key, &v)) {
    *out = v;
    return 0;
  }
  uint32_t n = atom__ls_size(t, s);
  if (scratch(t, n)) return ATOM_ENOMEM;
  const uint32_t *src = atom__ls_elems(t, s);
  uint32_t *e = t->scratch;
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++)
    if (src[i] != lock) e[k++] = src[i];
  atom__ls r;
  int rc = intern(t, e, k, &r);
  if (rc) return rc;
  if (atom__u64map_put(&t->remove_memo, t->mem, key, r)) return ATOM_ENOMEM;
  *out = r;
  return 0;
}

int atom__ls_meet(atom__lsets *t, atom__ls a, atom__ls b, atom__ls *out) {
  if (a == b) {
    *out = a;
    return 0;
  }
  if (a == ATOM__LS_EMPTY || b == ATOM__LS_EMPTY) {
    *out = ATOM__LS_EMPTY;
    return 0;
  }
  uint32_t v;
  uint64_t key = a < b ? pair_key(a, b) : pair_key(b, a);
  if (atom__u64map_get(&t->meet_memo, key, &v)) {
    *out = v;
    return 0;
  }
  uint32_t na = atom__ls_size(t, a), nb = atom__ls_size(t, b);
  if (scratch(t, na < nb ? na : nb)) return ATOM_ENOMEM;
  const uint32_t *x = atom__ls_elems(t, a), *y = atom__ls_elems(t, b);
  uint32_t *e = t->scratch;
  size_t k = 0;
  for (uint32_t i = 0, j = 0; i < na && j < nb;) {
    if (x[i] < y[j]) i++;
    else if (x[i] > y[j]) j++;
    else {
      e[k++] = x[i];
      i++;
      j++;
    }
  }
  atom__ls r;
  int rc = intern(t, e, k, &r);
  if (rc) return rc;
  if (atom__u64map_put(&t->meet_memo, t->mem, key, r)) return ATOM_ENOMEM;
  *out = r;
  return 0;
}

uint32_t atom__ls_common(const atom__lsets *t, atom__ls a, atom__ls b) {
  uint32_t na = atom__ls_size(t, a), nb = atom__ls_size(t, b);
  if (!na || !nb) return UINT32_MAX;
  const uint32_t *x = atom__ls_elems(t, a), *y = atom__ls_elems(t, b);
  for (uint32_t i = 0, j = 0; i < na && j < nb;) {
    if (x[i] < y[j]) i++;
    else if (x[i] > y[j]) j++;
    else return x[i];
  }
  return UINT32_MAX;
}

int atom__ls_disjoint(const atom__lsets *t, atom__ls a, atom__ls b) {
  if (a == b) return a == ATOM__LS_EMPTY;
  return atom__ls_common(t, a, b) == UINT32_MAX;
}

int atom__ls_contains(const atom__lsets *t, atom__ls s, uint32_t lock) {
  uint32_t n = atom__ls_size(t, s);
  const uint32_t *e = atom__ls_elems(t, s);
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (e[mid] < lock) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && e[lo] == lock;
}
