/* gentrace: write a synthetic STD trace for the benchmarks.
 *
 *   gentrace --events N --threads T --vars V --locks L --txn-len K --kind 2pl|racy|pool
 *            --seed S [--alive A] -o FILE
 *
 * 2pl: two-phase-locked transactions (conflict serializable); racy: unprotected random
 * accesses in transactions; pool: a thread pool whose workers take an item from a locked queue
 * and run a long transaction on a shared table (tracegen.h). --alive A: thread T1 forks the others in waves of A and joins each
 * wave before the next (many threads, few alive at once). Names: T<i>, V<i>, L<i>. FILE "-"
 * is standard output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen.h"

static void usage(FILE *f) {
  fputs("usage: gentrace [--events N] [--threads T] [--vars V] [--locks L] [--txn-len K]\n"
        "                [--kind 2pl|racy|pool] [--seed S] [--alive A] [-o FILE]\n"
        "defaults: --events 1000000 --threads 4 --vars 128 --locks 8 --txn-len 8 --kind 2pl\n"
        "          --seed 1 -o -\n",
        f);
}


/* Output buffer with hand-rolled number formatting: printf is the bottleneck otherwise. */
typedef struct out {
  FILE *f;
  char buf[1 << 16];
  size_t len;
  int err;
} out;

static void flush_out(out *o) {
  if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len) o->err = 1;
  o->len = 0;
}

static void put_str(out *o, const char *s, size_t n) {
  memcpy(o->buf + o->len, s, n);
  o->len += n;
}

static void put_u64(out *o, uint64_t x) {
  char tmp[24];
  size_t n = 0;
  do tmp[n++] = (char)('0' + x % 10);
  while ((x /= 10) != 0);
  while (n) o->buf[o->len++] = tmp[--n];
}

static void put_event(out *o, const atom_event *e) {
  if (sizeof o->buf - o->len < 128) flush_out(o);
  put_str(o, "T", 1);
  put_u64(o, e->thread);
  switch (e->kind) {
  case ATOM_READ: put_str(o, "|r(V", 4); break;
  case ATOM_WRITE: put_str(o, "|w(V", 4); break;
  case ATOM_ACQUIRE: put_str(o, "|acq(L", 6); break;
  case ATOM_RELEASE: put_str(o, "|rel(L", 6); break;
  case ATOM_FORK: put_str(o, "|fork(T", 7); break;
  case ATOM_JOIN: put_str(o, "|join(T", 7); break;
  case ATOM_BEGIN: put_str(o, "|begin|", 7); break;
  case ATOM_END: put_str(o, "|end|", 5); break;
  default: put_str(o, "|fence|", 7); break;
  }
  if (e->kind != ATOM_BEGIN && e->kind != ATOM_END) {
    put_u64(o, e->target);
    put_str(o, ")|", 2);
  }
  put_u64(o, e->loc);
  put_str(o, "\n", 1);
}

int main(int argc, char **argv) {
  tg_params p = {1000000, 4, 128, 8, 8, TG_2PL, 1};
  const char *path = "-";
  unsigned alive = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "gentrace: %s needs a value\n", a);
      usage(stderr);
      return 2;
    }
    const char *v = argv[++i];
    uint64_t x = 0;
    int bad = 0;
    if (strcmp(a, "-o") == 0) path = v;
    else if (strcmp(a, "--kind") == 0) {
      if (strcmp(v, "2pl") == 0) p.kind = TG_2PL;
      else if (strcmp(v, "racy") == 0) p.kind = TG_RACY;
      else if (strcmp(v, "pool") == 0) p.kind = TG_POOL;
      else bad = 1;
    } else if (tg_parse_u64(v, &x) != 0) bad = 1;
    else if (strcmp(a, "--events") == 0) p.events = x;
    else if (strcmp(a, "--seed") == 0) p.seed = x;
    else if (x > 0xffffffffu) bad = 1;
    else if (strcmp(a, "--threads") == 0) p.threads = (unsigned)x;
    else if (strcmp(a, "--vars") == 0) p.vars = (unsigned)x;
    else if (strcmp(a, "--locks") == 0) p.locks = (unsigned)x;
    else if (strcmp(a, "--txn-len") == 0) p.txn_len = (unsigned)x;
    else if (strcmp(a, "--alive") == 0) alive = (unsigned)x;
    else {
      fprintf(stderr, "gentrace: unknown option %s\n", a);
      usage(stderr);
      return 2;
    }
    if (bad) {
      fprintf(stderr, "gentrace: bad value for %s: %s\n", a, v);
      return 2;
    }
  }
  tg_gen *g;
  const char *why;
  if (tg_new_alive(&g, &p, alive, &why) != 0) {
    fprintf(stderr, "gentrace: %s\n", why ? why : "cannot start");
    return 2;
  }
  static out o;
  o.f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  if (!o.f) {
    fprintf(stderr, "gentrace: %s: %s\n", path, strerror(errno));
    tg_free(g);
    return 2;
  }
  put_str(&o, "# gentrace ", 11);
  const char *kind = p.kind == TG_2PL ? "2pl" : p.kind == TG_RACY ? "racy" : "pool";
  put_str(&o, kind, strlen(kind));
  put_str(&o, " seed ", 6);
  put_u64(&o, p.seed);
  put_str(&o, "\n", 1);
  atom_event buf[4096];
  size_t n;
  uint64_t total = 0;
  while ((n = tg_next(g, buf, sizeof buf / sizeof buf[0])) > 0) {
    for (size_t i = 0; i < n; i++) put_event(&o, &buf[i]);
    total += n;
  }
  flush_out(&o);
  tg_free(g);
  if (o.f != stdout ? fclose(o.f) != 0 : fflush(o.f) != 0) o.err = 1;
  if (o.err) {
    fprintf(stderr, "gentrace: write error on %s\n", path);
    return 1;
  }
  fprintf(stderr, "gentrace: %llu events\n", (unsigned long long)total);
  return 0;
}
