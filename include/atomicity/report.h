/**
 * @file atomicity/report.h
 * @brief Violation reports, read through accessor functions (the layout is private).
 *
 * Ownership: a report belongs to its session. A pointer obtained from atom_report_get() stays
 * valid until atom_session_free(). A pointer handed to the on_report callback is valid during
 * the callback, and afterwards too if the report was stored (see atom_options::max_reports).
 * Strings returned by accessors live as long as the report.
 *
 * Stability: stable API and ABI.
 */
#ifndef ATOMICITY_REPORT_H
#define ATOMICITY_REPORT_H

#include "atomicity/common.h"
#include "atomicity/event.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A violation found by a checker. Opaque. */
typedef struct atom_report atom_report;

/** @return the name of the checker that found it ("aerodrome"). @since 0.1 */
ATOM_API const char *atom_report_checker(const atom_report *r);

/** @return the position of that checker in the session's attach order (0-based). @since 0.1 */
ATOM_API size_t atom_report_checker_index(const atom_report *r);

/**
 * @return a stable kind string: "conflict-cycle", "pattern-11", "commit-nodes", "tso-cycle",
 *         "potential-deadlock", ... (each checker's page in doc/checkers.md lists its kinds).
 * @since 0.1
 */
ATOM_API const char *atom_report_kind(const atom_report *r);

/** @return the 0-based index of the pushed event at which it was first found. @since 0.1 */
ATOM_API uint64_t atom_report_event_index(const atom_report *r);

/**
 * @return how many times a violation with the same signature (checker, kind, begin locations
 *         of the transactions involved) was found. @since 0.1
 */
ATOM_API uint64_t atom_report_occurrences(const atom_report *r);

/** @return a one-line description using registered names where known. Never NULL. @since 0.1 */
ATOM_API const char *atom_report_message(const atom_report *r);

/** @return the number of transactions involved, in role order (a cycle: its order). @since 0.1 */
ATOM_API size_t atom_report_txn_count(const atom_report *r);

/**
 * One transaction of the report. A unary transaction (an event outside any BEGIN..END) is
 * described by that event.
 *
 * @param r          the report
 * @param i          0 <= i < atom_report_txn_count(r)
 * @param thread     out (may be NULL): the thread key
 * @param begin_index out (may be NULL): index of its BEGIN event (or of the unary event)
 * @param begin_loc  out (may be NULL): loc of that event
 * @return 0, or ATOM_EINVAL if @p r is NULL or @p i out of range.
 * @since 0.1
 */
ATOM_API int atom_report_txn(const atom_report *r, size_t i, uint64_t *thread,
                             uint64_t *begin_index, uint64_t *begin_loc);

/** @return the number of witness events. @since 0.1 */
ATOM_API size_t atom_report_event_count(const atom_report *r);

/**
 * One witness event, with the keys as they were pushed.
 *
 * @param r     the report
 * @param i     0 <= i < atom_report_event_count(r)
 * @param ev    out (may be NULL): the event
 * @param index out (may be NULL): its event index
 * @return 0, or ATOM_EINVAL if @p r is NULL or @p i out of range.
 * @since 0.1
 */
ATOM_API int atom_report_event(const atom_report *r, size_t i, atom_event *ev, uint64_t *index);

/** @return the number of variables named by the report. @since 0.1 */
ATOM_API size_t atom_report_var_count(const atom_report *r);

/**
 * @return the key of variable @p i (0 if out of range).
 * @since 0.1
 */
ATOM_API uint64_t atom_report_var(const atom_report *r, size_t i);

/**
 * @return the registered name of variable @p i at the time of the report, or NULL if it had
 *         none (or @p i is out of range).
 * @since 0.1
 */
ATOM_API const char *atom_report_var_name(const atom_report *r, size_t i);

/** @name Evidence of a report (atom_report_evidence()). Values are pinned. @since 0.2 */
/** @{ */
/** An online checker saw the violation in the observed order of events. */
#define ATOM_EVIDENCE_OBSERVED 1
/** A predictive checker found a feasible interleaving that violates atomicity; nobody saw it. */
#define ATOM_EVIDENCE_PREDICTED 2
/** Predicted, and an observed report of the same session involves the same atomic blocks. */
#define ATOM_EVIDENCE_CONFIRMED 3
/** @} */

/**
 * How well a violation is established.
 *
 * A report is ATOM_EVIDENCE_PREDICTED when its checker flagged it ATOM_REPORT_PREDICTED
 * (commit-node, block, reduction), else ATOM_EVIDENCE_OBSERVED (aerodrome, velodrome,
 * race-automata, tso, and third-party checkers that set no flag). A predicted report becomes
 * ATOM_EVIDENCE_CONFIRMED when some observed report of the same session involves the same
 * atomic blocks: the begin locations of the predicted report's non-unary transactions (there
 * must be at least one) all occur among the begin locations of the observed report's
 * non-unary transactions. Locations, not event indexes, are compared: the observed violation
 * may come from another execution of the same code. Only stored reports take part (see
 * atom_options::max_reports).
 *
 * The evidence is final after atom_finish(); during the on_report callback a predicted report
 * may still be confirmed later by an observed report found after it.
 *
 * @return ATOM_EVIDENCE_OBSERVED, ATOM_EVIDENCE_PREDICTED or ATOM_EVIDENCE_CONFIRMED; 0 if
 *         @p r is NULL.
 * @since 0.2
 */
ATOM_API int atom_report_evidence(const atom_report *r);

/**
 * @return the name of an evidence value ("observed", "predicted", "confirmed"), or NULL if
 *         @p evidence is not one. Static storage.
 * @since 0.2
 */
ATOM_API const char *atom_evidence_name(int evidence);

#ifdef __cplusplus
}
#endif
#endif
