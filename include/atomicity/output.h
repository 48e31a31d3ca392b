/**
 * @file atomicity/output.h
 * @brief The session's reports as text, JSON, SARIF, HTML or Graphviz dot; suppressions.
 *
 * One renderer for every driver: atomcheck, libatomicity-rt and the Python binding all write
 * through it, so the formats are the same wherever they come from. Output goes through a write
 * callback (a FILE, a buffer, a socket).
 *
 * Stability: stable API and ABI; the formats themselves are documented in doc/output.md
 * (JSON: members are only added).
 */
#ifndef ATOMICITY_OUTPUT_H
#define ATOMICITY_OUTPUT_H

#include "atomicity/common.h"
#include "atomicity/report.h"

#ifdef __cplusplus
extern "C" {
#endif

struct atom_session;

/** @name Formats (atom_output_options::format). Values are pinned. @since 0.3 */
/** @{ */
#define ATOM_FORMAT_TEXT 1  /**< what a person reads in a terminal */
#define ATOM_FORMAT_JSON 2  /**< one JSON document (doc/output.md) */
#define ATOM_FORMAT_SARIF 3 /**< SARIF 2.1.0, as GitHub code scanning accepts it */
#define ATOM_FORMAT_HTML 4  /**< one self-contained page with a picture of each violation */
#define ATOM_FORMAT_DOT 5   /**< Graphviz: the transaction graph of each cycle */
/** @} */

/**
 * Receives output. @return 0 to go on, non-zero to stop (the writer then returns ATOM_EIO).
 * @p payload is the one given to the writer.
 */
typedef int (*atom_write_fn)(const char *data, size_t len, void *payload);

/** A set of suppression rules. Opaque. */
typedef struct atom_suppressions atom_suppressions;

/** atom_output_options::flags: include per-checker statistics (atom_checker_stats). */
#define ATOM_OUTPUT_STATS 0x1u
/** atom_output_options::flags: text only; leave out the per-checker summary lines. */
#define ATOM_OUTPUT_NO_SUMMARY 0x2u
/** atom_output_options::flags: leave out every report, keep the counts and statuses (what
 *  max_reports cannot say, as 0 there means all). @since 0.3 */
#define ATOM_OUTPUT_NO_REPORTS 0x4u

/** The current version of atom_output_options (1: the 0.3 layout; 2 appends cut_short,
 *  @since 0.4). */
#define ATOM_OUTPUT_OPTIONS_VERSION 2

/** How to write. Initialize with atom_output_options_init(); fields are only appended. */
typedef struct atom_output_options {
  uint32_t version;         /**< ATOM_OUTPUT_OPTIONS_VERSION */
  uint32_t format;          /**< ATOM_FORMAT_* */
  uint32_t flags;           /**< ATOM_OUTPUT_* */
  uint32_t reserved;        /**< 0 */
  const char *tool;         /**< the driver's name ("atomcheck"); NULL: "libatomicity" */
  const char *input;        /**< what was checked (a trace path, a program); may be NULL */
  size_t max_reports;       /**< reports shown per checker; 0: all (the rest are counted) */
  uint64_t events;          /**< events read by the driver, for the summary (0: the session's) */
  uint64_t rejected;        /**< ill-formed events dropped (0: the session's count) */
  double seconds;           /**< wall time to show (< 0: not shown) */
  const atom_suppressions *suppressions; /**< reports to leave out (may be NULL) */
  const uint64_t *baseline; /**< fingerprints of known reports to leave out (may be NULL) */
  size_t n_baseline;
  /* ---- version 2 (@since 0.4) ---- */
  const char *cut_short; /**< why the events given to the session are only part of the run
                              ("recording stopped after 1000 events (--max-events)"); every
                              format marks the input INCOMPLETE with it. NULL: they are the
                              whole run */
} atom_output_options;

/**
 * Fill @p o with defaults for @p version: format TEXT, everything else 0/NULL, seconds -1.
 * An older version (a caller built against an older header) writes only that version's fields;
 * the writers accept every version and read only the fields it has.
 * @return 0, or ATOM_EINVAL (NULL, unknown version: not 1 or 2).
 * @since 0.3
 */
ATOM_API int atom_output_options_init(atom_output_options *o, unsigned version);

/**
 * Write every stored report of @p s (grouped by checker in attach order), the per-checker
 * summary and the checkers' status (an INCOMPLETE checker is marked in every format, and so is
 * an input cut short, atom_output_options::cut_short), in format @p o->format. Reports matched by @p o->suppressions or whose fingerprint is in
 * @p o->baseline are left out and counted.
 * @return 0, ATOM_EINVAL (NULL argument, unknown format or version), ATOM_ENOMEM, ATOM_EIO
 *         (@p fn returned non-zero).
 * @since 0.3
 */
ATOM_API int atom_session_write(const struct atom_session *s, const atom_output_options *o,
                                atom_write_fn fn, void *payload);

/**
 * Write one report: TEXT gives its block of lines (as in atom_session_write()), JSON its
 * object; other formats give ATOM_EINVAL. For drivers that print reports as they are found.
 * @return as atom_session_write().
 * @since 0.3
 */
ATOM_API int atom_report_write(const atom_report *r, const atom_output_options *o,
                               atom_write_fn fn, void *payload);

/** atom_write_fn for a `FILE *` payload (fwrite). @since 0.3 */
ATOM_API int atom_write_file(const char *data, size_t len, void *payload);

/**
 * Parse suppression rules, one per line, in the shape of ThreadSanitizer's suppression files:
 * `atomic:PATTERN` (a transaction's function), `fn:PATTERN` (any function of any frame of the
 * report), `file:PATTERN` (any source file of the report), `checker:NAME`, `kind:KIND`; `#`
 * starts a comment; PATTERN may use `*` and is matched as a substring unless anchored with
 * `^` / `$`.
 * @param out  out: the rules (free with atom_suppressions_free())
 * @param text the rules' text (need not be NUL-terminated)
 * @param len  its length
 * @return 0, ATOM_EINVAL (a malformed line: atom_last_error() says "line N: ..."), ATOM_ENOMEM.
 * @since 0.3
 */
ATOM_API int atom_suppressions_parse(atom_suppressions **out, const char *text, size_t len);

/** Free rules; NULL is accepted. @since 0.3 */
ATOM_API void atom_suppressions_free(atom_suppressions *sp);

/**
 * @return 1 if a rule of @p sp matches report @p r (using the locations its session knows
 *         now), 0 if none does (or either is NULL).
 * @since 0.3
 */
ATOM_API int atom_suppressions_match(const atom_suppressions *sp, const atom_report *r);

#ifdef __cplusplus
}
#endif
#endif
