/* The SARIF 2.1.0 output, shaped for GitHub code scanning (doc/output.md, "SARIF"): one run;
 * one rule per checker and kind that has a shown result, with short and full descriptions,
 * help in text and markdown and a default level; one result per shown report with its level,
 * its message, a physical location (artifact URI and start line) wherever the session knows
 * the file and line of a location, related locations for the witness events, the interleaving
 * as a code flow, and a fingerprint that stays the same across runs (partialFingerprints). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/location.h"
#include "atomicity/output.h"
#include "atomicity/session.h"
#include "atomicity/version.h"
#include "output/out.h"

#define SARIF_SCHEMA \
  "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json"

/* What each kind of report means and how to fix it: the rules' descriptions and help. The
 * level is the rule's default: "error" for what an online checker saw happen, "warning" for
 * what is predicted or may happen (a result confirmed by an observation is raised to error). */
typedef struct kind_text {
  const char *kind; /* a prefix when it ends with '-' (pattern-1 ... pattern-11) */
  const char *level;
  const char *title;   /* shortDescription */
  const char *meaning; /* fullDescription and the first paragraph of help */
} kind_text;

static const kind_text kinds[] = {
    {"conflict-cycle", "error", "Atomicity violation: a cycle of conflicts between transactions",
     "Two or more transactions ran interleaved so that each conflicts with the next (they "
     "access a variable, or a lock, that the next one also accesses, at least one of them "
     "writing) and the last conflicts with the first. No serial order of these transactions "
     "gives the same result, so code written to run atomically did not."},
    {"tso-cycle", "error", "Atomicity violation under store buffering (TSO)",
     "The transactions are not serializable when writes may stay in a store buffer before "
     "they reach memory (x86-TSO): a read saw a value that no serial order of the "
     "transactions gives."},
    {"non-robust", "warning", "Execution not robust against store buffering (TSO)",
     "The execution has no sequentially consistent equivalent: with store buffering, its "
     "events are ordered in a cycle. Code that assumes sequential consistency may misbehave."},
    {"commit-nodes", "warning", "Predicted atomicity violation (commit-node analysis)",
     "A feasible reordering of the observed events makes the transactions unserializable: "
     "nobody saw it happen, but the synchronization of the program allows it."},
    {"potential-deadlock", "warning", "Potential deadlock between transactions",
     "Two transactions take locks in opposite orders: a feasible schedule makes each wait for "
     "a lock that the other holds."},
    {"not-reducible", "warning", "Predicted atomicity violation (not reducible)",
     "A transaction cannot be reduced to an atomic step: between its acquiring and releasing "
     "phases it contains an access that other threads can interleave with."},
    {"unserializable-pattern", "warning", "Predicted atomicity violation (unserializable pattern)",
     "An access of another thread can occur between two accesses of a transaction to the same "
     "variable, in a pattern no serial order explains (for example, a write between a read "
     "and a write of the same variable)."},
    {"2-block", "warning", "Predicted atomicity violation (two variables)",
     "Two transactions that each read and write two variables can interleave so that the "
     "result equals neither serial order."},
    {"fork-join-order", "warning", "Predicted atomicity violation across fork or join",
     "Around a fork or join, a unit can read a value written by a unit that the fork or "
     "join orders after it."},
    {"unserializable-interleaving", "warning", "Predicted atomicity violation (interleaving)",
     "A feasible interleaving of these transactions is not view-serializable: some read sees "
     "a write that no serial order gives it."},
    {"pattern-", "error", "Atomicity violation: an unserializable access pattern",
     "Accesses of another thread came between two accesses of a transaction to variables of "
     "one atomic set, in one of the unserializable patterns of race automata."},
};

static const char default_meaning[] =
    "The checker found that transactions meant to run atomically did not.";

static const char how_to_fix[] =
    "Make the transaction really atomic: hold one lock (or the same set of locks) across the "
    "whole block that must not be interleaved, not around each access separately; or use an "
    "atomic operation that does the read and the write in one step (compare-and-swap, "
    "fetch-and-add); or, if the interleaving is harmless, shrink the block marked atomic.";

static const kind_text *kind_of(const char *kind) {
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    size_t n = strlen(kinds[i].kind);
    if (kinds[i].kind[n - 1] == '-' ? strncmp(kind, kinds[i].kind, n) == 0
                                    : strcmp(kind, kinds[i].kind) == 0)
      return &kinds[i];
  }
  return NULL;
}

static const char *rule_level(const char *kind) {
  const kind_text *k = kind_of(kind);
  return k ? k->level : "warning";
}

static const char *result_level(const atom_report *r) {
  if (atom_report_evidence(r) == ATOM_EVIDENCE_CONFIRMED) return "error";
  return rule_level(atom_report_kind(r));
}

/* The evidence in words, appended to the message a code-scanning user reads. */
static const char *evidence_text(const atom_report *r) {
  switch (atom_report_evidence(r)) {
  case ATOM_EVIDENCE_PREDICTED: return "predicted: a feasible interleaving, not observed";
  case ATOM_EVIDENCE_CONFIRMED: return "confirmed: predicted and observed in this run";
  default: return "observed in this run";
  }
}

/* ---- rules ---- */

typedef struct rule {
  const char *checker, *kind;
} rule;

static size_t rule_index(const rule *rules, size_t n, const atom_report *r) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(rules[i].checker, atom_report_checker(r)) == 0 &&
        strcmp(rules[i].kind, atom_report_kind(r)) == 0)
      return i;
  return n;
}

/* The distinct checker/kind pairs of the written results, in order of first appearance. */
static rule *collect_rules(const atom__out_run *run, size_t *n_out) {
  size_t cap = 1;
  for (size_t i = 0; i < run->n_checkers; i++) cap += run->checkers[i].n_printed;
  rule *rules = malloc(cap * sizeof *rules);
  if (!rules) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < run->n_checkers; i++)
    for (size_t k = 0; k < run->checkers[i].n_printed; k++) {
      const atom_report *r = run->checkers[i].shown[k];
      if (rule_index(rules, n, r) < n) continue;
      rules[n].checker = atom_report_checker(r);
      rules[n].kind = atom_report_kind(r);
      n++;
    }
  *n_out = n;
  return rules;
}

static void text_member(atom__json *j, const char *key, const char *text) {
  atom__json_key(j, key);
  atom__json_obj(j);
  atom__json_kstr(j, "text", text);
  atom__json_obj_end(j);
}

/* "AerodromeConflictCycle": the rule's name, from its id. */
static void rule_name(char *buf, size_t size, const rule *ru) {
  size_t n = 0;
  int up = 1;
  for (int part = 0; part < 2; part++)
    for (const char *p = part ? ru->kind : ru->checker; *p && n + 1 < size; p++) {
      char c = *p;
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        buf[n++] = up && c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
        up = 0;
      } else
        up = 1;
    }
  buf[n] = '\0';
}

static void write_rule(atom__json *j, const rule *ru) {
  const kind_text *k = kind_of(ru->kind);
  const char *title = k ? k->title : "Atomicity violation";
  const char *meaning = k ? k->meaning : default_meaning;
  char id[256], name[256];
  snprintf(id, sizeof id, "%s/%s", ru->checker, ru->kind);
  rule_name(name, sizeof name, ru);
  size_t hn = strlen(meaning) + strlen(how_to_fix) + strlen(ru->checker) + strlen(ru->kind) + 256;
  char *full = malloc(hn), *help = malloc(hn), *md = malloc(hn);
  if (full)
    snprintf(full, hn, "%s Reported by the %s checker as '%s'.", meaning, ru->checker, ru->kind);
  if (help) snprintf(help, hn, "%s\n\nHow to fix: %s", meaning, how_to_fix);
  if (md)
    snprintf(md, hn,
             "## %s\n\n%s\n\n**How to fix.** %s\n\nThe result lists the transactions involved and, "
             "for each edge of the cycle, the two conflicting accesses (thread, variable, "
             "source line). Checker `%s`, kind `%s`.",
             title, meaning, how_to_fix, ru->checker, ru->kind);
  atom__json_obj(j);
  atom__json_kstr(j, "id", id);
  atom__json_kstr(j, "name", name);
  text_member(j, "shortDescription", title);
  text_member(j, "fullDescription", full ? full : meaning);
  atom__json_key(j, "help");
  atom__json_obj(j);
  atom__json_kstr(j, "text", help ? help : meaning);
  atom__json_kstr(j, "markdown", md ? md : meaning);
  atom__json_obj_end(j);
  atom__json_key(j, "defaultConfiguration");
  atom__json_obj(j);
  atom__json_kstr(j, "level", rule_level(ru->kind));
  atom__json_obj_end(j);
  atom__json_key(j, "properties");
  atom__json_obj(j);
  atom__json_key(j, "tags");
  atom__json_arr(j);
  atom__json_str(j, "concurrency");
  atom__json_str(j, "atomicity");
  atom__json_str(j, "correctness");
  atom__json_arr_end(j);
  atom__json_kstr(j, "precision", strcmp(rule_level(ru->kind), "error") == 0 ? "high" : "medium");
  atom__json_kstr(j, "problem.severity", rule_level(ru->kind));
  atom__json_obj_end(j);
  atom__json_obj_end(j);
  free(full);
  free(help);
  free(md);
}

/* ---- locations ---- */

/* Is the file and line of loc known? */
static int physical(const struct atom_session *s, uint64_t loc) {
  const char *file = NULL;
  uint32_t line = 0;
  return atom_get_location(s, loc, NULL, &file, &line) && file && *file && line > 0;
}

/* A file name as a URI reference (malloc'd; NULL if out of memory): relative paths stay
 * relative (to the repository root for GitHub), absolute ones become file:// URIs; bytes
 * outside the unreserved set and '/' are percent-encoded. */
static char *uri_of(const char *path) {
  static const char hex[] = "0123456789ABCDEF";
  char *u = malloc(3 * strlen(path) + 8), *q = u;
  if (!u) return NULL;
  if (path[0] == '/') q += sprintf(q, "file://");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    unsigned char c = *p;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
        c == '-' || c == '_' || c == '.' || c == '~')
      *q++ = (char)c;
    else {
      *q++ = '%';
      *q++ = hex[c >> 4];
      *q++ = hex[c & 15];
    }
  }
  *q = '\0';
  return u;
}

/* physicalLocation: artifact path and line. */
static void physical_at(atom__json *j, const char *file, uint32_t line) {
  char *uri = uri_of(file);
  atom__json_key(j, "physicalLocation");
  atom__json_obj(j);
  atom__json_key(j, "artifactLocation");
  atom__json_obj(j);
  atom__json_kstr(j, "uri", uri ? uri : file);
  atom__json_obj_end(j);
  atom__json_key(j, "region");
  atom__json_obj(j);
  atom__json_kuint(j, "startLine", line);
  atom__json_obj_end(j);
  atom__json_obj_end(j);
  free(uri);
}

/* physicalLocation of loc (which must be physical()). */
static void physical_location(atom__json *j, const struct atom_session *s, uint64_t loc) {
  const char *file = NULL;
  uint32_t line = 0;
  atom_get_location(s, loc, NULL, &file, &line);
  physical_at(j, file, line);
}

static void logical_location(atom__json *j, const char *name, const char *fqn) {
  atom__json_key(j, "logicalLocations");
  atom__json_arr(j);
  atom__json_obj(j);
  atom__json_kstr(j, "name", name);
  atom__json_kstr(j, "fullyQualifiedName", fqn);
  atom__json_obj_end(j);
  atom__json_arr_end(j);
}

/* The location of witness event i: physical when known, else logical ("event N"). */
static void event_location(atom__json *j, const atom_report *r, size_t i, int with_id) {
  const struct atom_session *s = atom_report_session(r);
  atom_event ev;
  uint64_t index = 0;
  atom_report_event(r, i, &ev, &index);
  char *d = atom__out_describe(atom_report_describe_event, r, i);
  char fqn[32];
  snprintf(fqn, sizeof fqn, "event %" PRIu64, index);
  atom__json_obj(j);
  if (with_id) atom__json_kuint(j, "id", i + 1);
  if (physical(s, ev.loc)) physical_location(j, s, ev.loc);
  logical_location(j, d ? d : fqn, fqn);
  text_member(j, "message", d ? d : fqn);
  atom__json_obj_end(j);
  free(d);
}

/* The loc that heads the result: the later event of the closing edge, else of any edge, else
 * the first transaction's begin, else the first witness event, whichever has a file and line
 * first. @return 1 and *loc, or 0 if none is known. */
static int primary_loc(const atom_report *r, uint64_t *loc) {
  const struct atom_session *s = atom_report_session(r);
  size_t n_edges = atom_report_edge_count(r);
  for (int pass = 0; pass < 2; pass++)
    for (size_t e = 0; e < n_edges; e++) {
      size_t from = 0, to = 0;
      uint32_t flags = 0;
      atom_event ev;
      if (atom_report_edge(r, e, &from, &to, &flags) != 0) continue;
      if (pass == 0 && !(flags & ATOM_EDGE_CLOSING)) continue;
      for (int k = 0; k < 2; k++)
        if (atom_report_event(r, k ? from : to, &ev, NULL) == 0 && physical(s, ev.loc)) {
          *loc = ev.loc;
          return 1;
        }
    }
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    uint64_t l = 0;
    if (atom_report_txn(r, i, NULL, NULL, &l) == 0 && physical(s, l)) {
      *loc = l;
      return 1;
    }
  }
  for (size_t i = 0, n = atom_report_event_count(r); i < n; i++) {
    atom_event ev;
    if (atom_report_event(r, i, &ev, NULL) == 0 && physical(s, ev.loc)) {
      *loc = ev.loc;
      return 1;
    }
  }
  return 0;
}

/* The interleaving as one code flow: one thread flow per thread, its witness events in index
 * order. Only when every witness event has a file and line (a flow step without one helps
 * nobody). */
static void code_flows(atom__json *j, const atom_report *r) {
  const struct atom_session *s = atom_report_session(r);
  size_t n = atom_report_event_count(r);
  if (n == 0) return;
  for (size_t i = 0; i < n; i++) {
    atom_event ev;
    if (atom_report_event(r, i, &ev, NULL) != 0 || !physical(s, ev.loc)) return;
  }
  atom__json_key(j, "codeFlows");
  atom__json_arr(j);
  atom__json_obj(j);
  atom__json_key(j, "threadFlows");
  atom__json_arr(j);
  for (size_t i = 0; i < n; i++) {
    atom_event ev;
    atom_report_event(r, i, &ev, NULL);
    int first = 1;
    for (size_t k = 0; k < i && first; k++) {
      atom_event e2;
      if (atom_report_event(r, k, &e2, NULL) == 0 && e2.thread == ev.thread) first = 0;
    }
    if (!first) continue;
    atom__json_obj(j);
    char tname[128];
    const char *name = atom_get_name(s, ATOM_SPACE_THREAD, ev.thread);
    if (!name) {
      snprintf(tname, sizeof tname, "T%" PRIu64, ev.thread);
      name = tname;
    }
    atom__json_kstr(j, "id", name);
    atom__json_key(j, "locations");
    atom__json_arr(j);
    for (size_t k = i; k < n; k++) {
      atom_event e2;
      uint64_t index = 0;
      if (atom_report_event(r, k, &e2, &index) != 0 || e2.thread != ev.thread) continue;
      atom__json_obj(j);
      atom__json_kuint(j, "executionOrder", index + 1);
      atom__json_key(j, "location");
      event_location(j, r, k, 0);
      atom__json_obj_end(j);
    }
    atom__json_arr_end(j);
    atom__json_obj_end(j);
  }
  atom__json_arr_end(j);
  atom__json_obj_end(j);
  atom__json_arr_end(j);
}

static void write_result(atom__json *j, const atom__out_run *run, const atom__out_checker *c,
                         const atom_report *r, const rule *rules, size_t n_rules) {
  const struct atom_session *s = run->session;
  size_t ri = rule_index(rules, n_rules, r);
  char id[256], fp[17];
  snprintf(id, sizeof id, "%s/%s", atom_report_checker(r), atom_report_kind(r));
  snprintf(fp, sizeof fp, "%016" PRIx64, atom_report_fingerprint(r));
  atom__json_obj(j);
  atom__json_kstr(j, "ruleId", id);
  if (ri < n_rules) atom__json_kuint(j, "ruleIndex", ri);
  atom__json_kstr(j, "level", result_level(r));
  char *msg = atom__out_message(r);
  const char *m = msg ? msg : atom_report_message(r);
  size_t tn = strlen(m) + 64;
  char *text = malloc(tn);
  if (text) snprintf(text, tn, "%s (%s)", m, evidence_text(r));
  text_member(j, "message", text ? text : m);
  free(text);
  free(msg);

  atom__json_key(j, "locations");
  atom__json_arr(j);
  atom__json_obj(j);
  uint64_t loc = 0;
  if (primary_loc(r, &loc)) {
    physical_location(j, s, loc);
  } else if (run->opt->input && strcmp(run->opt->input, "-") != 0) {
    /* the input itself: GitHub needs a physical location in every result */
    physical_at(j, run->opt->input, 1);
  }
  {
    char fqn[64];
    snprintf(fqn, sizeof fqn, "event %" PRIu64, atom_report_event_index(r));
    logical_location(j, id, fqn);
  }
  atom__json_obj_end(j);
  atom__json_arr_end(j);

  size_t n = atom_report_event_count(r);
  if (n) {
    atom__json_key(j, "relatedLocations");
    atom__json_arr(j);
    for (size_t i = 0; i < n; i++) event_location(j, r, i, 1);
    atom__json_arr_end(j);
  }
  code_flows(j, r);

  atom__json_key(j, "partialFingerprints");
  atom__json_obj(j);
  atom__json_kstr(j, "atomicity/v1", fp);
  atom__json_obj_end(j);

  atom__json_key(j, "properties");
  atom__json_obj(j);
  atom__json_kstr(j, "spec", c->label);
  atom__json_report_members(j, r);
  atom__json_obj_end(j);
  atom__json_obj_end(j);
}

/* The run's one invocation: a checker that stopped early is a tool execution notification
 * (level "error" when disabled, "warning" when incomplete), and so is an input cut short
 * ("warning", first); then the execution did not succeed: zero results must not read as a
 * clean input. */
static void invocation(atom__json *j, const atom__out_run *run) {
  const char *cut_short = run->opt->cut_short;
  int partial = cut_short != NULL;
  for (size_t i = 0; i < run->n_checkers; i++) partial |= atom__out_partial(&run->checkers[i]);
  atom__json_key(j, "invocations");
  atom__json_arr(j);
  atom__json_obj(j);
  atom__json_key(j, "executionSuccessful");
  atom__json_bool(j, !partial);
  atom__json_key(j, "toolExecutionNotifications");
  atom__json_arr(j);
  if (cut_short) {
    static const char head[] = "input: INCOMPLETE, cut short: ";
    size_t tn = sizeof head + strlen(cut_short);
    char *text = malloc(tn);
    if (text) snprintf(text, tn, "%s%s", head, cut_short);
    atom__json_obj(j);
    atom__json_kstr(j, "level", "warning");
    atom__json_key(j, "descriptor");
    atom__json_obj(j);
    atom__json_kstr(j, "id", "input-cut-short");
    atom__json_obj_end(j);
    text_member(j, "message", text ? text : "the input is only part of the run");
    atom__json_obj_end(j);
    free(text);
  }
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atom__out_checker *c = &run->checkers[i];
    if (!atom__out_partial(c)) continue;
    int disabled = c->status.state == ATOM_CHECKER_DISABLED;
    const char *reason = c->status.reason ? c->status.reason : "no reason given";
    size_t tn = strlen(c->label) + strlen(reason) + 64;
    char *text = malloc(tn);
    if (text)
      snprintf(text, tn, "%s: %s, stopped at event %" PRIu64 ": %s", c->label,
               atom__out_state_name(c), c->status.stopped_at, reason);
    atom__json_obj(j);
    atom__json_kstr(j, "level", disabled ? "error" : "warning");
    atom__json_key(j, "descriptor");
    atom__json_obj(j);
    atom__json_kstr(j, "id", disabled ? "checker-disabled" : "checker-incomplete");
    atom__json_obj_end(j);
    text_member(j, "message", text ? text : "a checker stopped early");
    atom__json_key(j, "properties");
    atom__json_obj(j);
    atom__json_kstr(j, "checker", c->label);
    atom__json_kuint(j, "stopped_at", c->status.stopped_at);
    atom__json_obj_end(j);
    atom__json_obj_end(j);
    free(text);
  }
  atom__json_arr_end(j);
  atom__json_obj_end(j);
  atom__json_arr_end(j);
}

int atom__output_sarif(atom__out *o, const struct atom_session *s, const atom_output_options *opt) {
  atom__out_run run;
  int err = atom__out_collect(&run, s, opt);
  if (err) return err;
  size_t n_rules = 0;
  rule *rules = collect_rules(&run, &n_rules);
  if (!rules) {
    atom__out_run_free(&run);
    return ATOM_ENOMEM;
  }
  atom__json j;
  atom__json_init(&j, o);
  atom__json_obj(&j);
  atom__json_kstr(&j, "$schema", SARIF_SCHEMA);
  atom__json_kstr(&j, "version", "2.1.0");
  atom__json_key(&j, "runs");
  atom__json_arr(&j);
  atom__json_obj(&j);

  atom__json_key(&j, "tool");
  atom__json_obj(&j);
  atom__json_key(&j, "driver");
  atom__json_obj(&j);
  atom__json_kstr(&j, "name", run.tool);
  atom__json_kstr(&j, "version", atom_version());
  atom__json_kstr(&j, "semanticVersion", atom_version());
  /* the project's own page on this format, relative to its source tree */
  atom__json_kstr(&j, "informationUri", "doc/output.md");
  atom__json_key(&j, "rules");
  atom__json_arr(&j);
  for (size_t i = 0; i < n_rules; i++) write_rule(&j, &rules[i]);
  atom__json_arr_end(&j);
  atom__json_obj_end(&j);
  atom__json_obj_end(&j);

  invocation(&j, &run);

  atom__json_key(&j, "results");
  atom__json_arr(&j);
  for (size_t i = 0; i < run.n_checkers; i++) {
    const atom__out_checker *c = &run.checkers[i];
    for (size_t k = 0; k < c->n_printed; k++) write_result(&j, &run, c, c->shown[k], rules, n_rules);
  }
  atom__json_arr_end(&j);

  atom__json_key(&j, "properties");
  atom__json_obj(&j);
  atom__json_kstr(&j, "file", opt->input);
  atom__json_kuint(&j, "events", run.events);
  atom__json_kuint(&j, "rejected", run.rejected);
  if (opt->cut_short) atom__json_kstr(&j, "cut_short", opt->cut_short);
  atom__json_obj_end(&j);

  atom__json_obj_end(&j); /* the run */
  atom__json_arr_end(&j);
  atom__json_obj_end(&j);
  free(rules);
  atom__out_run_free(&run);
  return 0;
}
