/* Suppression rules (lib/core/suppress.c): every rule type, wildcards and anchors, comments,
 * parse errors with their line numbers, matching through stacks and location names. */
#include <check.h>
#include <string.h>

#include "util.h"

Suite *atom_test_suite_suppress(void);

static atom_suppressions *parse(const char *text) {
  atom_suppressions *sp = NULL;
  int err = atom_suppressions_parse(&sp, text, strlen(text));
  ck_assert_msg(err == 0, "%s: %s", text, atom_last_error());
  ck_assert_ptr_nonnull(sp);
  return sp;
}

static int matches(const char *text, const atom_report *r) {
  atom_suppressions *sp = parse(text);
  int hit = atom_suppressions_match(sp, r);
  atom_suppressions_free(sp);
  return hit;
}

/* A checker that reports, at finish, the first two transactions it saw with every access as a
 * witness: what a cycle report names, without depending on a real checker's choice. */
typedef struct lister {
  atom_env *env;
  atom_txn_ref txns[2];
  size_t n_txns;
  atom_ev events[16];
  size_t n_events;
} lister;
static lister the_lister;
static int lister_create(void **self, atom_env *env) {
  memset(&the_lister, 0, sizeof the_lister);
  the_lister.env = env;
  *self = &the_lister;
  return 0;
}
static int lister_event(void *self, const atom_ev *ev) {
  lister *l = self;
  if (ev->kind == ATOM_BEGIN && l->n_txns < 2)
    l->txns[l->n_txns++] = (atom_txn_ref){ev->thread, 0, ev->index, ev->loc};
  else if ((ev->kind == ATOM_READ || ev->kind == ATOM_WRITE) && l->n_events < 16)
    l->events[l->n_events++] = *ev;
  return 0;
}
static int lister_finish(void *self) {
  lister *l = self;
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "conflict-cycle";
  spec.txns = l->txns;
  spec.n_txns = l->n_txns;
  spec.events = l->events;
  spec.n_events = l->n_events;
  return atom_env_report(l->env, &spec);
}
static void lister_destroy(void *self) { (void)self; }
static const atom_checker lister_checker = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_BEGIN),
    "cyclefinder", "test", NULL, lister_create, lister_event, lister_finish, lister_destroy,
    NULL, 0, NULL};

/* T1's transaction at loc 10 reads x at 11 and y at 12, T2's at loc 20 writes both at 21 and
 * 22. */
static atom_session *cycle(void) {
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &lister_checker, NULL), 0);
  ck_assert_int_eq(tu_feed_std(s, "T1|begin|10\nT1|r(x)|11\nT2|begin|20\nT2|w(x)|21\n"
                                  "T2|w(y)|22\nT2|end|23\nT1|r(y)|12\nT1|end|13\n", NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  return s;
}

START_TEST(checker_and_kind_rules_match_the_whole_name) {
  atom_session *s = cycle();
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_str_eq(atom_report_kind(r), "conflict-cycle");
  ck_assert(matches("checker:cyclefinder", r));
  ck_assert(matches("checker:cycle*", r));
  ck_assert(!matches("checker:cycle", r));
  ck_assert(!matches("checker:velodrome", r));
  ck_assert(matches("kind:conflict-cycle", r));
  ck_assert(matches("kind:^conflict-cycle$", r));
  ck_assert(matches("kind:*cycle", r));
  ck_assert(!matches("kind:conflict", r));
  ck_assert(!matches("kind:tso-cycle", r));
  atom_session_free(s);
}
END_TEST

START_TEST(atomic_rules_match_a_transaction_function) {
  atom_session *s = cycle();
  const atom_report *r = atom_report_get(s, 0);
  ck_assert(!matches("atomic:withdraw", r));
  ck_assert_int_eq(atom_set_location(s, 10, "bank_withdraw", "bank.c", 10), 0);
  ck_assert(matches("atomic:withdraw", r));       /* substring */
  ck_assert(matches("atomic:^bank_", r));         /* anchored at the start */
  ck_assert(matches("atomic:draw$", r));          /* anchored at the end */
  ck_assert(matches("atomic:^bank*draw$", r));    /* wildcard */
  ck_assert(!matches("atomic:^withdraw", r));
  ck_assert(!matches("atomic:bank$", r));
  ck_assert(!matches("atomic:bank.c", r));        /* a file is not a function */
  /* the event locations' functions are not transactions */
  ck_assert_int_eq(atom_set_location(s, 21, "helper", "bank.c", 21), 0);
  ck_assert(!matches("atomic:helper", r));
  ck_assert(matches("fn:helper", r));
  /* the headline frame of the begin's stack counts */
  uint64_t frames[] = {30, 31};
  ck_assert_int_eq(atom_set_location(s, 30, "transfer", "bank.c", 50), 0);
  ck_assert_int_eq(atom_set_location(s, 31, "main", "main.c", 5), 0);
  ck_assert_int_eq(atom_set_stack(s, 20, frames, 2), 0);
  ck_assert(matches("atomic:transfer", r));
  ck_assert(!matches("atomic:^main$", r));
  /* a registered location name stands for the function */
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_LOC, 10, "ignored"), 0);
  ck_assert(!matches("atomic:ignored", r)); /* a described function wins */
  atom_session_free(s);
  s = cycle();
  r = atom_report_get(s, 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_LOC, 10, "Account.withdraw"), 0);
  ck_assert(matches("atomic:Account.withdraw", r));
  atom_session_free(s);
}
END_TEST

START_TEST(fn_and_file_rules_search_every_frame) {
  atom_session *s = cycle();
  const atom_report *r = atom_report_get(s, 0);
  ck_assert(!matches("fn:*", r)); /* nothing is described yet: no function at all */
  ck_assert(!matches("file:*", r));
  uint64_t frames[] = {40, 41, 42};
  ck_assert_int_eq(atom_set_location(s, 40, "write_y", "store.c", 7), 0);
  ck_assert_int_eq(atom_set_location(s, 41, "libc_memcpy", "/usr/include/string.h", 9), 0);
  ck_assert_int_eq(atom_set_location(s, 42, "main", "app/main.c", 3), 0);
  ck_assert_int_eq(atom_set_stack(s, 22, frames, 3), 0);
  ck_assert(matches("fn:memcpy", r));
  ck_assert(matches("fn:^main$", r));
  ck_assert(!matches("fn:^mai$", r));
  ck_assert(matches("file:/usr/include/", r));
  ck_assert(matches("file:^app/*.c$", r));
  ck_assert(!matches("file:^main.c", r));
  ck_assert(matches("fn:*", r));
  /* a location name is a function for fn:, never a file */
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_LOC, 12, "reader.c:12"), 0);
  ck_assert(matches("fn:reader", r));
  ck_assert(!matches("file:reader", r));
  atom_session_free(s);
}
END_TEST

START_TEST(comments_blank_lines_and_several_rules) {
  atom_session *s = cycle();
  const atom_report *r = atom_report_get(s, 0);
  const char *text = "# known bugs\n\n   \r\n  kind:tso-cycle  \r\n\t# indented comment\n"
                     "checker : cyclefinder\n";
  ck_assert(matches(text, r)); /* the second rule does; spaces around parts are trimmed */
  ck_assert(!matches("# checker:cyclefinder\n", r));
  ck_assert(!matches("", r));
  /* text need not be NUL-terminated: only len bytes count */
  atom_suppressions *sp = NULL;
  ck_assert_int_eq(atom_suppressions_parse(&sp, "kind:tso-cycle\nchecker:cyclefinder", 15), 0);
  ck_assert(!atom_suppressions_match(sp, r));
  atom_suppressions_free(sp);
  ck_assert(!atom_suppressions_match(NULL, r));
  atom_suppressions_free(NULL);
  atom_session_free(s);
}
END_TEST

static void expect_error(const char *text, const char *message) {
  atom_suppressions *sp = (atom_suppressions *)&sp; /* must be cleared on error */
  ck_assert_int_eq(atom_suppressions_parse(&sp, text, strlen(text)), ATOM_EINVAL);
  ck_assert_ptr_null(sp);
  ck_assert_msg(strcmp(atom_last_error(), message) == 0, "%s: got \"%s\"", text,
                atom_last_error());
}

START_TEST(malformed_lines_name_their_line) {
  expect_error("fn:a\nfunction:b\n",
               "line 2: unknown suppression type \"function\" (expected atomic, fn, file, "
               "checker or kind)");
  expect_error("# c\n\nnothing here\n", "line 3: expected TYPE:PATTERN, got \"nothing here\"");
  expect_error("fn:\n", "line 1: empty pattern after \"fn:\"");
  expect_error("fn:ok\nfile: ^$ \n", "line 2: empty pattern after \"file:\"");
  expect_error("atomic:x\r\nkind:\n", "line 2: empty pattern after \"kind:\"");
  expect_error(":x\n", "line 1: unknown suppression type \"\" (expected atomic, fn, file, "
                       "checker or kind)");
  atom_suppressions *sp = NULL;
  ck_assert_int_eq(atom_suppressions_parse(&sp, "fn:a\0b", 6), ATOM_EINVAL);
  ck_assert_str_eq(atom_last_error(), "line 1: a NUL character in a suppression");
  ck_assert_int_eq(atom_suppressions_parse(NULL, "fn:a", 4), ATOM_EINVAL);
  ck_assert_int_eq(atom_suppressions_parse(&sp, NULL, 4), ATOM_EINVAL);
  ck_assert_int_eq(atom_suppressions_parse(&sp, NULL, 0), 0); /* no rules */
  ck_assert_ptr_nonnull(sp);
  atom_suppressions_free(sp);
}
END_TEST

Suite *atom_test_suite_suppress(void) {
  Suite *s = suite_create("suppress");
  TCase *c = tcase_create("suppress");
  tcase_add_test(c, checker_and_kind_rules_match_the_whole_name);
  tcase_add_test(c, atomic_rules_match_a_transaction_function);
  tcase_add_test(c, fn_and_file_rules_search_every_frame);
  tcase_add_test(c, comments_blank_lines_and_several_rules);
  tcase_add_test(c, malformed_lines_name_their_line);
  suite_add_tcase(s, c);
  return s;
}
