/* JSON output (the schema is documented in doc/atomcheck.md, "JSON output"). */
#include "atomcheck.h"
#include "json_writer.h"
#include "report_json.h"

static const char *run_name(int space, uint64_t key, char *buf, size_t size, void *payload) {
  return atc_name(payload, space, key, buf, size);
}

void atc_json_report_details(atc_json *j, const atc_run *run, const atom_report *r) {
  atc_json_report_members(j, r, run_name, (void *)run);
}

void atc_json_stats(atc_json *j, const atc_run *run) {
  atc_json_object_begin(j);
  atc_json_key(j, "seconds");
  atc_json_double(j, run->seconds);
  atc_json_key(j, "events_per_second");
  atc_json_double(j, run->seconds > 0 ? (double)run->events / run->seconds : 0.0);
  atc_json_key(j, "checkers");
  atc_json_array_begin(j);
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    atc_json_object_begin(j);
    atc_json_member_string(j, "name", c->name);
    atc_json_member_string(j, "spec", c->spec);
    const atom_checker_stats *st = &c->stats;
    atc_json_member_uint(j, "time_ns", c->have_stats ? st->time_ns : 0);
    atc_json_member_uint(j, "peak_bytes", c->have_stats ? st->peak_bytes : 0);
    atc_json_member_uint(j, "bytes", c->have_stats ? st->bytes : 0);
    atc_json_member_uint(j, "nodes", c->have_stats ? st->nodes : 0);
    atc_json_member_uint(j, "edges", c->have_stats ? st->edges : 0);
    atc_json_member_uint(j, "clocks", c->have_stats ? st->clocks : 0);
    atc_json_key(j, "disabled");
    atc_json_bool(j, (c->have_stats && st->disabled) || c->status.state == ATOM_CHECKER_DISABLED);
    atc_json_object_end(j);
  }
  atc_json_array_end(j);
  atc_json_object_end(j);
}

static void write_report(atc_json *j, const atc_run *run, const atom_report *r) {
  atc_json_report_object(j, r, run_name, (void *)run);
}

int atc_output_json(FILE *out, const atc_run *run) {
  atc_json j;
  atc_json_init(&j, out, 1);
  atc_json_object_begin(&j);
  atc_json_member_string(&j, "file", run->path);
  atc_json_member_uint(&j, "events", run->events);
  atc_json_member_uint(&j, "rejected", run->rejected);
  atc_json_key(&j, "checkers");
  atc_json_array_begin(&j);
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    atc_json_object_begin(&j);
    atc_json_member_string(&j, "name", c->name);
    atc_json_member_string(&j, "spec", c->spec);
    atc_json_member_uint(&j, "violations", c->n_reports + c->dropped);
    atc_json_member_uint(&j, "dropped", c->dropped); /* counted, not stored (--max-stored) */
    atc_json_member_uint(&j, "occurrences", c->occurrences);
    /* complete: false when it stopped early (absence of reports proves nothing) */
    atc_json_key(&j, "complete");
    atc_json_bool(&j, !atc_checker_partial(c));
    atc_json_key(&j, "disabled");
    atc_json_bool(&j, c->status.state == ATOM_CHECKER_DISABLED);
    if (atc_checker_partial(c)) {
      atc_json_member_uint(&j, "stopped_at", c->status.stopped_at);
      atc_json_member_string(&j, "reason", c->status.reason ? c->status.reason : "");
    }
    atc_json_key(&j, "reports");
    atc_json_array_begin(&j);
    size_t shown = c->n_reports < run->max_reports ? c->n_reports : run->max_reports;
    for (size_t k = 0; k < shown; k++) write_report(&j, run, c->reports[k]);
    atc_json_array_end(&j);
    atc_json_object_end(&j);
  }
  atc_json_array_end(&j);
  if (run->want_stats) {
    atc_json_key(&j, "stats");
    atc_json_stats(&j, run);
  }
  atc_json_object_end(&j);
  return atc_json_finish(&j);
}
