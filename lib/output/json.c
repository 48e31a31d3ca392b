/* The JSON output (doc/output.md): one document with the input, the event counts, and per
 * checker its figures, status and reports. Members are only ever added: consumers rely on the
 * existing ones. Also the small JSON writer the SARIF output shares. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "atomicity/location.h"
#include "atomicity/output.h"
#include "atomicity/session.h"
#include "atomicity/version.h"
#include "output/out.h"

/* ---- the writer ---- */

void atom__json_init(atom__json *j, atom__out *o) {
  j->o = o;
  j->depth = 0;
  j->after_key = 0;
  j->items[0] = 0;
}

static void indent(atom__json *j) {
  static const char spaces[] = "                                                                ";
  atom__out_write(j->o, "\n", 1);
  size_t n = 2 * (size_t)j->depth;
  while (n > 0) {
    size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
    atom__out_write(j->o, spaces, k);
    n -= k;
  }
}

/* Before a value or a key: the comma and the line break of the container. */
static void before(atom__json *j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->depth == 0) return;
  if (j->items[j->depth]) atom__out_write(j->o, ",", 1);
  j->items[j->depth] = 1;
  indent(j);
}

static void open_(atom__json *j, char c) {
  before(j);
  atom__out_write(j->o, &c, 1);
  if (j->depth + 1 < ATOM__JSON_MAX_DEPTH) j->depth++;
  j->items[j->depth] = 0;
}

static void close_(atom__json *j, char c) {
  int had = j->items[j->depth];
  if (j->depth > 0) j->depth--;
  if (had) indent(j);
  atom__out_write(j->o, &c, 1);
  if (j->depth == 0) atom__out_write(j->o, "\n", 1);
}

void atom__json_obj(atom__json *j) { open_(j, '{'); }
void atom__json_obj_end(atom__json *j) { close_(j, '}'); }
void atom__json_arr(atom__json *j) { open_(j, '['); }
void atom__json_arr_end(atom__json *j) { close_(j, ']'); }

void atom__json_key(atom__json *j, const char *key) {
  before(j);
  atom__out_write(j->o, "\"", 1);
  atom__out_json_chars(j->o, key);
  atom__out_write(j->o, "\": ", 3);
  j->after_key = 1;
}

void atom__json_str(atom__json *j, const char *s) {
  if (!s) {
    atom__json_null(j);
    return;
  }
  before(j);
  atom__out_write(j->o, "\"", 1);
  atom__out_json_chars(j->o, s);
  atom__out_write(j->o, "\"", 1);
}

void atom__json_uint(atom__json *j, uint64_t v) {
  before(j);
  atom__out_printf(j->o, "%" PRIu64, v);
}

void atom__json_double(atom__json *j, double v) {
  if (!isfinite(v)) {
    atom__json_null(j);
    return;
  }
  before(j);
  atom__out_printf(j->o, "%.9g", v);
}

void atom__json_bool(atom__json *j, int v) {
  before(j);
  atom__out_puts(j->o, v ? "true" : "false");
}

void atom__json_null(atom__json *j) {
  before(j);
  atom__out_puts(j->o, "null");
}

void atom__json_kstr(atom__json *j, const char *key, const char *s) {
  atom__json_key(j, key);
  atom__json_str(j, s);
}

void atom__json_kuint(atom__json *j, const char *key, uint64_t v) {
  atom__json_key(j, key);
  atom__json_uint(j, v);
}

/* ---- reports ---- */

static void frame(atom__json *j, const struct atom_session *s, uint64_t loc) {
  const char *function = NULL, *file = NULL;
  uint32_t line = 0;
  atom_get_location(s, loc, &function, &file, &line);
  atom__json_obj(j);
  atom__json_kstr(j, "function", function);
  atom__json_kstr(j, "file", file);
  atom__json_key(j, "line");
  if (line) atom__json_uint(j, line);
  else atom__json_null(j);
  atom__json_obj_end(j);
}

void atom__json_stack(atom__json *j, const char *key, const struct atom_session *s, uint64_t loc) {
  const uint64_t *frames = NULL;
  size_t n = atom_get_stack(s, loc, &frames);
  if (n == 0 && !atom_get_location(s, loc, NULL, NULL, NULL)) return;
  atom__json_key(j, key);
  atom__json_arr(j);
  if (n == 0) frame(j, s, loc);
  for (size_t i = 0; i < n; i++) frame(j, s, frames[i]);
  atom__json_arr_end(j);
}

/* "at": the location described ("withdraw at bank.c:30") or named; absent when only its
 * number is known (the "loc" member has it). */
static void at(atom__json *j, const char *key, const struct atom_session *s, uint64_t loc) {
  if (!atom_get_location(s, loc, NULL, NULL, NULL) && !atom_get_name(s, ATOM_SPACE_LOC, loc))
    return;
  char buf[512];
  if (atom_describe_location(buf, sizeof buf, s, loc) >= 0) atom__json_kstr(j, key, buf);
}

static void described(atom__json *j, int (*f)(char *, size_t, const atom_report *, size_t),
                      const atom_report *r, size_t i) {
  char *d = atom__out_describe(f, r, i);
  atom__json_kstr(j, "description", d ? d : "");
  free(d);
}

static void key_name(atom__json *j, const char *key, const struct atom_session *s, int space,
                     uint64_t k) {
  const char *name = atom_get_name(s, space, k);
  char buf[32];
  if (!name) {
    if (space == ATOM_SPACE_THREAD) snprintf(buf, sizeof buf, "T%" PRIu64, k);
    else snprintf(buf, sizeof buf, "0x%" PRIx64, k);
    name = buf;
  }
  atom__json_kstr(j, key, name);
}

static void txns(atom__json *j, const atom_report *r) {
  const struct atom_session *s = atom_report_session(r);
  atom__json_key(j, "transactions");
  atom__json_arr(j);
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    uint64_t thread = 0, index = 0, loc = 0, count = 1, last = 0;
    uint32_t flags = 0;
    if (atom_report_txn(r, i, &thread, &index, &loc) != 0) continue;
    atom_report_txn_run(r, i, &flags, &count, &last);
    atom__json_obj(j);
    key_name(j, "thread", s, ATOM_SPACE_THREAD, thread);
    atom__json_kuint(j, "begin_index", index);
    atom__json_kuint(j, "begin_loc", loc);
    at(j, "begin_at", s, loc);
    atom__json_key(j, "unary");
    atom__json_bool(j, (flags & ATOM_TXN_UNARY) != 0);
    atom__json_kuint(j, "count", count);
    atom__json_kuint(j, "last_index", count > 1 ? last : index);
    described(j, atom_report_describe_txn, r, i);
    atom__json_stack(j, "stack", s, loc);
    atom__json_obj_end(j);
  }
  atom__json_arr_end(j);
}

static void vars(atom__json *j, const atom_report *r) {
  const struct atom_session *s = atom_report_session(r);
  atom__json_key(j, "variables");
  atom__json_arr(j);
  for (size_t i = 0, n = atom_report_var_count(r); i < n; i++) {
    const char *name = atom_report_var_name(r, i);
    char buf[32];
    if (!name) name = atom_get_name(s, ATOM_SPACE_VAR, atom_report_var(r, i));
    if (!name) {
      snprintf(buf, sizeof buf, "0x%" PRIx64, atom_report_var(r, i));
      name = buf;
    }
    atom__json_str(j, name);
  }
  atom__json_arr_end(j);
}

static void events(atom__json *j, const atom_report *r) {
  const struct atom_session *s = atom_report_session(r);
  atom__json_key(j, "events");
  atom__json_arr(j);
  for (size_t i = 0, n = atom_report_event_count(r); i < n; i++) {
    atom_event ev;
    uint64_t index = 0;
    if (atom_report_event(r, i, &ev, &index) != 0) continue;
    atom__json_obj(j);
    atom__json_kuint(j, "index", index);
    const char *kind = atom_kind_name((int)ev.kind);
    atom__json_kstr(j, "kind", kind ? kind : "unknown");
    key_name(j, "thread", s, ATOM_SPACE_THREAD, ev.thread);
    int space = atom_kind_space(ev.kind);
    if (space) key_name(j, "target", s, space, ev.target);
    else atom__json_kstr(j, "target", NULL);
    atom__json_kuint(j, "loc", ev.loc);
    at(j, "at", s, ev.loc);
    size_t t = atom_report_event_txn(r, i);
    atom__json_key(j, "transaction");
    if (t == SIZE_MAX) atom__json_null(j);
    else atom__json_uint(j, t);
    described(j, atom_report_describe_event, r, i);
    atom__json_stack(j, "stack", s, ev.loc);
    atom__json_obj_end(j);
  }
  atom__json_arr_end(j);
}

static void edges(atom__json *j, const atom_report *r) {
  atom__json_key(j, "edges");
  atom__json_arr(j);
  for (size_t i = 0, n = atom_report_edge_count(r); i < n; i++) {
    size_t from = 0, to = 0;
    uint32_t flags = 0;
    if (atom_report_edge(r, i, &from, &to, &flags) != 0) continue;
    atom__json_obj(j);
    atom__json_kuint(j, "from", from);
    atom__json_kuint(j, "to", to);
    atom__json_key(j, "closing");
    atom__json_bool(j, (flags & ATOM_EDGE_CLOSING) != 0);
    atom__json_obj_end(j);
  }
  atom__json_arr_end(j);
}

void atom__json_report_members(atom__json *j, const atom_report *r) {
  char fp[17];
  snprintf(fp, sizeof fp, "%016" PRIx64, atom_report_fingerprint(r));
  atom__json_kstr(j, "checker", atom_report_checker(r));
  atom__json_kstr(j, "kind", atom_report_kind(r));
  atom__json_kuint(j, "event_index", atom_report_event_index(r));
  atom__json_kuint(j, "count", atom_report_occurrences(r));
  atom__json_kstr(j, "evidence", atom__out_evidence(r));
  char *msg = atom__out_message(r);
  atom__json_kstr(j, "message", msg ? msg : atom_report_message(r));
  free(msg);
  atom__json_kstr(j, "fingerprint", fp);
  txns(j, r);
  atom__json_kuint(j, "omitted", atom_report_txns_omitted(r));
  vars(j, r);
  events(j, r);
  edges(j, r);
}

void atom__output_json_report(atom__out *o, const atom_report *r) {
  atom__json j;
  atom__json_init(&j, o);
  atom__json_obj(&j);
  atom__json_report_members(&j, r);
  atom__json_obj_end(&j);
}

/* ---- the document ---- */

static void stats(atom__json *j, const atom__out_run *run) {
  double seconds = run->opt->seconds >= 0 ? run->opt->seconds : 0.0;
  atom__json_key(j, "stats");
  atom__json_obj(j);
  atom__json_key(j, "seconds");
  atom__json_double(j, seconds);
  atom__json_key(j, "events_per_second");
  atom__json_double(j, seconds > 0 ? (double)run->events / seconds : 0.0);
  atom__json_key(j, "checkers");
  atom__json_arr(j);
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atom__out_checker *c = &run->checkers[i];
    const atom_checker_stats *st = &c->stats;
    int have = c->have_stats;
    atom__json_obj(j);
    atom__json_kstr(j, "name", c->name);
    atom__json_kstr(j, "spec", c->label);
    atom__json_kuint(j, "time_ns", have ? st->time_ns : 0);
    atom__json_kuint(j, "peak_bytes", have ? st->peak_bytes : 0);
    atom__json_kuint(j, "bytes", have ? st->bytes : 0);
    atom__json_kuint(j, "nodes", have ? st->nodes : 0);
    atom__json_kuint(j, "edges", have ? st->edges : 0);
    atom__json_kuint(j, "clocks", have ? st->clocks : 0);
    atom__json_key(j, "disabled");
    atom__json_bool(j, (have && st->disabled) || c->status.state == ATOM_CHECKER_DISABLED);
    atom__json_obj_end(j);
  }
  atom__json_arr_end(j);
  atom__json_obj_end(j);
}

int atom__output_json(atom__out *o, const struct atom_session *s, const atom_output_options *opt) {
  atom__out_run run;
  int err = atom__out_collect(&run, s, opt);
  if (err) return err;
  atom__json j;
  atom__json_init(&j, o);
  atom__json_obj(&j);
  atom__json_kstr(&j, "tool", run.tool);
  atom__json_kstr(&j, "version", atom_version());
  atom__json_kstr(&j, "file", opt->input);
  atom__json_kuint(&j, "events", run.events);
  atom__json_kuint(&j, "rejected", run.rejected);
  /* why the events are only part of the run (atom_output_options::cut_short), else null */
  atom__json_kstr(&j, "cut_short", opt->cut_short);
  atom__json_key(&j, "checkers");
  atom__json_arr(&j);
  for (size_t i = 0; i < run.n_checkers; i++) {
    const atom__out_checker *c = &run.checkers[i];
    atom__json_obj(&j);
    atom__json_kstr(&j, "name", c->name);
    atom__json_kstr(&j, "spec", c->label);
    atom__json_kuint(&j, "violations", c->n_shown + c->dropped);
    atom__json_kuint(&j, "dropped", c->dropped); /* counted, not stored */
    atom__json_kuint(&j, "occurrences", c->occurrences);
    atom__json_kuint(&j, "suppressed", c->suppressed);
    atom__json_kuint(&j, "baselined", c->baselined);
    /* complete: false when it stopped early (the absence of reports proves nothing) */
    atom__json_key(&j, "complete");
    atom__json_bool(&j, !atom__out_partial(c));
    atom__json_key(&j, "disabled");
    atom__json_bool(&j, c->status.state == ATOM_CHECKER_DISABLED);
    if (atom__out_partial(c)) {
      atom__json_kuint(&j, "stopped_at", c->status.stopped_at);
      atom__json_kstr(&j, "reason", c->status.reason ? c->status.reason : "");
    }
    atom__json_key(&j, "reports");
    atom__json_arr(&j);
    for (size_t k = 0; k < c->n_printed; k++) {
      atom__json_obj(&j);
      atom__json_report_members(&j, c->shown[k]);
      atom__json_obj_end(&j);
    }
    atom__json_arr_end(&j);
    atom__json_obj_end(&j);
  }
  atom__json_arr_end(&j);
  if (opt->flags & ATOM_OUTPUT_STATS) stats(&j, &run);
  atom__json_obj_end(&j);
  atom__out_run_free(&run);
  return 0;
}
