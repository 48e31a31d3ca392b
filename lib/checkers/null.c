/* The no-op checker: receives events and does nothing. It measures the cost of the session
 * itself (interning, validation, dispatch): the floor every checker is compared to. It takes
 * every kind but COMMIT, so that its session is the one the conflict-serializability checkers
 * run in: a checker that subscribes to COMMIT makes the session keep and validate each
 * thread's store buffer (doc/api.md, "COMMIT events are validated only when..."), about 8
 * more instructions an event (doc/performance.md, "The `null` checker without COMMIT"). */
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

/* The block form: nothing to do either, and one call per block instead of one per event. */
static int null_on_events(void *self, const atom_ev *ev, size_t n, size_t *failed) {
  (void)self;
  (void)ev;
  (void)n;
  (void)failed;
  return 0;
}

static void null_destroy(void *self) { (void)self; }

const atom_checker atom__checker_null = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = 0x3feu, /* kinds 1..9: READ to FENCE, not COMMIT */
    .name = "null",
    .summary = "does nothing; measures the cost of the session itself",
    .arg_keys = NULL,
    .create = null_create,
    .on_event = null_on_event,
    .finish = NULL,
    .destroy = null_destroy,
    .stats = NULL,
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_SOUND,
    .on_events = null_on_events,
};
