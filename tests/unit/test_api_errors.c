/* Every error path of the public API, with its code and its message (doc/api.md "Errors").
 * Each row runs one failing call and checks the returned code and a phrase of
 * atom_last_error(). Checker-specific argument errors are tested in each checker's suite;
 * malformed trace lines in the trace suite; ill-formed events in the core suite. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

Suite *atom_test_suite_api_errors(void);

#define EXPECT(call, code, phrase)                                                          \
  do {                                                                                      \
    int rc_ = (call);                                                                       \
    ck_assert_msg(rc_ == (code), "%s returned %s, expected %s", #call, atom_error_name(rc_), \
                  atom_error_name(code));                                                   \
    ck_assert_msg(strstr(atom_last_error(), (phrase)) != NULL,                              \
                  "%s: message \"%s\" lacks \"%s\"", #call, atom_last_error(), (phrase));   \
  } while (0)

static void *null_malloc(size_t n, void *p) {
  (void)n;
  (void)p;
  return NULL;
}
static void *null_realloc(void *q, size_t n, void *p) {
  (void)q;
  (void)n;
  (void)p;
  return NULL;
}
static void plain_free(void *q, void *p) {
  (void)p;
  free(q);
}

static int failing_create(void **self, atom_env *env) {
  (void)self;
  return atom_env_error(env, ATOM_EINVAL, "refusing on purpose");
}

START_TEST(options_and_sessions) {
  atom_options o;
  EXPECT(atom_options_init(NULL, 1), ATOM_EINVAL, "NULL options");
  EXPECT(atom_options_init(&o, 4), ATOM_EINVAL, "unknown options version 4");
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  atom_session *s;
  EXPECT(atom_session_new(NULL, &o), ATOM_EINVAL, "NULL output pointer");
  o.version = 4;
  EXPECT(atom_session_new(&s, &o), ATOM_EINVAL, "unknown options version 4");
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  o.flags = 0x80;
  EXPECT(atom_session_new(&s, &o), ATOM_EINVAL, "unknown flags 0x80");
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  o.free_fn = plain_free;
  EXPECT(atom_session_new(&s, &o), ATOM_EINVAL, "all three allocator functions or none");
  o.malloc_fn = null_malloc;
  o.realloc_fn = null_realloc;
  EXPECT(atom_session_new(&s, &o), ATOM_ENOMEM, "out of memory");
}
END_TEST

START_TEST(attaching) {
  atom_session *s = tu_session(NULL);
  EXPECT(atom_session_attach(NULL, "aerodrome"), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_session_attach(s, NULL), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_session_attach(s, "nope"), ATOM_ENOTFOUND, "no checker named \"nope\"");
  EXPECT(atom_session_attach(s, ""), ATOM_ENOTFOUND, "no checker named \"\"");
  EXPECT(atom_session_attach(s, "aerodrome:colour=red"), ATOM_EINVAL,
         "unknown argument \"colour\"");
  EXPECT(atom_session_attach(s, "aerodrome:variant=x"), ATOM_EINVAL, "variant must be");
  EXPECT(atom_session_attach(s, "velodrome:=1"), ATOM_EINVAL, "empty argument name");
  EXPECT(atom_session_attach(s, "aerodrome:variant=basic,variant=opt"), ATOM_EINVAL,
         "given twice");
  EXPECT(atom_session_attach_checker(s, NULL, NULL), ATOM_EINVAL, "NULL argument");
  atom_checker vt = tu_recorder_checker;
  vt.abi_version = 4;
  EXPECT(atom_session_attach_checker(s, &vt, NULL), ATOM_EINVAL, "unknown checker vtable version 4");
  vt = tu_recorder_checker;
  vt.destroy = NULL;
  EXPECT(atom_session_attach_checker(s, &vt, NULL), ATOM_EINVAL, "a required member is NULL");
  vt = tu_recorder_checker;
  vt.event_mask = 1u;
  EXPECT(atom_session_attach_checker(s, &vt, NULL), ATOM_EINVAL, "unknown kinds");
  vt = tu_recorder_checker;
  vt.create = failing_create;
  EXPECT(atom_session_attach_checker(s, &vt, NULL), ATOM_EINVAL, "refusing on purpose");
  ck_assert_uint_eq(atom_checker_count(s), 0);
  ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  EXPECT(atom_session_attach(s, "aerodrome"), ATOM_ESTATE, "before the first event");
  atom_session_free(s);
}
END_TEST

START_TEST(pushing) {
  atom_session *s = tu_session((const char *[]){"aerodrome", NULL});
  atom_event e = {ATOM_WRITE, 0, 1, 1, 0};
  EXPECT(atom_push(NULL, &e), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_push(s, NULL), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_push_many(s, NULL, 3, NULL), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_push_many(NULL, &e, 1, NULL), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_set_name(s, 0, 1, "x"), ATOM_EINVAL, "bad space 0");
  EXPECT(atom_set_name(s, ATOM_SPACE_VAR, 1, NULL), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_set_name(NULL, ATOM_SPACE_VAR, 1, "x"), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_declare_set(NULL, 1, 1), ATOM_EINVAL, "NULL session");
  EXPECT(atom_finish(NULL), ATOM_EINVAL, "NULL session");
  ck_assert_int_eq(atom_finish(s), 0);
  EXPECT(atom_push(s, &e), ATOM_ESTATE, "the session is finished");
  EXPECT(atom_begin(s, 1, 0), ATOM_ESTATE, "the session is finished");
  atom_session_free(s);
}
END_TEST

START_TEST(statistics_and_reports) {
  atom_session *s = tu_session((const char *[]){"aerodrome", NULL});
  atom_session_stats st = {.version = 0};
  EXPECT(atom_session_stats_get(s, &st), ATOM_EINVAL, "bad version");
  EXPECT(atom_session_stats_get(NULL, &st), ATOM_EINVAL, "NULL argument");
  atom_checker_stats cs = {.version = ATOM_CHECKER_STATS_VERSION};
  EXPECT(atom_checker_stats_get(s, 1, &cs), ATOM_EINVAL, "bad argument");
  cs.version = 9;
  EXPECT(atom_checker_stats_get(s, 0, &cs), ATOM_EINVAL, "bad argument");
  /* a report to look into */
  atom_begin(s, 1, 0);
  atom_begin(s, 2, 0);
  atom_write(s, 1, 1, 0);
  atom_read(s, 2, 1, 0);
  atom_write(s, 2, 2, 0);
  atom_read(s, 1, 2, 0);
  atom_finish(s);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_ptr_nonnull(r);
  EXPECT(atom_report_txn(r, 99, NULL, NULL, NULL), ATOM_EINVAL, "no transaction 99");
  EXPECT(atom_report_txn(NULL, 0, NULL, NULL, NULL), ATOM_EINVAL, "no transaction 0");
  EXPECT(atom_report_event(r, 99, NULL, NULL), ATOM_EINVAL, "no event 99");
  ck_assert_ptr_null(atom_report_get(s, 99));
  ck_assert_ptr_null(atom_report_var_name(r, 99));
  ck_assert_uint_eq(atom_report_var(r, 99), 0);
  atom_session_free(s);
}
END_TEST

START_TEST(traces) {
  atom_trace_reader *r;
  EXPECT(atom_trace_reader_open(NULL, "x"), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_trace_reader_open(&r, NULL), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_trace_reader_open(&r, "/nonexistent/trace.std"), ATOM_EIO, "/nonexistent/trace.std");
  EXPECT(atom_trace_reader_open_memory(NULL, "", 0, "m"), ATOM_EINVAL, "NULL argument");
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, "t|bogus|0\n", 10, "mem"), 0);
  atom_event e;
  EXPECT(atom_trace_reader_next(r, &e), ATOM_EPARSE, "mem:1:");
  EXPECT(atom_trace_reader_next(r, NULL), ATOM_EINVAL, "NULL argument");
  atom_session *s = tu_session(NULL);
  EXPECT(atom_trace_feed(NULL, r, 0, NULL, NULL, NULL), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_trace_feed(s, r, 0, NULL, NULL, NULL), ATOM_EPARSE, "mem:1:");
  atom_trace_reader_free(r);
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, "t|w(x)|0\n", 9, "mem"), 0);
  atom_finish(s);
  EXPECT(atom_trace_feed(s, r, 0, NULL, NULL, NULL), ATOM_ESTATE, "finished");
  atom_trace_reader_free(r);
  atom_session_free(s);

  atom_trace_writer *w;
  EXPECT(atom_trace_writer_open(NULL, "-"), ATOM_EINVAL, "NULL argument");
  EXPECT(atom_trace_writer_open(&w, "/nonexistent/dir/out.std"), ATOM_EIO, "/nonexistent/dir");
  ck_assert_int_eq(atom_trace_writer_open(&w, "/dev/null"), 0);
  EXPECT(atom_trace_writer_set_name(w, 7, 1, "x"), ATOM_EINVAL, "bad space 7");
  EXPECT(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 1, "a|b"), ATOM_EINVAL, "set_name");
  atom_event bad = {42, 0, 1, 1, 0};
  EXPECT(atom_trace_writer_write(w, &bad), ATOM_EINVAL, "unknown event kind 42");
  EXPECT(atom_trace_writer_write(w, NULL), ATOM_EINVAL, "NULL argument");
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  ck_assert_int_eq(atom_trace_writer_open(&w, "/dev/full"), 0);
  atom_event ok = {ATOM_WRITE, 0, 1, 1, 0};
  int rc = 0;
  for (int i = 0; i < 100000 && rc == 0; i++) rc = atom_trace_writer_write(w, &ok);
  int rc2 = atom_trace_writer_close(w);
  ck_assert_msg(rc == ATOM_EIO || rc2 == ATOM_EIO, "writing to /dev/full did not fail");
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "/dev/full"));
}
END_TEST

START_TEST(environment) {
  char buf[8];
  ck_assert_ptr_null(atom_env_arg(NULL, "x"));
  ck_assert_ptr_null(atom_env_realloc(NULL, NULL, 0, 8));
  ck_assert_uint_eq(atom_env_count(NULL, ATOM_SPACE_VAR), 0);
  ck_assert_uint_eq(atom_env_key(NULL, ATOM_SPACE_VAR, 0), 0);
  ck_assert_ptr_null(atom_env_name(NULL, ATOM_SPACE_VAR, 0));
  ck_assert_int_eq(atom_env_var_set(NULL, 0, NULL), 0);
  ck_assert_int_gt(atom_env_label(NULL, ATOM_SPACE_VAR, 0, buf, sizeof buf), 0);
  EXPECT(atom_env_report(NULL, NULL), ATOM_EINVAL, "NULL environment");
  EXPECT(atom_env_error(NULL, ATOM_ELIMIT, "%s", "detail"), ATOM_ELIMIT, "detail");
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
  ck_assert_int_eq(atom_write(s, 1, 1, 0), 0);
  atom_env *env = tu_recorder_of(s, 0)->env;
  atom_report_spec spec = {.version = ATOM_REPORT_SPEC_VERSION, .kind = ""};
  EXPECT(atom_env_report(env, &spec), ATOM_EINVAL, "recorder: malformed report");
  spec.kind = "k";
  spec.n_txns = 1;
  EXPECT(atom_env_report(env, &spec), ATOM_EINVAL, "malformed report");
  atom_session_free(s);
}
END_TEST

Suite *atom_test_suite_api_errors(void) {
  Suite *s = suite_create("api_errors");
  TCase *tc = tcase_create("api_errors");
  tcase_add_test(tc, options_and_sessions);
  tcase_add_test(tc, attaching);
  tcase_add_test(tc, pushing);
  tcase_add_test(tc, statistics_and_reports);
  tcase_add_test(tc, traces);
  tcase_add_test(tc, environment);
  suite_add_tcase(s, tc);
  return s;
}
