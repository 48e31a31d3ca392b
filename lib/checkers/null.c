/* The no-op checker: receives every event and does nothing. It measures the cost of the
 * session itself (interning, validation, dispatch): the floor every checker is compared to. */
#include "checkers/builtin.h"

static int null_create(void **self, atom_env *env) {
  *self = env;
  return 0;
}

static int null_on_event(void *self, const atom_ev *ev) {
  (void)self;
  (void)ev;
  return 0;
}

static void null_destroy(void *self) { (void)self; }

const atom_checker atom__checker_null = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = 0x7feu, /* every kind 1..10 */
    .name = "null",
    .summary = "does nothing; measures the cost of the session itself",
    .arg_keys = NULL,
    .create = null_create,
    .on_event = null_on_event,
    .finish = NULL,
    .destroy = null_destroy,
    .stats = NULL,
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_SOUND,
};
