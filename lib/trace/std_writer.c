/* STD trace writer (doc/trace-format.md): events in, `<thread>|<op>|<loc>` lines out. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomicity/error.h"
#include "atomicity/trace.h"
#include "core/error.h"
#include "support/mem.h"
#include "support/u64map.h"
#include "trace/atb_format.h"
#include "trace/std_reader.h"

#define WRITE_BUF ((size_t)64 << 10)

typedef struct wname {
  char *s;
  size_t len;
} wname;

typedef struct wspace {
  atom__u64map index; /* key -> position in names */
  wname *names;
  size_t n, cap;
} wspace;

struct atom_trace_writer {
  int fd;
  int own_fd;
  int err; /* sticky: ATOM_EIO once a write failed */
  size_t n;
  struct atom__atb_writer *atb; /* a path ending in ".atb": the binary format (atb_writer.c) */
  wspace spaces[3];
  atom__mem mem;
  char *display;
  char msg[512];
  unsigned char buf[WRITE_BUF];
};

/* clang-format off */
static const char *const op_names[] = {
    "",
#define OP_NAME_(name, value, text, op) [value] = op,
    ATOM_KIND_MAP(OP_NAME_)
#undef OP_NAME_
};
/* clang-format on */

/* Fallback names of unnamed keys: T<key>, V<key>, L<key>. */
static const char space_prefix[] = {'T', 'V', 'L'};

static int io_error(atom_trace_writer *w, const char *what, int e) {
  if (!w->err) {
    w->err = ATOM_EIO;
    snprintf(w->msg, sizeof w->msg, "%s: %s: %s", w->display, what, strerror(e));
  }
  return atom__error(ATOM_EIO, "%s", w->msg);
}

static int write_all(atom_trace_writer *w, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t k = write(w->fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return io_error(w, "write error", errno);
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int flush(atom_trace_writer *w) {
  size_t n = w->n;
  w->n = 0;
  return n ? write_all(w, w->buf, n) : 0;
}

static int put(atom_trace_writer *w, const void *s, size_t n) {
  if (w->n + n > WRITE_BUF) {
    if (flush(w)) return ATOM_EIO;
    if (n > WRITE_BUF) return write_all(w, s, n);
  }
  memcpy(w->buf + w->n, s, n);
  w->n += n;
  return 0;
}

/* Decimal digits of v at the end of out[20]; returns where they start. */
static char *u64_digits(char out[20], uint64_t v) {
  char *p = out + 20;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  return p;
}

static int put_name(atom_trace_writer *w, int space, uint64_t key) {
  const wspace *sp = &w->spaces[space - 1];
  uint32_t at;
  if (sp->index.count && atom__u64map_get(&sp->index, key, &at))
    return put(w, sp->names[at].s, sp->names[at].len);
  char tmp[21];
  char *d = u64_digits(tmp + 1, key);
  *--d = space_prefix[space - 1];
  return put(w, d, (size_t)(tmp + 21 - d));
}

/* Length of what put_name writes for this key. */
static size_t name_len(const atom_trace_writer *w, int space, uint64_t key) {
  const wspace *sp = &w->spaces[space - 1];
  uint32_t at;
  if (sp->index.count && atom__u64map_get(&sp->index, key, &at)) return sp->names[at].len;
  char tmp[20];
  return 1 + (size_t)(tmp + 20 - u64_digits(tmp, key));
}

ATOM_API int atom_trace_writer_open(atom_trace_writer **out, const char *path) {
  if (out) *out = NULL;
  if (!out || !path) return atom__error(ATOM_EINVAL, "atom_trace_writer_open: NULL argument");
  int is_stdout = strcmp(path, "-") == 0;
  atom__mem m;
  atom__mem_init(&m, &atom__system_allocator);
  atom_trace_writer *w = atom__mem_alloc(&m, sizeof *w);
  if (!w) return atom__error(ATOM_ENOMEM, "atom_trace_writer_open: out of memory");
  memset(w, 0, offsetof(atom_trace_writer, buf));
  w->mem = m;
  w->display = atom__mem_strdup(&w->mem, is_stdout ? "<stdout>" : path);
  if (!w->display) {
    atom__mem_free(&m, w, sizeof *w);
    return atom__error(ATOM_ENOMEM, "atom_trace_writer_open: out of memory");
  }
  if (is_stdout) {
    w->fd = 1;
  } else {
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (w->fd < 0) {
      int e = errno;
      atom__mem_strfree(&w->mem, w->display);
      m = w->mem;
      atom__mem_free(&m, w, sizeof *w);
      return atom__error(ATOM_EIO, "%s: cannot create: %s", path, strerror(e));
    }
    w->own_fd = 1;
  }
  size_t plen = strlen(path);
  if (plen > 4 && strcmp(path + plen - 4, ".atb") == 0) {
    w->atb = atom__atb_writer_new(w->fd, w->display);
    if (!w->atb) {
      atom_trace_writer_close(w);
      return atom__error(ATOM_ENOMEM, "atom_trace_writer_open: out of memory");
    }
  }
  *out = w;
  return 0;
}

ATOM_API int atom_trace_writer_set_name(atom_trace_writer *w, int what, uint64_t key,
                                        const char *name) {
  if (!w || !name || what < ATOM_SPACE_THREAD || what > ATOM_SPACE_LOCK)
    return atom__error(ATOM_EINVAL, "atom_trace_writer_set_name: bad space %d or NULL argument",
                       what);
  size_t len = strlen(name);
  /* A name in an event line may be as long as a line (the reader's only bound there), so the
   * 64 KiB bound of #name keys and set files does not apply: refusing a name the reader takes
   * would make a copied trace use default names. atom_trace_writer_write refuses a line too
   * long to read back. */
  const char *why = len > ATOM__TRACE_MAX_LINE ? "name longer than a line may be"
                                               : atom__trace_name_chars_problem(name, len);
  if (why) return atom__error(ATOM_EINVAL, "atom_trace_writer_set_name: %s", why);
  if (w->atb) return atom__atb_writer_set_name(w->atb, what, key, name, len);
  wspace *sp = &w->spaces[what - 1];
  char *copy = atom__mem_strdup(&w->mem, name);
  if (!copy) return atom__error(ATOM_ENOMEM, "atom_trace_writer_set_name: out of memory");
  uint32_t at;
  if (sp->index.count && atom__u64map_get(&sp->index, key, &at)) {
    atom__mem_free(&w->mem, sp->names[at].s, sp->names[at].len + 1);
    sp->names[at] = (wname){copy, len};
    return 0;
  }
  if (sp->n >= UINT32_MAX - 1 || ATOM__GROW(&w->mem, sp->names, sp->cap, sp->n + 1) ||
      atom__u64map_put(&sp->index, &w->mem, key, (uint32_t)sp->n)) {
    atom__mem_free(&w->mem, copy, len + 1);
    return atom__error(ATOM_ENOMEM, "atom_trace_writer_set_name: out of memory");
  }
  sp->names[sp->n++] = (wname){copy, len};
  return 0;
}

ATOM_API int atom_trace_writer_write_name(atom_trace_writer *w, int what, uint64_t key,
                                          const char *text) {
  static const char *const words[] = {"", "thread", "var", "lock", "loc"};
  if (!w || !text || what < ATOM_SPACE_THREAD || what > ATOM_SPACE_LOC)
    return atom__error(ATOM_EINVAL, "atom_trace_writer_write_name: bad space %d or NULL argument",
                       what);
  size_t len = strlen(text);
  const char *why = atom__trace_text_problem(text, len); /* what the readers accept */
  if (why) return atom__error(ATOM_EINVAL, "atom_trace_writer_write_name: %s", why);
  if (w->atb) return atom__atb_writer_write_name(w->atb, what, key, text, len);
  if (what != ATOM_SPACE_LOC && name_len(w, what, key) > ATOM__TRACE_MAX_NAME)
    return atom__error(ATOM_EINVAL, "atom_trace_writer_write_name: the %s's name is longer than "
                       "a #name key may be (%zu bytes)", words[what], ATOM__TRACE_MAX_NAME);
  if (w->err) return atom__error(w->err, "%s", w->msg);
  char tmp[21];
  int rc = put(w, "#name ", 6);
  if (!rc) rc = put(w, words[what], strlen(words[what]));
  if (!rc) rc = put(w, " ", 1);
  if (!rc && what == ATOM_SPACE_LOC) {
    char *d = u64_digits(tmp + 1, key);
    rc = put(w, d, (size_t)(tmp + 21 - d));
  } else if (!rc) {
    rc = put_name(w, what, key);
  }
  if (!rc) rc = put(w, " ", 1);
  if (!rc) rc = put(w, text, len);
  if (!rc) rc = put(w, "\n", 1);
  return rc ? atom__error(w->err ? w->err : rc, "%s", w->msg) : 0;
}

ATOM_API int atom_trace_writer_write(atom_trace_writer *w, const atom_event *ev) {
  if (!w || !ev) return atom__error(ATOM_EINVAL, "atom_trace_writer_write: NULL argument");
  uint32_t kind = ev->kind;
  if (kind < ATOM_READ || kind > ATOM_COMMIT)
    return atom__error(ATOM_EINVAL, "atom_trace_writer_write: unknown event kind %u",
                       (unsigned)kind);
  /* Flagged accesses are written r.acq(V) / w.rel(V); the flags the session would reject are
   * refused here too, so a trace written from pushed events reads back as the same events. */
  const char *suffix = "";
  if (ev->flags) {
    if (kind == ATOM_READ && ev->flags == ATOM_FLAG_ACQUIRE)
      suffix = ".acq";
    else if (kind == ATOM_WRITE && ev->flags == ATOM_FLAG_RELEASE)
      suffix = ".rel";
    else
      return atom__error(ATOM_EINVAL, "atom_trace_writer_write: invalid flags 0x%x for a %s",
                         (unsigned)ev->flags, atom_kind_name((int)kind));
  }
  if (w->atb) return atom__atb_writer_write(w->atb, ev);
  int has_target = kind != ATOM_BEGIN && kind != ATOM_END && kind != ATOM_FENCE;
  int space = kind == ATOM_ACQUIRE || kind == ATOM_RELEASE ? ATOM_SPACE_LOCK
              : kind == ATOM_FORK || kind == ATOM_JOIN     ? ATOM_SPACE_THREAD
                                                           : ATOM_SPACE_VAR;
  /* Refuse a line the reader would reject as too long (long names): never write what does
   * not read back. */
  char tmp[22];
  size_t line = name_len(w, ATOM_SPACE_THREAD, ev->thread) + 1 + strlen(op_names[kind]) +
                strlen(suffix) + (has_target ? 2 + name_len(w, space, ev->target) : 0) + 1 +
                (size_t)(tmp + 21 - u64_digits(tmp + 1, ev->loc));
  if (line > ATOM__TRACE_MAX_LINE)
    return atom__error(ATOM_EINVAL,
                       "atom_trace_writer_write: the names make a line of %zu bytes, longer than "
                       "a reader accepts (%zu)", line, ATOM__TRACE_MAX_LINE);
  if (w->err) return atom__error(w->err, "%s", w->msg);
  int rc = put_name(w, ATOM_SPACE_THREAD, ev->thread);
  if (!rc) rc = put(w, "|", 1);
  if (!rc) rc = put(w, op_names[kind], strlen(op_names[kind]));
  if (!rc && *suffix) rc = put(w, suffix, 4);
  if (!rc && has_target) {
    rc = put(w, "(", 1);
    if (!rc) rc = put_name(w, space, ev->target);
    if (!rc) rc = put(w, ")", 1);
  }
  if (!rc) {
    tmp[21] = '\n';
    char *d = u64_digits(tmp + 1, ev->loc);
    *--d = '|';
    rc = put(w, d, (size_t)(tmp + 22 - d));
  }
  return rc;
}

ATOM_API int atom_trace_writer_close(atom_trace_writer *w) {
  if (!w) return 0;
  int rc = w->err ? ATOM_EIO : flush(w);
  if (w->atb && atom__atb_writer_close(w->atb) && !rc) {
    rc = ATOM_EIO;
    snprintf(w->msg, sizeof w->msg, "%s", atom_last_error());
  }
  if (w->own_fd && close(w->fd) != 0 && !rc) rc = io_error(w, "close error", errno);
  if (rc) rc = atom__error(ATOM_EIO, "%s", w->msg);
  for (int i = 0; i < 3; i++) {
    wspace *sp = &w->spaces[i];
    for (size_t j = 0; j < sp->n; j++)
      atom__mem_free(&w->mem, sp->names[j].s, sp->names[j].len + 1);
    atom__mem_free(&w->mem, sp->names, sp->cap * sizeof *sp->names);
    atom__u64map_free(&sp->index, &w->mem);
  }
  atom__mem_strfree(&w->mem, w->display);
  atom__mem m = w->mem;
  atom__mem_free(&m, w, sizeof *w);
  return rc;
}
