/**
 * @file atomicity/event.h
 * @brief Events that producers push into a session.
 *
 * Stability: stable API and ABI. Kind values are pinned forever; new kinds are only appended.
 */
#ifndef ATOMICITY_EVENT_H
#define ATOMICITY_EVENT_H

#include "atomicity/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The one list of event kinds: X(NAME, value, "name", "std-op"). It generates the enum below,
 * the names returned by atom_kind_name() (which the Python binding reads) and the STD trace
 * operators.
 */
#define ATOM_KIND_MAP(X)                \
  X(READ, 1, "read", "r")               \
  X(WRITE, 2, "write", "w")             \
  X(ACQUIRE, 3, "acquire", "acq")       \
  X(RELEASE, 4, "release", "rel")       \
  X(FORK, 5, "fork", "fork")            \
  X(JOIN, 6, "join", "join")            \
  X(BEGIN, 7, "begin", "begin")         \
  X(END, 8, "end", "end")               \
  X(FENCE, 9, "fence", "fence")         \
  X(COMMIT, 10, "commit", "commit")

/** Event kinds. Values are ABI: never renumbered. */
typedef enum atom_kind {
#define ATOM_KIND_ENUM_(name, value, text, op) ATOM_##name = value,
  ATOM_KIND_MAP(ATOM_KIND_ENUM_)
#undef ATOM_KIND_ENUM_
  ATOM_KIND_MAX_ = 10 /* internal: largest kind value; not part of the ABI */
} atom_kind;

/** Bit of @p kind in an event-kind mask (atom_checker::event_mask). */
#define ATOM_KIND_BIT(kind) (1u << (kind))

/**
 * An event as a producer pushes it. 32 bytes; the layout is frozen.
 *
 * Keys are arbitrary 64-bit values chosen by the producer (addresses, ids); the session interns
 * them. Threads, variables and locks are separate key spaces.
 */
typedef struct atom_event {
  uint32_t kind;   /**< an atom_kind value */
  uint32_t flags;  /**< 0, or ATOM_FLAG_ACQUIRE on a READ, or ATOM_FLAG_RELEASE on a WRITE */
  uint64_t thread; /**< the thread performing the event */
  uint64_t target; /**< variable (READ, WRITE, COMMIT), lock (ACQUIRE, RELEASE), child thread
                        (FORK, JOIN); ignored for BEGIN, END, FENCE */
  uint64_t loc;    /**< program location (pc or location id); opaque to the library */
} atom_event;

/**
 * atom_event::flags on a READ: the read is an acquire (it synchronizes with earlier release
 * writes of the same variable by other threads). The predictive checkers order every earlier
 * release write of the variable by another thread before it; see doc/api.md
 * "Synchronization". Any other non-zero flags, or this flag on another kind, is ATOM_EKIND.
 * @since 0.2
 */
#define ATOM_FLAG_ACQUIRE 0x1u
/**
 * atom_event::flags on a WRITE: the write is a release (later acquire reads of the same
 * variable by other threads are ordered after it). Valid only on a WRITE.
 * @since 0.2
 */
#define ATOM_FLAG_RELEASE 0x2u

/**
 * Key spaces, for atom_set_name() and name look-ups. Values are pinned.
 *
 * ATOM_SPACE_LOC names program locations (the `loc` of events), e.g. "transfer (bank.c:42)",
 * for tools that print transactions and events; checkers do not intern locations, so it has no
 * dense ids (the atom_env_* functions take only the first three spaces). @since 0.2
 */
enum atom_space {
  ATOM_SPACE_THREAD = 1,
  ATOM_SPACE_VAR = 2,
  ATOM_SPACE_LOCK = 3,
  ATOM_SPACE_LOC = 4
};

/**
 * @return the lower-case name of an event kind ("read", "write", ..., "commit"), or NULL if
 *         @p kind is not a kind. Static storage.
 * @since 0.1
 */
ATOM_API const char *atom_kind_name(int kind);

/**
 * The key space of an event's target: ATOM_SPACE_VAR for READ, WRITE and COMMIT,
 * ATOM_SPACE_LOCK for ACQUIRE and RELEASE, ATOM_SPACE_THREAD for FORK and JOIN (the child);
 * 0 for kinds without a target (BEGIN, END, FENCE) and for values that are not kinds.
 * Works on atom_event::kind and on atom_ev::kind alike.
 * @since 0.4
 */
ATOM_API int atom_kind_space(uint32_t kind);

#ifdef __cplusplus
}
#endif
#endif
