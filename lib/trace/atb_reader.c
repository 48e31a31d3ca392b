/* The .atb reader (doc/trace-format.md, "Binary format (.atb)"; layout in atb_format.h).
 *
 * It lives inside an atom_trace_reader: reader_input.c detects the magic and hands the input
 * here, and the reader's batch, sticky error, message and #name directives are shared with the
 * STD side, so atom_trace_feed() and every accessor work unchanged. Blocks are read whole
 * (from memory, or from a file or pipe into a buffer that grows to the largest block), their
 * checksum checked before any byte of them is used, and records decoded straight into the
 * batch; every key, kind and flag is checked, so no input can make the reader read out of
 * bounds or hand the session an event the STD reader could not have produced. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomicity/error.h"
#include "core/error.h"
#include "support/checksum.h"
#include "support/mem.h"
#include "trace/atb_format.h"
#include "trace/reader_state.h"

#define ATB_READ_CHUNK ((size_t)1 << 20)
/* Events of one hand-off of the reading thread: a batch's, so that a whole hand-off is given
 * to the batch by swapping arrays, not copied. */
#define PIPE_EVENTS BATCH_CAP
#define PIPE_SLOTS 16
/* A side that finds nothing to do sleeps until PIPE_WAKE hand-offs are ready for it (or the
 * input ended): a sleep and a wake-up are system calls, about as long as a hand-off's work,
 * and waking the other side at every hand-off made one of each per hand-off. */
#define PIPE_WAKE (PIPE_SLOTS / 2)
/* Before it sleeps, the consumer waits this many rounds of a pause for the next hand-off:
 * a pause is 10 to 140 cycles by processor, so at most some tens of microseconds, about a
 * hand-off's decoding, less than a wake-up on a busy machine. */
#define PIPE_SPIN 1024

static inline void cpu_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct atb_pipe;
static int pipe_start(atom_trace_reader *r);
static int pipe_fill_batch(atom_trace_reader *r, size_t max);

typedef struct atb_space {
  name_ent *ent; /* ent[key - 1]; strings allocated from the reader's mem, len + 1 bytes */
  size_t n, cap;
} atb_space;

struct atom__atb {
  /* input: data[at..avail) is read and not yet consumed; data[0] is at offset `base` */
  const unsigned char *data;
  size_t avail, at;
  uint64_t base, total;
  int fd; /* -1 for memory */
  int eof;
  unsigned char *buf; /* stream buffer (data == buf), buf_cap bytes */
  size_t buf_cap;

  int header_done, ended;
  const unsigned char *rec; /* next event record of the current block */
  uint32_t left;            /* records left in it */
  uint32_t block_events;    /* records of the current block */
  uint64_t block_no;        /* blocks started (1-based number of the current one) */
  uint64_t block_off;       /* file offset of the current block */
  uint64_t ordinal;         /* events returned */
  atb_space names[3];
  /* Directives of the current block not yet reached: each comes before record pos[i] of the
   * block, and joins the reader's directives (r->dir, what feed and
   * atom_trace_reader_directive see) when the reading gets there, so that a copy puts it where
   * it was. texts are owned here until then. */
  atom__trace_directive *pend;
  uint32_t *pend_pos;
  size_t pend_n, pend_at, pend_cap;
  /* A fill returns before publishing a directive when it has events already, so that every
   * directive comes first in its batch (the reading thread's hand-offs). */
  int dir_first;
  /* The record's top byte (kind in the low 4 bits, flags in the high 4) -> 0 if the pair is
   * invalid, else 1 + the space of the kind's target (0: none): the fill's checks of kind and
   * flags in one load (set at open from atb_target_space and atb_allowed_flag). */
  unsigned char kf_class[256];
  /* The same byte -> the first 8 bytes of its atom_event (kind, flags), for a valid pair. */
  uint64_t kf_word[256];
  /* Reading in a thread of its own (with -j 2 or more): NULL when not (yet) started. */
  struct atb_pipe *pipe;
  int pipe_tried;
};

/* Record error `err` for reader r: "display: where: message", sticky, at the event ordinal
 * that was being read. */
PRINTF_LIKE(3, 4) COLD static int fail(atom_trace_reader *r, int err, const char *fmt, ...) {
  char detail[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  snprintf(r->msg, sizeof r->msg, "%s: %s", r->display, detail);
  r->err = err;
  r->err_line = r->line = r->atb->ordinal + 1;
  return atom__error(err, "%s", r->msg);
}

/* 1 when at least n bytes are available at data + at, 0 at end of input with fewer, or an
 * error. Stream buffers move: pointers into them are invalid after a call. */
static int ensure(atom_trace_reader *r, size_t n) {
  struct atom__atb *a = r->atb;
  while (a->avail - a->at < n) {
    if (a->fd < 0 || a->eof) return 0;
    if (a->at) {
      memmove(a->buf, a->buf + a->at, a->avail - a->at);
      a->avail -= a->at;
      a->base += a->at;
      a->at = 0;
    }
    if (a->buf_cap - a->avail < ATB_READ_CHUNK / 2 || a->buf_cap < n) {
      size_t ncap = a->buf_cap * 2;
      while (ncap < n + ATB_READ_CHUNK) ncap *= 2;
      unsigned char *nb = atom__mem_realloc(&r->mem, a->buf, a->buf_cap, ncap);
      if (!nb) return fail(r, ATOM_ENOMEM, "out of memory");
      a->buf = nb;
      a->buf_cap = ncap;
      a->data = nb;
    }
    ssize_t k = read(a->fd, a->buf + a->avail, a->buf_cap - a->avail);
    if (k < 0) {
      if (errno == EINTR) continue;
      return fail(r, ATOM_EIO, "read error: %s", strerror(errno));
    }
    if (k == 0) {
      a->eof = 1;
      if (a->total && a->base + a->avail < a->total)
        return fail(r, ATOM_EIO,
                    "the file shrank while being read (%" PRIu64 " bytes read of %" PRIu64 ")",
                    a->base + a->avail, a->total);
    }
    a->avail += (size_t)k;
  }
  return 1;
}

static int read_header(atom_trace_reader *r) {
  struct atom__atb *a = r->atb;
  int rc = ensure(r, ATB_HEADER_SIZE);
  if (rc < 0) return rc;
  if (rc == 0)
    return fail(r, ATOM_EPARSE, "truncated .atb header (%zu of %d bytes)", a->avail - a->at,
                ATB_HEADER_SIZE);
  const unsigned char *p = a->data + a->at;
  if (memcmp(p, ATB_MAGIC, ATB_MAGIC_LEN) != 0)
    return fail(r, ATOM_EPARSE, "bad .atb magic (the file was changed by a text transfer?)");
  uint32_t version = atom__load_le32(p + 8), flags = atom__load_le32(p + 12);
  if (version != ATB_VERSION)
    return fail(r, ATOM_EPARSE, ".atb version %" PRIu32 " is not supported (this reader reads %u)",
                version, ATB_VERSION);
  if (flags) return fail(r, ATOM_EPARSE, "unknown .atb header flags 0x%" PRIx32, flags);
  a->at += ATB_HEADER_SIZE;
  a->header_done = 1;
  return 0;
}

static int add_name(atom_trace_reader *r, atb_space *t, const unsigned char *s, size_t len) {
  if (t->n >= ATB_MAX_KEY) return fail(r, ATOM_ELIMIT, "block %" PRIu64 ": too many names",
                                       r->atb->block_no);
  char *copy = atom__mem_alloc(&r->mem, len + 1);
  if (!copy || ATOM__GROW(&r->mem, t->ent, t->cap, t->n + 1)) {
    atom__mem_free(&r->mem, copy, len + 1);
    return fail(r, ATOM_ENOMEM, "out of memory");
  }
  memcpy(copy, s, len);
  copy[len] = '\0';
  t->ent[t->n++] = (name_ent){copy, len};
  return 0;
}

static int add_directive(atom_trace_reader *r, int space, uint64_t key, const unsigned char *s,
                         size_t len, uint32_t pos) {
  struct atom__atb *a = r->atb;
  size_t cap = a->pend_cap;
  char *text = atom__mem_alloc(&r->mem, len + 1);
  if (!text || ATOM__GROW(&r->mem, a->pend, cap, a->pend_n + 1) ||
      ATOM__GROW(&r->mem, a->pend_pos, a->pend_cap, a->pend_n + 1)) {
    atom__mem_free(&r->mem, text, len + 1);
    return fail(r, ATOM_ENOMEM, "out of memory");
  }
  memcpy(text, s, len);
  text[len] = '\0';
  a->pend[a->pend_n] = (atom__trace_directive){space, key, text};
  a->pend_pos[a->pend_n++] = pos;
  return 0;
}

/* Hand the pending directives placed before record `at` of the block (or before) to the
 * reader. */
static int publish(atom_trace_reader *r, uint64_t at) {
  struct atom__atb *a = r->atb;
  for (; a->pend_at < a->pend_n && a->pend_pos[a->pend_at] <= at; a->pend_at++) {
    if (ATOM__GROW(&r->mem, r->dir, r->dir_cap, r->n_dir + 1))
      return fail(r, ATOM_ENOMEM, "out of memory");
    r->dir[r->n_dir++] = a->pend[a->pend_at];
  }
  if (a->pend_at == a->pend_n) a->pend_at = a->pend_n = 0;
  return 0;
}

/* The name entries of the current block, p[0..size). */
static int read_entries(atom_trace_reader *r, const unsigned char *p, size_t size,
                        uint32_t n_events) {
  struct atom__atb *a = r->atb;
  uint32_t last_pos = 0;
  const unsigned char *end = p + size;
  while (p < end) {
    if (*p == 0) { /* padding to a multiple of 8: zero bytes to the end */
      for (; p < end; p++)
        if (*p)
          return fail(r, ATOM_EPARSE, "block %" PRIu64 ": non-zero padding after its names",
                      a->block_no);
      return 0;
    }
    uint64_t off = a->block_off + ATB_BLOCK_HEADER + (uint64_t)(p - (end - size));
    if ((size_t)(end - p) < ATB_ENTRY_HEADER)
      return fail(r, ATOM_EPARSE, "block %" PRIu64 ": name entry at byte %" PRIu64
                  " overruns its block", a->block_no, off);
    unsigned what = p[0], space = p[1];
    uint32_t pos = (uint32_t)p[2] | (uint32_t)p[3] << 8; /* directives: before record pos */
    size_t len = atom__load_le32(p + 4);
    uint64_t key = atom__load_le64(p + 8);
    const unsigned char *s = p + ATB_ENTRY_HEADER;
    if (len > (size_t)(end - s))
      return fail(r, ATOM_EPARSE, "block %" PRIu64 ": name entry at byte %" PRIu64
                  " overruns its block", a->block_no, off);
    if (what == ATB_ENTRY_NAME && space >= ATOM_SPACE_THREAD && space <= ATOM_SPACE_LOCK && !pos) {
      atb_space *t = &a->names[space - 1];
      const char *why = len > ATOM__TRACE_MAX_LINE
                            ? "name too long"
                            : atom__trace_name_chars_problem((const char *)s, len);
      if (why)
        return fail(r, ATOM_EPARSE, "block %" PRIu64 ": name entry at byte %" PRIu64 ": %s",
                    a->block_no, off, why);
      if (key != t->n + 1)
        return fail(r, ATOM_EPARSE, "block %" PRIu64 ": name entry at byte %" PRIu64
                    " gives key %" PRIu64 ", expected %zu", a->block_no, off, key, t->n + 1);
      int rc = add_name(r, t, s, len);
      if (rc) return rc;
    } else if (what == ATB_ENTRY_DIRECTIVE && space >= ATOM_SPACE_THREAD &&
               space <= ATOM_SPACE_LOC) {
      const char *why = atom__trace_text_problem((const char *)s, len);
      if (!why && space != ATOM_SPACE_LOC && (key == 0 || key > a->names[space - 1].n))
        why = "key out of range";
      if (!why && (pos > n_events || pos < last_pos)) why = "position out of order";
      if (why)
        return fail(r, ATOM_EPARSE, "block %" PRIu64 ": directive at byte %" PRIu64 ": %s",
                    a->block_no, off, why);
      int rc = add_directive(r, (int)space, key, s, len, pos);
      if (rc) return rc;
      last_pos = pos;
    } else if (what == ATB_ENTRY_NAME && pos) {
      return fail(r, ATOM_EPARSE, "block %" PRIu64 ": name entry at byte %" PRIu64
                  " has a position", a->block_no, off);
    } else {
      return fail(r, ATOM_EPARSE, "block %" PRIu64 ": unknown name entry %u/%u at byte %" PRIu64,
                  a->block_no, what, space, off);
    }
    p = s + len;
  }
  return 0;
}

/* Start the next block. 1 when it has events, 0 at the end block, or an error. */
COLD static int next_block(atom_trace_reader *r) {
  struct atom__atb *a = r->atb;
  for (;;) {
    int rc = publish(r, UINT64_MAX); /* those after the last record of the block before */
    if (rc) return rc;
    if (a->ended) return 0;
    if (!a->header_done) {
      rc = read_header(r);
      if (rc) return rc;
    }
    a->block_off = a->base + a->at;
    a->block_no++;
    rc = ensure(r, ATB_BLOCK_HEADER);
    if (rc < 0) return rc;
    if (rc == 0) {
      if (a->avail == a->at)
        return fail(r, ATOM_EPARSE, "truncated: the end block is missing (at byte %" PRIu64
                    ", after %" PRIu64 " blocks)", a->block_off, a->block_no - 1);
      return fail(r, ATOM_EPARSE, "truncated: block %" PRIu64 " at byte %" PRIu64
                  " has %zu of %d header bytes", a->block_no, a->block_off, a->avail - a->at,
                  ATB_BLOCK_HEADER);
    }
    const unsigned char *p = a->data + a->at;
    uint32_t type = atom__load_le32(p), sum = atom__load_le32(p + 4);
    uint32_t names_size = atom__load_le32(p + 8), n_events = atom__load_le32(p + 12);
    if (type != ATB_BLOCK_DATA && type != ATB_BLOCK_END)
      return fail(r, ATOM_EPARSE, "block %" PRIu64 " at byte %" PRIu64
                  ": unknown block type %" PRIu32, a->block_no, a->block_off, type);
    if (names_size > ATB_MAX_NAMES_SIZE || names_size % 8 || n_events > ATB_MAX_EVENTS ||
        (type == ATB_BLOCK_END && (names_size || n_events)))
      return fail(r, ATOM_EPARSE, "block %" PRIu64 " at byte %" PRIu64
                  ": bad sizes (%" PRIu32 " bytes of names, %" PRIu32 " events)", a->block_no,
                  a->block_off, names_size, n_events);
    size_t payload = (size_t)names_size + (size_t)n_events * ATB_RECORD;
    rc = ensure(r, ATB_BLOCK_HEADER + payload);
    if (rc < 0) return rc;
    if (rc == 0)
      return fail(r, ATOM_EPARSE, "truncated: block %" PRIu64 " at byte %" PRIu64
                  " has %zu of %zu bytes", a->block_no, a->block_off, a->avail - a->at,
                  ATB_BLOCK_HEADER + payload);
    p = a->data + a->at;
    if (atom__checksum32(type, p + 8, 8 + payload) != sum)
      return fail(r, ATOM_EPARSE, "block %" PRIu64 " at byte %" PRIu64
                  ": checksum mismatch (the file is corrupt)", a->block_no, a->block_off);
    a->at += ATB_BLOCK_HEADER + payload;
    if (type == ATB_BLOCK_END) {
      rc = ensure(r, 1);
      if (rc < 0) return rc;
      if (rc)
        return fail(r, ATOM_EPARSE, "data after the end block (at byte %" PRIu64 ")",
                    a->base + a->at);
      a->ended = 1;
      return 0;
    }
    rc = read_entries(r, p + ATB_BLOCK_HEADER, names_size, n_events);
    if (rc) return rc;
    a->rec = p + ATB_BLOCK_HEADER + names_size;
    a->left = a->block_events = n_events;
    if (n_events) return 1;
  }
}

COLD static int bad_event(atom_trace_reader *r, const char *why, uint64_t value) {
  return fail(r, ATOM_EPARSE, "event %" PRIu64 " (block %" PRIu64 "): %s (%" PRIu64 ")",
              r->atb->ordinal + 1, r->atb->block_no, why, value);
}

/* Decode the next record of the current block (a->left > 0). 1, or an error. */
static inline int decode(atom_trace_reader *r, atom_event *ev) {
  struct atom__atb *a = r->atb;
  const unsigned char *p = a->rec;
  uint32_t thread = atom__load_le32(p), target = atom__load_le32(p + 4);
  uint64_t w = atom__load_le64(p + 8);
  uint32_t kind = (uint32_t)(w >> 56) & 15, flags = (uint32_t)(w >> 60);
  if (UNLIKELY(kind - 1 >= ATOM_COMMIT)) return bad_event(r, "unknown event kind", kind);
  if (UNLIKELY(thread - 1 >= a->names[0].n)) return bad_event(r, "thread key out of range", thread);
  unsigned sp = atb_target_space[kind];
  if (UNLIKELY(sp ? target - 1 >= a->names[sp - 1].n : target != 0))
    return bad_event(r, sp ? "target key out of range" : "target given to an event without one",
                     target);
  if (UNLIKELY(flags) && !(kind == ATOM_READ && flags == ATOM_FLAG_ACQUIRE) &&
      !(kind == ATOM_WRITE && flags == ATOM_FLAG_RELEASE))
    return bad_event(r, "invalid flags", flags);
  ev->kind = kind;
  ev->flags = flags;
  ev->thread = thread;
  ev->target = target;
  ev->loc = w & ATB_LOC_MASK;
  a->rec = p + ATB_RECORD;
  a->left--;
  r->line = ++a->ordinal;
  return 1;
}

int atom__atb_next(atom_trace_reader *r, atom_event *ev) {
  if (r->err) return atom__trace_reraise(r);
  struct atom__atb *a = r->atb;
  if (r->threads > 1 && !a->pipe_tried) {
    int rc = pipe_start(r);
    if (rc) return rc;
  }
  if (a->pipe) { /* through the batch: the reading thread reads ahead */
    atom__trace_batch *b = atom__trace_reader_batch(r);
    if (!b) return ATOM_ENOMEM;
    int rc = atom__trace_reader_fill(r, 0);
    if (b->head < b->count) {
      *ev = b->ev[b->head];
      r->line = b->line[b->head++];
      return 1;
    }
    return rc;
  }
  if (a->left == 0) {
    int rc = next_block(r);
    if (rc <= 0) return rc;
  }
  if (a->pend_n) {
    int rc = publish(r, a->block_events - a->left);
    if (rc) return rc;
  }
  return decode(r, ev);
}

int atom__atb_fill(atom_trace_reader *r, size_t max) {
  atom__trace_batch *b = r->batch;
  struct atom__atb *a = r->atb;
  if (r->threads > 1 && !a->pipe_tried) {
    int rc = pipe_start(r);
    if (rc) return rc;
  }
  if (a->pipe) return pipe_fill_batch(r, max);
  while (b->count < max) {
    if (a->left == 0) {
      if (a->dir_first && b->count && a->pend_at < a->pend_n) return 0;
      int rc = next_block(r);
      if (rc <= 0) return rc;
    }
    size_t n = max - b->count;
    if (n > a->left) n = a->left;
    if (UNLIKELY(a->pend_n)) { /* stop at the next directive's place */
      uint32_t at = a->block_events - a->left;
      if (a->dir_first && b->count && a->pend_pos[a->pend_at] <= at) return 0;
      int rc = publish(r, at);
      if (rc) return rc;
      if (a->pend_n && n > a->pend_pos[a->pend_at] - at) n = a->pend_pos[a->pend_at] - at;
    }
    /* The hot loop: the state in locals (stores through ev could alias the reader's fields),
     * every check folded into one branch; a bad record stops it and decode() says why. */
    const unsigned char *p = a->rec;
    atom_event *ev = b->ev + b->count;
    uint64_t *line = b->line + b->count;
    uint64_t ord = a->ordinal;
    /* By the record's class c (kf_class): a good target is one with
     * target - tbase[c] < trange[c] in 32 bits: c 0 (a bad kind or flags) none, c 1 (a kind
     * without target) 0 only, else 1 .. the names of the space (a key 0 wraps: names count
     * at most ATB_MAX_KEY < 2^32 - 1). */
    const uint32_t thread_n = (uint32_t)a->names[0].n;
    const uint32_t tbase[5] = {0, 0, 1, 1, 1};
    const uint32_t trange[5] = {0, 1, (uint32_t)a->names[0].n, (uint32_t)a->names[1].n,
                                (uint32_t)a->names[2].n};
    const unsigned char *const kf_class = a->kf_class;
    const uint64_t *const kf_word = a->kf_word;
    size_t i = 0;
    for (; i < n; i++, p += ATB_RECORD) {
      uint32_t thread = atom__load_le32(p), target = atom__load_le32(p + 4);
      uint64_t w = atom__load_le64(p + 8);
      unsigned c = kf_class[w >> 56];
      int bad = (thread - 1u >= thread_n) | (target - tbase[c] >= trange[c]);
      if (UNLIKELY(bad)) break;
      memcpy(&ev[i], &kf_word[w >> 56], sizeof kf_word[0]); /* kind and flags */
      ev[i].thread = thread;
      ev[i].target = target;
      ev[i].loc = w & ATB_LOC_MASK;
      line[i] = ord + i + 1;
    }
    a->rec = p;
    a->left -= (uint32_t)i;
    a->ordinal = ord + i;
    b->count += i;
    if (i) r->line = a->ordinal;
    if (UNLIKELY(i < n)) { /* decode() makes the error message */
      int rc = decode(r, &b->ev[b->count]);
      if (rc != 1) return rc;
      b->line[b->count++] = a->ordinal;
    }
  }
  return 0;
}

/* ---- reading in a thread of its own ------------------------------------------------------
 *
 * With atom_trace_reader_set_threads(r, n >= 2), a thread reads the input (a buffer or a
 * regular file), checks the blocks
 * and decodes the events with a private reader `w` of its own (the code above), while the
 * thread calling atom_trace_feed() pushes the events of the hand-offs before. A hand-off is up
 * to PIPE_EVENTS events, the names the blocks read for them defined and the directives placed
 * before them (w's fills stop at directives: dir_first), and, at the end of the input or at an
 * error, how it ended. The consumer adds the names to r's tables (what
 * atom_trace_reader_name() shows), the directives to r's list, and raises w's error with its
 * message and ordinal once every event before it is delivered: what the serial reading does,
 * the same events, keys, names, directives and errors. */

typedef struct pipe_name {
  int space;
  const char *s; /* w's string: it outlives the hand-off */
  size_t len;
} pipe_name;

typedef struct pipe_slot {
  atom__trace_batch b;    /* the events (w->batch while it is filled) */
  pipe_name *names;       /* the names defined for them, in key order per space */
  size_t n_names, names_cap;
  atom__trace_directive *dir; /* before the events; texts are w's */
  size_t n_dir, dir_cap;
  int rc;       /* 0, 1: the end of the input after the events, or w's error */
  int err;
  uint64_t err_line;
  char msg[512];
  uint64_t consumed, total; /* progress after the events */
} pipe_slot;

/* The hand-offs go round the slots without the mutex: `filled` and `used` count them on each
 * side, and each side publishes its count (filled_seen, used_seen: release, with the slot's
 * contents before it) for the other to read (acquire). The mutex and the condition variables
 * serve only to sleep: a side about to sleep says so (reader_waits, consumer_waits), then
 * looks at the other's count again before it sleeps; a side that publishes a count then
 * looks at the other's flag, and wakes it under the mutex if the other's condition now
 * holds. Every one of these accesses is sequentially consistent, so that one of the two sees
 * the other's store: no wake-up is lost. */
typedef struct atb_pipe {
  pthread_mutex_t mu;
  pthread_cond_t filled_cv; /* the consumer may go on (hand-offs filled, the end) */
  pthread_cond_t freed_cv;  /* the reading thread may go on (slots freed, stop) */
  atomic_int consumer_waits, reader_waits; /* about to sleep, or asleep, on filled_cv, freed_cv */
  atomic_int reader_done;                  /* the reading thread filled its last hand-off */
  atomic_int stop;
  pthread_t th;
  atom_trace_reader *w;
  pipe_slot slot[PIPE_SLOTS];
  uint64_t filled, used;   /* the reading thread's count of hand-offs filled, the consumer's
                            * of hand-offs taken back */
  atomic_uint_fast64_t filled_seen, used_seen; /* the same, published */
  pipe_slot *cur;          /* the consumer's hand-off, or NULL */
  int ended;               /* the consumer reached the end */
  uint64_t consumed, total;
} atb_pipe;

/* Fill one hand-off from w (the reading thread). */
static void pipe_fill(atom_trace_reader *w, pipe_slot *sl) {
  struct atom__atb *a = w->atb;
  size_t before[3], dirs = w->n_dir;
  for (int i = 0; i < 3; i++) before[i] = a->names[i].n;
  sl->b.head = sl->b.count = 0;
  sl->n_names = sl->n_dir = 0;
  w->batch = &sl->b;
  int rc = atom__atb_fill(w, sl->b.cap);
  w->batch = NULL;
  if (rc == 0 && a->ended) rc = 1; /* else it stopped at the cap or before a directive */
  /* What the fill learnt, also before an error (the serial reading has it then too). */
  int oom = 0;
  for (int i = 0; i < 3 && !oom; i++)
    for (size_t k = before[i]; k < a->names[i].n && !oom; k++) {
      if ((oom = ATOM__GROW(&w->mem, sl->names, sl->names_cap, sl->n_names + 1) != 0)) break;
      sl->names[sl->n_names++] = (pipe_name){i + 1, a->names[i].ent[k].s, a->names[i].ent[k].len};
    }
  for (size_t k = dirs; k < w->n_dir && !oom; k++) {
    if ((oom = ATOM__GROW(&w->mem, sl->dir, sl->dir_cap, sl->n_dir + 1) != 0)) break;
    sl->dir[sl->n_dir++] = w->dir[k];
  }
  if (oom) rc = w->err ? w->err : fail(w, ATOM_ENOMEM, "out of memory");
  sl->rc = rc;
  if (rc < 0) {
    sl->err = w->err;
    sl->err_line = w->err_line;
    memcpy(sl->msg, w->msg, sizeof sl->msg);
  }
  atom__atb_progress(w, &sl->consumed, &sl->total);
}

static void *pipe_main(void *arg) {
  atb_pipe *p = arg;
  for (;;) {
    if (atomic_load(&p->stop)) break;
    if (p->filled >= atomic_load(&p->used_seen) + PIPE_SLOTS) { /* full: sleep */
      pthread_mutex_lock(&p->mu);
      atomic_store(&p->reader_waits, 1);
      while (!atomic_load(&p->stop) &&
             p->filled + PIPE_WAKE > atomic_load(&p->used_seen) + PIPE_SLOTS)
        pthread_cond_wait(&p->freed_cv, &p->mu);
      atomic_store(&p->reader_waits, 0);
      pthread_mutex_unlock(&p->mu);
      continue;
    }
    pipe_slot *sl = &p->slot[p->filled % PIPE_SLOTS];
    pipe_fill(p->w, sl);
    int last = sl->rc != 0; /* the end, or an error: nothing more to read */
    if (last) atomic_store(&p->reader_done, 1);
    atomic_store(&p->filled_seen, ++p->filled);
    if (atomic_load(&p->consumer_waits) &&
        (last || p->filled >= atomic_load(&p->used_seen) + PIPE_WAKE)) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->filled_cv);
      pthread_mutex_unlock(&p->mu);
    }
    if (last) break;
  }
  return NULL;
}

/* The slots' event arrays are r's (mem), as they trade places with r's batch's. */
static void pipe_release(atb_pipe *p, atom__mem *mem) {
  atom_trace_reader *w = p->w;
  for (int i = 0; i < PIPE_SLOTS; i++) {
    pipe_slot *sl = &p->slot[i];
    atom__mem_free(mem, sl->b.ev, PIPE_EVENTS * sizeof *sl->b.ev);
    atom__mem_free(mem, sl->b.line, PIPE_EVENTS * sizeof *sl->b.line);
    if (!w) continue;
    atom__mem_free(&w->mem, sl->names, sl->names_cap * sizeof *sl->names);
    atom__mem_free(&w->mem, sl->dir, sl->dir_cap * sizeof *sl->dir);
  }
  if (w) atom_trace_reader_free(w);
  atom__mem_free(mem, p, sizeof *p);
}

static void pipe_stop(atom_trace_reader *r) {
  atb_pipe *p = r->atb->pipe;
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, 1);
  pthread_cond_broadcast(&p->freed_cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->th, NULL);
  pthread_cond_destroy(&p->filled_cv);
  pthread_cond_destroy(&p->freed_cv);
  pthread_mutex_destroy(&p->mu);
  r->atb->pipe = NULL;
  pipe_release(p, &r->mem);
}

/* Start the reading thread if r asked for threads and nothing was read yet: w takes over the
 * input (the bytes sniffed so far, the rest of the buffer or the file). 0 (started or not), or
 * ATOM_ENOMEM. */
COLD static int pipe_start(atom_trace_reader *r) {
  struct atom__atb *a = r->atb;
  a->pipe_tried = 1;
  if (a->header_done || a->block_no || a->ordinal) return 0;
  /* A pipe is read by the calling thread: freeing the reader must never wait for a thread
   * blocked on a pipe whose writer stalls. Regular files (their size known) and buffers only. */
  if (a->fd >= 0 && !a->total) return 0;
  atb_pipe *p = atom__mem_calloc(&r->mem, 1, sizeof *p);
  if (!p) goto oom;
  atomic_init(&p->consumer_waits, 0);
  atomic_init(&p->reader_waits, 0);
  atomic_init(&p->reader_done, 0);
  atomic_init(&p->stop, 0);
  atomic_init(&p->filled_seen, 0);
  atomic_init(&p->used_seen, 0);
  if (atom_trace_reader_open_memory(&p->w, NULL, 0, r->display)) goto oom_p;
  atom_trace_reader *w = p->w;
  w->sniff = 0;
  if (atom__atb_open(w, a->fd < 0 ? a->data : NULL, a->fd < 0 ? a->avail : 0, a->fd,
                     a->fd < 0 ? NULL : a->data + a->at, a->fd < 0 ? 0 : a->avail - a->at,
                     a->total))
    goto oom_p;
  w->atb->dir_first = 1;
  for (int i = 0; i < PIPE_SLOTS; i++) {
    pipe_slot *sl = &p->slot[i];
    sl->b.ev = atom__mem_alloc(&r->mem, PIPE_EVENTS * sizeof *sl->b.ev);
    sl->b.line = atom__mem_alloc(&r->mem, PIPE_EVENTS * sizeof *sl->b.line);
    if (!sl->b.ev || !sl->b.line) goto oom_p;
    sl->b.cap = PIPE_EVENTS;
  }
  if (pthread_mutex_init(&p->mu, NULL)) goto oom_p;
  if (pthread_cond_init(&p->filled_cv, NULL)) {
    pthread_mutex_destroy(&p->mu);
    goto oom_p;
  }
  if (pthread_cond_init(&p->freed_cv, NULL)) {
    pthread_cond_destroy(&p->filled_cv);
    pthread_mutex_destroy(&p->mu);
    goto oom_p;
  }
  if (pthread_create(&p->th, NULL, pipe_main, p)) {
    /* No thread: read serially, from where nothing was read yet. */
    pthread_cond_destroy(&p->filled_cv);
    pthread_cond_destroy(&p->freed_cv);
    pthread_mutex_destroy(&p->mu);
    pipe_release(p, &r->mem);
    return 0;
  }
  a->pipe = p;
  return 0;
oom_p:
  pipe_release(p, &r->mem);
oom:
  return fail(r, ATOM_ENOMEM, "out of memory starting the reading thread");
}

/* The next hand-off, filled (the consumer). */
static pipe_slot *pipe_take(atb_pipe *p) {
  for (int i = 0; i < PIPE_SPIN && atomic_load(&p->filled_seen) <= p->used; i++) cpu_pause();
  if (atomic_load(&p->filled_seen) <= p->used) { /* sleep */
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->consumer_waits, 1);
    while (!atomic_load(&p->reader_done) && atomic_load(&p->filled_seen) < p->used + PIPE_WAKE)
      pthread_cond_wait(&p->filled_cv, &p->mu);
    atomic_store(&p->consumer_waits, 0);
    pthread_mutex_unlock(&p->mu);
  }
  /* the consumer asks for no hand-off after the last one, so one is there now */
  return &p->slot[p->used % PIPE_SLOTS];
}

static void pipe_give_back(atb_pipe *p) {
  atomic_store(&p->used_seen, ++p->used);
  if (atomic_load(&p->reader_waits) &&
      atomic_load(&p->filled_seen) + PIPE_WAKE <= p->used + PIPE_SLOTS) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_signal(&p->freed_cv);
    pthread_mutex_unlock(&p->mu);
  }
}

/* Begin consuming hand-off sl: its names into r's tables, its directives into r's list. */
static int pipe_begin(atom_trace_reader *r, pipe_slot *sl) {
  struct atom__atb *a = r->atb;
  for (size_t i = 0; i < sl->n_names; i++) {
    int rc = add_name(r, &a->names[sl->names[i].space - 1], (const unsigned char *)sl->names[i].s,
                      sl->names[i].len);
    if (rc) return rc;
  }
  sl->n_names = 0;
  for (size_t i = 0; i < sl->n_dir; i++) {
    if (ATOM__GROW(&r->mem, r->dir, r->dir_cap, r->n_dir + 1))
      return fail(r, ATOM_ENOMEM, "out of memory");
    char *text = atom__mem_strdup(&r->mem, sl->dir[i].text);
    if (!text) return fail(r, ATOM_ENOMEM, "out of memory");
    r->dir[r->n_dir++] = (atom__trace_directive){sl->dir[i].space, sl->dir[i].key, text};
  }
  sl->n_dir = 0;
  return 0;
}

/* atom__atb_fill() through the reading thread. */
static int pipe_fill_batch(atom_trace_reader *r, size_t max) {
  atb_pipe *p = r->atb->pipe;
  atom__trace_batch *b = r->batch;
  int rc;
  while (b->count < max && !p->ended) {
    pipe_slot *sl = p->cur;
    if (!sl) {
      sl = pipe_take(p);
      /* Directives come first in a batch, as in the reading thread's. */
      if (sl->n_dir && b->count) return 0;
      p->cur = sl;
      if ((rc = pipe_begin(r, sl))) return rc;
    }
    size_t n = sl->b.count - sl->b.head;
    if (n > max - b->count) n = max - b->count;
    if (b->count == 0 && sl->b.head == 0 && n == sl->b.count && b->cap == PIPE_EVENTS) {
      /* The whole hand-off: the batch takes its arrays, the slot the batch's. */
      atom_event *ev = b->ev;
      uint64_t *line = b->line;
      b->ev = sl->b.ev;
      b->line = sl->b.line;
      sl->b.ev = ev;
      sl->b.line = line;
    } else {
      memcpy(b->ev + b->count, sl->b.ev + sl->b.head, n * sizeof *b->ev);
      memcpy(b->line + b->count, sl->b.line + sl->b.head, n * sizeof *b->line);
    }
    b->count += n;
    sl->b.head += n;
    if (n) r->line = r->atb->ordinal = b->line[b->count - 1];
    if (sl->b.head < sl->b.count) break;
    p->consumed = sl->consumed;
    p->total = sl->total;
    if (sl->rc < 0) { /* w's error, now that every event before it is delivered */
      r->err = sl->err;
      r->err_line = r->line = sl->err_line;
      r->atb->ordinal = sl->err_line - 1;
      memcpy(r->msg, sl->msg, sizeof r->msg);
      p->cur = NULL;
      p->ended = 1;
      return atom__error(r->err, "%s", r->msg);
    }
    if (sl->rc > 0) p->ended = 1;
    p->cur = NULL;
    pipe_give_back(p);
  }
  return 0;
}

int atom__atb_open(atom_trace_reader *r, const unsigned char *data, size_t size, int fd,
                   const unsigned char *head, size_t have, uint64_t total) {
  struct atom__atb *a = atom__mem_calloc(&r->mem, 1, sizeof *a);
  if (!a) return ATOM_ENOMEM;
  a->fd = fd;
  a->total = total;
  if (fd < 0) {
    a->data = data;
    a->avail = size;
  } else {
    a->buf_cap = ATB_READ_CHUNK * 2;
    a->buf = atom__mem_alloc(&r->mem, a->buf_cap);
    if (!a->buf) {
      atom__mem_free(&r->mem, a, sizeof *a);
      return ATOM_ENOMEM;
    }
    if (have) memcpy(a->buf, head, have); /* head is NULL when nothing was sniffed yet */
    a->data = a->buf;
    a->avail = have;
  }
  for (unsigned b = 0; b < 256; b++) {
    unsigned kind = b & 15, flags = b >> 4;
    if (kind < ATOM_READ || kind > ATOM_COMMIT || (flags && flags != atb_allowed_flag[kind]))
      continue;
    const uint32_t pair[2] = {kind, flags};
    a->kf_class[b] = (unsigned char)(1 + atb_target_space[kind]);
    memcpy(&a->kf_word[b], pair, sizeof a->kf_word[b]);
  }
  r->atb = a;
  return 0;
}

void atom__atb_free(atom_trace_reader *r) {
  struct atom__atb *a = r->atb;
  if (!a) return;
  pipe_stop(r);
  for (int i = 0; i < 3; i++) {
    atb_space *t = &a->names[i];
    for (size_t k = 0; k < t->n; k++) atom__mem_free(&r->mem, (char *)t->ent[k].s, t->ent[k].len + 1);
    atom__mem_free(&r->mem, t->ent, t->cap * sizeof *t->ent);
  }
  for (size_t i = a->pend_at; i < a->pend_n; i++) atom__mem_strfree(&r->mem, a->pend[i].text);
  atom__mem_free(&r->mem, a->pend, a->pend_cap * sizeof *a->pend);
  atom__mem_free(&r->mem, a->pend_pos, a->pend_cap * sizeof *a->pend_pos);
  atom__mem_free(&r->mem, a->buf, a->buf_cap);
  atom__mem_free(&r->mem, a, sizeof *a);
  r->atb = NULL;
}

uint64_t atom__atb_name_count(const atom_trace_reader *r, int what) {
  return what >= ATOM_SPACE_THREAD && what <= ATOM_SPACE_LOCK ? r->atb->names[what - 1].n : 0;
}

const char *atom__atb_name(const atom_trace_reader *r, int what, uint64_t key) {
  if (what < ATOM_SPACE_THREAD || what > ATOM_SPACE_LOCK) return NULL;
  const atb_space *t = &r->atb->names[what - 1];
  return key == 0 || key > t->n ? NULL : t->ent[key - 1].s;
}

void atom__atb_progress(const atom_trace_reader *r, uint64_t *consumed, uint64_t *total) {
  if (r->atb->pipe) {
    *consumed = r->atb->pipe->consumed;
    *total = r->atb->pipe->total;
    return;
  }
  *consumed = r->atb->base + r->atb->at;
  *total = r->atb->fd < 0 ? r->atb->avail : r->atb->total;
}
