/* The --progress line on standard error, redrawn in place a few times per second, only when
 * standard error is a terminal. It covers the whole run:
 *   reading a file of known size:  "atomcheck: reading [#####....] 41 % 1.2M events, ETA 3 s"
 *   reading a pipe:                "atomcheck: 1.2M events, 56.0MB read, 3.4M events/s"
 *   a checker's end-of-run work:   "atomcheck: commit-node: finishing 37 % (ETA 4 s)"
 *                                  "atomcheck: block: finishing / 12.3k done" (total unknown)
 * The text of each line comes from a pure function (atc_progress_format_*), so that it can be
 * tested without a terminal or a clock. */
#include "atomcheck.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Seconds between two redraws. */
#define ATC_PROGRESS_PERIOD 0.25

/* Width of the reading bar, in characters between the brackets. */
#define ATC_BAR_WIDTH 20

double atc_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void init(atc_progress *p, FILE *out, int enabled) {
  memset(p, 0, sizeof *p);
  p->out = out;
  p->enabled = enabled;
  p->start = atc_now();
  /* The first update draws at once: it only comes after a large first chunk of events (or
   * the first progress call of a checker), so the trace is not a small one. */
  p->last = p->start - ATC_PROGRESS_PERIOD;
}

void atc_progress_init(atc_progress *p, int requested) {
  init(p, stderr, requested && isatty(STDERR_FILENO));
}

void atc_progress_init_stream(atc_progress *p, FILE *out) { init(p, out, 1); }

/* A bounded appender: writes stop at the end of the buffer, which stays NUL-terminated. */
typedef struct line {
  char *buf;
  size_t size, len;
} line;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void put(line *l, const char *fmt, ...) {
  if (l->len + 1 >= l->size) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  l->len += (size_t)n < l->size - l->len ? (size_t)n : l->size - l->len - 1;
}

/* @p v with a unit suffix (k, M, G, ...) in at most 6 characters. */
static void human(line *l, double v) {
  static const char units[] = " kMGTP";
  int u = 0;
  while (v >= 1000.0 && u < 5) {
    v /= 1000.0;
    u++;
  }
  if (u == 0)
    put(l, "%.0f", v);
  else
    put(l, "%.1f%c", v, units[u]);
}

/* A duration in whole seconds, minutes or hours: "4 s", "3 min 20 s", "2 h 5 min". */
static void duration(line *l, double s) {
  unsigned long long t = s < 0 ? 0 : (unsigned long long)(s + 0.5);
  if (t < 60)
    put(l, "%llu s", t);
  else if (t < 3600)
    put(l, "%llu min %llu s", t / 60, t % 60);
  else
    put(l, "%llu h %llu min", t / 3600, t / 60 % 60);
}

/* "ETA 4 s" from the share done so far and the time it took; "ETA ?" before anything is done. */
static void eta(line *l, uint64_t done, uint64_t total, double elapsed) {
  put(l, "ETA ");
  if (done == 0 || done > total || elapsed <= 0) {
    put(l, "?");
    return;
  }
  duration(l, elapsed * (double)(total - done) / (double)done);
}

static unsigned percent(uint64_t done, uint64_t total) {
  if (done >= total) return 100;
  return (unsigned)((double)done * 100.0 / (double)total); /* rounded down: 100 only at the end */
}

size_t atc_progress_format_read(char *buf, size_t size, uint64_t events, uint64_t consumed,
                                uint64_t total, double elapsed) {
  line l = {buf, size, 0};
  if (size) buf[0] = '\0';
  put(&l, "atomcheck: ");
  if (total > 0) {
    unsigned pc = percent(consumed, total);
    unsigned fill = pc * ATC_BAR_WIDTH / 100;
    put(&l, "reading [");
    for (unsigned i = 0; i < ATC_BAR_WIDTH; i++) put(&l, "%c", i < fill ? '#' : '.');
    put(&l, "] %u %% ", pc);
    human(&l, (double)events);
    put(&l, " events, ");
    eta(&l, consumed, total, elapsed);
    return l.len;
  }
  human(&l, (double)events);
  put(&l, " events, ");
  human(&l, (double)consumed);
  put(&l, "B read");
  if (elapsed > 0) {
    put(&l, ", ");
    human(&l, (double)events / elapsed);
    put(&l, " events/s");
  }
  return l.len;
}

size_t atc_progress_format_finish(char *buf, size_t size, const char *checker, uint64_t done,
                                  uint64_t total, double elapsed, unsigned spin) {
  static const char spinner[] = "|/-\\";
  line l = {buf, size, 0};
  if (size) buf[0] = '\0';
  put(&l, "atomcheck: %s: finishing ", checker);
  if (total > 0) {
    put(&l, "%u %% (", percent(done, total));
    eta(&l, done, total, elapsed);
    put(&l, ")");
  } else {
    put(&l, "%c ", spinner[spin % 4]);
    human(&l, (double)done);
    put(&l, " done");
  }
  return l.len;
}

/* "\r" returns to the start of the line, "\033[K" erases what a longer line left. */
static void draw(atc_progress *p, const char *text) {
  fputs("\r", p->out);
  fputs(text, p->out); /* numbers and the names of built-in checkers only */
  fputs("\033[K", p->out);
  fflush(p->out);
  p->shown = 1;
}

void atc_progress_update(atc_progress *p, const atom_trace_reader *r, uint64_t events) {
  if (!p->enabled) return;
  double now = atc_now();
  if (now - p->last < ATC_PROGRESS_PERIOD) return;
  p->last = now;
  uint64_t consumed = 0, total = 0;
  atom_trace_reader_progress(r, &consumed, &total);
  char text[256];
  atc_progress_format_read(text, sizeof text, events, consumed, total, now - p->start);
  draw(p, text);
}

void atc_progress_finishing(size_t checker_index, uint64_t done, uint64_t total, void *payload) {
  atc_progress *p = payload;
  if (!p->enabled) return;
  double now = atc_now();
  /* The library forwards a checker's first call at once: its end-of-run work starts then,
   * and the ETA is measured from there. A new checker's first line is drawn at once. */
  if (checker_index + 1 != p->phase) {
    p->phase = checker_index + 1;
    p->phase_start = now;
    p->spin = 0;
  } else if (now - p->last < ATC_PROGRESS_PERIOD) {
    return;
  }
  p->last = now;
  const char *name = p->session ? atom_checker_name(p->session, checker_index) : NULL;
  char text[256];
  atc_progress_format_finish(text, sizeof text, name ? name : "?", done, total,
                             now - p->phase_start, p->spin++);
  draw(p, text);
}

void atc_progress_clear(atc_progress *p) {
  if (!p->shown) return;
  fputs("\r\033[K", p->out);
  fflush(p->out);
  p->shown = 0;
}
