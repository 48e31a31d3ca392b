/* bench_commit_node: time and memory of the commit-node checker (both modes) on generated
 * traces of 10^5 and 10^6 events (tracegen.c), through the push API with pre-interned keys.
 *
 *   bench_commit_node [--events N[,N...]] [--threads T] [--vars V] [--locks L] [--txn-len K]
 *                     [--seed S]
 *
 * Prints, per trace kind, length and mode: the time spent while events stream in (building
 * trimmed access trees), the time of atom_finish() (inter-edges, commit nodes, the cycle test,
 * goodlock), the checker's peak memory and what it holds at the end, forest nodes and
 * inter-edges, and the number of reports. doc/performance.md explains the figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomicity.h"
#include "benchrun.h"
#include "tracegen.h"

#define BLOCK 65536

int main(int argc, char **argv) {
  const char *events = "100000,1000000";
  tg_params base = {0, 8, 100000, 64, 4, TG_2PL, 1};
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t x = 0;
    if (!v) goto usage;
    if (strcmp(a, "--events") == 0) events = v;
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
  printf("%-5s %9s %-8s %9s %9s %10s %10s %9s %9s %8s\n", "trace", "events", "mode", "stream s",
         "finish s", "peak MB", "held MB", "nodes", "edges", "reports");
  char list[256];
  snprintf(list, sizeof list, "%s", events);
  int status = 0;
  for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    uint64_t n;
    if (tg_parse_u64(tok, &n) != 0) goto usage;
    for (int kind = TG_2PL; kind <= TG_RACY; kind++) {
      for (int view = 0; view < 2; view++) {
        tg_params p = base;
        p.events = n;
        p.kind = kind;
        br_result r;
        const char *spec = view ? "commit-node:mode=view" : "commit-node:mode=conflict";
        if (br_run("bench_commit_node", spec, &p, buf, BLOCK, &r) != 0) {
          status = 1;
          continue;
        }
        printf("%-5s %9llu %-8s %9.3f %9.3f %10.1f %10.1f %9llu %9llu %8zu\n",
               kind == TG_2PL ? "2pl" : "racy", (unsigned long long)r.events,
               view ? "view" : "conflict", r.push_s, r.finish_s, (double)r.after.peak_bytes / 1e6,
               (double)r.after.bytes / 1e6, (unsigned long long)r.after.nodes,
               (unsigned long long)r.after.edges, r.reports);
        fflush(stdout);
      }
    }
  }
  free(buf);
  return status;
usage:
  fprintf(stderr, "usage: bench_commit_node [--events N[,N...]] [--threads T] [--vars V] "
                  "[--locks L] [--txn-len K] [--seed S]\n");
  return 2;
}
