/* bench_race_automata: throughput and tuples held by race-automata, against the no-op checker.
 *
 *   bench_race_automata [--events N] [--vars V[,V...]] [--threads T] [--txn-len K]
 *                       [--kind racy|2pl|both] [--checkers SPEC[;SPEC...]] [--repeat R]
 *
 * For every trace kind, variable count and checker it streams a synthetic trace (tracegen.c;
 * defaults: 10^6 events, 4 threads, transactions of 8 accesses, 10^3, 10^4 and 10^5 variables)
 * through atom_push_many() in blocks of 4096 events, timing only the library calls, and prints
 * events/s, the peak number of bitsets held (atom_checker_stats_get `nodes`, sampled after every
 * block: summaries and tuples), the checker's peak memory and the reports. With --repeat R each
 * configuration runs R times and the fastest run is printed (the machine may be shared).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomicity.h"
#include "benchrun.h"
#include "tracegen.h"

#define BLOCK 4096
#define MAX_LIST 16

typedef struct result {
  double seconds;
  uint64_t events;
  uint64_t peak_nodes;
  atom_checker_stats st;
  size_t reports;
  uint64_t occurrences;
} result;

static int run(const char *spec, const tg_params *p, atom_event *buf, result *r) {
  atom_options opt;
  atom_options_init(&opt, ATOM_OPTIONS_VERSION);
  atom_session *s = NULL;
  int rc = atom_session_new(&s, &opt);
  if (rc == 0) rc = atom_session_attach(s, spec);
  if (rc != 0) {
    fprintf(stderr, "bench_race_automata: %s: %s (%s)\n", spec, atom_strerror(rc),
            atom_last_error());
    atom_session_free(s);
    return rc;
  }
  tg_gen *g;
  const char *why;
  if (tg_new(&g, p, &why) != 0) {
    fprintf(stderr, "bench_race_automata: %s\n", why ? why : "generator failed");
    atom_session_free(s);
    return -1;
  }
  memset(r, 0, sizeof *r);
  r->st.version = ATOM_CHECKER_STATS_VERSION;
  size_t n;
  while ((n = tg_next(g, buf, BLOCK)) > 0) {
    size_t done = 0;
    double t0 = br_now();
    rc = atom_push_many(s, buf, n, &done);
    r->seconds += br_now() - t0;
    r->events += done;
    if (rc != 0) {
      fprintf(stderr, "bench_race_automata: %s: push failed at event %llu: %s\n", spec,
              (unsigned long long)(r->events - 1), atom_last_error());
      break;
    }
    if (atom_checker_stats_get(s, 0, &r->st) == 0 && r->st.nodes > r->peak_nodes)
      r->peak_nodes = r->st.nodes;
  }
  tg_free(g);
  if (rc == 0) {
    double t0 = br_now();
    rc = atom_finish(s);
    r->seconds += br_now() - t0;
  }
  if (rc == 0) rc = atom_checker_stats_get(s, 0, &r->st);
  r->reports = atom_report_count(s);
  for (size_t i = 0; i < r->reports; i++) r->occurrences += atom_report_occurrences(atom_report_get(s, i));
  atom_session_free(s);
  return rc;
}

int main(int argc, char **argv) {
  tg_params p = {1000000, 4, 1000, 8, 8, TG_RACY, 1};
  unsigned repeat = 1;
  int kinds = 3; /* bit 0 racy, bit 1 2pl */
  char vars_arg[256] = "1e3,1e4,1e5";
  char checkers_arg[1024] = "null;race-automata:sets=var;race-automata:sets=one";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "bench_race_automata: %s needs a value\n", a);
      return 2;
    }
    const char *v = argv[++i];
    uint64_t x = 0;
    if (strcmp(a, "--vars") == 0) snprintf(vars_arg, sizeof vars_arg, "%s", v);
    else if (strcmp(a, "--checkers") == 0) snprintf(checkers_arg, sizeof checkers_arg, "%s", v);
    else if (strcmp(a, "--kind") == 0)
      kinds = strcmp(v, "racy") == 0 ? 1 : strcmp(v, "2pl") == 0 ? 2 : 3;
    else if (tg_parse_u64(v, &x) != 0) {
      fprintf(stderr, "bench_race_automata: bad value for %s: %s\n", a, v);
      return 2;
    } else if (strcmp(a, "--events") == 0) p.events = x;
    else if (x > 0xffffffffu) {
      fprintf(stderr, "bench_race_automata: %s too large\n", a);
      return 2;
    } else if (strcmp(a, "--threads") == 0) p.threads = (unsigned)x;
    else if (strcmp(a, "--txn-len") == 0) p.txn_len = (unsigned)x;
    else if (strcmp(a, "--repeat") == 0) repeat = x ? (unsigned)x : 1;
    else {
      fprintf(stderr, "bench_race_automata: unknown option %s\n", a);
      return 2;
    }
  }
  char *vars[MAX_LIST], *specs[MAX_LIST];
  size_t nvars = br_split(vars_arg, ',', vars, MAX_LIST);
  size_t nspecs = br_split(checkers_arg, ';', specs, MAX_LIST);
  atom_event *buf = malloc(BLOCK * sizeof *buf);
  if (!buf) return 1;
  printf("# bench_race_automata: libatomicity %s; %llu events, %u threads, txn-len %u; "
         "best of %u\n",
         atom_version(), (unsigned long long)p.events, p.threads, p.txn_len, repeat);
  printf("%-5s %7s %-28s %8s %8s %8s %11s %12s %8s %10s\n", "kind", "vars", "checker", "seconds",
         "Mev/s", "ns/ev", "peak_nodes", "peak_bytes", "reports", "occurr.");
  int status = 0;
  for (int kind = 0; kind < 2; kind++) {
    if (!(kinds & (1 << kind))) continue;
    p.kind = kind == 0 ? TG_RACY : TG_2PL;
    for (size_t v = 0; v < nvars; v++) {
      uint64_t nv;
      if (tg_parse_u64(vars[v], &nv) != 0 || nv == 0 || nv > 0xffffffffu) {
        fprintf(stderr, "bench_race_automata: bad variable count %s\n", vars[v]);
        free(buf);
        return 2;
      }
      p.vars = (unsigned)nv;
      p.locks = p.vars < 64 ? p.vars : 64;
      for (size_t c = 0; c < nspecs; c++) {
        result r, best;
        memset(&best, 0, sizeof best);
        int failed = 0;
        for (unsigned k = 0; k < repeat && !failed; k++) {
          failed = run(specs[c], &p, buf, &r) != 0;
          if (k == 0 || r.seconds < best.seconds) best = r;
        }
        if (failed) {
          status = 1;
          continue;
        }
        double mev = best.seconds > 0 ? (double)best.events / best.seconds / 1e6 : 0;
        printf("%-5s %7u %-28s %8.3f %8.2f %8.1f %11llu %12llu %8zu %10llu\n",
               kind == 0 ? "racy" : "2pl", p.vars, specs[c], best.seconds, mev,
               best.events ? best.seconds * 1e9 / (double)best.events : 0.0,
               (unsigned long long)best.peak_nodes, (unsigned long long)best.st.peak_bytes,
               best.reports, (unsigned long long)best.occurrences);
        fflush(stdout);
      }
    }
  }
  free(buf);
  return status;
}
