/* The --stats lines printed on standard error (text and SARIF formats; JSON embeds them). */
#include "atomcheck.h"

#include <inttypes.h>

/* Bytes as "512 B", "1.5 KiB", "3.0 MiB". */
static void print_bytes(FILE *out, uint64_t n) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    fprintf(out, "%" PRIu64 " B", n);
  else
    fprintf(out, "%.1f %s", v, units[u]);
}

/* Seconds as "1.234 s", "12.345 ms" or "56.7 us". */
static void print_seconds(FILE *out, double s) {
  if (s >= 1.0)
    fprintf(out, "%.3f s", s);
  else if (s >= 1e-3)
    fprintf(out, "%.3f ms", s * 1e3);
  else
    fprintf(out, "%.1f us", s * 1e6);
}

void atc_stats_text(FILE *out, const atc_run *run) {
  double rate = run->seconds > 0 ? (double)run->events / run->seconds : 0.0;
  fprintf(out, "stats: %" PRIu64 " event%s in ", run->events, atc_plural(run->events));
  print_seconds(out, run->seconds);
  fprintf(out, " (%.0f events/s), %" PRIu64 " rejected\n", rate, run->rejected);
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    if (!c->have_stats) {
      fprintf(out, "stats: %s: not available\n", c->spec);
      continue;
    }
    const atom_checker_stats *st = &c->stats;
    fprintf(out, "stats: %s: time ", c->spec);
    print_seconds(out, (double)st->time_ns * 1e-9);
    fputs(", peak memory ", out);
    print_bytes(out, st->peak_bytes);
    fputs(", memory at end ", out);
    print_bytes(out, st->bytes);
    fprintf(out, ", nodes %" PRIu64 ", edges %" PRIu64 ", clocks %" PRIu64 "\n", st->nodes,
            st->edges, st->clocks);
  }
}
