/* Re-entrancy (doc/threading.md "Callbacks"): every call into a session from inside its own
 * report callback or from a checker's functions either works as documented or returns
 * ATOM_EREENTRANT and changes nothing; atom_session_free is deferred. Each case runs in plain
 * and ATOM_THREADSAFE sessions (a deadlock would hit the test timeout). */
#include <check.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>

#include "util.h"

Suite *atom_test_suite_reentrancy(void);

enum action {
  ACT_NONE,
  ACT_FREE,
  ACT_FINISH,
  ACT_PUSH,
  ACT_PUSH_MANY,
  ACT_HELPER,
  ACT_ATTACH,
  ACT_ATTACH_CHECKER,
  ACT_SET_NAME,
  ACT_DECLARE_SET,
  ACT_READ, /* report and statistics readers: work */
  ACT_COUNT_
};

enum where { IN_REPORT, IN_ON_EVENT, IN_FINISH, WHERE_COUNT_ };

/* What one test case does, and what it saw. The plugin finds it through its args. */
typedef struct ctx {
  enum action action;
  enum where where;
  atom_session *s;
  int acted;           /* the action ran (once) */
  int rc;              /* what the call returned */
  const atom_report *delivered; /* the report passed to on_report when the action ran */
  int read_ok;         /* ACT_READ: every reader gave the expected answer */
  size_t callbacks;    /* on_report calls */
  size_t events;       /* on_event calls */
} ctx;

static ctx *current; /* the plugin's create has no payload of its own: one test at a time */

static void act(ctx *c, const atom_report *rep) {
  if (c->acted || c->action == ACT_NONE) return;
  c->acted = 1;
  c->delivered = rep;
  atom_session *s = c->s;
  atom_event ev = {ATOM_WRITE, 0, 9, 99, 0};
  size_t done = 7;
  switch (c->action) {
    case ACT_FREE: atom_session_free(s); c->rc = 0; break;
    case ACT_FINISH: c->rc = atom_finish(s); break;
    case ACT_PUSH: c->rc = atom_push(s, &ev); break;
    case ACT_PUSH_MANY:
      c->rc = atom_push_many(s, &ev, 1, &done);
      if (done != 0) c->rc = 1;
      break;
    case ACT_HELPER: c->rc = atom_read(s, 9, 99, 0); break;
    case ACT_ATTACH: c->rc = atom_session_attach(s, "aerodrome"); break;
    case ACT_ATTACH_CHECKER: c->rc = atom_session_attach_checker(s, &tu_recorder_checker, NULL); break;
    case ACT_SET_NAME: c->rc = atom_set_name(s, ATOM_SPACE_VAR, 1, "renamed"); break;
    case ACT_DECLARE_SET: c->rc = atom_declare_set(s, 1, 5); break;
    case ACT_READ: {
      atom_session_stats st = {ATOM_SESSION_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0};
      atom_checker_stats cs;
      memset(&cs, 0, sizeof cs);
      cs.version = ATOM_CHECKER_STATS_VERSION;
      size_t n = atom_report_count(s);
      c->read_ok = atom_session_stats_get(s, &st) == 0 && atom_checker_stats_get(s, 0, &cs) == 0 &&
                   atom_checker_count(s) == 1 && strcmp(atom_checker_name(s, 0), "reenter") == 0 &&
                   strcmp(atom_get_name(s, ATOM_SPACE_VAR, 1), "x") == 0;
      if (rep) /* the report being delivered is already stored, last */
        c->read_ok = c->read_ok && n >= 1 && atom_report_get(s, n - 1) == rep &&
                     strcmp(atom_report_kind(rep), "test-write") == 0 &&
                     atom_report_txn_count(rep) == 1 && atom_report_dropped(s) == 0;
      c->rc = 0;
      break;
    }
    default: break;
  }
}

/* ---- the plugin: reports every WRITE and one more at finish; acts where told ---- */

typedef struct plugin {
  atom_env *env;
  ctx *c;
} plugin;

static int pl_create(void **self, atom_env *env) {
  plugin *p = atom_env_realloc(env, NULL, 0, sizeof *p);
  if (!p) return ATOM_ENOMEM;
  p->env = env;
  p->c = current;
  *self = p;
  return 0;
}

static int pl_report(plugin *p, const char *kind, uint64_t index, uint32_t thread) {
  atom_txn_ref txn = {thread, 1, index, index};
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = kind;
  spec.event_index = index;
  spec.txns = &txn;
  spec.n_txns = 1;
  spec.signature_extra = index;
  return atom_env_report(p->env, &spec);
}

static int pl_on_event(void *self, const atom_ev *ev) {
  plugin *p = self;
  p->c->events++;
  if (p->c->where == IN_ON_EVENT && ev->index == 1) act(p->c, NULL);
  return ev->kind == ATOM_WRITE ? pl_report(p, "test-write", ev->index, ev->thread) : 0;
}

static int pl_finish(void *self) {
  plugin *p = self;
  if (p->c->where == IN_FINISH) act(p->c, NULL);
  return pl_report(p, "test-finish", 1000, 0);
}

static void pl_destroy(void *self) {
  plugin *p = self;
  atom_env_realloc(p->env, p, sizeof *p, 0);
}

static const atom_checker reenter_checker = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = 0x7feu,
    .name = "reenter",
    .summary = "reports every write (tests)",
    .create = pl_create,
    .on_event = pl_on_event,
    .finish = pl_finish,
    .destroy = pl_destroy,
};

static void on_report(const atom_report *r, void *payload) {
  ctx *c = payload;
  c->callbacks++;
  if (c->where == IN_REPORT) act(c, r);
}

enum { N_WRITES = 7 };

/* One case: N_WRITES writes of thread 1 (each reported), then finish (one more report). */
static void run_case(enum action a, enum where w, uint32_t flags, int many) {
  ctx c;
  memset(&c, 0, sizeof c);
  c.action = a;
  c.where = w;
  tu_failing f = tu_failing_at(0); /* counts live blocks: a deferred free really frees */
  atom_options o;
  tu_failing_options(&o, &f);
  o.flags = flags;
  o.on_report = on_report;
  o.report_payload = &c;
  current = &c;
  ck_assert_int_eq(atom_session_new(&c.s, &o), 0);
  ck_assert_int_eq(atom_session_attach_checker(c.s, &reenter_checker, NULL), 0);
  ck_assert_int_eq(atom_set_name(c.s, ATOM_SPACE_VAR, 1, "x"), 0);
  atom_event evs[N_WRITES];
  for (int i = 0; i < N_WRITES; i++) evs[i] = (atom_event){ATOM_WRITE, 0, 1, 1, (uint64_t)i};
  const char *label = "case";
  int freed = 0;
  size_t pushed = 0;
  if (many) {
    size_t done = 0;
    int rc = atom_push_many(c.s, evs, N_WRITES, &done);
    if (a == ACT_FREE && w != IN_FINISH) {
      /* freed at the first write's report or during the second event */
      ck_assert_int_eq(rc, ATOM_ESTATE);
      ck_assert_uint_eq(done, w == IN_REPORT ? 1 : 2);
      freed = 1;
    } else {
      ck_assert_msg(rc == 0, "%s: push_many returned %d (%s)", label, rc, atom_last_error());
      ck_assert_uint_eq(done, N_WRITES);
    }
    pushed = done;
  } else {
    for (int i = 0; i < N_WRITES && !freed; i++) {
      int rc = atom_push(c.s, &evs[i]);
      pushed++;
      if (a == ACT_FREE && c.acted) {
        ck_assert_int_eq(rc, ATOM_ESTATE); /* the callback freed the session */
        freed = 1;
      } else {
        ck_assert_msg(rc == 0, "push %d returned %d (%s)", i, rc, atom_last_error());
      }
    }
  }
  if (!freed) {
    int rc = atom_finish(c.s);
    if (a == ACT_FREE) {
      ck_assert_int_eq(w, IN_FINISH);
      ck_assert_int_eq(rc, ATOM_ESTATE);
      freed = 1;
    } else {
      ck_assert_msg(rc == 0, "finish returned %d (%s)", rc, atom_last_error());
    }
  }
  ck_assert_int_eq(c.acted, a != ACT_NONE);
  if (freed) {
    /* Freed right after the callback's call returned, and no callback after the free. */
    ck_assert_int_eq(f.live, 0);
    ck_assert_uint_eq(c.callbacks, w == IN_REPORT ? 1 : w == IN_ON_EVENT ? 1 : N_WRITES);
    ck_assert_uint_eq(pushed, w == IN_REPORT ? 1 : w == IN_ON_EVENT ? 2 : N_WRITES);
    return;
  }
  if (a == ACT_READ) {
    ck_assert_int_eq(c.rc, 0);
    ck_assert_int_eq(c.read_ok, 1);
  } else if (a != ACT_NONE) {
    ck_assert_msg(c.rc == ATOM_EREENTRANT, "action %d where %d: returned %d", a, w, c.rc);
    ck_assert_ptr_nonnull(strstr(atom_last_error(), "inside a callback"));
  }
  /* Nothing changed: every write seen once, in order, every report delivered and stored. */
  ck_assert_uint_eq(c.events, N_WRITES);
  ck_assert_uint_eq(c.callbacks, N_WRITES + 1);
  ck_assert_uint_eq(atom_report_count(c.s), N_WRITES + 1);
  for (size_t i = 0; i < N_WRITES; i++)
    ck_assert_uint_eq(atom_report_event_index(atom_report_get(c.s, i)), i);
  ck_assert_str_eq(atom_report_kind(atom_report_get(c.s, N_WRITES)), "test-finish");
  atom_session_stats st = {ATOM_SESSION_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(atom_session_stats_get(c.s, &st), 0);
  ck_assert_uint_eq(st.events, N_WRITES);
  ck_assert_uint_eq(st.vars, 1);
  ck_assert_uint_eq(st.threads, 1);
  ck_assert_uint_eq(atom_checker_count(c.s), 1);
  ck_assert_str_eq(atom_get_name(c.s, ATOM_SPACE_VAR, 1), "x");
  /* After the callback, the same calls work again. */
  ck_assert_int_eq(atom_finish(c.s), 0);
  ck_assert_int_eq(atom_push(c.s, &evs[0]), ATOM_ESTATE);
  ck_assert_int_eq(atom_set_name(c.s, ATOM_SPACE_VAR, 1, "y"), 0);
  atom_session_free(c.s);
  ck_assert_int_eq(f.live, 0);
}

/* The whole matrix: every action, every place, plain and thread-safe, push and push_many. */
START_TEST(every_call_from_every_callback) {
  static const uint32_t flags[] = {0, ATOM_THREADSAFE};
  for (int a = ACT_NONE; a < ACT_COUNT_; a++)
    for (int w = 0; w < WHERE_COUNT_; w++)
      for (int fl = 0; fl < 2; fl++)
        for (int many = 0; many < 2; many++) run_case((enum action)a, (enum where)w, flags[fl], many);
}
END_TEST

/* A trace fed into a session whose callback frees it: the feed stops (ATOM_ESTATE) without
 * touching the session again, and the session is freed. */
START_TEST(trace_feed_stops_when_the_callback_frees) {
  for (int last = 0; last < 2; last++) {
    ctx c;
    memset(&c, 0, sizeof c);
    c.action = ACT_FREE;
    c.where = IN_REPORT;
    current = &c;
    tu_failing f = tu_failing_at(0);
    atom_options o;
    tu_failing_options(&o, &f);
    o.on_report = on_report;
    o.report_payload = &c;
    ck_assert_int_eq(atom_session_new(&c.s, &o), 0);
    ck_assert_int_eq(atom_session_attach_checker(c.s, &reenter_checker, NULL), 0);
    /* the first write is the first event, or the last one */
    const char *text = last ? "t1|r(x)|1\nt1|r(y)|2\nt1|w(x)|3\n" : "t1|w(x)|1\nt1|w(y)|2\n";
    atom_trace_reader *r = NULL;
    ck_assert_int_eq(atom_trace_reader_open_memory(&r, text, strlen(text), "<test>"), 0);
    uint64_t pushed = 0;
    ck_assert_int_eq(atom_trace_feed(c.s, r, 0, &pushed, NULL, NULL), ATOM_ESTATE);
    ck_assert_uint_eq(pushed, last ? 3 : 1);
    atom_trace_reader_free(r);
    ck_assert_uint_eq(c.callbacks, 1);
    ck_assert_int_eq(f.live, 0);
  }
}
END_TEST

/* A checker's create and destroy calling back in: refused, and the attach or free goes on. */
static atom_session *hook_session;
static int hook_create_rc, hook_destroy_rc;

static int hook_create(void **self, atom_env *env) {
  hook_create_rc = atom_push(hook_session, &(atom_event){ATOM_READ, 0, 1, 1, 0});
  return pl_create(self, env);
}

static void hook_destroy(void *self) {
  hook_destroy_rc = atom_finish(hook_session);
  atom_session_free(hook_session); /* a second free while freeing: nothing */
  pl_destroy(self);
}

START_TEST(create_and_destroy_calling_back) {
  atom_checker vt = reenter_checker;
  vt.create = hook_create;
  vt.destroy = hook_destroy;
  ctx c;
  memset(&c, 0, sizeof c);
  current = &c;
  tu_failing f = tu_failing_at(0);
  atom_options o;
  tu_failing_options(&o, &f);
  ck_assert_int_eq(atom_session_new(&hook_session, &o), 0);
  ck_assert_int_eq(atom_session_attach_checker(hook_session, &vt, NULL), 0);
  ck_assert_int_eq(hook_create_rc, ATOM_EREENTRANT);
  atom_session_stats st = {ATOM_SESSION_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(atom_session_stats_get(hook_session, &st), 0);
  ck_assert_uint_eq(st.events, 0);
  atom_session_free(hook_session);
  ck_assert_int_eq(hook_destroy_rc, ATOM_EREENTRANT);
  ck_assert_int_eq(f.live, 0);
}
END_TEST

/* ATOM_THREADSAFE: while thread A's callback runs (A holds the mutex), thread B pushes and
 * waits for the mutex; A's own calls from the callback are refused at once instead of
 * deadlocking, and B's event comes after A's once the callback returns. */
typedef struct two {
  atom_session *s;
  sem_t b_go;
  int a_rc_push, a_rc_finish;
  int b_rc;
} two;

static void two_on_report(const atom_report *r, void *payload) {
  two *t = payload;
  if (atom_report_event_index(r) != 0) return;
  sem_post(&t->b_go); /* B now calls atom_push and waits for the mutex we hold */
  t->a_rc_push = atom_write(t->s, 1, 1, 0);
  t->a_rc_finish = atom_finish(t->s);
}

static void *thread_b(void *arg) {
  two *t = arg;
  sem_wait(&t->b_go);
  t->b_rc = atom_write(t->s, 2, 2, 0);
  return NULL;
}

START_TEST(threadsafe_callback_while_another_thread_pushes) {
  two t;
  memset(&t, 0, sizeof t);
  ctx c;
  memset(&c, 0, sizeof c);
  current = &c;
  ck_assert_int_eq(sem_init(&t.b_go, 0, 0), 0);
  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  o.flags = ATOM_THREADSAFE;
  o.on_report = two_on_report;
  o.report_payload = &t;
  ck_assert_int_eq(atom_session_new(&t.s, &o), 0);
  ck_assert_int_eq(atom_session_attach_checker(t.s, &reenter_checker, NULL), 0);
  pthread_t b;
  ck_assert_int_eq(pthread_create(&b, NULL, thread_b, &t), 0);
  ck_assert_int_eq(atom_write(t.s, 1, 1, 0), 0);
  pthread_join(b, NULL);
  ck_assert_int_eq(t.a_rc_push, ATOM_EREENTRANT);
  ck_assert_int_eq(t.a_rc_finish, ATOM_EREENTRANT);
  ck_assert_int_eq(t.b_rc, 0);
  ck_assert_uint_eq(atom_report_count(t.s), 2);
  uint64_t thread = 0;
  ck_assert_int_eq(atom_report_txn(atom_report_get(t.s, 1), 0, &thread, NULL, NULL), 0);
  ck_assert_uint_eq(thread, 2); /* B's write, index 1 */
  ck_assert_uint_eq(atom_report_event_index(atom_report_get(t.s, 1)), 1);
  ck_assert_int_eq(atom_finish(t.s), 0);
  atom_session_free(t.s);
  sem_destroy(&t.b_go);
}
END_TEST

Suite *atom_test_suite_reentrancy(void) {
  Suite *s = suite_create("reentrancy");
  TCase *t = tcase_create("callbacks");
  tcase_set_timeout(t, 30);
  tcase_add_test(t, every_call_from_every_callback);
  tcase_add_test(t, create_and_destroy_calling_back);
  tcase_add_test(t, trace_feed_stops_when_the_callback_frees);
  tcase_add_test(t, threadsafe_callback_while_another_thread_pushes);
  suite_add_tcase(s, t);
  return s;
}
