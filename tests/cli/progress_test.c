/* Tests of atomcheck's --progress lines (examples/atomcheck/progress.c) without a terminal or a
 * clock: the texts of the reading and finishing lines, and the wiring of atom_options::on_progress
 * through a session whose checker reports end-of-run progress. Exit status 1 on a failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomicity/sys/checker.h>

#include "atomcheck.h"

static int failures;

static void expect_text(const char *what, const char *got, const char *want) {
  if (strcmp(got, want) == 0) return;
  fprintf(stderr, "FAIL %s:\n  got  '%s'\n  want '%s'\n", what, got, want);
  failures++;
}

static void expect_contains(const char *what, const char *got, const char *want) {
  if (strstr(got, want)) return;
  fprintf(stderr, "FAIL %s: '%s' not in '%s'\n", what, want, got);
  failures++;
}

static void texts(void) {
  char b[256];
  atc_progress_format_read(b, sizeof b, 1200000, 41, 100, 2.0);
  /* 2 s for 41 %: 59 % more take 2 * 59 / 41 = 2.9 s. */
  expect_text("read, size known", b,
              "atomcheck: reading [########............] 41 % 1.2M events, ETA 3 s");
  atc_progress_format_read(b, sizeof b, 0, 0, 1000, 0.5);
  expect_text("read, nothing yet", b, "atomcheck: reading [....................] 0 % 0 events, ETA ?");
  atc_progress_format_read(b, sizeof b, 5000, 1000, 1000, 1.0);
  expect_text("read, all", b, "atomcheck: reading [####################] 100 % 5.0k events, ETA 0 s");
  atc_progress_format_read(b, sizeof b, 120000, 2500000, 0, 2.0);
  expect_text("read, size unknown", b, "atomcheck: 120.0k events, 2.5MB read, 60.0k events/s");

  atc_progress_format_finish(b, sizeof b, "commit-node", 37, 100, 2.35, 0);
  expect_text("finish, total known", b, "atomcheck: commit-node: finishing 37 % (ETA 4 s)");
  atc_progress_format_finish(b, sizeof b, "block", 1, 1000, 10.0, 0);
  expect_text("finish, minutes", b, "atomcheck: block: finishing 0 % (ETA 2 h 46 min)");
  atc_progress_format_finish(b, sizeof b, "reduction", 1, 4, 60.0, 0);
  expect_text("finish, minutes", b, "atomcheck: reduction: finishing 25 % (ETA 3 min 0 s)");
  atc_progress_format_finish(b, sizeof b, "block", 12345, 0, 1.0, 0);
  expect_text("finish, total unknown", b, "atomcheck: block: finishing | 12.3k done");
  atc_progress_format_finish(b, sizeof b, "block", 12345, 0, 1.0, 1);
  expect_text("finish, spinner turns", b, "atomcheck: block: finishing / 12.3k done");

  char small[16];
  size_t n = atc_progress_format_finish(small, sizeof small, "commit-node", 1, 2, 1.0, 0);
  expect_text("cut at the buffer's end", small, "atomcheck: comm");
  if (n != strlen(small)) {
    fprintf(stderr, "FAIL cut: returned %zu for '%s'\n", n, small);
    failures++;
  }
}

/* A checker that does its work at finish in four steps and says so after each. */
typedef struct slow {
  atom_env *env;
} slow;

static int slow_create(void **self, atom_env *env) {
  slow *s = malloc(sizeof *s);
  if (!s) return ATOM_ENOMEM;
  s->env = env;
  *self = s;
  return 0;
}
static int slow_event(void *self, const atom_ev *ev) {
  (void)self;
  (void)ev;
  return 0;
}
static int slow_finish(void *self) {
  slow *s = self;
  for (uint64_t done = 1; done <= 4; done++) atom_env_progress(s->env, done, 4);
  return 0;
}
static void slow_destroy(void *self) { free(self); }

static const atom_checker slow_checker = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = ATOM_KIND_BIT(ATOM_READ),
    .name = "slow",
    .summary = "reports progress at finish",
    .create = slow_create,
    .on_event = slow_event,
    .finish = slow_finish,
    .destroy = slow_destroy,
    .properties = ATOM_CHECKER_PROP_AT_FINISH,
};

static void wiring(void) {
  FILE *f = tmpfile();
  if (!f) {
    perror("tmpfile");
    failures++;
    return;
  }
  atc_progress p;
  atc_progress_init_stream(&p, f);
  atom_options opt;
  atom_options_init(&opt, ATOM_OPTIONS_VERSION);
  opt.on_progress = atc_progress_finishing;
  opt.progress_payload = &p;
  atom_session *s = NULL;
  if (atom_session_new(&s, &opt) != 0 || atom_session_attach_checker(s, &slow_checker, NULL) != 0 ||
      atom_read(s, 1, 1, 0) != 0) {
    fprintf(stderr, "FAIL session: %s\n", atom_last_error());
    failures++;
    atom_session_free(s);
    fclose(f);
    return;
  }
  p.session = s;
  atom_finish(s);
  atc_progress_clear(&p);
  atom_session_free(s);

  char got[1024];
  rewind(f);
  size_t n = fread(got, 1, sizeof got - 1, f);
  got[n] = '\0';
  fclose(f);
  /* The first call of a checker is drawn at once (the library forwards it at once too); the
   * line is erased at the end. */
  expect_contains("finishing line", got, "\ratomcheck: slow: finishing 25 % (ETA ");
  if (n < 4 || strcmp(got + n - 4, "\r\033[K") != 0) {
    fprintf(stderr, "FAIL the line is not erased at the end: '%s'\n", got);
    failures++;
  }
}

int main(void) {
  texts();
  wiring();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
