/* The STD reader's input and life (doc/trace-format.md): its errors, the regions it reads
 * (a memory-mapped file or buffer, or a read buffer for pipes and standard input, each ending
 * with '\n' as the parser in std_reader.c needs), opening and freeing, and the accessors of
 * what it learned (names, lines, progress). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicity/error.h"
#include "core/error.h"
#include "support/mem.h"
#include "trace/atb_format.h"
#include "trace/reader_state.h"

int atom__trace_fail(atom_trace_reader *r, int err, const char *fmt, ...) {
  char detail[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  memcpy(r->detail, detail, sizeof detail);
  snprintf(
      r->msg, sizeof r->msg, "%s:%" PRIu64 ": %s%s", r->display, r->lineno, detail,
      r->unterminated && err == ATOM_EPARSE ? " (the last line has no line end: truncated?)" : "");
  r->err = err;
  r->err_line = r->lineno;
  r->line = r->lineno;
  return atom__error(err, "%s", r->msg);
}

int atom__trace_reader_error(const atom_trace_reader *r) {
  if (!r->err) return 0;
  return atom__error(r->err, "%s", r->msg);
}

int atom__trace_reraise(atom_trace_reader *r) {
  r->line = r->err_line;
  return atom__trace_reader_error(r);
}

/* ---- input regions --------------------------------------------------------------------- */

static int refill_memory(atom_trace_reader *r) {
  if (r->stage != 0) {
    r->stage = 2;
    return 0;
  }
  if (r->pos < r->body_end) {
    /* The next window of the body, up to a line end. */
    size_t left = (size_t)(r->body_end - r->pos);
    if (left > MAP_WINDOW)
      r->lim = (const unsigned char *)memchr(r->pos + MAP_WINDOW, '\n', left - MAP_WINDOW) + 1;
    else
      r->lim = r->body_end;
    return 1;
  }
  r->stage = 1;
  size_t tail = r->size - (size_t)(r->body_end - r->data);
  if (tail == 0) {
    r->stage = 2;
    return 0;
  }
  r->pos = r->lim = r->body_end;
  if (tail > ATOM__TRACE_MAX_LINE + 1) {
    r->lineno++;
    return atom__trace_fail(r, ATOM_EPARSE, "line too long (more than %zu bytes)",
                            ATOM__TRACE_MAX_LINE);
  }
  r->tail = atom__mem_alloc(&r->mem, tail + 1);
  if (!r->tail) return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  r->tail_size = tail + 1;
  memcpy(r->tail, r->body_end, tail);
  r->tail[tail] = '\n';
  r->origin = r->pos = (const unsigned char *)r->tail;
  r->lim = r->pos + tail + 1;
  r->base = (uint64_t)(r->body_end - r->data);
  r->unterminated = 1;
  return 1;
}

static int refill_stream(atom_trace_reader *r) {
  size_t used = (size_t)(r->lim - r->buf);
  size_t keep = r->fill - used;
  if (used) {
    memmove(r->buf, r->buf + used, keep);
    r->fill = keep;
    r->base += used;
  }
  r->pos = r->lim = r->origin = r->buf;
  for (;;) {
    if (r->eof) {
      if (r->fill == 0) return 0;
      /* An unterminated last line: the buffer always keeps one byte for this '\n'. */
      r->buf[r->fill++] = '\n';
      r->lim = r->buf + r->fill;
      r->unterminated = 1;
      return 1;
    }
    if (r->fill + 1 >= r->buf_cap) {
      size_t ncap = r->buf_cap * 2;
      unsigned char *nb = atom__mem_realloc(&r->mem, r->buf, r->buf_cap, ncap);
      if (!nb) return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
      r->buf = nb;
      r->buf_cap = ncap;
      r->pos = r->lim = r->origin = nb;
    }
    ssize_t n = read(r->fd, r->buf + r->fill, r->buf_cap - r->fill - 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      r->lineno++;
      return atom__trace_fail(r, ATOM_EIO, "read error: %s", strerror(e));
    }
    if (n == 0) {
      r->eof = 1;
      r->end_off = r->base + r->fill;
      if (r->shrink_check && r->end_off < r->total) {
        r->lineno++;
        return atom__trace_fail(r, ATOM_EIO,
                    "the file shrank while being read (%" PRIu64 " bytes read of %" PRIu64 ")",
                    r->end_off, r->total);
      }
      continue;
    }
    const unsigned char *nl = memrchr(r->buf + r->fill, '\n', (size_t)n);
    r->fill += (size_t)n;
    if (nl) {
      r->lim = nl + 1;
      return 1;
    }
    if (r->fill > ATOM__TRACE_MAX_LINE + 1) {
      r->lineno++;
      return atom__trace_fail(r, ATOM_EPARSE, "line too long (more than %zu bytes)",
                              ATOM__TRACE_MAX_LINE);
    }
  }
}

/* 1 when a new region is ready, 0 at end of input, or an error. */
int atom__trace_refill(atom_trace_reader *r) {
  if (r->src == SRC_STREAM) return refill_stream(r);
  return refill_memory(r);
}

/* ---- format detection ------------------------------------------------------------------ */

int atom__trace_sniff(atom_trace_reader *r) {
  r->sniff = 0;
  /* The first bytes stay in the STD reader's buffer when the input is STD. */
  while (r->fill < 4) {
    ssize_t n = read(r->fd, r->buf + r->fill, 4 - r->fill);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      r->lineno++;
      return atom__trace_fail(r, ATOM_EIO, "read error: %s", strerror(e));
    }
    if (n == 0) break; /* the readers see the end again with their own reads */
    r->fill += (size_t)n;
  }
  if (atom__atb_sniff(r->buf, r->fill) &&
      atom__atb_open(r, NULL, 0, r->fd, r->buf, r->fill, r->total))
    return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  return 0;
}

/* A regular file is sniffed with pread(), which cannot block and leaves the file offset where
 * it is, so that an STD file starts with an empty buffer (what the parallel reader needs).
 * Files of both formats are read with read(), never mapped: mapping an .atb file was measured
 * no faster (doc/performance.md), and a mapped file that another process truncates while it
 * is read (a recorder writing to the same path again) would kill this one with SIGBUS, where
 * read() reports the shrink as an error. A caller that wants a mapping maps the file itself and
 * passes it to atom_trace_reader_open_memory(). 0 or an error (the message set). */
static int sniff_file(atom_trace_reader *r, const struct stat *st) {
  off_t at = lseek(r->fd, 0, SEEK_CUR);
  if (at < 0 || at > st->st_size) return atom__trace_sniff(r);
  unsigned char magic[4];
  ssize_t n;
  do n = pread(r->fd, magic, sizeof magic, at);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    int e = errno;
    r->lineno++;
    return atom__trace_fail(r, ATOM_EIO, "read error: %s", strerror(e));
  }
  if (atom__atb_sniff(magic, (size_t)n) && atom__atb_open(r, NULL, 0, r->fd, NULL, 0, r->total))
    return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  return 0;
}

/* ---- opening and closing --------------------------------------------------------------- */

static atom_trace_reader *reader_new(const char *display) {
  atom__mem m;
  atom__mem_init(&m, &atom__system_allocator);
  atom_trace_reader *r = atom__mem_calloc(&m, 1, sizeof *r);
  if (!r) return NULL;
  r->mem = m;
  r->fd = -1;
  atom__trace_heads_clear(r);
  r->display = atom__mem_strdup(&r->mem, display);
  if (!r->display) {
    atom__mem_free(&m, r, sizeof *r);
    return NULL;
  }
  return r;
}

static void setup_memory(atom_trace_reader *r, const unsigned char *data, size_t size) {
  if (!data) data = (const unsigned char *)"";
  r->data = data;
  r->size = size;
  const unsigned char *nl = size ? memrchr(data, '\n', size) : NULL;
  r->body_end = nl ? nl + 1 : data;
  r->pos = r->lim = r->origin = data; /* the first refill sets the first window */
  r->end_off = size;
  r->total = size;
}

static int setup_stream(atom_trace_reader *r) {
  r->src = SRC_STREAM;
  r->buf = atom__mem_alloc(&r->mem, STREAM_CHUNK);
  if (!r->buf) return ATOM_ENOMEM;
  r->buf_cap = STREAM_CHUNK;
  r->pos = r->lim = r->origin = r->buf;
  r->end_off = UINT64_MAX;
  return 0;
}

ATOM_API int atom_trace_reader_open_memory(atom_trace_reader **out, const char *data, size_t size,
                                           const char *name) {
  if (out) *out = NULL;
  if (!out || (!data && size))
    return atom__error(ATOM_EINVAL, "atom_trace_reader_open_memory: NULL argument");
  atom_trace_reader *r = reader_new(name ? name : "<memory>");
  if (!r) return atom__error(ATOM_ENOMEM, "atom_trace_reader_open_memory: out of memory");
  r->src = SRC_MEMORY;
  setup_memory(r, (const unsigned char *)data, size);
  /* The format is told by the magic: .atb goes to atb_reader.c, anything else is STD. */
  if (atom__atb_sniff(data, size) &&
      atom__atb_open(r, (const unsigned char *)data, size, -1, NULL, 0, size)) {
    atom_trace_reader_free(r);
    return atom__error(ATOM_ENOMEM, "atom_trace_reader_open_memory: out of memory");
  }
  *out = r;
  return 0;
}

ATOM_API int atom_trace_reader_open(atom_trace_reader **out, const char *path) {
  if (out) *out = NULL;
  if (!out || !path) return atom__error(ATOM_EINVAL, "atom_trace_reader_open: NULL argument");
  int is_stdin = strcmp(path, "-") == 0;
  atom_trace_reader *r = reader_new(is_stdin ? "<stdin>" : path);
  if (!r) return atom__error(ATOM_ENOMEM, "atom_trace_reader_open: out of memory");
  struct stat st;
  if (is_stdin) {
    r->fd = 0;
  } else {
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
      int e = errno;
      atom_trace_reader_free(r);
      return atom__error(ATOM_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    r->own_fd = 1;
  }
  if (fstat(r->fd, &st) != 0) {
    int e = errno;
    int rc = atom__error(ATOM_EIO, "%s: cannot stat: %s", r->display, strerror(e));
    atom_trace_reader_free(r);
    return rc;
  }
  if (S_ISDIR(st.st_mode)) {
    int rc = atom__error(ATOM_EIO, "%s: cannot read: %s", r->display, strerror(EISDIR));
    atom_trace_reader_free(r);
    return rc;
  }
  /* Every file is read with read(), never mapped: a mapped file truncated by another process
   * while it is read would kill this one with SIGBUS, and mapping was measured no faster (a
   * copy into a buffer that stays in the cache; doc/performance.md). A regular file that ends
   * before the size it had at open is an error (it shrank), not a silent end of the trace. */
  if (setup_stream(r)) {
    atom_trace_reader_free(r);
    return atom__error(ATOM_ENOMEM, "atom_trace_reader_open: out of memory");
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    off_t at = lseek(r->fd, 0, SEEK_CUR);
    if (at >= 0 && at <= st.st_size) {
      r->total = (uint64_t)(st.st_size - at);
      r->shrink_check = 1;
    }
  }
  /* The format is told by the first 4 bytes (the .atb magic starts "ATB\0", which no STD
   * trace does). A regular file is sniffed now, which cannot block; a pipe or a terminal at
   * the first read (atom__trace_sniff), so that opening standard input waits for nothing. */
  if (!S_ISREG(st.st_mode)) {
    r->sniff = 1;
    *out = r;
    return 0;
  }
  int rc = sniff_file(r, &st);
  if (rc) {
    rc = atom__error(rc, "%s", r->msg);
    atom_trace_reader_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

ATOM_API void atom_trace_reader_free(atom_trace_reader *r) {
  if (!r) return;
  atom__trace_par_free(r);
  atom__atb_free(r);
  if (r->own_fd && r->fd >= 0) close(r->fd);
  atom__mem_free(&r->mem, r->buf, r->buf_cap);
  atom__mem_free(&r->mem, r->tail, r->tail_size);
  for (int i = 0; i < 3; i++) {
    name_space *t = &r->names[i];
    atom__u64map_free(&t->short_names, &r->mem);
    atom__idindex_free(&t->long_names, &r->mem);
    atom__mem_free(&r->mem, t->ent, t->cap * sizeof *t->ent);
    atom__mem_free(&r->mem, t->gkey, t->gkey_cap * sizeof *t->gkey);
  }
  for (arena_block *b = r->arena, *next; b; b = next) {
    next = b->next;
    atom__mem_free(&r->mem, b, sizeof *b + b->size);
  }
  if (r->batch) {
    if (r->batch->own_ev) r->batch->ev = r->batch->own_ev; /* lent (parallel.c) */
    atom__mem_free(&r->mem, r->batch->ev, r->batch->cap * sizeof *r->batch->ev);
    atom__mem_free(&r->mem, r->batch->line, r->batch->cap * sizeof *r->batch->line);
    atom__mem_free(&r->mem, r->batch, sizeof *r->batch);
  }
  atom__trace_sets_free(r->sets, &r->mem);
  for (size_t i = 0; i < r->n_dir; i++) atom__mem_strfree(&r->mem, r->dir[i].text);
  atom__mem_free(&r->mem, r->dir, r->dir_cap * sizeof *r->dir);
  atom__mem_strfree(&r->mem, r->display);
  atom__mem m = r->mem;
  atom__mem_free(&m, r, sizeof *r);
}

ATOM_API int atom_trace_reader_set_threads(atom_trace_reader *r, unsigned n) {
  if (!r) return atom__error(ATOM_EINVAL, "atom_trace_reader_set_threads: NULL argument");
  if (r->par_tried || r->lineno || r->started || r->err)
    return atom__error(ATOM_EINVAL, "atom_trace_reader_set_threads: %s: reading has started",
                       r->display);
  if (n == 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c > 0 ? (unsigned)c : 1;
  }
  r->threads = n > ATOM__TRACE_MAX_THREADS ? ATOM__TRACE_MAX_THREADS : n;
  return 0;
}

void atom__trace_reader_set_chunk(atom_trace_reader *r, size_t size) { r->chunk_size = size; }

void atom__trace_reader_set_keep_names(atom_trace_reader *r, size_t n) {
  r->keep_names = n + 1;
}

void atom__trace_reader_set_lazy_names(atom_trace_reader *r, uint64_t from) {
  r->lazy_from = from == UINT64_MAX ? 0 : from + 1;
}

uint64_t atom__trace_reader_name_count(const atom_trace_reader *r, int what) {
  if (r->atb) return atom__atb_name_count(r, what);
  return what >= ATOM_SPACE_THREAD && what <= ATOM_SPACE_LOCK ? r->names[what - 1].n : 0;
}

uint64_t *atom__trace_reader_named(atom_trace_reader *r) { return r->named; }

const atom__trace_directive *atom__trace_reader_directives(atom_trace_reader *r, size_t *n,
                                                           size_t **done) {
  *n = r->n_dir;
  *done = &r->dir_done;
  return r->dir;
}

atom__trace_sets **atom__trace_reader_sets(atom_trace_reader *r) { return &r->sets; }

atom__mem *atom__trace_reader_mem(atom_trace_reader *r) { return &r->mem; }

const char *atom__trace_reader_display(const atom_trace_reader *r) { return r->display; }

void atom__trace_reader_set_line(atom_trace_reader *r, uint64_t line) { r->line = line; }

ATOM_API const char *atom_trace_reader_name(const atom_trace_reader *r, int what, uint64_t key) {
  if (!r || what < ATOM_SPACE_THREAD || what > ATOM_SPACE_LOCK) return NULL;
  if (r->atb) return atom__atb_name(r, what, key);
  const name_space *t = &r->names[what - 1];
  if (key == 0 || key > t->n) return NULL;
  return t->ent[key - 1].s;
}

ATOM_API int atom_trace_reader_directive(const atom_trace_reader *r, size_t index, int *space,
                                         uint64_t *key, const char **text) {
  if (!r || !space || !key || !text || index >= r->n_dir) return 0;
  *space = r->dir[index].space;
  *key = r->dir[index].key;
  *text = r->dir[index].text;
  return 1;
}

ATOM_API uint64_t atom_trace_reader_line(const atom_trace_reader *r) { return r ? r->line : 0; }

ATOM_API void atom_trace_reader_progress(const atom_trace_reader *r, uint64_t *consumed,
                                         uint64_t *total) {
  uint64_t c = 0, t = 0;
  if (r && r->atb) {
    atom__atb_progress(r, &c, &t);
  } else if (r) {
    c = r->base + (uint64_t)(r->pos - r->origin);
    if (c > r->end_off) c = r->end_off; /* the '\n' added after a last line is not input */
    t = r->total;
  }
  if (consumed) *consumed = c;
  if (total) *total = t;
}
