/* bench_tso: the tso checker through the push API (pre-interned keys).
 *
 *   bench_tso [--exec-events N] [--trace-events N[,N...]] [--threads T[,T...]] [--seed S]
 *
 * Part 1, mode=execution: a tracegen.c trace (2PL, and racy) with commits inserted: after each
 * event of a thread, its oldest pending write is committed with probability 1/2; fences and lock
 * operations commit the rest implicitly. Printed: events/s (commits included), peak memory,
 * reports; velodrome on the same stream for scale (it ignores commits).
 *
 * Part 2, mode=trace: time of the whole analysis (push + finish) against the number of threads,
 * on generated workloads without commits:
 *  - pc: producers (half the threads) run transactions [w(own variable), two reads of a
 *    private variable, fence]; consumers read producers' variables outside transactions. Reads
 *    fall inside the producers' windows, so the trace has many undirected edges, and it is
 *    TSO-serializable (and SC-serializable): the search of 002 §6.2 has to run to completion.
 *  - iriw: the same, but each consumer reads two producers' variables in one transaction:
 *    with two consumers and two producers a cycle of four transactions appears when each
 *    consumer sees one write and misses the other (002 §6.2 has to find it through links).
 *  - racy: transactions of three accesses to 8 shared variables (30% writes), half of them
 *    fenced: violations abound and are found early.
 *  - unary: single accesses to 2 shared variables (half writes), no transactions, no fences:
 *    every write's window stays open to the end (links everywhere), yet no cycle can turn
 *    back, which the checker sees without searching.
 * Also `tso:fenced=yes` (002 §6.3) on pc and iriw, and velodrome for scale. "steps" is the search effort
 * of mode=trace: the smallest max_work (within 1/16) at which it does not report bound-reached.
 * Every time is the best of 3 runs. doc/performance.md explains the figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomicity.h"
#include "benchrun.h"
#include "tracegen.h"

#define BLOCK 65536
#define MAX_LIST 8

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static unsigned below(uint64_t *s, unsigned n) { return (unsigned)((rng_next(s) >> 32) * n >> 32); }

typedef struct result {
  double seconds;
  uint64_t events;
  size_t cycles, bounds, nonrobust, other;
  uint64_t peak;
} result;

static void count_reports(atom_session *s, result *r) {
  for (size_t i = 0; i < atom_report_count(s); i++) {
    const char *k = atom_report_kind(atom_report_get(s, i));
    if (strcmp(k, "tso-cycle") == 0) r->cycles++;
    else if (strcmp(k, "bound-reached") == 0) r->bounds++;
    else if (strcmp(k, "non-robust") == 0) r->nonrobust++;
    else r->other++;
  }
  r->other += atom_report_dropped(s);
  atom_checker_stats st = {.version = ATOM_CHECKER_STATS_VERSION};
  if (atom_checker_stats_get(s, 0, &st) == 0) r->peak = st.peak_bytes;
}

/* ---- part 1: executions ---- */

/* Pending writes (variable keys) of each thread, FIFO. */
typedef struct fifo {
  uint64_t *v;
  size_t head, len, cap;
} fifo;

static int run_exec(const char *spec, const tg_params *p, result *r) {
  memset(r, 0, sizeof *r);
  atom_session *s = NULL;
  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  o.max_reports = 1000;
  int rc = atom_session_new(&s, &o);
  if (rc == 0) rc = atom_session_attach(s, spec);
  tg_gen *g = NULL;
  const char *why = "";
  if (rc == 0 && tg_new(&g, p, &why) != 0) {
    fprintf(stderr, "bench_tso: %s\n", why);
    rc = -1;
  }
  atom_event *in = malloc(BLOCK * sizeof *in), *out = malloc(2 * BLOCK * sizeof *out);
  fifo *q = calloc((size_t)p->threads + 2, sizeof *q);
  if (!in || !out || !q) rc = -1;
  uint64_t rng = p->seed ^ 0xabcdef;
  size_t n;
  while (rc == 0 && (n = tg_next(g, in, BLOCK)) > 0) {
    size_t k = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
      const atom_event *e = &in[i];
      out[k++] = *e;
      fifo *f = &q[e->thread];
      if (e->kind == ATOM_WRITE) {
        if (f->len == f->cap) {
          size_t nc = f->cap ? 2 * f->cap : 16;
          uint64_t *nv = malloc(nc * sizeof *nv);
          if (!nv) {
            rc = -1;
            break;
          }
          for (size_t j = 0; j < f->len; j++) nv[j] = f->v[(f->head + j) % f->cap];
          free(f->v);
          f->v = nv;
          f->cap = nc;
          f->head = 0;
        }
        f->v[(f->head + f->len++) % f->cap] = e->target;
      } else if (e->kind == ATOM_FENCE || e->kind == ATOM_ACQUIRE || e->kind == ATOM_RELEASE) {
        f->len = f->head = 0; /* committed by the drain */
      } else if (e->kind == ATOM_JOIN) {
        q[e->target].len = q[e->target].head = 0; /* committed before the join */
      }
      if (f->len && below(&rng, 2)) {
        out[k++] = (atom_event){ATOM_COMMIT, 0, e->thread, f->v[f->head], e->loc};
        f->head = (f->head + 1) % f->cap;
        f->len--;
      }
    }
    if (rc) break;
    double t0 = br_now();
    rc = atom_push_many(s, out, k, NULL);
    r->seconds += br_now() - t0;
    r->events += k;
  }
  if (rc == 0) {
    double t0 = br_now();
    rc = atom_finish(s);
    r->seconds += br_now() - t0;
    count_reports(s, r);
  }
  if (rc > 0 || rc < -1)
    fprintf(stderr, "bench_tso: %s: %s (%s)\n", spec, atom_strerror(rc), atom_last_error());
  for (size_t t = 0; q && t < (size_t)p->threads + 2; t++) free(q[t].v);
  free(q);
  free(in);
  free(out);
  tg_free(g);
  atom_session_free(s);
  return rc;
}

/* ---- part 2: traces ---- */

enum { W_PC, W_IRIW, W_RACY, W_UNARY };

/* Generate about n events of workload w over T threads into ev (malloc'ed). Thread keys 1..T,
 * producer variables 1..T, shared variables 100.. */
static size_t gen_trace(int w, unsigned T, uint64_t n, uint64_t seed, atom_event **out) {
  atom_event *ev = malloc((n + 8 * (size_t)T + 8) * sizeof *ev);
  atom_event(*plan)[8] = calloc(T + 1, sizeof *plan);
  unsigned *len = calloc(T + 1, sizeof *len), *pos = calloc(T + 1, sizeof *pos);
  if (!ev || !plan || !len || !pos) {
    free(ev);
    free(plan);
    free(len);
    free(pos);
    return 0;
  }
  uint64_t rng = seed * 0x2545f4914f6cdd1dull + 7;
  unsigned producers = (T + 1) / 2;
  size_t k = 0;
  while (k < n) {
    unsigned t = 1 + below(&rng, T);
    if (pos[t] == len[t]) { /* plan the thread's next transaction */
      unsigned m = 0;
      plan[t][m++] = (atom_event){ATOM_BEGIN, 0, t, 0, k};
      if (w == W_PC || w == W_IRIW) {
        if (t <= producers || T == 1) {
          plan[t][m++] = (atom_event){ATOM_WRITE, 0, t, t, k};
          plan[t][m++] = (atom_event){ATOM_READ, 0, t, 1000 + t, k};
          plan[t][m++] = (atom_event){ATOM_READ, 0, t, 1000 + t, k};
          plan[t][m++] = (atom_event){ATOM_FENCE, 0, t, 0, k};
        } else if (w == W_IRIW) { /* two producers' variables in one transaction */
          unsigned a = 1 + below(&rng, producers), b = 1 + below(&rng, producers);
          if (producers > 1)
            while (b == a) b = 1 + below(&rng, producers);
          plan[t][m++] = (atom_event){ATOM_READ, 0, t, a, k};
          plan[t][m++] = (atom_event){ATOM_READ, 0, t, b, k};
        } else { /* a unary read (no BEGIN/END) */
          plan[t][0] = (atom_event){ATOM_READ, 0, t, 1 + below(&rng, producers), k};
          len[t] = 1;
          pos[t] = 0;
          ev[k] = plan[t][pos[t]++];
          ev[k].loc = k;
          k++;
          continue;
        }
      } else if (w == W_UNARY) { /* one access, no BEGIN/END, never a fence */
        uint32_t kind = below(&rng, 2) ? ATOM_WRITE : ATOM_READ;
        ev[k] = (atom_event){kind, 0, t, 100 + below(&rng, 2), k};
        k++;
        continue;
      } else {
        for (int i = 0; i < 3; i++) {
          uint32_t kind = below(&rng, 10) < 3 ? ATOM_WRITE : ATOM_READ;
          plan[t][m++] = (atom_event){kind, 0, t, 100 + below(&rng, 8), k};
        }
        if (below(&rng, 2)) plan[t][m++] = (atom_event){ATOM_FENCE, 0, t, 0, k};
      }
      plan[t][m++] = (atom_event){ATOM_END, 0, t, 0, k};
      len[t] = m;
      pos[t] = 0;
    }
    ev[k] = plan[t][pos[t]++];
    ev[k].loc = k;
    k++;
  }
  for (unsigned t = 1; t <= T; t++) /* finish the transactions under way */
    while (pos[t] < len[t]) {
      ev[k] = plan[t][pos[t]++];
      ev[k].loc = k;
      k++;
    }
  free(plan);
  free(len);
  free(pos);
  *out = ev;
  return k;
}

static int run_trace(const char *spec, const atom_event *ev, size_t n, result *r) {
  memset(r, 0, sizeof *r);
  atom_session *s = NULL;
  int rc = atom_session_new(&s, NULL);
  if (rc == 0) rc = atom_session_attach(s, spec);
  double t0 = br_now();
  if (rc == 0) rc = atom_push_many(s, ev, n, NULL);
  if (rc == 0) rc = atom_finish(s);
  r->seconds = br_now() - t0;
  r->events = n;
  if (rc == 0) count_reports(s, r);
  else fprintf(stderr, "bench_tso: %s: %s (%s)\n", spec, atom_strerror(rc), atom_last_error());
  atom_session_free(s);
  return rc;
}

/* The search effort of mode=trace on this trace: the smallest max_work (to within 1/16) that
 * does not stop the search (so no bound-reached report). */
static uint64_t search_steps(const atom_event *ev, size_t n) {
  uint64_t lo = 1, hi = 256;
  result r0;
  if (run_trace("tso:mode=trace,max_work=1", ev, n, &r0) != 0 || !r0.bounds) return 0;
  for (;;) {
    char spec[64];
    snprintf(spec, sizeof spec, "tso:mode=trace,max_work=%llu", (unsigned long long)hi);
    result r;
    if (run_trace(spec, ev, n, &r) != 0) return 0;
    if (!r.bounds) break;
    lo = hi;
    if (hi > (1ull << 40)) return hi;
    hi *= 2;
  }
  while (hi - lo > hi / 16) {
    uint64_t mid = lo + (hi - lo) / 2;
    char spec[64];
    snprintf(spec, sizeof spec, "tso:mode=trace,max_work=%llu", (unsigned long long)mid);
    result r;
    if (run_trace(spec, ev, n, &r) != 0) return 0;
    if (r.bounds) lo = mid;
    else hi = mid;
  }
  return hi;
}

int main(int argc, char **argv) {
  uint64_t exec_events = 1000000, seed = 1;
  char trace_arg[128] = "10000,100000", threads_arg[64] = "2,4,8";
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t x = 0;
    if (!v) goto usage;
    if (strcmp(a, "--trace-events") == 0) snprintf(trace_arg, sizeof trace_arg, "%s", v);
    else if (strcmp(a, "--threads") == 0) snprintf(threads_arg, sizeof threads_arg, "%s", v);
    else if (tg_parse_u64(v, &x) != 0) goto usage;
    else if (strcmp(a, "--exec-events") == 0) exec_events = x;
    else if (strcmp(a, "--seed") == 0) seed = x;
    else goto usage;
  }
  printf("# bench_tso: libatomicity %s\n", atom_version());
  printf("## mode=execution: %llu events of tracegen (4 threads, 128 vars, 8 locks, txn-len 8) "
         "plus commits\n",
         (unsigned long long)exec_events);
  printf("%-34s %-6s %10s %8s %8s %12s %8s\n", "checker", "trace", "events", "seconds", "Mev/s",
         "peak_bytes", "reports");
  static const char *const exec_specs[] = {"velodrome", "tso:mode=execution",
                                           "tso:mode=execution,robust=yes"};
  int status = 0;
  for (int kind = TG_2PL; kind <= TG_RACY; kind++)
    for (size_t c = 0; c < 3; c++) {
      tg_params p = {exec_events, 4, 128, 8, 8, kind, seed};
      result r, best;
      int failed = 0;
      for (int k = 0; k < 3 && !failed; k++) {
        failed = run_exec(exec_specs[c], &p, &r) != 0;
        if (k == 0 || r.seconds < best.seconds) best = r;
      }
      if (failed) {
        status = 1;
        continue;
      }
      r = best;
      printf("%-34s %-6s %10llu %8.3f %8.2f %12llu %8zu\n", exec_specs[c],
             kind == TG_2PL ? "2pl" : "racy", (unsigned long long)r.events, r.seconds,
             r.events / r.seconds / 1e6, (unsigned long long)r.peak,
             r.cycles + r.bounds + r.nonrobust + r.other);
    }

  char *lens[MAX_LIST], *ths[MAX_LIST];
  size_t nlens = br_split(trace_arg, ',', lens, MAX_LIST), nths = br_split(threads_arg, ',', ths, MAX_LIST);
  printf("## mode=trace: whole analysis (push + finish) against the number of threads\n");
  printf("%-28s %-5s %7s %8s %9s %8s %8s %12s %10s\n", "checker", "work", "threads", "events",
         "seconds", "cycles", "bounds", "peak_bytes", "steps");
  static const char *const trace_specs[] = {"tso:mode=trace", "tso:fenced=yes", "velodrome"};
  for (size_t l = 0; l < nlens; l++)
    for (int w = W_PC; w <= W_UNARY; w++)
      for (size_t ti = 0; ti < nths; ti++) {
        uint64_t n = 0, T = 0;
        if (tg_parse_u64(lens[l], &n) != 0 || tg_parse_u64(ths[ti], &T) != 0 || T < 1) goto usage;
        atom_event *ev = NULL;
        size_t ne = gen_trace(w, (unsigned)T, n, seed, &ev);
        if (!ne) return 1;
        for (size_t c = 0; c < 3; c++) {
          if (c == 1 && w >= W_RACY) continue; /* racy and unary are not transaction-fenced */
          result r, best;
          int failed = 0;
          for (int k = 0; k < 3 && !failed; k++) {
            failed = run_trace(trace_specs[c], ev, ne, &r) != 0;
            if (k == 0 || r.seconds < best.seconds) best = r;
          }
          if (failed) {
            status = 1;
            continue;
          }
          r = best;
          printf("%-28s %-5s %7llu %8zu %9.4f %8zu %8zu %12llu", trace_specs[c],
                 w == W_PC ? "pc" : w == W_IRIW ? "iriw" : w == W_RACY ? "racy" : "unary",
                 (unsigned long long)T, ne,
                 r.seconds,
                 r.cycles + r.other, r.bounds, (unsigned long long)r.peak);
          if (c == 0) printf(" %10llu", (unsigned long long)search_steps(ev, ne));
          printf("\n");
        }
        free(ev);
      }
  return status;
usage:
  fprintf(stderr, "usage: bench_tso [--exec-events N] [--trace-events N[,N...]] "
                  "[--threads T[,T...]] [--seed S]\n");
  return 2;
}
