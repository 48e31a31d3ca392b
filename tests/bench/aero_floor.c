/* The floor of AeroDrome on this machine: the leanest verdict-only implementation of the
 * algorithm, beside the library's aerodrome on the same generated trace, in one run.
 *
 *   aero_floor [--events N] [--threads T<=8] [--vars V] [--locks L] [--txn-len K]
 *              [--kind 2pl|racy] [--seed S]
 *
 * The floor runs Algorithm 1 of the AeroDrome paper with its read-clock reduction (one R_x and
 * one chR_x per variable) and stops at the first violation: no reports, no provenance, no
 * session (the generator's keys are dense and used as ids), at most 8 threads so that a clock
 * is one AVX2 register (a join is one vpmaxud), the three clocks of a variable side by side.
 * END joins the ending transaction's clock into every thread clock that knows it (at most 8)
 * and into the variable and lock clocks it flowed into: a list per open transaction, to which
 * a clock is added when a store or a join makes one of its components reach that
 * transaction's begin value (the cheapest exact alternative to scanning every clock).
 *
 * Prints the floor's and the library's ns an event and their first violations (which must be
 * the same event: exit 1 if not). x86-64 with AVX2 only (exit 77, skipped, elsewhere).
 * doc/performance.md, "How fast AeroDrome can be here". */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity.h"
#include "benchrun.h"
#include "tracegen.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define WIDTH 8u
#define NO_TXN 0xffffffffu
#define BLOCK 4096u

typedef struct clock8 {
  _Alignas(32) uint32_t c[WIDTH];
} clock8;

typedef struct var_clocks { /* W_x, R_x, chR_x: 96 bytes, two cache lines at most */
  clock8 w, r, chr;
} var_clocks;

enum { CLK_W = 0, CLK_R = 1, CLK_L = 2 }; /* the kind of a listed clock: id * 4 + kind */

typedef struct floor_state {
  clock8 thr[WIDTH]; /* C_t */
  clock8 begin;      /* begin value of each thread's open transaction, NO_TXN if none */
  var_clocks *var;
  clock8 *lock;
  uint32_t *lastw, *lastrel;
  uint32_t depth[WIDTH], acted[WIDTH], nthr;
  uint32_t *list[WIDTH], len[WIDTH], cap[WIDTH]; /* clocks each open transaction flowed into */
} floor_state;

static AVX2 inline __m256i ld(const clock8 *x) { return _mm256_load_si256((const __m256i *)x->c); }
static AVX2 inline void st(clock8 *x, __m256i v) { _mm256_store_si256((__m256i *)x->c, v); }
static AVX2 inline void join(clock8 *d, const clock8 *s) { st(d, _mm256_max_epu32(ld(d), ld(s))); }

/* The threads whose open transaction clock x knows (x[u] >= begin[u]), as a bit mask. */
static AVX2 inline uint32_t knows(const floor_state *f, const clock8 *x) {
  __m256i a = ld(x);
  __m256i ge = _mm256_cmpeq_epi32(_mm256_max_epu32(a, ld(&f->begin)), a);
  return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(ge));
}

/* List clock `e` with the open transactions of the threads in `m`. */
static void list_add(floor_state *f, uint32_t m, uint32_t e) {
  while (m) {
    uint32_t u = (uint32_t)__builtin_ctz(m);
    m &= m - 1;
    if (f->len[u] == f->cap[u]) {
      f->cap[u] = f->cap[u] ? 2 * f->cap[u] : 64;
      uint32_t *p = realloc(f->list[u], f->cap[u] * sizeof *p);
      if (!p) {
        fprintf(stderr, "aero_floor: out of memory\n");
        exit(2);
      }
      f->list[u] = p;
    }
    f->list[u][f->len[u]++] = e;
  }
}

/* One event; 1 if it completes a violation. */
static AVX2 inline int floor_step(floor_state *f, const atom_event *e) {
  uint32_t t = (uint32_t)e->thread - 1, k = (uint32_t)e->target - 1;
  clock8 *ct = &f->thr[t];
  uint32_t bt = f->begin.c[t];
  f->acted[t] = 1;
  switch (e->kind) {
    case ATOM_READ: {
      var_clocks *v = &f->var[k];
      if (f->lastw[k] != t) {
        if (v->w.c[t] >= bt) return 1;
        join(ct, &v->w);
      }
      uint32_t learns = knows(f, ct) & ~knows(f, &v->r), keep = v->chr.c[t];
      join(&v->r, ct);
      join(&v->chr, ct);
      v->chr.c[t] = keep; /* chR_x joins C_t[0/t] */
      if (learns) list_add(f, learns, k * 4 + CLK_R);
      return 0;
    }
    case ATOM_WRITE: {
      var_clocks *v = &f->var[k];
      if (f->lastw[k] != t) {
        if (v->w.c[t] >= bt) return 1;
        join(ct, &v->w);
      }
      if (v->chr.c[t] >= bt) return 1;
      join(ct, &v->r);
      uint32_t learns = knows(f, ct) & ~knows(f, &v->w);
      st(&v->w, ld(ct));
      f->lastw[k] = t;
      if (learns) list_add(f, learns, k * 4 + CLK_W);
      return 0;
    }
    case ATOM_ACQUIRE:
      if (f->lastrel[k] != t) {
        if (f->lock[k].c[t] >= bt) return 1;
        join(ct, &f->lock[k]);
      }
      return 0;
    case ATOM_RELEASE: {
      uint32_t learns = knows(f, ct) & ~knows(f, &f->lock[k]);
      st(&f->lock[k], ld(ct));
      f->lastrel[k] = t;
      if (learns) list_add(f, learns, k * 4 + CLK_L);
      return 0;
    }
    case ATOM_FORK:
      join(&f->thr[k], ct);
      return 0;
    case ATOM_JOIN:
      if (!f->acted[k]) return 0; /* a thread that did nothing had no transaction */
      if (f->thr[k].c[t] >= bt) return 1;
      join(ct, &f->thr[k]);
      return 0;
    case ATOM_BEGIN:
      if (f->depth[t]++) return 0;
      f->begin.c[t] = ++ct->c[t];
      return 0;
    case ATOM_END: {
      if (f->depth[t] == 0 || --f->depth[t]) return 0;
      int violation = 0;
      for (uint32_t u = 0; u < f->nthr; u++)
        if (u != t && f->thr[u].c[t] >= bt) {
          if (ct->c[u] >= f->begin.c[u]) violation = 1;
          join(&f->thr[u], ct);
        }
      uint32_t others = knows(f, ct) & ~(1u << t);
      for (uint32_t i = 0; i < f->len[t]; i++) {
        uint32_t id = f->list[t][i] >> 2, kind = f->list[t][i] & 3;
        clock8 *x = kind == CLK_L ? &f->lock[id] : kind == CLK_W ? &f->var[id].w : &f->var[id].r;
        uint32_t learns = others ? others & ~knows(f, x) : 0;
        join(x, ct);
        if (kind == CLK_R) join(&f->var[id].chr, ct);
        if (learns) list_add(f, learns, f->list[t][i]);
      }
      f->len[t] = 0;
      f->begin.c[t] = NO_TXN;
      return violation;
    }
    default:
      return 0;
  }
}

/* Run the floor over the trace of p; *first: index of the first violation, or -1. */
static AVX2 double run_floor(const tg_params *p, atom_event *buf, int64_t *first) {
  floor_state *f = aligned_alloc(32, sizeof *f);
  void *var = aligned_alloc(32, (size_t)p->vars * sizeof(var_clocks));
  void *lock = aligned_alloc(32, ((size_t)p->locks + 1) * sizeof(clock8));
  uint32_t *lastw = malloc((size_t)p->vars * 4), *lastrel = malloc(((size_t)p->locks + 1) * 4);
  tg_gen *g = NULL;
  const char *why = "";
  if (!f || !var || !lock || !lastw || !lastrel || tg_new(&g, p, &why)) {
    fprintf(stderr, "aero_floor: cannot start the floor run: %s\n", why);
    exit(2);
  }
  memset(f, 0, sizeof *f);
  f->var = var;
  f->lock = lock;
  f->lastw = lastw;
  f->lastrel = lastrel;
  f->nthr = p->threads;
  memset(var, 0, (size_t)p->vars * sizeof(var_clocks));
  memset(lock, 0, ((size_t)p->locks + 1) * sizeof(clock8));
  memset(lastw, 0xff, (size_t)p->vars * 4);
  memset(lastrel, 0xff, ((size_t)p->locks + 1) * 4);
  for (uint32_t u = 0; u < WIDTH; u++) {
    f->begin.c[u] = NO_TXN;
    f->thr[u].c[u] = 1;
  }
  uint64_t index = 0;
  double inside = 0;
  size_t n;
  *first = -1;
  while (*first < 0 && (n = tg_next(g, buf, BLOCK)) > 0) {
    double a = br_now();
    for (size_t i = 0; i < n; i++)
      if (floor_step(f, &buf[i])) {
        *first = (int64_t)(index + i);
        break;
      }
    inside += br_now() - a;
    index += n;
  }
  tg_free(g);
  for (uint32_t u = 0; u < WIDTH; u++) free(f->list[u]);
  free(f);
  free(var);
  free(lock);
  free(lastw);
  free(lastrel);
  return inside;
}

/* The library's aerodrome through atom_push_many on the same trace: seconds in push and
 * finish; *first: the smallest event index of its reports, or -1. */
static double run_library(const tg_params *p, atom_event *buf, int64_t *first, uint64_t *events) {
  atom_session *s = NULL;
  tg_gen *g = NULL;
  const char *why = "";
  if (atom_session_new(&s, NULL) || atom_session_attach(s, "aerodrome") || tg_new(&g, p, &why)) {
    fprintf(stderr, "aero_floor: cannot start the library run: %s %s\n", atom_last_error(), why);
    exit(2);
  }
  double inside = 0;
  size_t n;
  *events = 0;
  while ((n = tg_next(g, buf, BLOCK)) > 0) {
    double a = br_now();
    size_t done = 0;
    int rc = atom_push_many(s, buf, n, &done);
    inside += br_now() - a;
    if (rc) {
      fprintf(stderr, "aero_floor: %s\n", atom_last_error());
      exit(2);
    }
    *events += n;
  }
  double a = br_now();
  atom_finish(s);
  inside += br_now() - a;
  *first = -1;
  for (size_t i = 0; i < atom_report_count(s); i++) {
    int64_t at = (int64_t)atom_report_event_index(atom_report_get(s, i));
    if (*first < 0 || at < *first) *first = at;
  }
  tg_free(g);
  atom_session_free(s);
  return inside;
}

int main(int argc, char **argv) {
  tg_params p = {10000000, 8, 1000, 16, 10, TG_2PL, 1};
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    uint64_t x = 0;
    if (strcmp(a, "--kind") == 0) {
      p.kind = strcmp(v, "racy") == 0 ? TG_RACY : TG_2PL;
      continue;
    }
    if (tg_parse_u64(v, &x)) {
      fprintf(stderr, "aero_floor: %s: not a number: %s\n", a, v);
      return 2;
    }
    if (strcmp(a, "--events") == 0) p.events = x;
    else if (strcmp(a, "--threads") == 0) p.threads = (unsigned)x;
    else if (strcmp(a, "--vars") == 0) p.vars = (unsigned)x;
    else if (strcmp(a, "--locks") == 0) p.locks = (unsigned)x;
    else if (strcmp(a, "--txn-len") == 0) p.txn_len = (unsigned)x;
    else if (strcmp(a, "--seed") == 0) p.seed = x;
    else {
      fprintf(stderr, "aero_floor: unknown option %s\n", a);
      return 2;
    }
  }
  if (!__builtin_cpu_supports("avx2")) {
    fprintf(stderr, "aero_floor: needs AVX2\n");
    return 77;
  }
  if (p.threads < 1 || p.threads > WIDTH) {
    fprintf(stderr, "aero_floor: --threads must be 1 .. %u\n", WIDTH);
    return 2;
  }
  atom_event *buf = aligned_alloc(64, BLOCK * sizeof *buf);
  if (!buf) return 2;
  printf("# aero_floor: %s trace, %u threads, %u vars, %u locks, txn-len %u, seed %" PRIu64
         "; best of 3\n",
         p.kind == TG_RACY ? "racy" : "2pl", p.threads, p.vars, p.locks, p.txn_len, p.seed);
  double best_floor = 1e30, best_lib = 1e30;
  int64_t first_floor = -1, first_lib = -1;
  uint64_t events = 0;
  for (int round = 0; round < 3; round++) { /* alternating, so both see the same machine */
    double s = run_floor(&p, buf, &first_floor);
    if (s < best_floor) best_floor = s;
    s = run_library(&p, buf, &first_lib, &events);
    if (s < best_lib) best_lib = s;
  }
  free(buf);
  uint64_t upto = first_floor >= 0 ? (uint64_t)first_floor + 1 : events;
  printf("floor      %8.2f ns an event   first violation %" PRId64 "\n",
         best_floor * 1e9 / (double)upto, first_floor);
  printf("aerodrome  %8.2f ns an event   first violation %" PRId64 "   (%.2fx the floor)\n",
         best_lib * 1e9 / (double)events, first_lib,
         (best_lib / (double)events) / (best_floor / (double)upto));
  if (first_floor != first_lib) {
    fprintf(stderr, "aero_floor: the floor and the library disagree on the first violation\n");
    return 1;
  }
  return 0;
}

#else
int main(void) {
  fprintf(stderr, "aero_floor: x86-64 only\n");
  return 77;
}
#endif
