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

struct atom_session;

/** A violation found by a checker. Opaque. */
typedef struct atom_report atom_report;

/** @return the name of the checker that found it ("aerodrome"). @since 0.1 */
ATOM_API const char *atom_report_checker(const atom_report *r);

/** @return the position of that checker in the session's attach order (0-based). @since 0.1 */
ATOM_API size_t atom_report_checker_index(const atom_report *r);

/**
 * @return a stable kind string: "conflict-cycle", "pattern-11", "commit-nodes", "tso-cycle",
 *         "potential-deadlock", ... (each checker's page, doc/checkers/NAME.md, lists its kinds).
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

/**
 * @return the one-line description in plain words, rendered with the names and locations
 *         known at the time of the call (a name registered after the report is used). Never
 *         NULL. Valid until the next call of it on the same report, or the session's free.
 * @since 0.1
 */
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


/** @name Cycles, runs and rendering. @since 0.3 */
/** @{ */

/** At most this many transaction runs are stored per report; the rest are counted. */
#define ATOM_REPORT_MAX_TXNS 64

/** atom_report_txn_run() flags: a unary transaction (one event outside BEGIN..END). */
#define ATOM_TXN_UNARY 0x1u

/**
 * The run that transaction entry @p i stands for: a cycle through many consecutive
 * transactions of one thread is stored as its first transaction (atom_report_txn()) with the
 * number of transactions in the run and the begin index of the last one.
 *
 * @param r          the report
 * @param i          0 <= i < atom_report_txn_count(r)
 * @param flags      out (may be NULL): ATOM_TXN_UNARY or 0
 * @param count      out (may be NULL): transactions in the run (1: not a run)
 * @param last_index out (may be NULL): begin index of the run's last transaction
 * @return 0, or ATOM_EINVAL if @p r is NULL or @p i out of range.
 * @since 0.3
 */
ATOM_API int atom_report_txn_run(const atom_report *r, size_t i, uint32_t *flags,
                                 uint64_t *count, uint64_t *last_index);

/** @return how many transaction runs of the cycle were not stored (ATOM_REPORT_MAX_TXNS). @since 0.3 */
ATOM_API uint64_t atom_report_txns_omitted(const atom_report *r);

/**
 * @return the position (in atom_report_txn()) of the transaction witness event @p i belongs
 *         to, or SIZE_MAX if none of the listed ones (or @p i out of range).
 * @since 0.3
 */
ATOM_API size_t atom_report_event_txn(const atom_report *r, size_t i);

/** @return the number of edges of the report's cycle (0 for reports that are not cycles). @since 0.3 */
ATOM_API size_t atom_report_edge_count(const atom_report *r);

/**
 * Edge @p i of the cycle, in cycle order: two conflicting witness events.
 *
 * @param r     the report
 * @param i     0 <= i < atom_report_edge_count(r)
 * @param from  out (may be NULL): position of the earlier event (for atom_report_event())
 * @param to    out (may be NULL): position of the later event
 * @param flags out (may be NULL): ATOM_EDGE_CLOSING for the edge that closed the cycle, or 0
 * @return 0, or ATOM_EINVAL if @p r is NULL or @p i out of range.
 * @since 0.3
 */
ATOM_API int atom_report_edge(const atom_report *r, size_t i, size_t *from, size_t *to,
                              uint32_t *flags);

/**
 * A fingerprint of the violation that stays the same across runs of the same program, for
 * baselines and SARIF partialFingerprints: a hash of the checker's name (not its attach
 * position), the kind, and the sorted set of distinct locations of the transactions' begins
 * (every transaction the checker named, runs included) and of the edges' events. A location
 * counts by its description (function, file, line: atom_set_location()) when it has one, else
 * by its loc value. Event indexes, thread keys and run lengths do not enter. Computed from
 * what the session knows at the time of the call.
 * @return the fingerprint (never 0 for a report); 0 if @p r is NULL.
 * @since 0.3
 */
ATOM_API uint64_t atom_report_fingerprint(const atom_report *r);

/**
 * Render the report's one-line message (as atom_report_message(), with the names and
 * locations known now) into @p buf, snprintf-style: at most @p size - 1 bytes and a NUL
 * (@p buf may be NULL if @p size is 0). Every rendering of this family is one line of at most
 * 1000 bytes (a longer one is cut and ends in "…"); a literal message of a version-1 spec is
 * given as it is.
 * @return the length of the whole message (it was cut if >= @p size), or ATOM_EINVAL (NULL
 *         @p r, NULL @p buf with @p size > 0).
 * @since 0.3
 */
ATOM_API int atom_report_describe(char *buf, size_t size, const atom_report *r);

/**
 * Render witness event @p i in the one notation of reports ("T2 wrote balance at
 * bank.c:31 (event 17)"), snprintf-style.
 * @return the length, or ATOM_EINVAL (NULL @p r, @p i out of range).
 * @since 0.3
 */
ATOM_API int atom_report_describe_event(char *buf, size_t size, const atom_report *r, size_t i);

/**
 * Render transaction entry @p i ("T1's transaction at withdraw at bank.c:30 (event 12)"; a
 * unary one: "T2's access outside any transaction at bank.c:41 (event 17)"; a run: "T4: 2931
 * transactions at withdraw at bank.c:30, T4@74951 … T4@104189"), snprintf-style.
 * @return the length, or ATOM_EINVAL (NULL @p r, @p i out of range).
 * @since 0.3
 */
ATOM_API int atom_report_describe_txn(char *buf, size_t size, const atom_report *r, size_t i);

/**
 * Render a location ("withdraw at bank.c:30", its registered name, or "loc 42"),
 * snprintf-style, with what session @p s knows now.
 * @return the length, or ATOM_EINVAL.
 * @since 0.3
 */
ATOM_API int atom_describe_location(char *buf, size_t size, const struct atom_session *s,
                                    uint64_t loc);

/** @return the session the report belongs to. @since 0.3 */
ATOM_API const struct atom_session *atom_report_session(const atom_report *r);
/** @} */

#ifdef __cplusplus
}
#endif
#endif
