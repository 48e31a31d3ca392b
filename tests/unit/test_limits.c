/* The documented limits (doc/limits.md): each is handled or refused with ATOM_ELIMIT and a clear
 * message, with every built-in checker attached. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/session.h" /* to lower the key limit and to start near 2^32 event indices */
#include "util.h"

Suite *atom_test_suite_limits(void);

static int under_valgrind(void) { return getenv("ATOM_UNDER_VALGRIND") != NULL; }

static atom_session *all_checkers(void) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  for (size_t i = 0; atom_checker_builtin(i); i++)
    ck_assert_int_eq(atom_session_attach(s, atom_checker_builtin(i)->name), 0);
  return s;
}

/* Accept success or a documented limit, nothing else. */
static void ok_or_limit(int rc) {
  ck_assert_msg(rc == 0 || rc == ATOM_ELIMIT, "unexpected %s: %s", atom_error_name(rc),
                atom_last_error());
}

START_TEST(thread_keys_2_pow_20) {
  /* The core handles 2^20 thread keys; aerodrome refuses threads beyond its max_threads
   * (vector clocks grow with the square of the thread count), the other checkers handle them. */
  uint64_t n = under_valgrind() ? 1u << 14 : 1u << 20;
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "velodrome"), 0);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome:max_threads=1000"), 0);
  for (uint64_t t = 0; t < n; t++) ck_assert_int_eq(atom_write(s, 0x100000000ULL + t, 7, t), 0);
  /* aerodrome stopped at the first thread beyond the limit, and says so */
  atom_checker_status cs = {.version = ATOM_CHECKER_STATUS_VERSION};
  ck_assert_int_eq(atom_checker_status_get(s, 1, &cs), 0);
  ck_assert_uint_eq(cs.state, ATOM_CHECKER_DISABLED);
  ck_assert_uint_eq(cs.stopped_at, 1000);
  ck_assert_int_eq(cs.error, ATOM_ELIMIT);
  ck_assert_ptr_nonnull(strstr(cs.reason, "max_threads=1000"));
  ck_assert_int_eq(atom_checker_status_get(s, 0, &cs), 0);
  ck_assert_uint_eq(cs.state, ATOM_CHECKER_COMPLETE);
  ck_assert_int_eq(atom_finish(s), ATOM_ELIMIT);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "checker aerodrome stopped checking at event 1000"));
  atom_session_stats st = {.version = ATOM_SESSION_STATS_VERSION};
  ck_assert_int_eq(atom_session_stats_get(s, &st), 0);
  ck_assert_uint_eq(st.threads, n);
  ck_assert_uint_eq(st.events, n);
  atom_session_free(s);
  /* every built-in checker: success or a clear limit */
  s = all_checkers();
  for (uint64_t t = 0; t < (under_valgrind() ? 2000u : 40000u); t++) {
    ok_or_limit(atom_begin(s, t, 0));
    ok_or_limit(atom_write(s, t, t % 3, 0));
    ok_or_limit(atom_end(s, t, 0));
  }
  ok_or_limit(atom_finish(s));
  atom_session_free(s);
}
END_TEST

START_TEST(out_of_memory_marks_the_checker_disabled) {
  /* Fail each allocation of a small run in turn (only that one): a checker that loses its
   * allocation is DISABLED with ATOM_ENOMEM and the event index, in on_event (aerodrome) and in
   * the end-of-run analysis (commit-node), and atom_finish says so. */
  size_t disabled[2] = {0, 0};
  for (long n = 1; n < 400; n++) {
    tu_failing f = tu_failing_at(n);
    atom_options o;
    tu_failing_options(&o, &f);
    atom_session *s = NULL;
    if (atom_session_new(&s, &o) != 0) continue;
    if (atom_session_attach(s, "aerodrome") != 0 || atom_session_attach(s, "commit-node") != 0) {
      atom_session_free(s);
      continue;
    }
    uint64_t pushed = 0;
    for (uint64_t i = 0; i < 40; i++) {
      atom_event ev = {ATOM_WRITE, 0, i % 5, i % 3, i};
      int rc = atom_push(s, &ev);
      if (rc == ATOM_ENOMEM) rc = atom_push(s, &ev); /* the session changed nothing: again */
      ck_assert_int_eq(rc, 0);
      pushed++;
    }
    int frc = atom_finish(s);
    int any = 0;
    for (size_t c = 0; c < 2; c++) {
      atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
      ck_assert_int_eq(atom_checker_status_get(s, c, &st), 0);
      if (st.state == ATOM_CHECKER_COMPLETE) continue;
      ck_assert_uint_eq(st.state, ATOM_CHECKER_DISABLED);
      ck_assert_int_eq(st.error, ATOM_ENOMEM);
      ck_assert_str_eq(st.reason, "out of memory");
      ck_assert_uint_le(st.stopped_at, pushed);
      disabled[c]++;
      any = 1;
    }
    if (any) {
      ck_assert_int_eq(frc, ATOM_ENOMEM);
      ck_assert_ptr_nonnull(strstr(atom_last_error(), "ran out of memory at event"));
    }
    atom_session_free(s);
    ck_assert_int_eq(f.live, 0);
    if (f.calls < n) break; /* every allocation of the run was failed once */
  }
  ck_assert_uint_gt(disabled[0], 0);
  ck_assert_uint_gt(disabled[1], 0);
}
END_TEST

START_TEST(distinct_keys_beyond_the_limit) {
  /* 2^32 distinct variable keys cannot all be interned (dense ids are 32-bit): the limit is
   * ATOM__MAX_IDS per space. It is checked here with a lowered limit. Keys themselves may be
   * any 64-bit value. */
  atom_session *s = all_checkers();
  s->id_limit = 1000;
  for (uint64_t v = 0; v < 1000; v++) ck_assert_int_eq(atom_write(s, 1, UINT64_MAX - v, 0), 0);
  ck_assert_int_eq(atom_write(s, 1, 5, 0), ATOM_ELIMIT);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "more than 1000 distinct variable keys"));
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "event 1000"));
  ck_assert_int_eq(atom_write(s, 1, UINT64_MAX, 0), 0); /* known keys still work */
  ck_assert_int_eq(atom_acquire(s, 1, 9, 0), 0);        /* other spaces have their own */
  ck_assert_int_eq(atom_finish(s), 0);
  atom_session_free(s);
}
END_TEST

START_TEST(a_million_locks_held_at_once) {
  uint64_t n = under_valgrind() ? 20000 : 1000000;
  atom_session *s = all_checkers();
  ok_or_limit(atom_begin(s, 1, 0));
  for (uint64_t l = 0; l < n; l++) ok_or_limit(atom_acquire(s, 1, l, l));
  ok_or_limit(atom_write(s, 1, 1, 0));
  ck_assert_int_eq(atom_acquire(s, 2, n / 2, 0), ATOM_EHELD);
  for (uint64_t l = n; l-- > 0;) ok_or_limit(atom_release(s, 1, l, l));
  ok_or_limit(atom_end(s, 1, 0));
  ok_or_limit(atom_finish(s));
  atom_session_stats st = {.version = ATOM_SESSION_STATS_VERSION};
  ck_assert_int_eq(atom_session_stats_get(s, &st), 0);
  ck_assert_uint_eq(st.locks, n);
  ck_assert_uint_eq(st.rejected, 1);
  atom_session_free(s);
}
END_TEST

START_TEST(nesting_depth_of_a_million) {
  uint64_t n = under_valgrind() ? 20000 : 1000000;
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
  for (uint64_t i = 0; i < n; i++) ck_assert_int_eq(atom_begin(s, 1, i), 0);
  for (uint64_t i = 0; i < n; i++) ck_assert_int_eq(atom_acquire(s, 1, 5, i), 0); /* re-entrant */
  ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  for (uint64_t i = 0; i < n; i++) ck_assert_int_eq(atom_release(s, 1, 5, i), 0);
  for (uint64_t i = 0; i < n; i++) ck_assert_int_eq(atom_end(s, 1, i), 0);
  ck_assert_int_eq(atom_end(s, 1, 0), ATOM_EENDNOBEGIN);
  /* only the outermost pairs reach checkers */
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 5);
  atom_session_free(s);
  s = all_checkers();
  for (uint64_t i = 0; i < n; i++) ok_or_limit(atom_begin(s, 1, i));
  ok_or_limit(atom_write(s, 1, 1, 0));
  ok_or_limit(atom_finish(s)); /* closes the whole nest with one END */
  atom_session_free(s);
}
END_TEST

START_TEST(event_indices_past_2_pow_32) {
  atom_session *s = all_checkers();
  s->next_index = (1ULL << 32) - 3; /* as if 2^32 - 3 events had been pushed */
  const uint64_t base = s->next_index;
  ck_assert_int_eq(atom_begin(s, 1, 0), 0);
  ck_assert_int_eq(atom_begin(s, 2, 1), 0);
  ck_assert_int_eq(atom_write(s, 1, 10, 2), 0);
  ck_assert_int_eq(atom_read(s, 2, 10, 3), 0); /* index 2^32 */
  ck_assert_int_eq(atom_write(s, 2, 11, 4), 0);
  ck_assert_int_eq(atom_read(s, 1, 11, 5), 0);
  ck_assert_int_eq(atom_end(s, 1, 6), 0);
  ck_assert_int_eq(atom_end(s, 2, 7), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  int seen = 0;
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const atom_report *r = atom_report_get(s, i);
    if (strcmp(atom_report_checker(r), "aerodrome") == 0) {
      ck_assert_uint_eq(atom_report_event_index(r), base + 5);
      uint64_t bi;
      ck_assert_int_eq(atom_report_txn(r, 0, NULL, &bi, NULL), 0);
      ck_assert_uint_eq(bi, base);
      seen++;
    }
  }
  ck_assert_int_eq(seen, 1);
  ck_assert_int_eq(atom_write(s, 1, 10, 0), ATOM_ESTATE);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "event 4294967301"));
  atom_session_free(s);
}
END_TEST

Suite *atom_test_suite_limits(void) {
  Suite *s = suite_create("limits");
  TCase *tc = tcase_create("limits");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, thread_keys_2_pow_20);
  tcase_add_test(tc, out_of_memory_marks_the_checker_disabled);
  tcase_add_test(tc, distinct_keys_beyond_the_limit);
  tcase_add_test(tc, a_million_locks_held_at_once);
  tcase_add_test(tc, nesting_depth_of_a_million);
  tcase_add_test(tc, event_indices_past_2_pow_32);
  suite_add_tcase(s, tc);
  return s;
}
