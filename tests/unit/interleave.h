/* Brute-force reference for conflict- and view-ATOMICITY (004 §2, 000 §3): every feasible
 * interleaving of the threads of a recorded trace is explored and each complete one is
 * compared with the serial interleavings of the units. It is the oracle the commit-node,
 * block and reduction checkers are tested against, so every convention is spelled out here.
 * (reference.h is a different question: conflict serializability of the ONE observed trace.)
 *
 * INPUT. A trace ev[0..n) in push order. It must be well-formed as the session understands it
 * (doc/api.md, "Events"), otherwise il_check() returns -1 and il_error() names the event: flags 0, or
 * ATOM_FLAG_ACQUIRE on a READ, or ATOM_FLAG_RELEASE on a WRITE (doc/api.md "Synchronization"); END
 * only inside a BEGIN; RELEASE only of a lock the thread holds; ACQUIRE only of a free lock or
 * of one the thread holds (re-entrant); no event of a thread after it was joined; FORK(u) only
 * of a thread never seen before (so it precedes every event of u), never of itself; JOIN(u)
 * never of itself nor of a thread already joined. COMMIT is not supported (-1). FENCE is an
 * event of its thread that touches nothing shared.
 *
 * PROGRAMS. Each thread's program is its events in trace order. Threads are told apart by
 * key; a thread that is the target of a FORK in the trace starts when that FORK runs, every
 * other thread (first seen as an event's thread or as a JOIN target) is a root and may start
 * at once.
 *
 * FEASIBLE SCHEDULES. A schedule is a sequence of events in which each thread's events appear
 * as a prefix of its program, in order. It is feasible when, at every step, the event that
 * runs is enabled: its thread has started; an ACQUIRE(l) needs l free or already held by the
 * same thread (locks are re-entrant: l is free again when the holder's outermost RELEASE
 * runs); a JOIN(u) needs u to have started and run all its events; an acquire READ of v
 * (ATOM_FLAG_ACQUIRE) needs every release WRITE of v (ATOM_FLAG_RELEASE) that another thread
 * made before it in the trace to have run (sync order: release writes happen before later
 * acquire reads of their variable, whether or not the read reads from them); every other
 * event is always enabled. So happens-before is program order + fork/join + sync order, and
 * feasibility adds lock exclusion. Otherwise the flags change nothing: a flagged access is a
 * READ or WRITE like any other for conflicts, reads-from and final writes.
 * A feasible schedule is COMPLETE when it contains every event. It DEADLOCKS when it is not
 * complete and no thread with events left has an enabled next event (lock-order inversion,
 * a JOIN of a thread that waits for a lock the joiner holds, a thread that ends its events
 * while holding a lock that another thread still has to acquire, an acquire READ waiting for
 * a release WRITE of a thread that waits for a lock the reader holds, ...). potential_deadlock = 1
 * iff some feasible schedule deadlocks. Deadlocking schedules take no part in the verdicts.
 * The observed trace is itself a complete feasible schedule, so there is always one.
 *
 * UNITS (Wang & Stoller's conventions, 004 §2). A thread is INSIDE while it has an open
 * transaction (BEGIN depth > 0) or holds at least one lock. A UNIT is a maximal run of a
 * thread's events from the event that takes it inside (a BEGIN or an ACQUIRE) to the event
 * that takes it back outside (an END or a RELEASE), or to the end of its program if that
 * never happens. So a transaction is the outermost BEGIN..END (inner pairs ignored), a lock
 * block (outermost ACQUIRE..RELEASE) outside every transaction is a transaction too, and a
 * transaction and a lock block that nest or overlap form one unit; FORK and JOIN inside a
 * unit belong to it (the corpus files aerodrome-fork-in-txn and aerodrome-join-in-txn rely on
 * it; 004's Java heuristic of cutting units at start/join is not used). Every event at which
 * the thread is and stays outside is a unit of its own (a unary unit). Hence no
 * non-transactional unit contains a lock operation, as 004 §2 assumes.
 *
 * SERIAL SCHEDULES. A complete feasible schedule in which the events of every unit are
 * contiguous. It must be feasible like any other schedule, so it keeps program order,
 * FORK/JOIN order, and cannot put a unit of another thread that acquires l after a unit that
 * ends holding l for good (004 §2: a serial trace is a trace of <T, E>).
 *
 * CONFLICT-SERIALIZABLE. Two events conflict when they are accesses (READ/WRITE) of the same
 * variable and at least one is a WRITE; events of one thread keep program order in every
 * schedule. Lock operations, FORK and JOIN do not conflict (W&S: memory conflicts only; they
 * still constrain the serial schedule through feasibility). A complete schedule is
 * conflict-serializable iff some serial schedule orders every conflicting pair as it does.
 * (Equivalently: this graph of units is acyclic: U->V when an access in U precedes a
 * conflicting access in V; when U precedes V in one thread; when U holds FORK(u) and V is a
 * unit of u; when U is a unit of u, or holds FORK(u) for a u without events, and V holds
 * JOIN(u); when U acquires a lock l that V, of another thread, acquires and still holds at the
 * end of its thread's program.)
 *
 * VIEW-SERIALIZABLE. A complete schedule is view-serializable iff some serial schedule is
 * view-equivalent to it: every READ reads from the same WRITE (the last earlier WRITE of its
 * variable, or the initial value if there is none), and every variable has the same final
 * WRITE (or none). Conflict-serializable implies view-serializable (000 example (7) is
 * view- but not conflict-serializable).
 *
 * VERDICTS. conflict_atomic (view_atomic) = 1 iff every complete feasible schedule is
 * conflict- (view-) serializable; 0 comes with a witness: one such complete schedule that is
 * not, as n indices into ev[].
 *
 * SEARCH. Depth-first over the threads' next moves, with two reductions, both exact:
 * (1) Merged steps. Some events never block and have the same effect wherever they are
 *     placed among the other threads' events: BEGIN, END, FENCE, nested re-entrant
 *     ACQUIRE/RELEASE, and accesses of a variable that is never written or that only one
 *     thread accesses (their reads-from, final write and conflicts follow from program
 *     order). Each is scheduled together with the next other event of its thread (the
 *     trailing ones with the thread's last other event). Every feasible schedule has the same
 *     verdicts as, and deadlocks exactly when, the merged schedule that orders its other
 *     events alike.
 * (2) A state is (per-thread positions, unit edges so far, reads-from of the reads done, last
 *     write of each variable); lock holders and started threads are functions of the
 *     positions. What can happen next, and the verdicts of every completion, depend on the
 *     state alone, so a state reached a second time is not explored again.
 * Deadlocks are looked for by a separate search whose states are the positions alone (exact
 * for that question only). The verdict search stops as soon as both verdicts are 0.
 * `interleavings` counts the complete schedules the verdict search reached: at most the
 * number of complete feasible schedules, usually far fewer because of (1), (2) and the early
 * stop. (A release WRITE or acquire READ that takes part in sync order is visible: its
 * variable is written and accessed by two threads.) When it would exceed max_interleavings, or when the state tables of a search pass
 * 256 MiB, truncated = 1 and the verdicts speak only of the explored part (a 0 is still
 * backed by a real witness).
 *
 * Thread safety: calls share no state; il_error() is per thread.
 */
#ifndef ATOM_TEST_INTERLEAVE_H
#define ATOM_TEST_INTERLEAVE_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/event.h"

typedef struct il_options {
  size_t max_interleavings; /* bound on complete schedules explored; 0 = 2,000,000 */
} il_options;

typedef struct il_result {
  int conflict_atomic;    /* every feasible, non-deadlocking interleaving is conflict-serializable */
  int view_atomic;        /* ... view-serializable */
  int potential_deadlock; /* some feasible schedule deadlocks */
  int truncated;          /* the bound was hit: the verdicts are about the explored part only */
  size_t interleavings;   /* complete schedules explored */
  size_t n_units;         /* units (transactions, lock blocks and unary units; see above) */
  /* a witness when not conflict- (resp. view-) atomic: the schedule as indices into ev[] */
  size_t *conflict_witness, n_conflict_witness;
  size_t *view_witness, n_view_witness;
} il_result;

/**
 * Decide conflict- and view-atomicity of the trace's units over all feasible schedules.
 * @param opt may be NULL (defaults).
 * @return 0 and *out filled (free with il_result_free()), or -1 (ill-formed or unsupported
 *         input, or out of memory: message via il_error(); *out is then zeroed and holds
 *         nothing to free).
 */
int il_check(const atom_event *ev, size_t n, const il_options *opt, il_result *out);

/** Free the witnesses of @p r and zero it. Accepts NULL and a zeroed result. */
void il_result_free(il_result *r);

/** The message of the last -1 returned on this thread. */
const char *il_error(void);

/**
 * Decide one given schedule of ev[0..n): @p order holds @p len == n indices, a permutation of
 * 0..n-1 that keeps each thread's events in trace order. Its feasibility is not required (the
 * serial schedules it is compared with are always feasible).
 * @return 1 conflict- (view-) serializable, 0 not, -1 bad trace or bad order (il_error()).
 */
int il_schedule_conflict_serializable(const atom_event *ev, size_t n, const size_t *order,
                                      size_t len);
int il_schedule_view_serializable(const atom_event *ev, size_t n, const size_t *order,
                                  size_t len);

#endif
