/* One runner for every Check suite: `unit-runner NAME` runs suite NAME, no argument runs all. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#define X(name) Suite *atom_test_suite_##name(void);
#include "suites.def"
#undef X

static const struct {
  const char *name;
  Suite *(*make)(void);
} suites[] = {
#define X(name) {#name, atom_test_suite_##name},
#include "suites.def"
#undef X
};

int main(int argc, char **argv) {
  SRunner *runner = NULL;
  for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
    if (argc > 1 && strcmp(argv[1], suites[i].name) != 0) continue;
    if (!runner)
      runner = srunner_create(suites[i].make());
    else
      srunner_add_suite(runner, suites[i].make());
  }
  if (!runner) {
    fprintf(stderr, "unit-runner: no suite named %s\n", argc > 1 ? argv[1] : "(none)");
    return 2;
  }
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed ? 1 : 0;
}
