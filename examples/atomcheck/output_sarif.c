/* SARIF 2.1.0 output: a minimal log with one run whose tool is atomcheck, one rule per report
 * kind and one result per report; witness events are given as logical locations (a trace has
 * no source lines). The mapping is documented in doc/atomcheck.md, "SARIF output". */
#include "atomcheck.h"
#include "json_writer.h"
#include "report_json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_BUF 32

#define SARIF_SCHEMA \
  "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json"

static size_t shown_of(const atc_run *run, const atc_checker *c) {
  return c->n_reports < run->max_reports ? c->n_reports : run->max_reports;
}

/* The distinct kinds of the reports that are written, in order of first appearance. Few kinds
 * exist, so a linear search per report is cheap. @return -1 if out of memory. */
static int collect_kinds(const atc_run *run, const char ***kinds, size_t *n) {
  const char **list = NULL;
  size_t count = 0, cap = 0;
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    for (size_t k = 0, shown = shown_of(run, c); k < shown; k++) {
      const char *kind = atom_report_kind(c->reports[k]);
      size_t m = 0;
      while (m < count && strcmp(list[m], kind) != 0) m++;
      if (m < count) continue;
      if (count == cap) {
        size_t ncap = cap ? 2 * cap : 8;
        const char **grown = realloc(list, ncap * sizeof *grown);
        if (!grown) {
          free(list);
          return -1;
        }
        list = grown;
        cap = ncap;
      }
      list[count++] = kind;
    }
  }
  *kinds = list;
  *n = count;
  return 0;
}

/* A location that names an event or a transaction: one logical location plus a message. */
static void write_location(atc_json *j, const char *name, uint64_t index, const char *text) {
  char fqn[32];
  snprintf(fqn, sizeof fqn, "event %" PRIu64, index);
  atc_json_object_begin(j);
  atc_json_key(j, "logicalLocations");
  atc_json_array_begin(j);
  atc_json_object_begin(j);
  atc_json_member_string(j, "name", name);
  atc_json_member_string(j, "fullyQualifiedName", fqn);
  atc_json_object_end(j);
  atc_json_array_end(j);
  atc_json_key(j, "message");
  atc_json_object_begin(j);
  atc_json_member_string(j, "text", text);
  atc_json_object_end(j);
  atc_json_object_end(j);
}

static void write_event_location(atc_json *j, const atc_run *run, const atom_event *ev,
                                 uint64_t index) {
  char tbuf[NAME_BUF], obuf[NAME_BUF];
  const char *thread = atc_name(run, ATOM_SPACE_THREAD, ev->thread, tbuf, sizeof tbuf);
  int space = atc_target_space(ev->kind);
  char *label = space ? atc_strdup_printf("%s %s(%s)", thread, atc_kind_name(ev->kind),
                                          atc_name(run, space, ev->target, obuf, sizeof obuf))
                      : atc_strdup_printf("%s %s", thread, atc_kind_name(ev->kind));
  const char *at = atc_loc_name(run, ev->loc);
  char *text = at ? atc_strdup_printf("event %" PRIu64 ": %s in %s", index, label ? label : "?", at)
                  : atc_strdup_printf("event %" PRIu64 ": %s (loc %" PRIu64 ")", index,
                                      label ? label : "?", ev->loc);
  write_location(j, label, index, text);
  free(label);
  free(text);
}

static void write_txn_location(atc_json *j, const atc_run *run, uint64_t thread, uint64_t index,
                               uint64_t loc) {
  char tbuf[NAME_BUF];
  char *label = atc_strdup_printf("%s@%" PRIu64,
                                  atc_name(run, ATOM_SPACE_THREAD, thread, tbuf, sizeof tbuf),
                                  index);
  const char *at = atc_loc_name(run, loc);
  char *text = at ? atc_strdup_printf("transaction %s: %s", label ? label : "?", at)
                  : atc_strdup_printf("transaction %s (loc %" PRIu64 ")", label ? label : "?", loc);
  write_location(j, label, index, text);
  free(label);
  free(text);
}

/* The evidence in words, for the message a code-scanning user reads. */
static const char *atc_evidence_text(const atom_report *r) {
  switch (atom_report_evidence(r)) {
  case ATOM_EVIDENCE_PREDICTED: return "predicted: a feasible interleaving, not observed";
  case ATOM_EVIDENCE_CONFIRMED: return "confirmed: predicted and observed in this run";
  default: return "observed in this run";
  }
}

static void write_result(atc_json *j, const atc_run *run, const atc_checker *c,
                         const atom_report *r, const char **kinds, size_t n_kinds) {
  const char *kind = atom_report_kind(r);
  size_t rule = 0;
  while (rule < n_kinds && strcmp(kinds[rule], kind) != 0) rule++;

  atc_json_object_begin(j);
  atc_json_member_string(j, "ruleId", kind);
  if (rule < n_kinds) atc_json_member_uint(j, "ruleIndex", rule);
  atc_json_member_string(j, "level", "error");
  atc_json_key(j, "message");
  atc_json_object_begin(j);
  char *text = atc_strdup_printf("%s (%s)", atom_report_message(r), atc_evidence_text(r));
  atc_json_member_string(j, "text", text ? text : atom_report_message(r));
  free(text);
  atc_json_object_end(j);

  atc_json_key(j, "locations");
  atc_json_array_begin(j);
  size_t n_events = atom_report_event_count(r);
  if (n_events > 0) {
    for (size_t i = 0; i < n_events; i++) {
      atom_event ev;
      uint64_t index = 0;
      if (atom_report_event(r, i, &ev, &index) == 0) write_event_location(j, run, &ev, index);
    }
  } else {
    for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
      uint64_t thread = 0, index = 0, loc = 0;
      if (atom_report_txn(r, i, &thread, &index, &loc) == 0)
        write_txn_location(j, run, thread, index, loc);
    }
  }
  atc_json_array_end(j);

  atc_json_key(j, "properties");
  atc_json_object_begin(j);
  atc_json_member_string(j, "checker", atom_report_checker(r));
  atc_json_member_string(j, "spec", c->spec);
  atc_json_member_uint(j, "event_index", atom_report_event_index(r));
  atc_json_member_uint(j, "count", atom_report_occurrences(r));
  atc_json_member_string(j, "evidence", atc_evidence_name(r));
  atc_json_report_details(j, run, r);
  atc_json_object_end(j);
  atc_json_object_end(j);
}

/* The run's one invocation: a checker that stopped early is a tool execution notification
 * (level "error" when disabled, "warning" when incomplete), and the execution did not succeed:
 * zero results must not read as a clean trace. */
static void write_invocation(atc_json *j, const atc_run *run) {
  int partial = 0;
  for (size_t i = 0; i < run->n_checkers; i++) partial |= atc_checker_partial(&run->checkers[i]);
  atc_json_key(j, "invocations");
  atc_json_array_begin(j);
  atc_json_object_begin(j);
  atc_json_key(j, "executionSuccessful");
  atc_json_bool(j, !partial);
  atc_json_key(j, "toolExecutionNotifications");
  atc_json_array_begin(j);
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    if (!atc_checker_partial(c)) continue;
    int disabled = c->status.state == ATOM_CHECKER_DISABLED;
    atc_json_object_begin(j);
    atc_json_member_string(j, "level", disabled ? "error" : "warning");
    atc_json_key(j, "descriptor");
    atc_json_object_begin(j);
    atc_json_member_string(j, "id", disabled ? "checker-disabled" : "checker-incomplete");
    atc_json_object_end(j);
    char *text = atc_strdup_printf("%s: %s, stopped at event %" PRIu64 ": %s", c->spec,
                                   atc_checker_state_name(c), c->status.stopped_at,
                                   c->status.reason ? c->status.reason : "no reason given");
    atc_json_key(j, "message");
    atc_json_object_begin(j);
    atc_json_member_string(j, "text", text ? text : "a checker stopped early (out of memory)");
    atc_json_object_end(j);
    free(text);
    atc_json_key(j, "properties");
    atc_json_object_begin(j);
    atc_json_member_string(j, "checker", c->spec);
    atc_json_member_uint(j, "stopped_at", c->status.stopped_at);
    atc_json_object_end(j);
    atc_json_object_end(j);
  }
  atc_json_array_end(j);
  atc_json_object_end(j);
  atc_json_array_end(j);
}

int atc_output_sarif(FILE *out, const atc_run *run) {
  const char **kinds = NULL;
  size_t n_kinds = 0;
  if (collect_kinds(run, &kinds, &n_kinds) != 0) return -1;

  atc_json j;
  atc_json_init(&j, out, 1);
  atc_json_object_begin(&j);
  atc_json_member_string(&j, "$schema", SARIF_SCHEMA);
  atc_json_member_string(&j, "version", "2.1.0");
  atc_json_key(&j, "runs");
  atc_json_array_begin(&j);
  atc_json_object_begin(&j);

  atc_json_key(&j, "tool");
  atc_json_object_begin(&j);
  atc_json_key(&j, "driver");
  atc_json_object_begin(&j);
  atc_json_member_string(&j, "name", "atomcheck");
  atc_json_member_string(&j, "version", atom_version());
  atc_json_key(&j, "rules");
  atc_json_array_begin(&j);
  for (size_t i = 0; i < n_kinds; i++) {
    atc_json_object_begin(&j);
    atc_json_member_string(&j, "id", kinds[i]);
    atc_json_object_end(&j);
  }
  atc_json_array_end(&j);
  atc_json_object_end(&j);
  atc_json_object_end(&j);

  write_invocation(&j, run);

  atc_json_key(&j, "results");
  atc_json_array_begin(&j);
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    for (size_t k = 0, shown = shown_of(run, c); k < shown; k++)
      write_result(&j, run, c, c->reports[k], kinds, n_kinds);
  }
  atc_json_array_end(&j);

  atc_json_key(&j, "properties");
  atc_json_object_begin(&j);
  atc_json_member_string(&j, "file", run->path);
  atc_json_member_uint(&j, "events", run->events);
  atc_json_member_uint(&j, "rejected", run->rejected);
  if (run->want_stats) {
    atc_json_key(&j, "stats");
    atc_json_stats(&j, run);
  }
  atc_json_object_end(&j);

  atc_json_object_end(&j); /* the run */
  atc_json_array_end(&j);
  atc_json_object_end(&j);
  free(kinds);
  return atc_json_finish(&j);
}
