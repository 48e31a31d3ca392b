/* Fuzz target: a report callback that calls back into its own session. Event streams are
 * decoded from the input as in fuzz_push.c; each report makes the callback take the next
 * action from the input: push, push_many, a helper, finish, attach, set_name, declare_set
 * (each must return ATOM_EREENTRANT), read the reports and statistics (must work), or free
 * the session (deferred: no callback may follow, the call returns ATOM_ESTATE and the driver
 * stops using the session). Plain and
 * ATOM_THREADSAFE sessions. Invariants that do not hold are a trap; ASan/UBSan/LSan catch a
 * use-after-free or a leak. */
#include <atomicity.h>
#include <atomicity/sys/checker.h>
#include <stdint.h>
#include <string.h>

#include "decode_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EVENTS 512

typedef struct run {
  atom_session *s;
  const uint8_t *plan; /* action bytes, used cyclically */
  size_t plan_len, at;
  size_t callbacks;
  int freed;           /* the callback freed the session */
} run;

static void expect_reentrant(int rc) {
  if (rc != ATOM_EREENTRANT) __builtin_trap();
}

static void on_report(const atom_report *r, void *payload) {
  run *u = payload;
  if (u->freed) __builtin_trap(); /* no callback after a free */
  u->callbacks++;
  if (!u->plan_len) return;
  uint8_t a = u->plan[u->at++ % u->plan_len];
  atom_session *s = u->s;
  atom_event ev = {ATOM_WRITE, 0, 1u + a % 4u, 1u + a % 6u, 0};
  size_t done = 99;
  switch (a % 12u) {
    case 0: break;
    case 1: expect_reentrant(atom_push(s, &ev)); break;
    case 2:
      expect_reentrant(atom_push_many(s, &ev, 1, &done));
      if (done != 0) __builtin_trap();
      break;
    case 3: expect_reentrant(atom_read(s, 1, 1, 0)); break;
    case 4: expect_reentrant(atom_finish(s)); break;
    case 5: expect_reentrant(atom_session_attach(s, "aerodrome")); break;
    case 6: expect_reentrant(atom_set_name(s, ATOM_SPACE_VAR, 1, "renamed")); break;
    case 7: expect_reentrant(atom_declare_set(s, 1, 2)); break;
    case 8: {
      size_t n = atom_report_count(s);
      /* with no max_reports the report being delivered is stored, last */
      if (n == 0 || atom_report_get(s, n - 1) != r) __builtin_trap();
      for (size_t i = 0; i < n; i++)
        if (!atom_report_kind(atom_report_get(s, i))) __builtin_trap();
      break;
    }
    case 9: {
      atom_session_stats st = {.version = ATOM_SESSION_STATS_VERSION};
      if (atom_session_stats_get(s, &st) != 0) __builtin_trap();
      for (size_t i = 0; i < atom_checker_count(s); i++) {
        atom_checker_stats cs = {.version = ATOM_CHECKER_STATS_VERSION};
        if (atom_checker_stats_get(s, i, &cs) != 0) __builtin_trap();
      }
      break;
    }
    case 10:
      if (a & 0x80) { /* rarely: free (deferred) */
        atom_session_free(s);
        u->freed = 1;
      }
      break;
    default: (void)atom_get_name(s, ATOM_SPACE_VAR, 2); break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  /* byte 0: bit 0 ATOM_THREADSAFE, bit 1 push one at a time, bits 2..7 the checkers
   * (bit i+2 attaches built-in checker i; none set: all). byte 1: length of the action plan
   * taken from the end of the input. The rest: 3 bytes per event (decode_events.h). */
  uint8_t mode = data[0];
  size_t plan_len = data[1] % 64u;
  data += 2;
  size -= 2;
  if (plan_len > size) plan_len = size;
  run u;
  memset(&u, 0, sizeof u);
  u.plan = data + size - plan_len;
  u.plan_len = plan_len;
  size -= plan_len;

  atom_event ev[MAX_EVENTS];
  size_t n = fuzz_decode_events(data, size, ev, MAX_EVENTS);

  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  o.flags = (mode & 1u) ? ATOM_THREADSAFE : 0u;
  o.on_report = on_report;
  o.report_payload = &u;
  if (atom_session_new(&u.s, &o) != 0) return 0;
  unsigned pick = mode >> 2;
  for (size_t i = 0; atom_checker_builtin(i); i++)
    if (!pick || (i < 6 && (pick >> i) & 1u)) (void)atom_session_attach(u.s, atom_checker_builtin(i)->name);
  (void)atom_declare_set(u.s, 1, 1);
  (void)atom_set_name(u.s, ATOM_SPACE_VAR, 2, "v2");

  size_t at = 0;
  while (at < n && !u.freed) {
    size_t done = 0;
    if (mode & 2u) {
      int rc = atom_push(u.s, &ev[at]);
      done = 1;
      if (u.freed) {
        if (rc != ATOM_ESTATE) __builtin_trap();
        break;
      }
      if (rc == ATOM_EREENTRANT) __builtin_trap();
    } else {
      int rc = atom_push_many(u.s, ev + at, n - at, &done);
      if (u.freed) {
        if (rc != ATOM_ESTATE) __builtin_trap();
        break;
      }
      if (rc == ATOM_EREENTRANT) __builtin_trap();
      if (done == 0) __builtin_trap(); /* every call consumes an event */
    }
    at += done;
  }
  if (u.freed) return 0; /* the session is gone: the deferred free ran */
  {
    /* Refused pushes from the callback consumed no event index. */
    atom_session_stats st = {.version = ATOM_SESSION_STATS_VERSION};
    if (atom_session_stats_get(u.s, &st) != 0 || st.events != n) __builtin_trap();
  }
  int rc = atom_finish(u.s);
  if (u.freed) {
    if (rc != ATOM_ESTATE) __builtin_trap();
    return 0;
  }
  if (rc == ATOM_EREENTRANT) __builtin_trap();
  /* No lost reports: every stored report was delivered once (no max_reports). */
  if (u.callbacks != atom_report_count(u.s)) __builtin_trap();
  atom_session_free(u.s);
  return 0;
}
