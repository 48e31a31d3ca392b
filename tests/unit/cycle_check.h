/* Checks of the edges of a reported cycle (checker.h atom_edge_ref, report.h), shared by the
 * suites of the graph checkers (velodrome, tso). Header-only: static functions.
 *
 * cc_check_edges() returns NULL when the report's edges hold together, else a sentence saying
 * what is wrong:
 *   - there is at least one edge; every edge names two stored events that conflict: one thread
 *     (program order), one variable with a write or commit among the two, release then acquire
 *     of one lock, a fork and an event of the forked thread, an event of a thread and its join;
 *   - with CC_ORDER, the events of every edge are in trace order (from before to);
 *   - with CC_CLOSING, exactly one edge is flagged ATOM_EDGE_CLOSING, its later event is the
 *     event the report was made at, and it is the last edge;
 *   - with CC_CHAIN, and when nothing was left out of the report, the edges chain through
 *     transactions: the later event of each edge lies in the transaction (run) of the earlier
 *     event of the next one, cyclically. */
#ifndef ATOM_TEST_CYCLE_CHECK_H
#define ATOM_TEST_CYCLE_CHECK_H

#include <atomicity.h>
#include <atomicity/sys/checker.h>
#include <stddef.h>
#include <stdint.h>

#define CC_ORDER 0x1
#define CC_CLOSING 0x2
#define CC_CHAIN 0x4
#define CC_ALL (CC_ORDER | CC_CLOSING | CC_CHAIN)

static int cc_is_write(uint32_t kind) { return kind == ATOM_WRITE || kind == ATOM_COMMIT; }
static int cc_is_mem(uint32_t kind) { return kind == ATOM_READ || cc_is_write(kind); }

/* Do events a (first) and b (later) conflict? */
static int cc_conflict(const atom_event *a, const atom_event *b) {
  if (a->thread == b->thread) return 1;
  if (cc_is_mem(a->kind) && cc_is_mem(b->kind))
    return a->target == b->target && (cc_is_write(a->kind) || cc_is_write(b->kind));
  if (a->kind == ATOM_RELEASE && b->kind == ATOM_ACQUIRE) return a->target == b->target;
  if (a->kind == ATOM_FORK) return a->target == b->thread;
  if (b->kind == ATOM_JOIN) return b->target == a->thread;
  return 0;
}

static const char *cc_check_edges(const atom_report *r, int what) {
  size_t n = atom_report_edge_count(r), ne = atom_report_event_count(r), closing = 0;
  if (n == 0) return "no edges";
  for (size_t i = 0; i < n; i++) {
    size_t from, to;
    uint32_t flags;
    if (atom_report_edge(r, i, &from, &to, &flags) != 0) return "an edge cannot be read";
    if (from >= ne || to >= ne) return "an edge names an event that is not stored";
    atom_event a, b;
    uint64_t ia, ib;
    if (atom_report_event(r, from, &a, &ia) != 0 || atom_report_event(r, to, &b, &ib) != 0)
      return "an edge's event cannot be read";
    if ((what & CC_ORDER) && ia >= ib) return "an edge's events are not in order";
    if (!cc_conflict(&a, &b)) return "an edge's events do not conflict";
    if ((what & CC_CLOSING) && (flags & ATOM_EDGE_CLOSING)) {
      closing++;
      if (ib != atom_report_event_index(r)) return "the closing edge does not end at the report";
      if (i + 1 != n) return "the closing edge is not the last";
    }
  }
  if ((what & CC_CLOSING) && closing != 1) return "not exactly one closing edge";
  if ((what & CC_CHAIN) && atom_report_txns_omitted(r) == 0 && n < 128) {
    for (size_t i = 0; i < n; i++) {
      size_t to, from;
      atom_report_edge(r, i, NULL, &to, NULL);
      atom_report_edge(r, (i + 1) % n, &from, NULL, NULL);
      size_t tt = atom_report_event_txn(r, to), ft = atom_report_event_txn(r, from);
      if (tt == SIZE_MAX || ft == SIZE_MAX) return "an edge's event has no transaction";
      if (tt != ft) return "the edges do not chain through transactions";
    }
  }
  return NULL;
}

#endif
