/* Pins the layout of every public struct: a change here breaks the ABI (STYLE practice 4). */
#include <atomicity.h>
#include <atomicity/sys/checker.h>
#include <stddef.h>
#include <stdio.h>

static int failures;
#define PIN(expr, value)                                                                 \
  do {                                                                                   \
    if ((size_t)(expr) != (size_t)(value)) {                                             \
      printf("FAIL %s = %zu, pinned at %zu\n", #expr, (size_t)(expr), (size_t)(value)); \
      failures++;                                                                        \
    }                                                                                    \
  } while (0)

int main(void) {
  PIN(sizeof(atom_event), 32);
  PIN(offsetof(atom_event, kind), 0);
  PIN(offsetof(atom_event, flags), 4);
  PIN(offsetof(atom_event, thread), 8);
  PIN(offsetof(atom_event, target), 16);
  PIN(offsetof(atom_event, loc), 24);

  PIN(offsetof(atom_options, version), 0);
  PIN(offsetof(atom_options, flags), 4);
  PIN(offsetof(atom_options, on_report), 8);
  PIN(offsetof(atom_options, report_payload), 16);
  PIN(offsetof(atom_options, max_reports), 24);
  PIN(offsetof(atom_options, malloc_fn), 32);
  PIN(offsetof(atom_options, realloc_fn), 40);
  PIN(offsetof(atom_options, free_fn), 48);
  PIN(offsetof(atom_options, alloc_payload), 56);
  PIN(offsetof(atom_options, max_reports_per_checker), 64);
  PIN(offsetof(atom_options, on_progress), 72);
  PIN(offsetof(atom_options, progress_payload), 80);
  PIN(sizeof(atom_options), 88);

  PIN(offsetof(atom_session_stats, version), 0);
  PIN(offsetof(atom_session_stats, events), 8);
  PIN(offsetof(atom_session_stats, bytes), 48);
  PIN(sizeof(atom_session_stats), 56);

  PIN(offsetof(atom_checker_stats, version), 0);
  PIN(offsetof(atom_checker_stats, bytes), 8);
  PIN(offsetof(atom_checker_stats, time_ns), 24);
  PIN(offsetof(atom_checker_stats, clocks), 64);
  PIN(offsetof(atom_checker_stats, disabled), 72);
  PIN(sizeof(atom_checker_stats), 80);

  PIN(offsetof(atom_checker_status, version), 0);
  PIN(offsetof(atom_checker_status, state), 4);
  PIN(offsetof(atom_checker_status, stopped_at), 8);
  PIN(offsetof(atom_checker_status, reason), 16);
  PIN(offsetof(atom_checker_status, error), 24);
  PIN(offsetof(atom_checker_status, reserved), 28);
  PIN(sizeof(atom_checker_status), 32);

  PIN(offsetof(atom_checker, abi_version), 0);
  PIN(offsetof(atom_checker, event_mask), 4);
  PIN(offsetof(atom_checker, name), 8);
  PIN(offsetof(atom_checker, summary), 16);
  PIN(offsetof(atom_checker, arg_keys), 24);
  PIN(offsetof(atom_checker, create), 32);
  PIN(offsetof(atom_checker, on_event), 40);
  PIN(offsetof(atom_checker, finish), 48);
  PIN(offsetof(atom_checker, destroy), 56);
  PIN(offsetof(atom_checker, stats), 64);
  PIN(offsetof(atom_checker, properties), 72);
  PIN(offsetof(atom_checker, on_events), 80);
  PIN(sizeof(atom_checker), 88);

  PIN(sizeof(atom_ev), 32);
  PIN(offsetof(atom_ev, index), 16);
  PIN(offsetof(atom_ev, loc), 24);
  PIN(sizeof(atom_txn_ref), 24);
  PIN(sizeof(atom_checker_counters), 24);
  PIN(offsetof(atom_report_spec, flags), 4);
  PIN(offsetof(atom_report_spec, kind), 8);
  PIN(offsetof(atom_report_spec, signature_extra), 80);
  PIN(offsetof(atom_report_spec, edges), 88);
  PIN(offsetof(atom_report_spec, n_edges), 96);
  PIN(sizeof(atom_report_spec), 104);
  PIN(sizeof(atom_edge_ref), 16);
  PIN(offsetof(atom_output_options, format), 4);
  PIN(offsetof(atom_output_options, tool), 16);
  PIN(offsetof(atom_output_options, max_reports), 32);
  PIN(offsetof(atom_output_options, seconds), 56);
  PIN(offsetof(atom_output_options, n_baseline), 80);
  PIN(offsetof(atom_output_options, cut_short), 88);
  PIN(sizeof(atom_output_options), 96);

  /* Pinned constants */
  PIN(ATOM_OPTIONS_VERSION, 3);
  PIN(ATOM_CHECKER_ABI_VERSION, 3);
  PIN(ATOM_OUTPUT_OPTIONS_VERSION, 2);
  PIN(ATOM_FORMAT_TEXT, 1);
  PIN(ATOM_FORMAT_JSON, 2);
  PIN(ATOM_FORMAT_SARIF, 3);
  PIN(ATOM_FORMAT_HTML, 4);
  PIN(ATOM_FORMAT_DOT, 5);
  PIN(ATOM_EDGE_CLOSING, 1);
  PIN(ATOM_TXN_UNARY, 1);
  PIN(ATOM_REPORT_MAX_TXNS, 64);
  PIN(ATOM_MAX_STACK, 64);
  PIN(ATOM_CHECKER_PROP_ONLINE, 1);
  PIN(ATOM_CHECKER_PROP_AT_FINISH, 2);
  PIN(ATOM_CHECKER_PROP_SOUND, 4);
  PIN(ATOM_CHECKER_PROP_COMPLETE, 8);
  PIN(ATOM_CHECKER_PROP_PREDICTIVE, 16);
  PIN(ATOM_CHECKER_PROP_STORE_BUFFER, 32);
  PIN(ATOM_CHECKER_STATUS_VERSION, 1);
  PIN(ATOM_CHECKER_COMPLETE, 1);
  PIN(ATOM_CHECKER_INCOMPLETE, 2);
  PIN(ATOM_CHECKER_DISABLED, 3);
  PIN(ATOM_THREADSAFE, 1);
  PIN(ATOM_PROFILE, 2);
  PIN(ATOM_SPACE_THREAD, 1);
  PIN(ATOM_SPACE_VAR, 2);
  PIN(ATOM_SPACE_LOCK, 3);
  PIN(ATOM_FLAG_ACQUIRE, 1);
  PIN(ATOM_FLAG_RELEASE, 2);
  PIN(ATOM_EV_SYNTHETIC, 1);
  PIN(ATOM_EV_ACQUIRE, 2);
  PIN(ATOM_EV_RELEASE, 4);
  PIN(ATOM_SPACE_LOC, 4);
  PIN(ATOM_REPORT_PREDICTED, 1);
  PIN(ATOM_EVIDENCE_OBSERVED, 1);
  PIN(ATOM_EVIDENCE_PREDICTED, 2);
  PIN(ATOM_EVIDENCE_CONFIRMED, 3);
  if (failures) return 1;
  printf("layout: all pinned\n");
  return 0;
}
