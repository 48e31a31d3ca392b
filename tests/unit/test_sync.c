/* Synchronizing accesses (r.acq / w.rel, doc/api.md "Synchronization") in the predictive
 * checkers: an FFT-shaped trace (phases separated by a barrier) and a flag handoff give no
 * predictive report with the flags, and a report without them (so these tests can fail); the
 * online checkers' verdicts do not depend on the flags. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

Suite *atom_test_suite_sync(void);

static const char *const predictive[] = {
    "commit-node", "commit-node:mode=view", "block", "block:scope=all", "reduction",
    "reduction:lockset=eraser"};
enum { N_PRED = sizeof predictive / sizeof predictive[0] };

/* Reports of one checker spec on an STD text. */
static size_t reports_of(const char *spec, const char *text) {
  const char *specs[] = {spec, NULL};
  atom_session *s = tu_session(specs);
  uint64_t rejected = 0;
  ck_assert_int_eq(tu_feed_std(s, text, &rejected), 0);
  ck_assert_uint_eq(rejected, 0);
  size_t n = tu_report_count(s, 0);
  atom_session_free(s);
  return n;
}

/* The same text with r.acq / w.rel turned into plain r / w. */
static void unflag(const char *in, char *out, size_t size) {
  size_t o = 0;
  for (const char *p = in; *p && o + 1 < size; p++) {
    if ((p[0] == 'r' && !strncmp(p + 1, ".acq(", 5)) || (p[0] == 'w' && !strncmp(p + 1, ".rel(", 5))) {
      out[o++] = p[0];
      p += 4;
      continue;
    }
    out[o++] = *p;
  }
  out[o] = '\0';
}

/* SPLASH-2 FFT's shape: n threads, three phases separated by one barrier b (arrival r.acq(b)
 * w.rel(b), departure r.acq(b)); in phase k each thread's work is a transaction that reads what
 * the other threads wrote in phase k-1 and writes its own slot of a double buffer. */
static void fft_trace(int n, char *buf, size_t size) {
  size_t o = 0;
  int loc = 1;
#define PUT(...) (o += (size_t)snprintf(buf + o, size - o, __VA_ARGS__))
  for (int k = 0; k < 3; k++) {
    for (int t = 1; t <= n; t++) {
      PUT("t%d|begin|%d\n", t, loc++);
      for (int u = 1; u <= n && k; u++)
        if (u != t) PUT("t%d|r(%c%d)|%d\n", t, k % 2 ? 'A' : 'B', u, loc++);
      PUT("t%d|w(%c%d)|%d\n", t, k % 2 ? 'B' : 'A', t, loc++);
      PUT("t%d|end|%d\n", t, loc++);
    }
    if (k == 2) break;
    for (int t = 1; t <= n; t++) {
      PUT("t%d|r.acq(b)|%d\n", t, loc++);
      PUT("t%d|w.rel(b)|%d\n", t, loc++);
    }
    for (int t = 1; t <= n; t++) PUT("t%d|r.acq(b)|%d\n", t, loc++);
  }
#undef PUT
  ck_assert_uint_lt(o, size);
}

/* With flags: no predictive checker reports. Without: at least one does. Online checkers: the
 * same verdict either way. */
static void check_pair(const char *flagged, const char *what) {
  static char plain[1 << 14];
  unflag(flagged, plain, sizeof plain);
  ck_assert_ptr_null(strstr(plain, ".acq"));
  size_t plain_reports = 0;
  for (size_t i = 0; i < N_PRED; i++) {
    size_t nf = reports_of(predictive[i], flagged);
    ck_assert_msg(nf == 0, "%s: %s reports %zu with the flags", what, predictive[i], nf);
    plain_reports += reports_of(predictive[i], plain);
  }
  ck_assert_msg(plain_reports > 0, "%s: no predictive checker reports without the flags", what);
  static const char *const online[] = {"aerodrome", "velodrome"};
  for (size_t i = 0; i < 2; i++)
    ck_assert_uint_eq(reports_of(online[i], flagged), reports_of(online[i], plain));
}

START_TEST(fft_barrier_phases) {
  static char text[1 << 14];
  for (int n = 2; n <= 4; n++) {
    fft_trace(n, text, sizeof text);
    char what[32];
    snprintf(what, sizeof what, "fft, %d threads", n);
    check_pair(text, what);
  }
}
END_TEST

/* T1 publishes data and raises a flag; T2 waits for the flag, then reads the data. */
START_TEST(flag_handoff) {
  static const char *const cases[] = {
      /* both transactions */
      "t1|begin|1\nt1|w(d1)|2\nt1|w(d2)|3\nt1|w.rel(flag)|4\nt1|end|5\n"
      "t2|begin|6\nt2|r.acq(flag)|7\nt2|r(d1)|8\nt2|r(d2)|9\nt2|end|10\n",
      /* the producer outside any transaction */
      "t1|w(d1)|2\nt1|w(d2)|3\nt1|w.rel(flag)|4\n"
      "t2|begin|6\nt2|r.acq(flag)|7\nt2|r(d1)|8\nt2|r(d2)|9\nt2|end|10\n",
      /* the consumer spins on the flag first (reads the initial value), then takes the data in
       * a transaction (a transaction that spins is not atomic: aerodrome reports that one) */
      "t2|r.acq(flag)|7\nt1|begin|1\nt1|w(d1)|2\nt1|w(d2)|3\nt1|w.rel(flag)|4\n"
      "t1|end|5\nt2|r.acq(flag)|7\nt2|begin|6\nt2|r(d1)|8\nt2|r(d2)|9\nt2|end|10\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char what[32];
    snprintf(what, sizeof what, "handoff case %zu", i);
    check_pair(cases[i], what);
  }
}
END_TEST

/* Sync order must not hide what it does not order: a transaction whose second access
 * conflicts with a thread that synchronized with its first part is still reported. */
START_TEST(sync_keeps_real_violations) {
  static const char text[] =
      "t1|begin|1\nt1|w(x)|2\nt1|w.rel(f)|3\nt1|r(y)|4\nt1|end|5\n"
      "t2|begin|6\nt2|r.acq(f)|7\nt2|w(y)|8\nt2|end|9\n";
  ck_assert_uint_ge(reports_of("commit-node", text), 1);
  ck_assert_uint_ge(reports_of("reduction", text), 1);
}
END_TEST

/* A work queue's condition variable under its mutex: each lock block waits (r.acq(c) after the
 * wait returned, the mutex held again) and signals (w.rel(c) before unlocking). The mutex keeps
 * the blocks apart, so every interleaving is serial: no predictive report, with the lock blocks
 * as units (commit-node once linked the sync order between the leaves, past the common lock,
 * and reported the middle block). */
START_TEST(condition_variable_under_its_mutex) {
  static const char text[] =
      "t2|acq(m)|1\nt2|w.rel(c)|2\nt2|rel(m)|3\n"
      "t0|acq(m)|4\nt0|r.acq(c)|5\nt0|w.rel(c)|6\nt0|rel(m)|7\n"
      "t3|acq(m)|8\nt3|r.acq(c)|9\nt3|rel(m)|10\n";
  for (int i = 0; i < N_PRED; i++) ck_assert_msg(reports_of(predictive[i], text) == 0, "%s", predictive[i]);
}
END_TEST

Suite *atom_test_suite_sync(void) {
  Suite *s = suite_create("sync");
  TCase *t = tcase_create("demos");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, fft_barrier_phases);
  tcase_add_test(t, flag_handoff);
  tcase_add_test(t, sync_keeps_real_violations);
  tcase_add_test(t, condition_variable_under_its_mutex);
  suite_add_tcase(s, t);
  return s;
}
