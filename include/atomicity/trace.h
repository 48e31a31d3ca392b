/**
 * @file atomicity/trace.h
 * @brief Trace files, STD text (RAPID-compatible) and binary .atb: reading and writing.
 *
 * Format (doc/trace-format.md): one event per line, `<thread>|<op>|<loc>`; ops r(V) w(V)
 * acq(L) rel(L) fork(T) join(T) begin end, and the extensions fence and commit(V). Lines
 * starting with '#' and blank lines are ignored; CRLF line ends are accepted.
 *
 * The binary format .atb (doc/trace-format.md, "Binary format (.atb)") holds the same events,
 * names and directives in checksummed blocks of fixed-size records. The readers tell the
 * formats apart by the first bytes (the .atb magic), the writer by the file name (a path ending
 * in ".atb"); every function below works on both.
 *
 * The reader gives every distinct name a key: 1, 2, 3, ... in order of first appearance, per
 * space (threads, variables, locks), and remembers the names.
 *
 * Thread safety: a reader or writer must be used by one thread at a time.
 * Stability: stable API and ABI.
 */
#ifndef ATOMICITY_TRACE_H
#define ATOMICITY_TRACE_H

#include "atomicity/common.h"
#include "atomicity/event.h"
#include "atomicity/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A streaming STD reader. Opaque. */
typedef struct atom_trace_reader atom_trace_reader;

/**
 * Open @p path for reading ("-" reads standard input). Files are read with read(), never
 * mapped, so a file truncated while it is read cannot crash the process: a regular file that
 * ends before the size it had at open makes atom_trace_reader_next() return ATOM_EIO
 * ("the file shrank while being read").
 * @return 0, ATOM_EINVAL, ATOM_EIO (cannot open; message in atom_last_error()), ATOM_ENOMEM.
 * @since 0.1
 */
ATOM_API int atom_trace_reader_open(atom_trace_reader **out, const char *path);

/**
 * Read from a memory buffer (not copied: it must outlive the reader). @p name is used in
 * messages ("file:line: ...").
 * @since 0.1
 */
ATOM_API int atom_trace_reader_open_memory(atom_trace_reader **out, const char *data,
                                           size_t size, const char *name);

/**
 * Parse with @p n threads (0: as many as the machine has online cores; at most 64; 1: the
 * default, one thread). Call before the first event is read. Only a buffer or a regular file is
 * read in parallel (a pipe or standard input is read with one thread whatever @p n is): the
 * input is cut at line ends into chunks that threads parse at the same time, consumed in file
 * order. Events, keys, names, "#name" directives, line numbers and errors are exactly those of
 * the one-thread reader (doc/trace-format.md, "Reading in parallel"). The worker threads start
 * at the first read and end in atom_trace_reader_free(); an input of one chunk (1 MiB) or less
 * is read with one thread. An .atb buffer or regular file is read and decoded by one thread of
 * its own with any @p n of 2 or more, while the calling thread takes the events, with the same
 * results (doc/trace-format.md, "Binary format (.atb)").
 * @param r the reader (not yet read from)
 * @param n the number of threads, 0 for one per online core
 * @return 0, or ATOM_EINVAL (NULL, or reading has started).
 * @since 0.4
 */
ATOM_API int atom_trace_reader_set_threads(atom_trace_reader *r, unsigned n);

/** Close a reader. Accepts NULL. @since 0.1 */
ATOM_API void atom_trace_reader_free(atom_trace_reader *r);

/**
 * Read the next event.
 * @return 1 and *ev on an event, 0 at end of input, ATOM_EPARSE on a malformed line
 *         (atom_last_error() says "file:line: message"; further calls return the same error),
 *         ATOM_EIO, ATOM_ENOMEM.
 * @since 0.1
 */
ATOM_API int atom_trace_reader_next(atom_trace_reader *r, atom_event *ev);

/** @return the name behind @p key in space @p what, or NULL. Valid until the reader is freed. @since 0.1 */
ATOM_API const char *atom_trace_reader_name(const atom_trace_reader *r, int what, uint64_t key);

/**
 * The @p index-th (0-based) `#name` directive read so far, in input order: what
 * atom_trace_feed() registers with atom_set_name(). A directive is read before the event that
 * follows it in the trace, so a copier that asks for new directives before writing each event
 * (and once more at the end) puts them where they were (atomcheck --convert does).
 * @param space out: an atom_space (ATOM_SPACE_LOC included)
 * @param key   out: the reader's key (the loc itself for ATOM_SPACE_LOC)
 * @param text  out: the display name, valid until the reader is freed
 * @return 1 if there is such a directive, 0 if not (or a NULL argument).
 * @since 0.4
 */
ATOM_API int atom_trace_reader_directive(const atom_trace_reader *r, size_t index, int *space,
                                         uint64_t *key, const char **text);

/**
 * The line number of the last event or error returned (1-based). For an .atb input, which
 * has no lines, it is the event's ordinal: 1 for the first event of the file, and for an error
 * the ordinal of the event that was being read.
 * @since 0.1
 */
ATOM_API uint64_t atom_trace_reader_line(const atom_trace_reader *r);

/**
 * Progress: bytes consumed so far and, when known (regular files), the total size (else 0).
 * @since 0.1
 */
ATOM_API void atom_trace_reader_progress(const atom_trace_reader *r, uint64_t *consumed,
                                         uint64_t *total);

/**
 * Load atomic sets for the variables of the trace from a text file (doc/trace-format.md,
 * "Atomic sets"): one `variable set` pair of names per line, separated by blanks; blank lines
 * and lines starting with '#' are ignored. Sets get the keys 1, 2, 3, ... in order of first
 * appearance in the file. From then on atom_trace_feed() calls atom_declare_set() for each
 * listed variable when it registers the variable's name, before its first event is pushed
 * (variables of the file that never appear in the trace are ignored). Call it once per reader,
 * before the first atom_trace_feed(). On error no set is loaded.
 * @return 0, ATOM_EINVAL (NULL argument), ATOM_EIO (cannot open or read @p path),
 *         ATOM_EPARSE (malformed line, a NUL byte, a line over 1 MiB, or a variable listed
 *         twice; atom_last_error() says "path:line: message"; the file is read line by line,
 *         so this comes at the first bad line), ATOM_ESTATE (sets already loaded, or variables already handed
 *         to a session), ATOM_ENOMEM.
 * @since 0.1
 */
ATOM_API int atom_trace_reader_load_sets(atom_trace_reader *r, const char *path);

/**
 * Put the variables of the trace in atomic sets by their names: from then on atom_trace_feed()
 * declares (atom_declare_set()) the set of a variable named `obj.field` to be the one of every
 * variable named `obj.*` (the part before the last '.'), when it registers the name, before the
 * variable's first event is pushed. A variable listed in a sets file
 * (atom_trace_reader_load_sets()) keeps the set the file gives it; one whose name has no such
 * prefix gets no declaration. Only the names read from the trace count: a display name given
 * later (atom_set_name(), a `#name` directive) never moves a variable to another set. Call it
 * before the first atom_trace_feed(); calling it again changes nothing.
 * @return 0, ATOM_EINVAL (NULL argument), ATOM_ESTATE (variables already handed to a
 *         session), ATOM_ENOMEM.
 * @since 0.4
 */
ATOM_API int atom_trace_reader_sets_by_prefix(atom_trace_reader *r);

/** Called by atom_trace_feed() for each event the session rejected. Return non-zero to stop. */
typedef int (*atom_trace_reject_fn)(const atom_trace_reader *r, int err, const char *message,
                                    void *payload);

/**
 * Read up to @p max_events events (0 = all) from @p r into @p s, registering names with
 * atom_set_name() as they appear. Ill-formed events are dropped by the session; each is
 * passed to @p on_reject (may be NULL) with the message prefixed by "file:line: ".
 * @param pushed out (may be NULL): events pushed by this call
 * @return 1 if events remain, 0 at end of input, or a negative code: a parse error
 *         (ATOM_EPARSE), ATOM_ECALLBACK if @p on_reject asked to stop, ATOM_ENOMEM, ...
 * @since 0.1
 */
ATOM_API int atom_trace_feed(atom_session *s, atom_trace_reader *r, uint64_t max_events,
                             uint64_t *pushed, atom_trace_reject_fn on_reject, void *payload);

/** A STD writer. Opaque. */
typedef struct atom_trace_writer atom_trace_writer;

/**
 * Create @p path ("-" = standard output) for writing. A path ending in ".atb" is written in
 * the binary format (since 0.4; doc/trace-format.md), anything else as STD text. In .atb the
 * keys of the caller become the file keys 1, 2, 3, ... in order of first use, each with its
 * name (atom_trace_writer_set_name(), else T<key>, V<key>, L<key>), so the file reads back
 * with the keys and names a STD copy gives; a loc must be below 2^56 there (ATOM_EINVAL).
 * @return 0, ATOM_EINVAL, ATOM_EIO, ATOM_ENOMEM.
 * @since 0.1
 */
ATOM_API int atom_trace_writer_open(atom_trace_writer **out, const char *path);

/**
 * Name @p key of space @p what in the output; keys without a name are written as
 * T<key>, V<key>, L<key> (decimal). Names must be non-empty and free of '|', '(', ')',
 * white space and '#' at the start.
 * @return 0, ATOM_EINVAL, ATOM_ENOMEM.
 * @since 0.1
 */
ATOM_API int atom_trace_writer_set_name(atom_trace_writer *w, int what, uint64_t key,
                                        const char *name);

/**
 * Write a `#name` directive (doc/trace-format.md): readers of the trace register @p text as the
 * name of @p key in space @p what (an atom_space, ATOM_SPACE_LOC included) for the events that
 * follow and precede it, so that a trace is self-describing from its first lines. The key is
 * written as events write it (its writer name, T<key>, V<key>, L<key>; the decimal loc).
 * @p text is free text (spaces allowed) without control bytes, not starting or ending with a
 * space, at most 65536 bytes. Plain `#` comments stay comments for every reader.
 * @return 0, ATOM_EINVAL, ATOM_EIO.
 * @since 0.2
 */
ATOM_API int atom_trace_writer_write_name(atom_trace_writer *w, int what, uint64_t key,
                                          const char *text);

/**
 * Write one event. A READ with ATOM_FLAG_ACQUIRE is written `r.acq(V)`, a WRITE with
 * ATOM_FLAG_RELEASE `w.rel(V)` (since 0.2).
 * @return 0, ATOM_EINVAL (bad kind, or flags other than those two), ATOM_EIO.
 * @since 0.1
 */
ATOM_API int atom_trace_writer_write(atom_trace_writer *w, const atom_event *ev);

/** Flush and close; @return 0 or ATOM_EIO if anything failed to be written. Accepts NULL. @since 0.1 */
ATOM_API int atom_trace_writer_close(atom_trace_writer *w);

#ifdef __cplusplus
}
#endif
#endif
