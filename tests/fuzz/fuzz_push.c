/* Fuzz target: atom_push_many with every built-in checker attached, on event sequences decoded
 * from arbitrary bytes. Keys are folded into small ranges so that threads, variables and locks
 * meet often; kinds include invalid ones. No input may crash, leak or corrupt the session. */
#include <atomicity.h>
#include <atomicity/sys/checker.h>
#include <stdint.h>
#include <string.h>

#include "decode_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EVENTS 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  atom_event ev[MAX_EVENTS];
  size_t n = fuzz_decode_events(data, size, ev, MAX_EVENTS);
  atom_session *s = NULL;
  if (atom_session_new(&s, NULL) != 0) return 0;
  for (size_t i = 0; atom_checker_builtin(i); i++) {
    const char *name = atom_checker_builtin(i)->name;
    (void)atom_session_attach(s, name);
  }
  (void)atom_declare_set(s, 1, 1);
  (void)atom_set_name(s, ATOM_SPACE_VAR, 2, "v2");
  size_t at = 0;
  while (at < n) {
    size_t done = 0;
    (void)atom_push_many(s, ev + at, n - at, &done);
    if (done == 0) break; /* cannot happen: every call consumes an event */
    at += done;
  }
  (void)atom_finish(s);
  (void)atom_finish(s);
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const atom_report *r = atom_report_get(s, i);
    for (size_t k = 0; k < atom_report_txn_count(r); k++)
      if (atom_report_txn(r, k, NULL, NULL, NULL) != 0) __builtin_trap();
    for (size_t k = 0; k < atom_report_event_count(r); k++)
      if (atom_report_event(r, k, NULL, NULL) != 0) __builtin_trap();
  }
  for (size_t i = 0; i < atom_checker_count(s); i++) {
    atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
    if (atom_checker_stats_get(s, i, &st) != 0) __builtin_trap();
  }
  atom_session_free(s);
  return 0;
}
