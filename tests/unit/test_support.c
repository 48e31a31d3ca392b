/* lib/support: the accounted allocator, growable arrays, the u64 hash map and the sync order
 * of thread periods (release/acquire). (Vector clocks, the digraph and the fork/join order of
 * periods are tested with the checkers that use them.) */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "support/mem.h"
#include "support/periods.h"
#include "support/idindex.h"
#include "support/u64map.h"
#include "support/report_build.h"
#include "support/rotate.h"
#include "support/unionfind.h"

static atom__mem *hash_mem; /* the tables' allocator in the uthash tests below */
#define ATOM__HASH_MEM hash_mem
#include "support/hashtab.h"
#include "util.h"

Suite *atom_test_suite_support(void);

START_TEST(mem_accounting) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  void *a = atom__mem_alloc(&m, 100);
  ck_assert_ptr_nonnull(a);
  ck_assert_uint_eq(m.bytes, 100);
  a = atom__mem_realloc(&m, a, 100, 300);
  ck_assert_uint_eq(m.bytes, 300);
  ck_assert_uint_eq(m.peak, 300);
  char *s = atom__mem_strdup(&m, "hello");
  ck_assert_str_eq(s, "hello");
  ck_assert_uint_eq(m.bytes, 306);
  atom__mem_strfree(&m, s);
  atom__mem_free(&m, a, 300);
  ck_assert_uint_eq(m.bytes, 0);
  ck_assert_uint_eq(m.peak, 306);
  ck_assert_ptr_null(atom__mem_calloc(&m, SIZE_MAX / 2, 4)); /* overflow */
  int *z = atom__mem_calloc(&m, 10, sizeof *z);
  for (int i = 0; i < 10; i++) ck_assert_int_eq(z[i], 0);
  atom__mem_free(&m, z, 10 * sizeof *z);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

START_TEST(grow_keeps_contents_and_fails_cleanly) {
  tu_failing f = tu_failing_at(0);
  atom__allocator al;
  tu_failing_allocator(&al, &f);
  atom__mem m;
  atom__mem_init(&m, &al);
  int *arr = NULL;
  size_t cap = 0;
  for (int i = 0; i < 1000; i++) {
    ck_assert_int_eq(ATOM__GROW(&m, arr, cap, (size_t)i + 1), 0);
    arr[i] = i;
  }
  ck_assert_uint_ge(cap, 1000);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(arr[i], i);
  f.budget = 0; /* the next request fails (only it) */
  size_t old = cap;
  ck_assert_int_eq(ATOM__GROW(&m, arr, cap, old + 1), -2 /* ATOM_ENOMEM */);
  ck_assert_uint_eq(cap, old);
  ck_assert_int_eq(arr[999], 999);
  atom__mem_free(&m, arr, cap * sizeof *arr);
  ck_assert_uint_eq(m.bytes, 0);
  ck_assert_int_eq(f.live, 0); /* and the allocator saw every block freed */
}
END_TEST

START_TEST(u64map_put_get_replace_grow) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__u64map map = {0};
  uint32_t v;
  ck_assert_int_eq(atom__u64map_get(&map, 1, &v), 0);
  for (uint64_t k = 0; k < 50000; k++)
    ck_assert_int_eq(atom__u64map_put(&map, &m, k * 0x9e3779b97f4a7c15ULL, (uint32_t)k), 0);
  ck_assert_uint_eq(map.count, 50000);
  for (uint64_t k = 0; k < 50000; k++) {
    ck_assert_int_eq(atom__u64map_get(&map, k * 0x9e3779b97f4a7c15ULL, &v), 1);
    ck_assert_uint_eq(v, k);
  }
  ck_assert_int_eq(atom__u64map_get(&map, 12345, &v), 0);
  ck_assert_int_eq(atom__u64map_put(&map, &m, 0, 77), 0); /* replace */
  ck_assert_int_eq(atom__u64map_get(&map, 0, &v), 1);
  ck_assert_uint_eq(v, 77);
  ck_assert_uint_eq(map.count, 50000);
  ck_assert_int_eq(atom__u64map_put(&map, &m, UINT64_MAX, 5), 0);
  ck_assert_int_eq(atom__u64map_get(&map, UINT64_MAX, &v), 1);
  ck_assert_uint_eq(v, 5);
  atom__u64map_free(&map, &m);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

START_TEST(u64map_out_of_memory_leaves_it_unchanged) {
  tu_failing f = tu_failing_at(0);
  atom__allocator al;
  tu_failing_allocator(&al, &f);
  atom__mem m;
  atom__mem_init(&m, &al);
  atom__u64map map = {0};
  uint64_t k = 0;
  for (; map.count < 8; k++) ck_assert_int_eq(atom__u64map_put(&map, &m, k, (uint32_t)k), 0);
  f.budget = 0; /* the next growth fails */
  int err = 0;
  for (; !err && k < 64; k++) /* it grows well before 64 keys */
    err = atom__u64map_put(&map, &m, k, (uint32_t)k);
  ck_assert_int_eq(err, -2);
  uint32_t v;
  ck_assert_int_eq(atom__u64map_get(&map, k - 1, &v), 0); /* the failed key is absent */
  for (uint64_t j = 0; j < k - 1; j++) {
    ck_assert_int_eq(atom__u64map_get(&map, j, &v), 1);
    ck_assert_uint_eq(v, j);
  }
  atom__u64map_free(&map, &m);
  ck_assert_uint_eq(m.bytes, 0);
  ck_assert_int_eq(f.live, 0); /* and the allocator saw every block freed */
}
END_TEST

/* ---- idindex: ids found by the caller's hash, keys compared by the caller ---------------- */

/* The item of key k in keys[0 .. *n), added if absent; hash(k) is deliberately weak when
 * `weak` (many items share a tag) so that the caller's comparison is what tells them apart. */
static uint32_t idx_intern(atom__idindex *ix, atom__mem *m, uint64_t *keys, uint32_t *n,
                           uint64_t k, int weak, int *err) {
  atom__idindex_probe p;
  atom__idindex_start(ix, weak ? k % 7 : atom__hash64(k), &p);
  for (uint32_t id; (id = atom__idindex_next(ix, &p)) != ATOM__IDINDEX_END;)
    if (keys[id] == k) return id;
  *err = atom__idindex_add(ix, m, &p, *n);
  if (*err) return ATOM__IDINDEX_END;
  keys[*n] = k;
  return (*n)++;
}

START_TEST(idindex_finds_added_ids_through_equal_tags) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  enum { N = 20000 };
  static uint64_t keys[N];
  for (int weak = 0; weak < 2; weak++) {
    atom__idindex ix = {0};
    uint32_t n = 0;
    int err = 0;
    size_t count = weak ? 300 : N; /* weak: 300 keys on 7 tags, long probe runs */
    for (size_t i = 0; i < count; i++) {
      ck_assert_uint_eq(idx_intern(&ix, &m, keys, &n, i * 0x9e3779b97f4a7c15ULL, weak, &err), i);
      ck_assert_int_eq(err, 0);
    }
    ck_assert_uint_eq(ix.count, count);
    ck_assert_uint_eq(ix.cap & (ix.cap - 1), 0);
    ck_assert(ix.count * 2 <= ix.cap);
    for (size_t i = 0; i < count; i++) /* found again, nothing added */
      ck_assert_uint_eq(idx_intern(&ix, &m, keys, &n, i * 0x9e3779b97f4a7c15ULL, weak, &err), i);
    ck_assert_uint_eq(n, count);
    atom__idindex_probe p; /* an absent key: no candidate has its key */
    atom__idindex_start(&ix, weak ? 3 : atom__hash64(12345), &p);
    for (uint32_t id; (id = atom__idindex_next(&ix, &p)) != ATOM__IDINDEX_END;)
      ck_assert_uint_ne(keys[id], 12345);
    atom__idindex_free(&ix, &m);
    ck_assert_uint_eq(ix.cap, 0);
    ck_assert_uint_eq(m.bytes, 0);
  }
  atom__idindex ix = {0}; /* an empty index has no candidates */
  atom__idindex_probe p;
  atom__idindex_start(&ix, 42, &p);
  ck_assert_uint_eq(atom__idindex_next(&ix, &p), ATOM__IDINDEX_END);
}
END_TEST

/* The item of key k, or ATOM__IDINDEX_END (hash as in idx_intern). */
static uint32_t idx_find(const atom__idindex *ix, const uint64_t *keys, uint64_t k, int weak) {
  atom__idindex_probe p;
  atom__idindex_start(ix, weak ? k % 7 : atom__hash64(k), &p);
  for (uint32_t id; (id = atom__idindex_next(ix, &p)) != ATOM__IDINDEX_END;)
    if (keys[id] == k) return id;
  return ATOM__IDINDEX_END;
}

START_TEST(idindex_remove_keeps_the_others_found) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  enum { N = 300 };
  static uint64_t keys[2 * N];
  static uint32_t id_of[N]; /* key k = i + 1: its id, or ATOM__IDINDEX_END once removed */
  for (int weak = 0; weak < 2; weak++) { /* weak: 7 tags, every removal inside a long run */
    atom__idindex ix = {0};
    uint32_t n = 0;
    int err = 0;
    for (uint32_t i = 0; i < N; i++) id_of[i] = idx_intern(&ix, &m, keys, &n, i + 1, weak, &err);
    uint64_t r = 12345;
    for (int step = 0; step < 4 * N; step++) { /* remove or add again, at random (fixed seed) */
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      uint32_t i = (uint32_t)(r >> 33) % N;
      uint64_t h = weak ? (i + 1) % 7 : atom__hash64(i + 1);
      if (id_of[i] != ATOM__IDINDEX_END) {
        atom__idindex_remove(&ix, h, id_of[i]);
        atom__idindex_remove(&ix, h, id_of[i]); /* absent now: nothing happens */
        id_of[i] = ATOM__IDINDEX_END;
      } else if (n < 2 * N) {
        id_of[i] = idx_intern(&ix, &m, keys, &n, i + 1, weak, &err);
        ck_assert_int_eq(err, 0);
      }
      if (step % 50 && step != 4 * N - 1) continue;
      size_t live = 0;
      for (uint32_t k = 0; k < N; k++) {
        ck_assert_uint_eq(idx_find(&ix, keys, k + 1, weak), id_of[k]);
        live += id_of[k] != ATOM__IDINDEX_END;
      }
      ck_assert_uint_eq(ix.count, live);
    }
    atom__idindex_free(&ix, &m);
  }
  ck_assert_uint_eq(m.bytes, 0);

  /* Across the end of the slots (cap 16, tags below 2^32 are the hashes themselves): ids 0, 1,
   * 2 on tag 15 sit in slots 15, 0, 1; id 3 on tag 0 in slot 2. */
  atom__idindex ix = {0};
  static const uint64_t tag[] = {15, 15, 15, 0, 14};
  for (uint32_t id = 0; id < 4; id++) {
    atom__idindex_probe p;
    atom__idindex_start(&ix, tag[id], &p);
    while (atom__idindex_next(&ix, &p) != ATOM__IDINDEX_END) {
    }
    ck_assert_int_eq(atom__idindex_add(&ix, &m, &p, id), 0);
  }
  ck_assert_uint_eq(ix.cap, 16);
  ck_assert_uint_eq(ix.slots[0].id_plus1, 2);
  atom__idindex_remove(&ix, 15, 0); /* 1 and 2 move back over the end, and 3 follows... */
  ck_assert_uint_eq(ix.slots[15].id_plus1, 2);
  ck_assert_uint_eq(ix.slots[0].id_plus1, 3);
  ck_assert_uint_eq(ix.slots[1].id_plus1, 4); /* ...as near to slot 0 as it can get */
  ck_assert_uint_eq(ix.slots[2].id_plus1, 0);
  atom__idindex_remove(&ix, 0, 3); /* the last of the run: nothing moves */
  ck_assert_uint_eq(ix.slots[0].id_plus1, 3);
  ck_assert_uint_eq(ix.slots[1].id_plus1, 0);
  atom__idindex_probe p; /* id 4 on tag 14 goes to slot 14, before the run */
  atom__idindex_start(&ix, tag[4], &p);
  ck_assert_uint_eq(atom__idindex_next(&ix, &p), ATOM__IDINDEX_END);
  ck_assert_int_eq(atom__idindex_add(&ix, &m, &p, 4), 0);
  atom__idindex_remove(&ix, 14, 4); /* 1 and 2 have their home after the hole: they stay */
  ck_assert_uint_eq(ix.slots[14].id_plus1, 0);
  ck_assert_uint_eq(ix.slots[15].id_plus1, 2);
  ck_assert_uint_eq(ix.slots[0].id_plus1, 3);
  for (uint32_t id = 1; id < 3; id++) { /* and both are still found from tag 15 */
    atom__idindex_start(&ix, 15, &p);
    uint32_t x;
    do x = atom__idindex_next(&ix, &p);
    while (x != ATOM__IDINDEX_END && x != id);
    ck_assert_uint_eq(x, id);
  }
  ck_assert_uint_eq(ix.count, 2);
  atom__idindex_clear(&ix); /* empty, slots kept, and usable again */
  ck_assert_uint_eq(ix.count, 0);
  ck_assert_uint_eq(ix.cap, 16);
  atom__idindex_start(&ix, 15, &p);
  ck_assert_uint_eq(atom__idindex_next(&ix, &p), ATOM__IDINDEX_END);
  ck_assert_int_eq(atom__idindex_add(&ix, &m, &p, 7), 0);
  atom__idindex_start(&ix, 15, &p);
  ck_assert_uint_eq(atom__idindex_next(&ix, &p), 7);
  atom__idindex_free(&ix, &m);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

START_TEST(idindex_out_of_memory_leaves_it_unchanged) {
  tu_failing f = tu_failing_at(0);
  atom__allocator al;
  tu_failing_allocator(&al, &f);
  atom__mem m;
  atom__mem_init(&m, &al);
  atom__idindex ix = {0};
  static uint64_t keys[64];
  uint32_t n = 0;
  int err = 0;
  uint64_t k = 0;
  for (; ix.count < 8; k++) idx_intern(&ix, &m, keys, &n, k, 0, &err);
  ck_assert_int_eq(err, 0);
  f.budget = 0; /* the next growth fails */
  for (; !err && k < 64; k++) idx_intern(&ix, &m, keys, &n, k, 0, &err); /* within keys[] */
  ck_assert_int_eq(err, -2);
  ck_assert_uint_eq(ix.count, n);
  err = 0;
  for (uint64_t j = 0; j < n; j++) ck_assert_uint_eq(idx_intern(&ix, &m, keys, &n, j, 0, &err), j);
  uint32_t before = n, got = idx_intern(&ix, &m, keys, &n, k - 1, 0, &err); /* now it fits */
  ck_assert_int_eq(err, 0);
  ck_assert_uint_eq(got, before);
  ck_assert_uint_eq(n, before + 1);
  atom__idindex_free(&ix, &m);
  ck_assert_uint_eq(m.bytes, 0);
  ck_assert_int_eq(f.live, 0); /* and the allocator saw every block freed */
}
END_TEST

/* ---- periods: the memory bound ------------------------------------------------------------ */

/* A root forks n threads; each of them (high thread ids) forks a child of its own and joins it.
 * Each period knows at most three threads, so the snapshots are stored sparse and the
 * accounted bytes grow linearly with n (dense snapshots up to the highest thread id took about
 * 3 n^2 / 2 words: 24 MB for n = 2000). (A root that then joined them all would know 2 n
 * threads in its last period: that is quadratic in any vector-clock representation.)
 * @return the peak bytes. */
static size_t periods_star_peak(uint32_t n) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__periods ps;
  atom__periods_init(&ps, &m);
  uint32_t r0, first = ATOM__PERIOD_NONE, prev_child = ATOM__PERIOD_NONE, p;
  ck_assert_int_eq(atom__periods_of(&ps, 0, &r0), 0);
  for (uint32_t u = 1; u <= n; u++) {
    uint32_t child = n + u, pu, pc, pj;
    ck_assert_int_eq(atom__periods_fork(&ps, 0, u), 0);
    ck_assert_int_eq(atom__periods_of(&ps, u, &pu), 0);
    ck_assert_int_eq(atom__periods_fork(&ps, u, child), 0);
    ck_assert_int_eq(atom__periods_of(&ps, child, &pc), 0);
    ck_assert(atom__periods_before(&ps, r0, pc));
    ck_assert(atom__periods_before(&ps, pu, pc));
    if (prev_child != ATOM__PERIOD_NONE) ck_assert(atom__periods_concurrent(&ps, prev_child, pc));
    ck_assert_int_eq(atom__periods_join(&ps, u, child), 0);
    ck_assert_int_eq(atom__periods_of(&ps, u, &pj), 0);
    ck_assert(atom__periods_before(&ps, pc, pj));
    if (first == ATOM__PERIOD_NONE) first = pc;
    prev_child = pc;
  }
  ck_assert_int_eq(atom__periods_of(&ps, 0, &p), 0);
  ck_assert(atom__periods_concurrent(&ps, first, p));
  ck_assert(atom__periods_concurrent(&ps, prev_child, p));
  atom__periods_destroy(&ps);
  ck_assert_uint_eq(m.bytes, 0);
  return m.peak;
}

START_TEST(periods_memory_linear_in_threads) {
  size_t small = periods_star_peak(1000), big = periods_star_peak(2000);
  ck_assert_msg(big <= 2 * small + 64 * 1024, "peak %zu bytes for 1000 threads, %zu for 2000",
                small, big);
  ck_assert_msg(big < 2000 * 400, "peak %zu bytes for 2000 threads", big);
}
END_TEST

/* ---- periods: sync order ----------------------------------------------------------------- */

START_TEST(periods_release_acquire) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__periods ps;
  atom__periods_init(&ps, &m);
  enum { X = 5, Y = 9 };
  uint32_t a0, a1, b0, b1, c1, d0, e1, q;
  int moved = -1;
  ck_assert_int_eq(atom__periods_of(&ps, 0, &a0), 0);
  ck_assert_int_eq(atom__periods_of(&ps, 1, &a1), 0);
  ck_assert(atom__periods_concurrent(&ps, a0, a1));
  /* thread 0 releases X in a0: a0 ends there, its next event starts b0 */
  ck_assert_int_eq(atom__periods_release(&ps, 0, X), 0);
  ck_assert_int_eq(atom__periods_of(&ps, 0, &b0), 0);
  ck_assert_uint_ne(b0, a0);
  ck_assert(atom__periods_before(&ps, a0, b0));
  ck_assert_int_eq(atom__periods_of(&ps, 0, &q), 0); /* one cut, one new period */
  ck_assert_uint_eq(q, b0);
  /* an acquire of a variable nobody released changes nothing */
  ck_assert_int_eq(atom__periods_acquire(&ps, 1, Y, &moved), 0);
  ck_assert_int_eq(moved, 0);
  ck_assert_int_eq(atom__periods_of(&ps, 1, &q), 0);
  ck_assert_uint_eq(q, a1);
  /* thread 1 acquires X: a new period after a0, still concurrent with b0 */
  ck_assert_int_eq(atom__periods_acquire(&ps, 1, X, &moved), 0);
  ck_assert_int_eq(moved, 1);
  ck_assert_int_eq(atom__periods_of(&ps, 1, &b1), 0);
  ck_assert(atom__periods_before(&ps, a1, b1));
  ck_assert(atom__periods_before(&ps, a0, b1));
  ck_assert(!atom__periods_before(&ps, b1, a0));
  ck_assert(atom__periods_concurrent(&ps, b0, b1));
  ck_assert(atom__periods_concurrent(&ps, a0, a1)); /* what came before is unchanged */
  /* acquiring again teaches nothing: no new period (spinning on a flag is free) */
  ck_assert_int_eq(atom__periods_acquire(&ps, 1, X, &moved), 0);
  ck_assert_int_eq(moved, 0);
  ck_assert_int_eq(atom__periods_acquire(&ps, 1, X, NULL), 0);
  ck_assert_int_eq(atom__periods_of(&ps, 1, &q), 0);
  ck_assert_uint_eq(q, b1);
  /* a thread's own release orders nothing for itself */
  ck_assert_int_eq(atom__periods_acquire(&ps, 0, X, &moved), 0);
  ck_assert_int_eq(moved, 0);
  /* thread 1 releases Y; thread 0 acquires it: b0 is cut there, d0 follows a1 and b1 */
  ck_assert_int_eq(atom__periods_release(&ps, 1, Y), 0);
  ck_assert_int_eq(atom__periods_acquire(&ps, 0, Y, &moved), 0);
  ck_assert_int_eq(moved, 1);
  ck_assert_int_eq(atom__periods_of(&ps, 0, &d0), 0);
  ck_assert(atom__periods_before(&ps, b0, d0));
  ck_assert(atom__periods_before(&ps, b1, d0));
  ck_assert(atom__periods_before(&ps, a1, d0));
  /* thread 1's next event starts c1 (after its release), concurrent with d0 */
  ck_assert_int_eq(atom__periods_of(&ps, 1, &c1), 0);
  ck_assert(atom__periods_before(&ps, b1, c1));
  ck_assert(atom__periods_concurrent(&ps, c1, d0));
  /* the clock of X joins every release: a second release of X by thread 0 (in d0, which
   * follows b1) and a third thread's acquire of X follows a0, d0 and, through d0, b1 */
  ck_assert_int_eq(atom__periods_release(&ps, 0, X), 0);
  ck_assert_int_eq(atom__periods_acquire(&ps, 2, X, &moved), 0);
  ck_assert_int_eq(moved, 1);
  ck_assert_int_eq(atom__periods_of(&ps, 2, &e1), 0);
  ck_assert(atom__periods_before(&ps, a0, e1));
  ck_assert(atom__periods_before(&ps, d0, e1));
  ck_assert(atom__periods_before(&ps, b1, e1));
  ck_assert(atom__periods_concurrent(&ps, c1, e1));
  /* a join after a release needs no extra period: the cut is consumed */
  ck_assert_int_eq(atom__periods_release(&ps, 2, Y), 0);
  ck_assert_int_eq(atom__periods_join(&ps, 2, 1), 0);
  ck_assert_int_eq(atom__periods_of(&ps, 2, &q), 0);
  ck_assert(atom__periods_before(&ps, e1, q));
  ck_assert(atom__periods_before(&ps, c1, q));
  uint32_t q2;
  ck_assert_int_eq(atom__periods_of(&ps, 2, &q2), 0);
  ck_assert_uint_eq(q2, q);
  ck_assert_uint_gt(m.bytes, 0);
  atom__periods_destroy(&ps);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

/* What the periods hold, copied out (bounded: the test's runs are small): the periods with
 * their snapshots, each thread's current period and cut, each variable's release clock. */
#define PV_PERIODS 64
#define PV_POOL 512
#define PV_THREADS 4
#define PV_VARS 2 /* variables 100 and 101 */
typedef struct periods_view {
  size_t n, pool_len;
  atom__period p[PV_PERIODS];
  uint32_t pool[PV_POOL];
  uint32_t cur[PV_THREADS], cut[PV_THREADS];
  uint32_t rel_len[PV_VARS], rel[PV_VARS][PV_THREADS];
} periods_view;

static void periods_view_of(const atom__periods *ps, periods_view *v) {
  memset(v, 0, sizeof *v);
  ck_assert_uint_le(ps->n, PV_PERIODS);
  ck_assert_uint_le(ps->pool_len, PV_POOL);
  v->n = ps->n;
  v->pool_len = ps->pool_len;
  if (ps->n) memcpy(v->p, ps->p, ps->n * sizeof *ps->p);
  if (ps->pool_len) memcpy(v->pool, ps->pool, ps->pool_len * sizeof *ps->pool);
  for (uint32_t t = 0; t < PV_THREADS; t++) {
    v->cur[t] = t < ps->cur_cap ? ps->cur[t] : ATOM__PERIOD_NONE;
    v->cut[t] = t < ps->cut_cap ? ps->cut[t] : 0;
  }
  for (uint32_t i = 0; i < PV_VARS; i++) {
    uint32_t x = 100 + i;
    if (x >= ps->rel_cap) continue;
    ck_assert_uint_le(ps->rel[x].len, PV_THREADS);
    v->rel_len[i] = ps->rel[x].len;
    if (ps->rel[x].len) memcpy(v->rel[i], ps->rel[x].vc, ps->rel[x].len * sizeof *v->rel[i]);
  }
}

static void periods_view_eq(const periods_view *a, const periods_view *b) {
  ck_assert_uint_eq(a->n, b->n);
  ck_assert_uint_eq(a->pool_len, b->pool_len);
  ck_assert_int_eq(memcmp(a, b, sizeof *a), 0); /* both zeroed first: padding compares equal */
}

/* The view after a call that failed (now) is the one before it, except that a thread without a
 * period may have got its first one, a root, as atom__periods_of would have made it (release,
 * acquire and fork take the current period of their thread first): the run's results show
 * whether that is harmless. */
static void periods_view_unchanged(const periods_view *now, const periods_view *before) {
  periods_view b = *before;
  for (uint32_t t = 0; t < PV_THREADS; t++) {
    if (before->cur[t] != ATOM__PERIOD_NONE || now->cur[t] == ATOM__PERIOD_NONE) continue;
    uint32_t q = now->cur[t];
    ck_assert_uint_ge(q, before->n);
    ck_assert_uint_lt(q, now->n);
    ck_assert_uint_eq(now->p[q].thread, t);
    ck_assert_uint_eq(now->p[q].ordinal, 0);
    b.cur[t] = q;
  }
  for (size_t i = before->n; i < now->n; i++) {
    ck_assert_uint_eq(b.cur[now->p[i].thread], i); /* only such roots are new */
    b.p[i] = now->p[i];
  }
  b.n = now->n;
  memcpy(b.pool + before->pool_len, now->pool + before->pool_len,
         (now->pool_len - before->pool_len) * sizeof *b.pool);
  b.pool_len = now->pool_len;
  periods_view_eq(now, &b);
}

/* Step k of the run: t = k % 3 alternately releases and acquires variable 100 or 101, then
 * asks its period; step 5 forks thread 3 and step 9 joins it. *out: what the step returns
 * (the period, with whether the acquire moved in bit 31). */
#define PERIODS_STEPS 12
static int periods_step(atom__periods *ps, uint32_t k, int part, uint32_t *out) {
  uint32_t t = k % 3, x = 100 + k % 2;
  int moved = 0, rc;
  if (part == 0) {
    if (k == 5) return atom__periods_fork(ps, t, 3);
    if (k == 9) return atom__periods_join(ps, t, 3);
    return 0;
  }
  if (part == 1) {
    rc = k % 2 ? atom__periods_acquire(ps, t, x, &moved) : atom__periods_release(ps, t, x);
    *out = (uint32_t)moved << 31;
    return rc;
  }
  uint32_t p = 0;
  rc = atom__periods_of(ps, t, &p);
  *out |= p;
  return rc;
}

/* Every allocation of the periods may fail. The run without failure makes `calls` requests;
 * the run failing request n (1 <= n <= calls) fails exactly once, with ATOM_ENOMEM, and leaves
 * everything as it was (the view before the call, but for a first period made on demand:
 * periods_view_unchanged); its retry succeeds and from then on the
 * run is the run that never failed: the same results and the same state after every step (a
 * clock half-updated by the failed call would show there). Nothing leaks. */
START_TEST(periods_sync_out_of_memory) {
  periods_view ref[PERIODS_STEPS], before, now;
  uint32_t ref_out[PERIODS_STEPS];
  long calls = 0;
  long failures = 0;
  for (long at = 0; at <= calls; at++) { /* at 0: the reference run, without failures */
    tu_failing f = tu_failing_at(at);
    atom__allocator al;
    tu_failing_allocator(&al, &f);
    atom__mem m;
    atom__mem_init(&m, &al);
    atom__periods ps;
    atom__periods_init(&ps, &m);
    long failed = 0;
    for (uint32_t k = 0; k < PERIODS_STEPS; k++) {
      uint32_t out = 0;
      for (int part = 0; part < 3; part++) {
        periods_view_of(&ps, &before);
        int rc = periods_step(&ps, k, part, &out);
        if (rc) {
          ck_assert_int_eq(rc, ATOM_ENOMEM);
          ck_assert_int_ne(at, 0);
          failed++;
          periods_view_of(&ps, &now);
          periods_view_unchanged(&now, &before);
          rc = periods_step(&ps, k, part, &out);
        }
        ck_assert_int_eq(rc, 0);
      }
      periods_view_of(&ps, &now);
      if (at == 0) {
        ref[k] = now;
        ref_out[k] = out;
      } else {
        ck_assert_uint_eq(out, ref_out[k]);
        periods_view_eq(&now, &ref[k]);
      }
    }
    if (at == 0) calls = f.calls;
    else ck_assert_int_eq(failed, 1); /* request `at` was made, and failed once */
    failures += failed;
    atom__periods_destroy(&ps);
    ck_assert_uint_eq(m.bytes, 0);
    ck_assert_int_eq(f.live, 0); /* and the allocator saw every block freed */
  }
  ck_assert_int_gt(calls, 5);
  ck_assert_int_eq(failures, calls);
}
END_TEST

/* ---- union-find, rotation, uthash, report builder ---------------------------------------- */

START_TEST(unionfind_classes) {
  uint32_t p[8];
  atom__uf_init(p, 8);
  atom__uf_union(p, 0, 1);
  atom__uf_union(p, 2, 3);
  ck_assert_uint_eq(atom__uf_union(p, 1, 3), atom__uf_find(p, 0));
  for (uint32_t i = 0; i < 4; i++) ck_assert_uint_eq(atom__uf_find(p, i), atom__uf_find(p, 0));
  for (uint32_t i = 4; i < 8; i++) ck_assert_uint_eq(atom__uf_find(p, i), i);
}
END_TEST

START_TEST(rotate_any_size) {
  /* elements bigger than the swap buffer, and every k, against a plain copy */
  typedef struct big { uint32_t v[40]; } big;
  for (size_t n = 0; n < 7; n++)
    for (size_t k = 0; k < 2 * n + 1; k++) {
      big a[7];
      for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < 40; j++) a[i].v[j] = (uint32_t)(i * 100 + j);
      atom__rotate(a, n, sizeof a[0], k);
      for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < 40; j++) ck_assert_uint_eq(a[i].v[j], ((k + i) % n) * 100 + j);
    }
  int x[5] = {0, 1, 2, 3, 4};
  atom__rotate(x, 5, sizeof x[0], 3);
  ck_assert_int_eq(x[0], 3);
  ck_assert_int_eq(x[4], 2);
}
END_TEST

typedef struct named {
  char name[16];
  int value;
  UT_hash_handle hh;
} named;

/* Adds 200 items through f; every allocation is accounted and the table freed to the last
 * byte. @return the allocation requests made; *refused: the item whose add said ATOM_ENOMEM
 * (and was left out, findable no more), or -1 (at most one add may fail: f fails once). */
static long hashtab_fill(tu_failing *f, int *refused) {
  atom__allocator al;
  tu_failing_allocator(&al, f);
  atom__mem m;
  atom__mem_init(&m, &al);
  hash_mem = &m;
  static named items[200];
  named *table = NULL, *found;
  *refused = -1;
  for (int i = 0; i < 200; i++) {
    snprintf(items[i].name, sizeof items[i].name, "v%d", i);
    items[i].value = i;
    int rc;
    ATOM__HASH_TRY(rc, HASH_ADD_STR(table, name, &items[i]));
    if (rc) {
      ck_assert_int_eq(rc, ATOM_ENOMEM);
      ck_assert_int_eq(*refused, -1);
      *refused = i;
    }
  }
  ck_assert_int_eq((int)HASH_COUNT(table), *refused < 0 ? 200 : 199);
  for (int i = 0; i < 200; i++) {
    HASH_FIND_STR(table, items[i].name, found);
    if (i == *refused)
      ck_assert_ptr_null(found);
    else
      ck_assert_ptr_eq(found, &items[i]);
  }
  ck_assert_uint_gt(m.bytes, 0);
  HASH_CLEAR(hh, table);
  ck_assert_uint_eq(m.bytes, 0);
  ck_assert_int_eq(f->live, 0);
  return f->calls;
}

/* Each allocation the table makes (its creation, every growth of its buckets), failed in turn:
 * no crash, that one add says ATOM_ENOMEM, the table stays whole. The allocations are counted
 * on a run without failures, so the test does not depend on when uthash decides to grow. */
START_TEST(hashtab_accounts_and_survives_oom) {
  tu_failing f = tu_failing_at(0);
  int refused;
  long calls = hashtab_fill(&f, &refused);
  ck_assert_int_eq(refused, -1);
  ck_assert_int_gt(calls, 1); /* made, and grown at least once */
  for (long at = 1; at <= calls; at++) {
    f = tu_failing_at(at);
    hashtab_fill(&f, &refused);
    ck_assert_msg(refused >= 0, "allocation %ld of %ld failed and no add said so", at, calls);
  }
}
END_TEST

START_TEST(report_build_dedups_events) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__report_build rb;
  atom__rb_init(&rb, &m);
  atom_ev r1 = {ATOM_READ, 0, 5, 0, 10, 1}, w2 = {ATOM_WRITE, 1, 5, 0, 11, 2},
          r3 = {ATOM_READ, 0, 6, 0, 12, 3};
  ck_assert_int_eq(atom__rb_edge(&rb, &r1, &w2, 0), 0);
  ck_assert_int_eq(atom__rb_edge(&rb, &w2, &r3, ATOM_EDGE_CLOSING), 0);
  ck_assert_uint_eq(rb.n_events, 3); /* w2 ends one edge and starts the next: once */
  ck_assert_uint_eq(rb.edges[1].from, 1);
  ck_assert_uint_eq(rb.edges[1].to, 2);
  ck_assert_uint_eq(rb.edges[1].flags, ATOM_EDGE_CLOSING);
  ck_assert_int_eq(atom__rb_vars_of_events(&rb, 16), 0);
  ck_assert_uint_eq(rb.n_vars, 2);
  atom__rb_reset(&rb);
  ck_assert_uint_eq(rb.n_events, 0);
  atom__rb_free(&rb);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

/* Events laid out apart keep the positions a template names them by; edges by position. */
START_TEST(report_build_edges_by_position) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__report_build rb;
  atom__rb_init(&rb, &m);
  atom_ev a = {ATOM_ACQUIRE, 0, 1, 0, 10, 1}, h = {ATOM_ACQUIRE, 1, 1, 0, 11, 2};
  uint32_t pa, ph, pa2;
  ck_assert_int_eq(atom__rb_event_apart(&rb, &a, &pa), 0);
  ck_assert_int_eq(atom__rb_event_apart(&rb, &h, &ph), 0);
  ck_assert_int_eq(atom__rb_event_apart(&rb, &a, &pa2), 0); /* the same index, kept apart */
  ck_assert_uint_eq(rb.n_events, 3);
  ck_assert_uint_eq(pa2, 2);
  ck_assert_int_eq(atom__rb_edge_at(&rb, pa2, ph, ATOM_EDGE_CLOSING), 0);
  ck_assert_uint_eq(rb.n_edges, 1);
  ck_assert_uint_eq(rb.n_events, 3); /* no event added */
  ck_assert_uint_eq(rb.edges[0].from, 2);
  ck_assert_uint_eq(rb.edges[0].to, 1);
  ck_assert_uint_eq(rb.edges[0].flags, ATOM_EDGE_CLOSING);
  atom__rb_free(&rb);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

Suite *atom_test_suite_support(void) {
  Suite *s = suite_create("support");
  TCase *tc = tcase_create("support");
  tcase_add_test(tc, mem_accounting);
  tcase_add_test(tc, grow_keeps_contents_and_fails_cleanly);
  tcase_add_test(tc, u64map_put_get_replace_grow);
  tcase_add_test(tc, u64map_out_of_memory_leaves_it_unchanged);
  tcase_add_test(tc, idindex_finds_added_ids_through_equal_tags);
  tcase_add_test(tc, idindex_out_of_memory_leaves_it_unchanged);
  tcase_add_test(tc, idindex_remove_keeps_the_others_found);
  tcase_add_test(tc, periods_release_acquire);
  tcase_add_test(tc, periods_memory_linear_in_threads);
  tcase_add_test(tc, periods_sync_out_of_memory);
  tcase_add_test(tc, unionfind_classes);
  tcase_add_test(tc, rotate_any_size);
  tcase_add_test(tc, hashtab_accounts_and_survives_oom);
  tcase_add_test(tc, report_build_dedups_events);
  tcase_add_test(tc, report_build_edges_by_position);
  suite_add_tcase(s, tc);
  return s;
}
