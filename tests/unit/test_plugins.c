/* Third-party checkers that misbehave in ways the core must absorb: reports with no
 * transactions, and return codes that are not ATOM_E* codes (checker.h lifecycle). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

Suite *atom_test_suite_plugins(void);

/* ---- a checker whose every READ reports the same violation with no transactions ---- */

static int empty_create(void **self, atom_env *env) {
  *self = env;
  return 0;
}
static int empty_event(void *self, const atom_ev *ev) {
  (void)ev;
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "no-transactions";
  return atom_env_report(self, &spec);
}
static void empty_destroy(void *self) { (void)self; }
static const atom_checker empty_checker = {
    ATOM_CHECKER_ABI_VERSION, ATOM_KIND_BIT(ATOM_READ), "empty-reporter", "test", NULL,
    empty_create, empty_event, NULL, empty_destroy, NULL, 0};

/* The second report has the signature of the first, so the core compares two signatures of
 * zero locations (a memcmp on a NULL array under UBSan before the fix). */
START_TEST(report_without_transactions_is_deduplicated) {
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &empty_checker, NULL), 0);
  ck_assert_int_eq(tu_feed_std(s, "T1|r(x)|1\nT1|r(x)|2\nT2|r(y)|3\n", NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_uint_eq(atom_report_txn_count(atom_report_get(s, 0)), 0);
  ck_assert_uint_eq(atom_report_occurrences(atom_report_get(s, 0)), 3);
  atom_session_free(s);
}
END_TEST

/* ---- a checker whose callbacks return a chosen code ---- */

/* Which callback fails and with what: args "create=N", "event=N", "finish=N". */
typedef struct coded {
  int create, event, finish;
} coded;
static int arg_int(atom_env *env, const char *key) {
  const char *v = atom_env_arg(env, key);
  return v ? atoi(v) : 0;
}
static int coded_create(void **self, atom_env *env) {
  int rc = arg_int(env, "create");
  if (rc) return rc; /* a checker that fails without a message: *self is not used */
  coded *c = calloc(1, sizeof *c);
  if (!c) return ATOM_ENOMEM;
  c->event = arg_int(env, "event");
  c->finish = arg_int(env, "finish");
  *self = c;
  return 0;
}
static int coded_event(void *self, const atom_ev *ev) {
  (void)ev;
  return ((coded *)self)->event;
}
static int coded_finish(void *self) { return ((coded *)self)->finish; }
static void coded_destroy(void *self) { free(self); }
static const char *const coded_keys[] = {"create", "event", "finish", NULL};
static const atom_checker coded_checker = {
    ATOM_CHECKER_ABI_VERSION, ATOM_KIND_BIT(ATOM_READ), "coded", "test", coded_keys,
    coded_create, coded_event, coded_finish, coded_destroy, NULL, 0};

/* A stale message that must not survive a checker failure. */
static void make_stale_error(void) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_attach(s, "x"), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "atom_session_attach"));
}

#define EXPECT_CHECKER_ERROR(call, code, phrase)                                           \
  do {                                                                                     \
    make_stale_error();                                                                    \
    int rc_ = (call);                                                                      \
    ck_assert_msg(rc_ == (code), "%s returned %d", #call, rc_);                            \
    ck_assert_msg(strstr(atom_last_error(), (phrase)) != NULL, "message \"%s\" lacks \"%s\"", \
                  atom_last_error(), (phrase));                                            \
  } while (0)

START_TEST(create_positive_or_unknown_is_a_failure) {
  atom_session *s = tu_session((const char *const[]){NULL});
  EXPECT_CHECKER_ERROR(atom_session_attach_checker(s, &coded_checker, "create=1"),
                       ATOM_ECHECKER, "checker coded: create returned 1, which is not an error");
  EXPECT_CHECKER_ERROR(atom_session_attach_checker(s, &coded_checker, "create=-1000"),
                       ATOM_ECHECKER, "checker coded: create returned -1000");
  /* A known code without a message gets one naming the checker. */
  EXPECT_CHECKER_ERROR(atom_session_attach_checker(s, &coded_checker, "create=-8"),
                       ATOM_ELIMIT, "checker coded: create failed: a documented limit");
  ck_assert_int_eq(atom_session_attach_checker(s, &coded_checker, NULL), 0);
  atom_session_free(s);
}
END_TEST

static int push_read(atom_session *s) {
  atom_event e = {ATOM_READ, 0, 1, 7, 0};
  return atom_push(s, &e);
}

START_TEST(event_and_finish_codes_are_mapped) {
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &coded_checker, "event=5"), 0);
  EXPECT_CHECKER_ERROR(push_read(s), ATOM_ECHECKER, "checker coded: on_event returned 5");
  atom_session_free(s);

  s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &coded_checker, "event=-99"), 0);
  EXPECT_CHECKER_ERROR(push_read(s), ATOM_ECHECKER, "checker coded: on_event returned -99");
  atom_session_free(s);

  s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &coded_checker, "finish=3"), 0);
  ck_assert_int_eq(push_read(s), 0);
  EXPECT_CHECKER_ERROR(atom_finish(s), ATOM_ECHECKER, "checker coded: finish returned 3");
  atom_session_free(s);

  s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &coded_checker, "finish=-1"), 0);
  EXPECT_CHECKER_ERROR(atom_finish(s), ATOM_EINVAL, "checker coded: finish failed");
  atom_session_free(s);
}
END_TEST

Suite *atom_test_suite_plugins(void) {
  Suite *su = suite_create("plugins");
  TCase *tc = tcase_create("misbehaving");
  tcase_add_test(tc, report_without_transactions_is_deduplicated);
  tcase_add_test(tc, create_positive_or_unknown_is_a_failure);
  tcase_add_test(tc, event_and_finish_codes_are_mapped);
  suite_add_tcase(su, tc);
  return su;
}
