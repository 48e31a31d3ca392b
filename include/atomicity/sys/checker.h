/**
 * @file atomicity/sys/checker.h
 * @brief Plugin interface: how a checker is written and attached.
 *
 * Include it explicitly (`#include <atomicity/sys/checker.h>`): the umbrella <atomicity.h>
 * does not, because this layer is for people who write checkers, not for people who use them.
 *
 * Stability. This header is a separate layer with its own rules, on top of the ABI rules of
 * the rest of the library (the soname changes only on an incompatible change; exported
 * symbols keep their version node; structs carry a version and only grow at the end):
 * - atom_checker: a minor release may append members (new optional callbacks, new fields) at
 *   the end and then bumps ATOM_CHECKER_ABI_VERSION. The library keeps accepting every
 *   version it ever shipped and reads only the members that version has, so a plugin built
 *   against an older header runs unchanged; members it lacks take their default (NULL or 0).
 *   A version the library does not know (a plugin built against a newer header) is refused
 *   with ATOM_EINVAL, never guessed at.
 * - atom_ev and atom_report_spec may grow at the end the same way (atom_report_spec carries
 *   its version); the members documented here keep their meaning and offsets.
 * - New atom_env_* functions and flags may appear in a minor release (in that release's
 *   symbol version node); none is removed or changes meaning before the soname changes.
 * - What is NOT promised: the order in which several checkers of one session are called for
 *   one event (today: attach order), and the dense ids a given trace produces beyond "0, 1,
 *   2, ... per space in order of first appearance".
 *
 * Lifecycle of a checker instance (each callback's own comment below has the details):
 *
 *     attach:  arguments parsed ─> create ─┬─ fails: nothing else is ever called
 *                                           └─ ok:   on_event* ─> finish? ─> destroy
 *
 * The session calls a checker only from inside one of its own calls (atom_session_attach*,
 * atom_push and friends, atom_finish, atom_checker_stats_get, atom_session_free), one call at
 * a time per session (with ATOM_THREADSAFE the session serializes them; see
 * doc/threading.md). From inside a callback, calls that would re-enter the same session
 * (atom_push, atom_finish, atom_session_attach*, atom_set_name, atom_declare_set, ...) return
 * ATOM_EREENTRANT and change nothing; atom_session_free from there is deferred to the end of
 * the running call. The atom_env_* functions are what a checker uses instead.
 *
 * Normalization done by the session, once, for all checkers: only the outermost BEGIN/END of a
 * thread and the outermost ACQUIRE/RELEASE of a re-entrant lock are forwarded; ill-formed
 * events never arrive; keys are interned into dense ids (0, 1, 2, ... per space, in order of
 * first appearance).
 *
 * doc/plugins.md walks through a complete out-of-tree checker (examples/plugin).
 */
#ifndef ATOMICITY_SYS_CHECKER_H
#define ATOMICITY_SYS_CHECKER_H

#include "atomicity/common.h"
#include "atomicity/error.h" /* the ATOM_E* codes callbacks return */
#include "atomicity/event.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The checker's view of its session. Opaque; borrowed: valid from the start of create() to
 * the end of destroy(), and only to be used from inside the instance's own callbacks (on the
 * thread running them). The atom_env_* functions below may be called from any callback;
 * atom_env_report() and atom_env_incomplete() belong in on_event() and finish().
 */
typedef struct atom_env atom_env;

/** A normalized event as checkers see it. May grow at the end. */
typedef struct atom_ev {
  uint32_t kind;   /**< atom_kind */
  uint32_t thread; /**< dense thread id */
  uint32_t target; /**< dense variable / lock / child-thread id; 0 for BEGIN, END, FENCE */
  uint32_t flags;  /**< ATOM_EV_* */
  uint64_t index;  /**< event index (0-based order of pushed events) */
  uint64_t loc;    /**< program location as pushed */
} atom_ev;

/** atom_ev::flags: the event was made by atom_finish() (closing END). */
#define ATOM_EV_SYNTHETIC 0x1u
/** atom_ev::flags: a READ pushed with ATOM_FLAG_ACQUIRE. @since 0.2 */
#define ATOM_EV_ACQUIRE 0x2u
/** atom_ev::flags: a WRITE pushed with ATOM_FLAG_RELEASE. @since 0.2 */
#define ATOM_EV_RELEASE 0x4u

/** Checker-specific figures reported by atom_checker::stats. */
typedef struct atom_checker_counters {
  uint64_t nodes;  /**< graph nodes, transactions, tuples held */
  uint64_t edges;  /**< graph edges held */
  uint64_t clocks; /**< vector clocks held */
} atom_checker_counters;

/**
 * The current version of atom_checker (1: the 0.1 layout; 2 appends properties, @since 0.3;
 * 3 appends on_events, @since 0.4).
 */
#define ATOM_CHECKER_ABI_VERSION 3

/** @name atom_checker::properties: what a checker decides and when (--list-checkers). @since 0.3 */
/** @{ */
/** It decides as events arrive (reports come during atom_push). */
#define ATOM_CHECKER_PROP_ONLINE 0x1u
/** It decides at atom_finish() (reports come then). A checker may have both bits. */
#define ATOM_CHECKER_PROP_AT_FINISH 0x2u
/** Sound: every report is a real violation of its property in the observed execution. */
#define ATOM_CHECKER_PROP_SOUND 0x4u
/** Complete: it misses no violation of its property in the observed execution. */
#define ATOM_CHECKER_PROP_COMPLETE 0x8u
/** Predictive: it reasons about other feasible interleavings of the observed events. */
#define ATOM_CHECKER_PROP_PREDICTIVE 0x10u
/**
 * Not a property of its verdicts but a need: it reads the store buffer
 * (atom_env_commit_source(), atom_env_pending_writes()), which only a checker with this bit
 * and COMMIT in its event_mask may do. The session then keeps 24 more bytes per pending write
 * (its index, loc and flags); without such a checker it keeps only the variable, to check
 * each COMMIT. @since 0.4
 */
#define ATOM_CHECKER_PROP_STORE_BUFFER 0x20u
/** @} */

/**
 * A checker: one algorithm behind one vtable. Fill it with atom_checker_init() (or a static
 * initializer that sets abi_version to ATOM_CHECKER_ABI_VERSION), then set its members. The
 * vtable and the strings it points to must outlive every session it is attached to.
 */
typedef struct atom_checker {
  uint32_t abi_version;          /**< ATOM_CHECKER_ABI_VERSION (1, 2 and 3 are accepted) */
  uint32_t event_mask;           /**< OR of ATOM_KIND_BIT(kind) for the kinds it wants */
  const char *name;              /**< "aerodrome"; names the checker in reports and errors */
  const char *summary;           /**< one line */
  const char *const *arg_keys;   /**< NULL-terminated list of accepted argument keys, or NULL
                                      (no arguments: any key is refused before create) */
  /**
   * Create an instance. Called once, from atom_session_attach_checker() (or
   * atom_session_attach()), before the first event, after the session checked the vtable and
   * parsed the arguments (an argument key not in arg_keys fails the attach with ATOM_EINVAL
   * and create is not called). @p env is the instance's view of its session, valid until
   * destroy() returns; read arguments with atom_env_arg().
   *
   * Ownership: store the instance in *@p self (it is NULL on entry; a checker without state
   * may store @p env or leave it NULL). The session never looks inside it and hands it back
   * to every later callback; the checker frees it in destroy(). Allocate with
   * atom_env_realloc() so the memory is accounted to the checker and uses the session's
   * allocator.
   *
   * @return 0, or a negative ATOM_E* code (say why with atom_env_error()). On failure
   *         destroy() is NOT called: free everything allocated so far before returning. The
   *         checker is not attached and the attach call returns the code. If create succeeds
   *         but the session then cannot attach the instance (ATOM_ENOMEM), destroy() is called
   *         at once and the attach fails.
   */
  int (*create)(void **self, atom_env *env);
  /**
   * One normalized event. Called once for every event whose kind bit is in event_mask, in
   * event order, from atom_push() and the calls built on it (atom_push_many, the per-kind
   * helpers, atom_trace_feed), and from atom_finish() for the ENDs that close transactions
   * still open (flag ATOM_EV_SYNTHETIC), before finish(). @p ev is valid only during the call.
   * May call every atom_env_* function, atom_env_report() and atom_env_incomplete() included.
   *
   * @return 0, or a negative ATOM_E* code. ATOM_ENOMEM and ATOM_ELIMIT disable the checker
   *         (no further on_event or finish; atom_checker_status_get() says where; the push
   *         still succeeds). Any other code is returned by the push (the event is not undone:
   *         the session and the other checkers have it) and the checker keeps receiving
   *         events. A positive value or an unknown code makes the push fail with ATOM_ECHECKER.
   */
  int (*on_event)(void *self, const atom_ev *ev);
  /**
   * Optional (NULL): the end of the execution. Called at most once, from the first
   * atom_finish() of the session, after every open transaction was closed; not called for a
   * disabled checker, nor when the session is freed without atom_finish(). Checkers that
   * decide at the end report here; long work may call atom_env_progress().
   * @return as on_event (ATOM_ENOMEM and ATOM_ELIMIT disable; another code is what
   *         atom_finish() returns, now and on every later call).
   */
  int (*finish)(void *self);
  /**
   * Free the instance. Called exactly once for every instance whose create() succeeded, from
   * atom_session_free(), whether or not finish() ran and also for a disabled checker. @p env
   * is still valid during the call (free through atom_env_realloc()); do not report from
   * here. Afterwards the session never uses @p self again.
   */
  void (*destroy)(void *self);
  /**
   * Optional (NULL): checker-specific counters for atom_checker_stats_get(), which calls it
   * on every call (any time between attach and free, also before finish and when disabled).
   * @p out is zeroed before the call. Must not change what the checker decides.
   * @return 0; on another value the counters read as 0.
   */
  int (*stats)(void *self, atom_checker_counters *out);
  /* ---- version 2 (@since 0.3) ---- */
  uint32_t properties;           /**< ATOM_CHECKER_PROP_* bits; 0 = unknown */
  /* ---- version 3 (@since 0.4) ---- */
  /**
   * Optional (NULL): a block of normalized events at once, the batch form of on_event. The
   * session calls it from atom_push_many() (and atom_trace_feed(), which is built on it) with
   * the events of up to a few hundred consecutive pushes, in event order, only of the kinds
   * in event_mask; on_event is still required and still called for single events (atom_push,
   * the per-kind helpers, the closing ENDs of atom_finish and of a JOIN). Calling on_events
   * must be exactly the same as calling on_event on each event in turn. @p ev is valid only
   * during the call.
   *
   * When a block reaches the checker, the session has already validated the events that
   * follow in the block (so atom_session_stats() from a report callback may count them) and
   * interned their keys: during the call atom_env_count() counts every id of the block (it
   * answers as on_event would at the block's last event, and does not change during the
   * call), and atom_env_key(), atom_env_name() and atom_env_label() know every id of it. Ids
   * are still dense and given in event order, the ones atom_push() would give; an id of the
   * block may be one the checker never met before, as in on_event. (A block holds new keys
   * only while every checker the session would hand its events to has on_events; a checker
   * that takes events one at a time sees the counts atom_push() would make.)
   *
   * @return 0 when every event was taken; else the negative ATOM_E* code of the first event
   *         that failed, with *@p failed set to its position in @p ev (0 .. @p n - 1). The
   *         events before it were taken and the ones after it were not: the code then means
   *         what it means for on_event at that event (ATOM_ENOMEM and ATOM_ELIMIT disable
   *         the checker there; after another code the session hands the rest of the block
   *         in a new call). A position not below @p n is read as @p n - 1.
   */
  int (*on_events)(void *self, const atom_ev *ev, size_t n, size_t *failed);
} atom_checker;

/**
 * Prepare a vtable of version @p version: set abi_version, zero every other member that
 * version has, and write nothing beyond that version's size. Then set the members:
 *
 *     atom_checker vt;
 *     atom_checker_init(&vt, ATOM_CHECKER_ABI_VERSION);
 *     vt.name = "my-checker";
 *     ...
 *
 * Why the version argument: the library the plugin runs with may be newer than the header it
 * was compiled with, and a newer vtable is larger; without being told which layout the caller
 * has, the library would write past the end of the caller's struct. (atom_options_init()
 * works the same way.)
 *
 * @return 0, ATOM_EINVAL (NULL @p vt, or a version this library does not know).
 * @since 0.4
 */
ATOM_API int atom_checker_init(atom_checker *vt, unsigned version);

/**
 * @return the value given for @p key in the attach arguments, or NULL if not given. Valid for
 *         the checker's lifetime. A key given without "=value" reads as "".
 * @since 0.1
 */
ATOM_API const char *atom_env_arg(atom_env *env, const char *key);

/**
 * Set the thread's last-error message (printf-style) and return @p err, so that
 * `return atom_env_error(env, ATOM_EINVAL, "mode must be conflict or view");` works.
 * @since 0.1
 */
ATOM_API int atom_env_error(atom_env *env, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/**
 * Allocation through the session's allocator, accounted to this checker (Lua-style: @p ptr
 * NULL allocates, @p new_size 0 frees and returns NULL). @p old_size must be the size the block
 * was allocated with (0 for a new block).
 * @return the block, or NULL on failure (the old block is then untouched).
 * @since 0.1
 */
ATOM_API void *atom_env_realloc(atom_env *env, void *ptr, size_t old_size, size_t new_size);

/** @return the number of ids interned so far in @p space (an atom_space). @since 0.1 */
ATOM_API uint32_t atom_env_count(const atom_env *env, int space);

/** @return the key pushed for dense id @p id of @p space (0 if unknown). @since 0.1 */
ATOM_API uint64_t atom_env_key(const atom_env *env, int space, uint32_t id);

/** @return the registered name of dense id @p id of @p space, or NULL. @since 0.1 */
ATOM_API const char *atom_env_name(const atom_env *env, int space, uint32_t id);

/**
 * Write a readable label of dense id @p id: its registered name, else "0x" and its key in hex.
 * Always NUL-terminates when @p size > 0.
 * @return the length the label has (as snprintf).
 * @since 0.1
 */
ATOM_API int atom_env_label(const atom_env *env, int space, uint32_t id, char *buf, size_t size);

/**
 * The atomic set of variable @p var: the declared set key (atom_declare_set) if there is one.
 * @return 1 and *set if declared, 0 if not.
 * @since 0.1
 */
ATOM_API int atom_env_var_set(const atom_env *env, uint32_t var, uint64_t *set);

/**
 * Tell the session how far a long piece of work has come (typically finish() of a checker that
 * decides at the end), so that a driver can show progress (atom_options::on_progress). Cheap
 * enough to call often; the session forwards at most a few calls a second. @p total 0 means
 * unknown.
 * @return 0, ATOM_EINVAL (NULL @p env).
 * @since 0.3
 */
ATOM_API int atom_env_progress(atom_env *env, uint64_t done, uint64_t total);

/** A transaction named in a report. */
typedef struct atom_txn_ref {
  uint32_t thread;       /**< dense thread id */
  uint32_t unary;        /**< 1 if it is a unary transaction (one event outside BEGIN..END) */
  uint64_t begin_index;  /**< index of its BEGIN (or of its only event) */
  uint64_t begin_loc;    /**< loc of that event */
} atom_txn_ref;

/**
 * atom_report_spec::flags: the checker predicts the violation for some feasible interleaving
 * of the observed events (commit-node, block, reduction) rather than seeing it in the observed
 * order. Without it a report is observed. See atom_report_evidence(). @since 0.2
 */
#define ATOM_REPORT_PREDICTED 0x1u

/**
 * An edge of a reported cycle (spec version 2): the two conflicting witness events, as
 * positions in atom_report_spec::events. The event @p from happened first; the edge says the
 * transaction of @p from must come before the transaction of @p to in any serial order.
 * @since 0.3
 */
typedef struct atom_edge_ref {
  uint32_t from;   /**< position of the earlier event in atom_report_spec::events */
  uint32_t to;     /**< position of the later event */
  uint32_t flags;  /**< ATOM_EDGE_CLOSING or 0 */
  uint32_t reserved; /**< 0 */
} atom_edge_ref;

/** atom_edge_ref::flags: the edge whose later event closed the cycle (shown highlighted). */
#define ATOM_EDGE_CLOSING 0x1u

/**
 * What a checker reports. May grow at the end; set version to ATOM_REPORT_SPEC_VERSION.
 *
 * The message. Version 1: a literal line, shown as it is. Version 2: a template the session
 * renders whenever the message is asked for (atom_report_message()), so that names registered
 * after the report are used and every checker speaks one notation. In a template, `{tN}` is
 * transaction N ("T1's transaction at withdraw at bank.c:30 (event 12)"), `{hN}` the thread of
 * transaction N ("T1"), `{eN}` witness event N with its thread ("T2 read balance at bank.c:31
 * (event 17)"), `{vN}` variable N, `{{` and `}}` literal braces; anything else between braces
 * is an error (ATOM_EINVAL). NULL (either
 * version) asks for the default: for a report with edges, the cycle told in plain words; else
 * the transactions involved.
 */
typedef struct atom_report_spec {
  uint32_t version;
  uint32_t flags;               /**< ATOM_REPORT_PREDICTED or 0 (was `reserved`, always 0, in 0.1) */
  const char *kind;             /**< stable kind string ("conflict-cycle") */
  uint64_t event_index;         /**< where it was found */
  const atom_txn_ref *txns;     /**< transactions involved, in role order */
  size_t n_txns;
  const atom_ev *events;        /**< witness events */
  size_t n_events;
  const uint32_t *vars;         /**< dense variable ids named by the report */
  size_t n_vars;
  const char *message;          /**< one line; NULL for a default built from the above */
  uint64_t signature_extra;     /**< mixed into the dedup signature (0 if not needed) */
  /* ---- version 2 (@since 0.3) ---- */
  const atom_edge_ref *edges;   /**< the cycle's edges, in cycle order (NULL if none) */
  size_t n_edges;
} atom_report_spec;
#define ATOM_REPORT_SPEC_VERSION 2

/**
 * Report a violation. The session copies everything, deduplicates by signature (checker,
 * kind, the set of begin locations of the transactions — each distinct location once, so a
 * cycle through many transactions of the same atomic function is the same bug as one through
 * two; a location with a stack (atom_set_stack()) counts as its first frame, so two call paths
 * of one function are one bug — and signature_extra: one bug, one report) and calls on_report for new ones. A
 * long cycle is stored bounded: each run of consecutive transactions of one thread is kept as
 * its first transaction with a count (atom_report_txn_run()), and at most
 * ATOM_REPORT_MAX_TXNS runs are kept (atom_report_txns_omitted()).
 * Call it from on_event() or finish(); the spec and what it points to are borrowed for the
 * call only.
 * @return 0, ATOM_EINVAL (a malformed spec: an edge or event position out of range, a bad
 *         template), ATOM_ENOMEM.
 * @since 0.1
 */
ATOM_API int atom_env_report(atom_env *env, const atom_report_spec *spec);

/**
 * Count one more occurrence of a report already made, if there is one: when the session holds
 * a report with @p spec's signature (see atom_env_report(); the message and the witness events
 * are not looked at) it counts @p spec as a repeat of it, exactly as atom_env_report() would.
 * A checker whose message costs to compose calls this first and composes and reports only when
 * it returns 0. Call it where atom_env_report() may be called.
 * @return 1 (counted), 0 (no such report: nothing changed), ATOM_EINVAL (a malformed spec),
 *         ATOM_ENOMEM.
 * @since 0.4
 */
ATOM_API int atom_env_report_repeat(atom_env *env, const atom_report_spec *spec);

/**
 * The checker could not decide everything: it stopped at a bound (a work or memory bound of
 * its own, e.g. tso's max_work) at event @p event_index. Its reports so far stay true; the
 * session marks the checker INCOMPLETE with this reason (printf-style, one line; the first
 * call's reason is kept, later calls change nothing). A checker that hits such a bound calls
 * this INSTEAD of making a report: an inconclusive search is never a violation. The checker
 * keeps receiving events. See atom_checker_status_get().
 * @return 0, ATOM_EINVAL (NULL @p env or @p fmt).
 * @since 0.2
 */
ATOM_API int atom_env_incomplete(atom_env *env, uint64_t event_index, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/**
 * During on_event() of a COMMIT: the WRITE event it commits (the thread's oldest pending write,
 * as the checker received it: its index, loc, thread and variable). The session keeps each
 * thread's store buffer (a FIFO of pending writes; FENCE, ACQUIRE and RELEASE empty it) only
 * while some attached checker subscribes to COMMIT, and what this call needs of it only for
 * checkers with ATOM_CHECKER_PROP_STORE_BUFFER in their properties.
 * @return 0, or ATOM_EINVAL (NULL argument, not during on_event() of a COMMIT, or a checker
 *         without ATOM_CHECKER_PROP_STORE_BUFFER).
 * @since 0.4
 */
ATOM_API int atom_env_commit_source(const atom_env *env, atom_ev *write);

/**
 * A read-only view of thread @p thread's store buffer: its pending writes, oldest first, as the
 * checkers received them (index, loc, thread, variable). Copies those from the @p first-th
 * oldest on into @p out, at most @p max of them (@p out may be NULL when @p max is 0). What
 * it shows is the buffer as the event being dispatched finds it: during on_event() of a WRITE
 * that write is in it; of a COMMIT, the write it commits is not (atom_env_commit_source() has
 * it); of a FENCE, ACQUIRE or RELEASE (outermost, as forwarded), the writes that the drain
 * commits are still in it and leave it after the dispatch; of a JOIN, the joined thread's
 * writes (committed by the JOIN, since no later event of that thread can) are in its buffer.
 * The session keeps store buffers only while some attached checker subscribes to COMMIT;
 * otherwise every buffer is empty. Only a checker with ATOM_CHECKER_PROP_STORE_BUFFER in its
 * properties may call this.
 * @return the number of pending writes of @p thread (0 for a NULL @p env, an unknown thread or
 *         a checker without ATOM_CHECKER_PROP_STORE_BUFFER).
 * @since 0.4
 */
ATOM_API size_t atom_env_pending_writes(const atom_env *env, uint32_t thread, size_t first,
                                        atom_ev *out, size_t max);

#ifdef __cplusplus
}
#endif
#endif
