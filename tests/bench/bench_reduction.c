/* bench_reduction: the reduction checker (both lockset variants) through the push API.
 *
 *   bench_reduction [--events N[,N...]] [--repeat R] [--seed S]
 *
 * For each trace shape below and each length (default 10^5 and 10^6 events) it streams a
 * synthetic trace (tracegen.c) through atom_push_many() in blocks of 64Ki events, timing the
 * pushes and atom_finish() separately (the precise variant decides at finish), and prints the
 * checker's memory (atom_checker_stats_get: peak, and after finish, when the checker has
 * released its tables), the transactions it held before finish (`held`), its access classes,
 * and the reports (distinct and occurrences). The null checker gives the dispatch floor. With
 * --repeat R each configuration runs R times and the fastest is printed. Results:
 * doc/performance.md, section "reduction".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomicity.h"
#include "benchrun.h"
#include "tracegen.h"

#define BLOCK 65536
#define MAX_LIST 16

typedef struct shape {
  const char *name;
  unsigned threads, vars, locks, txn_len;
  int kind;
} shape;

static const shape shapes[] = {
    {"2pl-4t", 4, 128, 8, 8, TG_2PL},
    {"racy-4t", 4, 128, 8, 8, TG_RACY},
    {"2pl-16t", 16, 1024, 64, 8, TG_2PL},
    {"racy-16t-long", 16, 1000, 8, 30, TG_RACY},
};

static const char *const specs[] = {"null", "reduction:lockset=precise",
                                    "reduction:lockset=eraser"};

int main(int argc, char **argv) {
  char lengths_arg[256] = "1e5,1e6";
  unsigned repeat = 1;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) {
      fprintf(stderr, "bench_reduction: %s needs a value\n", argv[i]);
      return 2;
    }
    const char *a = argv[i], *v = argv[++i];
    uint64_t x;
    if (strcmp(a, "--events") == 0) snprintf(lengths_arg, sizeof lengths_arg, "%s", v);
    else if (tg_parse_u64(v, &x) != 0) {
      fprintf(stderr, "bench_reduction: bad value for %s: %s\n", a, v);
      return 2;
    } else if (strcmp(a, "--repeat") == 0) repeat = x ? (unsigned)x : 1;
    else if (strcmp(a, "--seed") == 0) seed = x;
    else {
      fprintf(stderr, "bench_reduction: unknown option %s\n", a);
      return 2;
    }
  }
  char *lens[MAX_LIST];
  size_t nlens = 0;
  for (char *p = lengths_arg; nlens < MAX_LIST;) {
    lens[nlens++] = p;
    char *q = strchr(p, ',');
    if (!q) break;
    *q = '\0';
    p = q + 1;
  }
  atom_event *buf = malloc(BLOCK * sizeof *buf);
  if (!buf) return 1;
  printf("# bench_reduction: libatomicity %s; seed %llu; best of %u\n", atom_version(),
         (unsigned long long)seed, repeat);
  printf("%-14s %-26s %9s %8s %8s %8s %12s %12s %8s %8s %8s %10s\n", "trace", "checker", "events",
         "push_s", "finish_s", "ns/ev", "peak_bytes", "bytes_end", "held", "classes", "reports",
         "occurr");
  int status = 0;
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
    for (size_t l = 0; l < nlens; l++)
      for (size_t c = 0; c < sizeof specs / sizeof specs[0]; c++) {
        uint64_t len;
        if (tg_parse_u64(lens[l], &len) != 0) {
          fprintf(stderr, "bench_reduction: bad length %s\n", lens[l]);
          free(buf);
          return 2;
        }
        const shape *S = &shapes[sh];
        tg_params p = {len, S->threads, S->vars, S->locks, S->txn_len, S->kind, seed};
        br_result r, best;
        memset(&best, 0, sizeof best);
        int failed = 0;
        for (unsigned k = 0; k < repeat && !failed; k++) {
          failed = br_run("bench_reduction", specs[c], &p, buf, BLOCK, &r) != 0;
          if (k == 0 || r.push_s + r.finish_s < best.push_s + best.finish_s) best = r;
        }
        if (failed) {
          status = 1;
          continue;
        }
        double secs = best.push_s + best.finish_s;
        printf("%-14s %-26s %9llu %8.3f %8.3f %8.1f %12llu %12llu %8llu %8llu %8zu %10llu\n",
               S->name, specs[c], (unsigned long long)best.events, best.push_s, best.finish_s,
               secs * 1e9 / (double)best.events, (unsigned long long)best.after.peak_bytes,
               (unsigned long long)best.after.bytes, (unsigned long long)best.before.nodes,
               (unsigned long long)best.before.edges, best.reports,
               (unsigned long long)best.after.occurrences);
        fflush(stdout);
      }
  free(buf);
  return status;
}
