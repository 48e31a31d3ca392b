/* lib/support: the accounted allocator, growable arrays and the u64 hash map. (Vector clocks
 * and the digraph are tested with the checkers that use them.) */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "support/mem.h"
#include "support/u64map.h"

Suite *atom_test_suite_support(void);

typedef struct failing {
  long calls, fail_at;
} failing;

static void *f_malloc(size_t n, void *p) {
  failing *f = p;
  return ++f->calls == f->fail_at ? NULL : malloc(n);
}
static void *f_realloc(void *ptr, size_t n, void *p) {
  failing *f = p;
  return ++f->calls == f->fail_at ? NULL : realloc(ptr, n);
}
static void f_free(void *ptr, void *p) {
  (void)p;
  free(ptr);
}

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
  failing f = {0, 0};
  atom__allocator al = {f_malloc, f_realloc, f_free, &f};
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
  f.fail_at = f.calls + 1;
  size_t old = cap;
  ck_assert_int_eq(ATOM__GROW(&m, arr, cap, old + 1), -2 /* ATOM_ENOMEM */);
  ck_assert_uint_eq(cap, old);
  ck_assert_int_eq(arr[999], 999);
  atom__mem_free(&m, arr, cap * sizeof *arr);
  ck_assert_uint_eq(m.bytes, 0);
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
  failing f = {0, 0};
  atom__allocator al = {f_malloc, f_realloc, f_free, &f};
  atom__mem m;
  atom__mem_init(&m, &al);
  atom__u64map map = {0};
  uint64_t k = 0;
  for (; map.count < 8; k++) ck_assert_int_eq(atom__u64map_put(&map, &m, k, (uint32_t)k), 0);
  f.fail_at = f.calls + 1; /* the next growth fails */
  int err = 0;
  for (; !err; k++) err = atom__u64map_put(&map, &m, k, (uint32_t)k);
  ck_assert_int_eq(err, -2);
  uint32_t v;
  ck_assert_int_eq(atom__u64map_get(&map, k - 1, &v), 0); /* the failed key is absent */
  for (uint64_t j = 0; j < k - 1; j++) {
    ck_assert_int_eq(atom__u64map_get(&map, j, &v), 1);
    ck_assert_uint_eq(v, j);
  }
  atom__u64map_free(&map, &m);
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
  suite_add_tcase(s, tc);
  return s;
}
