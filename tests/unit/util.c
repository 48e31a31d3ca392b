#include "util.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session.h" /* tests may look inside: tu_recorder_of */

atom_session *tu_session(const char *const *specs) {
  atom_session *s = NULL;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  for (size_t i = 0; specs && specs[i]; i++) {
    int err = atom_session_attach(s, specs[i]);
    ck_assert_msg(err == 0, "attach %s: %s", specs[i], atom_last_error());
  }
  return s;
}

static int feed_std(atom_session *s, const char *text, int sets_by_prefix, uint64_t *rejected) {
  atom_trace_reader *r = NULL;
  int err = atom_trace_reader_open_memory(&r, text, strlen(text), "<test>");
  if (err) return err;
  atom_session_stats st = {.version = ATOM_SESSION_STATS_VERSION};
  if (sets_by_prefix) err = atom_trace_reader_sets_by_prefix(r);
  if (!err) err = atom_trace_feed(s, r, 0, NULL, NULL, NULL);
  atom_trace_reader_free(r);
  if (err < 0) return err;
  err = atom_finish(s);
  if (rejected && atom_session_stats_get(s, &st) == 0) *rejected = st.rejected;
  return err;
}

int tu_feed_std(atom_session *s, const char *text, uint64_t *rejected) {
  return feed_std(s, text, 0, rejected);
}

int tu_feed_std_sets_by_prefix(atom_session *s, const char *text) {
  return feed_std(s, text, 1, NULL);
}

int64_t tu_first_violation(const atom_session *s, size_t ci) {
  int64_t best = -1;
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const atom_report *r = atom_report_get(s, i);
    if (atom_report_checker_index(r) != ci) continue;
    int64_t at = (int64_t)atom_report_event_index(r);
    if (best < 0 || at < best) best = at;
  }
  return best;
}

size_t tu_report_count(const atom_session *s, size_t ci) {
  size_t n = 0;
  for (size_t i = 0; i < atom_report_count(s); i++)
    n += atom_report_checker_index(atom_report_get(s, i)) == ci;
  return n;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tu_corpus_list(char **names, size_t max) {
  DIR *d = opendir(ATOM_CORPUS_DIR);
  ck_assert_msg(d != NULL, "cannot open %s", ATOM_CORPUS_DIR);
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len > 4 && strcmp(de->d_name + len - 4, ".std") == 0 && n < max)
      ck_assert_ptr_nonnull(names[n++] = strdup(de->d_name));
  }
  closedir(d);
  qsort(names, n, sizeof names[0], name_cmp);
  return n;
}

char *tu_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0, got;
  char *buf = malloc(cap);
  while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (cap - len < 2) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
    }
  }
  fclose(f);
  if (buf) buf[len] = '\0';
  if (buf && size) *size = len;
  return buf;
}

char *tu_read_source_file(const char *relpath, size_t *size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", ATOM_SOURCE_ROOT, relpath);
  return tu_read_file(path, size);
}

/* ---- the failing allocator ---- */

static int tu_failing_now(tu_failing *f) {
  f->calls++;
  if (f->budget < 0 || f->budget-- > 0) return 0;
  f->budget = f->once ? -1 : 0;
  return 1;
}
static void *tu_failing_malloc(size_t n, void *p) {
  tu_failing *f = p;
  void *m = tu_failing_now(f) ? NULL : malloc(n);
  if (m) f->live++;
  return m;
}
static void *tu_failing_realloc(void *ptr, size_t n, void *p) {
  tu_failing *f = p;
  void *m = tu_failing_now(f) ? NULL : realloc(ptr, n);
  if (m && !ptr) f->live++;
  return m;
}
static void tu_failing_free(void *ptr, void *p) {
  tu_failing *f = p;
  if (ptr) f->live--;
  free(ptr);
}

tu_failing tu_failing_at(long n) { return (tu_failing){n > 0 ? n - 1 : -1, 0, 1, 0}; }

void tu_failing_options(atom_options *o, tu_failing *f) {
  atom_options_init(o, ATOM_OPTIONS_VERSION);
  o->malloc_fn = tu_failing_malloc;
  o->realloc_fn = tu_failing_realloc;
  o->free_fn = tu_failing_free;
  o->alloc_payload = f;
}

void tu_failing_allocator(atom__allocator *al, tu_failing *f) {
  al->malloc_fn = tu_failing_malloc;
  al->realloc_fn = tu_failing_realloc;
  al->free_fn = tu_failing_free;
  al->payload = f;
}

/* ---- the recorder checker ---- */

static int rec_create(void **self, atom_env *env) {
  const char *fail = atom_env_arg(env, "fail_at");
  tu_recorder *r = atom_env_realloc(env, NULL, 0, sizeof *r);
  if (!r) return ATOM_ENOMEM;
  memset(r, 0, sizeof *r);
  r->env = env;
  if (fail) r->fail_on_event = atoi(fail);
  const char *code = atom_env_arg(env, "fail_code");
  r->fail_code = code ? atoi(code) : ATOM_ENOMEM;
  const char *inc = atom_env_arg(env, "incomplete_at");
  if (inc) r->incomplete_at = atoi(inc);
  *self = r;
  return 0;
}

static int rec_on_event(void *self, const atom_ev *ev) {
  tu_recorder *r = self;
  if (r->fail_on_event > 0 && r->count + 1 >= (size_t)r->fail_on_event) return r->fail_code;
  /* from that event on it says every time that it stopped at a bound (the first call counts) */
  if (r->incomplete_at > 0 && r->count + 1 >= (size_t)r->incomplete_at) {
    int rc = atom_env_incomplete(r->env, ev->index, "bound %d reached at event %llu",
                                 r->incomplete_at, (unsigned long long)ev->index);
    if (rc) return rc;
  }
  if (r->count == r->cap) {
    size_t ncap = r->cap ? 2 * r->cap : 64;
    atom_ev *n = realloc(r->events, ncap * sizeof *n);
    if (!n) return ATOM_ENOMEM;
    r->events = n;
    r->cap = ncap;
  }
  r->events[r->count++] = *ev;
  return 0;
}

static int rec_finish(void *self) {
  ((tu_recorder *)self)->finished++;
  return 0;
}

static void rec_destroy(void *self) {
  tu_recorder *r = self;
  free(r->events);
  atom_env_realloc(r->env, r, sizeof *r, 0);
}

static const char *const rec_keys[] = {"note", "fail_at", "fail_code", "incomplete_at", NULL};

const atom_checker tu_recorder_checker = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = 0x7feu,
    .name = "recorder",
    .summary = "records every event (tests)",
    .arg_keys = rec_keys,
    .create = rec_create,
    .on_event = rec_on_event,
    .finish = rec_finish,
    .destroy = rec_destroy,
    .stats = NULL,
};

tu_recorder *tu_recorder_of(atom_session *s, size_t ci) {
  return ci < s->n_envs ? s->envs[ci]->self : NULL;
}

/* A lock block nobody declared atomic (T1) and an unprotected write (T2): a unit only with
 * lock_blocks=yes, the default. */
static const char *const lock_block_trace =
    "T0|fork(T1)|1\nT0|fork(T2)|2\nT1|acq(L)|10\nT1|r(x)|11\nT1|w(x)|12\nT1|rel(L)|13\n"
    "T2|w(x)|21\nT2|acq(L)|22\nT2|r(x)|23\nT2|rel(L)|24\n";
/* A transaction under L and a lock block that also takes L: never interleaved, either way. */
static const char *const guarded_trace =
    "T0|fork(T1)|1\nT0|fork(T2)|2\nT1|begin|9\nT1|acq(L)|10\nT1|r(x)|11\nT1|w(x)|12\n"
    "T1|rel(L)|13\nT1|end|14\nT2|acq(L)|22\nT2|w(x)|23\nT2|rel(L)|24\n";

/* The lock_blocks= argument of a checker that makes lock blocks units (commit-node, block). */
void tu_check_lock_blocks_argument(const char *checker) {
  char yes1[64], yes2[64], no[64], maybe[64];
  snprintf(yes1, sizeof yes1, "%s:lock_blocks=yes", checker);
  snprintf(yes2, sizeof yes2, "%s:lock_blocks", checker);
  snprintf(no, sizeof no, "%s:lock_blocks=no", checker);
  snprintf(maybe, sizeof maybe, "%s:lock_blocks=maybe", checker);
  const char *const yes[] = {checker, yes1, yes2, NULL};
  for (size_t i = 0; yes[i]; i++) {
    atom_session *s = tu_session((const char *const[]){yes[i], NULL});
    ck_assert_int_eq(tu_feed_std(s, lock_block_trace, NULL), 0);
    ck_assert_uint_eq(atom_report_count(s), 1);
    atom_session_free(s);
  }
  atom_session *s = tu_session((const char *const[]){no, NULL});
  ck_assert_int_eq(tu_feed_std(s, lock_block_trace, NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_session_free(s);
  /* Not a unit, but its lock still decides what can interleave. */
  s = tu_session((const char *const[]){no, NULL});
  ck_assert_int_eq(tu_feed_std(s, guarded_trace, NULL), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_session_free(s);
  /* Without the lock in T2, the transaction is reported either way. */
  s = tu_session((const char *const[]){no, NULL});
  ck_assert_int_eq(atom_session_attach(s, checker), 0);
  ck_assert_int_eq(tu_feed_std(s,
                               "T0|fork(T1)|1\nT0|fork(T2)|2\nT1|begin|9\nT1|acq(L)|10\n"
                               "T1|r(x)|11\nT1|w(x)|12\nT1|rel(L)|13\nT1|end|14\nT2|w(x)|23\n",
                               NULL),
                   0);
  ck_assert_uint_eq(tu_report_count(s, 0), 1);
  ck_assert_uint_eq(tu_report_count(s, 1), 1);
  atom_session_free(s);
  atom_session *bad = NULL;
  ck_assert_int_eq(atom_session_new(&bad, NULL), 0);
  ck_assert_int_eq(atom_session_attach(bad, maybe), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "lock_blocks must be yes or no"));
  atom_session_free(bad);
}

void tu_write_fully(int fd, const char *data, size_t size) {
  while (size) {
    ssize_t k = write(fd, data, size);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) _exit(3);
    data += k;
    size -= (size_t)k;
  }
}

int tu_pipe_from_child(const char *data, size_t size, pid_t *child) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    size_t piece = 1;
    while (size) {
      size_t n = piece < size ? piece : size;
      tu_write_fully(fds[1], data, n);
      data += n;
      size -= n;
      piece = piece * 3 + 7;
      if (piece > 100000) piece = 5;
    }
    _exit(0);
  }
  close(fds[1]);
  *child = pid;
  return fds[0];
}
