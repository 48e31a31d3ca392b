/* STD trace reader, writer and atom_trace_feed() (lib/trace, doc/trace-format.md). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomicity.h"
#include "trace/reader_state.h"
#include "trace/std_reader.h"
#include "util.h"

Suite *atom_test_suite_trace(void);

/* ---- helpers --------------------------------------------------------------------------- */

/* How a test input reaches the reader: every malformed case runs through all four. */
enum { VIA_MEMORY, VIA_FILE, VIA_PIPE, VIA_STDIN, VIA_COUNT };
static const char *const via_name[] = {"memory", "file", "pipe", "stdin"};

typedef struct opened {
  atom_trace_reader *r;
  char path[64]; /* temporary file to remove, or "" */
  pid_t child;   /* writer process of a pipe, or 0 */
  int saved_stdin;
} opened;

static int open_via(int via, const char *data, size_t size, opened *o) {
  memset(o, 0, sizeof *o);
  o->saved_stdin = -1;
  switch (via) {
    case VIA_MEMORY: return atom_trace_reader_open_memory(&o->r, data, size, "mem.std");
    case VIA_FILE: {
      const char *dir = getenv("TMPDIR");
      snprintf(o->path, sizeof o->path, "%s/atom-trace-XXXXXX",
               dir && strlen(dir) < 40 ? dir : "/tmp");
      int fd = mkstemp(o->path);
      ck_assert_int_ge(fd, 0);
      tu_write_fully(fd, data, size);
      close(fd);
      return atom_trace_reader_open(&o->r, o->path);
    }
    case VIA_PIPE: {
      int fd = tu_pipe_from_child(data, size, &o->child);
      char path[32];
      snprintf(path, sizeof path, "/dev/fd/%d", fd);
      int rc = atom_trace_reader_open(&o->r, path);
      close(fd);
      return rc;
    }
    default: {
      int fd = tu_pipe_from_child(data, size, &o->child);
      o->saved_stdin = dup(0);
      ck_assert_int_ge(o->saved_stdin, 0);
      ck_assert_int_eq(dup2(fd, 0), 0);
      close(fd);
      return atom_trace_reader_open(&o->r, "-");
    }
  }
}

static void close_via(opened *o) {
  atom_trace_reader_free(o->r);
  o->r = NULL;
  if (o->saved_stdin >= 0) {
    dup2(o->saved_stdin, 0);
    close(o->saved_stdin);
  }
  if (o->child > 0) {
    kill(o->child, SIGKILL); /* it may still be blocked writing what the reader refused */
    waitpid(o->child, NULL, 0);
  }
  if (o->path[0]) unlink(o->path);
}

typedef struct outcome {
  int rc;         /* 0 at end, or the error */
  size_t n;       /* events read */
  atom_event *ev; /* the events (owned) */
  uint64_t *line; /* line of each */
  char msg[600];  /* the error message, after "name:" */
  uint64_t line_at_end;
} outcome;

static void read_all(atom_trace_reader *r, outcome *out) {
  memset(out, 0, sizeof *out);
  size_t cap = 0;
  for (;;) {
    atom_event ev;
    int rc = atom_trace_reader_next(r, &ev);
    if (rc != 1) {
      out->rc = rc;
      if (rc < 0) {
        const char *m = atom_last_error();
        const char *colon = strchr(m, ':');
        snprintf(out->msg, sizeof out->msg, "%s", colon ? colon + 1 : m);
      }
      break;
    }
    if (out->n == cap) {
      cap = cap ? cap * 2 : 64;
      out->ev = realloc(out->ev, cap * sizeof *out->ev);
      out->line = realloc(out->line, cap * sizeof *out->line);
      ck_assert_ptr_nonnull(out->ev);
      ck_assert_ptr_nonnull(out->line);
    }
    out->line[out->n] = atom_trace_reader_line(r);
    out->ev[out->n++] = ev;
  }
  out->line_at_end = atom_trace_reader_line(r);
}

static void outcome_free(outcome *o) {
  free(o->ev);
  free(o->line);
}

static void read_text_via(int via, const char *text, size_t size, outcome *out) {
  opened o;
  ck_assert_int_eq(open_via(via, text, size, &o), 0);
  read_all(o.r, out);
  close_via(&o);
}

static void ck_event(const atom_event *e, uint32_t kind, uint64_t thread, uint64_t target,
                     uint64_t loc) {
  ck_assert_uint_eq(e->kind, kind);
  ck_assert_uint_eq(e->flags, 0);
  ck_assert_uint_eq(e->thread, thread);
  ck_assert_uint_eq(e->target, target);
  ck_assert_uint_eq(e->loc, loc);
}

/* ---- reading well-formed input --------------------------------------------------------- */

static const char basic_trace[] =
    "# a comment\n"
    "main|fork(t1)|1\n"
    "t1|begin|2\n"
    "t1|r(x)|3\n"
    "\n"
    "t1|w(y)|4\n"
    "t1|acq(m)|5\n"
    "t1|rel(m)|6\n"
    "t1|end|7\n"
    "main|join(t1)|8\n"
    "main|fence|9\n"
    "main|w(x)|10\n"
    "main|commit(x)|18446744073709551615\n";

START_TEST(basic_all_ops) {
  for (int via = 0; via < VIA_COUNT; via++) {
    outcome o;
    opened op;
    ck_assert_int_eq(open_via(via, basic_trace, strlen(basic_trace), &op), 0);
    read_all(op.r, &o);
    ck_assert_msg(o.rc == 0, "%s: %s", via_name[via], o.msg);
    ck_assert_uint_eq(o.n, 11);
    /* threads: main=1, t1=2 (fork target shares the thread space); vars x=1, y=2; lock m=1 */
    ck_event(&o.ev[0], ATOM_FORK, 1, 2, 1);
    ck_event(&o.ev[1], ATOM_BEGIN, 2, 0, 2);
    ck_event(&o.ev[2], ATOM_READ, 2, 1, 3);
    ck_event(&o.ev[3], ATOM_WRITE, 2, 2, 4);
    ck_event(&o.ev[4], ATOM_ACQUIRE, 2, 1, 5);
    ck_event(&o.ev[5], ATOM_RELEASE, 2, 1, 6);
    ck_event(&o.ev[6], ATOM_END, 2, 0, 7);
    ck_event(&o.ev[7], ATOM_JOIN, 1, 2, 8);
    ck_event(&o.ev[8], ATOM_FENCE, 1, 0, 9);
    ck_event(&o.ev[9], ATOM_WRITE, 1, 1, 10);
    ck_event(&o.ev[10], ATOM_COMMIT, 1, 1, UINT64_MAX);
    ck_assert_uint_eq(o.line[0], 2);
    ck_assert_uint_eq(o.line[3], 6); /* after the blank line */
    ck_assert_uint_eq(o.line[10], 13);
    ck_assert_uint_eq(o.line_at_end, 13);
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_THREAD, 1), "main");
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_THREAD, 2), "t1");
    ck_assert_ptr_null(atom_trace_reader_name(op.r, ATOM_SPACE_THREAD, 3));
    ck_assert_ptr_null(atom_trace_reader_name(op.r, ATOM_SPACE_THREAD, 0));
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_VAR, 1), "x");
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_VAR, 2), "y");
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_LOCK, 1), "m");
    ck_assert_ptr_null(atom_trace_reader_name(op.r, 0, 1));
    ck_assert_ptr_null(atom_trace_reader_name(op.r, 4, 1));
    ck_assert_ptr_null(atom_trace_reader_name(NULL, 1, 1));
    /* end of input is sticky too */
    atom_event ev;
    ck_assert_int_eq(atom_trace_reader_next(op.r, &ev), 0);
    outcome_free(&o);
    close_via(&op);
  }
}
END_TEST

/* Tolerated forms: CR LF, blanks around fields, no final line end, odd but legal names. */
START_TEST(tolerated_forms) {
  static const char text[] =
      "  # indented comment\r\n"
      "   \t \r\n"
      "\r\n"
      " a |\tr( x )\t| 7 \r\n"
      "a|w(x)|007\r\n"
      "b.c/d:e[0]|acq(lock#)|1\n"
      "\xc3\xa9t\xc3\xa9|r(obj.f#2)|2\n"
      "a|end|3";
  for (int via = 0; via < VIA_COUNT; via++) {
    outcome o;
    opened op;
    ck_assert_int_eq(open_via(via, text, sizeof text - 1, &op), 0);
    read_all(op.r, &o);
    ck_assert_msg(o.rc == 0, "%s: %s", via_name[via], o.msg);
    ck_assert_uint_eq(o.n, 5);
    ck_event(&o.ev[0], ATOM_READ, 1, 1, 7);
    ck_event(&o.ev[1], ATOM_WRITE, 1, 1, 7);
    ck_event(&o.ev[2], ATOM_ACQUIRE, 2, 1, 1);
    ck_event(&o.ev[3], ATOM_READ, 3, 2, 2);
    ck_event(&o.ev[4], ATOM_END, 1, 0, 3);
    ck_assert_uint_eq(o.line[0], 4);
    ck_assert_uint_eq(o.line[4], 8);
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_THREAD, 1), "a");
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_THREAD, 2), "b.c/d:e[0]");
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_THREAD, 3), "\xc3\xa9t\xc3\xa9");
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_LOCK, 1), "lock#");
    ck_assert_str_eq(atom_trace_reader_name(op.r, ATOM_SPACE_VAR, 2), "obj.f#2");
    outcome_free(&o);
    close_via(&op);
  }
}
END_TEST

START_TEST(empty_inputs) {
  static const char *const texts[] = {"", "\n", "# only a comment", "#\n\n  \n# x|r(y)|z\n"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    for (int via = 0; via < VIA_COUNT; via++) {
      outcome o;
      read_text_via(via, texts[i], strlen(texts[i]), &o);
      ck_assert_msg(o.rc == 0 && o.n == 0, "text %zu via %s", i, via_name[via]);
      outcome_free(&o);
    }
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, NULL, 0, NULL), 0);
  atom_event ev;
  ck_assert_int_eq(atom_trace_reader_next(r, &ev), 0);
  atom_trace_reader_free(r);
}
END_TEST

/* Keys are per space, in order of first appearance; the cache must not confuse spaces. */
START_TEST(keys_per_space) {
  static const char text[] =
      "x|r(x)|0\n"    /* thread x = 1, var x = 1 */
      "x|acq(x)|0\n"  /* lock x = 1 */
      "y|fork(z)|0\n" /* thread y = 2, z = 3 */
      "z|w(y)|0\n"    /* var y = 2 */
      "y|join(x)|0\n" /* thread x = 1 */
      "z|r(x)|0\n"    /* var x = 1 */
      "z|rel(y)|0\n"; /* lock y = 2 */
  outcome o;
  read_text_via(VIA_MEMORY, text, sizeof text - 1, &o);
  ck_assert_int_eq(o.rc, 0);
  ck_assert_uint_eq(o.n, 7);
  ck_event(&o.ev[0], ATOM_READ, 1, 1, 0);
  ck_event(&o.ev[1], ATOM_ACQUIRE, 1, 1, 0);
  ck_event(&o.ev[2], ATOM_FORK, 2, 3, 0);
  ck_event(&o.ev[3], ATOM_WRITE, 3, 2, 0);
  ck_event(&o.ev[4], ATOM_JOIN, 2, 1, 0);
  ck_event(&o.ev[5], ATOM_READ, 3, 1, 0);
  ck_event(&o.ev[6], ATOM_RELEASE, 3, 2, 0);
  outcome_free(&o);
}
END_TEST

/* Names are told apart by their whole bytes: equal first 8 bytes, lengths around 8, the
 * one-entry cache in every space. */
START_TEST(similar_names) {
  static const char *const names[] = {
      "abcdefgh",         "abcdefghi", "abcdefgh1", "abcdefgh2", "abcdefg", "abcdefgh12345678",
      "abcdefgh12345679", "a",         "ab",        "abc",       "abcd",    "b",
      "\xc3\xa9",         "x.y[1]"};
  enum { N = sizeof names / sizeof names[0] };
  char text[4096];
  size_t len = 0;
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < N; i++) {
      int j = round == 1 ? N - 1 - i : i; /* second round backwards: no cache hits */
      len += (size_t)snprintf(text + len, sizeof text - len, "%s|w(%s)|%d\n%s|r(%s)|%d\n", names[j],
                              names[j], j, names[j], names[(j + 1) % N], j);
    }
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, text, len, "sim"), 0);
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < N; i++) {
      int j = round == 1 ? N - 1 - i : i;
      atom_event ev;
      ck_assert_int_eq(atom_trace_reader_next(r, &ev), 1);
      ck_assert_uint_eq(ev.thread, (uint64_t)j + 1);
      ck_assert_str_eq(atom_trace_reader_name(r, ATOM_SPACE_THREAD, ev.thread), names[j]);
      ck_assert_str_eq(atom_trace_reader_name(r, ATOM_SPACE_VAR, ev.target), names[j]);
      ck_assert_int_eq(atom_trace_reader_next(r, &ev), 1);
      ck_assert_uint_eq(ev.thread, (uint64_t)j + 1);
      ck_assert_str_eq(atom_trace_reader_name(r, ATOM_SPACE_VAR, ev.target), names[(j + 1) % N]);
    }
  ck_assert_ptr_null(atom_trace_reader_name(r, ATOM_SPACE_THREAD, N + 1));
  ck_assert_ptr_null(atom_trace_reader_name(r, ATOM_SPACE_VAR, N + 1));
  atom_trace_reader_free(r);
}
END_TEST

/* Many names: the tables grow, keys stay dense, names stay valid (arena never moves). */
START_TEST(many_names) {
  enum { N = 20000 };
  size_t cap = (size_t)N * 2 * 64 + 4096;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  size_t len = 0;
  for (int i = 0; i < N; i++)
    len += (size_t)snprintf(text + len, cap - len, "t%d|w(v%d_%s)|%d\n", i % 37, i,
                            i % 3 ? "long_suffix_to_cross_word_boundaries" : "s", i);
  for (int i = 0; i < N; i++)
    len += (size_t)snprintf(text + len, cap - len, "t%d|r(v%d_%s)|%d\n", i % 37, N - 1 - i,
                            (N - 1 - i) % 3 ? "long_suffix_to_cross_word_boundaries" : "s", i);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, text, len, "many"), 0);
  const char *first = NULL;
  for (int i = 0; i < 2 * N; i++) {
    atom_event ev;
    ck_assert_int_eq(atom_trace_reader_next(r, &ev), 1);
    ck_assert_uint_eq(ev.thread, (uint64_t)((i < N ? i : i - N) % 37 + 1));
    ck_assert_uint_eq(ev.target, i < N ? (uint64_t)i + 1 : (uint64_t)(N - (i - N)));
    if (i == 0) first = atom_trace_reader_name(r, ATOM_SPACE_VAR, 1);
  }
  atom_event ev;
  ck_assert_int_eq(atom_trace_reader_next(r, &ev), 0);
  ck_assert_str_eq(first, "v0_s");
  ck_assert_ptr_eq(first, atom_trace_reader_name(r, ATOM_SPACE_VAR, 1));
  char want[80];
  snprintf(want, sizeof want, "v%d_long_suffix_to_cross_word_boundaries", N - 1);
  ck_assert_str_eq(atom_trace_reader_name(r, ATOM_SPACE_VAR, N), want);
  ck_assert_ptr_null(atom_trace_reader_name(r, ATOM_SPACE_VAR, N + 1));
  atom_trace_reader_free(r);
  free(text);
}
END_TEST

/* A big input through a pipe (buffer refills at arbitrary places) gives exactly what the
 * memory and mapped readers give. */
START_TEST(stream_matches_memory) {
  enum { N = 40000 };
  size_t cap = (size_t)N * 40;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  size_t len = 0;
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < N; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    static const char *const ops[] = {"r", "w", "acq", "rel", "begin", "end"};
    int op = (int)(x % 6);
    if (op >= 4)
      len += (size_t)snprintf(text + len, cap - len, "T%u|%s|%" PRIu64 "\n", (unsigned)(x >> 8) % 5,
                              ops[op], x >> 20);
    else
      len += (size_t)snprintf(text + len, cap - len, "T%u|%s(%c%u)|%" PRIu64 "%s\n",
                              (unsigned)(x >> 8) % 5, ops[op], op < 2 ? 'V' : 'L',
                              (unsigned)(x >> 16) % 1000, x >> 20, i % 1000 ? "" : "\r");
    if (i % 5000 == 0) len += (size_t)snprintf(text + len, cap - len, "# mark %d\n\n", i);
  }
  outcome ref;
  read_text_via(VIA_MEMORY, text, len, &ref);
  ck_assert_int_eq(ref.rc, 0);
  ck_assert_uint_eq(ref.n, N);
  for (int via = VIA_FILE; via < VIA_COUNT; via++) {
    outcome o;
    read_text_via(via, text, len, &o);
    ck_assert_msg(o.rc == 0, "%s: %s", via_name[via], o.msg);
    ck_assert_uint_eq(o.n, ref.n);
    ck_assert(memcmp(o.ev, ref.ev, ref.n * sizeof *ref.ev) == 0);
    ck_assert(memcmp(o.line, ref.line, ref.n * sizeof *ref.line) == 0);
    outcome_free(&o);
  }
  outcome_free(&ref);
  free(text);
}
END_TEST

START_TEST(progress) {
  static const char text[] = "a|r(x)|1\nb|w(x)|2\nc|end|3"; /* 25 bytes */
  for (int via = 0; via < VIA_COUNT; via++) {
    opened op;
    ck_assert_int_eq(open_via(via, text, sizeof text - 1, &op), 0);
    uint64_t c = 99, t = 99;
    atom_trace_reader_progress(op.r, &c, &t);
    ck_assert_uint_eq(c, 0);
    ck_assert_uint_eq(t, via <= VIA_FILE ? sizeof text - 1 : 0);
    atom_event ev;
    ck_assert_int_eq(atom_trace_reader_next(op.r, &ev), 1);
    atom_trace_reader_progress(op.r, &c, NULL);
    ck_assert_uint_eq(c, 9);
    while (atom_trace_reader_next(op.r, &ev) == 1) {
    }
    atom_trace_reader_progress(op.r, &c, &t);
    ck_assert_uint_eq(c, sizeof text - 1);
    close_via(&op);
  }
  uint64_t c = 5, t = 5;
  atom_trace_reader_progress(NULL, &c, &t);
  ck_assert_uint_eq(c, 0);
  ck_assert_uint_eq(t, 0);
}
END_TEST

/* ---- malformed input ------------------------------------------------------------------- */

typedef struct bad_case {
  const char *text;
  size_t size;     /* 0 = strlen(text) */
  size_t events;   /* good events before the error */
  uint64_t line;   /* line of the error */
  const char *msg; /* expected part of the message */
} bad_case;

static const bad_case bad_cases[] = {
    /* missing and extra fields */
    {"t1\n", 0, 0, 1, "missing fields"},
    {"a|r(x)|1\nt1|r(x)\n", 0, 1, 2, "missing fields: no location"},
    {"t1|\n", 0, 0, 1, "missing operation"},
    {"t1||3\n", 0, 0, 1, "missing operation"},
    {"t1|r(x)|\n", 0, 0, 1, "missing location"},
    {"t1|r(x)|  \r\n", 0, 0, 1, "missing location"},
    {"t1|r(x)|1|2\n", 0, 0, 1, "too many fields"},
    {"t1|r(x)|1 |extra\n", 0, 0, 1, "too many fields"},
    /* unknown operations */
    {"t1|read(x)|1\n", 0, 0, 1, "unknown operation 'read'"},
    {"t1|R(x)|1\n", 0, 0, 1, "unknown operation 'R'"},
    {"t1|r2(x)|1\n", 0, 0, 1, "unknown operation 'r2'"},
    {"t1|-|1\n", 0, 0, 1, "unknown operation '-'"},
    {"t1|r.rel(x)|1\n", 0, 0, 1, "unknown operation 'r.rel'"},
    {"t1|w.acq(x)|1\n", 0, 0, 1, "unknown operation 'w.acq'"},
    {"t1|r.acqx(x)|1\n", 0, 0, 1, "unknown operation 'r.acqx'"},
    {"t1|r.ac(x)|1\n", 0, 0, 1, "unknown operation 'r.ac'"},
    {"t1|r.|1\n", 0, 0, 1, "unknown operation 'r.'"},
    {"t1|acq.acq(l)|1\n", 0, 0, 1, "unknown operation 'acq.acq'"},
    {"t1|commit.rel(x)|1\n", 0, 0, 1, "unknown operation 'commit.rel'"},
    {"t1|r.acq|1\n", 0, 0, 1, "operation 'r.acq' needs an argument: r.acq(NAME)"},
    {"t1|w.rel(x|1\n", 0, 0, 1, "missing ')' after 'w.rel(x'"},
    {"a|r(x)|1\nt1|r.a", 0, 1, 2, "unknown operation 'r.a' (the last line has no line end"},
    /* parentheses */
    {"t1|r(x|1\n", 0, 0, 1, "missing ')' after 'r(x'"},
    {"t1|r x)|1\n", 0, 0, 1, "operation 'r' needs an argument"},
    {"t1|w|1\n", 0, 0, 1, "operation 'w' needs an argument: w(NAME)"},
    {"t1|r(x))|1\n", 0, 0, 1, "unbalanced ')'"},
    {"t1|r(x(y))|1\n", 0, 0, 1, "unbalanced '('"},
    {"t1|r)x(|1\n", 0, 0, 1, "unbalanced ')'"},
    {"t1(|r(x)|1\n", 0, 0, 1, "unexpected '(' after thread name 't1'"},
    /* empty names, names where none belong */
    {"|r(x)|1\n", 0, 0, 1, "empty thread name"},
    {"t1|r()|1\n", 0, 0, 1, "empty name in 'r()'"},
    {"t1|acq(  )|1\n", 0, 0, 1, "empty name in 'acq()'"},
    {"t1|begin(x)|1\n", 0, 0, 1, "operation 'begin' takes no argument"},
    {"t1|end()|1\n", 0, 0, 1, "operation 'end' takes no argument"},
    {"t1|fence(x)|1\n", 0, 0, 1, "operation 'fence' takes no argument"},
    {"t 1|r(x)|1\n", 0, 0, 1, "white space inside thread name 't'"},
    {"t1|r(a b)|1\n", 0, 0, 1, "white space inside name 'a'"},
    {"t1|acq(#l)|1\n", 0, 0, 1, "name '#l' starts with '#'"},
    {"t1|fork( #t)|1\n", 0, 0, 1, "name '#t' starts with '#'"},
    /* locations */
    {"t1|r(x)|-1\n", 0, 0, 1, "location is not a non-negative decimal integer: '-1'"},
    {"t1|r(x)|0x10\n", 0, 0, 1, "not a non-negative decimal integer: '0x10'"},
    {"t1|r(x)|12 34\n", 0, 0, 1, "not a non-negative decimal integer: '12 34'"},
    {"t1|r(x)|abc\n", 0, 0, 1, "not a non-negative decimal integer: 'abc'"},
    {"t1|r(x)|18446744073709551616\n", 0, 0, 1, "location out of range"},
    {"t1|r(x)|99999999999999999999999\n", 0, 0, 1, "location out of range"},
    /* binary garbage, NUL bytes, stray control bytes, a lone CR */
    {"t1|r(x)|1\n\x00\x01\x02\xff\n", 10 + 5, 1, 2, "invalid byte 0x00"},
    {"t\x00|r(x)|1\n", 10, 0, 1, "invalid byte 0x00 in or after thread name 't'"},
    {"t1|r(x\x00)|1\n", 12, 0, 1, "invalid byte 0x00 in or after name 'x'"},
    {"t1|r(x)|1\x00\n", 11, 0, 1, "not a non-negative decimal integer: '1\\x00'"},
    {"t1|r(x)|1\rt1|r(x)|2\n", 0, 0, 1, "not a non-negative decimal integer"},
    {"\x7f\x45\x4c\x46\x02\x01\x01\x00\n", 9, 0, 1, "invalid byte 0x7f"},
    {"\xff\xfe\xfd\n", 0, 0, 1, "missing fields"},
    /* a last line cut off */
    {"a|r(x)|1\nt1|w(", 0, 1, 2, "missing name and ')' after 'w(' (the last line has no line end"},
    {"a|r(x)|1\nt1|w(x", 0, 1, 2, "missing ')' after 'w(x' (the last line has no line end"},
    {"a|r(x)|1\nt1|w(x)", 0, 1, 2, "no location after the operation (the last line"},
    {"a|r(x)|1\nt1", 0, 1, 2, "missing fields"},
};
enum { N_BAD = sizeof bad_cases / sizeof bad_cases[0] };

START_TEST(malformed) {
  const bad_case *c = &bad_cases[_i];
  size_t size = c->size ? c->size : strlen(c->text);
  for (int via = 0; via < VIA_COUNT; via++) {
    opened op;
    ck_assert_int_eq(open_via(via, c->text, size, &op), 0);
    outcome o;
    read_all(op.r, &o);
    char want[64];
    snprintf(want, sizeof want, "%" PRIu64 ": ", c->line);
    ck_assert_msg(o.rc == ATOM_EPARSE, "case %d via %s: rc %d", _i, via_name[via], o.rc);
    ck_assert_msg(strncmp(o.msg, want, strlen(want)) == 0 && strstr(o.msg, c->msg),
                  "case %d via %s: message '%s', want '%s%s'", _i, via_name[via], o.msg, want,
                  c->msg);
    ck_assert_uint_eq(o.n, c->events);
    ck_assert_uint_eq(o.line_at_end, c->line);
    /* the full message starts with the source's name */
    const char *full = atom_last_error();
    const char *name = via == VIA_MEMORY  ? "mem.std:"
                       : via == VIA_STDIN ? "<stdin>:"
                       : via == VIA_FILE  ? op.path
                                          : "/dev/fd/";
    ck_assert_msg(strncmp(full, name, strlen(name)) == 0, "message '%s'", full);
    /* the error is sticky, message included */
    char first[600];
    snprintf(first, sizeof first, "%s", full);
    atom_error_name(0); /* any other call */
    atom_event ev;
    ck_assert_int_eq(atom_trace_reader_next(op.r, &ev), ATOM_EPARSE);
    ck_assert_str_eq(atom_last_error(), first);
    ck_assert_uint_eq(atom_trace_reader_line(op.r), c->line);
    outcome_free(&o);
    close_via(&op);
  }
}
END_TEST

/* Lines up to the limit are read; longer ones are an error, whatever the source. */
START_TEST(long_lines) {
  size_t max = ATOM__TRACE_MAX_LINE;
  char *text = malloc(max + 64);
  ck_assert_ptr_nonnull(text);
  /* exactly at the limit: "t|r(<name>)|1" */
  size_t name = max - strlen("t|r()|1");
  memcpy(text, "a|r(x)|0\nt|r(", 13);
  memset(text + 13, 'n', name);
  memcpy(text + 13 + name, ")|1\r\n", 5);
  size_t ok_size = 13 + name + 5;
  for (int via = 0; via < VIA_COUNT; via++) {
    opened op;
    ck_assert_int_eq(open_via(via, text, ok_size, &op), 0);
    outcome o;
    read_all(op.r, &o);
    ck_assert_msg(o.rc == 0, "%s: %s", via_name[via], o.msg);
    ck_assert_uint_eq(o.n, 2);
    ck_assert_uint_eq(strlen(atom_trace_reader_name(op.r, ATOM_SPACE_VAR, 2)), name);
    outcome_free(&o);
    close_via(&op);
  }
  /* one byte more, with and without a line end; and a 1 MB comment line */
  text[13] = 'N';
  memmove(text + 14, text + 13, name + 5);
  for (int variant = 0; variant < 3; variant++) {
    size_t size = variant == 0 ? ok_size + 1 : ok_size + 1 - 2;
    if (variant == 2) {
      text[9] = '#';
      size = ok_size + 1;
    }
    for (int via = 0; via < VIA_COUNT; via++) {
      opened op;
      ck_assert_int_eq(open_via(via, text, size, &op), 0);
      outcome o;
      read_all(op.r, &o);
      ck_assert_msg(o.rc == ATOM_EPARSE, "%d %s: %d", variant, via_name[via], o.rc);
      ck_assert_msg(strstr(o.msg, "2: line too long (more than 1048576 bytes)"), "%d %s: %s",
                    variant, via_name[via], o.msg);
      ck_assert_uint_eq(o.n, 1);
      outcome_free(&o);
      close_via(&op);
    }
  }
  free(text);
}
END_TEST

static uint64_t xs(uint64_t *x) {
  *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
  return *x;
}

/* Copy the n bytes of seed into buf (room for n) and damage them: 1 to 4 bytes (by iter)
 * replaced by a byte of the format's alphabet or any byte, and on odd iterations the text cut
 * anywhere. @return the damaged length. */
static size_t damage(char *buf, const char *seed, size_t n, int iter, uint64_t *x) {
  static const char alphabet[] = "|()# \t\r\n\0\x01\x80xr(w)01";
  memcpy(buf, seed, n);
  for (int e = 0, edits = 1 + iter % 4; e < edits; e++) {
    xs(x);
    size_t at = (size_t)(*x % n);
    buf[at] = (*x >> 32) & 1 ? alphabet[(*x >> 40) % (sizeof alphabet - 1)] : (char)(*x >> 48);
  }
  if (iter & 1) n = (size_t)((*x >> 20) % (n + 1)); /* cut anywhere */
  return n;
}

/* Random damage to a valid trace: never a crash, and every outcome is an event or a clean
 * EPARSE whose names obey the name rules. */
START_TEST(random_garbage) {
  static const char seed[] =
      "t1|begin|1\nt1|r(x)|2\nt2|acq(l)|3\nt2|fork(t3)|4\n# c\nt3|commit(y)|5\nt1|end|6\n";
  char buf[sizeof seed];
  uint64_t x = 0x2545F4914F6CDD1DULL;
  for (int iter = 0; iter < 3000; iter++) {
    size_t n = damage(buf, seed, sizeof seed - 1, iter, &x);
    atom_trace_reader *r;
    ck_assert_int_eq(atom_trace_reader_open_memory(&r, buf, n, "g"), 0);
    atom_event ev;
    int rc;
    while ((rc = atom_trace_reader_next(r, &ev)) == 1) {
      ck_assert(ev.kind >= ATOM_READ && ev.kind <= ATOM_COMMIT);
      const char *t = atom_trace_reader_name(r, ATOM_SPACE_THREAD, ev.thread);
      ck_assert_ptr_nonnull(t);
      ck_assert_ptr_null(atom__trace_name_problem(t, strlen(t)));
    }
    ck_assert(rc == 0 || rc == ATOM_EPARSE);
    if (rc) ck_assert_ptr_nonnull(strstr(atom_last_error(), "g:"));
    atom_trace_reader_free(r);
  }
}
END_TEST

START_TEST(open_errors) {
  atom_trace_reader *r = (atom_trace_reader *)1;
  ck_assert_int_eq(atom_trace_reader_open(&r, "/nonexistent-dir/trace.std"), ATOM_EIO);
  ck_assert_ptr_null(r);
  char want[200];
  snprintf(want, sizeof want, "/nonexistent-dir/trace.std: cannot open: %s", strerror(ENOENT));
  ck_assert_str_eq(atom_last_error(), want);
  ck_assert_int_eq(atom_trace_reader_open(&r, "/"), ATOM_EIO);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "/: cannot read:"));
  ck_assert_int_eq(atom_trace_reader_open(NULL, "x"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_reader_open(&r, NULL), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, NULL, 3, "x"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_reader_open_memory(NULL, "x", 1, "x"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_reader_next(NULL, NULL), ATOM_EINVAL);
  ck_assert_uint_eq(atom_trace_reader_line(NULL), 0);
  atom_trace_reader_free(NULL);
  /* an unreadable file (skipped when running as root, who can read anything) */
  if (geteuid() != 0) {
    char path[] = "/tmp/atom-trace-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    chmod(path, 0);
    ck_assert_int_eq(atom_trace_reader_open(&r, path), ATOM_EIO);
    snprintf(want, sizeof want, "%s: cannot open: %s", path, strerror(EACCES));
    ck_assert_str_eq(atom_last_error(), want);
    unlink(path);
  }
}
END_TEST

/* ---- writer ---------------------------------------------------------------------------- */

/* Write events to a temporary file and return its contents (malloc'd). */
static char *slurp(const char *path, size_t *size) {
  char *s = tu_read_file(path, size);
  ck_assert_ptr_nonnull(s);
  return s;
}

static void temp_path(char *path, size_t size) {
  snprintf(path, size, "/tmp/atom-trace-w-XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

START_TEST(writer_default_names) {
  char path[64];
  temp_path(path, sizeof path);
  atom_trace_writer *w;
  ck_assert_int_eq(atom_trace_writer_open(&w, path), 0);
  const atom_event evs[] = {
      {ATOM_FORK, 0, 0, 7, 1},    {ATOM_BEGIN, 0, 7, 99, 2},
      {ATOM_READ, 0, 7, 3, 3},    {ATOM_WRITE, 0, 7, UINT64_MAX, UINT64_MAX},
      {ATOM_ACQUIRE, 0, 7, 5, 0}, {ATOM_RELEASE, 0, 7, 5, 0},
      {ATOM_END, 0, 7, 0, 0},     {ATOM_JOIN, 0, 0, 7, 10},
      {ATOM_FENCE, 0, 0, 0, 11},  {ATOM_COMMIT, 0, 0, 3, 12},
  };
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 3, "obj.f"), 0);
  for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
    ck_assert_int_eq(atom_trace_writer_write(w, &evs[i]), 0);
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  char *s = slurp(path, NULL);
  ck_assert_str_eq(s,
                   "T0|fork(T7)|1\n"
                   "T7|begin|2\n"
                   "T7|r(obj.f)|3\n"
                   "T7|w(V18446744073709551615)|18446744073709551615\n"
                   "T7|acq(L5)|0\n"
                   "T7|rel(L5)|0\n"
                   "T7|end|0\n"
                   "T0|join(T7)|10\n"
                   "T0|fence|11\n"
                   "T0|commit(obj.f)|12\n");
  free(s);
  unlink(path);
}
END_TEST

START_TEST(writer_names_and_errors) {
  char path[64];
  temp_path(path, sizeof path);
  atom_trace_writer *w;
  ck_assert_int_eq(atom_trace_writer_open(&w, path), 0);
  static const char *const bad[] = {"",     "a|b",  "a(b", "a)b",   "a b",
                                    "a\tb", "a\nb", "#a",  "a\x01", "a\x7f"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(atom_trace_writer_set_name(w, ATOM_SPACE_THREAD, 1, bad[i]) == ATOM_EINVAL,
                  "name %zu accepted", i);
  ck_assert_int_eq(atom_trace_writer_set_name(w, 0, 1, "a"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_set_name(w, 4, 1, "a"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_set_name(w, 1, 1, NULL), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_set_name(NULL, 1, 1, "a"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_THREAD, 1, "first"), 0);
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_THREAD, 1, "main"), 0); /* replaced */
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_LOCK, 1, "a#b\xc3\xa9"), 0);
  atom_event ev = {0, 0, 1, 1, 0};
  ck_assert_int_eq(atom_trace_writer_write(w, &ev), ATOM_EINVAL);
  ev.kind = 11;
  ck_assert_int_eq(atom_trace_writer_write(w, &ev), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_write(w, NULL), ATOM_EINVAL);
  ev.kind = ATOM_ACQUIRE;
  ck_assert_int_eq(atom_trace_writer_write(w, &ev), 0);
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  char *s = slurp(path, NULL);
  ck_assert_str_eq(s, "main|acq(a#b\xc3\xa9)|0\n");
  free(s);
  unlink(path);
  ck_assert_int_eq(atom_trace_writer_close(NULL), 0);
  ck_assert_int_eq(atom_trace_writer_open(NULL, path), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_open(&w, NULL), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_open(&w, "/nonexistent-dir/out.std"), ATOM_EIO);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "/nonexistent-dir/out.std: cannot create:"));
}
END_TEST

/* "#name" directives: written by the writer, registered by atom_trace_feed() (the display name
 * wins over the token), loc names included; bad directives are parse errors; other comments
 * stay comments. */
START_TEST(name_directives) {
  char path[64];
  temp_path(path, sizeof path);
  atom_trace_writer *w;
  ck_assert_int_eq(atom_trace_writer_open(&w, path), 0);
  atom_event ev = {ATOM_READ, 0, 1, 0x7f00, 94};
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_VAR, 0x7f00, "counter"), 0);
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_LOC, 94, "transfer at bank.c:42"), 0);
  ck_assert_int_eq(atom_trace_writer_write(w, &ev), 0);
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_THREAD, 1, "main thread"), 0);
  ck_assert_int_eq(atom_trace_writer_write_name(w, 5, 1, "x"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_LOC, 1, ""), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_LOC, 1, "a\nb"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_LOC, 1, " a"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_write_name(NULL, ATOM_SPACE_LOC, 1, "a"), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  char *s = slurp(path, NULL);
  ck_assert_str_eq(s, "#name var V32512 counter\n"
                      "#name loc 94 transfer at bank.c:42\n"
                      "T1|r(V32512)|94\n"
                      "#name thread T1 main thread\n");
  atom_session *ss = NULL;
  ck_assert_int_eq(atom_session_new(&ss, NULL), 0);
  ck_assert_int_eq(tu_feed_std(ss, s, NULL), 0);
  ck_assert_str_eq(atom_get_name(ss, ATOM_SPACE_VAR, 1), "counter");
  ck_assert_str_eq(atom_get_name(ss, ATOM_SPACE_THREAD, 1), "main thread");
  ck_assert_str_eq(atom_get_name(ss, ATOM_SPACE_LOC, 94), "transfer at bank.c:42");
  atom_session_free(ss);
  free(s);
  unlink(path);

  static const char *const bad[] = {
      "#name\tbogus 1 x\n", "#name loc 12a x\n", "#name loc 99999999999999999999 x\n",
      "#name var a(b) x\n", "#name loc 5   \n", "#name thread\n",
      "#name var x a\x01b\n", "#name thread t a\x7f\n"}; /* control bytes in the text */
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(atom_session_new(&ss, NULL), 0);
    ck_assert_msg(tu_feed_std(ss, bad[i], NULL) == ATOM_EPARSE, "%s", bad[i]);
    ck_assert_ptr_nonnull(strstr(atom_last_error(), ":1: #name"));
    atom_session_free(ss);
  }
  /* A NUL starting the text once gave a directive with an empty name: serially and with a
   * parse thread, the reader refuses it. */
  static const char nul_text[] = "#name lock l \0\0 x\nT1|acq(l)|1\n";
  for (unsigned threads = 1; threads <= 2; threads++) {
    atom_trace_reader *rd;
    ck_assert_int_eq(atom_trace_reader_open_memory(&rd, nul_text, sizeof nul_text - 1, "nul.std"), 0);
    ck_assert_int_eq(atom_trace_reader_set_threads(rd, threads), 0);
    atom_event got;
    ck_assert_int_eq(atom_trace_reader_next(rd, &got), ATOM_EPARSE);
    ck_assert_ptr_nonnull(strstr(atom_last_error(), "#name lock: control byte in a name"));
    atom_trace_reader_free(rd);
  }
  ck_assert_int_eq(atom_session_new(&ss, NULL), 0);
  ck_assert_int_eq(tu_feed_std(ss, "#names loc 1 x\n#name\n# name loc 1 x\nT1|r(x)|1\n", NULL), 0);
  ck_assert_ptr_null(atom_get_name(ss, ATOM_SPACE_LOC, 1));
  atom_session_free(ss);
}
END_TEST

/* Output errors surface, at the latest from close: /dev/full accepts open, fails writes. */
START_TEST(writer_io_error) {
  atom_trace_writer *w;
  if (atom_trace_writer_open(&w, "/dev/full") != 0) return; /* no /dev/full here */
  atom_event ev = {ATOM_READ, 0, 1, 2, 3};
  int rc = 0;
  for (int i = 0; i < 100000 && rc == 0; i++) rc = atom_trace_writer_write(w, &ev);
  ck_assert_int_eq(rc, ATOM_EIO); /* the buffer filled and a flush failed */
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "/dev/full: write error:"));
  ck_assert_int_eq(atom_trace_writer_write(w, &ev), ATOM_EIO);
  ck_assert_int_eq(atom_trace_writer_close(w), ATOM_EIO);
  /* a failure found only at close */
  ck_assert_int_eq(atom_trace_writer_open(&w, "/dev/full"), 0);
  ck_assert_int_eq(atom_trace_writer_write(w, &ev), 0);
  ck_assert_int_eq(atom_trace_writer_close(w), ATOM_EIO);
}
END_TEST

START_TEST(writer_stdout) {
  char path[64];
  temp_path(path, sizeof path);
  fflush(stdout);
  int saved = dup(1);
  int fd = open(path, O_WRONLY | O_TRUNC);
  ck_assert_int_ge(fd, 0);
  dup2(fd, 1);
  close(fd);
  atom_trace_writer *w;
  int rc = atom_trace_writer_open(&w, "-");
  atom_event ev = {ATOM_BEGIN, 0, 4, 0, 9};
  if (rc == 0) rc = atom_trace_writer_write(w, &ev);
  if (rc == 0) rc = atom_trace_writer_close(w);
  dup2(saved, 1);
  close(saved);
  ck_assert_int_eq(rc, 0);
  char *s = slurp(path, NULL);
  ck_assert_str_eq(s, "T4|begin|9\n");
  free(s);
  unlink(path);
}
END_TEST

/* A file truncated by someone else while it is read: the reader ends with ATOM_EIO naming the
 * problem (a mapped file would have killed the process with SIGBUS). Deterministic: the file
 * is truncated between two calls of atom_trace_reader_next. */
START_TEST(reader_file_truncated_while_read) {
  char path[64];
  temp_path(path, sizeof path);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  for (int i = 0; i < 100000; i++) fprintf(f, "T%d|r(x%d)|%d\n", i % 4 + 1, i % 100, i);
  ck_assert_int_eq(fclose(f), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open(&r, path), 0);
  atom_event ev;
  ck_assert_int_eq(atom_trace_reader_next(r, &ev), 1);
  ck_assert_int_eq(truncate(path, 0), 0);
  int rc;
  uint64_t n = 1;
  while ((rc = atom_trace_reader_next(r, &ev)) == 1) n++;
  ck_assert_int_eq(rc, ATOM_EIO);
  ck_assert_msg(strstr(atom_last_error(), "the file shrank while being read") != NULL, "%s",
                atom_last_error());
  ck_assert_uint_lt(n, 100000);
  ck_assert_int_eq(atom_trace_reader_next(r, &ev), ATOM_EIO); /* sticky */
  atom_trace_reader_free(r);
  unlink(path);
}
END_TEST

/* Names over 64 KiB are written as they are (they read back), and a line too long to read
 * back is refused: never a default name in place of a given one. */
START_TEST(writer_long_names) {
  char path[64];
  temp_path(path, sizeof path);
  size_t n = ((size_t)64 << 10) + 100;
  char *name = malloc(n + 1);
  ck_assert_ptr_nonnull(name);
  memset(name, 'v', n);
  name[n] = '\0';
  atom_trace_writer *w;
  ck_assert_int_eq(atom_trace_writer_open(&w, path), 0);
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 1, name), 0);
  atom_event ev = {ATOM_READ, 0, 1, 1, 5};
  ck_assert_int_eq(atom_trace_writer_write(w, &ev), 0);
  /* a #name directive names the key by its name, which a #name key may not be that long */
  ck_assert_int_eq(atom_trace_writer_write_name(w, ATOM_SPACE_VAR, 1, "x"), ATOM_EINVAL);
  /* a name as long as a line: set, but an event line using it is refused */
  size_t big = (size_t)1 << 20;
  char *huge = malloc(big + 2);
  ck_assert_ptr_nonnull(huge);
  memset(huge, 'w', big + 1);
  huge[big + 1] = '\0';
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 2, huge), ATOM_EINVAL);
  huge[big] = '\0';
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 2, huge), 0);
  ev.target = 2;
  ck_assert_int_eq(atom_trace_writer_write(w, &ev), ATOM_EINVAL);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "longer than a reader accepts"));
  /* the same name with a leading '#' or a '|' inside is refused whatever its length */
  huge[0] = '#';
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 3, huge), ATOM_EINVAL);
  huge[0] = 'w';
  huge[big - 5] = '|';
  ck_assert_int_eq(atom_trace_writer_set_name(w, ATOM_SPACE_VAR, 3, huge), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  free(huge);

  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open(&r, path), 0);
  atom_event got;
  ck_assert_int_eq(atom_trace_reader_next(r, &got), 1);
  uint64_t target = got.target;
  ck_assert_int_eq(atom_trace_reader_next(r, &got), 0);
  const char *back = atom_trace_reader_name(r, ATOM_SPACE_VAR, target);
  ck_assert_ptr_nonnull(back);
  ck_assert_uint_eq(strlen(back), n);
  ck_assert(strcmp(back, name) == 0);
  atom_trace_reader_free(r);
  unlink(path);
  free(name);
}
END_TEST

/* Read a trace, write it with the reader's names, read it back: same events, same names. */
static void round_trip(const char *text, size_t size) {
  outcome a, b;
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, text, size, "in"), 0);
  read_all(r, &a);
  ck_assert_msg(a.rc == 0, "%s", a.msg);
  char path[64];
  temp_path(path, sizeof path);
  atom_trace_writer *w;
  ck_assert_int_eq(atom_trace_writer_open(&w, path), 0);
  for (int what = ATOM_SPACE_THREAD; what <= ATOM_SPACE_LOCK; what++)
    for (uint64_t k = 1; atom_trace_reader_name(r, what, k); k++)
      ck_assert_int_eq(atom_trace_writer_set_name(w, what, k, atom_trace_reader_name(r, what, k)),
                       0);
  for (size_t i = 0; i < a.n; i++) ck_assert_int_eq(atom_trace_writer_write(w, &a.ev[i]), 0);
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  atom_trace_reader *r2;
  ck_assert_int_eq(atom_trace_reader_open(&r2, path), a.n ? 0 : 0);
  read_all(r2, &b);
  ck_assert_msg(b.rc == 0, "%s", b.msg);
  ck_assert_uint_eq(b.n, a.n);
  ck_assert(a.n == 0 || memcmp(a.ev, b.ev, a.n * sizeof *a.ev) == 0);
  for (int what = ATOM_SPACE_THREAD; what <= ATOM_SPACE_LOCK; what++)
    for (uint64_t k = 1;; k++) {
      const char *n1 = atom_trace_reader_name(r, what, k),
                 *n2 = atom_trace_reader_name(r2, what, k);
      if (!n1 || !n2) {
        ck_assert_ptr_eq(n1, n2);
        break;
      }
      ck_assert_str_eq(n1, n2);
    }
  atom_trace_reader_free(r);
  atom_trace_reader_free(r2);
  outcome_free(&a);
  outcome_free(&b);
  unlink(path);
}

START_TEST(round_trips) {
  round_trip(basic_trace, strlen(basic_trace));
  static const char odd[] = " a |\tr( x )\t| 7 \r\nb.c/d:e[0]|acq(l#)|1\n\xc3\xa9|end|3";
  round_trip(odd, sizeof odd - 1);
  /* every trace of the corpus */
  static const char *const corpus[] = {
      "aerodrome-rho1",       "aerodrome-rho2",      "aerodrome-nested", "aerodrome-fork-in-txn",
      "aerodrome-lock-edges", "tso-store-buffering", "ws-ex1",           "ws-ex13"};
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.std", ATOM_CORPUS_DIR, corpus[i]);
    size_t size;
    char *s = slurp(path, &size);
    round_trip(s, size);
    free(s);
  }
}
END_TEST

/* r.acq(V) and w.rel(V): flagged accesses, read through every source, written back the same. */
static const char flagged_trace[] =
    "t1|w(d)|1\n"
    "t1|w.rel(f)|2\n"
    "t2 | r.acq ( f ) |3\n"
    "t2|r(d)|4\n"
    "t2|r(f)|5\n";

START_TEST(flagged_ops) {
  for (int via = 0; via < VIA_COUNT; via++) {
    outcome o;
    read_text_via(via, flagged_trace, strlen(flagged_trace), &o);
    ck_assert_msg(o.rc == 0, "%s: %s", via_name[via], o.msg);
    ck_assert_uint_eq(o.n, 5);
    ck_event(&o.ev[0], ATOM_WRITE, 1, 1, 1);
    ck_assert_uint_eq(o.ev[1].kind, ATOM_WRITE);
    ck_assert_uint_eq(o.ev[1].flags, ATOM_FLAG_RELEASE);
    ck_assert_uint_eq(o.ev[1].target, 2);
    ck_assert_uint_eq(o.ev[2].kind, ATOM_READ);
    ck_assert_uint_eq(o.ev[2].flags, ATOM_FLAG_ACQUIRE);
    ck_assert_uint_eq(o.ev[2].thread, 2);
    ck_assert_uint_eq(o.ev[2].target, 2);
    ck_event(&o.ev[3], ATOM_READ, 2, 1, 4);
    ck_event(&o.ev[4], ATOM_READ, 2, 2, 5);
    outcome_free(&o);
  }
  round_trip(flagged_trace, strlen(flagged_trace));

  /* the writer: the two ops, and no flags it could not write back */
  char path[64];
  temp_path(path, sizeof path);
  atom_trace_writer *w;
  ck_assert_int_eq(atom_trace_writer_open(&w, path), 0);
  const atom_event good[] = {{ATOM_WRITE, ATOM_FLAG_RELEASE, 1, 2, 3},
                             {ATOM_READ, ATOM_FLAG_ACQUIRE, 4, 2, 5}};
  for (size_t i = 0; i < 2; i++) ck_assert_int_eq(atom_trace_writer_write(w, &good[i]), 0);
  const atom_event bad[] = {{ATOM_READ, ATOM_FLAG_RELEASE, 1, 2, 3},
                            {ATOM_WRITE, ATOM_FLAG_ACQUIRE, 1, 2, 3},
                            {ATOM_READ, 3, 1, 2, 3},
                            {ATOM_ACQUIRE, ATOM_FLAG_ACQUIRE, 1, 2, 3},
                            {ATOM_COMMIT, ATOM_FLAG_RELEASE, 1, 2, 3}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_int_eq(atom_trace_writer_write(w, &bad[i]), ATOM_EINVAL);
    ck_assert_ptr_nonnull(strstr(atom_last_error(), "invalid flags"));
  }
  ck_assert_int_eq(atom_trace_writer_close(w), 0);
  char *text = slurp(path, NULL);
  ck_assert_str_eq(text, "T1|w.rel(V2)|3\nT4|r.acq(V2)|5\n");
  free(text);
  unlink(path);
}
END_TEST

/* ---- atom_trace_feed ------------------------------------------------------------------- */

typedef struct rejects {
  int n;
  int stop_at; /* return non-zero on this rejection (1-based), 0 = never */
  int codes[8];
  char msgs[8][640];
  uint64_t lines[8];
} rejects;

static int on_reject(const atom_trace_reader *r, int err, const char *message, void *payload) {
  rejects *rj = payload;
  if (rj->n < 8) {
    rj->codes[rj->n] = err;
    snprintf(rj->msgs[rj->n], sizeof rj->msgs[0], "%s", message);
    rj->lines[rj->n] = atom_trace_reader_line(r);
  }
  rj->n++;
  return rj->stop_at && rj->n == rj->stop_at;
}

START_TEST(feed_all) {
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, basic_trace, strlen(basic_trace), "b.std"), 0);
  uint64_t pushed = 99;
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, NULL, NULL), 0);
  ck_assert_uint_eq(pushed, 11);
  ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_THREAD, 1), "main");
  ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_THREAD, 2), "t1");
  ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_VAR, 2), "y");
  ck_assert_str_eq(atom_get_name(s, ATOM_SPACE_LOCK, 1), "m");
  atom_session_stats st = {ATOM_SESSION_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(atom_session_stats_get(s, &st), 0);
  ck_assert_uint_eq(st.events, 11);
  ck_assert_uint_eq(st.rejected, 0);
  ck_assert_uint_eq(atom_trace_reader_line(r), 13);
  /* at the end: nothing more */
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, NULL, NULL), 0);
  ck_assert_uint_eq(pushed, 0);
  ck_assert_int_eq(atom_trace_feed(NULL, r, 0, NULL, NULL, NULL), ATOM_EINVAL);
  ck_assert_int_eq(atom_trace_feed(s, NULL, 0, NULL, NULL, NULL), ATOM_EINVAL);
  atom_trace_reader_free(r);
  atom_session_free(s);
}
END_TEST

/* max_events: 1 while events remain; the reader's next() continues where feed stopped. */
START_TEST(feed_in_steps) {
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, basic_trace, strlen(basic_trace), "b.std"), 0);
  uint64_t pushed;
  ck_assert_int_eq(atom_trace_feed(s, r, 4, &pushed, NULL, NULL), 1);
  ck_assert_uint_eq(pushed, 4);
  ck_assert_uint_eq(atom_trace_reader_line(r), 6);
  ck_assert_int_eq(atom_trace_feed(s, r, 3, &pushed, NULL, NULL), 1);
  ck_assert_uint_eq(pushed, 3);
  atom_event ev;
  ck_assert_int_eq(atom_trace_reader_next(r, &ev), 1); /* the 8th event: main|join(t1)|8 */
  ck_event(&ev, ATOM_JOIN, 1, 2, 8);
  ck_assert_uint_eq(atom_trace_reader_line(r), 10);
  ck_assert_int_eq(atom_trace_feed(s, r, 100, &pushed, NULL, NULL), 0);
  ck_assert_uint_eq(pushed, 3);
  atom_session_stats st = {ATOM_SESSION_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(atom_session_stats_get(s, &st), 0);
  ck_assert_uint_eq(st.events, 10);
  atom_trace_reader_free(r);
  atom_session_free(s);
}
END_TEST

static const char ill_formed_trace[] =
    "t1|begin|1\n"
    "t1|end|2\n"
    "t1|end|3\n"    /* END without BEGIN */
    "t2|rel(m)|4\n" /* RELEASE not held */
    "t1|acq(m)|5\n"
    "t2|acq(m)|6\n" /* held by another thread */
    "t1|rel(m)|7\n"
    "t2|r(x)|8\n";

START_TEST(feed_rejections) {
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(
      atom_trace_reader_open_memory(&r, ill_formed_trace, strlen(ill_formed_trace), "bad.std"), 0);
  rejects rj;
  memset(&rj, 0, sizeof rj);
  uint64_t pushed;
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, on_reject, &rj), 0);
  ck_assert_uint_eq(pushed, 8); /* rejected events were pushed too */
  ck_assert_int_eq(rj.n, 3);
  ck_assert_int_eq(rj.codes[0], ATOM_EENDNOBEGIN);
  ck_assert_int_eq(rj.codes[1], ATOM_ENOTHELD);
  ck_assert_int_eq(rj.codes[2], ATOM_EHELD);
  ck_assert_msg(strncmp(rj.msgs[0], "bad.std:3: ", 11) == 0, "%s", rj.msgs[0]);
  ck_assert_msg(strncmp(rj.msgs[1], "bad.std:4: ", 11) == 0, "%s", rj.msgs[1]);
  ck_assert_msg(strncmp(rj.msgs[2], "bad.std:6: ", 11) == 0, "%s", rj.msgs[2]);
  ck_assert_msg(strlen(rj.msgs[0]) > 11, "no detail from the session");
  ck_assert_uint_eq(rj.lines[0], 3);
  ck_assert_uint_eq(rj.lines[2], 6);
  atom_session_stats st = {ATOM_SESSION_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(atom_session_stats_get(s, &st), 0);
  ck_assert_uint_eq(st.events, 8);
  ck_assert_uint_eq(st.rejected, 3);
  atom_trace_reader_free(r);
  atom_session_free(s);

  /* without a callback, rejections are skipped silently by feed (the session counts them) */
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(
      atom_trace_reader_open_memory(&r, ill_formed_trace, strlen(ill_formed_trace), "bad.std"), 0);
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, NULL, NULL), 0);
  ck_assert_uint_eq(pushed, 8);
  atom_trace_reader_free(r);
  atom_session_free(s);
}
END_TEST

/* The callback stops the feed: ATOM_ECALLBACK; a later call resumes after that event. */
START_TEST(feed_callback_stops) {
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(
      atom_trace_reader_open_memory(&r, ill_formed_trace, strlen(ill_formed_trace), "bad.std"), 0);
  rejects rj;
  memset(&rj, 0, sizeof rj);
  rj.stop_at = 2;
  uint64_t pushed;
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, on_reject, &rj), ATOM_ECALLBACK);
  ck_assert_uint_eq(pushed, 4);
  ck_assert_ptr_nonnull(strstr(atom_last_error(), "bad.std:4:"));
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, on_reject, &rj), 0);
  ck_assert_uint_eq(pushed, 4);
  ck_assert_int_eq(rj.n, 3);
  atom_session_stats st = {ATOM_SESSION_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_int_eq(atom_session_stats_get(s, &st), 0);
  ck_assert_uint_eq(st.events, 8);
  atom_trace_reader_free(r);
  atom_session_free(s);
}
END_TEST

/* A parse error: the events before it are pushed, then EPARSE, sticky. */
START_TEST(feed_parse_error) {
  static const char text[] = "t1|begin|1\nt1|w(x)|2\nt1|w x|3\nt1|end|4\n";
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, text, strlen(text), "p.std"), 0);
  uint64_t pushed;
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, NULL, NULL), ATOM_EPARSE);
  ck_assert_uint_eq(pushed, 2);
  ck_assert_str_eq(atom_last_error(), "p.std:3: operation 'w' needs an argument: w(NAME)");
  ck_assert_uint_eq(atom_trace_reader_line(r), 3);
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, NULL, NULL), ATOM_EPARSE);
  ck_assert_uint_eq(pushed, 0);
  ck_assert_str_eq(atom_last_error(), "p.std:3: operation 'w' needs an argument: w(NAME)");
  atom_trace_reader_free(r);
  atom_session_free(s);
}
END_TEST

/* Session errors other than rejections end the feed with that error. */
START_TEST(feed_finished_session) {
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open_memory(&r, basic_trace, strlen(basic_trace), "b.std"), 0);
  uint64_t pushed = 5;
  ck_assert_int_eq(atom_trace_feed(s, r, 0, &pushed, NULL, NULL), ATOM_ESTATE);
  ck_assert_uint_eq(pushed, 0);
  atom_trace_reader_free(r);
  atom_session_free(s);
}
END_TEST

/* A whole corpus trace through feed with a checker attached gives its reports. */
START_TEST(feed_with_checker) {
  char path[512];
  snprintf(path, sizeof path, "%s/aerodrome-rho1prime.std", ATOM_CORPUS_DIR);
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach(s, "aerodrome"), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(atom_trace_reader_open(&r, path), 0);
  ck_assert_int_eq(atom_trace_feed(s, r, 0, NULL, NULL, NULL), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_ge(atom_report_count(s), 1);
  atom_trace_reader_free(r);
  atom_session_free(s);
}
END_TEST

/* Flags read from a file reach the checkers as ATOM_EV_ACQUIRE / ATOM_EV_RELEASE. */
START_TEST(feed_flagged) {
  atom_session *s;
  ck_assert_int_eq(atom_session_new(&s, NULL), 0);
  ck_assert_int_eq(atom_session_attach_checker(s, &tu_recorder_checker, NULL), 0);
  atom_trace_reader *r;
  ck_assert_int_eq(
      atom_trace_reader_open_memory(&r, flagged_trace, strlen(flagged_trace), "flags.std"), 0);
  ck_assert_int_eq(atom_trace_feed(s, r, 0, NULL, NULL, NULL), 0);
  tu_recorder *rec = tu_recorder_of(s, 0);
  ck_assert_uint_eq(rec->count, 5);
  ck_assert_uint_eq(rec->events[0].flags, 0);
  ck_assert_uint_eq(rec->events[1].flags, ATOM_EV_RELEASE);
  ck_assert_uint_eq(rec->events[2].flags, ATOM_EV_ACQUIRE);
  ck_assert_uint_eq(rec->events[3].flags, 0);
  ck_assert_uint_eq(rec->events[4].flags, 0);
  ck_assert_int_eq(atom_finish(s), 0);
  atom_trace_reader_free(r);
  atom_session_free(s);
}
END_TEST


/* ---- the word-at-a-time line parser ---------------------------------------------------- */

/* A generated trace and the events it must give, built side by side: the oracle interns names
 * in first-use order per space, as doc/trace-format.md says, with no code shared with the
 * reader. */
typedef struct gen_trace {
  char *text;
  size_t len, cap;
  atom_event *ev;
  uint64_t *line;
  size_t n, ev_cap;
  uint64_t lines;
  char names[3][256][24]; /* per space: the names seen, in key order */
  int n_names[3];
} gen_trace;

static void gen_put(gen_trace *g, const char *s, size_t n) {
  if (g->len + n + 1 > g->cap) {
    g->cap = (g->len + n + 1) * 2;
    g->text = realloc(g->text, g->cap);
    ck_assert_ptr_nonnull(g->text);
  }
  memcpy(g->text + g->len, s, n);
  g->len += n;
  g->text[g->len] = '\0';
}

static uint64_t gen_key(gen_trace *g, int space, const char *name) {
  for (int i = 0; i < g->n_names[space - 1]; i++)
    if (!strcmp(g->names[space - 1][i], name)) return (uint64_t)i + 1;
  int k = g->n_names[space - 1]++;
  ck_assert_int_lt(k, 256);
  snprintf(g->names[space - 1][k], sizeof g->names[0][0], "%s", name);
  return (uint64_t)k + 1;
}

/* Name number `which` (0..3) of `len` bytes (1..23): a few per length, so names recur; bytes
 * the format allows in names, UTF-8 among them. */
static void gen_name(char *out, size_t len, uint64_t which) {
  static const char pool[] = "abcXYZ019_.:/[]#-\xc3\xa9";
  uint64_t x = len * 31 + which + 1;
  for (size_t i = 0; i < len; i++) out[i] = pool[xs(&x) % (sizeof pool - 1)];
  out[0] = (char)('a' + which); /* never '#' first (a comment) */
  out[len] = '\0';
}

/* Appends one event with its line (the next one) to g. */
static void gen_event(gen_trace *g, atom_event e) {
  if (g->n == g->ev_cap) {
    g->ev_cap = g->ev_cap ? g->ev_cap * 2 : 256;
    g->ev = realloc(g->ev, g->ev_cap * sizeof *g->ev);
    g->line = realloc(g->line, g->ev_cap * sizeof *g->line);
    ck_assert_ptr_nonnull(g->ev);
    ck_assert_ptr_nonnull(g->line);
  }
  g->ev[g->n] = e;
  g->line[g->n++] = ++g->lines;
}

/* Appends one line of n bytes that reads as @p ev, and the event with its line. */
static void gen_put_line(gen_trace *g, const char *buf, size_t n, atom_event ev) {
  gen_put(g, buf, n);
  gen_event(g, ev);
}

/* One event line: names of every length around 8 and 16 bytes, every operation, blanks where
 * the format allows them, CR LF or LF, and the event it must give. */
static void gen_line(gen_trace *g, uint64_t *x, int last_unterminated) {
  static const struct {
    const char *op;
    uint32_t kind, flags;
    int space; /* of the target, 0: none */
  } ops[] = {{"r", ATOM_READ, 0, ATOM_SPACE_VAR},
             {"w", ATOM_WRITE, 0, ATOM_SPACE_VAR},
             {"acq", ATOM_ACQUIRE, 0, ATOM_SPACE_LOCK},
             {"rel", ATOM_RELEASE, 0, ATOM_SPACE_LOCK},
             {"fork", ATOM_FORK, 0, ATOM_SPACE_THREAD},
             {"join", ATOM_JOIN, 0, ATOM_SPACE_THREAD},
             {"begin", ATOM_BEGIN, 0, 0},
             {"end", ATOM_END, 0, 0},
             {"fence", ATOM_FENCE, 0, 0},
             {"commit", ATOM_COMMIT, 0, ATOM_SPACE_VAR},
             {"r.acq", ATOM_READ, ATOM_FLAG_ACQUIRE, ATOM_SPACE_VAR},
             {"w.rel", ATOM_WRITE, ATOM_FLAG_RELEASE, ATOM_SPACE_VAR}};
  static const size_t lens[] = {1, 2, 3, 6, 7, 8, 9, 15, 16, 17, 23};
  char th[24], tg[24], buf[160];
  gen_name(th, lens[xs(x) % 11], xs(x) % 4);
  int o = xs(x) % 4 ? (int)(xs(x) % 4) : (int)(xs(x) % 12); /* mostly r, w, acq, rel */
  int blanks = xs(x) % 8 == 0;
  const char *b = blanks ? (xs(x) % 2 ? " " : " \t") : "";
  uint64_t loc = xs(x) % 5 == 0 ? xs(x) : xs(x) % (xs(x) % 2 ? 100 : 100000000);
  int n = snprintf(buf, sizeof buf, "%s%s%s|%s%s", b, th, b, b, ops[o].op);
  uint64_t thread = gen_key(g, ATOM_SPACE_THREAD, th), target = 0;
  if (ops[o].space) {
    gen_name(tg, lens[xs(x) % 11], xs(x) % 4);
    n += snprintf(buf + n, sizeof buf - (size_t)n, "%s(%s%s%s)", b, b, tg, b);
    target = gen_key(g, ops[o].space, tg);
  }
  n += snprintf(buf + n, sizeof buf - (size_t)n, "%s|%s%" PRIu64 "%s%s", b, b, loc, b,
                last_unterminated ? "" : xs(x) % 3 == 0 ? "\r\n" : "\n");
  gen_put_line(g, buf, (size_t)n,
               (atom_event){.kind = ops[o].kind, .flags = ops[o].flags, .thread = thread,
                            .target = target, .loc = loc});
}

static void gen_free(gen_trace *g) {
  free(g->text);
  free(g->ev);
  free(g->line);
}

/* The reader's outcome for g's text through `via` is exactly g's events, lines and names. */
static void ck_gen(const gen_trace *g, int via, const char *what) {
  opened op;
  outcome o;
  ck_assert_int_eq(open_via(via, g->text, g->len, &op), 0);
  read_all(op.r, &o);
  ck_assert_msg(o.rc == 0, "%s via %s: %s", what, via_name[via], o.msg);
  ck_assert_msg(o.n == g->n, "%s via %s: %zu events, not %zu", what, via_name[via], o.n, g->n);
  for (size_t i = 0; i < g->n; i++) {
    const atom_event *a = &o.ev[i], *e = &g->ev[i];
    ck_assert_msg(a->kind == e->kind && a->flags == e->flags && a->thread == e->thread &&
                      a->target == e->target && a->loc == e->loc && o.line[i] == g->line[i],
                  "%s via %s: event %zu (line %" PRIu64 ") differs: %u %u %" PRIu64 " %" PRIu64
                  " %" PRIu64 " at line %" PRIu64 ", not %u %u %" PRIu64 " %" PRIu64 " %" PRIu64,
                  what, via_name[via], i, g->line[i], a->kind, a->flags, a->thread, a->target,
                  a->loc, o.line[i], e->kind, e->flags, e->thread, e->target, e->loc);
  }
  for (int sp = 0; sp < 3; sp++)
    for (int k = 0; k < g->n_names[sp]; k++)
      ck_assert_str_eq(atom_trace_reader_name(op.r, sp + 1, (uint64_t)k + 1), g->names[sp][k]);
  outcome_free(&o);
  close_via(&op);
}

/* @p iters random traces of 1 to @p max_lines lines made by @p line (seeded seed + the
 * iteration; every odd one without a final newline; with @p comments, a comment line now and
 * then between them), each read through every route and compared with what was written. */
static void check_random_lines(uint64_t seed, int iters, int max_lines,
                               void (*line)(gen_trace *, uint64_t *, int), int comments) {
  for (int iter = 0; iter < iters; iter++) {
    gen_trace g;
    memset(&g, 0, sizeof g);
    uint64_t x = seed + (uint64_t)iter;
    int lines = 1 + (int)(xs(&x) % (uint64_t)max_lines);
    for (int i = 0; i < lines; i++) {
      if (comments && xs(&x) % 50 == 0) {
        gen_put(&g, "# c\n", 4);
        g.lines++;
      }
      line(&g, &x, iter % 2 && i == lines - 1);
    }
    char what[32];
    snprintf(what, sizeof what, "iteration %d", iter);
    for (int via = 0; via < VIA_COUNT; via++) ck_gen(&g, via, what);
    gen_free(&g);
  }
}

START_TEST(word_parser_lines) { check_random_lines(1234, 40, 300, gen_line, 0); }
END_TEST

/* Lines ending at and around the end of the stream reader's first read (its 256 KiB buffer
 * less the byte kept for a final '\n') and at the end of the input, where fewer bytes than a
 * word remain after a line's start. */
START_TEST(word_parser_boundaries) {
  enum { FIRST_READ = (256 << 10) - 1 };
  for (int shift = 0; shift < 48; shift++) {
    gen_trace g;
    memset(&g, 0, sizeof g);
    uint64_t x = 99 + (uint64_t)shift;
    /* Comment lines up to a little before the boundary, then event lines across it. */
    char pad[100];
    memset(pad, 'p', sizeof pad);
    pad[0] = '#';
    pad[99] = '\n';
    size_t target = FIRST_READ - 200 + (size_t)shift;
    while (g.len + 100 <= target) {
      gen_put(&g, pad, 100);
      g.lines++;
    }
    size_t rest = target - g.len;
    if (rest >= 2) {
      gen_put(&g, pad, rest - 1);
      gen_put(&g, "\n", 1);
      g.lines++;
    }
    while (g.len < FIRST_READ + 300) gen_line(&g, &x, 0);
    char what[32];
    snprintf(what, sizeof what, "shift %d", shift);
    ck_gen(&g, VIA_FILE, what);
    ck_gen(&g, VIA_MEMORY, what);
    if (shift % 8 == 0) ck_gen(&g, VIA_PIPE, what);
    gen_free(&g);
  }
}
END_TEST

/* Lines of the shapes the 16-byte-load parser takes and just past them: plain names of 1 to 40
 * bytes (so lines end at every byte of the first and second load), every operation, locations
 * of 1 to 20 digits, LF or CR LF, the last line with or without its line end, each run of
 * lines at the end of the input (fewer bytes left than the loads read). */
static void gen_plain_line(gen_trace *g, uint64_t *x, int last_unterminated) {
  static const struct {
    const char *op;
    uint32_t kind;
    int space;
  } ops[] = {{"r", ATOM_READ, ATOM_SPACE_VAR},       {"w", ATOM_WRITE, ATOM_SPACE_VAR},
             {"acq", ATOM_ACQUIRE, ATOM_SPACE_LOCK}, {"rel", ATOM_RELEASE, ATOM_SPACE_LOCK},
             {"fork", ATOM_FORK, ATOM_SPACE_THREAD}, {"join", ATOM_JOIN, ATOM_SPACE_THREAD},
             {"begin", ATOM_BEGIN, 0},               {"end", ATOM_END, 0},
             {"fence", ATOM_FENCE, 0},               {"commit", ATOM_COMMIT, ATOM_SPACE_VAR}};
  static const char pool[] = "Tabz09V_L.:/[]-*{@";
  char th[24], tg[24], buf[160];
  size_t tl = xs(x) % 3 ? 1 + xs(x) % 9 : 1 + xs(x) % 23;
  size_t nl = xs(x) % 3 ? 1 + xs(x) % 9 : 1 + xs(x) % 23;
  /* A few names of each length, so that names recur (and fewer than 256 per space). */
  uint64_t tw = xs(x) % 3, nw = xs(x) % 3;
  for (size_t i = 0; i < tl; i++) th[i] = pool[(tw * 5 + i * 7) % (sizeof pool - 1)];
  for (size_t i = 0; i < nl; i++) tg[i] = pool[(nw * 5 + i * 3 + 1) % (sizeof pool - 1)];
  th[tl] = tg[nl] = '\0';
  int o = (int)(xs(x) % 10);
  static const uint64_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                   100000000, 1000000000, 10000000000ULL};
  int digits = (int)(xs(x) % 21); /* 0: 20 digits */
  uint64_t loc = digits == 0 ? UINT64_MAX - xs(x) % 1000
                 : digits <= 10 ? xs(x) % pow10[digits]
                                : xs(x) % 10000000000000000000ULL;
  int n = snprintf(buf, sizeof buf, "%s|%s", th, ops[o].op);
  uint64_t thread = gen_key(g, ATOM_SPACE_THREAD, th), target = 0;
  if (ops[o].space) {
    n += snprintf(buf + n, sizeof buf - (size_t)n, "(%s)", tg);
    target = gen_key(g, ops[o].space, tg);
  }
  n += snprintf(buf + n, sizeof buf - (size_t)n, "|%" PRIu64 "%s", loc,
                last_unterminated ? "" : xs(x) % 5 == 0 ? "\r\n" : "\n");
  gen_put_line(g, buf, (size_t)n,
               (atom_event){.kind = ops[o].kind, .thread = thread, .target = target, .loc = loc});
}

START_TEST(simd_parser_lines) { check_random_lines(777, 60, 400, gen_plain_line, 1); }
END_TEST

/* Names of 1 to 40 bytes in the thread and in the target field of the shortest lines: every
 * position of the first delimiter inside and after a 16-byte load. */
START_TEST(simd_parser_name_lengths) {
  for (int tl = 1; tl <= 40; tl++) {
    gen_trace g;
    memset(&g, 0, sizeof g);
    char name[48], buf[256];
    for (int i = 0; i < tl; i++) name[i] = (char)('a' + i % 26);
    name[tl] = '\0';
    /* Keys in first-use order (the oracle's name table holds up to 23 bytes: not used). */
    uint64_t t = 1, v = 1, u = 2;
    for (int rep = 0; rep < 4; rep++) {
      int n = snprintf(buf, sizeof buf, "%s|w(%s)|%d\nU|r(%s)|%d\n%s|end|7\n", name, name, rep,
                       name, tl, name);
      gen_put(&g, buf, (size_t)n);
      atom_event e[3] = {{.kind = ATOM_WRITE, .thread = t, .target = v, .loc = (uint64_t)rep},
                         {.kind = ATOM_READ, .thread = u, .target = v, .loc = (uint64_t)tl},
                         {.kind = ATOM_END, .thread = t, .loc = 7}};
      for (int k = 0; k < 3; k++) {
        if (g.n == g.ev_cap) {
          g.ev_cap = g.ev_cap ? g.ev_cap * 2 : 64;
          g.ev = realloc(g.ev, g.ev_cap * sizeof *g.ev);
          g.line = realloc(g.line, g.ev_cap * sizeof *g.line);
          ck_assert_ptr_nonnull(g.ev);
          ck_assert_ptr_nonnull(g.line);
        }
        g.ev[g.n] = e[k];
        g.line[g.n++] = ++g.lines;
      }
    }
    char what[32];
    snprintf(what, sizeof what, "name of %d bytes", tl);
    ck_gen(&g, VIA_MEMORY, what);
    ck_gen(&g, VIA_FILE, what);
    gen_free(&g);
  }
}
END_TEST

/* Locations of 1 to 9 digits after names of 1 to 7 bytes (and after an operation without a
 * target): the location ends at every byte from 6 to 32 of the line, inside the 16-byte load
 * and past it, with LF or CR LF; and a thread forking itself, both names new, so that the
 * thread and the target miss the name cache in the same line. */
START_TEST(simd_parser_locations) {
  static const uint64_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                   100000000, 1000000000};
  gen_trace g;
  memset(&g, 0, sizeof g);
  char buf[96], th[8], tg[8];
  uint64_t x = 4242;
  for (int tl = 1; tl <= 7; tl++)
    for (int nl = 0; nl <= 7; nl++)
      for (int d = 1; d <= 9; d++)
        for (int crlf = 0; crlf < 2; crlf++) {
          for (int i = 0; i < tl; i++) th[i] = (char)('A' + (i + tl) % 26);
          for (int i = 0; i < nl; i++) tg[i] = (char)('a' + (i * 3 + nl) % 26);
          th[tl] = tg[nl] = '\0';
          /* exactly d digits, with leading zeros when the value is shorter */
          uint64_t loc = xs(&x) % pow10[d];
          char digits[24];
          snprintf(digits, sizeof digits, "%0*" PRIu64, d, loc);
          const char *end = crlf ? "\r\n" : "\n";
          int n = nl ? snprintf(buf, sizeof buf, "%s|r(%s)|%s%s", th, tg, digits, end)
                     : snprintf(buf, sizeof buf, "%s|end|%s%s", th, digits, end);
          gen_put(&g, buf, (size_t)n);
          uint64_t tk = gen_key(&g, ATOM_SPACE_THREAD, th);
          gen_event(&g, (atom_event){.kind = nl ? ATOM_READ : ATOM_END,
                                     .thread = tk,
                                     .target = nl ? gen_key(&g, ATOM_SPACE_VAR, tg) : 0,
                                     .loc = loc});
        }
  for (int i = 0; i < 20; i++) {
    snprintf(th, sizeof th, "F%d", i);
    int n = snprintf(buf, sizeof buf, "%s|fork(%s)|%d\n", th, th, i);
    gen_put(&g, buf, (size_t)n);
    uint64_t k = gen_key(&g, ATOM_SPACE_THREAD, th);
    gen_event(&g, (atom_event){.kind = ATOM_FORK, .thread = k, .target = k, .loc = (uint64_t)i});
  }
  for (int via = 0; via < VIA_COUNT; via++) ck_gen(&g, via, "locations");
  gen_free(&g);
}
END_TEST

/* ---- reading in parallel --------------------------------------------------------------- */

/* Everything a reader delivers: the outcome, then its names and directives, as text. */
typedef struct full_outcome {
  outcome o;
  char *names; /* "space key name\n" for every name; then "#space key text\n" per directive */
  size_t names_len, names_cap;
} full_outcome;

static void full_append(full_outcome *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void full_append(full_outcome *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  ck_assert_int_ge(k, 0);
  if (f->names_len + (size_t)k + 1 > f->names_cap) {
    f->names_cap = (f->names_len + (size_t)k + 1) * 2;
    f->names = realloc(f->names, f->names_cap);
    ck_assert_ptr_nonnull(f->names);
  }
  va_start(ap, fmt);
  vsnprintf(f->names + f->names_len, (size_t)k + 1, fmt, ap);
  va_end(ap);
  f->names_len += (size_t)k;
}

/* The first chunk whose names the consumer maps (read_full, parallel reading), or
 * UINT64_MAX: every chunk's names are mapped by the workers. */
static uint64_t full_lazy_from = UINT64_MAX;
/* The names the parallel reader's slots keep (read_full), or SIZE_MAX: the default. */
static size_t full_keep_names = SIZE_MAX;

/* Read text through `via` (memory or file) with `threads` threads and chunks of `chunk`
 * bytes (0: the default). */
static void read_full(int via, const char *text, size_t size, unsigned threads, size_t chunk,
                      full_outcome *f) {
  opened op;
  memset(f, 0, sizeof *f);
  ck_assert_int_eq(open_via(via, text, size, &op), 0);
  ck_assert_int_eq(atom_trace_reader_set_threads(op.r, threads), 0);
  atom__trace_reader_set_chunk(op.r, chunk);
  atom__trace_reader_set_lazy_names(op.r, full_lazy_from);
  if (full_keep_names != SIZE_MAX) atom__trace_reader_set_keep_names(op.r, full_keep_names);
  read_all(op.r, &f->o);
  full_append(f, "%s", "");
  for (int what = ATOM_SPACE_THREAD; what <= ATOM_SPACE_LOCK; what++)
    for (uint64_t key = 1; atom_trace_reader_name(op.r, what, key); key++)
      full_append(f, "%d %" PRIu64 " %s\n", what, key, atom_trace_reader_name(op.r, what, key));
  size_t n, *done;
  const atom__trace_directive *d = atom__trace_reader_directives(op.r, &n, &done);
  for (size_t i = 0; i < n; i++)
    full_append(f, "#%d %" PRIu64 " %s\n", d[i].space, d[i].key, d[i].text);
  /* Reading again after the end or the error gives the same answer. */
  atom_event ev;
  int again = atom_trace_reader_next(op.r, &ev);
  ck_assert_int_eq(again, f->o.rc);
  close_via(&op);
}

static void full_free(full_outcome *f) {
  outcome_free(&f->o);
  free(f->names);
}

static void ck_same_outcome(const full_outcome *a, const full_outcome *b, const char *what) {
  ck_assert_msg(a->o.rc == b->o.rc, "%s: rc %d, not %d (%s)", what, b->o.rc, a->o.rc, b->o.msg);
  ck_assert_msg(strcmp(a->o.msg, b->o.msg) == 0, "%s: '%s', not '%s'", what, b->o.msg, a->o.msg);
  ck_assert_msg(a->o.n == b->o.n, "%s: %zu events, not %zu", what, b->o.n, a->o.n);
  ck_assert_msg(a->o.n == 0 || memcmp(a->o.ev, b->o.ev, a->o.n * sizeof *a->o.ev) == 0,
                "%s: events differ", what);
  ck_assert_msg(a->o.n == 0 || memcmp(a->o.line, b->o.line, a->o.n * sizeof *a->o.line) == 0,
                "%s: lines differ", what);
  ck_assert_msg(a->o.line_at_end == b->o.line_at_end, "%s: last line %" PRIu64 ", not %" PRIu64,
                what, b->o.line_at_end, a->o.line_at_end);
  ck_assert_msg(strcmp(a->names, b->names) == 0, "%s: names or directives differ", what);
}

/* g read every way serially, then in parallel (3 threads) with chunks of 50 bytes and more,
 * up to max_chunk: the same outcome each time. */
static void ck_gen_serial_and_parallel(const gen_trace *g, const char *what, size_t max_chunk) {
  for (int via = 0; via < VIA_COUNT; via++) ck_gen(g, via, what);
  full_outcome serial, par;
  read_full(VIA_MEMORY, g->text, g->len, 1, 0, &serial);
  for (size_t chunk = 50; chunk <= max_chunk; chunk = chunk * 3 + 7) {
    read_full(VIA_MEMORY, g->text, g->len, 3, chunk, &par);
    ck_same_outcome(&serial, &par, what);
    full_free(&par);
  }
  full_free(&serial);
}

/* The 16-byte-load parser's cache of line heads ("THREAD|op(" of at most 8 bytes): each head
 * seen first in a common line, then in lines that share it and go on otherwise (blanks, a
 * flag, names past the load, a '#' or an empty target that the general parser refuses in
 * other tests), and heads of 8 bytes and more whose first 8 bytes are those of a cached one.
 * Read serially and in parallel with small chunks (every chunk's local keys differ, so a head
 * kept from the chunk before would give a wrong thread). */
START_TEST(simd_parser_heads) {
  static const char *const threads[] = {"T", "T5", "ABCDE", "ABCDEF", "ABCDEFG", "T55"};
  static const struct {
    const char *op;
    uint32_t kind, flags;
    int space;
  } ops[] = {{"r", ATOM_READ, 0, ATOM_SPACE_VAR},
             {"w", ATOM_WRITE, 0, ATOM_SPACE_VAR},
             {"acq", ATOM_ACQUIRE, 0, ATOM_SPACE_LOCK},
             {"rel", ATOM_RELEASE, 0, ATOM_SPACE_LOCK},
             {"end", ATOM_END, 0, 0},
             {"begin", ATOM_BEGIN, 0, 0},
             {"fork", ATOM_FORK, 0, ATOM_SPACE_THREAD},
             {"commit", ATOM_COMMIT, 0, ATOM_SPACE_VAR},
             {"r.acq", ATOM_READ, ATOM_FLAG_ACQUIRE, ATOM_SPACE_VAR}};
  static const char *const targets[] = {"V1", "V12345678", "x"};
  gen_trace g;
  memset(&g, 0, sizeof g);
  char buf[128];
  uint64_t x = 31337;
  for (int round = 0; round < 40; round++)
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
      for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        /* Shuffled a little, so that the thread names' first uses differ between chunks. */
        const char *th = threads[(t + (size_t)round * 5) % (sizeof threads / sizeof *threads)];
        const char *tg = targets[xs(&x) % 3];
        int blank = xs(&x) % 7 == 0;
        uint64_t loc = xs(&x) % 300;
        int n = ops[o].space
                    ? snprintf(buf, sizeof buf, "%s|%s(%s%s)|%" PRIu64 "\n", th, ops[o].op,
                               blank ? " " : "", tg, loc)
                    : snprintf(buf, sizeof buf, "%s|%s|%" PRIu64 "\n", th, ops[o].op, loc);
        gen_put(&g, buf, (size_t)n);
        uint64_t tk = gen_key(&g, ATOM_SPACE_THREAD, th);
        gen_event(&g, (atom_event){.kind = ops[o].kind,
                                   .flags = ops[o].flags,
                                   .thread = tk,
                                   .target = ops[o].space ? gen_key(&g, ops[o].space, tg) : 0,
                                   .loc = loc});
      }
  ck_gen_serial_and_parallel(&g, "heads", 2000);
  gen_free(&g);
}
END_TEST

/* A thread that forks or joins a thread by its own name, and one by a name new on that line:
 * both names missed the 16-byte-load parser's caches, and interning the first fills the slot
 * the second probed (the same name, the same slot). Serially and in parallel. */
START_TEST(simd_parser_fork_self) {
  gen_trace g;
  memset(&g, 0, sizeof g);
  char buf[64], th[16], other[16];
  for (int i = 0; i < 120; i++) { /* 240 names: gen_trace holds 256 */
    snprintf(th, sizeof th, "F%d", i);
    snprintf(other, sizeof other, "G%d", i);
    const char *op = i % 2 ? "join" : "fork";
    uint32_t kind = i % 2 ? ATOM_JOIN : ATOM_FORK;
    int n = snprintf(buf, sizeof buf, "%s|%s(%s)|%d\n", th, op, th, i % 90);
    gen_put(&g, buf, (size_t)n);
    uint64_t tk = gen_key(&g, ATOM_SPACE_THREAD, th);
    gen_event(&g, (atom_event){.kind = kind, .thread = tk, .target = tk, .loc = (uint64_t)(i % 90)});
    n = snprintf(buf, sizeof buf, "%s|%s(%s)|7\n", th, op, other);
    gen_put(&g, buf, (size_t)n);
    uint64_t ok = gen_key(&g, ATOM_SPACE_THREAD, other);
    gen_event(&g, (atom_event){.kind = kind, .thread = tk, .target = ok, .loc = 7});
  }
  ck_gen_serial_and_parallel(&g, "fork self", 5000);
  gen_free(&g);
}
END_TEST

/* A random trace of about `lines` lines: every operation, short and long names, comments,
 * blank lines, CR LF line ends, blanks around fields, "#name" directives; with `bom` a byte
 * order mark first; with `bad_at` > 0 a malformed line there; with `unterminated` no line end
 * after the last line. */
static size_t random_std(char *buf, size_t cap, uint64_t seed, int lines, int bom, int bad_at,
                         int unterminated) {
  static const char *const ops[] = {"r", "w", "acq", "rel", "fork", "join", "begin",
                                    "end", "fence", "commit", "r.acq", "w.rel"};
  static const char *const bad[] = {"t1|r(x\n", "t1|bogus|3\n", "t1|r(x)|-1\n", "|r(x)|1\n",
                                    "#name var\n", "t1|r(#x)|1\n"};
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  size_t len = 0;
  if (bom) len += (size_t)snprintf(buf + len, cap - len, "\xEF\xBB\xBF");
  for (int i = 1; i <= lines && len + 300 < cap; i++) {
    uint64_t v = xs(&x);
    if (i == bad_at) {
      len += (size_t)snprintf(buf + len, cap - len, "%s", bad[v % 6]);
      continue;
    }
    switch (v % 23) {
      case 0: len += (size_t)snprintf(buf + len, cap - len, "# comment %d\n", i); continue;
      case 1: len += (size_t)snprintf(buf + len, cap - len, "%s", v & 64 ? "\n" : "  \r\n"); continue;
      case 2:
        len += (size_t)snprintf(buf + len, cap - len, "#name %s %s%u shown %d\n",
                                (v >> 8) & 1 ? "var" : "thread", (v >> 8) & 1 ? "v" : "t",
                                (unsigned)(v >> 10) % 40, i);
        continue;
      case 3:
        len += (size_t)snprintf(buf + len, cap - len, "#name loc %u L%d\n", (unsigned)(v >> 9) % 9, i);
        continue;
      default: break;
    }
    const char *op = ops[(v >> 5) % 12];
    unsigned t = (unsigned)(v >> 12) % 9, a = (unsigned)(v >> 20) % 60;
    const char *tn = (v >> 30) & 1 ? "a_thread_with_a_long_name_" : "t";
    const char *sp = (v >> 31) % 8 == 0 ? " \t" : "";
    const char *eol = (v >> 34) % 10 == 0 ? "\r\n" : "\n";
    uint64_t loc = (v >> 40) % 1000;
    if (!strcmp(op, "begin") || !strcmp(op, "end") || !strcmp(op, "fence"))
      len += (size_t)snprintf(buf + len, cap - len, "%s%s%u|%s%s|%" PRIu64 "%s", sp, tn, t, op,
                              sp, loc, eol);
    else
    {
      int is_lock = op[0] == 'a' || (op[0] == 'r' && op[1] == 'e');
      int is_thread = op[0] == 'f' || op[0] == 'j';
      const char *an = is_lock ? "m" : is_thread ? tn : (v >> 36) & 1 ? "v"
                                                        : "variable_with_a_long_name_";
      unsigned ai = is_thread ? (unsigned)(v >> 45) % 9 : is_lock ? a % 5 : a;
      len += (size_t)snprintf(buf + len, cap - len, "%s%u%s|%s(%s%u)|%s%" PRIu64 "%s", tn, t, sp,
                              op, an, ai, sp, loc, eol);
    }
  }
  if (unterminated && len && buf[len - 1] == '\n') {
    len--;
    if (len && buf[len - 1] == '\r') len--;
  }
  return len;
}

START_TEST(parallel_matches_serial) {
  enum { CAP = 1 << 17 };
  char *text = malloc(CAP);
  ck_assert_ptr_nonnull(text);
  for (int iter = 0; iter < 160; iter++) {
    uint64_t x = (uint64_t)iter + 77;
    int lines = 1 + (int)(xs(&x) % 1500);
    int bad_at = iter % 3 == 0 ? 1 + (int)(xs(&x) % (uint64_t)lines) : 0;
    size_t len = random_std(text, CAP, (uint64_t)iter, lines, iter % 5 == 0, bad_at,
                            iter % 4 == 1);
    int via = iter % 2 ? VIA_FILE : VIA_MEMORY;
    full_outcome ref;
    read_full(via, text, len, 1, 0, &ref);
    static const size_t chunks[] = {1, 7, 64, 1000, 0};
    for (unsigned threads = 2; threads <= 4; threads += 2) {
      for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        full_outcome par;
        char what[96];
        snprintf(what, sizeof what, "iteration %d, %s, %u threads, chunks of %zu", iter,
                 via_name[via], threads, chunks[c]);
        read_full(via, text, len, threads, chunks[c], &par);
        ck_same_outcome(&ref, &par, what);
        full_free(&par);
      }
    }
    full_free(&ref);
  }
  free(text);
}
END_TEST

/* Case iter of a random test of the parallel reader: a random_std trace of 1 to max_lines
 * lines from seed + iter, every fourth with a malformed line, every third unterminated; read
 * from a file (*via) for odd iterations, from memory for even ones. Returns its length. */
static size_t random_case(char *text, size_t cap, int iter, uint64_t seed, int max_lines,
                          int bom, int *via) {
  uint64_t x = (uint64_t)iter + seed + 234;
  int lines = 1 + (int)(xs(&x) % (uint64_t)max_lines);
  int bad_at = iter % 4 == 0 ? 1 + (int)(xs(&x) % (uint64_t)lines) : 0;
  *via = iter % 2 ? VIA_FILE : VIA_MEMORY;
  return random_std(text, cap, (uint64_t)iter + seed, lines, bom, bad_at, iter % 3 == 1);
}

/* The text read in parallel (3 threads, chunks of `chunk` bytes) with the slots keeping at
 * most `keep` names and names lazy from chunk `lazy_from` on: the outcome ref. */
static void ck_parallel_as(const full_outcome *ref, int via, const char *text, size_t len,
                           size_t chunk, size_t keep, uint64_t lazy_from, const char *what) {
  full_outcome par;
  full_keep_names = keep;
  full_lazy_from = lazy_from;
  read_full(via, text, len, 3, chunk, &par);
  full_keep_names = SIZE_MAX;
  full_lazy_from = UINT64_MAX;
  ck_same_outcome(ref, &par, what);
  full_free(&par);
}

/* Names mapped by the workers for the first chunks and by the consumer from a later one on
 * (what a failure of the workers' shared name table leads to): the serial reader's events,
 * lines, names and directives all the same. */
START_TEST(parallel_lazy_names) {
  enum { CAP = 1 << 16 };
  char *text = malloc(CAP);
  ck_assert_ptr_nonnull(text);
  static const uint64_t from[] = {0, 1, 2, 5, 40};
  for (int iter = 0; iter < 40; iter++) {
    int via;
    size_t len = random_case(text, CAP, iter, 1000, 800, 0, &via);
    full_outcome ref;
    read_full(via, text, len, 1, 0, &ref);
    for (size_t k = 0; k < sizeof from / sizeof from[0]; k++) {
      char what[96];
      snprintf(what, sizeof what, "iteration %d, %s, names lazy from chunk %" PRIu64, iter,
               via_name[via], from[k]);
      ck_parallel_as(&ref, via, text, len, 200, SIZE_MAX, from[k], what);
    }
    full_free(&ref);
  }
  free(text);
}
END_TEST

/* The slots' readers keep their names from chunk to chunk up to a bound, past which they forget
 * them before their next chunk: with every bound (0: never kept), and with names lazy from a
 * chunk on, the serial reader's events, lines, names and directives all the same. */
START_TEST(parallel_kept_names) {
  enum { CAP = 1 << 16 };
  char *text = malloc(CAP);
  ck_assert_ptr_nonnull(text);
  static const size_t keep[] = {0, 3, 40, 100000};
  for (int iter = 0; iter < 16; iter++) {
    int via;
    size_t len = random_case(text, CAP, iter, 2000, 1200, iter % 5 == 0, &via);
    full_outcome ref;
    read_full(via, text, len, 1, 0, &ref);
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
      for (int lazy = 0; lazy < 2; lazy++) {
        char what[112];
        snprintf(what, sizeof what, "iteration %d, %s, %zu names kept%s", iter, via_name[via],
                 keep[k], lazy ? ", names lazy from chunk 6" : "");
        ck_parallel_as(&ref, via, text, len, 150, keep[k], lazy ? 6 : UINT64_MAX, what);
      }
    }
    full_free(&ref);
  }
  free(text);
}
END_TEST

/* An error in a late chunk: every event before it is delivered, then the serial reader's
 * message and line; the same through atom_trace_feed(). */
START_TEST(parallel_late_error) {
  enum { N = 20000 };
  size_t cap = (size_t)N * 24 + 64, len = 0;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  for (int i = 0; i < N; i++)
    len += (size_t)snprintf(text + len, cap - len, "t%d|w(v%d)|%d\n", i % 7, i % 301, i);
  len += (size_t)snprintf(text + len, cap - len, "t1|r(x|5\nt1|r(x)|6\n");
  for (int via = VIA_MEMORY; via <= VIA_FILE; via++) {
    full_outcome ref, par;
    read_full(via, text, len, 1, 0, &ref);
    ck_assert_int_eq(ref.o.rc, ATOM_EPARSE);
    ck_assert_uint_eq(ref.o.n, N);
    ck_assert_str_eq(ref.o.msg, "20001: missing ')' after 'r(x'");
    read_full(via, text, len, 3, 4096, &par);
    ck_same_outcome(&ref, &par, via_name[via]);
    full_free(&ref);
    full_free(&par);

    opened op;
    ck_assert_int_eq(open_via(via, text, len, &op), 0);
    ck_assert_int_eq(atom_trace_reader_set_threads(op.r, 2), 0);
    atom__trace_reader_set_chunk(op.r, 1000);
    atom_session *s = NULL;
    ck_assert_int_eq(atom_session_new(&s, NULL), 0);
    uint64_t pushed = 0;
    ck_assert_int_eq(atom_trace_feed(s, op.r, 0, &pushed, NULL, NULL), ATOM_EPARSE);
    ck_assert_uint_eq(pushed, N);
    ck_assert_uint_eq(atom_trace_reader_line(op.r), N + 1);
    ck_assert_int_eq(atom_trace_reader_set_threads(op.r, 2), ATOM_EINVAL);
    atom_session_free(s);
    close_via(&op);
  }
  free(text);
}
END_TEST

/* The malformed inputs of the serial tests, read in parallel with tiny chunks. */
START_TEST(parallel_malformed) {
  for (size_t i = 0; i < N_BAD; i++) {
    const bad_case *c = &bad_cases[i];
    size_t size = c->size ? c->size : strlen(c->text);
    for (int via = VIA_MEMORY; via <= VIA_FILE; via++) {
      full_outcome ref, par;
      read_full(via, c->text, size, 1, 0, &ref);
      read_full(via, c->text, size, 2, 3, &par);
      char what[64];
      snprintf(what, sizeof what, "case %zu, %s", i, via_name[via]);
      ck_same_outcome(&ref, &par, what);
      full_free(&ref);
      full_free(&par);
    }
  }
}
END_TEST

/* Random edits of a small trace (as random_garbage), read in parallel with chunks of 1 to 8
 * bytes: the same as one thread, whatever the bytes. */
START_TEST(parallel_garbage) {
  static const char seed[] =
      "t1|begin|1\nt1|r(x)|2\nt2|acq(l)|3\nt2|fork(t3)|4\n# c\n#name var x X\nt3|commit(y)|5\n"
      "t1|end|6\n";
  char buf[sizeof seed];
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int iter = 0; iter < 600; iter++) {
    size_t n = damage(buf, seed, sizeof seed - 1, iter, &x);
    full_outcome ref, par;
    read_full(VIA_MEMORY, buf, n, 1, 0, &ref);
    read_full(VIA_MEMORY, buf, n, 2, 1 + (size_t)(x >> 56) % 8, &par);
    char what[32];
    snprintf(what, sizeof what, "iteration %d", iter);
    ck_same_outcome(&ref, &par, what);
    full_free(&ref);
    full_free(&par);
  }
}
END_TEST

/* Lines longer than a chunk, and longer than the longest line allowed, ended or not. */
START_TEST(parallel_long_lines) {
  size_t big = ATOM__TRACE_MAX_LINE + 64, cap = big + 64;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  for (int variant = 0; variant < 4; variant++) {
    /* 0: a long valid name line; 1: a too-long line; 2: 1 unterminated; 3: too long, unended */
    size_t name = variant == 0 ? ATOM__TRACE_MAX_LINE - 16 : big - 20;
    size_t len = (size_t)snprintf(text, cap, "a|r(x)|1\n");
    memset(text + len, 'n', name);
    len += name;
    len += (size_t)snprintf(text + len, cap - len, "|r(x)|2\nb|w(y)|3");
    if (variant != 2 && variant != 3) text[len++] = '\n';
    if (variant == 3) len -= 13; /* the long name without its line's end */
    for (int via = VIA_MEMORY; via <= VIA_FILE; via++) {
      full_outcome ref, par;
      read_full(via, text, len, 1, 0, &ref);
      read_full(via, text, len, 2, 4096, &par);
      char what[48];
      snprintf(what, sizeof what, "variant %d, %s", variant, via_name[via]);
      ck_assert_int_eq(ref.o.rc, variant == 0 ? 0 : ATOM_EPARSE);
      ck_same_outcome(&ref, &par, what);
      full_free(&ref);
      full_free(&par);
    }
  }
  free(text);
}
END_TEST

/* Pipes and standard input are read with one thread whatever was asked for. */
/* A regular file asked to be read with threads is read in parallel: telling its format at open
 * leaves nothing in the reader's buffer (bytes read there would make it read serially). */
START_TEST(parallel_file_starts) {
  static const char text[] = "a|r(x)|1\nb|w(x)|2\na|w(y)|3\nb|r(y)|4\n";
  opened op;
  ck_assert_int_eq(open_via(VIA_FILE, text, sizeof text - 1, &op), 0);
  ck_assert_int_eq(atom_trace_reader_set_threads(op.r, 2), 0);
  atom__trace_reader_set_chunk(op.r, 8);
  atom_event ev;
  ck_assert_int_eq(atom_trace_reader_next(op.r, &ev), 1);
  ck_assert_ptr_nonnull(op.r->par);
  outcome o;
  read_all(op.r, &o);
  ck_assert_int_eq(o.rc, 0);
  ck_assert_uint_eq(o.n, 3);
  outcome_free(&o);
  close_via(&op);
}
END_TEST

START_TEST(parallel_pipe_serial) {
  static const char text[] = "a|r(x)|1\nb|w(x)|2\n";
  full_outcome ref, par;
  read_full(VIA_MEMORY, text, sizeof text - 1, 1, 0, &ref);
  read_full(VIA_PIPE, text, sizeof text - 1, 4, 1, &par);
  ck_same_outcome(&ref, &par, "pipe");
  full_free(&ref);
  full_free(&par);
  ck_assert_int_eq(atom_trace_reader_set_threads(NULL, 2), ATOM_EINVAL);
}
END_TEST

Suite *atom_test_suite_trace(void) {
  Suite *s = suite_create("trace");
  TCase *t = tcase_create("reader");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, basic_all_ops);
  tcase_add_test(t, tolerated_forms);
  tcase_add_test(t, empty_inputs);
  tcase_add_test(t, keys_per_space);
  tcase_add_test(t, similar_names);
  tcase_add_test(t, many_names);
  tcase_add_test(t, stream_matches_memory);
  tcase_add_test(t, progress);
  tcase_add_test(t, open_errors);
  suite_add_tcase(s, t);

  t = tcase_create("malformed");
  tcase_set_timeout(t, 60);
  tcase_add_loop_test(t, malformed, 0, N_BAD);
  tcase_add_test(t, long_lines);
  tcase_add_test(t, random_garbage);
  tcase_add_test(t, word_parser_lines);
  tcase_add_test(t, word_parser_boundaries);
  tcase_add_test(t, simd_parser_lines);
  tcase_add_test(t, simd_parser_name_lengths);
  tcase_add_test(t, simd_parser_locations);
  tcase_add_test(t, simd_parser_heads);
  tcase_add_test(t, simd_parser_fork_self);
  suite_add_tcase(s, t);

  t = tcase_create("writer");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, writer_default_names);
  tcase_add_test(t, writer_names_and_errors);
  tcase_add_test(t, writer_long_names);
  tcase_add_test(t, reader_file_truncated_while_read);
  tcase_add_test(t, writer_io_error);
  tcase_add_test(t, writer_stdout);
  tcase_add_test(t, round_trips);
  tcase_add_test(t, flagged_ops);
  suite_add_tcase(s, t);

  t = tcase_create("feed");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, feed_all);
  tcase_add_test(t, feed_in_steps);
  tcase_add_test(t, feed_rejections);
  tcase_add_test(t, feed_callback_stops);
  tcase_add_test(t, feed_parse_error);
  tcase_add_test(t, feed_finished_session);
  tcase_add_test(t, feed_with_checker);
  tcase_add_test(t, feed_flagged);
  tcase_add_test(t, name_directives);
  suite_add_tcase(s, t);

  t = tcase_create("parallel");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, parallel_matches_serial);
  tcase_add_test(t, parallel_lazy_names);
  tcase_add_test(t, parallel_kept_names);
  tcase_add_test(t, parallel_late_error);
  tcase_add_test(t, parallel_malformed);
  tcase_add_test(t, parallel_garbage);
  tcase_add_test(t, parallel_long_lines);
  tcase_add_test(t, parallel_file_starts);
  tcase_add_test(t, parallel_pipe_serial);
  suite_add_tcase(s, t);
  return s;
}
