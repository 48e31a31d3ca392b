/* Allocation failure: a representative run (every built-in checker attached, names, atomic sets,
 * a trace with violations, locks, fork/join, store buffers, finish, reports, statistics) is
 * repeated with the allocator failing its Nth allocation, for every N up to the number of
 * allocations the run makes. Every call must succeed or return ATOM_ENOMEM, the session must
 * still be freeable, and nothing may leak. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

Suite *atom_test_suite_alloc(void);

typedef struct run {
  int bad;          /* a call returned something other than 0 / ATOM_ENOMEM */
  char what[160];
} run;

static void check_rc(run *r, int rc, const char *call) {
  if (rc == 0 || rc == ATOM_ENOMEM || r->bad) return;
  r->bad = 1;
  snprintf(r->what, sizeof r->what, "%s returned %s: %s", call, atom_error_name(rc),
           atom_last_error());
}
#define CALL(r, call) check_rc((r), (call), #call)

/* Every built-in checker (atom_checker_builtin: a new one is covered without a change here),
 * plus these variants whose code paths differ from the default's. */
static const char *const variants[] = {"aerodrome:variant=basic", "commit-node:mode=view",
                                       "block:scope=all", "reduction:lockset=eraser",
                                       "race-automata:sets=one", "tso:mode=trace", NULL};

/* A push that fails with ATOM_ENOMEM changed nothing: a program retries it (the allocator fails
 * one allocation only, so the retry goes through). */
static void push_retry(run *r, atom_session *s, uint32_t kind, uint64_t t, uint64_t x,
                       uint64_t loc) {
  atom_event e = {kind, 0, t, x, loc};
  int rc = atom_push(s, &e);
  if (rc == ATOM_ENOMEM) rc = atom_push(s, &e);
  check_rc(r, rc, atom_kind_name((int)kind));
}

/* The events: two threads with a conflict cycle, locks, nesting, a forked child joined
 * inside a transaction, writes with commits and a fence, and events outside transactions. */
static void push_run(run *r, atom_session *s) {
  for (uint64_t round = 0; round < 2; round++) {
    uint64_t a = 1 + round * 10, b = 2 + round * 10, c = 3 + round * 10;
    push_retry(r, s, ATOM_BEGIN, a, 0, 1);
    push_retry(r, s, ATOM_BEGIN, b, 0, 2);
    push_retry(r, s, ATOM_WRITE, a, 100, 3);
    push_retry(r, s, ATOM_READ, b, 100, 4);
    push_retry(r, s, ATOM_ACQUIRE, b, 50, 5);
    push_retry(r, s, ATOM_ACQUIRE, b, 50, 5);
    push_retry(r, s, ATOM_WRITE, b, 101, 6);
    push_retry(r, s, ATOM_RELEASE, b, 50, 7);
    push_retry(r, s, ATOM_RELEASE, b, 50, 7);
    push_retry(r, s, ATOM_READ, a, 101, 8);
    push_retry(r, s, ATOM_BEGIN, a, 0, 9);
    push_retry(r, s, ATOM_FORK, a, c, 10);
    push_retry(r, s, ATOM_WRITE, c, 102, 11);
    push_retry(r, s, ATOM_COMMIT, c, 102, 12);
    push_retry(r, s, ATOM_WRITE, c, 103, 13);
    push_retry(r, s, ATOM_FENCE, c, 0, 14);
    push_retry(r, s, ATOM_JOIN, a, c, 15);
    push_retry(r, s, ATOM_END, a, 0, 16);
    push_retry(r, s, ATOM_END, a, 0, 17);
    push_retry(r, s, ATOM_READ, b, 102, 18);
    push_retry(r, s, ATOM_END, b, 0, 19);
    push_retry(r, s, ATOM_WRITE, a, 103, 20);
  }
}

/* One representative run with allocation fail_at failing; returns the allocation count. */
static long representative_run(long fail_at, run *r) {
  tu_failing c = tu_failing_at(fail_at);
  atom_options o;
  tu_failing_options(&o, &c);
  o.max_reports = 3;
  atom_session *s = NULL;
  int rc = atom_session_new(&s, &o);
  CALL(r, rc);
  if (rc == 0) {
    for (size_t i = 0; atom_checker_builtin(i); i++)
      CALL(r, atom_session_attach(s, atom_checker_builtin(i)->name));
    for (size_t i = 0; variants[i]; i++) CALL(r, atom_session_attach(s, variants[i]));
    CALL(r, atom_set_name(s, ATOM_SPACE_THREAD, 1, "main"));
    CALL(r, atom_set_name(s, ATOM_SPACE_VAR, 100, "x"));
    CALL(r, atom_set_name(s, ATOM_SPACE_VAR, 100, "x.renamed"));
    CALL(r, atom_declare_set(s, 100, 7));
    CALL(r, atom_declare_set(s, 101, 7));
    push_run(r, s);
    CALL(r, atom_finish(s));
    CALL(r, atom_finish(s));
    for (size_t i = 0; i < atom_report_count(s); i++) {
      const atom_report *rep = atom_report_get(s, i);
      if (!atom_report_message(rep) || !atom_report_kind(rep)) r->bad = 1;
    }
    for (size_t i = 0; i < atom_checker_count(s); i++) {
      atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
      CALL(r, atom_checker_stats_get(s, i, &st));
    }
    atom_session_free(s);
  }
  if (c.live != 0 && !r->bad) {
    r->bad = 1;
    snprintf(r->what, sizeof r->what, "%ld blocks leaked", c.live);
  }
  return c.calls;
}

START_TEST(every_allocation_can_fail) {
  run r = {0, ""};
  long total = representative_run(0, &r);
  ck_assert_msg(!r.bad, "without failures: %s", r.what);
  ck_assert_int_gt(total, 50);
  long step = getenv("ATOM_UNDER_VALGRIND") ? 7 : 1; /* valgrind: every 7th, still all kinds */
  for (long n = 1; n <= total + 1; n += step) {
    run f = {0, ""};
    representative_run(n, &f);
    ck_assert_msg(!f.bad, "allocation %ld of %ld failing: %s", n, total, f.what);
  }
}
END_TEST

Suite *atom_test_suite_alloc(void) {
  Suite *s = suite_create("alloc");
  TCase *tc = tcase_create("alloc");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, every_allocation_can_fail);
  suite_add_tcase(s, tc);
  return s;
}
