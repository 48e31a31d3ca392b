/* bench_push: throughput of the push API per checker, with pre-interned (small dense) keys.
 *
 *   bench_push [--events N[,N...]] [--checkers SPEC[;SPEC...]] [--threads T] [--vars V]
 *              [--locks L] [--txn-len K] [--kind 2pl|racy] [--seed S] [--repeat R]
 *
 * For every checker and trace length it streams a synthetic trace (tracegen.c) through
 * atom_push_many() in blocks of 64Ki events, timing only the library calls (push and finish),
 * and prints events/s and the checker's memory (atom_checker_stats_get: now and peak). Two
 * lengths an order of magnitude apart show whether memory stays flat. With --repeat R each
 * configuration runs R times and the fastest run is printed (the machine may be shared).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomicity.h"
#include "benchrun.h"
#include "tracegen.h"

#define BLOCK 65536
#define MAX_LIST 16

int main(int argc, char **argv) {
  tg_params p = {0, 4, 128, 8, 8, TG_2PL, 1};
  unsigned repeat = 1;
  char lengths_arg[256] = "1e6,1e7";
  char checkers_arg[1024] = "null;aerodrome;aerodrome:variant=basic;velodrome";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "bench_push: %s needs a value\n", a);
      return 2;
    }
    const char *v = argv[++i];
    uint64_t x = 0;
    if (strcmp(a, "--events") == 0) snprintf(lengths_arg, sizeof lengths_arg, "%s", v);
    else if (strcmp(a, "--checkers") == 0) snprintf(checkers_arg, sizeof checkers_arg, "%s", v);
    else if (strcmp(a, "--kind") == 0) p.kind = strcmp(v, "racy") == 0 ? TG_RACY : TG_2PL;
    else if (tg_parse_u64(v, &x) != 0 || x > 0xffffffffu) {
      fprintf(stderr, "bench_push: bad value for %s: %s\n", a, v);
      return 2;
    } else if (strcmp(a, "--threads") == 0) p.threads = (unsigned)x;
    else if (strcmp(a, "--vars") == 0) p.vars = (unsigned)x;
    else if (strcmp(a, "--locks") == 0) p.locks = (unsigned)x;
    else if (strcmp(a, "--txn-len") == 0) p.txn_len = (unsigned)x;
    else if (strcmp(a, "--seed") == 0) p.seed = x;
    else if (strcmp(a, "--repeat") == 0) repeat = x ? (unsigned)x : 1;
    else {
      fprintf(stderr, "bench_push: unknown option %s\n", a);
      return 2;
    }
  }
  char *lens[MAX_LIST], *specs[MAX_LIST];
  size_t nlens = br_split(lengths_arg, ',', lens, MAX_LIST);
  size_t nspecs = br_split(checkers_arg, ';', specs, MAX_LIST);
  atom_event *buf = malloc(BLOCK * sizeof *buf);
  if (!buf) return 1;
  printf("# bench_push: libatomicity %s; %s trace, %u threads, %u vars, %u locks, "
         "txn-len %u, seed %llu; best of %u\n",
         atom_version(), p.kind == TG_2PL ? "2pl" : "racy", p.threads, p.vars, p.locks,
         p.txn_len, (unsigned long long)p.seed, repeat);
  printf("%-26s %10s %9s %9s %8s %7s %12s %12s %8s\n", "checker", "events", "seconds", "Mev/s",
         "ns/ev", "x_null", "peak_bytes", "bytes_end", "reports");
  /* x_null: the time per event over that of the `null` checker on the same length, measured in
   * this run (the session's own cost is the floor every checker is compared to). */
  double null_ns[MAX_LIST] = {0};
  int status = 0;
  for (size_t c = 0; c < nspecs; c++)
    for (size_t l = 0; l < nlens; l++) {
      uint64_t len;
      if (tg_parse_u64(lens[l], &len) != 0) {
        fprintf(stderr, "bench_push: bad length %s\n", lens[l]);
        free(buf);
        return 2;
      }
      p.events = len;
      br_result r, best;
      int failed = 0;
      for (unsigned k = 0; k < repeat && !failed; k++) {
        failed = br_run("bench_push", specs[c], &p, buf, BLOCK, &r) != 0;
        if (k == 0 || r.push_s + r.finish_s < best.push_s + best.finish_s) best = r;
      }
      if (failed) {
        status = 1;
        continue;
      }
      r = best;
      double secs = best.push_s + best.finish_s;
      double ns = secs * 1e9 / (double)best.events;
      if (strcmp(specs[c], "null") == 0) null_ns[l] = ns;
      char ratio[16] = "-";
      if (null_ns[l] > 0) snprintf(ratio, sizeof ratio, "%.2f", ns / null_ns[l]);
      printf("%-26s %10llu %9.3f %9.2f %8.1f %7s %12llu %12llu %8zu\n", specs[c],
             (unsigned long long)best.events, secs, (double)best.events / secs / 1e6, ns, ratio,
             (unsigned long long)best.after.peak_bytes,
             (unsigned long long)best.after.bytes, best.reports);
      fflush(stdout);
    }
  free(buf);
  return status;
}
