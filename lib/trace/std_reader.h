/* Internal side of the STD reader, shared with atom_trace_feed() (lib/trace/feed.c). */
#ifndef ATOM_TRACE_STD_READER_H
#define ATOM_TRACE_STD_READER_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/trace.h"

/* The longest line accepted, not counting its LF or CR LF (doc/trace-format.md). */
#define ATOM__TRACE_MAX_LINE ((size_t)1 << 20)
/* The longest #name key and set-file name (a name inside an event line is bounded by the line). */
#define ATOM__TRACE_MAX_NAME ((size_t)1 << 16)

/* NULL if s[0..n) is a valid name (doc/trace-format.md: non-empty, no '|', '(', ')', white space
 * or control bytes, not starting with '#'), else a short reason. */
const char *atom__trace_name_problem(const char *s, size_t n);
/* Why s[0..n) cannot be the TEXT of a "#name" directive (STD or .atb, and what the writers
 * write): empty, longer than ATOM__TRACE_MAX_NAME, a control byte other than a tab, a leading
 * or trailing blank; NULL if it can. */
const char *atom__trace_text_problem(const char *s, size_t n);
/* The same rules without the length bound (names inside event lines, bounded by the line). */
const char *atom__trace_name_chars_problem(const char *s, size_t n);

/* Events read ahead by atom_trace_feed(). It lives in the reader so that events read but not
 * yet pushed (the feed stopped on a callback or a session error) are not lost: the next feed
 * call, or atom_trace_reader_next(), returns them first. */
typedef struct atom__trace_batch {
  atom_event *ev;
  uint64_t *line; /* line of each event, for messages */
  size_t head;    /* next event to hand out */
  size_t count;   /* events held: [head, count) are pending */
  size_t cap;
  /* The batch's own event array while `ev` points into a chunk of the parallel reader (lent
   * by parallel.c until its next fill, which takes it back; the chunk is not reused before),
   * else NULL. */
  atom_event *own_ev;
} atom__trace_batch;

/* The reader's batch, allocated on first use; NULL (with the message set) when out of memory. */
atom__trace_batch *atom__trace_reader_batch(atom_trace_reader *r);

/* Refill the (empty) batch with up to min(max, cap) events. Returns 0, or the reader's error
 * (events parsed before the error stay in the batch and must be consumed first; the error is
 * sticky and comes back on the next call). */
int atom__trace_reader_fill(atom_trace_reader *r, size_t max);

/* Reading in parallel (lib/trace/parallel.c): at most this many threads. */
#define ATOM__TRACE_MAX_THREADS 64u
/* The size of the chunks the input is cut into when read in parallel (0: the default, 256 KiB);
 * for tests, which make it small to cut small inputs into many chunks. */
void atom__trace_reader_set_chunk(atom_trace_reader *r, size_t size);
/* For tests: the chunks from number `from` on (0-based) have their names mapped by the
 * consumer, as after a failure of the workers' shared name table (parallel.c); by default
 * every chunk's names are mapped in the workers. */
void atom__trace_reader_set_lazy_names(atom_trace_reader *r, uint64_t from);

/* For tests: the slots of the parallel reader forget their names before a chunk once they hold
 * more than `n` (by default about 2^20 over all the slots, see parallel.c). */
void atom__trace_reader_set_keep_names(atom_trace_reader *r, size_t n);

/* Names known to the reader in space `what` (1..3): keys 1..n. Every event a reader has
 * delivered has keys within them, which atom_trace_feed vouches for to the session
 * (atom__push_many_bounded): an .atb reader checks every record against its name tables; an
 * STD reader gives each name the next key as it meets it, and the parallel reader's consumer
 * learns every name of a chunk's events before they enter the batch (parallel.c,
 * copy_mapped). */
uint64_t atom__trace_reader_name_count(const atom_trace_reader *r, int what);

/* Per space (index what-1): names already handed to a session by atom_trace_feed(). */
uint64_t *atom__trace_reader_named(atom_trace_reader *r);

/* A "#name" directive of the input: the display name `text` of `key` in `space` (1..4). */
typedef struct atom__trace_directive {
  int space;
  uint64_t key;
  char *text;
} atom__trace_directive;

/* The directives read so far (*n of them); *done: how many atom_trace_feed() registered. */
const atom__trace_directive *atom__trace_reader_directives(atom_trace_reader *r, size_t *n,
                                                           size_t **done);

/* The name used in messages ("path", "<stdin>", the name given to open_memory). */
const char *atom__trace_reader_display(const atom_trace_reader *r);

/* Set the line returned by atom_trace_reader_line() (feed: the line of the event pushed). */
void atom__trace_reader_set_line(atom_trace_reader *r, uint64_t line);

/* Raise the reader's sticky error again (message included); 0 if there is none. */
int atom__trace_reader_error(const atom_trace_reader *r);

/* Atomic sets: a sets file (atom_trace_reader_load_sets) and the name-prefix policy
 * (atom_trace_reader_sets_by_prefix), lib/trace/sets.c. */
typedef struct atom__trace_sets atom__trace_sets;

/* The reader's sets (NULL until loaded) and its allocator. */
atom__trace_sets **atom__trace_reader_sets(atom_trace_reader *r);
struct atom__mem *atom__trace_reader_mem(atom_trace_reader *r);

/* 1 and *set (its key) if variable name `var` is in a set: listed in the sets file, else (by
 * prefix) the set of its prefix, made at its first use from mem; 0 if it is in none;
 * ATOM_ENOMEM or ATOM_ELIMIT. */
int atom__trace_sets_lookup(atom__trace_sets *t, struct atom__mem *mem, const char *var,
                            uint64_t *set);
void atom__trace_sets_free(atom__trace_sets *t, struct atom__mem *mem);

#endif
