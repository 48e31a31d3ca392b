/* The text output: what a person reads in a terminal. Per report a block: the header line
 * "CHECKER: KIND at event N (COUNT occurrences, EVIDENCE)", the message, its transactions, the
 * edges of its cycle (the two conflicting events of each), its variables and its other witness
 * events; then one summary line per checker, and a line for an input cut short. Every name goes through atom__out_text_chars, so a
 * trace cannot send escape sequences to the terminal. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "atomicity/location.h"
#include "atomicity/output.h"
#include "atomicity/session.h"
#include "output/out.h"

/* Write describer f's text of r's item i, escaped, then a newline. */
static void line(atom__out *o, const char *indent,
                 int (*f)(char *, size_t, const atom_report *, size_t), const atom_report *r,
                 size_t i) {
  char *s = atom__out_describe(f, r, i);
  atom__out_puts(o, indent);
  atom__out_text_chars(o, s ? s : "?");
  atom__out_write(o, "\n", 1);
  free(s);
}

/* The callers of loc's stack (atom_set_stack), one per line after the line of its headline
 * frame: "called from FUNCTION at FILE:LINE". Nothing when no stack was set. */
static void callers(atom__out *o, const atom_report *r, uint64_t loc) {
  const struct atom_session *s = atom_report_session(r);
  const uint64_t *frames = NULL;
  size_t n = atom_get_stack(s, loc, &frames);
  char buf[512];
  for (size_t i = 1; i < n; i++) {
    if (atom_describe_location(buf, sizeof buf, s, frames[i]) < 0) continue;
    atom__out_puts(o, "        called from ");
    atom__out_text_chars(o, buf);
    atom__out_write(o, "\n", 1);
  }
}

static void txns(atom__out *o, const atom_report *r) {
  size_t n = atom_report_txn_count(r);
  if (n == 0) return;
  atom__out_puts(o, "  transactions:\n");
  for (size_t i = 0; i < n; i++) {
    uint64_t loc = 0;
    line(o, "    ", atom_report_describe_txn, r, i);
    if (atom_report_txn(r, i, NULL, NULL, &loc) == 0) callers(o, r, loc);
  }
  uint64_t omitted = atom_report_txns_omitted(r);
  if (omitted)
    atom__out_printf(o, "    \xe2\x80\xa6 and %" PRIu64 " more transaction%s not stored\n", omitted,
                     atom__out_plural(omitted));
}

static void edges(atom__out *o, const atom_report *r) {
  size_t n = atom_report_edge_count(r);
  if (n == 0) return;
  atom__out_puts(o, "  edges:\n");
  for (size_t i = 0; i < n; i++) {
    size_t from = 0, to = 0;
    uint32_t flags = 0;
    if (atom_report_edge(r, i, &from, &to, &flags) != 0) continue;
    char *a = atom__out_describe(atom_report_describe_event, r, from);
    char *b = atom__out_describe(atom_report_describe_event, r, to);
    atom__out_puts(o, "    ");
    atom__out_text_chars(o, a ? a : "?");
    atom__out_puts(o, " \xe2\x86\x92 "); /* → */
    atom__out_text_chars(o, b ? b : "?");
    if (flags & ATOM_EDGE_CLOSING) atom__out_puts(o, " (closed the cycle)");
    atom__out_write(o, "\n", 1);
    free(a);
    free(b);
  }
}

static void vars(atom__out *o, const atom_report *r) {
  size_t n = atom_report_var_count(r);
  if (n == 0) return;
  const struct atom_session *s = atom_report_session(r);
  atom__out_puts(o, "  variables:");
  for (size_t i = 0; i < n; i++) {
    atom__out_puts(o, i ? ", " : " ");
    const char *name = atom_report_var_name(r, i);
    if (name) atom__out_text_chars(o, name);
    else atom__out_key(o, s, ATOM_SPACE_VAR, atom_report_var(r, i), atom__out_text_chars);
  }
  atom__out_write(o, "\n", 1);
}

/* Witness events that are on no edge (all of them for a report without a cycle). */
static void other_events(atom__out *o, const atom_report *r) {
  size_t n = atom_report_event_count(r), n_edges = atom_report_edge_count(r), shown = 0;
  for (size_t i = 0; i < n; i++) {
    int on_edge = 0;
    for (size_t e = 0; e < n_edges && !on_edge; e++) {
      size_t from = 0, to = 0;
      if (atom_report_edge(r, e, &from, &to, NULL) == 0) on_edge = from == i || to == i;
    }
    if (on_edge) continue;
    if (shown++ == 0) atom__out_puts(o, n_edges ? "  other events:\n" : "  events:\n");
    line(o, "    ", atom_report_describe_event, r, i);
    atom_event ev;
    if (atom_report_event(r, i, &ev, NULL) == 0) callers(o, r, ev.loc);
  }
}

void atom__output_text_report(atom__out *o, const atom_report *r, const char *label) {
  uint64_t count = atom_report_occurrences(r);
  atom__out_text_chars(o, label ? label : atom_report_checker(r));
  atom__out_printf(o, ": %s at event %" PRIu64 " (%" PRIu64 " occurrence%s, %s)\n",
                   atom_report_kind(r), atom_report_event_index(r), count,
                   atom__out_plural(count), atom__out_evidence(r));
  char *msg = atom__out_message(r);
  atom__out_puts(o, "  ");
  atom__out_text_chars(o, msg ? msg : atom_report_message(r));
  atom__out_write(o, "\n", 1);
  free(msg);
  txns(o, r);
  edges(o, r);
  vars(o, r);
  other_events(o, r);
  atom__out_write(o, "\n", 1);
}

static void summary(atom__out *o, const atom__out_run *run, const atom__out_checker *c) {
  const char *l = c->label;
  size_t violations = c->n_shown + c->dropped, hidden = c->suppressed + c->baselined;
  if (violations > 0) {
    atom__out_text_chars(o, l);
    atom__out_printf(o, ": %zu violation%s (%" PRIu64 " occurrence%s)\n", violations,
                     atom__out_plural(violations), c->occurrences,
                     atom__out_plural(c->occurrences));
  }
  if (hidden > 0) {
    atom__out_text_chars(o, l);
    atom__out_printf(o, ": %zu known violation%s not shown (%zu suppressed, %zu in the baseline)\n",
                     hidden, atom__out_plural(hidden), c->suppressed, c->baselined);
  }
  if (c->dropped > 0) {
    atom__out_text_chars(o, l);
    atom__out_printf(o, ": %zu distinct report%s counted but not stored\n", c->dropped,
                     atom__out_plural(c->dropped));
  }
  (void)run;
  if (atom__out_partial(c)) {
    /* A checker that stopped early never reads "no violations": the absence of reports
     * proves nothing then. */
    atom__out_text_chars(o, l);
    atom__out_printf(o, ": %s, stopped at event %" PRIu64 ": ", atom__out_state_name(c),
                     c->status.stopped_at);
    atom__out_text_chars(o, c->status.reason ? c->status.reason : "no reason given");
    atom__out_write(o, "\n", 1);
  } else if (violations == 0) {
    atom__out_text_chars(o, l);
    atom__out_puts(o, hidden ? ": no new violations\n" : ": no violations\n");
  }
}

int atom__output_text(atom__out *o, const struct atom_session *s, const atom_output_options *opt) {
  atom__out_run run;
  int err = atom__out_collect(&run, s, opt);
  if (err) return err;
  for (size_t i = 0; i < run.n_checkers; i++) {
    const atom__out_checker *c = &run.checkers[i];
    for (size_t k = 0; k < c->n_printed; k++) atom__output_text_report(o, c->shown[k], c->label);
    if (c->n_printed < c->n_shown && !(opt->flags & ATOM_OUTPUT_NO_REPORTS)) {
      atom__out_text_chars(o, c->label);
      atom__out_printf(o, ": %zu more report%s not shown (at most %zu per checker)\n\n",
                       c->n_shown - c->n_printed, atom__out_plural(c->n_shown - c->n_printed),
                       opt->max_reports);
    }
  }
  if (!(opt->flags & ATOM_OUTPUT_NO_SUMMARY))
    for (size_t i = 0; i < run.n_checkers; i++) summary(o, &run, &run.checkers[i]);
  if (opt->cut_short) {
    /* Not a per-checker line, so NO_SUMMARY keeps it: a verdict on part of a run must never
     * read as one on the whole run. */
    atom__out_puts(o, "input: INCOMPLETE, cut short: ");
    atom__out_text_chars(o, opt->cut_short);
    atom__out_write(o, "\n", 1);
  }
  atom__out_run_free(&run);
  return 0;
}
