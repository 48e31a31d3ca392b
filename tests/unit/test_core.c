/* The core: options, sessions, attach, normalization, every ill-formed case, dispatch by
 * mask, reports (dedup, counts, callback, cap), names, sets, thread safety, allocators. */
#include <check.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

Suite *atom_test_suite_core(void);

static atom_session *recorder_session(atom_options *opt) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, opt), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
  return s;
}

static void ca_free_any(void *ptr, void *payload) {
  (void)payload;
  free(ptr);
}

START_TEST(options_and_new) {
  atom_options o;
  ck_assert_int_eq(atom_options_init(NULL, ATOM_OPTIONS_VERSION), ATOM_EINVAL);
  ck_assert_int_eq(atom_options_init(&o, 99), ATOM_EINVAL);
  ck_assert_int_eq(atom_options_init(&o, ATOM_OPTIONS_VERSION), 0);
  ck_assert_uint_eq(o.version, ATOM_OPTIONS_VERSION);
  ck_assert_int_eq(atom_session_new(NULL, &o), ATOM_EINVAL);
  atom_session *s = (atom_session *)1;
  o.flags = 0x100;
  ck_assert_int_eq(atom_session_new(&s, &o), ATOM_EINVAL);
  ck_assert_ptr_null(s);
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  o.malloc_fn = NULL;
  o.free_fn = ca_free_any;
  ck_assert_int_eq(atom_session_new(&s, &o), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "allocator"));
  o.version = 7;
  ck_assert_int_eq(atom_session_new(&s, &o), ATOM_EINVAL);
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  atom_session_free(s);
  atom_session_free(NULL);
}
END_TEST

START_TEST(strings_for_codes_and_kinds) {
  ck_assert_str_eq(atom_strerror(0), "success");
  ck_assert_str_eq(atom_strerror(ATOM_ENOMEM), "out of memory");
  ck_assert_str_eq(atom_strerror(12345), "unknown error");
  ck_assert_str_eq(atom_error_name(ATOM_EENDNOBEGIN), "ATOM_EENDNOBEGIN");
  ck_assert_ptr_null(atom_error_name(-999));
  for (int e = -1; atom_error_name(e); e--) ck_assert_str_ne(atom_strerror(e), "unknown error");
  ck_assert_str_eq(atom_kind_name(ATOM_READ), "read");
  ck_assert_str_eq(atom_kind_name(ATOM_COMMIT), "commit");
  ck_assert_ptr_null(atom_kind_name(0));
  ck_assert_ptr_null(atom_kind_name(11));
  ck_assert_str_eq(atom_version(), ATOM_VERSION_STRING);
  ck_assert_uint_eq(atom_version_number(), ATOM_VERSION_NUMBER);
  /* Pinned values (ABI). */
  ck_assert_int_eq(ATOM_READ, 1);
  ck_assert_int_eq(ATOM_COMMIT, 10);
  ck_assert_int_eq(ATOM_EINVAL, -1);
  ck_assert_int_eq(ATOM_ECHECKER, -17);
  ck_assert_int_eq(ATOM_EREENTRANT, -18);
  ck_assert_str_eq(atom_error_name(ATOM_EREENTRANT), "ATOM_EREENTRANT");
}
END_TEST

START_TEST(attach_rules) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "no-such-checker"), ATOM_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "no-such-checker"));
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, "bogus=1"), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "bogus"));
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, "note=a,note=b"),
                   ATOM_EINVAL);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, "=x"), ATOM_EINVAL);
  ck_assert_int_eq(atom_session_attach(s, "null:x=1"), ATOM_EINVAL);
  atom_checker bad = tu_recorder_checker;
  bad.abi_version = 99;
  ck_assert_int_eq(atom_session_attach_checker(s, &bad, NULL), ATOM_EINVAL);
  bad = tu_recorder_checker;
  bad.event_mask = 1u << 20;
  ck_assert_int_eq(atom_session_attach_checker(s, &bad, NULL), ATOM_EINVAL);
  ck_assert_uint_eq(atom_checker_count(s), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, "note=hello"), 0);
  ck_assert_int_eq(atom_session_attach(s, "null"), 0);
  ck_assert_uint_eq(atom_checker_count(s), 2);
  ck_assert_str_eq(atom_checker_name(s, 0), "recorder");
  ck_assert_str_eq(atom_checker_name(s, 1), "null");
  ck_assert_ptr_null(atom_checker_name(s, 2));
  ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  ck_assert_int_eq(atom_session_attach(s, "null"), ATOM_ESTATE);
  atom_session_free(s);
  /* The built-in table lists at least aerodrome, velodrome and null; aliases resolve. */
  int seen = 0;
  for (size_t i = 0; atom_checker_builtin(i); i++) {
    const char *n = atom_checker_builtin(i)->name;
    seen += !strcmp(n, "aerodrome") + !strcmp(n, "velodrome") + !strcmp(n, "null");
    ck_assert_ptr_nonnull(atom_checker_builtin(i)->summary);
  }
  ck_assert_int_eq(seen, 3);
  s = tu_session((const char *[]){"vector-clock", "graph", NULL});
  ck_assert_str_eq(atom_checker_name(s, 0), "aerodrome");
  ck_assert_str_eq(atom_checker_name(s, 1), "velodrome");
  atom_session_free(s);
}
END_TEST

START_TEST(normalization_nesting_and_reentrancy) {
  atom_session *s = recorder_session(NULL);
  ck_assert_int_eq(atom_begin(s, 1, 10), 0);   /* 0: forwarded */
  ck_assert_int_eq(atom_begin(s, 1, 11), 0);   /* 1: inner, swallowed */
  ck_assert_int_eq(atom_acquire(s, 1, 5, 0), 0); /* 2: forwarded */
  ck_assert_int_eq(atom_acquire(s, 1, 5, 0), 0); /* 3: re-entrant, swallowed */
  ck_assert_int_eq(atom_write(s, 1, 7, 12), 0);  /* 4 */
  ck_assert_int_eq(atom_release(s, 1, 5, 0), 0); /* 5: inner, swallowed */
  ck_assert_int_eq(atom_release(s, 1, 5, 0), 0); /* 6: forwarded */
  ck_assert_int_eq(atom_end(s, 1, 0), 0);      /* 7: inner, swallowed */
  ck_assert_int_eq(atom_end(s, 1, 0), 0);      /* 8: forwarded */
  tu_recorder *r = tu_recorder_of(s, 0);
  ck_assert_uint_eq(r->count, 5);
  const uint32_t kinds[] = {ATOM_BEGIN, ATOM_ACQUIRE, ATOM_WRITE, ATOM_RELEASE, ATOM_END};
  const uint64_t idx[] = {0, 2, 4, 6, 8};
  for (size_t i = 0; i < 5; i++) {
    ck_assert_uint_eq(r->events[i].kind, kinds[i]);
    ck_assert_uint_eq(r->events[i].index, idx[i]);
    ck_assert_uint_eq(r->events[i].thread, 0);
  }
  ck_assert_uint_eq(r->events[0].loc, 10);
  ck_assert_uint_eq(r->events[2].loc, 12);
  atom_session_free(s);
}
END_TEST

START_TEST(finish_closes_open_transactions_in_thread_order) {
  atom_session *s = recorder_session(NULL);
  ck_assert_int_eq(atom_begin(s, 30, 0), 0); /* thread 30 -> id 0 */
  ck_assert_int_eq(atom_begin(s, 20, 0), 0); /* thread 20 -> id 1 */
  ck_assert_int_eq(atom_begin(s, 20, 0), 0); /* nested */
  ck_assert_int_eq(atom_acquire(s, 30, 1, 0), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_int_eq(atom_finish(s), 0); /* idempotent */
  tu_recorder *r = tu_recorder_of(s, 0);
  ck_assert_int_eq(r->finished, 1);
  ck_assert_uint_eq(r->count, 5);
  ck_assert_uint_eq(r->events[3].kind, ATOM_END);
  ck_assert_uint_eq(r->events[3].thread, 0);
  ck_assert_uint_eq(r->events[3].index, 4);
  ck_assert_uint_eq(r->events[3].flags, ATOM_EV_SYNTHETIC);
  ck_assert_uint_eq(r->events[4].kind, ATOM_END);
  ck_assert_uint_eq(r->events[4].thread, 1);
  ck_assert_uint_eq(r->events[4].index, 5);
  /* nothing else is released, and the session is closed for pushes */
  ck_assert_int_eq(atom_write(s, 30, 1, 0), ATOM_ESTATE);
  atom_session_free(s);
}
END_TEST

START_TEST(join_closes_the_childs_open_transaction) {
  atom_session *s = recorder_session(NULL);
  ck_assert_int_eq(atom_fork(s, 1, 2, 0), 0);
  ck_assert_int_eq(atom_begin(s, 2, 0), 0);
  ck_assert_int_eq(atom_write(s, 2, 9, 0), 0);
  ck_assert_int_eq(atom_join(s, 1, 2, 0), 0); /* index 3; the child's END comes first */
  ck_assert_int_eq(atom_write(s, 1, 9, 0), 0); /* index 4: later indices still count pushes */
  tu_recorder *r = tu_recorder_of(s, 0);
  ck_assert_uint_eq(r->count, 6);
  ck_assert_uint_eq(r->events[3].kind, ATOM_END);
  ck_assert_uint_eq(r->events[3].thread, 1);
  ck_assert_uint_eq(r->events[3].index, 3);
  ck_assert_uint_eq(r->events[3].flags, ATOM_EV_SYNTHETIC);
  ck_assert_uint_eq(r->events[4].kind, ATOM_JOIN);
  ck_assert_uint_eq(r->events[4].index, 3);
  ck_assert_uint_eq(r->events[4].target, 1);
  ck_assert_uint_eq(r->events[5].index, 4);
  atom_session_free(s);
}
END_TEST

/* One ill-formed case: push the preamble, then the bad event (expect code and a message naming
 * its index), then a valid write that must be forwarded with the next index. */
static void ill_formed_case(const atom_event *pre, size_t n_pre, atom_event bad, int code,
                            const char *words) {
  atom_session *s = recorder_session(NULL);
  for (size_t i = 0; i < n_pre; i++) ck_assert_int_eq(atom_push(s, &pre[i]), 0);
  tu_recorder *r = tu_recorder_of(s, 0);
  size_t before = r->count;
  ck_assert_int_eq(atom_push(s, &bad), code);
  char expect[64];
  snprintf(expect, sizeof expect, "event %zu:", n_pre);
  ck_assert_msg(strstr(atom_last_error(), expect), "message \"%s\" lacks \"%s\"",
                atom_last_error(), expect);
  ck_assert_msg(strstr(atom_last_error(), words), "message \"%s\" lacks \"%s\"",
                atom_last_error(), words);
  ck_assert_uint_eq(r->count, before); /* dropped */
  ck_assert_int_eq(atom_write(s, 77, 1, 0), 0);
  ck_assert_uint_eq(r->count, before + 1);
  ck_assert_uint_eq(r->events[before].index, n_pre + 1);
  atom_session_stats st = {.version = ATOM_SESSION_STATS_VERSION};
  ck_assert_int_eq(atom_session_stats_get(s, &st), 0);
  ck_assert_uint_eq(st.rejected, 1);
  ck_assert_uint_eq(st.events, n_pre + 2);
  ck_assert_int_eq(atom_finish(s), 0);
  atom_session_free(s);
}

#define EV(k, t, x) ((atom_event){(k), 0, (t), (x), 0})

START_TEST(ill_formed_end_without_begin) {
  ill_formed_case(NULL, 0, EV(ATOM_END, 1, 0), ATOM_EENDNOBEGIN, "without a matching BEGIN");
  atom_event pre[] = {EV(ATOM_BEGIN, 1, 0), EV(ATOM_END, 1, 0)};
  ill_formed_case(pre, 2, EV(ATOM_END, 1, 0), ATOM_EENDNOBEGIN, "END");
}
END_TEST

START_TEST(ill_formed_release_not_held) {
  ill_formed_case(NULL, 0, EV(ATOM_RELEASE, 1, 5), ATOM_ENOTHELD, "does not hold");
  atom_event pre[] = {EV(ATOM_ACQUIRE, 2, 5)};
  ill_formed_case(pre, 1, EV(ATOM_RELEASE, 1, 5), ATOM_ENOTHELD, "lock 5");
}
END_TEST

START_TEST(ill_formed_acquire_held_by_other) {
  atom_event pre[] = {EV(ATOM_ACQUIRE, 2, 5)};
  ill_formed_case(pre, 1, EV(ATOM_ACQUIRE, 1, 5), ATOM_EHELD, "held by another thread");
}
END_TEST

START_TEST(ill_formed_event_of_joined_thread) {
  atom_event pre[] = {EV(ATOM_FORK, 1, 2), EV(ATOM_WRITE, 2, 3), EV(ATOM_JOIN, 1, 2)};
  ill_formed_case(pre, 3, EV(ATOM_READ, 2, 3), ATOM_EJOINED, "already joined");
}
END_TEST

START_TEST(ill_formed_fork_and_join) {
  atom_event pre[] = {EV(ATOM_WRITE, 2, 3)};
  ill_formed_case(pre, 1, EV(ATOM_FORK, 1, 2), ATOM_EFORK, "FORK must precede");
  ill_formed_case(NULL, 0, EV(ATOM_FORK, 1, 1), ATOM_EFORK, "itself");
  ill_formed_case(NULL, 0, EV(ATOM_JOIN, 1, 1), ATOM_EJOIN, "itself");
  atom_event pre2[] = {EV(ATOM_FORK, 1, 2), EV(ATOM_JOIN, 1, 2)};
  ill_formed_case(pre2, 2, EV(ATOM_JOIN, 1, 2), ATOM_EJOIN, "already joined");
}
END_TEST

START_TEST(ill_formed_kind_and_flags) {
  ill_formed_case(NULL, 0, EV(0, 1, 0), ATOM_EKIND, "kind 0");
  ill_formed_case(NULL, 0, EV(11, 1, 0), ATOM_EKIND, "kind 11");
  atom_event flagged = {ATOM_WRITE, 4, 1, 1, 0};
  ill_formed_case(NULL, 0, flagged, ATOM_EKIND, "flags");
  /* ACQUIRE only on a READ, RELEASE only on a WRITE, nothing else anywhere */
  const atom_event wrong[] = {
      {ATOM_WRITE, ATOM_FLAG_ACQUIRE, 1, 1, 0},
      {ATOM_READ, ATOM_FLAG_RELEASE, 1, 1, 0},
      {ATOM_READ, ATOM_FLAG_ACQUIRE | ATOM_FLAG_RELEASE, 1, 1, 0},
      {ATOM_READ, 0x100, 1, 1, 0},
      {ATOM_ACQUIRE, ATOM_FLAG_ACQUIRE, 1, 1, 0},
      {ATOM_RELEASE, ATOM_FLAG_RELEASE, 1, 1, 0},
      {ATOM_COMMIT, ATOM_FLAG_RELEASE, 1, 1, 0},
      {ATOM_BEGIN, ATOM_FLAG_ACQUIRE, 1, 0, 0},
      {ATOM_FORK, ATOM_FLAG_RELEASE, 1, 2, 0},
  };
  for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++)
    ill_formed_case(NULL, 0, wrong[i], ATOM_EKIND, "invalid flags");
}
END_TEST

START_TEST(flagged_accesses_forwarded) {
  atom_session *s = recorder_session(NULL);
  const atom_event evs[] = {
      {ATOM_WRITE, ATOM_FLAG_RELEASE, 1, 7, 11},
      {ATOM_READ, ATOM_FLAG_ACQUIRE, 2, 7, 12},
      {ATOM_READ, 0, 2, 7, 13},
      {ATOM_WRITE, 0, 2, 7, 14},
  };
  size_t done = 0;
  ck_assert_int_eq(atom_push_many(s, evs, 4, &done), 0);
  ck_assert_uint_eq(done, 4);
  tu_recorder *r = tu_recorder_of(s, 0);
  ck_assert_uint_eq(r->count, 4);
  ck_assert_uint_eq(r->events[0].kind, ATOM_WRITE);
  ck_assert_uint_eq(r->events[0].flags, ATOM_EV_RELEASE);
  ck_assert_uint_eq(r->events[0].loc, 11);
  ck_assert_uint_eq(r->events[1].kind, ATOM_READ);
  ck_assert_uint_eq(r->events[1].flags, ATOM_EV_ACQUIRE);
  ck_assert_uint_eq(r->events[1].target, r->events[0].target);
  ck_assert_uint_eq(r->events[2].flags, 0);
  ck_assert_uint_eq(r->events[3].flags, 0);
  /* the helpers push unflagged accesses */
  ck_assert_int_eq(atom_read(s, 1, 7, 0), 0);
  ck_assert_uint_eq(r->events[4].flags, 0);
  ck_assert_int_eq(atom_finish(s), 0);
  atom_session_free(s);
}
END_TEST

START_TEST(ill_formed_commit) {
  /* The recorder subscribes to COMMIT, so the session tracks store buffers. */
  ill_formed_case(NULL, 0, EV(ATOM_COMMIT, 1, 3), ATOM_ENOPENDING, "no pending write");
  atom_event fifo[] = {EV(ATOM_WRITE, 1, 3), EV(ATOM_WRITE, 1, 4)};
  ill_formed_case(fifo, 2, EV(ATOM_COMMIT, 1, 4), ATOM_ENOPENDING, "FIFO");
  atom_event fenced[] = {EV(ATOM_WRITE, 1, 3), EV(ATOM_FENCE, 1, 0)};
  ill_formed_case(fenced, 2, EV(ATOM_COMMIT, 1, 3), ATOM_ENOPENDING, "no pending write");
  atom_event locked[] = {EV(ATOM_WRITE, 1, 3), EV(ATOM_ACQUIRE, 1, 9)};
  ill_formed_case(locked, 2, EV(ATOM_COMMIT, 1, 3), ATOM_ENOPENDING, "no pending write");
  /* well-formed FIFO commits are accepted and forwarded */
  atom_session *s = recorder_session(NULL);
  for (int i = 0; i < 20; i++) ck_assert_int_eq(atom_write(s, 1, (uint64_t)i, 0), 0);
  for (int i = 0; i < 20; i++) ck_assert_int_eq(atom_commit(s, 1, (uint64_t)i, 0), 0);
  ck_assert_int_eq(atom_commit(s, 1, 0, 0), ATOM_ENOPENDING);
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 40);
  atom_session_free(s);
}
END_TEST

START_TEST(dispatch_by_mask) {
  atom_checker writes_only = tu_recorder_checker;
  writes_only.event_mask = ATOM_KIND_BIT(ATOM_WRITE);
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &writes_only, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
  ck_assert_int_eq(atom_begin(s, 1, 0), 0);
  ck_assert_int_eq(atom_read(s, 1, 2, 0), 0);
  ck_assert_int_eq(atom_write(s, 1, 2, 0), 0);
  ck_assert_int_eq(atom_end(s, 1, 0), 0);
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 1);
  ck_assert_uint_eq(tu_recorder_of(s, 0)->events[0].kind, ATOM_WRITE);
  ck_assert_uint_eq(tu_recorder_of(s, 1)->count, 4);
  /* without a COMMIT subscriber, commits are accepted unchecked and not forwarded */
  atom_session_free(s);
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &writes_only, NULL), 0);
  ck_assert_int_eq(atom_commit(s, 1, 2, 0), 0);
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 0);
  atom_session_free(s);
}
END_TEST

START_TEST(interning_small_and_large_keys) {
  atom_session *s = recorder_session(NULL);
  const uint64_t keys[] = {1, 0, 65535, 65536, UINT64_MAX, 0xdeadbeefcafeULL};
  for (size_t i = 0; i < 6; i++) ck_assert_int_eq(atom_write(s, keys[i], keys[5 - i], 0), 0);
  for (size_t i = 0; i < 6; i++) ck_assert_int_eq(atom_write(s, keys[i], keys[5 - i], 0), 0);
  tu_recorder *r = tu_recorder_of(s, 0);
  for (size_t i = 0; i < 6; i++) {
    ck_assert_uint_eq(r->events[i].thread, i);
    ck_assert_uint_eq(r->events[i + 6].thread, i);
    ck_assert_uint_eq(r->events[i + 6].target, r->events[i].target);
    ck_assert_uint_eq(atom_env_key(r->env, ATOM_SPACE_THREAD, (uint32_t)i), keys[i]);
    ck_assert_uint_eq(atom_env_key(r->env, ATOM_SPACE_VAR, r->events[i].target), keys[5 - i]);
  }
  ck_assert_uint_eq(atom_env_count(r->env, ATOM_SPACE_THREAD), 6);
  ck_assert_uint_eq(atom_env_count(r->env, ATOM_SPACE_LOCK), 0);
  atom_session_free(s);
}
END_TEST

START_TEST(names_and_sets) {
  atom_session *s = recorder_session(NULL);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 7, "balance"), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 7, "account.balance"), 0);
  ck_assert_int_eq(atom_set_name(s, 9, 7, "x"), ATOM_EINVAL);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 7, NULL), ATOM_EINVAL);
  ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_VAR, 7), "account.balance");
  ck_assert_ptr_null(atom_get_name(s, ATOM_SPACE_LOCK, 7));
  ck_assert_int_eq(atom_declare_set(s, 7, 100), 0);
  ck_assert_int_eq(atom_declare_set(s, 7, 101), 0);
  ck_assert_int_eq(atom_write(s, 1, 7, 0), 0);
  ck_assert_int_eq(atom_write(s, 1, 8, 0), 0);
  tu_recorder *r = tu_recorder_of(s, 0);
  uint64_t set = 0;
  ck_assert_int_eq(atom_env_var_set(r->env, 0, &set), 1);
  ck_assert_uint_eq(set, 101);
  ck_assert_int_eq(atom_env_var_set(r->env, 1, &set), 0);
  char buf[64];
  atom_env_label(r->env, ATOM_SPACE_VAR, 0, buf, sizeof buf);
  ck_assert_str_eq(buf, "account.balance");
  atom_env_label(r->env, ATOM_SPACE_VAR, 1, buf, sizeof buf);
  ck_assert_str_eq(buf, "0x8");
  ck_assert_str_eq(atom_env_arg(r->env, "note") ? "x" : "none", "none");
  atom_session_free(s);
}
END_TEST

/* ---- reports ---- */

typedef struct cb_log {
  int calls;
  char last_kind[32];
} cb_log;

static void on_report(const atom_report *r, void *payload) {
  cb_log *log = payload;
  log->calls++;
  snprintf(log->last_kind, sizeof log->last_kind, "%s", atom_report_kind(r));
}

static int report_once(atom_session *s, uint64_t loc_a, uint64_t loc_b, uint64_t at) {
  tu_recorder *r = tu_recorder_of(s, 0);
  atom_txn_ref txns[2] = {{0, 0, 0, loc_a}, {1, 1, 3, loc_b}};
  atom_ev ev = {ATOM_WRITE, 1, 0, 0, at, 42};
  uint32_t var = 0;
  atom_report_spec spec = {.version = ATOM_REPORT_SPEC_VERSION, .kind = "conflict-cycle",
                           .event_index = at, .txns = txns, .n_txns = 2, .events = &ev,
                           .n_events = 1, .vars = &var, .n_vars = 1, .message = NULL};
  return atom_env_report(r->env, &spec);
}

/* Begin locations with stacks count as their first frame: the same function reached through
 * two call paths (locs 300 and 301, both with frame 7 first) is one bug; a third path whose
 * first frame differs (8) is another. A location one run repeated (100) adds nothing. */
START_TEST(reports_dedup_by_first_frame_and_location_set) {
  atom_session *s = recorder_session(NULL);
  ck_assert_int_eq(atom_write(s, 11, 5, 0), 0);
  ck_assert_int_eq(atom_write(s, 12, 5, 0), 0);
  const uint64_t path_a[] = {7, 70}, path_b[] = {7, 71}, other[] = {8, 70};
  ck_assert_int_eq(atom_set_stack(s, 300, path_a, 2), 0);
  ck_assert_int_eq(atom_set_stack(s, 301, path_b, 2), 0);
  ck_assert_int_eq(atom_set_stack(s, 302, other, 2), 0);
  ck_assert_int_eq(report_once(s, 300, 200, 1), 0);
  ck_assert_int_eq(report_once(s, 301, 200, 2), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_uint_eq(atom_report_occurrences(atom_report_get(s, 0)), 2);
  ck_assert_int_eq(report_once(s, 302, 200, 3), 0);
  ck_assert_uint_eq(atom_report_count(s), 2);
  ck_assert_int_eq(report_once(s, 100, 100, 4), 0); /* {100} */
  ck_assert_int_eq(report_once(s, 100, 100, 5), 0);
  ck_assert_uint_eq(atom_report_count(s), 3);
  atom_session_free(s);
}
END_TEST

START_TEST(reports_dedup_counts_callback_and_contents) {
  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  cb_log log = {0, ""};
  o.on_report = on_report;
  o.report_payload = &log;
  atom_session *s = recorder_session(&o);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_THREAD, 11, "main"), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 5, "x"), 0);
  ck_assert_int_eq(atom_write(s, 11, 5, 0), 0);
  ck_assert_int_eq(atom_write(s, 12, 5, 0), 0);
  for (int i = 0; i < 10; i++) ck_assert_int_eq(report_once(s, 100, 200, 7 + (uint64_t)i), 0);
  ck_assert_int_eq(report_once(s, 200, 100, 30), 0); /* same locations, other roles: same */
  ck_assert_int_eq(report_once(s, 100, 300, 31), 0); /* new */
  ck_assert_int_eq(log.calls, 2);
  ck_assert_str_eq(log.last_kind, "conflict-cycle");
  ck_assert_uint_eq(atom_report_count(s), 2);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_str_eq(atom_report_checker(r), "recorder");
  ck_assert_uint_eq(atom_report_checker_index(r), 0);
  ck_assert_uint_eq(atom_report_occurrences(r), 11);
  ck_assert_uint_eq(atom_report_event_index(r), 7);
  ck_assert_uint_eq(atom_report_txn_count(r), 2);
  uint64_t th, bi, bl;
  ck_assert_int_eq(atom_report_txn(r, 1, &th, &bi, &bl), 0);
  ck_assert_uint_eq(th, 12);
  ck_assert_uint_eq(bi, 3);
  ck_assert_uint_eq(bl, 200);
  ck_assert_int_eq(atom_report_txn(r, 2, &th, &bi, &bl), ATOM_EINVAL);
  atom_event ev;
  uint64_t idx;
  ck_assert_uint_eq(atom_report_event_count(r), 1);
  ck_assert_int_eq(atom_report_event(r, 0, &ev, &idx), 0);
  ck_assert_uint_eq(idx, 7);
  ck_assert_uint_eq(ev.thread, 12);
  ck_assert_uint_eq(ev.target, 5);
  ck_assert_uint_eq(ev.loc, 42);
  ck_assert_uint_eq(atom_report_var_count(r), 1);
  ck_assert_uint_eq(atom_report_var(r, 0), 5);
  ck_assert_str_eq(atom_report_var_name(r, 0), "x");
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "main's transaction at loc 100"));
  ck_assert_ptr_null(atom_report_get(s, 2));
  atom_checker_stats cs = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &cs), 0);
  ck_assert_uint_eq(cs.reports, 2);
  ck_assert_uint_eq(cs.occurrences, 12);
  ck_assert_uint_gt(cs.bytes, 0);
  cs.version = 0;
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &cs), ATOM_EINVAL);
  /* malformed spec */
  atom_report_spec bad = {.version = ATOM_REPORT_SPEC_VERSION, .kind = NULL};
  ck_assert_int_eq(atom_env_report(tu_recorder_of(s, 0)->env, &bad), ATOM_EINVAL);
  atom_session_free(s);
}
END_TEST

/* atom_env_report_repeat counts a repeat of a report made (also a dropped one: over the cap) and
 * changes nothing for a new signature; the message and witness events are not looked at. */
START_TEST(reports_repeat_counts_only_made_ones) {
  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  cb_log log = {0, ""};
  o.on_report = on_report;
  o.report_payload = &log;
  o.max_reports = 1;
  atom_session *s = recorder_session(&o);
  ck_assert_int_eq(atom_write(s, 11, 5, 0), 0);
  ck_assert_int_eq(atom_write(s, 12, 5, 0), 0);
  atom_env *env = tu_recorder_of(s, 0)->env;
  atom_txn_ref txns[2] = {{0, 0, 0, 100}, {1, 1, 3, 200}};
  atom_report_spec spec = {.version = ATOM_REPORT_SPEC_VERSION, .kind = "conflict-cycle",
                           .txns = txns, .n_txns = 2};
  ck_assert_int_eq(atom_env_report_repeat(env, &spec), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_int_eq(report_once(s, 200, 100, 4), 0);
  ck_assert_int_eq(atom_env_report_repeat(env, &spec), 1);
  ck_assert_int_eq(atom_env_report_repeat(env, &spec), 1);
  ck_assert_uint_eq(atom_report_occurrences(atom_report_get(s, 0)), 3);
  spec.signature_extra = 9; /* another signature */
  ck_assert_int_eq(atom_env_report_repeat(env, &spec), 0);
  spec.signature_extra = 0;
  txns[1].begin_loc = 300; /* over the cap: dropped, still known */
  ck_assert_int_eq(report_once(s, 100, 300, 5), 0);
  ck_assert_int_eq(atom_env_report_repeat(env, &spec), 1);
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_int_eq(log.calls, 2);
  atom_checker_stats cs = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &cs), 0);
  ck_assert_uint_eq(cs.reports, 2);
  ck_assert_uint_eq(cs.occurrences, 5);
  atom_report_spec bad = {.version = ATOM_REPORT_SPEC_VERSION, .kind = NULL};
  ck_assert_int_eq(atom_env_report_repeat(env, &bad), ATOM_EINVAL);
  ck_assert_int_eq(atom_env_report_repeat(NULL, &spec), ATOM_EINVAL);
  atom_session_free(s);
}
END_TEST

START_TEST(reports_cap) {
  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  cb_log log = {0, ""};
  o.on_report = on_report;
  o.report_payload = &log;
  o.max_reports = 2;
  atom_session *s = recorder_session(&o);
  ck_assert_int_eq(atom_write(s, 1, 5, 0), 0);
  ck_assert_int_eq(atom_write(s, 2, 5, 0), 0);
  for (uint64_t i = 0; i < 5; i++) ck_assert_int_eq(report_once(s, i, 1000, i), 0);
  for (uint64_t i = 0; i < 5; i++) ck_assert_int_eq(report_once(s, i, 1000, 10 + i), 0);
  ck_assert_uint_eq(atom_report_count(s), 2);
  ck_assert_uint_eq(atom_report_dropped(s), 3); /* dropped ones are still deduplicated */
  ck_assert_int_eq(log.calls, 5);
  ck_assert_uint_eq(atom_report_occurrences(atom_report_get(s, 0)), 2);
  atom_checker_stats cs = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &cs), 0);
  ck_assert_uint_eq(cs.reports, 5);
  ck_assert_uint_eq(cs.occurrences, 10);
  atom_session_free(s);
}
END_TEST

/* Checker ci of s reports a cycle between begin locations a and b at event `at`. */
static int report_by(atom_session *s, size_t ci, uint64_t loc_a, uint64_t loc_b, uint64_t at) {
  tu_recorder *r = tu_recorder_of(s, ci);
  atom_txn_ref txns[2] = {{0, 0, 0, loc_a}, {1, 1, 3, loc_b}};
  atom_report_spec spec = {.version = ATOM_REPORT_SPEC_VERSION, .kind = "conflict-cycle",
                           .event_index = at, .txns = txns, .n_txns = 2};
  return atom_env_report(r->env, &spec);
}

/* max_reports_per_checker: each checker keeps its first N distinct reports; the rest are
 * delivered once (with a callback), deduplicated and counted, per checker and in all. */
START_TEST(reports_cap_per_checker) {
  for (int with_callback = 0; with_callback < 2; with_callback++) {
    atom_options o;
    ck_assert_int_eq(atom_options_init(&o, ATOM_OPTIONS_VERSION), 0);
    ck_assert_uint_eq(o.max_reports_per_checker, 0); /* no cap by default */
    cb_log log = {0, ""};
    if (with_callback) {
      o.on_report = on_report;
      o.report_payload = &log;
    }
    o.max_reports_per_checker = 2;
    atom_session *s = recorder_session(&o);
    ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
    ck_assert_int_eq(atom_write(s, 1, 5, 0), 0);
    ck_assert_int_eq(atom_write(s, 2, 5, 0), 0);
    for (int round = 0; round < 2; round++)
      for (size_t ci = 0; ci < 2; ci++)
        for (uint64_t i = 0; i < 5; i++) ck_assert_int_eq(report_by(s, ci, i, 1000, i), 0);
    ck_assert_uint_eq(atom_report_count(s), 4); /* 2 of each checker */
    for (size_t k = 0; k < 4; k++)
      ck_assert_uint_eq(atom_report_occurrences(atom_report_get(s, k)), 2);
    ck_assert_uint_eq(atom_report_checker_index(atom_report_get(s, 3)), 1);
    ck_assert_uint_eq(atom_report_dropped(s), 6); /* dropped ones are deduplicated too */
    ck_assert_int_eq(log.calls, with_callback ? 10 : 0);
    for (size_t ci = 0; ci < 2; ci++) {
      atom_checker_stats cs = {.version = ATOM_CHECKER_STATS_VERSION};
      ck_assert_int_eq(atom_checker_stats_get(s, ci, &cs), 0);
      ck_assert_uint_eq(cs.reports, 5); /* 5 - 2 stored = 3 dropped */
      ck_assert_uint_eq(cs.occurrences, 10);
      /* a cap on reports is not a bound of the check: the verdict stays complete */
      atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
      ck_assert_int_eq(atom_checker_status_get(s, ci, &st), 0);
      ck_assert_uint_eq(st.state, ATOM_CHECKER_COMPLETE);
    }
    atom_session_free(s);
  }
}
END_TEST

/* A caller built against the 0.1 header passes a version-1 atom_options, which is shorter:
 * neither atom_options_init nor atom_session_new may touch the bytes after it. */
START_TEST(options_version_1_still_accepted) {
  union {
    atom_options o;
    unsigned char bytes[sizeof(atom_options)];
  } u;
  size_t v1 = offsetof(atom_options, max_reports_per_checker);
  memset(u.bytes, 0xa5, sizeof u.bytes);
  ck_assert_int_eq(atom_options_init(&u.o, 1), 0);
  ck_assert_uint_eq(u.o.version, 1);
  for (size_t i = v1; i < sizeof u.bytes; i++) ck_assert_uint_eq(u.bytes[i], 0xa5);
  u.o.max_reports = 1; /* the v1 cap still works; the garbage after it is not read as a cap */
  atom_session *s = recorder_session(&u.o);
  ck_assert_int_eq(atom_write(s, 1, 5, 0), 0);
  ck_assert_int_eq(atom_write(s, 2, 5, 0), 0);
  for (uint64_t i = 0; i < 3; i++) ck_assert_int_eq(report_by(s, 0, i, 1000, i), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_uint_eq(atom_report_dropped(s), 2);
  atom_session_free(s);
  ck_assert_int_eq(atom_options_init(&u.o, 4), ATOM_EINVAL);
  u.o.version = 4;
  ck_assert_int_eq(atom_session_new(&s, &u.o), ATOM_EINVAL);
}
END_TEST

/* The status of checker ci, checked for its version field. */
static atom_checker_status status_of(atom_session *s, size_t ci) {
  atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
  ck_assert_int_eq(atom_checker_status_get(s, ci, &st), 0);
  return st;
}

START_TEST(checker_out_of_memory_disables_it) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, "fail_at=3"), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
  for (int i = 0; i < 5; i++) ck_assert_int_eq(atom_write(s, 1, 1, 0), 0); /* accepted */
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 2); /* disabled at its third event */
  ck_assert_uint_eq(tu_recorder_of(s, 1)->count, 5);
  atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
  ck_assert_uint_eq(st.disabled, 1);
  ck_assert_int_eq(atom_checker_stats_get(s, 1, &st), 0);
  ck_assert_uint_eq(st.disabled, 0);
  atom_checker_status cs = status_of(s, 0);
  ck_assert_uint_eq(cs.state, ATOM_CHECKER_DISABLED);
  ck_assert_uint_eq(cs.stopped_at, 2);
  ck_assert_int_eq(cs.error, ATOM_ENOMEM);
  ck_assert_str_eq(cs.reason, "out of memory");
  cs = status_of(s, 1);
  ck_assert_uint_eq(cs.state, ATOM_CHECKER_COMPLETE);
  ck_assert_ptr_null(cs.reason);
  ck_assert_int_eq(atom_finish(s), ATOM_ENOMEM);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "checker recorder ran out of memory at event 2"));
  ck_assert_int_eq(atom_finish(s), ATOM_ENOMEM); /* the same status again */
  ck_assert_int_eq(tu_recorder_of(s, 0)->finished, 0);
  ck_assert_int_eq(tu_recorder_of(s, 1)->finished, 1);
  atom_session_free(s);
}
END_TEST

START_TEST(checker_limit_disables_it) {
  /* A checker that reaches a documented limit (ATOM_ELIMIT) missed an event: it is disabled
   * like one out of memory, the push succeeds (the others took the event), and the status
   * names the event and the checker's own message. */
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, "fail_at=2,fail_code=-8"),
                   0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
  ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  atom_env_error(NULL, ATOM_EINVAL, "a stale message of someone else");
  ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 1);
  ck_assert_uint_eq(tu_recorder_of(s, 1)->count, 3);
  atom_checker_status cs = status_of(s, 0);
  ck_assert_uint_eq(cs.state, ATOM_CHECKER_DISABLED);
  ck_assert_uint_eq(cs.stopped_at, 1);
  ck_assert_int_eq(cs.error, ATOM_ELIMIT);
  /* the recorder set no message: the stale one is not taken for its reason */
  ck_assert_ptr_null(strstr(cs.reason, "stale"));
  ck_assert_ptr_nonnull(strstr(cs.reason, "ATOM_ELIMIT"));
  ck_assert_int_eq(atom_finish(s), ATOM_ELIMIT);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "checker recorder stopped checking at event 1"));
  atom_session_free(s);
}
END_TEST

START_TEST(checker_errors_surface) {
  /* Errors other than out of memory or a limit (a checker refusing an event) reach the caller,
   * and the checker stays attached. */
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, "fail_at=2,fail_code=-1"),
                   0);
  ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  ck_assert_int_eq(atom_write(s, 1, 1, 0), -1);
  ck_assert_int_eq(atom_write(s, 1, 1, 0), -1);
  atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
  ck_assert_uint_eq(st.disabled, 0);
  ck_assert_uint_eq(status_of(s, 0).state, ATOM_CHECKER_COMPLETE);
  ck_assert_int_eq(atom_finish(s), 0);
  atom_session_free(s);
}
END_TEST

START_TEST(checker_incomplete_status) {
  /* atom_env_incomplete marks the checker INCOMPLETE with the first reason; it keeps getting
   * events; finish succeeds; the status says where it stopped. */
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, "incomplete_at=2"), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
  ck_assert_uint_eq(status_of(s, 0).state, ATOM_CHECKER_COMPLETE);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 4);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_int_eq(tu_recorder_of(s, 0)->finished, 1);
  atom_checker_status cs = status_of(s, 0);
  ck_assert_uint_eq(cs.state, ATOM_CHECKER_INCOMPLETE);
  ck_assert_uint_eq(cs.stopped_at, 1);
  ck_assert_str_eq(cs.reason, "bound 2 reached at event 1"); /* the first call's */
  ck_assert_int_eq(cs.error, 0);
  ck_assert_uint_eq(status_of(s, 1).state, ATOM_CHECKER_COMPLETE);
  /* bad arguments */
  atom_checker_status bad = {.version = 2};
  ck_assert_int_eq(atom_checker_status_get(s, 0, &bad), ATOM_EINVAL);
  bad.version = ATOM_CHECKER_STATUS_VERSION;
  ck_assert_int_eq(atom_checker_status_get(s, 2, &bad), ATOM_EINVAL);
  ck_assert_int_eq(atom_checker_status_get(NULL, 0, &bad), ATOM_EINVAL);
  ck_assert_int_eq(atom_checker_status_get(s, 0, NULL), ATOM_EINVAL);
  ck_assert_int_eq(atom_env_incomplete(NULL, 0, "x"), ATOM_EINVAL);
  atom_session_free(s);
}
END_TEST

START_TEST(push_many_counts) {
  atom_session *s = recorder_session(NULL);
  atom_event evs[] = {EV(ATOM_BEGIN, 1, 0), EV(ATOM_WRITE, 1, 2), EV(ATOM_END, 2, 0),
                      EV(ATOM_END, 1, 0)};
  size_t done = 99;
  ck_assert_int_eq(atom_push_many(s, evs, 4, &done), ATOM_EENDNOBEGIN);
  ck_assert_uint_eq(done, 3);
  ck_assert_int_eq(atom_push_many(s, evs + 3, 1, &done), 0);
  ck_assert_uint_eq(done, 1);
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 3);
  ck_assert_int_eq(atom_push_many(s, NULL, 0, &done), 0);
  ck_assert_int_eq(atom_push_many(s, NULL, 1, &done), ATOM_EINVAL);
  ck_assert_int_eq(atom_push(NULL, evs), ATOM_EINVAL);
  ck_assert_int_eq(atom_push(s, NULL), ATOM_EINVAL);
  atom_session_free(s);
}
END_TEST

/* ---- thread safety ---- */

#define PRODUCERS 8
#define PER_PRODUCER 20000

typedef struct producer {
  atom_session *s;
  uint64_t thread;
  int failures;
} producer;

static void *produce(void *arg) {
  producer *p = arg;
  for (uint64_t i = 0; i < PER_PRODUCER; i++) {
    /* loc carries the sequence number so the arrival order per thread can be checked */
    if (atom_write(p->s, p->thread, 1000 + p->thread, i) != 0) p->failures++;
  }
  return NULL;
}

START_TEST(threadsafe_pushes_from_8_threads) {
  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  o.flags = ATOM_THREADSAFE;
  atom_session *s = recorder_session(&o);
  pthread_t th[PRODUCERS];
  producer p[PRODUCERS];
  for (int i = 0; i < PRODUCERS; i++) {
    p[i] = (producer){s, (uint64_t)i + 1, 0};
    ck_assert_int_eq(pthread_create(&th[i], NULL, produce, &p[i]), 0);
  }
  for (int i = 0; i < PRODUCERS; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(p[i].failures, 0);
  }
  tu_recorder *r = tu_recorder_of(s, 0);
  ck_assert_uint_eq(r->count, PRODUCERS * PER_PRODUCER);
  uint64_t next[PRODUCERS] = {0};
  for (size_t i = 0; i < r->count; i++) {
    ck_assert_uint_eq(r->events[i].index, i);
    uint64_t key = atom_env_key(r->env, ATOM_SPACE_THREAD, r->events[i].thread);
    ck_assert_uint_eq(r->events[i].loc, next[key - 1]++);
  }
  atom_session_free(s);
}
END_TEST

/* ---- evidence: observed, predicted, confirmed ---- */

/* A plugin that reports one violation at finish: a transaction that begins at loc=N (non-unary)
 * and a unary one; flags=F sets the spec's flags (default 0: a plugin that sets nothing). */
typedef struct ev_plugin {
  atom_env *env;
  uint64_t loc, flags;
} ev_plugin;

static int ev_create(void **self, atom_env *env) {
  ev_plugin *p = calloc(1, sizeof *p);
  if (!p) return ATOM_ENOMEM;
  p->env = env;
  const char *loc = atom_env_arg(env, "loc"), *flags = atom_env_arg(env, "flags");
  p->loc = loc ? strtoull(loc, NULL, 10) : 0;
  p->flags = flags ? strtoull(flags, NULL, 0) : 0;
  *self = p;
  return 0;
}
static int ev_event(void *self, const atom_ev *ev) {
  (void)self;
  (void)ev;
  return 0;
}
static int ev_finish(void *self) {
  ev_plugin *p = self;
  atom_txn_ref refs[2] = {{0, 0, 0, p->loc}, {0, 1, 1, 999}};
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.flags = (uint32_t)p->flags;
  spec.kind = "plugin-violation";
  spec.txns = refs;
  spec.n_txns = 2;
  return atom_env_report(p->env, &spec);
}
static void ev_destroy(void *self) { free(self); }
static const char *const ev_keys[] = {"loc", "flags", NULL};
static const atom_checker ev_checker = {
    ATOM_CHECKER_ABI_VERSION, ATOM_KIND_BIT(ATOM_READ), "evidence-plugin", "test", ev_keys,
    ev_create, ev_event, ev_finish, ev_destroy, NULL, 0, NULL};

/* The report of checker ci (exactly one). */
static const atom_report *only_report_of(const atom_session *s, size_t ci) {
  const atom_report *found = NULL;
  for (size_t i = 0; i < atom_report_count(s); i++)
    if (atom_report_checker_index(atom_report_get(s, i)) == ci) {
      ck_assert_ptr_null(found);
      found = atom_report_get(s, i);
    }
  ck_assert_ptr_nonnull(found);
  return found;
}

/* T1's transaction (begin at loc 10) is split by T2's write. */
static const char *const interleaved =
    "T1|begin|10\nT1|r(x)|11\nT2|w(x)|20\nT1|w(x)|12\nT1|end|13\n";
/* The same events in a serial order: nobody sees a violation, commit-node predicts one. */
static const char *const serial =
    "T1|begin|10\nT1|r(x)|11\nT1|w(x)|12\nT1|end|13\nT2|w(x)|20\n";

START_TEST(evidence_confirmed_when_observed_too) {
  const char *specs[] = {"aerodrome", "commit-node", "block", NULL};
  atom_session *s = tu_session(specs);
  ck_assert_int_eq(tu_feed_std(s, interleaved, NULL), 0);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 0)), ATOM_EVIDENCE_OBSERVED);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 1)), ATOM_EVIDENCE_CONFIRMED);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 2)), ATOM_EVIDENCE_CONFIRMED);
  atom_session_free(s);
}
END_TEST

START_TEST(evidence_predicted_when_only_predicted) {
  const char *specs[] = {"aerodrome", "commit-node", "reduction", NULL};
  atom_session *s = tu_session(specs);
  ck_assert_int_eq(tu_feed_std(s, serial, NULL), 0);
  ck_assert_uint_eq(tu_report_count(s, 0), 0);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 1)), ATOM_EVIDENCE_PREDICTED);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 2)), ATOM_EVIDENCE_PREDICTED);
  ck_assert_str_eq(atom_evidence_name(ATOM_EVIDENCE_OBSERVED), "observed");
  ck_assert_str_eq(atom_evidence_name(ATOM_EVIDENCE_PREDICTED), "predicted");
  ck_assert_str_eq(atom_evidence_name(ATOM_EVIDENCE_CONFIRMED), "confirmed");
  ck_assert_ptr_null(atom_evidence_name(0));
  ck_assert_ptr_null(atom_evidence_name(4));
  ck_assert_int_eq(atom_report_evidence(NULL), 0);
  atom_session_free(s);
}
END_TEST

START_TEST(evidence_of_plugins) {
  /* A plugin that sets no flag is observed, and an observed report found after a prediction
   * (here at finish, attached after commit-node) still confirms it. */
  atom_session *s = tu_session((const char *const[]){"commit-node", NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &ev_checker, "loc=10"), 0);
  ck_assert_int_eq(tu_feed_std(s, serial, NULL), 0);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 1)), ATOM_EVIDENCE_OBSERVED);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 0)), ATOM_EVIDENCE_CONFIRMED);
  atom_session_free(s);

  /* Other begin locations do not confirm; a plugin may predict too. */
  s = tu_session((const char *const[]){"commit-node", NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &ev_checker, "loc=11"), 0);
  ck_assert_int_eq(tu_feed_std(s, serial, NULL), 0);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 0)), ATOM_EVIDENCE_PREDICTED);
  atom_session_free(s);
  s = tu_session((const char *const[]){"aerodrome", NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &ev_checker, "loc=10,flags=1"), 0);
  ck_assert_int_eq(tu_feed_std(s, interleaved, NULL), 0);
  ck_assert_int_eq(atom_report_evidence(only_report_of(s, 1)), ATOM_EVIDENCE_CONFIRMED);
  atom_session_free(s);

  /* Unknown flag bits are a malformed report. */
  s = tu_session((const char *const[]){"null", NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &ev_checker, "loc=10,flags=0x80"), 0);
  ck_assert_int_eq(atom_read(s, 1, 1, 1), 0);
  ck_assert_int_eq(atom_finish(s), ATOM_EINVAL);
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_session_free(s);
}
END_TEST

START_TEST(names_of_locations) {
  atom_session *s = tu_session((const char *const[]){"null", NULL});
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_LOC, 94, "transfer (bank.c:42)"), 0);
  ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_LOC, 94), "transfer (bank.c:42)");
  ck_assert_ptr_null(atom_get_name(s, ATOM_SPACE_LOC, 95));
  ck_assert_ptr_null(atom_get_name(s, ATOM_SPACE_VAR, 94));
  ck_assert_int_eq(atom_set_name(s, 5, 1, "x"), ATOM_EINVAL);
  atom_session_free(s);
}
END_TEST

Suite *atom_test_suite_core(void) {
  Suite *s = suite_create("core");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, options_and_new);
  tcase_add_test(tc, strings_for_codes_and_kinds);
  tcase_add_test(tc, attach_rules);
  tcase_add_test(tc, normalization_nesting_and_reentrancy);
  tcase_add_test(tc, finish_closes_open_transactions_in_thread_order);
  tcase_add_test(tc, join_closes_the_childs_open_transaction);
  tcase_add_test(tc, ill_formed_end_without_begin);
  tcase_add_test(tc, ill_formed_release_not_held);
  tcase_add_test(tc, ill_formed_acquire_held_by_other);
  tcase_add_test(tc, ill_formed_event_of_joined_thread);
  tcase_add_test(tc, ill_formed_fork_and_join);
  tcase_add_test(tc, ill_formed_kind_and_flags);
  tcase_add_test(tc, flagged_accesses_forwarded);
  tcase_add_test(tc, ill_formed_commit);
  tcase_add_test(tc, dispatch_by_mask);
  tcase_add_test(tc, interning_small_and_large_keys);
  tcase_add_test(tc, names_and_sets);
  tcase_add_test(tc, reports_dedup_counts_callback_and_contents);
  tcase_add_test(tc, reports_dedup_by_first_frame_and_location_set);
  tcase_add_test(tc, reports_cap);
  tcase_add_test(tc, reports_repeat_counts_only_made_ones);
  tcase_add_test(tc, reports_cap_per_checker);
  tcase_add_test(tc, options_version_1_still_accepted);
  tcase_add_test(tc, checker_out_of_memory_disables_it);
  tcase_add_test(tc, checker_limit_disables_it);
  tcase_add_test(tc, checker_errors_surface);
  tcase_add_test(tc, checker_incomplete_status);
  tcase_add_test(tc, push_many_counts);
  tcase_add_test(tc, threadsafe_pushes_from_8_threads);
  suite_add_tcase(s, tc);
  TCase *ev = tcase_create("evidence");
  tcase_add_test(ev, evidence_confirmed_when_observed_too);
  tcase_add_test(ev, evidence_predicted_when_only_predicted);
  tcase_add_test(ev, evidence_of_plugins);
  tcase_add_test(ev, names_of_locations);
  suite_add_tcase(s, ev);
  return s;
}
