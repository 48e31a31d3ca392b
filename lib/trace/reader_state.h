/* The STD reader's state (internal to lib/trace): the reader, its name tables and its input
 * regions, shared by the parser and interning (std_reader.c) and the input and the reader's
 * life (reader_input.c). */
#ifndef ATOM_TRACE_READER_STATE_H
#define ATOM_TRACE_READER_STATE_H

#include <stdint.h>

#include "support/idindex.h"
#include "support/mem.h"
#include "support/u64map.h"
#include "trace/std_reader.h"

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define COLD __attribute__((noinline, cold))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define HOT_INLINE inline __attribute__((always_inline))
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#define COLD
#define PRINTF_LIKE(f, a)
#define HOT_INLINE inline
#endif

#define STREAM_CHUNK ((size_t)256 << 10)
#define MAP_WINDOW ((size_t)16 << 20)
#define ARENA_BLOCK ((size_t)64 << 10)
#define BATCH_CAP 1024
#define MAX_NAMES (UINT32_MAX - 1)
#define NAME_CACHE_BITS 12
#define NAME_CACHE ((size_t)1 << NAME_CACHE_BITS) /* entries per space */
/* The tag of a worker reader's provisional keys (name_space): final keys stay below it. */
#define ATOM__KEY_PROV ((uint32_t)1 << 31)

/* ---- name tables ----------------------------------------------------------------------- */

typedef struct name_ent {
  const char *s; /* NUL-terminated, in the arena */
  size_t len;
} name_ent;

/* The names of one space, keys 1, 2, 3, ... A name's head is its first 8 bytes as a
 * little-endian word, zero-padded. Names hold no NUL byte, so a head whose top byte is 0 is
 * the whole name of a name shorter than 8 bytes: such a name is its own 64-bit key, found in
 * one probe of `short_names` without touching the string (most names are short; a second,
 * dependent cache miss per event shows on traces with many names). Longer names go through
 * `long_names`, whose tag matches are checked against the strings. */
typedef struct name_space {
  atom__u64map short_names; /* head -> key - 1 */
  atom__idindex long_names; /* word-at-a-time hash -> key - 1 */
  name_ent *ent;            /* ent[key - 1] */
  size_t n, cap;
  /* A worker reader of the parallel reader (parallel.c) keeps its names from chunk to chunk
   * and gives the reader's final keys once it knows them: the names ent[0 .. n_final) have the
   * final keys gkey[]; a name after them has the provisional key ATOM__KEY_PROV | (index + 1)
   * until its chunk's turn settles it (atom__trace_names_settle()). A reader of its own has
   * n_final 0 and no tag: keys index + 1. */
  uint32_t *gkey;
  size_t gkey_cap, n_final;
  /* A direct-mapped cache in front of the maps, indexed by a hash of the head: most events
   * find their names here in one probe, without the maps' hashing and probing. An entry holds
   * a name's head, length and key (0: empty); a long name's tail is checked against its string
   * in ent. Filled on every lookup that missed (the last name used wins its slot). */
  struct name_cache {
    uint64_t head;
    uint32_t len, key;
  } cache[NAME_CACHE];
} name_space;

/* simd_run()'s cache of line heads (std_reader.c): the bytes of a line up to the byte after
 * its operation, "THREAD|op(" or "THREAD|op|", when they are at most 8, as a little-endian
 * word, zero-padded; with what they tell: the thread's key, the kind, whether a target follows
 * and its name table. Filled only from lines taken whole, so a match needs no other test of
 * those bytes; an empty entry's word is all ones, which no head is. Keys never change while
 * the reader's names live; atom__trace_names_clear() empties the cache with them. */
#define HEAD_CACHE_BITS 10
struct line_head {
  uint64_t word;
  struct {
    uint32_t kind, flags;
    uint64_t thread;
  } ev; /* the event's first 16 bytes (copied as one) */
  struct name_cache *target; /* the target's name table's cache, NULL: no target */
};

typedef struct arena_block {
  struct arena_block *next;
  size_t size;
  char data[];
} arena_block;

enum { SRC_MEMORY, SRC_STREAM };

struct atom_trace_reader {
  const unsigned char *pos; /* next byte to parse */
  const unsigned char *lim; /* end of the current region; lim[-1] == '\n' */
  uint64_t lineno;          /* lines started so far */
  uint64_t line;            /* line of the last event or error returned */
  int err;                  /* sticky error, or 0 */
  int src;
  int unterminated; /* the current region is a last line that had no line end */
  int started;      /* the first region was seen (and a byte order mark skipped) */
  name_space names[3];
  struct line_head heads[1 << HEAD_CACHE_BITS];

  /* progress: absolute offset of `origin` in the input */
  const unsigned char *origin;
  uint64_t base;
  uint64_t total;   /* size when known, else 0 */
  uint64_t end_off; /* real input size once known (the added '\n' is not input) */

  /* memory sources */
  const unsigned char *data;
  size_t size;
  const unsigned char *body_end; /* after the last '\n' of data */
  int stage;                     /* 0 body, 1 tail, 2 done */
  char *tail;                    /* copy of an unterminated last line, plus '\n' */
  size_t tail_size;

  /* stream sources */
  int fd;
  int own_fd;
  int eof;
  int shrink_check; /* a regular file: reading fewer than `total` bytes means it shrank */
  unsigned char *buf;
  size_t buf_cap, fill;

  uint32_t key_tag; /* ATOM__KEY_PROV in a worker reader of parallel.c, else 0 */
  int sniff;       /* the format is not known yet: told at the first read (atom__trace_sniff) */

  atom__trace_batch *batch;
  struct atom__atb *atb; /* the input is .atb (atb_reader.c), else NULL */
  atom__trace_sets *sets;
  uint64_t named[3];
  atom__trace_directive *dir; /* #name directives read so far (doc/trace-format.md) */
  size_t n_dir, dir_cap, dir_done;
  uint64_t err_line;

  arena_block *arena;
  size_t arena_used; /* in the head block */
  atom__mem mem;
  char *display;
  char msg[512];
  char detail[384]; /* msg without "display:line: " and the unterminated-line note */

  /* Reading in parallel (parallel.c): the threads asked for (0 or 1: serial), the chunk size
   * (0: the default; tests make it small), and the machinery once started. */
  unsigned threads;
  size_t chunk_size;
  uint64_t lazy_from; /* tests: 1 + the first chunk whose names the consumer maps, or 0 */
  size_t keep_names;  /* tests: 1 + the names a slot's reader keeps, or 0: the default */
  struct atom__trace_par *par;
  int par_tried;
};

/* Events of one chunk parsed by a worker (parallel.c, filled by atom__trace_parse_chunk): their
 * keys are the worker reader's, their lines counted from the chunk's start and kept as runs of
 * consecutive lines (most chunks, whose every line is an event, are one run): the events from
 * runs[k].ev up to runs[k + 1].ev are on lines runs[k].line, runs[k].line + 1, ... */
struct atom__line_run {
  uint32_t ev, line;
};
typedef struct atom__chunk_events {
  atom_event *ev;
  size_t n, cap;
  struct atom__line_run *runs;
  size_t n_runs, runs_cap;
  size_t *dir_pos; /* per directive of the worker reader: how many events precede it */
  size_t dir_cap;
} atom__chunk_events;

/* std_reader.c */
/* Parse all of w's input into out (events appended): 0 at its end, or w's error (the events
 * before it kept). */
int atom__trace_parse_chunk(atom_trace_reader *w, atom__chunk_events *out);
/* The key of name s[0..len) in space (1..3) of r, interned if new. */
int atom__trace_intern(atom_trace_reader *r, int space, const char *s, size_t len,
                       uint64_t *key);
/* Forget every name of r (a worker reader between chunks). */
void atom__trace_names_clear(atom_trace_reader *r);
/* A worker reader (key_tag set): its names from n_final on get their final keys, map[i][index
 * + 1] in space i + 1 (each below ATOM__KEY_PROV), in its tables, caches and line heads. 0, or
 * ATOM_ENOMEM (nothing settled: the caller forgets the names before the next chunk). */
int atom__trace_names_settle(atom_trace_reader *r, uint32_t *const map[3]);
/* Empty r's cache of line heads (a new reader; the names forgotten). */
void atom__trace_heads_clear(atom_trace_reader *r);

/* parallel.c */
/* Start reading in parallel if r asked for threads, nothing was read yet and the input allows
 * it (a memory buffer or a regular file). 0 (r->par set or not), or an error. */
int atom__trace_par_start(atom_trace_reader *r);
/* atom__trace_reader_fill() in parallel mode: up to n events into the (empty) batch b. */
int atom__trace_par_fill(atom_trace_reader *r, atom__trace_batch *b, size_t n);
/* Stop the workers and free the machinery. */
void atom__trace_par_free(atom_trace_reader *r);

/* reader_input.c */
/* Record error err at the current line ("display:line: message", sticky) and raise it. */
PRINTF_LIKE(3, 4) COLD int atom__trace_fail(atom_trace_reader *r, int err, const char *fmt, ...);
/* Raise the sticky error again, at the line where it happened. */
int atom__trace_reraise(atom_trace_reader *r);
/* 1 when a new input region is ready, 0 at end of input, or an error. */
COLD int atom__trace_refill(atom_trace_reader *r);
/* Tell the format of a stream from its first bytes (reading them, which may block), and hand
 * an .atb input to atb_reader.c. 0, or the error (sticky). */
COLD int atom__trace_sniff(atom_trace_reader *r);

#endif
