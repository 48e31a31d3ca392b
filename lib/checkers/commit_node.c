/* stub: to be written (registered so that the build and the registry are ready) */
#include "checkers/builtin.h"
static int stub_create(void **self, atom_env *env) {
  (void)env;
  *self = NULL;
  return 0;
}
static int stub_event(void *self, const atom_ev *ev) {
  (void)self;
  (void)ev;
  return 0;
}
static void stub_destroy(void *self) { (void)self; }
const atom_checker atom__checker_commit_node = {ATOM_CHECKER_ABI_VERSION, 0, "commit-node", "not yet implemented", NULL,
                                        stub_create, stub_event, NULL, stub_destroy, NULL};
