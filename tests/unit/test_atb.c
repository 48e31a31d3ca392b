/* The binary trace format .atb (lib/trace/atb_*.c, doc/trace-format.md "Binary format"):
 * round trips against STD, every reader API on .atb input, streaming, and every kind of
 * corruption giving ATOM_EPARSE with a message that says where. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomicity.h"
#include "support/checksum.h"
#include "trace/atb_format.h"
#include "util.h"

Suite *atom_test_suite_atb(void);

/* ---- helpers --------------------------------------------------------------------------- */

static void temp_path(char *out, size_t cap, const char *suffix) {
  const char *dir = getenv("TMPDIR");
  static int seq;
  snprintf(out, cap, "%s/atom-atb-%ld-%d%s", dir && strlen(dir) < 60 ? dir : "/tmp",
           (long)getpid(), seq++, suffix);
}

/* A trace with every kind, both flags, unnamed and named keys, a large loc, #name directives,
 * and enough events for several blocks. Written through w. */
static void write_sample(atom_trace_writer *w, size_t n_extra) {
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_THREAD, 100, "main"), 0);
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 0xdeadbeef, "acct.balance"), 0);
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_LOC, 7, "deposit (bank.c:12)"), 0);
  const atom_event ev[] = {
      {ATOM_FORK, 0, 100, 200, 1},
      {ATOM_BEGIN, 0, 200, 0, 2},
      {ATOM_READ, ATOM_FLAG_ACQUIRE, 200, 0xdeadbeef, 7},
      {ATOM_WRITE, ATOM_FLAG_RELEASE, 200, 0xdeadbeef, ATB_LOC_MASK},
      {ATOM_ACQUIRE, 0, 200, 5, 3},
      {ATOM_WRITE, 0, 200, 6, 4},
      {ATOM_RELEASE, 0, 200, 5, 5},
      {ATOM_COMMIT, 0, 200, 6, 6},
      {ATOM_FENCE, 0, 200, 0, 7},
      {ATOM_END, 0, 200, 0, 8},
      {ATOM_JOIN, 0, 100, 200, 9},
  };
  for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
    ck_assert_int_eq(atom_trace_writer_write(w, &ev[i]), 0);
    if (i == 4)
      ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_LOCK, 5, "the lock"), 0);
  }
  for (size_t i = 0; i < n_extra; i++) {
    atom_event e = {ATOM_WRITE, 0, 300 + i % 5, 1000 + i % 97, i};
    ck_assert_int_eq(atom_trace_writer_write(w, &e), 0);
  }
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_THREAD, 999, "late thread"), 0);
}

/* Write the sample as .atb (suffix ".atb") or STD and return the file's bytes. */
static char *sample_bytes(const char *suffix, size_t n_extra, size_t *size) {
  char path[128];
  temp_path(path, sizeof path, suffix);
  atom_trace_writer *w = NULL;
  ck_assert_int_eq(atom_trace_writer_open(&w, path), 0);
  write_sample(w, n_extra);
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  char *data = tu_read_file(path, size);
  ck_assert_ptr_nonnull(data);
  unlink(path);
  return data;
}

typedef struct readout {
  int rc;
  size_t n;
  atom_event *ev;
  uint64_t *line;
  uint64_t consumed, total;
} readout;

static readout read_all(atom_trace_reader *r) {
  readout o = {0};
  size_t cap = 0;
  atom_event e;
  int rc;
  while ((rc = atom_trace_reader_next(r, &e)) == 1) {
    if (o.n == cap) {
      cap = cap ? cap * 2 : 64;
      o.ev = realloc(o.ev, cap * sizeof *o.ev);
      o.line = realloc(o.line, cap * sizeof *o.line);
      ck_assert_ptr_nonnull(o.ev);
      ck_assert_ptr_nonnull(o.line);
    }
    o.ev[o.n] = e;
    o.line[o.n++] = atom_trace_reader_line(r);
  }
  o.rc = rc;
  atom_trace_reader_progress(r, &o.consumed, &o.total);
  return o;
}

static void readout_free(readout *o) {
  free(o->ev);
  free(o->line);
}

static void reap(pid_t child) {
  kill(child, SIGKILL); /* it may be blocked writing what the reader refused */
  waitpid(child, NULL, 0);
}

/* Same events, names and directives from both readers. */
static void assert_same_trace(atom_trace_reader *a, atom_trace_reader *b) {
  readout x = read_all(a), y = read_all(b);
  ck_assert_int_eq(x.rc, 0);
  ck_assert_int_eq(y.rc, 0);
  ck_assert_uint_eq(x.n, y.n);
  ck_assert_int_eq(memcmp(x.ev, y.ev, x.n * sizeof *x.ev), 0);
  for (int what = ATOM_SPACE_THREAD; what <= ATOM_SPACE_LOCK; what++)
    for (uint64_t k = 1;; k++) {
      const char *p = atom_trace_reader_name(a, what, k), *q = atom_trace_reader_name(b, what, k);
      ck_assert_msg((p == NULL) == (q == NULL), "space %d key %" PRIu64, what, k);
      if (!p) break;
      ck_assert_str_eq(p, q);
    }
  for (size_t i = 0;; i++) {
    int s1, s2;
    uint64_t k1, k2;
    const char *t1, *t2;
    int h1 = atom_trace_reader_directive(a, i, &s1, &k1, &t1);
    int h2 = atom_trace_reader_directive(b, i, &s2, &k2, &t2);
    ck_assert_int_eq(h1, h2);
    if (!h1) {
      ck_assert_uint_eq(i, 3);
      break;
    }
    ck_assert_int_eq(s1, s2);
    ck_assert_uint_eq(k1, k2);
    ck_assert_str_eq(t1, t2);
  }
  readout_free(&x);
  readout_free(&y);
}

/* ---- round trips ----------------------------------------------------------------------- */

/* The same writer calls give .std and .atb files that read back as the same trace: events,
 * keys, names and directives; through memory, a file and a pipe. */
START_TEST(same_as_std) {
  size_t ns, na;
  char *std = sample_bytes(".std", 10000, &ns);
  char *atb = sample_bytes(".atb", 10000, &na);
  ck_assert_int_eq(memcmp(atb, ATB_MAGIC, ATB_MAGIC_LEN), 0);
  atom_trace_reader *a, *b;
  /* memory */
  ck_assert_int_eq(atom_trace_reader_open_memory(&a, std, ns, "s"), 0);
  ck_assert_int_eq(atom_trace_reader_open_memory(&b, atb, na, "a"), 0);
  assert_same_trace(a, b);
  atom_trace_reader_free(a);
  atom_trace_reader_free(b);
  /* a file */
  char path[128];
  temp_path(path, sizeof path, ".atb");
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(atb, 1, na, f), na);
  fclose(f);
  ck_assert_int_eq(atom_trace_reader_open_memory(&a, std, ns, "s"), 0);
  ck_assert_int_eq(atom_trace_reader_open(&b, path), 0);
  assert_same_trace(a, b);
  atom_trace_reader_free(a);
  atom_trace_reader_free(b);
  unlink(path);
  /* a pipe, in pieces of every size */
  pid_t child;
  int fd = tu_pipe_from_child(atb, na, &child);
  snprintf(path, sizeof path, "/dev/fd/%d", fd);
  ck_assert_int_eq(atom_trace_reader_open_memory(&a, std, ns, "s"), 0);
  ck_assert_int_eq(atom_trace_reader_open(&b, path), 0);
  close(fd);
  assert_same_trace(a, b);
  atom_trace_reader_free(a);
  atom_trace_reader_free(b);
  reap(child);
  free(std);
  free(atb);
}
END_TEST

/* An .atb regular file (sniffed with pread) and the same bytes through a pipe (sniffed at the
 * first read): the same events, lines and progress. A file cut short before it is opened is
 * read up to its real end and reported as truncated. */
START_TEST(file_and_piped) {
  size_t na;
  char *atb = sample_bytes(".atb", 30000, &na);
  char path[128], pipe_path[32];
  temp_path(path, sizeof path, ".atb");
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(atb, 1, na, f), na);
  fclose(f);
  atom_trace_reader *a, *b;
  pid_t child;
  int fd = tu_pipe_from_child(atb, na, &child);
  snprintf(pipe_path, sizeof pipe_path, "/dev/fd/%d", fd);
  ck_assert_int_eq(atom_trace_reader_open(&a, path), 0);
  ck_assert_int_eq(atom_trace_reader_open(&b, pipe_path), 0);
  close(fd);
  readout x = read_all(a), y = read_all(b);
  ck_assert_int_eq(x.rc, 0);
  ck_assert_int_eq(y.rc, 0);
  ck_assert_uint_eq(x.n, 30011);
  ck_assert_uint_eq(x.n, y.n);
  ck_assert_int_eq(memcmp(x.ev, y.ev, x.n * sizeof *x.ev), 0);
  ck_assert_int_eq(memcmp(x.line, y.line, x.n * sizeof *x.line), 0);
  ck_assert_uint_eq(x.consumed, na);
  ck_assert_uint_eq(x.total, na);
  ck_assert_uint_eq(y.consumed, na);
  readout_free(&x);
  readout_free(&y);
  atom_trace_reader_free(a);
  atom_trace_reader_free(b);
  reap(child);
  /* Cut in the middle of a block: the events of the whole blocks, then the error. */
  ck_assert_int_eq(truncate(path, (off_t)(na / 2)), 0);
  ck_assert_int_eq(atom_trace_reader_open(&a, path), 0);
  x = read_all(a);
  ck_assert_int_eq(x.rc, ATOM_EPARSE);
  ck_assert_uint_gt(x.n, 0);
  ck_assert_uint_lt(x.n, 30011);
  readout_free(&x);
  atom_trace_reader_free(a);
  unlink(path);
  free(atb);
}
END_TEST

/* Opening a pipe reads nothing (a terminal does not wait for input at open); the format is
 * told at the first read, and .atb through the pipe works. */
START_TEST(open_does_not_wait) {
  size_t na;
  char *atb = sample_bytes(".atb", 100, &na);
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  char path[32];
  snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
  atom_trace_reader *r;
  /* Nothing written yet: an open that read would block here for ever (the test's timeout). */
  ck_assert_int_eq(atom_trace_reader_open(&r, path), 0);
  close(p[0]);
  tu_write_fully(p[1], atb, na);
  close(p[1]);
  readout x = read_all(r);
  ck_assert_int_eq(x.rc, 0);
  ck_assert_uint_eq(x.n, 111);
  readout_free(&x);
  atom_trace_reader_free(r);
  free(atb);
}
END_TEST

static size_t directive_count(const atom_trace_reader *r) {
  size_t n = 0;
  int sp;
  uint64_t k;
  const char *t;
  while (atom_trace_reader_directive(r, n, &sp, &k, &t)) n++;
  return n;
}

/* A directive is handed on where it was: after the same events as from STD. */
START_TEST(directive_places) {
  size_t ns, na;
  char *std = sample_bytes(".std", 9000, &ns);
  char *atb = sample_bytes(".atb", 9000, &na);
  atom_trace_reader *a, *b;
  ck_assert_int_eq(atom_trace_reader_open_memory(&a, std, ns, "s"), 0);
  ck_assert_int_eq(atom_trace_reader_open_memory(&b, atb, na, "a"), 0);
  atom_event e1, e2;
  int r1, r2;
  do {
    r1 = atom_trace_reader_next(a, &e1);
    r2 = atom_trace_reader_next(b, &e2);
    ck_assert_int_eq(r1, r2);
    ck_assert_uint_eq(directive_count(a), directive_count(b));
  } while (r1 == 1);
  ck_assert_uint_eq(directive_count(b), 3);
  atom_trace_reader_free(a);
  atom_trace_reader_free(b);
  /* the same through atom_trace_feed's batches: all three registered */
  ck_assert_int_eq(atom_trace_reader_open_memory(&b, atb, na, "a"), 0);
  atom_session *s = tu_session(NULL);
  ck_assert_int_eq(atom_trace_feed(s, b, 0, NULL, NULL, NULL), 0);
  ck_assert_uint_eq(directive_count(b), 3);
  atom_session_free(s);
  atom_trace_reader_free(b);
  free(std);
  free(atb);
}
END_TEST

/* Lines are event ordinals; the first events and names are those written; progress ends at
 * the size; a big loc survives. */
START_TEST(reader_apis) {
  size_t na;
  char *atb = sample_bytes(".atb", 5000, &na);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, atb, na, "x.atb"), 0);
  readout o = read_all(r);
  ck_assert_int_eq(o.rc, 0);
  ck_assert_uint_eq(o.n, 11 + 5000);
  for (size_t i = 0; i < o.n; i++) ck_assert_uint_eq(o.line[i], i + 1);
  ck_assert_uint_eq(o.consumed, na);
  ck_assert_uint_eq(o.total, na);
  ck_assert_uint_eq(o.ev[0].kind, ATOM_FORK);
  ck_assert_uint_eq(o.ev[0].thread, 1);
  ck_assert_uint_eq(o.ev[0].target, 2);
  ck_assert_uint_eq(o.ev[2].flags, ATOM_FLAG_ACQUIRE);
  ck_assert_uint_eq(o.ev[3].flags, ATOM_FLAG_RELEASE);
  ck_assert_uint_eq(o.ev[3].loc, ATB_LOC_MASK);
  ck_assert_str_eq(atom_trace_reader_name(r, ATOM_SPACE_THREAD, 1), "main");
  ck_assert_str_eq(atom_trace_reader_name(r, ATOM_SPACE_THREAD, 2), "T200");
  ck_assert_str_eq(atom_trace_reader_name(r, ATOM_SPACE_VAR, 1), "acct.balance");
  ck_assert_str_eq(atom_trace_reader_name(r, ATOM_SPACE_LOCK, 1), "L5");
  ck_assert_ptr_null(atom_trace_reader_name(r, ATOM_SPACE_LOCK, 2));
  ck_assert_int_eq(atom_trace_reader_next(r, &o.ev[0]), 0); /* the end stays the end */
  readout_free(&o);
  atom_trace_reader_free(r);
  free(atb);
}
END_TEST

/* atom_trace_feed() of .atb gives the verdicts of the same trace as STD. */
START_TEST(feed_same_verdict) {
  static const char *const text =
      "#name var x the balance\nt1|begin|0\nt1|r(x)|1\nt2|w(x)|2\nt1|w(x)|3\nt1|end|4\n";
  char in[128], out[128];
  temp_path(in, sizeof in, ".std");
  temp_path(out, sizeof out, ".atb");
  FILE *f = fopen(in, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  atom_trace_reader *r;
  atom_trace_writer *w;
  ck_assert_int_eq(atom_trace_reader_open(&r, in), 0);
  ck_assert_int_eq(atom_trace_writer_open(&w, out), 0);
  atom_event e;
  while (atom_trace_reader_next(r, &e) == 1) {
    for (int what = 1; what <= 3; what++)
      for (uint64_t k = 1; atom_trace_reader_name(r, what, k); k++)
        ck_assert_int_eq(atom_trace_writer_set_name(w, what, k, atom_trace_reader_name(r, what, k)), 0);
    ck_assert_int_eq(atom_trace_writer_write(w, &e), 0);
  }
  atom_trace_reader_free(r);
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  atom_session *s1 = tu_session((const char *const[]){"aerodrome", "velodrome", NULL});
  atom_session *s2 = tu_session((const char *const[]){"aerodrome", "velodrome", NULL});
  ck_assert_int_eq(tu_feed_std(s1, text, NULL), 0);
  ck_assert_int_eq(atom_trace_reader_open(&r, out), 0);
  ck_assert_int_eq(atom_trace_feed(s2, r, 0, NULL, NULL, NULL), 0);
  ck_assert_int_eq(atom_finish(s2), 0);
  for (size_t ci = 0; ci < 2; ci++) {
    ck_assert_int_eq(tu_first_violation(s1, ci), 3);
    ck_assert_int_eq(tu_first_violation(s2, ci), tu_first_violation(s1, ci));
    ck_assert_uint_eq(tu_report_count(s2, ci), tu_report_count(s1, ci));
  }
  atom_trace_reader_free(r);
  atom_session_free(s1);
  atom_session_free(s2);
  unlink(in);
  unlink(out);
}
END_TEST

START_TEST(writer_refuses) {
  char path[128];
  temp_path(path, sizeof path, ".atb");
  atom_trace_writer *w;
  ck_assert_int_eq(atom_trace_writer_open(&w, path), 0);
  atom_event e = {ATOM_READ, 0, 1, 1, ATB_LOC_MASK + 1};
  ck_assert_int_eq(atom_trace_writer_write(w, &e), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "56 bits"));
  e.loc = 0;
  e.kind = 11;
  ck_assert_int_eq(atom_trace_writer_write(w, &e), ATOM_EINVAL);
  e.kind = ATOM_BEGIN;
  e.flags = ATOM_FLAG_ACQUIRE;
  ck_assert_int_eq(atom_trace_writer_write(w, &e), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 1, "a b"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  /* An empty trace is a header and an end block, and reads as no events. */
  size_t n;
  char *data = tu_read_file(path, &n);
  ck_assert_uint_eq(n, ATB_HEADER_SIZE + ATB_BLOCK_HEADER);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, data, n, "e.atb"), 0);
  ck_assert_int_eq(atom_trace_reader_next(r, &e), 0);
  atom_trace_reader_free(r);
  free(data);
  unlink(path);
}
END_TEST

/* ---- corruption ------------------------------------------------------------------------ */

/* Read data as .atb through memory and a pipe: both must fail with `err` and a message
 * containing `expect`. */
static void expect_error(const unsigned char *data, size_t size, int err, const char *expect) {
  for (int via = 0; via < 2; via++) {
    atom_trace_reader *r;
    pid_t child = 0;
    if (via == 0) {
      ck_assert_int_eq(atom_trace_reader_open_memory(&r, (const char *)data, size, "bad.atb"), 0);
    } else {
      int fd = tu_pipe_from_child((const char *)data, size, &child);
      char path[32];
      snprintf(path, sizeof path, "/dev/fd/%d", fd);
      ck_assert_int_eq(atom_trace_reader_open(&r, path), 0);
      close(fd);
    }
    readout o = read_all(r);
    ck_assert_msg(o.rc == err, "via %d, size %zu: rc %d (%s), expected %d", via, size, o.rc,
                  atom_last_error(), err);
    ck_assert_msg(strstr(atom_last_error(), expect), "via %d: '%s' lacks '%s'", via,
                  atom_last_error(), expect);
    /* sticky, at the same place */
    atom_event e;
    ck_assert_int_eq(atom_trace_reader_next(r, &e), err);
    ck_assert_uint_eq(atom_trace_reader_line(r), o.n + 1);
    readout_free(&o);
    atom_trace_reader_free(r);
    if (child) reap(child);
  }
}

/* A file of one data block with the given entries and events (checksummed), then an end
 * block. Returns its size. */
static size_t build(unsigned char *out, const unsigned char *names, size_t names_len,
                    const unsigned char *events, uint32_t n_events) {
  memcpy(out, ATB_MAGIC, ATB_MAGIC_LEN);
  atom__store_le32(out + 8, ATB_VERSION);
  atom__store_le32(out + 12, 0);
  unsigned char *b = out + ATB_HEADER_SIZE;
  size_t padded = (names_len + 7) & ~(size_t)7;
  memset(b + ATB_BLOCK_HEADER, 0, padded);
  memcpy(b + ATB_BLOCK_HEADER, names, names_len);
  memcpy(b + ATB_BLOCK_HEADER + padded, events, (size_t)n_events * ATB_RECORD);
  atom__store_le32(b, ATB_BLOCK_DATA);
  atom__store_le32(b + 8, (uint32_t)padded);
  atom__store_le32(b + 12, n_events);
  size_t payload = padded + (size_t)n_events * ATB_RECORD;
  atom__store_le32(b + 4, atom__checksum32(ATB_BLOCK_DATA, b + 8, 8 + payload));
  unsigned char *e = b + ATB_BLOCK_HEADER + payload;
  memset(e, 0, ATB_BLOCK_HEADER);
  atom__store_le32(e, ATB_BLOCK_END);
  atom__store_le32(e + 4, atom__checksum32(ATB_BLOCK_END, e + 8, 8));
  return (size_t)(e + ATB_BLOCK_HEADER - out);
}

static size_t entry(unsigned char *p, unsigned what, unsigned space, uint64_t key, const char *s) {
  size_t len = strlen(s);
  memset(p, 0, ATB_ENTRY_HEADER);
  p[0] = (unsigned char)what;
  p[1] = (unsigned char)space;
  atom__store_le32(p + 4, (uint32_t)len);
  atom__store_le64(p + 8, key);
  memcpy(p + ATB_ENTRY_HEADER, s, len);
  return ATB_ENTRY_HEADER + len;
}

static void record(unsigned char *p, uint32_t kind, uint32_t flags, uint32_t thread,
                   uint32_t target, uint64_t loc) {
  atom__store_le32(p, thread);
  atom__store_le32(p + 4, target);
  atom__store_le64(p + 8, loc | (uint64_t)kind << 56 | (uint64_t)flags << 60);
}

START_TEST(hand_built) {
  unsigned char names[256], ev[4 * ATB_RECORD], file[1024];
  size_t nl = entry(names, ATB_ENTRY_NAME, ATOM_SPACE_THREAD, 1, "t");
  nl += entry(names + nl, ATB_ENTRY_NAME, ATOM_SPACE_VAR, 1, "x");
  record(ev, ATOM_WRITE, 0, 1, 1, 5);
  record(ev + ATB_RECORD, ATOM_BEGIN, 0, 1, 0, 6);
  /* the valid file reads */
  size_t n = build(file, names, nl, ev, 2);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, (const char *)file, n, "ok.atb"), 0);
  readout o = read_all(r);
  ck_assert_int_eq(o.rc, 0);
  ck_assert_uint_eq(o.n, 2);
  readout_free(&o);
  atom_trace_reader_free(r);
  /* each bad record, in a block whose checksum is right */
  record(ev + ATB_RECORD, ATOM_READ, 0, 2, 1, 6);
  n = build(file, names, nl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "event 2 (block 1): thread key out of range (2)");
  record(ev + ATB_RECORD, ATOM_READ, 0, 1, 2, 6);
  n = build(file, names, nl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "target key out of range (2)");
  record(ev + ATB_RECORD, ATOM_ACQUIRE, 0, 1, 1, 6); /* no lock named */
  n = build(file, names, nl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "target key out of range (1)");
  record(ev + ATB_RECORD, ATOM_END, 0, 1, 1, 6);
  n = build(file, names, nl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "target given to an event without one");
  record(ev + ATB_RECORD, 11, 0, 1, 1, 6);
  n = build(file, names, nl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "unknown event kind (11)");
  record(ev + ATB_RECORD, 0, 0, 1, 1, 6);
  n = build(file, names, nl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "unknown event kind (0)");
  record(ev + ATB_RECORD, ATOM_WRITE, ATOM_FLAG_ACQUIRE, 1, 1, 6);
  n = build(file, names, nl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "invalid flags (1)");
  record(ev + ATB_RECORD, ATOM_BEGIN, 0, 1, 0, 6);
  /* bad entries */
  unsigned char bad[256];
  size_t bl = entry(bad, ATB_ENTRY_NAME, ATOM_SPACE_THREAD, 2, "t");
  n = build(file, bad, bl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "gives key 2, expected 1");
  bl = entry(bad, ATB_ENTRY_NAME, ATOM_SPACE_THREAD, 1, "a|b");
  n = build(file, bad, bl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "name entry at byte 32");
  bl = entry(bad, ATB_ENTRY_DIRECTIVE, ATOM_SPACE_VAR, 1, "display");
  n = build(file, bad, bl, ev, 0);
  expect_error(file, n, ATOM_EPARSE, "directive at byte 32: key out of range");
  bl = entry(bad, ATB_ENTRY_DIRECTIVE, ATOM_SPACE_LOC, 1, "a");
  bl += entry(bad + bl, ATB_ENTRY_DIRECTIVE, ATOM_SPACE_LOC, 1, "b");
  bad[2] = 1; /* the first before record 1, the second before record 0 */
  n = build(file, bad, bl, ev, 2);
  expect_error(file, n, ATOM_EPARSE, "directive at byte 49: position out of order");
  bl = entry(bad, 7, ATOM_SPACE_VAR, 1, "x");
  n = build(file, bad, bl, ev, 0);
  expect_error(file, n, ATOM_EPARSE, "unknown name entry 7/2");
  bl = entry(bad, ATB_ENTRY_NAME, ATOM_SPACE_THREAD, 1, "t");
  atom__store_le32(bad + 4, 200); /* longer than the block */
  n = build(file, bad, bl, ev, 0);
  expect_error(file, n, ATOM_EPARSE, "overruns its block");
  /* data after the end block */
  n = build(file, names, nl, ev, 2);
  file[n] = 0;
  expect_error(file, n + 1, ATOM_EPARSE, "data after the end block");
}
END_TEST

START_TEST(corrupt_files) {
  size_t na;
  unsigned char *atb = (unsigned char *)sample_bytes(".atb", 6000, &na);
  unsigned char *copy = malloc(na);
  ck_assert_ptr_nonnull(copy);
  /* truncated anywhere: an error, never a crash nor a silent end (all lengths through
   * memory, a sample through a pipe) */
  for (size_t len = 0; len < na; len++) {
    atom_trace_reader *r;
    ck_assert_int_eq(atom_trace_reader_open_memory(&r, (const char *)atb, len, "t.atb"), 0);
    readout o = read_all(r);
    if (len >= 4) { /* shorter is not .atb: read as STD, which rejects the bytes */
      ck_assert_msg(o.rc == ATOM_EPARSE, "length %zu: rc %d", len, o.rc);
      ck_assert_msg(strstr(atom_last_error(), len < ATB_HEADER_SIZE ? "truncated .atb header"
                                                                      : "truncated"),
                    "length %zu: %s", len, atom_last_error());
    }
    readout_free(&o);
    atom_trace_reader_free(r);
    if (len > 2 * ATB_HEADER_SIZE) len += 293; /* every length near the start, then a sample */
  }
  expect_error(atb, 10, ATOM_EPARSE, "truncated .atb header (10 of 16 bytes)");
  expect_error(atb, ATB_HEADER_SIZE + 5, ATOM_EPARSE, "block 1 at byte 16 has 5 of 16 header bytes");
  expect_error(atb, ATB_HEADER_SIZE + 100, ATOM_EPARSE, "truncated: block 1 at byte 16 has 100 of");
  expect_error(atb, na - ATB_BLOCK_HEADER, ATOM_EPARSE, "the end block is missing");
  /* every flipped bit of a data block is caught by the checksum (one per byte, sampled) */
  for (size_t at = ATB_HEADER_SIZE + 4; at < na - ATB_BLOCK_HEADER; at += 331) {
    if (at >= ATB_HEADER_SIZE + 4 && at < ATB_HEADER_SIZE + 8) continue; /* the sum itself */
    memcpy(copy, atb, na);
    copy[at] ^= (unsigned char)(1u << (at % 8));
    atom_trace_reader *r;
    ck_assert_int_eq(atom_trace_reader_open_memory(&r, (const char *)copy, na, "c.atb"), 0);
    readout o = read_all(r);
    ck_assert_msg(o.rc == ATOM_EPARSE, "flip at %zu: rc %d", at, o.rc);
    readout_free(&o);
    atom_trace_reader_free(r);
  }
  memcpy(copy, atb, na);
  copy[ATB_HEADER_SIZE + ATB_BLOCK_HEADER + 3] ^= 0x40;
  expect_error(copy, na, ATOM_EPARSE, "block 1 at byte 16: checksum mismatch");
  memcpy(copy, atb, na);
  copy[6] = 'x';
  expect_error(copy, na, ATOM_EPARSE, "bad .atb magic");
  memcpy(copy, atb, na);
  copy[8] = 2;
  expect_error(copy, na, ATOM_EPARSE, ".atb version 2 is not supported");
  memcpy(copy, atb, na);
  copy[12] = 1;
  expect_error(copy, na, ATOM_EPARSE, "unknown .atb header flags 0x1");
  memcpy(copy, atb, na);
  copy[ATB_HEADER_SIZE] = 9;
  expect_error(copy, na, ATOM_EPARSE, "block 1 at byte 16: unknown block type 9");
  memcpy(copy, atb, na);
  atom__store_le32(copy + ATB_HEADER_SIZE + 12, ATB_MAX_EVENTS + 1);
  expect_error(copy, na, ATOM_EPARSE, "bad sizes");
  free(copy);
  free(atb);
}
END_TEST

/* ---- reading in a thread of its own ----------------------------------------------------- */

/* Everything a reading gives, for comparing a serial with a threaded one. */
typedef struct fullread {
  readout o;
  size_t *dirs; /* directives known after each event */
  char msg[600];
  char *names; /* "space key name" and "#space key text" lines */
} fullread;

/* Read data (via 0: memory, 1: a file, 2: a pipe) with `threads` threads. */
static void read_threads(const unsigned char *data, size_t size, int via, unsigned threads,
                         fullread *f) {
  atom_trace_reader *r;
  pid_t child = 0;
  char path[128] = "";
  if (via == 0) {
    ck_assert_int_eq(atom_trace_reader_open_memory(&r, (const char *)data, size, "x.atb"), 0);
  } else if (via == 1) {
    temp_path(path, sizeof path, ".atb");
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(data, 1, size, fp), size);
    fclose(fp);
    ck_assert_int_eq(atom_trace_reader_open(&r, path), 0);
  } else {
    int fd = tu_pipe_from_child((const char *)data, size, &child);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    ck_assert_int_eq(atom_trace_reader_open(&r, path), 0);
    close(fd);
    path[0] = '\0';
  }
  ck_assert_int_eq(atom_trace_reader_set_threads(r, threads), 0);
  memset(f, 0, sizeof *f);
  size_t cap = 0;
  atom_event e;
  int rc;
  while ((rc = atom_trace_reader_next(r, &e)) == 1) {
    if (f->o.n == cap) {
      cap = cap ? cap * 2 : 64;
      f->o.ev = realloc(f->o.ev, cap * sizeof *f->o.ev);
      f->o.line = realloc(f->o.line, cap * sizeof *f->o.line);
      f->dirs = realloc(f->dirs, cap * sizeof *f->dirs);
      ck_assert(f->o.ev && f->o.line && f->dirs);
    }
    f->o.ev[f->o.n] = e;
    f->dirs[f->o.n] = directive_count(r);
    f->o.line[f->o.n++] = atom_trace_reader_line(r);
  }
  f->o.rc = rc;
  /* The message without the input's name, which differs by `via`. */
  const char *m = rc ? strstr(atom_last_error(), ": ") : NULL;
  snprintf(f->msg, sizeof f->msg, "%s @%" PRIu64, m ? m + 2 : rc ? atom_last_error() : "",
           atom_trace_reader_line(r));
  ck_assert_int_eq(atom_trace_reader_next(r, &e), rc); /* the end or the error again */
  atom_trace_reader_progress(r, &f->o.consumed, &f->o.total);
  size_t len = 0, ncap = 256;
  f->names = malloc(ncap);
  ck_assert_ptr_nonnull(f->names);
  f->names[0] = '\0';
  for (int what = ATOM_SPACE_THREAD; what <= ATOM_SPACE_LOCK; what++)
    for (uint64_t k = 1; atom_trace_reader_name(r, what, k); k++) {
      const char *nm = atom_trace_reader_name(r, what, k);
      if (len + strlen(nm) + 64 > ncap) {
        ncap = (len + strlen(nm) + 64) * 2;
        f->names = realloc(f->names, ncap);
        ck_assert_ptr_nonnull(f->names);
      }
      len += (size_t)snprintf(f->names + len, ncap - len, "%d %" PRIu64 " %s\n", what, k, nm);
    }
  int sp;
  uint64_t key;
  const char *text;
  for (size_t i = 0; atom_trace_reader_directive(r, i, &sp, &key, &text); i++) {
    if (len + strlen(text) + 64 > ncap) {
      ncap = (len + strlen(text) + 64) * 2;
      f->names = realloc(f->names, ncap);
      ck_assert_ptr_nonnull(f->names);
    }
    len += (size_t)snprintf(f->names + len, ncap - len, "#%d %" PRIu64 " %s\n", sp, key, text);
  }
  atom_trace_reader_free(r);
  if (child) reap(child);
  if (path[0]) unlink(path);
}

static void fullread_free(fullread *f) {
  readout_free(&f->o);
  free(f->dirs);
  free(f->names);
}

static void ck_same_read(const fullread *a, const fullread *b, const char *what) {
  ck_assert_msg(a->o.rc == b->o.rc, "%s: rc %d, not %d", what, b->o.rc, a->o.rc);
  ck_assert_msg(!strcmp(a->msg, b->msg), "%s: '%s', not '%s'", what, b->msg, a->msg);
  ck_assert_msg(a->o.n == b->o.n, "%s: %zu events, not %zu", what, b->o.n, a->o.n);
  ck_assert_msg(!a->o.n || !memcmp(a->o.ev, b->o.ev, a->o.n * sizeof *a->o.ev), "%s: events",
                what);
  ck_assert_msg(!a->o.n || !memcmp(a->o.line, b->o.line, a->o.n * sizeof *a->o.line),
                "%s: lines", what);
  ck_assert_msg(!a->o.n || !memcmp(a->dirs, b->dirs, a->o.n * sizeof *a->dirs),
                "%s: directive places", what);
  ck_assert_msg(!strcmp(a->names, b->names), "%s: names or directives", what);
  ck_assert_msg(a->o.consumed == b->o.consumed && a->o.total == b->o.total, "%s: progress",
                what);
}

/* With threads, a thread reads and decodes ahead (memory and files; a pipe is read serially):
 * the same events, lines, names, directives (in the same places), errors and messages as the
 * serial reading, through memory, a file and a pipe; for whole files of one to several hand-offs, truncated and corrupt copies. */
START_TEST(threaded_same_as_serial) {
  static const size_t extra[] = {0, 9000, 40000};
  for (size_t x = 0; x < sizeof extra / sizeof extra[0]; x++) {
    size_t na;
    unsigned char *atb = (unsigned char *)sample_bytes(".atb", extra[x], &na);
    unsigned char *copy = malloc(na);
    ck_assert_ptr_nonnull(copy);
    for (int variant = 0; variant < 8; variant++) {
      size_t len = na;
      memcpy(copy, atb, na);
      if (variant == 1) len = na / 2;                    /* truncated in a block */
      if (variant == 2) len = na - ATB_BLOCK_HEADER;     /* no end block */
      if (variant == 3) copy[na / 3] ^= 0x10;            /* a checksum mismatch */
      if (variant == 4) copy[na - 1] ^= 1;               /* a bad end block */
      if (variant == 5) len = ATB_HEADER_SIZE + 3;       /* a truncated block header */
      if (variant == 6) copy[8] = 2;                     /* a version not read */
      if (variant == 7) len = ATB_HEADER_SIZE / 2 + 4;   /* a truncated header */
      fullread ref;
      read_threads(copy, len, 0, 1, &ref);
      for (int via = 0; via < 3; via++)
        for (unsigned threads = 2; threads <= 3; threads++) {
          fullread par;
          char what[96];
          snprintf(what, sizeof what, "%zu extra, variant %d, via %d, %u threads", extra[x],
                   variant, via, threads);
          read_threads(copy, len, via, threads, &par);
          if (via == 2) { /* a pipe has no size: the progress differs */
            par.o.consumed = ref.o.consumed;
            par.o.total = ref.o.total;
          }
          ck_same_read(&ref, &par, what);
          fullread_free(&par);
        }
      fullread_free(&ref);
    }
    free(copy);
    free(atb);
  }
}
END_TEST

/* Through atom_trace_feed(), threaded: the same verdict and every directive registered. */
START_TEST(threaded_feed) {
  size_t na;
  char *atb = sample_bytes(".atb", 40000, &na);
  for (unsigned threads = 1; threads <= 2; threads++) {
    atom_trace_reader *r;
    ck_assert_int_eq(atom_trace_reader_open_memory(&r, atb, na, "a"), 0);
    ck_assert_int_eq(atom_trace_reader_set_threads(r, threads), 0);
    atom_session *s = tu_session(NULL);
    uint64_t pushed = 0, total = 0;
    int rc;
    /* In pieces of 777 events: hand-offs split between batches. */
    while ((rc = atom_trace_feed(s, r, 777, &pushed, NULL, NULL)) == 1) total += pushed;
    ck_assert_int_eq(rc, 0);
    total += pushed;
    ck_assert_uint_eq(total, 40011);
    ck_assert_uint_eq(directive_count(r), 3);
    ck_assert_uint_eq(atom_trace_reader_line(r), 40011);
    atom_session_free(s);
    atom_trace_reader_free(r);
  }
  free(atb);
}
END_TEST

START_TEST(checksum_properties) {
  unsigned char buf[64] = {0};
  uint32_t zero = atom__checksum32(1, buf, 64);
  ck_assert_uint_ne(zero, atom__checksum32(2, buf, 64)); /* the seed counts */
  ck_assert_uint_ne(zero, atom__checksum32(1, buf, 56)); /* the length counts */
  for (int bit = 0; bit < 64 * 8; bit++) {
    buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    ck_assert_uint_ne(atom__checksum32(1, buf, 64), zero);
    buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
  }
  /* pinned: the checksum is part of the file format */
  ck_assert_uint_eq(atom__checksum32(ATB_BLOCK_END, buf, 8), atom__checksum32(2, buf, 8));
}
END_TEST

Suite *atom_test_suite_atb(void) {
  Suite *s = suite_create("atb");
  TCase *tc = tcase_create("atb");
  tcase_add_test(tc, same_as_std);
  tcase_add_test(tc, file_and_piped);
  tcase_add_test(tc, open_does_not_wait);
  tcase_add_test(tc, reader_apis);
  tcase_add_test(tc, directive_places);
  tcase_add_test(tc, feed_same_verdict);
  tcase_add_test(tc, writer_refuses);
  tcase_add_test(tc, hand_built);
  tcase_add_test(tc, corrupt_files);
  tcase_add_test(tc, checksum_properties);
  tcase_add_test(tc, threaded_same_as_serial);
  tcase_add_test(tc, threaded_feed);
  suite_add_tcase(s, tc);
  return s;
}
