/**
 * @file atomicity/error.h
 * @brief Error codes: 0 is success, every failure is a negative, pinned ATOM_E* value.
 *
 * Stability: stable API and ABI. Values are never renumbered; new codes are only appended.
 */
#ifndef ATOMICITY_ERROR_H
#define ATOMICITY_ERROR_H

#include "atomicity/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The one list of error codes: X(NAME, value, "description"). It generates the enum, the
 * strings of atom_strerror() and atom_error_name(), and the Python binding's table.
 */
#define ATOM_ERROR_MAP(X)                                                        \
  X(EINVAL, -1, "invalid argument")                                              \
  X(ENOMEM, -2, "out of memory")                                                 \
  X(EIO, -3, "input/output error")                                               \
  X(EPARSE, -4, "malformed trace")                                               \
  X(ENOTFOUND, -5, "no such checker")                                            \
  X(ESTATE, -6, "operation not allowed in this session state")                   \
  X(ECALLBACK, -7, "a user callback asked to stop")                              \
  X(ELIMIT, -8, "a documented limit was exceeded")                               \
  X(EKIND, -9, "unknown event kind or non-zero flags")                           \
  X(EENDNOBEGIN, -10, "END without a matching BEGIN")                            \
  X(ENOTHELD, -11, "RELEASE of a lock the thread does not hold")                 \
  X(EHELD, -12, "ACQUIRE of a lock held by another thread")                      \
  X(EJOINED, -13, "event of a thread that was already joined")                   \
  X(ENOPENDING, -14, "COMMIT without a pending WRITE of that variable")          \
  X(EFORK, -15, "FORK of a thread that already exists, or of itself")            \
  X(EJOIN, -16, "JOIN of the thread itself, or of a thread already joined")      \
  X(ECHECKER, -17, "a checker failed")                                          \
  X(EREENTRANT, -18, "called from inside the session's own callback")

/** Error codes. Values are ABI: never renumbered. */
typedef enum atom_error {
  ATOM_OK = 0,
#define ATOM_ERROR_ENUM_(name, value, text) ATOM_##name = value,
  ATOM_ERROR_MAP(ATOM_ERROR_ENUM_)
#undef ATOM_ERROR_ENUM_
  ATOM_ERROR_MIN_ = -18 /* internal: smallest code; not part of the ABI */
} atom_error;

/**
 * @return a static description of @p err ("out of memory"); "success" for 0 and
 *         "unknown error" for anything else. Never NULL.
 * @since 0.1
 */
ATOM_API const char *atom_strerror(int err);

/**
 * @return the symbolic name of @p err ("ATOM_ENOMEM"), "ATOM_OK" for 0, NULL if unknown.
 * @since 0.1
 */
ATOM_API const char *atom_error_name(int err);

/**
 * The detailed message of the last error set by a library call on the calling thread (for
 * example "event 17: RELEASE of lock 0x2a not held by thread 3"). Thread-local.
 *
 * @return a string valid until the next library call on this thread; "" if none.
 * @since 0.1
 */
ATOM_API const char *atom_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
