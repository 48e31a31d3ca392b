/* Text output: one block per report, grouped by checker in attach order, then one summary line
 * per checker. */
#include "atomcheck.h"

#include <inttypes.h>

#define NAME_BUF 32

static void print_txns(FILE *out, const atc_run *run, const atom_report *r) {
  size_t n = atom_report_txn_count(r);
  if (n == 0) return;
  fputs("  transactions:\n", out);
  for (size_t i = 0; i < n; i++) {
    uint64_t thread = 0, index = 0, loc = 0;
    if (atom_report_txn(r, i, &thread, &index, &loc) != 0) continue;
    char buf[NAME_BUF];
    const char *at = atc_loc_name(run, loc);
    fputs("    ", out);
    atc_put_text(out, atc_name(run, ATOM_SPACE_THREAD, thread, buf, sizeof buf));
    fprintf(out, "@%" PRIu64, index);
    /* A named location reads as the runtime prints it: "T1@5: increment at counter.c:12". */
    if (at) {
      fputs(": ", out);
      atc_put_text(out, at);
      fputc('\n', out);
    } else fprintf(out, " (loc %" PRIu64 ")\n", loc);
  }
}

static void print_vars(FILE *out, const atc_run *run, const atom_report *r) {
  size_t n = atom_report_var_count(r);
  if (n == 0) return;
  fputs("  variables:", out);
  for (size_t i = 0; i < n; i++) {
    char buf[NAME_BUF];
    const char *name = atom_report_var_name(r, i);
    if (!name) name = atc_name(run, ATOM_SPACE_VAR, atom_report_var(r, i), buf, sizeof buf);
    fputs(i ? ", " : " ", out);
    atc_put_text(out, name);
  }
  fputc('\n', out);
}

static void print_events(FILE *out, const atc_run *run, const atom_report *r) {
  size_t n = atom_report_event_count(r);
  if (n == 0) return;
  fputs("  events:\n", out);
  for (size_t i = 0; i < n; i++) {
    atom_event ev;
    uint64_t index = 0;
    if (atom_report_event(r, i, &ev, &index) != 0) continue;
    char tbuf[NAME_BUF], obuf[NAME_BUF];
    fprintf(out, "    %" PRIu64 ": ", index);
    atc_put_text(out, atc_name(run, ATOM_SPACE_THREAD, ev.thread, tbuf, sizeof tbuf));
    fprintf(out, " %s", atc_kind_name(ev.kind));
    int space = atc_target_space(ev.kind);
    if (space) {
      fputc('(', out);
      atc_put_text(out, atc_name(run, space, ev.target, obuf, sizeof obuf));
      fputc(')', out);
    }
    const char *at = atc_loc_name(run, ev.loc);
    if (at) {
      fputs(" in ", out);
      atc_put_text(out, at);
      fputc('\n', out);
    } else fprintf(out, " (loc %" PRIu64 ")\n", ev.loc);
  }
}

static void print_report(FILE *out, const atc_run *run, const atc_checker *c,
                         const atom_report *r) {
  uint64_t count = atom_report_occurrences(r);
  fprintf(out, "%s: %s at event %" PRIu64 " (%" PRIu64 " occurrence%s, %s)\n", c->spec,
          atom_report_kind(r), atom_report_event_index(r), count, atc_plural(count),
          atc_evidence_name(r));
  fputs("  ", out);
  atc_put_text(out, atom_report_message(r));
  fputc('\n', out);
  print_txns(out, run, r);
  print_vars(out, run, r);
  print_events(out, run, r);
  fputc('\n', out);
}

int atc_output_text(FILE *out, const atc_run *run) {
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    size_t shown = c->n_reports < run->max_reports ? c->n_reports : run->max_reports;
    for (size_t k = 0; k < shown; k++) print_report(out, run, c, c->reports[k]);
    if (shown < c->n_reports)
      fprintf(out, "%s: %zu more report%s not shown (--max-reports %zu)\n\n", c->spec,
              c->n_reports - shown, atc_plural(c->n_reports - shown), run->max_reports);
  }
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    /* A checker that stopped early never reads "no violations": the absence of reports
     * proves nothing then. */
    size_t violations = c->n_reports + c->dropped;
    if (violations > 0)
      fprintf(out, "%s: %zu violation%s (%" PRIu64 " occurrence%s)\n", c->spec, violations,
              atc_plural(violations), c->occurrences, atc_plural(c->occurrences));
    if (c->dropped > 0)
      fprintf(out, "%s: %zu distinct report%s counted but not stored (--max-stored %zu)\n",
              c->spec, c->dropped, atc_plural(c->dropped), run->max_stored);
    if (atc_checker_partial(c))
      fprintf(out, "%s: %s, stopped at event %" PRIu64 ": %s\n", c->spec,
              atc_checker_state_name(c), c->status.stopped_at,
              c->status.reason ? c->status.reason : "no reason given");
    else if (c->n_reports == 0)
      fprintf(out, "%s: no violations\n", c->spec);
  }
  if (fflush(out) != 0 || ferror(out)) return -1;
  return 0;
}
