/* Third-party checkers (the plugin layer, atomicity/sys/checker.h): vtables of every version
 * the library shipped, atom_checker_init, the lifecycle the header documents, the one list of
 * built-in checkers, and checkers that misbehave in ways the core must absorb (reports with no
 * transactions, return codes that are not ATOM_E* codes). */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
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
    empty_create, empty_event, NULL, empty_destroy, NULL, 0, NULL};

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
    coded_create, coded_event, coded_finish, coded_destroy, NULL, 0, NULL};

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

/* ---- vtable versions ---- */

/* atom_checker exactly as 0.1 shipped it (version 1): no properties member. */
typedef struct checker_v1 {
  uint32_t abi_version;
  uint32_t event_mask;
  const char *name;
  const char *summary;
  const char *const *arg_keys;
  int (*create)(void **self, atom_env *env);
  int (*on_event)(void *self, const atom_ev *ev);
  int (*finish)(void *self);
  void (*destroy)(void *self);
  int (*stats)(void *self, atom_checker_counters *out);
} checker_v1;

/* What the callbacks of the counting checker saw (one test at a time uses it). */
static struct {
  int creates, events, finishes, destroys, stats;
  int reentry_rc;            /* what atom_push returned from inside on_event */
  atom_session *session;     /* for the re-entry attempt; NULL: do not try */
} seen;

typedef struct counting {
  atom_env *env;
  uint64_t reads;
} counting;

static int counting_create(void **self, atom_env *env) {
  seen.creates++;
  if (atom_env_arg(env, "fail")) return atom_env_error(env, ATOM_EINVAL, "asked to fail");
  counting *c = atom_env_realloc(env, NULL, 0, sizeof *c);
  if (!c) return ATOM_ENOMEM;
  c->env = env;
  c->reads = 0;
  *self = c;
  return 0;
}
static int counting_event(void *self, const atom_ev *ev) {
  counting *c = self;
  seen.events++;
  if (ev->kind == ATOM_READ) c->reads++;
  if (seen.session) {
    atom_event e = {ATOM_READ, 0, 1, 2, 0};
    seen.reentry_rc = atom_push(seen.session, &e);
    seen.session = NULL;
  }
  return 0;
}
static int counting_finish(void *self) {
  counting *c = self;
  seen.finishes++;
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "reads-seen";
  spec.signature_extra = c->reads;
  return atom_env_report(c->env, &spec);
}
static void counting_destroy(void *self) {
  seen.destroys++;
  counting *c = self;
  atom_env_realloc(c->env, c, sizeof *c, 0);
}
static int counting_stats(void *self, atom_checker_counters *out) {
  seen.stats++;
  out->nodes = ((counting *)self)->reads;
  return 0;
}
static const char *const counting_keys[] = {"fail", NULL};

/* A version-1 vtable in a block of exactly its size, so that a core reading members of a
 * later version reads past the block (AddressSanitizer builds catch it). */
static checker_v1 *new_v1_checker(void) {
  checker_v1 *vt = malloc(sizeof *vt);
  ck_assert_ptr_nonnull(vt);
  vt->abi_version = 1;
  vt->event_mask = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_END);
  vt->name = "counting-v1";
  vt->summary = "counts reads (0.1 layout)";
  vt->arg_keys = counting_keys;
  vt->create = counting_create;
  vt->on_event = counting_event;
  vt->finish = counting_finish;
  vt->destroy = counting_destroy;
  vt->stats = counting_stats;
  return vt;
}

START_TEST(version_1_plugin_registers_and_runs) {
  ck_assert_uint_eq(sizeof(checker_v1), offsetof(atom_checker, properties));
  memset(&seen, 0, sizeof seen);
  checker_v1 *vt = new_v1_checker();
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, (const atom_checker *)vt, NULL), 0);
  ck_assert_str_eq(atom_checker_name(s, 0), "counting-v1");
  ck_assert_int_eq(atom_begin(s, 1, 1), 0);
  ck_assert_int_eq(atom_read(s, 1, 7, 2), 0);
  ck_assert_int_eq(atom_write(s, 1, 7, 3), 0);
  ck_assert_int_eq(atom_read(s, 2, 7, 4), 0);
  ck_assert_int_eq(seen.events, 2); /* the two READs; the END comes at finish */
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_int_eq(seen.events, 3); /* the closing END */
  ck_assert_int_eq(seen.finishes, 1);
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_str_eq(atom_report_kind(atom_report_get(s, 0)), "reads-seen");
  atom_checker_stats st;
  memset(&st, 0, sizeof st);
  st.version = ATOM_CHECKER_STATS_VERSION;
  ck_assert_int_eq(atom_checker_stats_get(s, 0, &st), 0);
  ck_assert_uint_eq(st.nodes, 2);
  atom_session_free(s);
  ck_assert_int_eq(seen.creates, 1);
  ck_assert_int_eq(seen.destroys, 1);
  free(vt);
}
END_TEST

START_TEST(unknown_vtable_versions_are_refused) {
  atom_session *s = tu_session((const char *const[]){NULL});
  atom_checker vt;
  ck_assert_int_eq(atom_checker_init(&vt, ATOM_CHECKER_ABI_VERSION), 0);
  vt.name = "future";
  vt.create = counting_create;
  vt.on_event = counting_event;
  vt.destroy = counting_destroy;
  const uint32_t bad[] = {0, ATOM_CHECKER_ABI_VERSION + 1, 1000};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vt.abi_version = bad[i];
    ck_assert_int_eq(atom_session_attach_checker(s, &vt, NULL), ATOM_EINVAL);
    ck_assert_ptr_nonnull(strstr(atom_last_error(), "unknown checker vtable version"));
  }
  vt.abi_version = ATOM_CHECKER_ABI_VERSION;
  vt.on_event = NULL;
  ck_assert_int_eq(atom_session_attach_checker(s, &vt, NULL), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "checker future: a required member is NULL"));
  ck_assert_uint_eq(atom_checker_count(s), 0);
  atom_session_free(s);
}
END_TEST

START_TEST(checker_init_writes_only_its_version) {
  /* Version 1 into a buffer one version-2 struct long: the bytes after version 1 stay. */
  union {
    atom_checker vt;
    unsigned char bytes[sizeof(atom_checker)];
  } u;
  memset(&u, 0xab, sizeof u);
  ck_assert_int_eq(atom_checker_init(&u.vt, 1), 0);
  ck_assert_uint_eq(u.vt.abi_version, 1);
  for (size_t i = sizeof u.vt.abi_version; i < offsetof(atom_checker, properties); i++)
    ck_assert_msg(u.bytes[i] == 0, "byte %zu not zeroed", i);
  for (size_t i = offsetof(atom_checker, properties); i < sizeof u; i++)
    ck_assert_msg(u.bytes[i] == 0xab, "byte %zu written", i);

  memset(&u, 0xab, sizeof u);
  ck_assert_int_eq(atom_checker_init(&u.vt, ATOM_CHECKER_ABI_VERSION), 0);
  ck_assert_uint_eq(u.vt.abi_version, ATOM_CHECKER_ABI_VERSION);
  ck_assert_ptr_null(u.vt.name);
  ck_assert_ptr_null(u.vt.finish);
  ck_assert_ptr_null(u.vt.stats);
  ck_assert_uint_eq(u.vt.properties, 0);

  ck_assert_int_eq(atom_checker_init(NULL, 1), ATOM_EINVAL);
  memset(&u, 0xab, sizeof u);
  ck_assert_int_eq(atom_checker_init(&u.vt, ATOM_CHECKER_ABI_VERSION + 1), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "unknown vtable version"));
  ck_assert_uint_eq(u.bytes[0], 0xab); /* nothing written */
}
END_TEST

/* ---- the lifecycle of sys/checker.h ---- */

static void counting_vtable(atom_checker *vt) {
  ck_assert_int_eq(atom_checker_init(vt, ATOM_CHECKER_ABI_VERSION), 0);
  vt->event_mask = ATOM_KIND_BIT(ATOM_READ);
  vt->name = "counting";
  vt->arg_keys = counting_keys;
  vt->create = counting_create;
  vt->on_event = counting_event;
  vt->finish = counting_finish;
  vt->destroy = counting_destroy;
}

START_TEST(failed_create_gets_no_destroy) {
  memset(&seen, 0, sizeof seen);
  atom_checker vt;
  counting_vtable(&vt);
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &vt, "fail"), ATOM_EINVAL);
  ck_assert_str_eq(atom_last_error(), "counting: asked to fail");
  /* an unknown argument is refused before create runs */
  ck_assert_int_eq(atom_session_attach_checker(s, &vt, "colour=red"), ATOM_EINVAL);
  ck_assert_int_eq(seen.creates, 1);
  ck_assert_uint_eq(atom_checker_count(s), 0);
  atom_session_free(s);
  ck_assert_int_eq(seen.destroys, 0);
}
END_TEST

START_TEST(finish_at_most_once_destroy_exactly_once) {
  atom_checker vt;
  counting_vtable(&vt);
  /* freed without atom_finish: destroy runs, finish does not */
  memset(&seen, 0, sizeof seen);
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &vt, NULL), 0);
  ck_assert_int_eq(atom_read(s, 1, 7, 1), 0);
  atom_session_free(s);
  ck_assert_int_eq(seen.events, 1);
  ck_assert_int_eq(seen.finishes, 0);
  ck_assert_int_eq(seen.destroys, 1);
  /* atom_finish twice: finish runs once */
  memset(&seen, 0, sizeof seen);
  s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &vt, NULL), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_int_eq(seen.finishes, 1);
  atom_session_free(s);
  ck_assert_int_eq(seen.destroys, 1);
}
END_TEST

START_TEST(reentering_the_session_is_refused) {
  memset(&seen, 0, sizeof seen);
  atom_checker vt;
  counting_vtable(&vt);
  atom_session *s = tu_session((const char *const[]){NULL});
  ck_assert_int_eq(atom_session_attach_checker(s, &vt, NULL), 0);
  seen.session = s;
  ck_assert_int_eq(atom_read(s, 1, 7, 1), 0);
  ck_assert_int_eq(seen.reentry_rc, ATOM_EREENTRANT);
  ck_assert_int_eq(seen.events, 1); /* the refused push reached nobody */
  atom_session_free(s);
}
END_TEST

/* ---- the one list of built-in checkers ---- */

START_TEST(builtin_table_is_list_def) {
  static const char *const names[] = {
#define CHECKER(ident, name) name,
#define ALIAS(ident, alias)
#include "checkers/list.def"
  };
  static const struct {
    const char *alias, *name;
  } aliases[] = {
#define CHECKER(ident, name)
#define ALIAS(ident, alias) {alias, #ident},
#include "checkers/list.def"
  };
  size_t n = sizeof names / sizeof names[0];
  for (size_t i = 0; i < n; i++) {
    const atom_checker *vt = atom_checker_builtin(i);
    ck_assert_ptr_nonnull(vt);
    ck_assert_str_eq(vt->name, names[i]); /* list.def's name is the vtable's */
    ck_assert_int_eq(vt->abi_version, ATOM_CHECKER_ABI_VERSION);
    ck_assert_msg(vt->properties != 0, "%s says nothing about itself", vt->name);
  }
  ck_assert_ptr_null(atom_checker_builtin(n));
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
    atom_session *s = tu_session((const char *const[]){aliases[i].alias, NULL});
    /* the identifier spells the name with '_' for '-' */
    char ident[64];
    snprintf(ident, sizeof ident, "%s", atom_checker_name(s, 0));
    for (char *p = ident; *p; p++)
      if (*p == '-') *p = '_';
    ck_assert_str_eq(ident, aliases[i].name);
    atom_session_free(s);
  }
}
END_TEST

Suite *atom_test_suite_plugins(void) {
  Suite *su = suite_create("plugins");
  TCase *tc = tcase_create("misbehaving");
  tcase_add_test(tc, report_without_transactions_is_deduplicated);
  tcase_add_test(tc, create_positive_or_unknown_is_a_failure);
  tcase_add_test(tc, event_and_finish_codes_are_mapped);
  suite_add_tcase(su, tc);
  tc = tcase_create("layer");
  tcase_add_test(tc, version_1_plugin_registers_and_runs);
  tcase_add_test(tc, unknown_vtable_versions_are_refused);
  tcase_add_test(tc, checker_init_writes_only_its_version);
  tcase_add_test(tc, failed_create_gets_no_destroy);
  tcase_add_test(tc, finish_at_most_once_destroy_exactly_once);
  tcase_add_test(tc, reentering_the_session_is_refused);
  tcase_add_test(tc, builtin_table_is_list_def);
  suite_add_tcase(su, tc);
  return su;
}
