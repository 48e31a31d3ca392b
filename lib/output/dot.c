/* The Graphviz dot output: one digraph per report that is a cycle. A node per transaction
 * (labelled as atom_report_describe_txn), an edge per edge of the cycle labelled with its two
 * conflicting events; the edge that closed the cycle is bold and red. Reports without edges
 * give no graph (their transactions are listed in a comment). An input cut short is a comment
 * line first. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/output.h"
#include "output/out.h"

/* s as the inside of a dot string ("..."): quotes and backslashes escaped, newlines as \n;
 * then the terminal escape rules, so no control character reaches the file. */
static void dot_chars(atom__out *o, const char *s) {
  for (const char *p = s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      atom__out_write(o, "\\", 1);
      atom__out_write(o, p, 1);
    } else if (*p == '\n')
      atom__out_write(o, "\\n", 2);
    else {
      char one[2] = {*p, '\0'};
      /* bytes >= 0x80 go through whole (UTF-8), control characters become \\xNN */
      if ((unsigned char)*p < 0x20 || *p == 0x7f) atom__out_printf(o, "\\\\x%02X", (unsigned char)*p);
      else atom__out_write(o, one, 1);
    }
  }
}

static void quoted(atom__out *o, const char *s) {
  atom__out_write(o, "\"", 1);
  dot_chars(o, s ? s : "?");
  atom__out_write(o, "\"", 1);
}

/* The node of witness event i: its transaction, or a node of its own ("e<i>"). */
static void node_id(atom__out *o, const atom_report *r, size_t i) {
  size_t t = atom_report_event_txn(r, i);
  if (t == SIZE_MAX) atom__out_printf(o, "e%zu", i);
  else atom__out_printf(o, "t%zu", t);
}

static void graph(atom__out *o, const atom_report *r, const char *label, size_t number) {
  char *msg = atom__out_message(r);
  atom__out_printf(o, "digraph cycle%zu {\n", number);
  atom__out_printf(o, "  label=");
  char head[512];
  snprintf(head, sizeof head, "%s: %s at event %" PRIu64 " (%s)", label, atom_report_kind(r),
           atom_report_event_index(r), atom__out_evidence(r));
  quoted(o, head);
  atom__out_puts(o, ";\n  labelloc=t;\n  node [shape=box];\n");
  atom__out_puts(o, "  // ");
  atom__out_text_chars(o, msg ? msg : "");
  atom__out_puts(o, "\n");
  free(msg);
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    char *d = atom__out_describe(atom_report_describe_txn, r, i);
    atom__out_printf(o, "  t%zu [label=", i);
    quoted(o, d);
    atom__out_puts(o, "];\n");
    free(d);
  }
  size_t n_edges = atom_report_edge_count(r);
  for (size_t e = 0; e < n_edges; e++) {
    size_t from = 0, to = 0;
    uint32_t flags = 0;
    if (atom_report_edge(r, e, &from, &to, &flags) != 0) continue;
    for (int k = 0; k < 2; k++) {
      size_t i = k ? to : from;
      if (atom_report_event_txn(r, i) != SIZE_MAX) continue;
      char *d = atom__out_describe(atom_report_describe_event, r, i);
      atom__out_printf(o, "  e%zu [shape=ellipse, label=", i);
      quoted(o, d);
      atom__out_puts(o, "];\n");
      free(d);
    }
    char *a = atom__out_describe(atom_report_describe_event, r, from);
    char *b = atom__out_describe(atom_report_describe_event, r, to);
    size_t n = (a ? strlen(a) : 1) + (b ? strlen(b) : 1) + 8;
    char *text = malloc(n);
    if (text) snprintf(text, n, "%s\n\xe2\x86\x92 %s", a ? a : "?", b ? b : "?");
    atom__out_puts(o, "  ");
    node_id(o, r, from);
    atom__out_puts(o, " -> ");
    node_id(o, r, to);
    atom__out_puts(o, " [label=");
    quoted(o, text ? text : "?");
    if (flags & ATOM_EDGE_CLOSING) atom__out_puts(o, ", color=red, penwidth=2, style=bold");
    atom__out_puts(o, "];\n");
    free(a);
    free(b);
    free(text);
  }
  atom__out_puts(o, "}\n");
}

int atom__output_dot(atom__out *o, const struct atom_session *s, const atom_output_options *opt) {
  atom__out_run run;
  int err = atom__out_collect(&run, s, opt);
  if (err) return err;
  if (opt->cut_short) {
    /* a comment, so the file stays valid dot (text escapes: no newline can end it early) */
    atom__out_puts(o, "// input: INCOMPLETE, cut short: ");
    atom__out_text_chars(o, opt->cut_short);
    atom__out_write(o, "\n", 1);
  }
  size_t number = 0;
  for (size_t i = 0; i < run.n_checkers; i++) {
    const atom__out_checker *c = &run.checkers[i];
    for (size_t k = 0; k < c->n_printed; k++) {
      const atom_report *r = c->shown[k];
      if (atom_report_edge_count(r) == 0) {
        /* not a cycle: nothing to draw; say so in a comment so the file is still valid dot */
        atom__out_puts(o, "// ");
        atom__out_text_chars(o, c->label);
        atom__out_printf(o, ": %s at event %" PRIu64 " is not a cycle\n", atom_report_kind(r),
                         atom_report_event_index(r));
        continue;
      }
      graph(o, r, c->label, number++);
    }
  }
  atom__out_run_free(&run);
  return 0;
}
