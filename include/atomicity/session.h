/**
 * @file atomicity/session.h
 * @brief Sessions: push events in, attach checkers, read reports out.
 *
 * Thread safety: a session is not thread-safe unless it was created with ATOM_THREADSAFE, in
 * which case the push functions (atom_push ... atom_commit) may be called from many threads at
 * once and are serialized in arrival order. Everything else (attach, finish, reading reports,
 * free) must not run concurrently with any other call on the same session. See
 * doc/threading.md.
 *
 * Stability: stable API and ABI.
 */
#ifndef ATOMICITY_SESSION_H
#define ATOMICITY_SESSION_H

#include "atomicity/common.h"
#include "atomicity/event.h"
#include "atomicity/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A checking session. Opaque; create with atom_session_new(), free with atom_session_free(). */
typedef struct atom_session atom_session;

/**
 * Called once for each new (non-duplicate) report. @p payload is atom_options::report_payload.
 *
 * Calls into the same session from inside a callback (this one, or a checker's functions),
 * on the thread running it: the report and statistics readers (atom_report_count(),
 * atom_report_get(), the atom_report_* accessors, atom_get_name(), atom_checker_count(),
 * atom_checker_name(), atom_session_stats_get(), atom_checker_stats_get()) work;
 * atom_session_free() is deferred until the call that ran the callback returns; every other
 * function returns ATOM_EREENTRANT and changes nothing. Also with ATOM_THREADSAFE (no
 * deadlock). See doc/threading.md.
 */
typedef void (*atom_report_fn)(const atom_report *report, void *payload);

/** Allocator triple. All three or none. Each receives atom_options::alloc_payload. */
typedef void *(*atom_malloc_fn)(size_t size, void *payload);
typedef void *(*atom_realloc_fn)(void *ptr, size_t size, void *payload);
typedef void (*atom_free_fn)(void *ptr, void *payload);

/** atom_options::flags: pushes may come from several threads at once. */
#define ATOM_THREADSAFE 0x1u
/** atom_options::flags: measure the time each checker spends (see atom_checker_stats). */
#define ATOM_PROFILE 0x2u

/**
 * Called while a long piece of work goes on (a checker's end-of-run work at atom_finish()):
 * checker @p checker_index (attach order) has done @p done units of @p total (0: unknown). At
 * most a few calls a second. @p payload is atom_options::progress_payload. Same rules for
 * calls into the session as atom_report_fn.
 * @since 0.3
 */
typedef void (*atom_progress_fn)(size_t checker_index, uint64_t done, uint64_t total,
                                 void *payload);

/** The current version of atom_options. */
#define ATOM_OPTIONS_VERSION 3

/**
 * Session options. Initialize with atom_options_init(); fields are only ever appended.
 */
typedef struct atom_options {
  uint32_t version;           /**< ATOM_OPTIONS_VERSION (set by atom_options_init) */
  uint32_t flags;             /**< ATOM_THREADSAFE, ATOM_PROFILE */
  atom_report_fn on_report;   /**< optional: called once per new report */
  void *report_payload;       /**< passed to on_report */
  size_t max_reports;         /**< distinct reports kept for polling; 0 = no limit */
  atom_malloc_fn malloc_fn;   /**< optional allocator (all three or none) */
  atom_realloc_fn realloc_fn;
  atom_free_fn free_fn;
  void *alloc_payload; /**< passed to the allocator functions */
  /* ---- version 2 (@since 0.2) ---- */
  size_t max_reports_per_checker; /**< distinct reports kept for polling per checker; 0 = no
                                       limit. A report beyond it (or beyond max_reports) is
                                       still delivered to on_report once and deduplicated, and
                                       counted by atom_report_dropped() and, per checker, by
                                       atom_checker_stats::reports minus its stored reports */
  /* ---- version 3 (@since 0.3) ---- */
  atom_progress_fn on_progress; /**< optional: end-of-run progress of the checkers */
  void *progress_payload;       /**< passed to on_progress */
} atom_options;

/**
 * Fill @p opt with defaults for @p version: every field 0 or NULL (no cap on stored reports).
 * An older version (a caller built against an older header) writes only that version's fields.
 * @return 0, or ATOM_EINVAL if @p opt is NULL or @p version is unknown (not 1, 2 or 3).
 * @since 0.1
 */
ATOM_API int atom_options_init(atom_options *opt, unsigned version);

/**
 * Create a session.
 * @param out  receives the session; free it with atom_session_free()
 * @param opt  options, or NULL for defaults; copied
 * @return 0, ATOM_EINVAL (NULL @p out, bad version, incomplete allocator), ATOM_ENOMEM.
 * @since 0.1
 */
ATOM_API int atom_session_new(atom_session **out, const atom_options *opt);

/**
 * Free a session, its checkers and its reports. Accepts NULL.
 * From inside a callback of @p s: the free is deferred until the call that ran the callback
 * returns; no further callback runs, and that call (atom_push(), atom_push_many(),
 * atom_finish(), atom_session_attach_checker()) frees the session and returns ATOM_ESTATE
 * (atom_push_many() stops after the current event). Do not use @p s after this call in
 * either case.
 * @since 0.1
 */
ATOM_API void atom_session_free(atom_session *s);

/**
 * Attach a built-in checker by spec: "name" or "name:key=value,key=value" (for example
 * "commit-node:mode=view"). Checkers must be attached before the first event is pushed.
 * @return 0, ATOM_ENOTFOUND (unknown name), ATOM_EINVAL (bad or unknown argument; see
 *         atom_last_error()), ATOM_ESTATE (events already pushed), ATOM_ENOMEM,
 *         ATOM_EREENTRANT (from a callback of @p s).
 * @since 0.1
 */
ATOM_API int atom_session_attach(atom_session *s, const char *spec);

struct atom_checker;
/**
 * Attach a third-party checker (the plugin layer, <atomicity/sys/checker.h>). @p vt and
 * the strings it points to must outlive the session. Every vtable version the library ever
 * shipped is accepted (only the members that version has are read).
 * @param args "key=value,..." or NULL; only keys listed in vt->arg_keys are accepted
 * @return as atom_session_attach(), plus ATOM_EINVAL for an abi_version this library does
 *         not know, a missing name/create/on_event/destroy or unknown event kinds in the mask,
 *         or whatever vt->create returned.
 * @since 0.1
 */
ATOM_API int atom_session_attach_checker(atom_session *s, const struct atom_checker *vt,
                                         const char *args);

/**
 * The built-in checkers, for listing: @p i from 0 until NULL is returned.
 * @return the checker's vtable (its name and summary are what users need; its members are
 *         declared in <atomicity/sys/checker.h>), or NULL. Static: never freed.
 * @since 0.1
 */
ATOM_API const struct atom_checker *atom_checker_builtin(size_t i);

/**
 * Push one event. Ill-formed events (END without BEGIN, RELEASE not held, ACQUIRE of
 * a lock held by another thread, event of a joined thread, COMMIT without pending WRITE, bad
 * FORK/JOIN) get their own error code and a message naming the event index in
 * atom_last_error(); the event is dropped and the session stays usable. Every call consumes an
 * event index, accepted or not.
 *
 * Out of memory: ATOM_ENOMEM means the session could not take the event and changed nothing
 * (pushing it again is safe). A checker that runs out of memory (ATOM_ENOMEM) or reaches one of
 * its documented limits (ATOM_ELIMIT, e.g. aerodrome's max_threads) while processing an
 * accepted event is disabled instead (it gets no more events, its reports are incomplete, and
 * atom_checker_status_get() says ATOM_CHECKER_DISABLED with the event index and the reason);
 * the push still succeeds, and atom_finish() returns that code naming the checker. @since 0.2
 * for ATOM_ELIMIT (0.1 returned it from the push and kept the checker).
 * @return 0 or a negative ATOM_E* code; ATOM_ESTATE after atom_finish(); ATOM_EREENTRANT
 *         from a callback of @p s (the event is not consumed).
 * @since 0.1
 */
ATOM_API int atom_push(atom_session *s, const atom_event *ev);

/**
 * Push @p n events in order. Stops at the first error and returns it; @p done (may be NULL)
 * receives the number of events consumed, including the failing one. ATOM_EREENTRANT from a
 * callback of @p s (nothing consumed). Since 0.4 the events are validated into blocks and each
 * block dispatched at once (doc/api.md, "Events"): the same as pushing them one by one, except
 * that an error a checker returns (other than ATOM_ENOMEM and ATOM_ELIMIT, which disable it)
 * is returned once the rest of its block was dispatched, @p done then counting up to the end
 * of that block (at most 255 events past the failing one; they are pushed).
 * @since 0.1
 */
ATOM_API int atom_push_many(atom_session *s, const atom_event *ev, size_t n, size_t *done);

/** @name One helper per event kind; same return values as atom_push(). @since 0.1 */
/** @{ */
ATOM_API int atom_read(atom_session *s, uint64_t thread, uint64_t var, uint64_t loc);
ATOM_API int atom_write(atom_session *s, uint64_t thread, uint64_t var, uint64_t loc);
ATOM_API int atom_acquire(atom_session *s, uint64_t thread, uint64_t lock, uint64_t loc);
ATOM_API int atom_release(atom_session *s, uint64_t thread, uint64_t lock, uint64_t loc);
ATOM_API int atom_fork(atom_session *s, uint64_t thread, uint64_t child, uint64_t loc);
ATOM_API int atom_join(atom_session *s, uint64_t thread, uint64_t child, uint64_t loc);
ATOM_API int atom_begin(atom_session *s, uint64_t thread, uint64_t loc);
ATOM_API int atom_end(atom_session *s, uint64_t thread, uint64_t loc);
ATOM_API int atom_fence(atom_session *s, uint64_t thread, uint64_t loc);
ATOM_API int atom_commit(atom_session *s, uint64_t thread, uint64_t var, uint64_t loc);
/** @} */

/**
 * Give a key a name used in report messages. @p what is an atom_space value. The name is
 * copied; a later call replaces it.
 * @return 0, ATOM_EINVAL (bad space, NULL name), ATOM_ENOMEM, ATOM_EREENTRANT (from a
 *         callback of @p s: a checker may be holding a name it looked up).
 * @since 0.1
 */
ATOM_API int atom_set_name(atom_session *s, int what, uint64_t key, const char *name);

/**
 * @return the name registered for @p key in space @p what, or NULL. Valid until the name is
 *         replaced or the session freed.
 * @since 0.1
 */
ATOM_API const char *atom_get_name(const atom_session *s, int what, uint64_t key);

/**
 * Declare that variable @p var belongs to atomic set @p set (race-automata). A later call
 * moves it. @return 0, ATOM_EINVAL, ATOM_ENOMEM, ATOM_EREENTRANT (from a callback of @p s).
 * @since 0.1
 */
ATOM_API int atom_declare_set(atom_session *s, uint64_t var, uint64_t set);

/**
 * End of the execution: close every open transaction (as if its thread pushed END, in order of
 * first appearance of the threads), then let every checker finish. Idempotent (later calls
 * return the same status).
 * A checker's finish that fails with ATOM_ENOMEM or ATOM_ELIMIT disables it (as in atom_push).
 * @return 0, the first other error of a checker's finish, or else ATOM_ENOMEM / ATOM_ELIMIT if
 *         a checker was disabled at any point (atom_last_error() names it). A checker that is
 *         only INCOMPLETE (atom_env_incomplete) does not make it fail: see
 *         atom_checker_status_get(). ATOM_EREENTRANT from a callback of @p s (nothing done:
 *         finish after the call that ran it returns).
 * @since 0.1
 */
ATOM_API int atom_finish(atom_session *s);

/** @return the number of stored reports (at most atom_options::max_reports, and at most
 *  max_reports_per_checker from each checker). @since 0.1 */
ATOM_API size_t atom_report_count(const atom_session *s);

/** @return stored report @p i in order of discovery, or NULL if out of range. @since 0.1 */
ATOM_API const atom_report *atom_report_get(const atom_session *s, size_t i);

/** @return distinct reports that were delivered but not stored because of max_reports or
 *  max_reports_per_checker (all checkers together). @since 0.1 */
ATOM_API size_t atom_report_dropped(const atom_session *s);

/** Counters of a session, for atom_session_stats(). Fields are only appended. */
typedef struct atom_session_stats {
  uint32_t version;   /**< set by the caller to ATOM_SESSION_STATS_VERSION */
  uint32_t reserved;
  uint64_t events;    /**< events pushed (= next event index) */
  uint64_t rejected;  /**< ill-formed events dropped */
  uint64_t threads;   /**< distinct thread keys */
  uint64_t vars;      /**< distinct variable keys */
  uint64_t locks;     /**< distinct lock keys */
  uint64_t bytes;     /**< memory held by the core (excluding checkers) */
} atom_session_stats;
#define ATOM_SESSION_STATS_VERSION 1

/** @return 0, or ATOM_EINVAL (NULL, unknown version). @since 0.1 */
ATOM_API int atom_session_stats_get(const atom_session *s, atom_session_stats *out);

/** @return the number of attached checkers. @since 0.1 */
ATOM_API size_t atom_checker_count(const atom_session *s);

/** @return the name of attached checker @p i, or NULL. @since 0.1 */
ATOM_API const char *atom_checker_name(const atom_session *s, size_t i);

/** Per-checker figures, for atom_checker_stats_get(). Fields are only appended. */
typedef struct atom_checker_stats {
  uint32_t version;      /**< set by the caller to ATOM_CHECKER_STATS_VERSION */
  uint32_t reserved;
  uint64_t bytes;        /**< memory the checker holds now */
  uint64_t peak_bytes;   /**< the most it ever held */
  uint64_t time_ns;      /**< time spent in it (only with ATOM_PROFILE; else 0) */
  uint64_t reports;      /**< distinct reports it made, stored or not: those beyond the caps of
                              atom_options (dropped) are the ones not among atom_report_get() */
  uint64_t occurrences;  /**< all reports it made, duplicates included */
  uint64_t nodes;        /**< checker-specific: graph nodes, transactions, tuples held */
  uint64_t edges;        /**< checker-specific: graph edges held */
  uint64_t clocks;       /**< checker-specific: vector clocks held */
  uint64_t disabled;     /**< 1 if it stopped checking (out of memory or a limit, see atom_push
                              and atom_checker_status_get) */
} atom_checker_stats;
#define ATOM_CHECKER_STATS_VERSION 1

/** @return 0, or ATOM_EINVAL (NULL, @p i out of range, unknown version). @since 0.1 */
ATOM_API int atom_checker_stats_get(const atom_session *s, size_t i, atom_checker_stats *out);

/** atom_checker_status::state: the checker saw every event and decided. @since 0.2 */
#define ATOM_CHECKER_COMPLETE 1
/** atom_checker_status::state: it stopped at a bound of its own (atom_env_incomplete): its
 *  reports are true, but the absence of reports proves nothing. @since 0.2 */
#define ATOM_CHECKER_INCOMPLETE 2
/** atom_checker_status::state: a limit (ATOM_ELIMIT) or lack of memory (ATOM_ENOMEM) made it
 *  stop checking; it got no events after stopped_at. Reports made before stay true. @since 0.2 */
#define ATOM_CHECKER_DISABLED 3

/** Whether a checker's verdict is complete, for atom_checker_status_get(). Fields are only
 *  appended. @since 0.2 */
typedef struct atom_checker_status {
  uint32_t version;     /**< set by the caller to ATOM_CHECKER_STATUS_VERSION */
  uint32_t state;       /**< ATOM_CHECKER_COMPLETE, _INCOMPLETE or _DISABLED */
  uint64_t stopped_at;  /**< event index where it stopped (INCOMPLETE, DISABLED); 0 otherwise.
                             A checker stopped in its end-of-run analysis names the event count */
  const char *reason;   /**< one line, owned by the session, valid until atom_session_free;
                             NULL when COMPLETE */
  int32_t error;        /**< the ATOM_E* code that disabled it (ATOM_ELIMIT, ATOM_ENOMEM), else 0 */
  uint32_t reserved;    /**< 0 */
} atom_checker_status;
#define ATOM_CHECKER_STATUS_VERSION 1

/**
 * Whether attached checker @p i decided everything. Reading it before atom_finish() gives the
 * state so far (checkers that decide at finish can still stop there).
 * @param out its version must be ATOM_CHECKER_STATUS_VERSION; filled on success.
 * @return 0, or ATOM_EINVAL (NULL, @p i out of range, unknown version).
 * @since 0.2
 */
ATOM_API int atom_checker_status_get(const atom_session *s, size_t i, atom_checker_status *out);

#ifdef __cplusplus
}
#endif
#endif
