/* Debug assertions on internal invariants (internal).
 *
 * ATOM__ASSERT(cond) checks an invariant of the library's own data structures -- something no
 * input, however wrong, can make false; bad input is reported with an error code instead. It is
 * compiled only when the build asks for it (meson -Dassertions=true, the default for
 * buildtype=debug; ATOM_ASSERTIONS=1 on the command line): then a false condition prints
 * file:line and the condition to stderr and traps, so that a debugger or a sanitizer stops
 * exactly there. In every other build (the default, release) the condition is not even
 * evaluated: the library never stops a user's program. Conditions must have no side effects. */
#ifndef ATOM_SUPPORT_ASSERT_H
#define ATOM_SUPPORT_ASSERT_H

#if defined(ATOM_ASSERTIONS) && ATOM_ASSERTIONS

/* Prints "libatomicity: FILE:LINE: internal invariant failed: COND" and traps. */
void atom__assert_fail(const char *file, int line, const char *cond);

#define ATOM__ASSERT(cond) \
  ((cond) ? (void)0 : atom__assert_fail(__FILE__, __LINE__, #cond))

#else

/* sizeof keeps the names in cond "used" (no unused-variable warnings) without evaluating it. */
#define ATOM__ASSERT(cond) ((void)sizeof(!(cond)))

#endif

#endif
