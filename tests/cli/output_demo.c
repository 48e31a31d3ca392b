/* output-demo: a session whose one report is a two-transaction cycle with edges, described
 * locations and a stack, written with atom_session_write (or atom_report_write) in the format
 * given; the outputs' tests (test_atomcheck.py, class Outputs) read it. The checkers of the
 * library may or may not give edges; this one always does, so the tests do not depend on them.
 *
 * Usage: output-demo FORMAT [SHIFT [nolocations|report|v1|cutshort [REASON]]]
 *   FORMAT  text, json, sarif, dot or html
 *   SHIFT   unrelated events pushed first, so event indexes differ but nothing else does
 *   nolocations: leave the locs undescribed; report: atom_report_write of the report alone;
 *   v1: the options as a caller built against version 1 has them (a heap block of exactly
 *   that size, so a sanitizer sees any read beyond it); cutshort: the input marked as cut
 *   short (atom_output_options::cut_short), by REASON or a --max-events one */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomicity.h>
#include <atomicity/sys/checker.h>

typedef struct demo {
  atom_env *env;
  atom_ev begins[2], acc[4];
  size_t n_begins, n_acc;
} demo;

static int demo_create(void **self, atom_env *env) {
  demo *d = calloc(1, sizeof *d);
  if (!d) return ATOM_ENOMEM;
  d->env = env;
  *self = d;
  return 0;
}

/* Keeps the first two BEGINs of threads other than the filler's and the first four accesses
 * of those threads. */
static int demo_event(void *self, const atom_ev *ev) {
  demo *d = self;
  if (ev->kind == ATOM_BEGIN && d->n_begins < 2) d->begins[d->n_begins++] = *ev;
  else if ((ev->kind == ATOM_READ || ev->kind == ATOM_WRITE) && d->n_begins == 2 && d->n_acc < 4)
    d->acc[d->n_acc++] = *ev;
  return 0;
}

static int demo_finish(void *self) {
  demo *d = self;
  if (d->n_begins < 2 || d->n_acc < 4) return 0;
  atom_txn_ref txns[2];
  for (size_t i = 0; i < 2; i++)
    txns[i] = (atom_txn_ref){d->begins[i].thread, 0, d->begins[i].index, d->begins[i].loc};
  uint32_t vars[2] = {d->acc[0].target, d->acc[2].target};
  atom_edge_ref edges[2] = {{0, 1, 0, 0}, {2, 3, ATOM_EDGE_CLOSING, 0}};
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "conflict-cycle";
  spec.event_index = d->acc[3].index;
  spec.txns = txns;
  spec.n_txns = 2;
  spec.events = d->acc;
  spec.n_events = 4;
  spec.vars = vars;
  spec.n_vars = 2;
  spec.edges = edges;
  spec.n_edges = 2;
  return atom_env_report(d->env, &spec);
}

static void demo_destroy(void *self) { free(self); }

static const atom_checker demo_checker = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE),
    .name = "demo",
    .summary = "reports the first two-transaction interleaving it sees, as a cycle",
    .create = demo_create,
    .on_event = demo_event,
    .finish = demo_finish,
    .destroy = demo_destroy,
};

static int fail(const char *what, int rc) {
  fprintf(stderr, "output-demo: %s: %s (%s)\n", what, atom_strerror(rc), atom_last_error());
  return 2;
}

int main(int argc, char **argv) {
  static const char *const formats[] = {"", "text", "json", "sarif", "html", "dot"};
  unsigned format = 0;
  for (unsigned f = 1; argc > 1 && f < 6; f++)
    if (strcmp(argv[1], formats[f]) == 0) format = f;
  if (!format) {
    fputs("usage: output-demo text|json|sarif|dot|html [SHIFT [nolocations|report]]\n", stderr);
    return 2;
  }
  long shift = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
  const char *mode = argc > 3 ? argv[3] : "";
  atom_session *s = NULL;
  int rc = atom_session_new(&s, NULL);
  if (rc) return fail("session", rc);
  if ((rc = atom_session_attach_checker(s, &demo_checker, NULL))) return fail("attach", rc);
  atom_set_name(s, ATOM_SPACE_VAR, 1, "balance");
  atom_set_name(s, ATOM_SPACE_VAR, 2, "limit");
  if (strcmp(mode, "nolocations") != 0) {
    atom_set_location(s, 100, "withdraw", "src/bank.c", 30);
    atom_set_location(s, 101, "deposit", "src/bank.c", 50);
    atom_set_location(s, 102, "withdraw", "src/bank.c", 31);
    atom_set_location(s, 103, "deposit", "src/bank.c", 51);
    atom_set_location(s, 104, "deposit", "src/bank.c", 52);
    atom_set_location(s, 105, "withdraw", "src/bank.c", 33);
    atom_set_location(s, 200, "main", "src/main.c", 12);
    uint64_t frames[2] = {102, 200};
    atom_set_stack(s, 102, frames, 2);
  }
  for (long i = 0; i < shift; i++) atom_read(s, 9, 9, 900); /* the filler thread */
  atom_begin(s, 1, 100);
  atom_begin(s, 2, 101);
  atom_write(s, 1, 1, 102);
  atom_read(s, 2, 1, 103);
  atom_write(s, 2, 2, 104);
  atom_read(s, 1, 2, 105);
  atom_end(s, 1, 106);
  atom_end(s, 2, 107);
  if ((rc = atom_finish(s))) return fail("finish", rc);
  int v1 = strcmp(mode, "v1") == 0;
  /* version 1 ends where cut_short begins */
  atom_output_options *o = malloc(v1 ? offsetof(atom_output_options, cut_short) : sizeof *o);
  if (!o) return fail("options", ATOM_ENOMEM);
  if ((rc = atom_output_options_init(o, v1 ? 1 : ATOM_OUTPUT_OPTIONS_VERSION)))
    return fail("options", rc);
  o->format = format;
  o->tool = "output-demo";
  o->input = "demo.std";
  if (strcmp(mode, "cutshort") == 0)
    o->cut_short = argc > 4 ? argv[4] : "recording stopped after 8 events (--max-events)";
  if (strcmp(mode, "report") == 0 && atom_report_count(s) > 0)
    rc = atom_report_write(atom_report_get(s, 0), o, atom_write_file, stdout);
  else
    rc = atom_session_write(s, o, atom_write_file, stdout);
  if (rc) return fail("write", rc);
  free(o);
  atom_session_free(s);
  return 0;
}
