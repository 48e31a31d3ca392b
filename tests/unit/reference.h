/* Brute-force conflict-serializability reference (003 §2, Definition 1), written without any
 * use of the library: it normalizes the events itself, builds the conflict relation pair by
 * pair, closes it transitively (≤CHB), lifts it to transactions (≤Txn) and looks for a cycle.
 * Quadratic-to-cubic in the number of events: meant for traces of a few dozen events.
 *
 * Normalization (the session's, doc/api.md, "Events"): the outermost BEGIN..END of a thread is a
 * transaction; an event outside every transaction is a unary transaction of its own; inner
 * BEGIN/END and re-entrant inner ACQUIRE/RELEASE are dropped; a transaction still open at the
 * end is closed there. Conflicting pairs e before e' (003 §2): same thread; e = fork(u) and e'
 * of u; e of u and e' = join(u); two accesses of one variable, not both reads; e = rel(l) and
 * e' = acq(l). FENCE is an event of its thread only. COMMIT is not supported. The flags of
 * synchronizing accesses (ATOM_FLAG_ACQUIRE/RELEASE) are ignored: for the ONE observed trace a
 * release write followed by an acquire read of its variable is already a conflicting pair.
 */
#ifndef ATOM_TEST_REFERENCE_H
#define ATOM_TEST_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/event.h"

/* Return codes besides 1 (serializable) and 0 (not). */
#define REF_EILLFORMED (-1) /* the trace is not well-formed; see ref_error() */
#define REF_ENOMEM (-2)
#define REF_EUNSUPPORTED (-3) /* COMMIT, or an unknown kind */

#define REF_MAX_CYCLE 64

/** A cycle of transactions: T0 ≤Txn T1 ≤Txn ... ≤Txn T(n-1) ≤Txn T0, all distinct. */
typedef struct ref_cycle {
  size_t n;
  size_t begin[REF_MAX_CYCLE];    /* index of each transaction's BEGIN (or its unary event) */
  uint64_t thread[REF_MAX_CYCLE]; /* its thread key */
} ref_cycle;

/**
 * Decide conflict serializability of @p ev[0..n) (open transactions closed at the end).
 * @param cycle_out may be NULL; when not serializable receives a shortest cycle.
 * @return 1 serializable, 0 not, or a negative REF_E* code.
 */
int ref_conflict_serializable(const atom_event *ev, size_t n, ref_cycle *cycle_out);

/** Everything the reference computes, for finer checks. */
typedef struct ref_trace ref_trace;

/** Analyze @p ev[0..n). @return 0 or a negative REF_E* code (*out is then NULL). */
int ref_trace_build(const atom_event *ev, size_t n, ref_trace **out);
void ref_trace_free(ref_trace *rt);

/** @return 1 if the whole trace is conflict serializable, else 0. */
int ref_trace_serializable(const ref_trace *rt);

/** A shortest cycle (if the trace is not serializable). @return 1 and *out, or 0. */
int ref_trace_cycle(const ref_trace *rt, ref_cycle *out);

/**
 * Smallest event index i such that the prefix ev[0..i] is not conflict serializable (its
 * transaction graph, with the transactions still active at i, has a cycle); n if there is
 * none. This is where an online graph checker (velodrome) can first see the cycle.
 */
size_t ref_trace_first_cycle(const ref_trace *rt);

/**
 * Smallest event index i such that the prefix ev[0..i] has a cycle in which at most one
 * transaction is still active at i; n if none (the violation then shows only when the
 * session closes the open transactions at finish). By 003 Thm. 2, AeroDrome declares its
 * first violation at an index between ref_trace_first_cycle() and this one.
 */
size_t ref_trace_first_closed_cycle(const ref_trace *rt);

/** @return the number of transactions (unary ones included). */
size_t ref_trace_txn_count(const ref_trace *rt);

/**
 * The transaction whose first event (BEGIN, or the unary event) has index @p begin_index.
 * @return its number, or -1 if no transaction starts there.
 */
long ref_trace_txn_at(const ref_trace *rt, size_t begin_index);

/** @return the transaction of event @p index, or -1 if normalization dropped the event. */
long ref_trace_event_txn(const ref_trace *rt, size_t index);

/** @return 1 if transaction @p a ≤Txn transaction @p b (a != b) in the whole trace. */
int ref_trace_txn_before(const ref_trace *rt, size_t a, size_t b);

/** Text of the last REF_EILLFORMED / REF_EUNSUPPORTED of ref_trace_build on this thread. */
const char *ref_error(void);

#endif
