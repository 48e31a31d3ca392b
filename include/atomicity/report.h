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

#ifdef __cplusplus
}
#endif
#endif
