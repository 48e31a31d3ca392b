/* bench_block: time, memory and reports of the predictive checkers of 000 (Wang & Stoller) on
 * generated traces (tracegen.c), through the push API with pre-interned keys.
 *
 *   bench_block [--events N[,N...]] [--all-events N[,N...]] [--threads T] [--vars V]
 *               [--locks L] [--txn-len K] [--seed S] [--checker NAME]
 *
 * One table per checker (struct bench_checker below: a checker of the same paper adds its own
 * entry). For each trace kind (2PL: atomic; racy: violations everywhere) and length it prints
 * the time spent while events stream in (recording), the time of atom_finish() (the analysis),
 * the checker's peak memory and what it holds at the end, its counters (for block: units
 * recorded, tuples built = blocks, accesses and 2-blocks kept once per site and content) and
 * the distinct reports with their occurrences. `block:scope=all` is exponential: it runs on the
 * short traces of --all-events only, to show the bound at work. doc/performance.md explains the
 * figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomicity.h"
#include "benchrun.h"
#include "tracegen.h"

#define BLOCK 65536

/* A checker to measure: its specs on long traces, and on short ones (exponential modes). */
typedef struct bench_checker {
  const char *name;
  const char *const *specs;       /* NULL-terminated; run on --events */
  const char *const *short_specs; /* NULL-terminated; run on --all-events */
  const char *nodes, *edges;      /* what its counters mean */
} bench_checker;

static const char *const block_specs[] = {"block", NULL};
static const char *const block_short[] = {"block:scope=all", NULL};

static const bench_checker checkers[] = {
    {"block", block_specs, block_short, "units", "tuples"},
};

static void header(const bench_checker *c) {
  printf("\n%s\n", c->name);
  printf("%-5s %9s %-16s %9s %9s %9s %9s %9s %9s %9s %8s %11s %6s\n", "trace", "events", "spec",
         "stream s", "finish s", "ns/event", "peak MB", "held MB", c->nodes, c->edges, "reports",
         "occurrences", "bound");
}

static int table(const bench_checker *c, const char *const *specs, const char *lengths,
                 const tg_params *base, atom_event *buf) {
  char list[256];
  snprintf(list, sizeof list, "%s", lengths);
  int status = 0;
  char *save = NULL;
  for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    uint64_t n;
    if (tg_parse_u64(tok, &n) != 0) return 2;
    for (int kind = TG_2PL; kind <= TG_RACY; kind++)
      for (size_t k = 0; specs[k]; k++) {
        tg_params p = *base;
        p.events = n;
        p.kind = kind;
        br_result r;
        if (br_run("bench_block", specs[k], &p, buf, BLOCK, &r) != 0) {
          status = 1;
          continue;
        }
        double total = r.push_s + r.finish_s;
        printf("%-5s %9llu %-16s %9.3f %9.3f %9.0f %9.1f %9.3f %9llu %9llu %8zu %11llu %6zu\n",
               kind == TG_2PL ? "2pl" : "racy", (unsigned long long)r.events, specs[k], r.push_s,
               r.finish_s, r.events ? total * 1e9 / (double)r.events : 0.0,
               (double)r.after.peak_bytes / 1e6, (double)r.after.bytes / 1e6,
               (unsigned long long)r.after.nodes, (unsigned long long)r.after.edges, r.reports,
               (unsigned long long)r.after.occurrences, r.bound_reached);
        fflush(stdout);
      }
  }
  (void)c;
  return status;
}

int main(int argc, char **argv) {
  const char *events = "100000,1000000", *all_events = "200,300,1000", *only = NULL;
  tg_params base = {0, 4, 128, 8, 8, TG_2PL, 1};
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t x = 0;
    if (!v) goto usage;
    if (strcmp(a, "--events") == 0) events = v;
    else if (strcmp(a, "--all-events") == 0) all_events = v;
    else if (strcmp(a, "--checker") == 0) only = v;
    else if (tg_parse_u64(v, &x) != 0) goto usage;
    else if (strcmp(a, "--threads") == 0) base.threads = (unsigned)x;
    else if (strcmp(a, "--vars") == 0) base.vars = (unsigned)x;
    else if (strcmp(a, "--locks") == 0) base.locks = (unsigned)x;
    else if (strcmp(a, "--txn-len") == 0) base.txn_len = (unsigned)x;
    else if (strcmp(a, "--seed") == 0) base.seed = x;
    else goto usage;
  }
  atom_event *buf = malloc(BLOCK * sizeof *buf);
  if (!buf) return 1;
  printf("traces: %u threads, %u variables, %u locks, %u accesses per transaction, seed %llu\n",
         base.threads, base.vars, base.locks, base.txn_len, (unsigned long long)base.seed);
  int status = 0;
  for (size_t c = 0; c < sizeof checkers / sizeof checkers[0]; c++) {
    if (only && strcmp(only, checkers[c].name) != 0) continue;
    header(&checkers[c]);
    int rc = table(&checkers[c], checkers[c].specs, events, &base, buf);
    if (rc == 0 && checkers[c].short_specs)
      rc = table(&checkers[c], checkers[c].short_specs, all_events, &base, buf);
    if (rc == 2) {
      free(buf);
      goto usage;
    }
    status |= rc;
  }
  free(buf);
  return status;
usage:
  fprintf(stderr, "usage: bench_block [--events N[,N...]] [--all-events N[,N...]] [--threads T] "
                  "[--vars V] [--locks L] [--txn-len K] [--seed S] [--checker NAME]\n");
  return 2;
}
