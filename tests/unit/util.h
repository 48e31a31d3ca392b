/* Helpers shared by the unit suites. */
#ifndef ATOM_TEST_UTIL_H
#define ATOM_TEST_UTIL_H

#include <atomicity.h>
#include <atomicity/sys/checker.h> /* the tests write checkers of their own */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* pid_t */

/* A session with the given checker specs attached (NULL-terminated); fails the test on error. */
atom_session *tu_session(const char *const *specs);

/* Push STD text (see doc/trace-format.md) through the trace reader into s, then finish.
 * Returns 0 or the first error (parse errors fail; rejected events are counted in *rejected
 * if given). */
int tu_feed_std(atom_session *s, const char *text, uint64_t *rejected);
/* The same, the reader declaring sets by name prefix (atom_trace_reader_sets_by_prefix). */
int tu_feed_std_sets_by_prefix(atom_session *s, const char *text);

/* Smallest event index among the reports of checker index ci; -1 if it made none. */
int64_t tu_first_violation(const atom_session *s, size_t ci);

/* Number of distinct reports of checker index ci. */
size_t tu_report_count(const atom_session *s, size_t ci);

/* The NAME.std files of tests/corpus, sorted by name: at most max names (malloc'ed, free each
 * with free()) into names; returns how many. */
size_t tu_corpus_list(char **names, size_t max);

/* The contents of a file (malloc'ed, NUL-terminated; its length in *size unless size is NULL);
 * NULL if it cannot be read. */
char *tu_read_file(const char *path, size_t *size);
/* The same for a file under the source tree. */
char *tu_read_source_file(const char *relpath, size_t *size);

/* An allocator that fails once `budget` successful allocations have been made (budget < 0:
 * never fails): every later allocation too, or only that one when `once` is set. `calls`
 * counts the requests, `live` the blocks allocated and not freed (0 at the end: no leak). */
typedef struct tu_failing {
  long budget;
  long calls;
  int once;
  long live;
} tu_failing;
/* An allocator that fails request n (1-based) only; n = 0: none. */
tu_failing tu_failing_at(long n);
/* Default options whose allocator is f. */
void tu_failing_options(atom_options *o, tu_failing *f);
/* The same allocator for code below the session (lib/support). */
struct atom__allocator;
void tu_failing_allocator(struct atom__allocator *al, tu_failing *f);

/* A test checker that records every event it receives (the third-party plugin of the tests). */
typedef struct tu_recorder {
  atom_ev *events;
  size_t count, cap;
  int finished;
  int fail_on_event; /* fail on_event with fail_code when >0 and count + 1 reaches it */
  int fail_code;     /* default ATOM_ENOMEM */
  int incomplete_at; /* when >0: atom_env_incomplete at that event and every later one */
  atom_env *env;
} tu_recorder;
extern const atom_checker tu_recorder_checker; /* every kind; args: note, fail_at, fail_code,
                                                     incomplete_at */
/* The recorder attached as checker index ci (its self pointer). */
tu_recorder *tu_recorder_of(atom_session *s, size_t ci);

/* Asserts what lock_blocks=yes|no does for @p checker (commit-node, block) on fixed traces. */
void tu_check_lock_blocks_argument(const char *checker);

/* Write all of data[0..size) to fd, retrying short writes; _exit(3) on failure (it runs in
 * child processes too). */
void tu_write_fully(int fd, const char *data, size_t size);

/* A pipe whose other end a child process fills with data, in pieces of varying size so that
 * reads end at arbitrary places. Returns the read end; *child is the writer (reap it with
 * waitpid). */
int tu_pipe_from_child(const char *data, size_t size, pid_t *child);

#endif
