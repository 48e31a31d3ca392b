/* The one formatter of reports (lib/core/format.c) and fingerprints: templates, the cycle
 * story, runs, bounds, rendering with what the session knows at read time, describe_* with
 * small buffers, fingerprints stable across runs. Reports come from a scripted plugin checker
 * that reports, at finish, what the test planned from the events it received. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

Suite *atom_test_suite_format(void);

/* ---- the scripted checker ---- */

#define MAX_REC 256

/* What to report, as positions in the received events (offset by base). A transaction entry
 * names the received event that begins it (a BEGIN, or the only event of a unary one). */
typedef struct plan {
  const char *kind;
  const char *message;
  size_t base;
  size_t txns[80];
  size_t n_txns;
  size_t events[16];
  size_t n_events;
  atom_edge_ref edges[8];
  size_t n_edges;
  size_t vars[4]; /* events whose target is a named variable of the report */
  size_t n_vars;
} plan;

static plan the_plan;
static atom_ev rec[MAX_REC];
static size_t n_rec;
static int report_rc; /* what atom_env_report returned at finish */

static int scripted_create(void **self, atom_env *env) {
  *self = env;
  n_rec = 0;
  report_rc = 1;
  return 0;
}
static int scripted_event(void *self, const atom_ev *ev) {
  (void)self;
  if (n_rec < MAX_REC) rec[n_rec++] = *ev;
  return 0;
}
static int scripted_finish(void *self) {
  const plan *p = &the_plan;
  atom_txn_ref txns[80];
  atom_ev events[16];
  uint32_t vars[4];
  for (size_t i = 0; i < p->n_txns; i++) {
    const atom_ev *e = &rec[p->base + p->txns[i]];
    txns[i] = (atom_txn_ref){e->thread, e->kind != ATOM_BEGIN, e->index, e->loc};
  }
  for (size_t i = 0; i < p->n_events; i++) events[i] = rec[p->base + p->events[i]];
  for (size_t i = 0; i < p->n_vars; i++) vars[i] = rec[p->base + p->vars[i]].target;
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = p->kind ? p->kind : "test-cycle";
  spec.event_index = n_rec ? rec[n_rec - 1].index : 0;
  spec.txns = txns;
  spec.n_txns = p->n_txns;
  spec.events = events;
  spec.n_events = p->n_events;
  spec.vars = vars;
  spec.n_vars = p->n_vars;
  spec.message = p->message;
  spec.edges = p->edges;
  spec.n_edges = p->n_edges;
  report_rc = atom_env_report(self, &spec);
  return 0;
}
static void scripted_destroy(void *self) { (void)self; }
static const atom_checker scripted_checker = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_ACQUIRE) |
        ATOM_KIND_BIT(ATOM_RELEASE) | ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END),
    "scripted", "reports what the test planned", NULL, scripted_create, scripted_event,
    scripted_finish, scripted_destroy, NULL, 0, NULL};

/* One pushed event: kind, thread, target, loc, flags. */
typedef struct step {
  uint32_t kind;
  uint64_t thread, target, loc;
  uint32_t flags;
} step;

enum { B = ATOM_BEGIN, E = ATOM_END, R = ATOM_READ, W = ATOM_WRITE };

static void push_all(atom_session *s, const step *steps, size_t n) {
  for (size_t i = 0; i < n; i++) {
    atom_event ev = {steps[i].kind, steps[i].flags, steps[i].thread, steps[i].target,
                     steps[i].loc};
    ck_assert_msg(atom_push(s, &ev) == 0, "push %zu: %s", i, atom_last_error());
  }
}

/* A session with `before` checkers attached ahead of the scripted one (so its attach index
 * differs), fed steps, finished; names x (100), y (101), z (102) registered. */
static atom_session *run(const step *steps, size_t n, int before) {
  atom_session *s = tu_session((const char *const[]){NULL});
  for (int i = 0; i < before; i++) ck_assert_int_eq(atom_session_attach(s, "null"), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &scripted_checker, NULL), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 100, "x"), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 101, "y"), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 102, "z"), 0);
  push_all(s, steps, n);
  ck_assert_int_eq(atom_finish(s), 0);
  return s;
}

static const atom_report *only_report(atom_session *s) {
  ck_assert_msg(report_rc == 0, "atom_env_report: %d %s", report_rc, atom_last_error());
  ck_assert_uint_eq(atom_report_count(s), 1);
  return atom_report_get(s, 0);
}

/* T1 reads x, T2 writes x and y, T1 reads y: the two-transaction cycle of the issue. */
static const step two[] = {
    {B, 1, 0, 10, 0},   {R, 1, 100, 11, 0}, {B, 2, 0, 20, 0}, {W, 2, 100, 21, 0},
    {W, 2, 101, 22, 0}, {E, 2, 0, 23, 0},   {R, 1, 101, 12, 0}, {E, 1, 0, 13, 0}};

static void plan_two(void) {
  memset(&the_plan, 0, sizeof the_plan);
  the_plan.txns[0] = 0;
  the_plan.txns[1] = 2;
  the_plan.n_txns = 2;
  size_t ev[] = {1, 3, 4, 6};
  memcpy(the_plan.events, ev, sizeof ev);
  the_plan.n_events = 4;
  the_plan.edges[0] = (atom_edge_ref){0, 1, 0, 0};
  the_plan.edges[1] = (atom_edge_ref){2, 3, ATOM_EDGE_CLOSING, 0};
  the_plan.n_edges = 2;
  the_plan.vars[0] = 1;
  the_plan.vars[1] = 4;
  the_plan.n_vars = 2;
}

static void describe_two(atom_session *s, uint32_t line_of_21) {
  ck_assert_int_eq(atom_set_location(s, 10, "withdraw", "bank.c", 10), 0);
  ck_assert_int_eq(atom_set_location(s, 11, "withdraw", "bank.c", 11), 0);
  ck_assert_int_eq(atom_set_location(s, 12, "withdraw", "bank.c", 12), 0);
  ck_assert_int_eq(atom_set_location(s, 20, "deposit", "bank.c", 20), 0);
  ck_assert_int_eq(atom_set_location(s, 21, "deposit", "bank.c", line_of_21), 0);
  ck_assert_int_eq(atom_set_location(s, 22, "deposit", "bank.c", 22), 0);
}

START_TEST(two_transaction_cycle_story) {
  plan_two();
  atom_session *s = run(two, sizeof two / sizeof two[0], 0);
  const atom_report *r = only_report(s);
  ck_assert_str_eq(atom_report_message(r),
                   "T1's transaction at loc 10 (event 0) read x at loc 11, then T2's transaction "
                   "at loc 20 (event 2) wrote x at loc 21 and y at loc 22, then T1 read y at "
                   "loc 12: no serial order of the two transactions gives this");
  /* described after the report: the next reading uses the descriptions and names */
  describe_two(s, 21);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_THREAD, 1, "main"), 0);
  ck_assert_str_eq(atom_report_message(r),
                   "main's transaction at withdraw (event 0) read x at bank.c:11, then T2's "
                   "transaction at deposit (event 2) wrote x at line 21 and y at line 22, then "
                   "main read y at line 12: no serial order of the two transactions gives this");
  /* a variable renamed after the report */
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 101, "balance"), 0);
  ck_assert_ptr_nonnull(strstr(atom_report_message(r), "wrote x at line 21 and balance at line 22"));
  /* describe gives the same line, snprintf-style */
  char buf[512];
  int len = atom_report_describe(buf, sizeof buf, r);
  ck_assert_int_eq(len, (int)strlen(atom_report_message(r)));
  ck_assert_str_eq(buf, atom_report_message(r));
  atom_session_free(s);
}
END_TEST

START_TEST(three_transaction_cycle_story) {
  static const step three[] = {
      {B, 1, 0, 10, 0},   {W, 1, 100, 11, 0}, {B, 2, 0, 20, 0},   {R, 2, 100, 21, 0},
      {W, 2, 101, 22, 0}, {E, 2, 0, 23, 0},   {B, 3, 0, 30, 0},   {R, 3, 101, 31, 0},
      {W, 3, 102, 32, 0}, {E, 3, 0, 33, 0},   {R, 1, 102, 12, 0}, {E, 1, 0, 13, 0}};
  memset(&the_plan, 0, sizeof the_plan);
  size_t tx[] = {0, 2, 6}, ev[] = {1, 3, 4, 7, 8, 10};
  memcpy(the_plan.txns, tx, sizeof tx);
  the_plan.n_txns = 3;
  memcpy(the_plan.events, ev, sizeof ev);
  the_plan.n_events = 6;
  the_plan.edges[0] = (atom_edge_ref){0, 1, 0, 0};
  the_plan.edges[1] = (atom_edge_ref){2, 3, 0, 0};
  the_plan.edges[2] = (atom_edge_ref){4, 5, ATOM_EDGE_CLOSING, 0};
  the_plan.n_edges = 3;
  atom_session *s = run(three, sizeof three / sizeof three[0], 0);
  const atom_report *r = only_report(s);
  ck_assert_str_eq(atom_report_message(r),
                   "T1's transaction at loc 10 (event 0) wrote x at loc 11, then T2's "
                   "transaction at loc 20 (event 2) read x at loc 21 and wrote y at loc 22, then "
                   "T3's transaction at loc 30 (event 6) read y at loc 31 and wrote z at loc 32, "
                   "then T1 read z at loc 12: no serial order of these 3 transactions gives this");
  /* files: the first mention of a file is file:line, a change of file too */
  ck_assert_int_eq(atom_set_location(s, 11, "f", "a.c", 11), 0);
  ck_assert_int_eq(atom_set_location(s, 21, "g", "b.c", 21), 0);
  ck_assert_int_eq(atom_set_location(s, 22, "g", "b.c", 22), 0);
  ck_assert_int_eq(atom_set_location(s, 31, NULL, "a.c", 31), 0);
  ck_assert_int_eq(atom_set_location(s, 20, NULL, "b.c", 20), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_LOC, 30, "h"), 0);
  ck_assert_str_eq(atom_report_message(r),
                   "T1's transaction at loc 10 (event 0) wrote x at a.c:11, then T2's "
                   "transaction at b.c:20 (event 2) read x at line 21 and wrote y at line 22, then "
                   "T3's transaction at h (event 6) read y at a.c:31 and wrote z at loc 32, "
                   "then T1 read z at loc 12: no serial order of these 3 transactions gives this");
  atom_session_free(s);
}
END_TEST

/* A unary transaction in a cycle, and the acquire/release marks of READ/WRITE. */
START_TEST(unary_and_flags_in_a_cycle) {
  static const step steps[] = {{B, 1, 0, 10, 0},
                               {R, 1, 100, 11, ATOM_FLAG_ACQUIRE},
                               {W, 2, 100, 21, ATOM_FLAG_RELEASE},
                               {R, 1, 100, 12, 0},
                               {E, 1, 0, 13, 0}};
  memset(&the_plan, 0, sizeof the_plan);
  the_plan.txns[0] = 0;
  the_plan.txns[1] = 2;
  the_plan.n_txns = 2;
  size_t ev[] = {1, 2, 3};
  memcpy(the_plan.events, ev, sizeof ev);
  the_plan.n_events = 3;
  the_plan.edges[0] = (atom_edge_ref){0, 1, 0, 0};
  the_plan.edges[1] = (atom_edge_ref){1, 2, ATOM_EDGE_CLOSING, 0};
  the_plan.n_edges = 2;
  atom_session *s = run(steps, sizeof steps / sizeof steps[0], 0);
  const atom_report *r = only_report(s);
  ck_assert_str_eq(atom_report_message(r),
                   "T1's transaction at loc 10 (event 0) read x (acquire) at loc 11, then T2 "
                   "wrote x (release) at loc 21 outside any transaction, then T1 read x at loc "
                   "12: no serial order of the two transactions gives this");
  atom_event e;
  ck_assert_int_eq(atom_report_event(r, 1, &e, NULL), 0);
  ck_assert_uint_eq(e.flags, ATOM_FLAG_RELEASE);
  char buf[128];
  ck_assert_int_gt(atom_report_describe_txn(buf, sizeof buf, r, 1), 0);
  ck_assert_str_eq(buf, "T2's access outside any transaction at loc 21 (event 2)");
  ck_assert_int_gt(atom_report_describe_event(buf, sizeof buf, r, 0), 0);
  ck_assert_str_eq(buf, "T1 read x (acquire) at loc 11 (event 1)");
  atom_session_free(s);
}
END_TEST

START_TEST(templates_render_every_placeholder) {
  plan_two();
  the_plan.message = "{h0} and {h1}: {t1}; {e0}; {v0}, {v1} {{literal}} {t7} {e99} {v3}";
  atom_session *s = run(two, sizeof two / sizeof two[0], 0);
  const atom_report *r = only_report(s);
  ck_assert_str_eq(atom_report_message(r),
                   "T1 and T2: T2's transaction at loc 20 (event 2); T1 read x at loc 11 (event 1); "
                   "x, y {literal} (a transaction not kept) (an event not kept) "
                   "(a variable)");
  atom_session_free(s);
}
END_TEST

START_TEST(bad_templates_are_rejected) {
  static const char *const bad[] = {"{x0}", "{t}", "{t0", "a}b", "{T0}", "{t-1}", "{e0 }",
                                    "{{t0}", "{}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    plan_two();
    the_plan.message = bad[i];
    atom_session *s = run(two, sizeof two / sizeof two[0], 0);
    ck_assert_msg(report_rc == ATOM_EINVAL, "%s: %d", bad[i], report_rc);
    ck_assert_uint_eq(atom_report_count(s), 0);
    atom_session_free(s);
  }
  /* and a good one with braces is accepted */
  plan_two();
  the_plan.message = "{{}} {h0}";
  atom_session *s = run(two, sizeof two / sizeof two[0], 0);
  ck_assert_str_eq(atom_report_message(only_report(s)), "{} T1");
  atom_session_free(s);
}
END_TEST

/* T1 runs three transactions at loc 10, T2 one at 20. */
static const step runs[] = {{B, 1, 0, 10, 0}, {E, 1, 0, 19, 0}, {B, 1, 0, 10, 0},
                            {E, 1, 0, 19, 0}, {B, 1, 0, 10, 0}, {E, 1, 0, 19, 0},
                            {B, 2, 0, 20, 0}, {E, 2, 0, 29, 0}};

START_TEST(runs_of_transactions) {
  memset(&the_plan, 0, sizeof the_plan);
  size_t tx[] = {0, 2, 4, 6};
  memcpy(the_plan.txns, tx, sizeof tx);
  the_plan.n_txns = 4;
  atom_session *s = run(runs, sizeof runs / sizeof runs[0], 0);
  const atom_report *r = only_report(s);
  ck_assert_uint_eq(atom_report_txn_count(r), 2);
  uint64_t count, last;
  ck_assert_int_eq(atom_report_txn_run(r, 0, NULL, &count, &last), 0);
  ck_assert_uint_eq(count, 3);
  ck_assert_uint_eq(last, 4);
  ck_assert_str_eq(atom_report_message(r),
                   "test-cycle: T1's 3 transactions at loc 10 (T1@0 \xe2\x80\xa6 T1@4), T2's "
                   "transaction at loc 20 (event 6)");
  ck_assert_int_eq(atom_set_location(s, 10, "withdraw", "bank.c", 30), 0);
  char buf[128];
  int len = atom_report_describe_txn(buf, sizeof buf, r, 0);
  ck_assert_str_eq(buf, "T1: 3 transactions at withdraw at bank.c:30, T1@0 \xe2\x80\xa6 T1@4");
  ck_assert_int_eq(len, (int)strlen(buf));
  atom_session_free(s);
}
END_TEST

START_TEST(omitted_runs_are_counted) {
  memset(&the_plan, 0, sizeof the_plan);
  for (size_t i = 0; i < 70; i++) the_plan.txns[i] = i % 2 ? 6 : 0; /* T1, T2, T1, ... */
  the_plan.n_txns = 70;
  atom_session *s = run(runs, sizeof runs / sizeof runs[0], 0);
  const atom_report *r = only_report(s);
  ck_assert_uint_eq(atom_report_txn_count(r), ATOM_REPORT_MAX_TXNS);
  ck_assert_uint_eq(atom_report_txns_omitted(r), 70 - ATOM_REPORT_MAX_TXNS);
  const char *m = atom_report_message(r);
  const char *tail = " (\xe2\x80\xa6 and 6 more runs of transactions)";
  ck_assert_msg(strlen(m) > strlen(tail) && strcmp(m + strlen(m) - strlen(tail), tail) == 0,
                "message: %s", m);
  atom_session_free(s);
}
END_TEST

/* A run inside a cycle is introduced once, with its first and last begin. */
START_TEST(run_in_a_cycle_story) {
  static const step steps[] = {{B, 1, 0, 10, 0},   {W, 1, 100, 11, 0}, {E, 1, 0, 19, 0},
                               {B, 1, 0, 10, 0},   {R, 1, 101, 12, 0}, {E, 1, 0, 19, 0},
                               {B, 2, 0, 20, 0},   {R, 2, 100, 21, 0}, {W, 2, 101, 22, 0},
                               {E, 2, 0, 29, 0}};
  memset(&the_plan, 0, sizeof the_plan);
  size_t tx[] = {0, 3, 6}, ev[] = {1, 7, 8, 4};
  memcpy(the_plan.txns, tx, sizeof tx);
  the_plan.n_txns = 3;
  memcpy(the_plan.events, ev, sizeof ev);
  the_plan.n_events = 4;
  the_plan.edges[0] = (atom_edge_ref){0, 1, 0, 0};
  the_plan.edges[1] = (atom_edge_ref){2, 3, ATOM_EDGE_CLOSING, 0};
  the_plan.n_edges = 2;
  atom_session *s = run(steps, sizeof steps / sizeof steps[0], 0);
  const atom_report *r = only_report(s);
  ck_assert_uint_eq(atom_report_txn_count(r), 2);
  ck_assert_str_eq(atom_report_message(r),
                   "T1's 2 transactions at loc 10 (T1@0 \xe2\x80\xa6 T1@3) wrote x at loc 11, then "
                   "T2's transaction at loc 20 (event 6) read x at loc 21 and wrote y at loc 22, "
                   "then T1 read y at loc 12: no serial order of these 3 transactions gives this");
  atom_session_free(s);
}
END_TEST

/* A story too long for one line is cut in its middle: its conclusion and the count of the
 * runs left out stay. */
START_TEST(long_story_keeps_its_conclusion) {
  static const step steps[] = {{B, 1, 0, 10, 0}, {W, 1, 100, 11, 0}, {E, 1, 0, 19, 0},
                               {B, 2, 0, 20, 0}, {R, 2, 100, 21, 0}, {E, 2, 0, 29, 0}};
  memset(&the_plan, 0, sizeof the_plan);
  for (size_t i = 0; i < 70; i++) the_plan.txns[i] = i % 2 ? 3 : 0;
  the_plan.n_txns = 70;
  for (size_t i = 0; i < 16; i++) the_plan.events[i] = i % 2 ? 4 : 1;
  the_plan.n_events = 16;
  for (uint32_t i = 0; i < 8; i++) the_plan.edges[i] = (atom_edge_ref){2 * i, 2 * i + 1, 0, 0};
  the_plan.n_edges = 8;
  atom_session *s = run(steps, sizeof steps / sizeof steps[0], 0);
  const atom_report *r = only_report(s);
  char name[101];
  memset(name, 'n', 100);
  name[100] = '\0';
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 100, name), 0);
  const char *m = atom_report_message(r);
  const char *tail = "\xe2\x80\xa6 (\xe2\x80\xa6 and 6 more runs of transactions): no serial "
                     "order of these transactions gives this";
  ck_assert_uint_le(strlen(m), 1000);
  ck_assert_uint_ge(strlen(m), 990);
  ck_assert_msg(strcmp(m + strlen(m) - strlen(tail), tail) == 0, "message: %s", m);
  ck_assert_msg(strncmp(m, "T1's transaction at loc 10 (event 0) wrote nnn", 46) == 0, "message: %s", m);
  atom_session_free(s);
}
END_TEST

/* A message is one line of at most 1000 bytes, cut at a character with "…". */
START_TEST(messages_are_one_bounded_line) {
  plan_two();
  the_plan.message = "{v0} {v0}";
  atom_session *s = run(two, sizeof two / sizeof two[0], 0);
  const atom_report *r = only_report(s);
  char name[700];
  memset(name, 'a', sizeof name);
  memcpy(name, "a\nb\t", 4);
  memcpy(name + 600, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8); /* é: cut must not split one */
  name[sizeof name - 1] = '\0';
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 100, name), 0);
  const char *m = atom_report_message(r);
  ck_assert_uint_le(strlen(m), 1000);
  ck_assert_uint_ge(strlen(m), 996);
  ck_assert_ptr_null(strchr(m, '\n'));
  ck_assert_ptr_null(strchr(m, '\t'));
  ck_assert_int_eq(strncmp(m, "a b aaa", 7), 0);
  ck_assert_str_eq(m + strlen(m) - 3, "\xe2\x80\xa6");
  ck_assert_int_eq(atom_report_describe(NULL, 0, r), (int)strlen(m));
  /* a cut that would split a character backs up to its start */
  memcpy(name + 600, "aaaaaaaa", 8);
  memcpy(name + 296, "\xc3\xa9", 2); /* second copy's é: bytes 996..997 of the line */
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 100, name), 0);
  m = atom_report_message(r);
  ck_assert_uint_eq(strlen(m), 999);
  ck_assert_str_eq(m + 996, "\xe2\x80\xa6");
  atom_session_free(s);
}
END_TEST

START_TEST(describe_functions_have_snprintf_semantics) {
  plan_two();
  atom_session *s = run(two, sizeof two / sizeof two[0], 0);
  const atom_report *r = only_report(s);
  const char *full = "T2 wrote x at loc 21 (event 3)";
  char buf[8];
  ck_assert_int_eq(atom_report_describe_event(buf, sizeof buf, r, 1), (int)strlen(full));
  ck_assert_str_eq(buf, "T2 wrot");
  ck_assert_int_eq(atom_report_describe_event(NULL, 0, r, 1), (int)strlen(full));
  memset(buf, 'z', sizeof buf);
  ck_assert_int_eq(atom_report_describe_event(buf, 1, r, 1), (int)strlen(full));
  ck_assert_int_eq(buf[0], '\0');
  ck_assert_int_eq(buf[1], 'z');
  const char *txn = "T1's transaction at loc 10 (event 0)";
  ck_assert_int_eq(atom_report_describe_txn(buf, sizeof buf, r, 0), (int)strlen(txn));
  ck_assert_str_eq(buf, "T1's tr");
  ck_assert_int_eq(atom_report_describe(buf, sizeof buf, r), (int)strlen(atom_report_message(r)));
  ck_assert_str_eq(buf, "T1's tr");
  ck_assert_int_eq(atom_describe_location(buf, sizeof buf, s, 77), 6);
  ck_assert_str_eq(buf, "loc 77");
  ck_assert_int_eq(atom_set_location(s, 77, "f", "a.c", 3), 0);
  ck_assert_int_eq(atom_describe_location(NULL, 0, s, 77), (int)strlen("f at a.c:3"));
  ck_assert_int_eq(atom_set_location(s, 78, "g", NULL, 4), 0);
  char big[64];
  atom_describe_location(big, sizeof big, s, 78);
  ck_assert_str_eq(big, "g at line 4");
  ck_assert_int_eq(atom_set_location(s, 79, NULL, "b.c", 0), 0);
  atom_describe_location(big, sizeof big, s, 79);
  ck_assert_str_eq(big, "b.c");
  /* errors */
  ck_assert_int_eq(atom_report_describe_event(buf, sizeof buf, r, 4), ATOM_EINVAL);
  ck_assert_int_eq(atom_report_describe_txn(buf, sizeof buf, r, 2), ATOM_EINVAL);
  ck_assert_int_eq(atom_report_describe(NULL, 5, r), ATOM_EINVAL);
  ck_assert_int_eq(atom_report_describe(buf, sizeof buf, NULL), ATOM_EINVAL);
  ck_assert_int_eq(atom_describe_location(buf, sizeof buf, NULL, 1), ATOM_EINVAL);
  atom_session_free(s);
}
END_TEST

/* The same program run twice: other thread keys, other event indexes, other loc values (pcs
 * move between runs), another attach index; the same described locations. */
static uint64_t fingerprint_of(uint64_t key_shift, uint64_t loc_shift, size_t leading,
                               int before, int describe, uint32_t line_of_21) {
  step steps[16];
  size_t n = 0;
  for (size_t i = 0; i < leading; i++) steps[n++] = (step){R, 50, 103, 99, 0};
  for (size_t i = 0; i < sizeof two / sizeof two[0]; i++) {
    steps[n] = two[i];
    steps[n].thread += key_shift;
    steps[n].loc += loc_shift;
    n++;
  }
  plan_two();
  the_plan.base = leading;
  atom_session *s = run(steps, n, before);
  const atom_report *r = only_report(s);
  if (describe) {
    static const uint64_t locs[] = {10, 11, 12, 20, 21, 22};
    static const char *const fns[] = {"withdraw", "withdraw", "withdraw",
                                      "deposit",  "deposit",  "deposit"};
    for (size_t i = 0; i < 6; i++)
      ck_assert_int_eq(atom_set_location(s, locs[i] + loc_shift, fns[i], "bank.c",
                                         locs[i] == 21 ? line_of_21 : (uint32_t)locs[i]),
                       0);
  }
  uint64_t f = atom_report_fingerprint(r);
  ck_assert_uint_ne(f, 0);
  ck_assert_uint_eq(f, atom_report_fingerprint(r));
  atom_session_free(s);
  return f;
}

START_TEST(fingerprints_are_stable_across_runs) {
  uint64_t a = fingerprint_of(0, 0, 0, 0, 1, 21);
  ck_assert_uint_eq(a, fingerprint_of(40, 1000, 3, 2, 1, 21));
  /* a line of an edge's event differs: another bug */
  ck_assert_uint_ne(a, fingerprint_of(0, 0, 0, 0, 1, 99));
  /* undescribed: the loc values stand for themselves */
  uint64_t u = fingerprint_of(0, 0, 0, 0, 0, 0);
  ck_assert_uint_eq(u, fingerprint_of(7, 0, 2, 1, 0, 0));
  ck_assert_uint_ne(u, fingerprint_of(0, 1000, 0, 0, 0, 0));
  ck_assert_uint_ne(u, a);
  /* the kind is part of it */
  plan_two();
  the_plan.kind = "other-kind";
  atom_session *s = run(two, sizeof two / sizeof two[0], 0);
  ck_assert_uint_ne(atom_report_fingerprint(only_report(s)), u);
  atom_session_free(s);
  ck_assert_uint_eq(atom_report_fingerprint(NULL), 0);
}
END_TEST

Suite *atom_test_suite_format(void) {
  Suite *s = suite_create("format");
  TCase *c = tcase_create("format");
  tcase_add_test(c, two_transaction_cycle_story);
  tcase_add_test(c, three_transaction_cycle_story);
  tcase_add_test(c, unary_and_flags_in_a_cycle);
  tcase_add_test(c, templates_render_every_placeholder);
  tcase_add_test(c, bad_templates_are_rejected);
  tcase_add_test(c, runs_of_transactions);
  tcase_add_test(c, omitted_runs_are_counted);
  tcase_add_test(c, run_in_a_cycle_story);
  tcase_add_test(c, long_story_keeps_its_conclusion);
  tcase_add_test(c, messages_are_one_bounded_line);
  tcase_add_test(c, describe_functions_have_snprintf_semantics);
  tcase_add_test(c, fingerprints_are_stable_across_runs);
  suite_add_tcase(s, c);
  return s;
}
