/* Batch dispatch: atom_push_many in blocks of any size is the same as atom_push event by
 * event, for every built-in checker and for test checkers with and without on_events: the
 * same reports, statuses, events received and error codes (with their messages), also with
 * ill-formed events inside a block and a checker that runs out of memory inside a block. So
 * is atom__push_many_bounded (a trace reader's push, its keys vouched for) with the trace's
 * true bounds. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/push_check.h"
#include "core/push_vouched.h"
#include "randtrace.h"
#include "util.h"

Suite *atom_test_suite_batch(void);

/* ---- a recorder that takes blocks ---- */

static size_t block_calls; /* on_events calls, so that a test sees batching really happen */

static int blockrec_on_events(void *self, const atom_ev *ev, size_t n, size_t *failed) {
  block_calls++;
  for (size_t i = 0; i < n; i++) {
    int rc = tu_recorder_checker.on_event(self, &ev[i]);
    if (rc) {
      *failed = i;
      return rc;
    }
  }
  return 0;
}

/* The recorder with on_events; mask_subset: only some kinds (the session filters the block). */
static atom_checker blockrec_vtable(int mask_subset) {
  atom_checker vt = tu_recorder_checker;
  vt.abi_version = ATOM_CHECKER_ABI_VERSION;
  vt.on_events = blockrec_on_events;
  if (mask_subset)
    vt.event_mask = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) |
                    ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_JOIN);
  return vt;
}

/* ---- one run, summed up as text ---- */

typedef struct text {
  char *s;
  size_t len, cap;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  ck_assert_int_ge(n, 0);
  size_t len = strlen(line);
  if (t->len + len + 1 > t->cap) {
    t->cap = (t->len + len + 1) * 2;
    t->s = realloc(t->s, t->cap);
    ck_assert_ptr_nonnull(t->s);
  }
  memcpy(t->s + t->len, line, len + 1);
  t->len += len;
}

/* ---- a checker that reads the id tables during dispatch ----
 *
 * For every event it gets, keyrec writes to keyrec_out the event with its keys and names as
 * atom_env_key() and atom_env_name() give them, and asserts that every id of the event is below
 * atom_env_count(). Taking events one at a time (keyrec_vtable(0)) it also writes the counts, which must be what
 * atom_push makes them; taking blocks (keyrec_vtable(1)) it asserts that nothing is interned
 * during the call and counts in keyrec_new_in_blocks the variables and locks it first met
 * inside a block (interned by the block fill, doc/api.md). It allocates nothing from the
 * session, so that a failing allocator fails the session's interning only. */

static text *keyrec_out;
static size_t keyrec_new_in_blocks;

typedef struct keyrec {
  atom_env *env;
  int64_t max_id[4]; /* the largest id met per space, -1: none */
  int counts;        /* keyrec_vtable(0): write the counts (it takes single events) */
} keyrec;

static int keyrec_create(void **self, atom_env *env) {
  keyrec *k = calloc(1, sizeof *k);
  ck_assert_ptr_nonnull(k);
  k->env = env;
  for (int i = 0; i < 4; i++) k->max_id[i] = -1;
  *self = k;
  return 0;
}
static int keyrec_create_counts(void **self, atom_env *env) {
  keyrec_create(self, env);
  ((keyrec *)*self)->counts = 1;
  return 0;
}
static void keyrec_destroy(void *self) { free(self); }

static void keyrec_event(keyrec *k, const atom_ev *ev, int in_block) {
  int space = atom_kind_space(ev->kind);
  ck_assert_uint_lt(ev->thread, atom_env_count(k->env, ATOM_SPACE_THREAD));
  uint64_t key = 0;
  const char *name = NULL;
  if (space) {
    ck_assert_uint_lt(ev->target, atom_env_count(k->env, space));
    key = atom_env_key(k->env, space, ev->target);
    name = atom_env_name(k->env, space, ev->target);
    if ((int64_t)ev->target > k->max_id[space]) {
      if (in_block && space != ATOM_SPACE_THREAD) keyrec_new_in_blocks++;
      k->max_id[space] = ev->target;
    }
  }
  add(keyrec_out, "k %u %llu %llu %s @%llu", ev->kind,
      (unsigned long long)atom_env_key(k->env, ATOM_SPACE_THREAD, ev->thread),
      (unsigned long long)key, name ? name : "-", (unsigned long long)ev->index);
  if (k->counts)
    add(keyrec_out, " n %u %u %u", atom_env_count(k->env, ATOM_SPACE_THREAD),
        atom_env_count(k->env, ATOM_SPACE_VAR), atom_env_count(k->env, ATOM_SPACE_LOCK));
  add(keyrec_out, "\n");
}
static int keyrec_on_event(void *self, const atom_ev *ev) {
  keyrec_event(self, ev, 0);
  return 0;
}
static int keyrec_on_events(void *self, const atom_ev *ev, size_t n, size_t *failed) {
  keyrec *k = self;
  (void)failed;
  uint32_t counts[4];
  for (int sp = 1; sp < 4; sp++) counts[sp] = atom_env_count(k->env, sp);
  for (size_t i = 0; i < n; i++) keyrec_event(k, &ev[i], 1);
  for (int sp = 1; sp < 4; sp++) ck_assert_uint_eq(counts[sp], atom_env_count(k->env, sp));
  return 0;
}

static atom_checker keyrec_vtable(int batched) {
  atom_checker vt;
  ck_assert_int_eq(atom_checker_init(&vt, ATOM_CHECKER_ABI_VERSION), 0);
  vt.name = "keyrec";
  vt.event_mask = 0x3feu; /* READ to FENCE: no COMMIT, no store buffers */
  vt.create = batched ? keyrec_create : keyrec_create_counts;
  vt.on_event = keyrec_on_event;
  vt.destroy = keyrec_destroy;
  if (batched) vt.on_events = keyrec_on_events;
  return vt;
}

/* Which checkers a run attaches. NO_COMMIT: the recorders do not take COMMIT, so that no
 * checker does and the session keeps no store buffers (the fills without them: plain, and
 * with keys vouched for by atom__push_many_bounded). */
enum { WITH_TSO = 1, FAIL_RECORDERS = 2, NO_COMMIT = 4, ONLY_BLOCKS = 8 };

/* ONLY_BLOCKS: only checkers that take blocks (null, aerodrome, velodrome, the block
 * recorders without COMMIT, keyrec), so that blocks intern new keys; the others attach keyrec
 * taking events one at a time. A few keys have names. */
static atom_session *new_session(int config, unsigned fail_a, unsigned fail_b) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 2, "x2"), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, 1000, "x1000"), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_LOCK, 1, "m1"), 0);
  if (config & ONLY_BLOCKS) {
    static const char *const batched[] = {"null", "aerodrome", "aerodrome:variant=basic",
                                          "velodrome", NULL};
    atom_checker all = blockrec_vtable(0), some = blockrec_vtable(1), k = keyrec_vtable(1);
    all.event_mask &= ~ATOM_KIND_BIT(ATOM_COMMIT);
    char args[64];
    snprintf(args, sizeof args, "fail_at=%u", (config & FAIL_RECORDERS) ? fail_b : 0);
    ck_assert_int_eq(atom_session_attach_checker(s, &all, args), 0);
    for (int i = 0; batched[i]; i++) ck_assert_int_eq(atom_session_attach(s, batched[i]), 0);
    ck_assert_int_eq(atom_session_attach_checker(s, &k, NULL), 0);
    ck_assert_int_eq(atom_session_attach_checker(s, &some, NULL), 0);
    return s;
  }
  atom_checker k = keyrec_vtable(0);
  ck_assert_int_eq(atom_session_attach_checker(s, &k, NULL), 0);
  static const char *const builtins[] = {"aerodrome", "aerodrome:variant=basic", "velodrome",
                                         "commit-node", "commit-node:mode=view", "block",
                                         "reduction", "race-automata", "null", NULL};
  char args[64];
  atom_checker all = blockrec_vtable(0), some = blockrec_vtable(1), rec = tu_recorder_checker;
  if (config & NO_COMMIT) {
    all.event_mask &= ~ATOM_KIND_BIT(ATOM_COMMIT);
    rec.event_mask &= ~ATOM_KIND_BIT(ATOM_COMMIT);
  }
  /* recorders before, between and after the built-ins; with FAIL_RECORDERS one of each kind
   * runs out of memory at its fail_a-th / fail_b-th event */
  snprintf(args, sizeof args, "fail_at=%u", (config & FAIL_RECORDERS) ? fail_a : 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &rec, args), 0);
  snprintf(args, sizeof args, "fail_at=%u", (config & FAIL_RECORDERS) ? fail_b : 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &all, args), 0);
  for (int i = 0; builtins[i]; i++) ck_assert_int_eq(atom_session_attach(s, builtins[i]), 0);
  if (config & WITH_TSO) ck_assert_int_eq(atom_session_attach(s, "tso"), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &some, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &rec, "note=last"), 0);
  return s;
}

/* Everything observable after the run: the result of each push that failed (event, code,
 * message), atom_finish's, then per checker its status, its reports in order and, for the
 * recorders, every event they received. */
static void sum_up(atom_session *s, text *t, int finish_rc) {
  add(t, "finish %d\n", finish_rc);
  atom_session_stats st = {ATOM_SESSION_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(atom_session_stats_get(s, &st), 0);
  add(t, "events %llu rejected %llu ids %llu %llu %llu\n", (unsigned long long)st.events,
      (unsigned long long)st.rejected, (unsigned long long)st.threads,
      (unsigned long long)st.vars, (unsigned long long)st.locks);
  for (size_t c = 0; c < atom_checker_count(s); c++) {
    atom_checker_status cs;
    cs.version = ATOM_CHECKER_STATUS_VERSION;
    ck_assert_int_eq(atom_checker_status_get(s, c, &cs), 0);
    add(t, "checker %zu %s: state %u at %llu error %d %s\n", c, atom_checker_name(s, c),
        (unsigned)cs.state, (unsigned long long)cs.stopped_at, (int)cs.error,
        cs.reason ? cs.reason : "");
    for (size_t i = 0; i < atom_report_count(s); i++) {
      const atom_report *r = atom_report_get(s, i);
      if (atom_report_checker_index(r) != c) continue;
      add(t, "  %s @%llu x%llu %llx %s\n", atom_report_kind(r),
          (unsigned long long)atom_report_event_index(r),
          (unsigned long long)atom_report_occurrences(r),
          (unsigned long long)atom_report_fingerprint(r), atom_report_message(r));
    }
    if (strcmp(atom_checker_name(s, c), "recorder") == 0) {
      const tu_recorder *rec = tu_recorder_of(s, c);
      add(t, "  recorded %zu finished %d\n", rec->count, rec->finished);
      for (size_t i = 0; i < rec->count; i++) {
        const atom_ev *e = &rec->events[i];
        add(t, "  %u %u %u %u %llu %llu\n", e->kind, e->thread, e->target, e->flags,
            (unsigned long long)e->index, (unsigned long long)e->loc);
      }
    }
  }
}

static void run_single(const atom_event *ev, size_t n, int config, unsigned fa, unsigned fb,
                       text *t) {
  keyrec_out = t;
  atom_session *s = new_session(config, fa, fb);
  for (size_t i = 0; i < n; i++) {
    int rc = atom_push(s, &ev[i]);
    if (rc) add(t, "push %zu: %d %s\n", i, rc, atom_last_error());
  }
  sum_up(s, t, atom_finish(s));
  atom_session_free(s);
}

/* The same events through atom_push_many in calls of random sizes (1 to 700), about half of
 * the calls through atom__push_many_bounded with the trace's largest thread key and largest
 * READ or WRITE target (what a reader vouches for). */
static void run_many(const atom_event *ev, size_t n, int config, unsigned fa, unsigned fb,
                     uint64_t seed, text *t) {
  keyrec_out = t;
  atom_session *s = new_session(config, fa, fb);
  rt_rng r;
  rt_rng_seed(&r, seed);
  uint64_t thread_max = 0, var_max = 0;
  for (size_t i = 0; i < n; i++) {
    if (ev[i].thread > thread_max) thread_max = ev[i].thread;
    if ((ev[i].kind == ATOM_READ || ev[i].kind == ATOM_WRITE) && ev[i].target > var_max)
      var_max = ev[i].target;
  }
  size_t pos = 0;
  while (pos < n) {
    size_t want = 1 + (size_t)rt_rng_below(&r, rt_rng_chance(&r, 0.3) ? 8 : 700);
    if (want > n - pos) want = n - pos;
    size_t done = 0;
    int rc = rt_rng_chance(&r, 0.5)
                 ? atom__push_many_bounded(s, ev + pos, want, &done, thread_max, var_max)
                 : atom_push_many(s, ev + pos, want, &done);
    ck_assert_uint_le(done, want);
    if (rc) {
      /* a rejection: done counts the rejected event, which is the last one taken */
      ck_assert_uint_ge(done, 1);
      add(t, "push %zu: %d %s\n", pos + done - 1, rc, atom_last_error());
    } else {
      ck_assert_uint_eq(done, want);
    }
    pos += done;
  }
  sum_up(s, t, atom_finish(s));
  atom_session_free(s);
}

/* A random trace with some events made ill-formed or odd (unknown kind, flags, a lock nobody
 * holds, an END too many, a COMMIT, a FORK of a running thread), same seed, same trace. */
static atom_event *trace(uint64_t seed, size_t *n) {
  rt_params p;
  rt_params_random(&p, seed, 400);
  if (seed % 3 == 0) rt_params_sync(&p, seed);
  atom_event *ev = NULL;
  ck_assert_int_eq(rt_generate(&p, seed, &ev, n), 0);
  rt_rng r;
  rt_rng_seed(&r, seed * 7 + 1);
  for (size_t i = 0; i < *n; i++) {
    if (!rt_rng_chance(&r, 0.05)) continue;
    atom_event *e = &ev[i];
    switch (rt_rng_below(&r, 7)) {
      case 0: e->kind = 11 + (uint32_t)rt_rng_below(&r, 3); break;
      case 1: e->flags = 1 + (uint32_t)rt_rng_below(&r, 2); break;
      case 2: e->kind = ATOM_RELEASE; e->target = 1 + rt_rng_below(&r, 3); break;
      case 3: e->kind = ATOM_END; break;
      case 4: /* a COMMIT of the thread's last or first write before it: the store buffer */
        e->kind = ATOM_COMMIT;
        e->target = 1 + rt_rng_below(&r, 4);
        for (size_t j = i, first = rt_rng_chance(&r, 0.5); j-- > 0;) {
          if (ev[j].thread != e->thread || ev[j].kind != ATOM_WRITE) continue;
          e->target = ev[j].target;
          if (!first) break;
        }
        e->flags = 0;
        break;
      case 5: e->kind = ATOM_FORK; e->target = 1 + rt_rng_below(&r, 4); break;
      default: e->thread = 1 + rt_rng_below(&r, 5); break;
    }
  }
  /* Every fourth trace with keys past the direct tables: they take the hash maps (the same
   * offset on every key, so FORK and JOIN still name the threads of the trace). */
  if (seed % 4 == 1)
    for (size_t i = 0; i < *n; i++) {
      ev[i].thread += 1ull << 40;
      ev[i].target += 1ull << 40;
    }
  return ev;
}

/* ev pushed one at a time and in blocks cut at random (8 seeds) gives the same text, and the
 * single run refused the events of `refused` (texts "push N: ", NULL-terminated): the
 * refusals the test is about really happened. */
static void same_in_blocks(const atom_event *ev, size_t n, const char *const *refused) {
  for (uint64_t seed = 1; seed <= 8; seed++) {
    text one = {0}, many = {0};
    run_single(ev, n, 0, 0, 0, &one);
    run_many(ev, n, 0, 0, 0, seed, &many);
    ck_assert_str_eq(one.s, many.s);
    for (const char *const *r = refused; *r; r++)
      ck_assert_msg(strstr(one.s, *r) != NULL, "no \"%s\" in\n%s", *r, one.s);
    free(one.s);
    free(many.s);
  }
}

static void compare(uint64_t seed, int config) {
  size_t n = 0;
  atom_event *ev = trace(seed, &n);
  /* the recorders that fail run out of memory somewhere in the middle */
  unsigned fa = 1 + (unsigned)(seed % (n + 1)), fb = 1 + (unsigned)((seed * 31) % (n / 2 + 1));
  text one = {0}, many = {0};
  run_single(ev, n, config, fa, fb, &one);
  run_many(ev, n, config, fa, fb, seed ^ 0x9e3779b97f4a7c15ull, &many);
  if (strcmp(one.s, many.s) != 0) {
    size_t at = 0;
    while (one.s[at] == many.s[at]) at++;
    while (at && one.s[at - 1] != '\n') at--;
    ck_abort_msg("seed %llu config %d: push_many differs from push at\n%.300s\n---\n%.300s",
                 (unsigned long long)seed, config, one.s + at, many.s + at);
  }
  free(one.s);
  free(many.s);
  free(ev);
}

START_TEST(push_many_is_push) {
  size_t calls0 = block_calls;
  for (uint64_t seed = 1; seed <= 150; seed++)
    compare(seed, (seed % 2 ? FAIL_RECORDERS : 0) | (seed % 4 >= 2 ? NO_COMMIT : 0));
  ck_assert_uint_gt(block_calls, calls0); /* blocks were really dispatched */
}
END_TEST

/* With only checkers that take blocks the fill interns new variables and locks: the same. */
START_TEST(push_many_is_push_new_keys_in_blocks) {
  size_t new0 = keyrec_new_in_blocks;
  for (uint64_t seed = 1; seed <= 100; seed++)
    compare(seed, ONLY_BLOCKS | (seed % 2 ? FAIL_RECORDERS : 0));
  ck_assert_uint_gt(keyrec_new_in_blocks, new0); /* new keys really were in blocks */
}
END_TEST

START_TEST(push_many_is_push_with_store_buffers) {
  for (uint64_t seed = 1000; seed <= 1060; seed++)
    compare(seed, WITH_TSO | (seed % 2 ? FAIL_RECORDERS : 0));
}
END_TEST

/* A block is one call to a checker with on_events, not one per event. */
START_TEST(one_call_per_block) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  atom_checker vt = blockrec_vtable(0);
  ck_assert_int_eq(atom_session_attach_checker(s, &vt, NULL), 0);
  atom_event ev[200];
  for (int i = 0; i < 200; i++) ev[i] = (atom_event){ATOM_READ, 0, 1, 7, (uint64_t)i};
  size_t done = 0;
  block_calls = 0;
  /* the first event interns thread 1 and variable 7 (single path), the rest is one block */
  ck_assert_int_eq(atom_push_many(s, ev, 200, &done), 0);
  ck_assert_uint_eq(done, 200);
  ck_assert_uint_eq(block_calls, 1);
  ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 200);
  atom_session_free(s);
}
END_TEST

/* A checker error other than ENOMEM/ELIMIT in a block: the whole block is dispatched (the
 * session took it), the call returns the error with the failing checker's message, and done
 * counts the block (doc/api.md, atom_push_many). */
START_TEST(checker_error_in_a_block) {
  for (int batched = 0; batched < 2; batched++) {
    atom_session *s = NULL;
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    atom_checker vt = batched ? blockrec_vtable(0) : tu_recorder_checker;
    char args[64];
    snprintf(args, sizeof args, "fail_at=50,fail_code=%d", ATOM_ECALLBACK);
    ck_assert_int_eq(atom_session_attach_checker(s, &vt, args), 0);
    ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
    /* READs: the recorders take COMMIT, so the session keeps store buffers and every WRITE
     * would take the single path */
    atom_event ev[100];
    for (int i = 0; i < 100; i++) ev[i] = (atom_event){ATOM_READ, 0, 1, 7, (uint64_t)i};
    ck_assert_int_eq(atom_push(s, &ev[0]), 0); /* interns the keys: the rest is one block */
    size_t done = 0;
    ck_assert_int_eq(atom_push_many(s, ev + 1, 99, &done), ATOM_ECALLBACK);
    ck_assert_uint_eq(done, 99);
    ck_assert_ptr_nonnull(strstr(atom_last_error(), "recorder"));
    ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 49); /* fails from its 50th event on */
    ck_assert_uint_eq(tu_recorder_of(s, 1)->count, 100);
    atom_checker_status cs;
    cs.version = ATOM_CHECKER_STATUS_VERSION;
    ck_assert_int_eq(atom_checker_status_get(s, 0, &cs), 0);
    ck_assert_uint_eq(cs.state, ATOM_CHECKER_COMPLETE); /* not disabled: it keeps receiving */
    atom_session_free(s);
  }
}
END_TEST

/* ENOMEM inside a block disables the checker at that event's index; the others go on. */
START_TEST(enomem_in_a_block) {
  for (int batched = 0; batched < 2; batched++) {
    atom_session *s = NULL;
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    atom_checker vt = batched ? blockrec_vtable(0) : tu_recorder_checker;
    ck_assert_int_eq(atom_session_attach_checker(s, &vt, "fail_at=30"), 0);
    ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
    atom_event ev[100];
    for (int i = 0; i < 100; i++) ev[i] = (atom_event){ATOM_READ, 0, 1, 7, (uint64_t)i};
    size_t done = 0;
    ck_assert_int_eq(atom_push_many(s, ev, 100, &done), 0);
    ck_assert_uint_eq(done, 100);
    atom_checker_status cs;
    cs.version = ATOM_CHECKER_STATUS_VERSION;
    ck_assert_int_eq(atom_checker_status_get(s, 0, &cs), 0);
    ck_assert_uint_eq(cs.state, ATOM_CHECKER_DISABLED);
    ck_assert_uint_eq(cs.stopped_at, 29);
    ck_assert_int_eq(cs.error, ATOM_ENOMEM);
    ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 29);
    ck_assert_uint_eq(tu_recorder_of(s, 1)->count, 100);
    atom_session_free(s);
  }
}
END_TEST

/* A session freed from a report callback while a checker with on_events takes a block: the
 * call returns ATOM_ESTATE after that block, and done counts up to its end. */
static int rp_create(void **self, atom_env *env) {
  *self = env;
  return 0;
}
static int rp_on_event(void *self, const atom_ev *ev) {
  atom_txn_ref txn = {ev->thread, 1, ev->index, ev->loc};
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "test-read";
  spec.event_index = ev->index;
  spec.txns = &txn;
  spec.n_txns = 1;
  spec.signature_extra = ev->index;
  return atom_env_report(self, &spec);
}
static int rp_on_events(void *self, const atom_ev *ev, size_t n, size_t *failed) {
  for (size_t i = 0; i < n; i++) {
    int rc = rp_on_event(self, &ev[i]);
    if (rc) {
      *failed = i;
      return rc;
    }
  }
  return 0;
}
static void rp_destroy(void *self) { (void)self; }

typedef struct free_ctx {
  atom_session *s;
  int reports;
} free_ctx;
static void free_on_report(const atom_report *r, void *payload) {
  free_ctx *c = payload;
  (void)r;
  if (++c->reports == 10) atom_session_free(c->s); /* deferred to the end of the push */
}

START_TEST(freed_during_a_block) {
  for (int batched = 0; batched < 2; batched++) {
    atom_checker vt;
    ck_assert_int_eq(atom_checker_init(&vt, ATOM_CHECKER_ABI_VERSION), 0);
    vt.event_mask = ATOM_KIND_BIT(ATOM_READ);
    vt.name = "reporter";
    vt.create = rp_create;
    vt.on_event = rp_on_event;
    vt.destroy = rp_destroy;
    if (batched) vt.on_events = rp_on_events;
    free_ctx c = {NULL, 0};
    atom_options o;
    ck_assert_int_eq(atom_options_init(&o, ATOM_OPTIONS_VERSION), 0);
    o.on_report = free_on_report;
    o.report_payload = &c;
    ck_assert_int_eq(atom_session_new(&c.s, &o), 0);
    ck_assert_int_eq(atom_session_attach_checker(c.s, &vt, NULL), 0);
    atom_event ev[100];
    for (int i = 0; i < 100; i++) ev[i] = (atom_event){ATOM_READ, 0, 1, 7, (uint64_t)i};
    size_t done = 0;
    /* event 0 interns the keys (single path, report 1); events 1..99 are one block */
    ck_assert_int_eq(atom_push_many(c.s, ev, 100, &done), ATOM_ESTATE);
    ck_assert_uint_eq(c.reports, 10);
    ck_assert_uint_eq(done, batched ? 100 : 10); /* the whole block, or up to event 9 */
  }
}
END_TEST

/* Blocks with no access (the fill names READ and WRITE in a block's kinds whatever it holds:
 * the recorder that takes only some kinds must still get exactly its own), with re-entrant
 * locks, nested transactions, FENCE, and refusals among them: a RELEASE of a lock the thread
 * does not hold, an ACQUIRE of a lock another thread holds, an END with no BEGIN. */
START_TEST(blocks_without_accesses) {
  atom_event ev[600];
  size_t n = 0;
  ev[n++] = (atom_event){ATOM_READ, 0, 1, 1, 1}; /* interns threads 1, 2, var 1, lock 5, 6 */
  ev[n++] = (atom_event){ATOM_READ, 0, 2, 1, 1};
  ev[n++] = (atom_event){ATOM_ACQUIRE, 0, 1, 5, 1};
  ev[n++] = (atom_event){ATOM_ACQUIRE, 0, 1, 6, 1};
  ev[n++] = (atom_event){ATOM_RELEASE, 0, 1, 6, 1};
  ev[n++] = (atom_event){ATOM_RELEASE, 0, 1, 5, 1};
  while (n + 14 <= sizeof ev / sizeof ev[0]) {
    uint64_t t = 1 + (n / 14) % 2, u = 3 - t, loc = n; /* threads 1 and 2 by turns */
    ev[n++] = (atom_event){ATOM_BEGIN, 0, t, 0, loc};
    ev[n++] = (atom_event){ATOM_ACQUIRE, 0, t, 5, loc};
    ev[n++] = (atom_event){ATOM_ACQUIRE, 0, t, 5, loc};  /* re-entrant */
    ev[n++] = (atom_event){ATOM_ACQUIRE, 0, u, 5, loc};  /* held by t: refused */
    ev[n++] = (atom_event){ATOM_BEGIN, 0, t, 0, loc};    /* nested */
    ev[n++] = (atom_event){ATOM_FENCE, 0, t, 0, loc};
    ev[n++] = (atom_event){ATOM_RELEASE, 0, u, 5, loc};  /* not u's: refused */
    ev[n++] = (atom_event){ATOM_RELEASE, 0, t, 5, loc};
    ev[n++] = (atom_event){ATOM_END, 0, t, 0, loc};
    ev[n++] = (atom_event){ATOM_RELEASE, 0, t, 5, loc};
    ev[n++] = (atom_event){ATOM_RELEASE, 0, t, 5, loc};  /* free now: refused */
    ev[n++] = (atom_event){ATOM_END, 0, t, 0, loc};
    ev[n++] = (atom_event){ATOM_END, 0, t, 0, loc};      /* no BEGIN open: refused */
    ev[n++] = (atom_event){ATOM_ACQUIRE, 0, u, 6, loc};  /* held on to across the block */
    ev[n - 1].kind = n % 28 < 14 ? ATOM_ACQUIRE : ATOM_RELEASE;
  }
  static const char *const refused[] = {"push 9: ", "push 12: ", "push 16: ", "push 18: ", NULL};
  same_in_blocks(ev, n, refused);
}
END_TEST

/* The fill takes the events of started, unjoined threads from a table of live threads
 * (small keys) and checks the others' records: a thread's first event, a joined thread's
 * events (in the same call as the JOIN and in later ones), a thread forked then joined before
 * it started, with small keys, keys just past the direct tables and keys in the hash map. */
START_TEST(joined_and_new_threads_in_blocks) {
  static const uint64_t offsets[] = {0, 65530, 1ull << 40};
  for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
    uint64_t o = offsets[k];
    const atom_event ev[] = {
        {ATOM_READ, 0, o + 1, 1, 1},     {ATOM_FORK, 0, o + 1, o + 2, 2},
        {ATOM_FORK, 0, o + 1, o + 9, 2}, {ATOM_WRITE, 0, o + 2, 1, 3},
        {ATOM_BEGIN, 0, o + 2, 0, 4},    {ATOM_READ, 0, o + 2, 1, 5},
        {ATOM_END, 0, o + 2, 0, 6},      {ATOM_JOIN, 0, o + 1, o + 2, 7},
        {ATOM_READ, 0, o + 2, 1, 8},     {ATOM_BEGIN, 0, o + 2, 0, 9},
        {ATOM_READ, 0, o + 1, 1, 10},    {ATOM_JOIN, 0, o + 1, o + 9, 11},
        {ATOM_WRITE, 0, o + 9, 1, 12},   {ATOM_READ, 0, o + 3, 1, 13},
        {ATOM_READ, 0, o + 3, 1, 14},    {ATOM_ACQUIRE, 0, o + 2, 5, 15},
        {ATOM_ACQUIRE, 0, o + 3, 5, 16}, {ATOM_RELEASE, 0, o + 3, 5, 17},
        {ATOM_READ, 0, o + 1, 1, 18},
    };
    /* the joined thread's READ, WRITE and ACQUIRE are refused */
    static const char *const refused[] = {"push 8: ", "push 12: ", "push 15: ", NULL};
    same_in_blocks(ev, sizeof ev / sizeof ev[0], refused);
  }
}
END_TEST

/* Reads of 200 new variables (keys in the direct table and in the hash map), new locks among
 * them: with only checkers that take blocks, one block after the thread's first event; with a
 * checker that takes events one at a time, each new key ends the block (no block at all). */
START_TEST(new_keys_in_one_block) {
  static const uint64_t offsets[] = {0, 1ull << 40};
  for (size_t k = 0; k < 2; k++)
    for (int loop = 0; loop < 2; loop++) {
      atom_session *s = NULL;
      ck_assert_int_eq(atom_session_new(&s, NULL), 0);
      atom_checker vt = blockrec_vtable(0), kr = keyrec_vtable(1);
      vt.event_mask &= ~ATOM_KIND_BIT(ATOM_COMMIT);
      ck_assert_int_eq(atom_session_attach_checker(s, &vt, NULL), 0);
      ck_assert_int_eq(atom_session_attach_checker(s, &kr, NULL), 0);
      ck_assert_int_eq(atom_session_attach(s, "aerodrome"), 0);
      ck_assert_int_eq(atom_session_attach(s, "velodrome"), 0);
      atom_checker one = keyrec_vtable(0);
      if (loop) ck_assert_int_eq(atom_session_attach_checker(s, &one, NULL), 0);
      atom_event ev[200];
      for (int i = 0; i < 200; i++) {
        uint64_t o = offsets[k];
        ev[i] = (atom_event){i % 2 ? ATOM_WRITE : ATOM_READ, 0, 1, o + 3 * (uint64_t)i, 0};
        if (i % 10 == 5) ev[i] = (atom_event){ATOM_ACQUIRE, 0, 1, o + (uint64_t)i, 0};
        if (i % 10 == 6) ev[i] = (atom_event){ATOM_RELEASE, 0, 1, o + (uint64_t)i - 1, 0};
      }
      text t = {0};
      keyrec_out = &t;
      size_t done = 0, new0 = keyrec_new_in_blocks;
      block_calls = 0;
      ck_assert_int_eq(atom_push_many(s, ev, 200, &done), 0);
      ck_assert_uint_eq(done, 200);
      /* with the checker taking single events: the RELEASEs (their lock known), one a block */
      ck_assert_uint_eq(block_calls, loop ? 20 : 1);
      ck_assert_uint_eq(keyrec_new_in_blocks - new0, loop ? 0 : 179); /* 199 less 20 RELEASEs */
      ck_assert_uint_eq(tu_recorder_of(s, 0)->count, 200);
      ck_assert_uint_eq(atom_env_count(tu_recorder_of(s, 0)->env, ATOM_SPACE_VAR), 160);
      ck_assert_uint_eq(atom_env_count(tu_recorder_of(s, 0)->env, ATOM_SPACE_LOCK), 20);
      atom_session_free(s);
      free(t.s);
    }
}
END_TEST

/* Events that name new variables and locks, pushed one by one or with atom_push_many in one
 * call, until the first refusal, with an id limit or a failing allocator: the same refusal
 * (event, code, message), the same events taken, and keyrec saw the same. */
static void run_until_refused(const atom_event *ev, size_t n, int many, uint32_t id_limit,
                              long budget, text *t) {
  tu_failing f = {-1, 0, 0, 0};
  atom_options o;
  tu_failing_options(&o, &f);
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, &o), 0);
  atom_checker kr = keyrec_vtable(1);
  ck_assert_int_eq(atom_session_attach_checker(s, &kr, NULL), 0);
  s->id_limit = id_limit;
  keyrec_out = t;
  f.budget = budget; /* counted from the first push */
  size_t done = n;
  int rc = 0;
  if (many) {
    rc = atom_push_many(s, ev, n, &done);
  } else {
    for (size_t i = 0; i < n && !rc; i++)
      if ((rc = atom_push(s, &ev[i]))) done = i + 1;
  }
  add(t, "rc %d done %zu %s\n", rc, done, rc ? atom_last_error() : "");
  atom_session_free(s);
  ck_assert_int_eq(f.live, 0);
}

START_TEST(refused_new_keys_in_a_block) {
  atom_event ev[300];
  for (int i = 0; i < 300; i++) {
    ev[i] = (atom_event){ATOM_READ, 0, 1 + (uint64_t)(i % 3), 5 + (uint64_t)i, (uint64_t)i};
    if (i % 7 == 3) ev[i] = (atom_event){ATOM_ACQUIRE, 0, 1 + (uint64_t)(i % 3), 900 + (uint64_t)i, 0};
    if (i % 50 == 49) ev[i].target += 1ull << 40; /* the hash maps */
  }
  /* the id limit reached inside a block: 40 variables, then 40 locks */
  for (uint32_t limit = 40; limit <= 41; limit++) {
    text one = {0}, many = {0};
    run_until_refused(ev, 300, 0, limit, -1, &one);
    run_until_refused(ev, 300, 1, limit, -1, &many);
    ck_assert_str_eq(one.s, many.s);
    ck_assert_ptr_nonnull(strstr(one.s, "rc -"));
    ck_assert_ptr_nonnull(strstr(one.s, "distinct variable keys"));
    free(one.s);
    free(many.s);
  }
  /* the allocator failing from its b-th allocation on: at every point of the interning */
  int refused = 0;
  for (long b = 0; b < 60; b++) {
    text one = {0}, many = {0};
    run_until_refused(ev, 300, 0, ATOM__MAX_IDS, b, &one);
    run_until_refused(ev, 300, 1, ATOM__MAX_IDS, b, &many);
    ck_assert_str_eq(one.s, many.s);
    refused += strstr(one.s, "out of memory interning") != NULL;
    free(one.s);
    free(many.s);
  }
  ck_assert_int_gt(refused, 10);
}
END_TEST

Suite *atom_test_suite_batch(void) {
  Suite *s = suite_create("batch");
  TCase *tc = tcase_create("batch");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, push_many_is_push);
  tcase_add_test(tc, push_many_is_push_with_store_buffers);
  tcase_add_test(tc, push_many_is_push_new_keys_in_blocks);
  tcase_add_test(tc, new_keys_in_one_block);
  tcase_add_test(tc, refused_new_keys_in_a_block);
  tcase_add_test(tc, one_call_per_block);
  tcase_add_test(tc, checker_error_in_a_block);
  tcase_add_test(tc, enomem_in_a_block);
  tcase_add_test(tc, freed_during_a_block);
  tcase_add_test(tc, joined_and_new_threads_in_blocks);
  tcase_add_test(tc, blocks_without_accesses);
  suite_add_tcase(s, tc);
  return s;
}
