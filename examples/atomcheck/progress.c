/* The --progress line: events read, share of the file, events per second; redrawn in place a
 * few times per second on standard error, and only when that is a terminal. */
#include "atomcheck.h"

#include <time.h>
#include <unistd.h>

/* Seconds between two redraws. */
#define ATC_PROGRESS_PERIOD 0.25

double atc_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void atc_progress_init(atc_progress *p, int requested) {
  p->enabled = requested && isatty(STDERR_FILENO);
  p->shown = 0;
  p->start = atc_now();
  p->last = p->start;
}

/* Write @p v with a unit suffix (k, M, G) in at most 6 characters. */
static void human(FILE *out, double v) {
  static const char units[] = " kMGTP";
  int u = 0;
  while (v >= 1000.0 && u < 5) {
    v /= 1000.0;
    u++;
  }
  if (u == 0)
    fprintf(out, "%.0f", v);
  else
    fprintf(out, "%.1f%c", v, units[u]);
}

void atc_progress_update(atc_progress *p, const atom_trace_reader *r, uint64_t events) {
  if (!p->enabled) return;
  double now = atc_now();
  if (now - p->last < ATC_PROGRESS_PERIOD) return;
  p->last = now;
  uint64_t consumed = 0, total = 0;
  atom_trace_reader_progress(r, &consumed, &total);
  double elapsed = now - p->start;
  /* "\r" returns to the start of the line, "\033[K" erases what a longer line left. */
  fputs("\ratomcheck: ", stderr);
  human(stderr, (double)events);
  fputs(" events", stderr);
  if (total > 0)
    fprintf(stderr, ", %.1f%% of file", 100.0 * (double)consumed / (double)total);
  else {
    fputs(", ", stderr);
    human(stderr, (double)consumed);
    fputs("B read", stderr);
  }
  if (elapsed > 0) {
    fputs(", ", stderr);
    human(stderr, (double)events / elapsed);
    fputs(" events/s", stderr);
  }
  fputs("\033[K", stderr);
  fflush(stderr);
  p->shown = 1;
}

void atc_progress_clear(atc_progress *p) {
  if (!p->shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->shown = 0;
}
