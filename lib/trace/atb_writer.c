/* The .atb writer (doc/trace-format.md, "Binary format (.atb)"; layout in atb_format.h).
 *
 * atom_trace_writer_open() hands a path ending in ".atb" here (std_writer.c checks the
 * arguments as for STD, then calls in). Keys of the caller (any 64-bit values: a runtime uses
 * addresses) become dense file keys 1, 2, 3, ... per space in order of first use, each with a
 * name entry written in the block of its first use, before that block's events: the file keys
 * are those the STD reader gives the same trace written as STD, and the writer never needs to
 * know a name before the program uses it. Events and entries collect in one block, written
 * with its checksum when ATB_WRITER_EVENTS events or ATB_WRITER_NAMES bytes of entries are
 * reached and at close, which also writes the end block. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomicity/error.h"
#include "core/error.h"
#include "support/checksum.h"
#include "support/mem.h"
#include "support/u64map.h"
#include "trace/atb_format.h"

typedef struct wkey {
  char *name;    /* set by atom_trace_writer_set_name, or NULL (T<key>, V<key>, L<key>) */
  size_t len;
  uint32_t file; /* file key, or 0 until the key's first use since its name was set */
} wkey;

typedef struct wspace {
  atom__u64map index; /* caller's key -> position in keys */
  wkey *keys;
  size_t n, cap;
  uint32_t next_file; /* file keys given so far */
} wspace;

struct atom__atb_writer {
  int fd;
  int err;
  int header_done;
  const char *display; /* borrowed from the STD writer */
  wspace spaces[3];
  unsigned char *names; /* entries of the current block, after room for the block header */
  size_t names_len, names_cap;
  unsigned char *events; /* ATB_WRITER_EVENTS records */
  uint32_t n_events;
  atom__mem mem;
  char msg[512];
};

static const char space_prefix[] = {'T', 'V', 'L'};

static int io_error(struct atom__atb_writer *w, int e) {
  if (!w->err) {
    w->err = ATOM_EIO;
    snprintf(w->msg, sizeof w->msg, "%s: write error: %s", w->display, strerror(e));
  }
  return atom__error(ATOM_EIO, "%s", w->msg);
}

static int write_all(struct atom__atb_writer *w, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t k = write(w->fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return io_error(w, errno);
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Write the current block (type ATB_BLOCK_DATA, or the empty ATB_BLOCK_END). The block header
 * is built in the 16 bytes reserved before the entries, so header, entries and padding go out
 * in one write and the checksum runs over one contiguous range. */
static int flush_block(struct atom__atb_writer *w, uint32_t type) {
  if (w->err) return atom__error(w->err, "%s", w->msg);
  if (!w->header_done) {
    unsigned char h[ATB_HEADER_SIZE];
    memcpy(h, ATB_MAGIC, ATB_MAGIC_LEN);
    atom__store_le32(h + 8, ATB_VERSION);
    atom__store_le32(h + 12, 0);
    if (write_all(w, h, sizeof h)) return ATOM_EIO;
    w->header_done = 1;
  }
  if (type == ATB_BLOCK_DATA && w->n_events == 0 && w->names_len == 0) return 0;
  size_t padded = (w->names_len + 7) & ~(size_t)7;
  memset(w->names + ATB_BLOCK_HEADER + w->names_len, 0, padded - w->names_len);
  size_t events = (size_t)w->n_events * ATB_RECORD;
  unsigned char *h = w->names;
  atom__store_le32(h, type);
  atom__store_le32(h + 8, (uint32_t)padded);
  atom__store_le32(h + 12, w->n_events);
  /* The events follow the entries in the file but live in their own buffer: checksum the
   * two ranges as one by copying the events behind the entries (at most 64 KiB). */
  memcpy(h + ATB_BLOCK_HEADER + padded, w->events, events);
  atom__store_le32(h + 4, atom__checksum32(type, h + 8, 8 + padded + events));
  int rc = write_all(w, h, ATB_BLOCK_HEADER + padded + events);
  w->names_len = 0;
  w->n_events = 0;
  return rc;
}

/* Room for an entry of `len` text bytes in the current block, flushing it first if needed. */
static unsigned char *entry_room(struct atom__atb_writer *w, size_t len) {
  size_t need = ATB_ENTRY_HEADER + len;
  if (w->names_len && w->names_len + need > ATB_WRITER_NAMES && flush_block(w, ATB_BLOCK_DATA))
    return NULL;
  /* header + entries + padding + the events copied behind them at flush */
  size_t cap = ATB_BLOCK_HEADER + w->names_len + need + 8 + ATB_WRITER_EVENTS * ATB_RECORD;
  if (cap > w->names_cap) {
    size_t ncap = w->names_cap * 2;
    if (ncap < cap) ncap = cap;
    unsigned char *nb = atom__mem_realloc(&w->mem, w->names, w->names_cap, ncap);
    if (!nb) {
      atom__error(ATOM_ENOMEM, "%s: out of memory", w->display);
      return NULL;
    }
    w->names = nb;
    w->names_cap = ncap;
  }
  unsigned char *p = w->names + ATB_BLOCK_HEADER + w->names_len;
  w->names_len += need;
  return p;
}

static int put_entry(struct atom__atb_writer *w, unsigned what, int space, uint64_t key,
                     const char *s, size_t len) {
  unsigned char *p = entry_room(w, len);
  if (!p) return w->err ? w->err : ATOM_ENOMEM;
  p[0] = (unsigned char)what;
  p[1] = (unsigned char)space;
  p[2] = p[3] = 0;
  atom__store_le32(p + 4, (uint32_t)len);
  atom__store_le64(p + 8, key);
  memcpy(p + ATB_ENTRY_HEADER, s, len);
  return 0;
}

/* The position of the caller's key in its space, added (unnamed) if new; < 0 on error. */
static int64_t key_slot(struct atom__atb_writer *w, wspace *sp, uint64_t key) {
  uint32_t at;
  if (sp->index.count && atom__u64map_get(&sp->index, key, &at)) return at;
  if (sp->n >= ATB_MAX_KEY || ATOM__GROW(&w->mem, sp->keys, sp->cap, sp->n + 1) ||
      atom__u64map_put(&sp->index, &w->mem, key, (uint32_t)sp->n))
    return atom__error(ATOM_ENOMEM, "%s: out of memory", w->display);
  sp->keys[sp->n] = (wkey){NULL, 0, 0};
  return (int64_t)sp->n++;
}

/* *out: the file key of the caller's key, with its name entry at its first use. */
static int file_key(struct atom__atb_writer *w, int space, uint64_t key, uint32_t *out) {
  wspace *sp = &w->spaces[space - 1];
  int64_t at = key_slot(w, sp, key);
  if (at < 0) return (int)at;
  wkey *k = &sp->keys[at];
  if (k->file) {
    *out = k->file;
    return 0;
  }
  if (sp->next_file >= ATB_MAX_KEY) return atom__error(ATOM_ELIMIT, "%s: too many names", w->display);
  char tmp[24];
  const char *s = k->name;
  size_t len = k->len;
  if (!s) {
    len = (size_t)snprintf(tmp, sizeof tmp, "%c%" PRIu64, space_prefix[space - 1], key);
    s = tmp;
  }
  int rc = put_entry(w, ATB_ENTRY_NAME, space, (uint64_t)sp->next_file + 1, s, len);
  if (rc) return rc;
  *out = sp->keys[at].file = ++sp->next_file;
  return 0;
}

struct atom__atb_writer *atom__atb_writer_new(int fd, const char *display) {
  atom__mem m;
  atom__mem_init(&m, &atom__system_allocator);
  struct atom__atb_writer *w = atom__mem_calloc(&m, 1, sizeof *w);
  if (!w) return NULL;
  w->mem = m;
  w->fd = fd;
  w->display = display;
  w->events = atom__mem_alloc(&w->mem, ATB_WRITER_EVENTS * ATB_RECORD);
  w->names_cap = ATB_BLOCK_HEADER + 8 + ATB_WRITER_EVENTS * ATB_RECORD;
  w->names = atom__mem_alloc(&w->mem, w->names_cap);
  if (!w->events || !w->names) {
    atom__mem_free(&w->mem, w->events, ATB_WRITER_EVENTS * ATB_RECORD);
    atom__mem_free(&w->mem, w->names, w->names_cap);
    atom__mem_free(&m, w, sizeof *w);
    return NULL;
  }
  return w;
}

int atom__atb_writer_set_name(struct atom__atb_writer *w, int what, uint64_t key, const char *name,
                              size_t len) {
  wspace *sp = &w->spaces[what - 1];
  int64_t at = key_slot(w, sp, key);
  if (at < 0) return (int)at;
  char *copy = atom__mem_alloc(&w->mem, len + 1);
  if (!copy) return atom__error(ATOM_ENOMEM, "atom_trace_writer_set_name: out of memory");
  memcpy(copy, name, len + 1);
  wkey *k = &sp->keys[at];
  /* A new name is a new file key from the next use on, as a STD line with the new name
   * would read back; the same name again changes nothing. */
  uint32_t file = k->name && k->len == len && !memcmp(k->name, name, len) ? k->file : 0;
  if (k->name) atom__mem_free(&w->mem, k->name, k->len + 1);
  *k = (wkey){copy, len, file};
  return 0;
}

int atom__atb_writer_write_name(struct atom__atb_writer *w, int what, uint64_t key,
                                const char *text, size_t len) {
  if (w->err) return atom__error(w->err, "%s", w->msg);
  uint64_t file = key;
  if (what != ATOM_SPACE_LOC) {
    uint32_t f;
    int rc = file_key(w, what, key, &f);
    if (rc) return rc;
    file = f;
  }
  int rc = put_entry(w, ATB_ENTRY_DIRECTIVE, what, file, text, len);
  if (rc) return rc;
  /* Its place: before the next event of the block (n_events < ATB_WRITER_EVENTS, since a full
   * block is written at once). */
  unsigned char *p = w->names + ATB_BLOCK_HEADER + w->names_len - ATB_ENTRY_HEADER - len;
  p[2] = (unsigned char)(w->n_events & 0xff);
  p[3] = (unsigned char)(w->n_events >> 8);
  return 0;
}

int atom__atb_writer_write(struct atom__atb_writer *w, const atom_event *ev) {
  if (w->err) return atom__error(w->err, "%s", w->msg);
  if (ev->loc > ATB_LOC_MASK)
    return atom__error(ATOM_EINVAL, "atom_trace_writer_write: loc %" PRIu64 " does not fit the "
                       "56 bits of an .atb record", ev->loc);
  unsigned sp = atb_target_space[ev->kind];
  uint32_t thread, target = 0;
  int rc = file_key(w, ATOM_SPACE_THREAD, ev->thread, &thread);
  if (!rc && sp) rc = file_key(w, (int)sp, ev->target, &target);
  if (rc) return rc;
  unsigned char *p = w->events + (size_t)w->n_events * ATB_RECORD;
  atom__store_le32(p, thread);
  atom__store_le32(p + 4, target);
  atom__store_le64(p + 8, ev->loc | (uint64_t)ev->kind << 56 | (uint64_t)ev->flags << 60);
  if (++w->n_events == ATB_WRITER_EVENTS) return flush_block(w, ATB_BLOCK_DATA);
  return 0;
}

int atom__atb_writer_close(struct atom__atb_writer *w) {
  if (!w) return 0;
  int rc = flush_block(w, ATB_BLOCK_DATA);
  if (!rc) rc = flush_block(w, ATB_BLOCK_END);
  for (int i = 0; i < 3; i++) {
    wspace *sp = &w->spaces[i];
    for (size_t j = 0; j < sp->n; j++)
      if (sp->keys[j].name) atom__mem_free(&w->mem, sp->keys[j].name, sp->keys[j].len + 1);
    atom__mem_free(&w->mem, sp->keys, sp->cap * sizeof *sp->keys);
    atom__u64map_free(&sp->index, &w->mem);
  }
  atom__mem_free(&w->mem, w->names, w->names_cap);
  atom__mem_free(&w->mem, w->events, ATB_WRITER_EVENTS * ATB_RECORD);
  atom__mem m = w->mem;
  atom__mem_free(&m, w, sizeof *w);
  return rc ? ATOM_EIO : 0;
}
