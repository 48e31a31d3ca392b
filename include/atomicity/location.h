/**
 * @file atomicity/location.h
 * @brief What a program location (the `loc` of an event) means: function, file, line, stack.
 *
 * A loc is opaque to the checkers. A producer that knows more about it (a runtime that
 * symbolizes pcs, a trace with a location map) describes it here, at any time (before or after
 * the reports that name it: reports are rendered when asked for). Reports, their fingerprints,
 * suppressions and every output format then use the description.
 *
 * Stability: stable API and ABI. Thread safety: as atom_set_name().
 */
#ifndef ATOMICITY_LOCATION_H
#define ATOMICITY_LOCATION_H

#include "atomicity/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct atom_session;

/** Most frames a stack keeps (atom_set_stack() stores the innermost ones). */
#define ATOM_MAX_STACK 64

/**
 * Describe location @p loc: the source line it stands for. Strings are copied; a later call
 * replaces the description.
 * @param s        the session
 * @param loc      the loc value as pushed
 * @param function the function (may be NULL)
 * @param file     the source file as the user should see it (may be NULL)
 * @param line     the line (0: unknown)
 * @return 0, ATOM_EINVAL (NULL @p s, or all three unknown), ATOM_ENOMEM, ATOM_EREENTRANT.
 * @since 0.3
 */
ATOM_API int atom_set_location(struct atom_session *s, uint64_t loc, const char *function,
                               const char *file, uint32_t line);

/**
 * What is known of @p loc. Out parameters may be NULL; unknown parts read NULL / 0.
 * @return 1 if @p loc was described, 0 if not (out parameters cleared).
 * @since 0.3
 */
ATOM_API int atom_get_location(const struct atom_session *s, uint64_t loc, const char **function,
                               const char **file, uint32_t *line);

/**
 * The call stack of @p loc: @p frames[0] is the frame that shows in the headline (usually
 * the user's own code, with library frames skipped), then its callers, outermost last. Each
 * frame is itself a loc, described by atom_set_location(). At most ATOM_MAX_STACK frames
 * are kept. A later call replaces the stack.
 * @return 0, ATOM_EINVAL, ATOM_ENOMEM, ATOM_EREENTRANT.
 * @since 0.3
 */
ATOM_API int atom_set_stack(struct atom_session *s, uint64_t loc, const uint64_t *frames,
                            size_t n);

/**
 * @return the number of frames of @p loc's stack (0 if none was set); *@p frames (may be
 *         NULL) points at them, valid until the stack is replaced or the session freed.
 * @since 0.3
 */
ATOM_API size_t atom_get_stack(const struct atom_session *s, uint64_t loc,
                               const uint64_t **frames);

#ifdef __cplusplus
}
#endif
#endif
