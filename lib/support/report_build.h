/* The report builder (internal): how every checker assembles an atom_report_spec.
 *
 * A checker adds the transactions of a violation, its witness events (an event added twice is
 * kept once, so an event can end one edge and start the next), the conflict edges between two
 * events, and the variables named; atom__rb_submit hands the result to atom_env_report(). The
 * builder owns its arrays and reuses them from one report to the next (atom__rb_reset), so a
 * checker keeps one builder for its lifetime and reporting allocates only when a report is
 * bigger than every earlier one. Nothing here renders text: the core formats the report when
 * it is read. */
#ifndef ATOM_SUPPORT_REPORT_BUILD_H
#define ATOM_SUPPORT_REPORT_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/sys/checker.h"
#include "support/mem.h"

typedef struct atom__report_build {
  atom__mem *mem;
  atom_txn_ref *txns;
  size_t n_txns, cap_txns;
  atom_ev *events;
  size_t n_events, cap_events;
  atom_edge_ref *edges;
  size_t n_edges, cap_edges;
  uint32_t *vars;
  size_t n_vars, cap_vars;
} atom__report_build;

void atom__rb_init(atom__report_build *rb, atom__mem *mem);
/* Empty the builder for the next report (the arrays stay allocated). */
void atom__rb_reset(atom__report_build *rb);
void atom__rb_free(atom__report_build *rb);

/* Each returns 0 or ATOM_ENOMEM (then abandon the report: atom__rb_reset). */
int atom__rb_txn(atom__report_build *rb, const atom_txn_ref *txn);
/* A witness event; *pos (may be NULL) is its position among the report's events. Events are
 * told apart by their index: the same index twice is one event. */
int atom__rb_event(atom__report_build *rb, const atom_ev *ev, uint32_t *pos);
/* The conflict edge from -> to (both added as events); flags: ATOM_EDGE_CLOSING or 0. */
int atom__rb_edge(atom__report_build *rb, const atom_ev *from, const atom_ev *to,
                  uint32_t flags);
/* The same, except that the events are always added as new ones, even when their index is
 * already there: for a checker whose witness events include made-up ones that share the index
 * of a real event (tso: a commit implied by a fence carries the fence's index). */
int atom__rb_event_apart(atom__report_build *rb, const atom_ev *ev, uint32_t *pos);
int atom__rb_edge_apart(atom__report_build *rb, const atom_ev *from, const atom_ev *to,
                        uint32_t flags);
/* The conflict edge between two events already added, by their positions (from
 * atom__rb_event / atom__rb_event_apart): for a checker that lays its events out first because
 * its message template names them by position. */
int atom__rb_edge_at(atom__report_build *rb, uint32_t from, uint32_t to, uint32_t flags);
/* A variable the report names (each once). */
int atom__rb_var(atom__report_build *rb, uint32_t var);
/* Name the variables of the witness reads and writes, in event order, at most `max`. */
int atom__rb_vars_of_events(atom__report_build *rb, size_t max);

/* Report what was built: a spec of version ATOM_REPORT_SPEC_VERSION with kind, event_index,
 * flags (ATOM_REPORT_PREDICTED or 0), message (a template, or NULL for the core's default)
 * and signature_extra. Returns what atom_env_report() returns. The builder is not reset. */
int atom__rb_submit(const atom__report_build *rb, atom_env *env, const char *kind,
                    uint64_t event_index, uint32_t flags, const char *message,
                    uint64_t signature_extra);

/* Is a report with the signature of what was built so far (kind, the transactions added,
 * signature_extra) made already? Then it counts one more occurrence of it and returns 1: the
 * checker need not build the rest nor compose a message. Else 0 (nothing changed) or an
 * ATOM_E* code. What atom_env_report_repeat() does. */
int atom__rb_repeat(const atom__report_build *rb, atom_env *env, const char *kind,
                    uint64_t signature_extra);

#endif
