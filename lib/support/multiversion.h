/* Hot code compiled for more than one instruction set, the best one chosen at load time
 * (internal).
 *
 * The library is built for the baseline of its target (x86-64: SSE2, no -march flags), so
 * that it runs on every machine of that architecture. Loops over 32-bit vector clock
 * components vectorize poorly there: SSE2 has no unsigned 32-bit maximum (a ⊔ costs 6
 * operations per 4 components), while AVX2 has vpmaxud (one per 8). ATOM__CLONES on a
 * function definition asks the compiler for an AVX2 copy and a baseline copy of it; the
 * dynamic loader picks one when the library is loaded (an ifunc: calls cost what a call
 * through the PLT costs, nothing per call is tested).
 *
 * Only functions need the attribute: the static inline helpers they call (the clock kernels
 * of support/vclock.h, a checker's own) are compiled into each copy with that copy's
 * instruction set. So mark the outermost function of a hot path (an event handler, a block
 * loop), not the kernels, and keep the kernels static inline.
 *
 * The copies exist only where the toolchain builds and links them (x86-64, a compiler with
 * target_clones, a C library with ifunc: the build defines ATOM_HAVE_TARGET_CLONES after
 * linking a test program, lib/meson.build); elsewhere ATOM__CLONES is empty and the one copy
 * is the baseline. Results must not depend on the copy: the clones compute the same thing
 * and the tests run whichever the machine selects. */
#ifndef ATOM_SUPPORT_MULTIVERSION_H
#define ATOM_SUPPORT_MULTIVERSION_H

/* Not under a sanitizer that instruments function entries (ThreadSanitizer, and
 * AddressSanitizer and MemorySanitizer to be safe): the loader runs the ifunc resolver while
 * it relocates the library, before the sanitizer's runtime is set up, and the instrumented
 * resolver crashes the program at start. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer) || \
    __has_feature(memory_sanitizer)
#define ATOM__SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ATOM__SANITIZED 1
#endif

#if defined(ATOM_HAVE_TARGET_CLONES) && defined(__x86_64__) && \
    (defined(__GNUC__) || defined(__clang__)) && !defined(ATOM__SANITIZED)
#define ATOM__CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ATOM__CLONES
#endif

#endif
