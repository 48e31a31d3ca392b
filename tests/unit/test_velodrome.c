/* velodrome and the incremental digraph it is built on (lib/support/digraph.c).
 *
 * Graph level: cycle detection against brute-force reachability, duplicate edges, deletion,
 * collection cascades, stale handles, allocation failures. Session level: the corpus cycles,
 * report contents, repeated violations, memory staying flat on long serializable traces, and
 * verdicts, first detection points and reported cycles checked against the brute-force
 * reference on random traces. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "cycle_check.h"
#include "randtrace.h"
#include "reference.h"
#include "inspect.h"
#include "util.h"

Suite *atom_test_suite_velodrome(void);

/* For hot loops: Check's ck_assert macros record a mark point on every call, which is slow
 * under valgrind; this only calls into Check on failure. */
#define CHECK(c)                                                   \
  do {                                                             \
    if (!(c)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c);   \
  } while (0)

/* ---- graph level -------------------------------------------------------------------------- */

static atom__dg_node node(atom__dg *g) {
  atom__dg_node n = ATOM__DG_NONE;
  ck_assert_int_eq(atom__dg_add_node(g, &n), 0);
  ck_assert(n != ATOM__DG_NONE);
  return n;
}

START_TEST(dg_edges_and_dedupe) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__dg g;
  atom__dg_init(&g, &m, sizeof(int));
  atom__dg_node a = node(&g), b = node(&g), c = node(&g);
  *(int *)atom__dg_payload(&g, a) = 7;
  ck_assert_int_eq(atom__dg_add_edge(&g, a, b), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, a, b), 0); /* newest edge repeated */
  ck_assert_int_eq(atom__dg_add_edge(&g, c, b), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, a, c), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, a, b), 0); /* older edge: found by the hash */
  ck_assert_int_eq(atom__dg_add_edge(&g, c, b), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, a, a), 0); /* self: no edge */
  ck_assert_int_eq(atom__dg_add_edge(&g, ATOM__DG_NONE, a), 0);
  /* NONE is never live, by either test (slot 0 is never handed out) */
  ck_assert(!atom__dg_alive(&g, ATOM__DG_NONE) && !atom__dg_alive_fast(&g, ATOM__DG_NONE));
  ck_assert((uint32_t)a != 0 && atom__dg_alive_fast(&g, a) && atom__dg_alive_fast(&g, c));
  ck_assert_uint_eq(atom__dg_edge_count(&g), 3);
  ck_assert_uint_eq(atom__dg_in_degree(&g, b), 2);
  ck_assert_uint_eq(atom__dg_out_degree(&g, a), 2);
  ck_assert(atom__dg_has_edge(&g, a, b) && atom__dg_has_edge(&g, c, b));
  ck_assert(!atom__dg_has_edge(&g, b, a) && !atom__dg_has_edge(&g, a, a));
  ck_assert_int_eq(*(int *)atom__dg_payload(&g, a), 7);
  ck_assert_int_eq(*(int *)atom__dg_payload(&g, b), 0);
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  atom__dg_destroy(&g);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

START_TEST(dg_cycle_reported_in_order) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__dg g;
  atom__dg_init(&g, &m, 0);
  atom__dg_node n[5];
  for (int i = 0; i < 5; i++) n[i] = node(&g);
  /* 4 -> 2 -> 0 -> 3 (all against creation order: every insertion repairs the order) */
  ck_assert_int_eq(atom__dg_add_edge(&g, n[4], n[2]), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, n[2], n[0]), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, n[0], n[3]), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, n[1], n[3]), 0);
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, n[3], n[4]), 1);
  const atom__dg_node *cyc;
  ck_assert_uint_eq(atom__dg_cycle(&g, &cyc), 4);
  /* v = 4 first, u = 3 last, in edge order */
  ck_assert(cyc[0] == n[4] && cyc[1] == n[2] && cyc[2] == n[0] && cyc[3] == n[3]);
  ck_assert(!atom__dg_has_edge(&g, n[3], n[4])); /* not inserted: the graph stays a DAG */
  ck_assert_uint_eq(atom__dg_edge_count(&g), 4);
  /* two-node cycle */
  ck_assert_int_eq(atom__dg_add_edge(&g, n[0], n[2]), 1);
  ck_assert_uint_eq(atom__dg_cycle(&g, &cyc), 2);
  ck_assert(cyc[0] == n[2] && cyc[1] == n[0]);
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  atom__dg_destroy(&g);
}
END_TEST

/* Random edge insertions and deletions against a reachability matrix. */
START_TEST(dg_random_against_closure) {
  enum { N = 40 };
  atom__mem m;
  atom__mem_init(&m, NULL);
  rt_rng r;
  rt_rng_seed(&r, 12345);
  for (int round = 0; round < 60; round++) {
    atom__dg g;
    atom__dg_init(&g, &m, 0);
    atom__dg_node h[N];
    int alive[N];
    static unsigned char adj[N][N];
    memset(adj, 0, sizeof adj);
    for (int i = 0; i < N; i++) {
      h[i] = node(&g);
      alive[i] = 1;
    }
    int cycles = 0;
    for (int step = 0; step < 400; step++) {
      int u = (int)rt_rng_below(&r, N), v = (int)rt_rng_below(&r, N);
      if (rt_rng_chance(&r, 0.03) && alive[u]) {
        atom__dg_delete(&g, h[u]);
        CHECK(!atom__dg_alive(&g, h[u]));
        alive[u] = 0;
        for (int k = 0; k < N; k++) adj[u][k] = adj[k][u] = 0;
        continue;
      }
      /* does v reach u (so that u -> v closes a cycle)? */
      unsigned char seen[N] = {0};
      int stack[N], sp = 0, reach = 0;
      if (alive[u] && alive[v] && u != v) {
        stack[sp++] = v;
        seen[v] = 1;
        while (sp) {
          int w = stack[--sp];
          if (w == u) reach = 1;
          for (int k = 0; k < N; k++)
            if (adj[w][k] && !seen[k]) {
              seen[k] = 1;
              stack[sp++] = k;
            }
        }
      }
      int rc = atom__dg_add_edge(&g, h[u], h[v]);
      CHECK(rc == reach);
      if (rc == 1) {
        cycles++;
        const atom__dg_node *cyc;
        size_t n = atom__dg_cycle(&g, &cyc);
        CHECK(n >= 2 && cyc[0] == h[v] && cyc[n - 1] == h[u]);
        for (size_t i = 0; i + 1 < n; i++) CHECK(atom__dg_has_edge(&g, cyc[i], cyc[i + 1]));
      } else if (alive[u] && alive[v] && u != v) {
        adj[u][v] = 1;
      }
      CHECK(atom__dg_has_edge(&g, h[u], h[v]) == (adj[u][v] && alive[u] && alive[v]));
    }
    ck_assert_int_eq(atom__dg_verify(&g), 0);
    ck_assert_int_gt(cycles, 0);
    atom__dg_destroy(&g);
  }
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

static int collected_count;
static void on_collect(atom__dg_node n, void *payload, void *ctx) {
  (void)n;
  (void)ctx;
  ck_assert_int_eq(*(int *)payload, 42);
  collected_count++;
}

START_TEST(dg_delete_and_stale_handles) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__dg g;
  atom__dg_init(&g, &m, sizeof(int));
  atom__dg_node a = node(&g), b = node(&g), c = node(&g);
  ck_assert_int_eq(atom__dg_add_edge(&g, a, b), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, b, c), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, a, c), 0);
  atom__dg_delete(&g, b);
  ck_assert(!atom__dg_alive(&g, b) && !atom__dg_alive_fast(&g, b));
  ck_assert_ptr_null(atom__dg_payload(&g, b));
  ck_assert_uint_eq(atom__dg_node_count(&g), 2);
  ck_assert_uint_eq(atom__dg_edge_count(&g), 1);
  ck_assert_uint_eq(atom__dg_in_degree(&g, c), 1);
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  /* the slot comes back under a new handle; the old one stays dead */
  atom__dg_node d = node(&g);
  ck_assert((uint32_t)d == (uint32_t)b && d != b);
  ck_assert(!atom__dg_alive(&g, b) && atom__dg_alive(&g, d));
  ck_assert_int_eq(atom__dg_add_edge(&g, b, c), 0); /* stale: ignored */
  ck_assert_int_eq(atom__dg_add_edge(&g, c, b), 0);
  ck_assert_uint_eq(atom__dg_in_degree(&g, d), 0);
  ck_assert_uint_eq(atom__dg_edge_count(&g), 1);
  atom__dg_delete(&g, b); /* no effect */
  ck_assert(atom__dg_alive(&g, d));
  ck_assert_int_eq(atom__dg_complete(&g, b), 0);
  /* a slot whose generation is exhausted is retired, never handed out again */
  g.vx[(uint32_t)d].gen = UINT32_MAX;
  d = ((uint64_t)UINT32_MAX << 32) | (uint32_t)d;
  g.live[(uint32_t)d] = d;
  ck_assert(atom__dg_alive(&g, d));
  atom__dg_delete(&g, d);
  ck_assert(!atom__dg_alive(&g, d));
  atom__dg_node e = node(&g);
  ck_assert((uint32_t)e != (uint32_t)d);
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  atom__dg_destroy(&g);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

START_TEST(dg_collection_cascade) {
  atom__mem m;
  atom__mem_init(&m, NULL);
  atom__dg g;
  atom__dg_init(&g, &m, sizeof(int));
  collected_count = 0;
  atom__dg_set_collect_hook(&g, on_collect, NULL);
  /* a -> b -> c, a -> d, e -> d: completing b, c, d keeps them (they have in-edges) */
  atom__dg_node a = node(&g), b = node(&g), c = node(&g), d = node(&g), e = node(&g);
  atom__dg_node all[] = {a, b, c, d, e};
  for (int i = 0; i < 5; i++) *(int *)atom__dg_payload(&g, all[i]) = 42;
  ck_assert_int_eq(atom__dg_add_edge(&g, a, b), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, b, c), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, a, d), 0);
  ck_assert_int_eq(atom__dg_add_edge(&g, e, d), 0);
  ck_assert_int_eq(atom__dg_complete(&g, b), 0);
  ck_assert_int_eq(atom__dg_complete(&g, c), 0);
  ck_assert_int_eq(atom__dg_complete(&g, d), 0);
  ck_assert(atom__dg_is_complete(&g, b) && !atom__dg_is_complete(&g, a));
  ck_assert_uint_eq(atom__dg_node_count(&g), 5);
  /* completing a (no in-edge) collects a, then b, then c; d still has e's edge */
  ck_assert_int_eq(atom__dg_complete(&g, a), 1);
  ck_assert(!atom__dg_alive(&g, a) && !atom__dg_alive(&g, b) && !atom__dg_alive(&g, c));
  ck_assert(atom__dg_alive(&g, d) && atom__dg_alive(&g, e));
  ck_assert_int_eq(collected_count, 3);
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  /* deleting e (not complete) lets d go too */
  atom__dg_delete(&g, e);
  ck_assert_uint_eq(atom__dg_node_count(&g), 0);
  ck_assert_uint_eq(atom__dg_edge_count(&g), 0);
  ck_assert_int_eq(collected_count, 5);
  /* a long chain collapses in one call, without recursion */
  atom__dg_node first = node(&g), prev = first;
  *(int *)atom__dg_payload(&g, first) = 42;
  for (int i = 0; i < 100000; i++) {
    atom__dg_node n;
    CHECK(atom__dg_add_node(&g, &n) == 0);
    *(int *)atom__dg_payload(&g, n) = 42;
    CHECK(atom__dg_add_edge(&g, prev, n) == 0);
    CHECK(atom__dg_complete(&g, n) == 0);
    prev = n;
  }
  ck_assert_uint_eq(atom__dg_node_count(&g), 100001);
  ck_assert_int_eq(atom__dg_complete(&g, first), 1);
  ck_assert_uint_eq(atom__dg_node_count(&g), 0);
  ck_assert_uint_eq(atom__dg_edge_count(&g), 0);
  ck_assert_int_eq(atom__dg_verify(&g), 0);
  atom__dg_destroy(&g);
  ck_assert_uint_eq(m.bytes, 0);
}
END_TEST

/* Every allocation failure point: ATOM_ENOMEM, the graph unchanged and still valid. */
START_TEST(dg_out_of_memory) {
  int saw_failure = 0;
  for (long budget = 0; budget < 200; budget++) {
    tu_failing f = {.budget = budget};
    atom__allocator al;
    tu_failing_allocator(&al, &f);
    atom__mem m;
    atom__mem_init(&m, &al);
    atom__dg g;
    atom__dg_init(&g, &m, 8);
    atom__dg_node h[64];
    size_t nh = 0;
    int failed = 0;
    for (int i = 0; i < 64 && !failed; i++) {
      atom__dg_node n;
      int rc = atom__dg_add_node(&g, &n);
      if (rc) {
        ck_assert_int_eq(rc, ATOM_ENOMEM);
        failed = 1;
        break;
      }
      h[nh++] = n;
      /* edges against the order force searches (scratch allocation) */
      for (size_t k = 0; k + 1 < nh && k < 3; k++) {
        size_t before = atom__dg_edge_count(&g);
        int had = atom__dg_has_edge(&g, n, h[k]);
        rc = atom__dg_add_edge(&g, n, h[k]);
        if (rc == ATOM_ENOMEM) {
          ck_assert_uint_eq(atom__dg_edge_count(&g), before);
          ck_assert(atom__dg_has_edge(&g, n, h[k]) == had);
          failed = 1;
          break;
        }
        ck_assert_int_ge(rc, 0);
      }
      ck_assert_int_eq(atom__dg_verify(&g), 0);
    }
    saw_failure |= failed;
    /* and it keeps working once memory is back */
    f.budget = -1;
    atom__dg_node n;
    ck_assert_int_eq(atom__dg_add_node(&g, &n), 0);
    if (nh) ck_assert_int_ge(atom__dg_add_edge(&g, n, h[0]), 0);
    ck_assert_int_eq(atom__dg_verify(&g), 0);
    atom__dg_destroy(&g);
    ck_assert_uint_eq(m.bytes, 0);
    if (!failed) break;
  }
  ck_assert(saw_failure);
}
END_TEST

/* ---- session level: small helpers -------------------------------------------------------- */

static atom_session *velodrome_session(void) {
  static const char *const specs[] = {"velodrome", NULL};
  return tu_session(specs);
}

static atom_checker_stats vstats(const atom_session *s) {
  atom_checker_stats st;
  memset(&st, 0, sizeof st);
  st.version = ATOM_CHECKER_STATS_VERSION;
  CHECK(atom_checker_stats_get(s, 0, &st) == 0);
  return st;
}

/* Transactions of report r as sorted "begin_index" list. */
static size_t report_begins(const atom_report *r, uint64_t *out, size_t cap) {
  size_t n = atom_report_txn_count(r);
  ck_assert_uint_le(n, cap);
  for (size_t i = 0; i < n; i++) ck_assert_int_eq(atom_report_txn(r, i, NULL, &out[i], NULL), 0);
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
      uint64_t t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return n;
}

/* ---- the corpus, read by a small STD parser of our own ------------------------------------ */

typedef struct names {
  char s[64][32];
  size_t n;
} names;

static uint64_t intern(names *t, const char *s, size_t len) {
  ck_assert_uint_lt(len, 32);
  for (size_t i = 0; i < t->n; i++)
    if (strlen(t->s[i]) == len && memcmp(t->s[i], s, len) == 0) return i + 1;
  ck_assert_uint_lt(t->n, 64);
  memcpy(t->s[t->n], s, len);
  t->s[t->n][len] = '\0';
  return ++t->n;
}

typedef struct corpus_trace {
  names threads, vars, locks;
  atom_event ev[256];
  size_t n;
} corpus_trace;

static void parse_std(const char *text, corpus_trace *ct) {
  memset(ct, 0, sizeof *ct);
  static const struct {
    const char *op;
    uint32_t kind;
    int space; /* 0 none, else ATOM_SPACE_* */
  } ops[] = {{"r(", ATOM_READ, ATOM_SPACE_VAR},       {"w(", ATOM_WRITE, ATOM_SPACE_VAR},
             {"acq(", ATOM_ACQUIRE, ATOM_SPACE_LOCK}, {"rel(", ATOM_RELEASE, ATOM_SPACE_LOCK},
             {"fork(", ATOM_FORK, ATOM_SPACE_THREAD}, {"join(", ATOM_JOIN, ATOM_SPACE_THREAD},
             {"begin", ATOM_BEGIN, 0},                {"end", ATOM_END, 0},
             {"fence", ATOM_FENCE, 0},                {"commit(", ATOM_COMMIT, ATOM_SPACE_VAR}};
  for (const char *line = text; *line;) {
    const char *eol = strchr(line, '\n');
    if (!eol) eol = line + strlen(line);
    if (eol > line && line[0] != '#' && line[0] != '\r') {
      const char *p1 = memchr(line, '|', (size_t)(eol - line));
      ck_assert_ptr_nonnull(p1);
      const char *p2 = memchr(p1 + 1, '|', (size_t)(eol - p1 - 1));
      ck_assert_ptr_nonnull(p2);
      atom_event *e = &ct->ev[ct->n++];
      ck_assert_uint_lt(ct->n, 256);
      memset(e, 0, sizeof *e);
      e->thread = intern(&ct->threads, line, (size_t)(p1 - line));
      e->loc = strtoull(p2 + 1, NULL, 10);
      const char *op = p1 + 1;
      size_t k;
      for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strncmp(op, ops[k].op, strlen(ops[k].op)) == 0) break;
      ck_assert_msg(k < sizeof ops / sizeof ops[0], "bad op in %.*s", (int)(eol - line), line);
      e->kind = ops[k].kind;
      if (ops[k].space) {
        const char *a = op + strlen(ops[k].op), *b = strchr(a, ')');
        ck_assert(b && b < p2);
        names *t = ops[k].space == ATOM_SPACE_VAR    ? &ct->vars
                   : ops[k].space == ATOM_SPACE_LOCK ? &ct->locks
                                                     : &ct->threads;
        e->target = intern(t, a, (size_t)(b - a));
      }
    }
    line = *eol ? eol + 1 : eol;
  }
}

/* The expected cycle as sorted begin indices; -1 if the key says null, -2 if absent. */
static long expected_cycle(const char *json, const corpus_trace *ct, uint64_t *out, size_t cap) {
  const char *p = strstr(json, "\"conflict_cycle\":");
  if (!p) return -2;
  p += strlen("\"conflict_cycle\":");
  while (*p == ' ' || *p == '\n') p++;
  if (strncmp(p, "null", 4) == 0) return -1;
  ck_assert_int_eq(*p, '[');
  size_t n = 0;
  for (p++; *p && *p != ']'; p++) {
    if (*p != '"') continue;
    const char *at = strchr(p + 1, '@'), *q = strchr(p + 1, '"');
    ck_assert(at && q && at < q && n < cap);
    /* the thread name must exist */
    int found = 0;
    for (size_t i = 0; i < ct->threads.n; i++)
      if (strlen(ct->threads.s[i]) == (size_t)(at - p - 1) &&
          memcmp(ct->threads.s[i], p + 1, (size_t)(at - p - 1)) == 0)
        found = 1;
    ck_assert(found);
    out[n++] = strtoull(at + 1, NULL, 10);
    p = q;
  }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
      uint64_t t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return (long)n;
}

START_TEST(corpus_cycles) {
  DIR *d = opendir(ATOM_CORPUS_DIR);
  ck_assert_ptr_nonnull(d);
  struct dirent *de;
  int checked = 0, cyclic = 0;
  static corpus_trace ct;
  while ((de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len < 5 || strcmp(de->d_name + len - 4, ".std") != 0) continue;
    char rel[512];
    snprintf(rel, sizeof rel, "tests/corpus/%s", de->d_name);
    char *text = tu_read_source_file(rel, NULL);
    ck_assert_ptr_nonnull(text);
    snprintf(rel, sizeof rel, "tests/corpus/%.*s.expected.json", (int)(len - 4), de->d_name);
    char *json = tu_read_source_file(rel, NULL);
    ck_assert_ptr_nonnull(json);
    parse_std(text, &ct);
    uint64_t want[64], got[64];
    long nwant = expected_cycle(json, &ct, want, 64);
    if (nwant == -2) goto next;
    atom_session *s = velodrome_session();
    for (size_t i = 0; i < ct.n; i++) ck_assert_int_eq(atom_push(s, &ct.ev[i]), 0);
    ck_assert_int_eq(atom_finish(s), 0);
    if (nwant < 0) {
      ck_assert_msg(atom_report_count(s) == 0, "%s: unexpected report: %s", de->d_name,
                    atom_report_count(s) ? atom_report_message(atom_report_get(s, 0)) : "");
    } else {
      cyclic++;
      ck_assert_msg(atom_report_count(s) >= 1, "%s: no cycle found", de->d_name);
      const atom_report *r = atom_report_get(s, 0);
      ck_assert_str_eq(atom_report_kind(r), "conflict-cycle");
      size_t ngot = report_begins(r, got, 64);
      int same = ngot == (size_t)nwant;
      for (size_t i = 0; same && i < ngot; i++) same = got[i] == want[i];
      ck_assert_msg(same, "%s: reported %s", de->d_name, atom_report_message(r));
      for (size_t k = 0; k < atom_report_count(s); k++) {
        const char *why = cc_check_edges(atom_report_get(s, k), CC_ALL);
        ck_assert_msg(!why, "%s: report %zu: %s", de->d_name, k, why);
      }
    }
    atom_checker_stats st = vstats(s);
    ck_assert_uint_eq(st.nodes, 0); /* everything complete and acyclic: all collected */
    ck_assert_uint_eq(st.edges, 0);
    atom_session_free(s);
    checked++;
  next:
    free(text);
    free(json);
  }
  closedir(d);
  ck_assert_int_ge(checked, 10);
  ck_assert_int_ge(cyclic, 5);
}
END_TEST

/* An edge that closed a cycle was not inserted, so offering it again searches and reports
 * again: the in-line path must not take its source for a known predecessor. Events 5, 6 and 7
 * each offer T2 -> T1 (T2 wrote y); event 9 reads T1's own write. */
START_TEST(closing_edge_offered_again) {
  atom_session *s = velodrome_session();
  enum { T1 = 1, T2 = 2, X = 10, Y = 11 };
  ck_assert_int_eq(atom_begin(s, T1, 0), 0);
  ck_assert_int_eq(atom_begin(s, T2, 1), 0);
  ck_assert_int_eq(atom_write(s, T1, X, 2), 0);
  ck_assert_int_eq(atom_read(s, T2, X, 3), 0);
  ck_assert_int_eq(atom_write(s, T2, Y, 4), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_int_eq(atom_read(s, T1, Y, 5), 0);
  ck_assert_int_eq(atom_read(s, T1, Y, 6), 0);
  ck_assert_int_eq(atom_write(s, T1, Y, 7), 0);
  ck_assert_int_eq(atom_end(s, T2, 8), 0);
  ck_assert_int_eq(atom_read(s, T1, Y, 9), 0);
  ck_assert_int_eq(atom_end(s, T1, 10), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_uint_eq(atom_report_event_index(r), 5);
  ck_assert_uint_eq(atom_report_occurrences(r), 3);
  atom_session_free(s);
}
END_TEST

/* A variable read by three threads keeps its first reader in its own slot and the other two
 * out of line; the write that follows gets an edge from each, labelled with that reader's own
 * read. T3's read is the third (out of line) and its edge into T4 is on the cycle that T3's
 * read of y closes; T2 reads x twice (its first read labels) and T1's reader entry goes with
 * T1's next transaction, which reads x again before the write (program order covers the old
 * one). */
START_TEST(readers_out_of_line_label_edges) {
  atom_session *s = velodrome_session();
  enum { T1 = 1, T2 = 2, T3 = 3, T4 = 4, X = 10, Y = 11 };
  ck_assert_int_eq(atom_begin(s, T1, 100), 0);   /* 0 */
  ck_assert_int_eq(atom_read(s, T1, X, 101), 0); /* 1: first reader, in x's slot */
  ck_assert_int_eq(atom_begin(s, T2, 102), 0);   /* 2 */
  ck_assert_int_eq(atom_read(s, T2, X, 103), 0); /* 3: second reader, out of line */
  ck_assert_int_eq(atom_read(s, T2, X, 104), 0); /* 4: T2 again: its first read stays */
  ck_assert_int_eq(atom_begin(s, T3, 105), 0);   /* 5 */
  ck_assert_int_eq(atom_read(s, T3, X, 106), 0); /* 6: third reader */
  ck_assert_int_eq(atom_end(s, T1, 107), 0);     /* 7: T1 collected (no in-edge) */
  ck_assert_int_eq(atom_begin(s, T1, 108), 0);   /* 8 */
  ck_assert_int_eq(atom_read(s, T1, X, 109), 0); /* 9: replaces T1's collected entry */
  ck_assert_int_eq(atom_begin(s, T4, 110), 0);   /* 10 */
  ck_assert_int_eq(atom_write(s, T4, X, 111), 0); /* 11: edges T2, T3, T1 -> T4 */
  ck_assert_int_eq(atom_write(s, T4, Y, 112), 0); /* 12 */
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_uint_eq(vstats(s).edges, 3);
  ck_assert_int_eq(atom_read(s, T3, Y, 113), 0); /* 13: T4 -> T3 closes T3 -> T4 -> T3 */
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_int_eq(atom_read(s, T2, Y, 114), 0); /* 14: T4 -> T2 closes T2 -> T4 -> T2 */
  ck_assert_uint_eq(atom_report_count(s), 2);
  for (uint64_t t = T1; t <= T4; t++) ck_assert_int_eq(atom_end(s, t, 115 + t), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  /* each report: reader's read of x -> T4's write of x, T4's write of y -> the read of y */
  static const uint64_t idx[2][4] = {{6, 11, 12, 13}, {3, 11, 12, 14}};
  static const uint64_t loc[2][4] = {{106, 111, 112, 113}, {103, 111, 112, 114}};
  static const uint64_t kind[4] = {ATOM_READ, ATOM_WRITE, ATOM_WRITE, ATOM_READ};
  for (size_t k = 0; k < 2; k++) {
    const atom_report *r = atom_report_get(s, k);
    ck_assert_uint_eq(atom_report_event_index(r), idx[k][3]);
    ck_assert_uint_eq(atom_report_event_count(r), 4);
    for (size_t i = 0; i < 4; i++) {
      atom_event ev;
      uint64_t ix;
      ck_assert_int_eq(atom_report_event(r, i, &ev, &ix), 0);
      ck_assert_uint_eq(ix, idx[k][i]);
      ck_assert_uint_eq(ev.loc, loc[k][i]);
      ck_assert_uint_eq(ev.kind, kind[i]);
      ck_assert_uint_eq(ev.target, i < 2 ? X : Y);
    }
    ck_assert_ptr_null(cc_check_edges(r, CC_ALL));
  }
  atom_session_free(s);
}
END_TEST

/* 003 §2 conflict (e) rel -> acq, with unary transactions in the cycle, built by hand. */
START_TEST(report_contents) {
  atom_session *s = velodrome_session();
  enum { T1 = 0x10, T2 = 0x20, X = 0x99, L = 0x77 };
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_THREAD, T1, "main"), 0);
  ck_assert_int_eq(atom_set_name(s, ATOM_SPACE_VAR, X, "x"), 0);
  ck_assert_int_eq(atom_begin(s, T1, 100), 0);      /* 0 */
  ck_assert_int_eq(atom_acquire(s, T1, L, 101), 0); /* 1 */
  ck_assert_int_eq(atom_release(s, T1, L, 102), 0); /* 2 */
  ck_assert_int_eq(atom_acquire(s, T2, L, 103), 0); /* 3: unary */
  ck_assert_int_eq(atom_write(s, T2, X, 104), 0);   /* 4: unary */
  ck_assert_int_eq(atom_release(s, T2, L, 105), 0); /* 5: unary */
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_int_eq(atom_read(s, T1, X, 106), 0);    /* 6: closes T1 -> acq -> w -> T1 */
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_int_eq(atom_end(s, T1, 107), 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_str_eq(atom_report_checker(r), "velodrome");
  ck_assert_str_eq(atom_report_kind(r), "conflict-cycle");
  ck_assert_uint_eq(atom_report_event_index(r), 6);
  ck_assert_uint_eq(atom_report_occurrences(r), 1);
  ck_assert_uint_eq(atom_report_txn_count(r), 3);
  /* in cycle order, oldest first: T1@0 -> acq@3 -> w@4 */
  static const uint64_t th[] = {T1, T2, T2}, bi[] = {0, 3, 4}, bl[] = {100, 103, 104};
  for (size_t i = 0; i < 3; i++) {
    uint64_t t, b, l;
    ck_assert_int_eq(atom_report_txn(r, i, &t, &b, &l), 0);
    ck_assert_uint_eq(t, th[i]);
    ck_assert_uint_eq(b, bi[i]);
    ck_assert_uint_eq(l, bl[i]);
  }
  /* every edge with its two events, in cycle order: rel@2 -> acq@3 (lock), acq@3 -> w@4
   * (program order between two unary transactions: not one run), w@4 -> r@6 (closing) */
  static const uint64_t ei[] = {2, 3, 4, 6}, ek[] = {ATOM_RELEASE, ATOM_ACQUIRE, ATOM_WRITE,
                                                    ATOM_READ};
  static const uint64_t et[] = {T1, T2, T2, T1}, eg[] = {L, L, X, X};
  ck_assert_uint_eq(atom_report_event_count(r), 4);
  for (size_t i = 0; i < 4; i++) {
    atom_event ev;
    uint64_t idx;
    ck_assert_int_eq(atom_report_event(r, i, &ev, &idx), 0);
    ck_assert_uint_eq(idx, ei[i]);
    ck_assert_uint_eq(ev.kind, ek[i]);
    ck_assert_uint_eq(ev.thread, et[i]);
    ck_assert_uint_eq(ev.target, eg[i]);
  }
  static const size_t ef[] = {0, 1, 2}, eto[] = {1, 2, 3};
  ck_assert_uint_eq(atom_report_edge_count(r), 3);
  for (size_t i = 0; i < 3; i++) {
    size_t f, t;
    uint32_t fl;
    ck_assert_int_eq(atom_report_edge(r, i, &f, &t, &fl), 0);
    ck_assert_uint_eq(f, ef[i]);
    ck_assert_uint_eq(t, eto[i]);
    ck_assert_uint_eq(fl, i == 2 ? ATOM_EDGE_CLOSING : 0);
  }
  ck_assert_ptr_null(cc_check_edges(r, CC_ALL));
  ck_assert_uint_eq(atom_report_var_count(r), 1);
  ck_assert_uint_eq(atom_report_var(r, 0), X);
  ck_assert_str_eq(atom_report_message(r),
                   "main's transaction at loc 100 (event 0) released 0x77 at loc 102, then T32 "
                   "acquired 0x77 at loc 103 outside any transaction, then T32 wrote x at loc "
                   "104 outside any transaction, then main read x at loc 106: no serial order of these 3 transactions gives this");
  atom_session_free(s);
}
END_TEST

/* The same violation in a loop is one report counted N times; a second distinct one is a
 * second report; the checker keeps working and its graph stays small. */
START_TEST(keeps_going_after_a_cycle) {
  atom_session *s = velodrome_session();
  for (int i = 0; i < 50; i++) {
    /* 003 Fig. 2 (rho2) shape, locations fixed per iteration */
    ck_assert_int_eq(atom_begin(s, 1, 1), 0);
    ck_assert_int_eq(atom_begin(s, 2, 2), 0);
    ck_assert_int_eq(atom_write(s, 1, 10, 3), 0);
    ck_assert_int_eq(atom_read(s, 2, 10, 4), 0);
    ck_assert_int_eq(atom_write(s, 2, 11, 5), 0);
    ck_assert_int_eq(atom_read(s, 1, 11, 6), 0);
    ck_assert_int_eq(atom_end(s, 1, 7), 0);
    ck_assert_int_eq(atom_end(s, 2, 8), 0);
    if (i % 10 == 9) { /* another violation, at other locations, on another variable */
      ck_assert_int_eq(atom_begin(s, 3, 20), 0);
      ck_assert_int_eq(atom_read(s, 3, 12, 21), 0);
      ck_assert_int_eq(atom_write(s, 1, 12, 22), 0);
      ck_assert_int_eq(atom_write(s, 3, 12, 23), 0);
      ck_assert_int_eq(atom_end(s, 3, 24), 0);
    }
  }
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 2);
  uint64_t occ = atom_report_occurrences(atom_report_get(s, 0)) +
                 atom_report_occurrences(atom_report_get(s, 1));
  ck_assert_uint_eq(occ, 55);
  atom_checker_stats st = vstats(s);
  ck_assert_uint_eq(st.nodes, 0);
  ck_assert_uint_eq(st.reports, 2);
  atom_session_free(s);
}
END_TEST

/* Fork and join edges, and a thread's transaction still open at finish. */
START_TEST(fork_join_and_open_at_finish) {
  atom_session *s = velodrome_session();
  /* T1 forks t2 inside a transaction and reads what t2 wrote: fork edge + write->read. */
  ck_assert_int_eq(atom_begin(s, 1, 0), 0);
  ck_assert_int_eq(atom_fork(s, 1, 2, 1), 0);
  ck_assert_int_eq(atom_write(s, 2, 5, 2), 0);
  ck_assert_int_eq(atom_end(s, 1, 3), 0); /* no read: serializable so far */
  ck_assert_int_eq(atom_join(s, 1, 2, 4), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  /* Open transaction closed by finish: t3 reads y, t4 writes y then reads z, t3 writes z
   * and the trace stops. The cycle is visible online at the write of z. */
  ck_assert_int_eq(atom_begin(s, 3, 10), 0);
  ck_assert_int_eq(atom_read(s, 3, 6, 11), 0);
  ck_assert_int_eq(atom_begin(s, 4, 12), 0);
  ck_assert_int_eq(atom_write(s, 4, 6, 13), 0);
  ck_assert_int_eq(atom_read(s, 4, 7, 14), 0);
  ck_assert_int_eq(atom_write(s, 3, 7, 15), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_uint_eq(atom_report_event_index(atom_report_get(s, 0)), 10);
  ck_assert_uint_gt(vstats(s).nodes, 0);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  ck_assert_uint_eq(vstats(s).nodes, 0);
  atom_session_free(s);
}
END_TEST

/* A cycle through 100 open transactions of 100 threads: the report keeps the first
 * ATOM_REPORT_MAX_TXNS of them in cycle order and counts the rest; its size is bounded. */
START_TEST(long_cycle) {
  enum { N = 100 };
  atom_session *s = velodrome_session();
  for (uint64_t t = 1; t <= N; t++) ck_assert_int_eq(atom_begin(s, t, t), 0);
  for (uint64_t t = 1; t <= N; t++) ck_assert_int_eq(atom_write(s, t, t, 1000 + t), 0);
  for (uint64_t t = 2; t <= N; t++) ck_assert_int_eq(atom_read(s, t, t - 1, 2000 + t), 0);
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_int_eq(atom_read(s, 1, N, 3000), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_uint_eq(atom_report_txn_count(r), ATOM_REPORT_MAX_TXNS);
  ck_assert_uint_eq(atom_report_txns_omitted(r), N - ATOM_REPORT_MAX_TXNS);
  for (size_t i = 0; i < ATOM_REPORT_MAX_TXNS; i++) {
    uint64_t t, b;
    ck_assert_int_eq(atom_report_txn(r, i, &t, &b, NULL), 0);
    ck_assert_uint_eq(t, i + 1); /* cycle order, oldest first */
    ck_assert_uint_eq(b, i);
  }
  ck_assert_uint_lt(strlen(atom_report_message(r)), 65536);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(vstats(s).nodes, 0);
  atom_session_free(s);
}
END_TEST

/* A cycle through 10 000 transactions of one thread and one of another: the report is two
 * runs and two edges with four events (program order inside the run needs none). */
START_TEST(long_run_cycle) {
  enum { N = 10000 };
  atom_session *s = velodrome_session();
  ck_assert_int_eq(atom_begin(s, 2, 1), 0);
  ck_assert_int_eq(atom_write(s, 2, 10, 2), 0);
  for (int i = 0; i < N; i++) {
    ck_assert_int_eq(atom_begin(s, 1, 3), 0);
    if (i == 0) ck_assert_int_eq(atom_read(s, 1, 10, 4), 0);
    if (i == N - 1) ck_assert_int_eq(atom_write(s, 1, 11, 5), 0);
    ck_assert_int_eq(atom_end(s, 1, 6), 0);
  }
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_int_eq(atom_read(s, 2, 11, 7), 0);
  ck_assert_uint_eq(atom_report_count(s), 1);
  const atom_report *r = atom_report_get(s, 0);
  ck_assert_uint_eq(atom_report_txn_count(r), 2);
  uint64_t count = 0;
  ck_assert_int_eq(atom_report_txn_run(r, 1, NULL, &count, NULL), 0);
  ck_assert_uint_eq(count, N);
  ck_assert_uint_eq(atom_report_edge_count(r), 2);
  ck_assert_uint_eq(atom_report_event_count(r), 4);
  ck_assert_ptr_null(cc_check_edges(r, CC_ALL));
  ck_assert_int_eq(atom_finish(s), 0);
  atom_session_free(s);
}
END_TEST

/* ---- memory stays flat on long serializable traces ----------------------------------------- */

/* Four threads interleave short two-phase-locked transactions (var v under lock v % 8), with
 * unary lock-protected accesses between them; `total` events. Asserts that the graph stays
 * small throughout and the checker's memory stops growing after warm-up. */
static void run_2pl(size_t total, int with_long_reader) {
  enum { NT = 4, NV = 64, NL = 8 };
  atom_session *s = velodrome_session();
  rt_rng r;
  rt_rng_seed(&r, 99);
  int holder[NL];
  for (int i = 0; i < NL; i++) holder[i] = -1;
  struct {
    int step, lock, unary;
    uint64_t v1, v2;
  } th[NT];
  memset(th, 0, sizeof th);
  size_t pushed = 0;
  uint64_t peak_nodes = 0, bytes_warm = 0;
  if (with_long_reader) { /* one transaction that stays open all along, on its own data */
    ck_assert_int_eq(atom_begin(s, 100, 1), 0);
    ck_assert_int_eq(atom_write(s, 100, 5000, 2), 0);
    pushed += 2;
  }
  while (pushed < total) {
    int t = (int)rt_rng_below(&r, NT);
    uint64_t T = (uint64_t)t + 1;
    int rc = 0;
    switch (th[t].step) {
    case 0: /* choose the next unit of work */
      th[t].lock = (int)rt_rng_below(&r, NL);
      if (holder[th[t].lock] >= 0) continue;
      th[t].v1 = (uint64_t)(th[t].lock + NL * (int)rt_rng_below(&r, NV / NL));
      th[t].v2 = (uint64_t)(th[t].lock + NL * (int)rt_rng_below(&r, NV / NL));
      th[t].unary = rt_rng_chance(&r, 0.2);
      if (!th[t].unary) rc = atom_begin(s, T, 10);
      holder[th[t].lock] = t;
      rc = rc ? rc : atom_acquire(s, T, 1000 + (uint64_t)th[t].lock, 11);
      pushed += th[t].unary ? 1 : 2;
      break;
    case 1:
      rc = atom_read(s, T, th[t].v1, 12);
      pushed++;
      break;
    case 2:
      rc = atom_write(s, T, th[t].v2, 13);
      pushed++;
      break;
    case 3:
      rc = atom_release(s, T, 1000 + (uint64_t)th[t].lock, 14);
      holder[th[t].lock] = -1;
      if (!th[t].unary) rc = rc ? rc : atom_end(s, T, 15);
      pushed += th[t].unary ? 1 : 2;
      break;
    }
    CHECK(rc == 0);
    th[t].step = (th[t].step + 1) % 4;
    if (pushed % 512 < 2) {
      atom_checker_stats st = vstats(s);
      if (st.nodes > peak_nodes) peak_nodes = st.nodes;
      if (!bytes_warm && pushed > total / 10) bytes_warm = st.peak_bytes;
    }
  }
  atom_checker_stats st = vstats(s);
  ck_assert_uint_eq(atom_report_count(s), 0);
  ck_assert_uint_le(peak_nodes, 2 * NT + 2);
  ck_assert_uint_gt(bytes_warm, 0);
  ck_assert_msg(st.peak_bytes <= bytes_warm + 4096, "memory grew: %llu -> %llu bytes",
                (unsigned long long)bytes_warm, (unsigned long long)st.peak_bytes);
  ck_assert_int_eq(atom_finish(s), 0);
  ck_assert_uint_eq(vstats(s).nodes, 0);
  atom_session_free(s);
}

START_TEST(memory_flat_2pl) { run_2pl(100000, 0); }
END_TEST

START_TEST(memory_flat_with_open_transaction) { run_2pl(100000, 1); }
END_TEST

/* Unary events alone never keep nodes. */
START_TEST(unary_events_cost_no_nodes) {
  atom_session *s = velodrome_session();
  for (int i = 0; i < 20000; i++) {
    uint64_t t = 1 + (uint64_t)(i % 3), x = (uint64_t)(i % 5);
    CHECK((i % 2 ? atom_write(s, t, x, 1) : atom_read(s, t, x, 2)) == 0);
    if (i % 64 == 0) CHECK(vstats(s).nodes == 0);
  }
  ck_assert_uint_eq(atom_report_count(s), 0);
  atom_session_free(s);
}
END_TEST

/* ---- against the brute-force reference ------------------------------------------------------ */

/* Run velodrome on the trace of (p, seed) and compare with the reference: the verdict, the
 * first violation, and every reported cycle and edge. Counts violations and edges checked. */
static void against_reference(const rt_params *pp, uint64_t seed, size_t *violations_out,
                              size_t *edges_out) {
  size_t violations = 0, edges_checked = 0;
  {
    rt_params p = *pp;
    atom_event *ev = NULL;
    size_t n = 0;
    CHECK(rt_generate(&p, seed, &ev, &n) == 0);
    ref_trace *rt = NULL;
    int rrc = ref_trace_build(ev, n, &rt);
    ck_assert_msg(rrc == 0, "seed %llu: reference: %s", (unsigned long long)seed, ref_error());
    atom_session *s = velodrome_session();
    for (size_t i = 0; i < n; i++) CHECK(atom_push(s, &ev[i]) == 0);
    CHECK(atom_finish(s) == 0);
    int serializable = ref_trace_serializable(rt);
    size_t nrep = atom_report_count(s);
    if (serializable != (nrep == 0)) {
      fprintf(stderr, "velodrome vs reference, seed %llu (%s):\n", (unsigned long long)seed,
              serializable ? "serializable" : "not serializable");
      rt_write_std(stderr, ev, n);
    }
    CHECK(serializable == (nrep == 0));
    if (!serializable) {
      violations++;
      /* the graph is exact up to its first cycle, so the first report is exactly where the
       * prefix first has a cycle */
      CHECK((uint64_t)tu_first_violation(s, 0) == ref_trace_first_cycle(rt));
    }
    /* every reported cycle is a real <=Txn cycle of distinct transactions */
    for (size_t k = 0; k < nrep; k++) {
      const atom_report *r = atom_report_get(s, k);
      size_t m = atom_report_txn_count(r);
      CHECK(m >= 2);
      long ids[64];
      CHECK(m <= 64);
      for (size_t i = 0; i < m; i++) {
        uint64_t b;
        CHECK(atom_report_txn(r, i, NULL, &b, NULL) == 0);
        ids[i] = ref_trace_txn_at(rt, (size_t)b);
        CHECK(ids[i] >= 0);
        for (size_t j = 0; j < i; j++) CHECK(ids[i] != ids[j]);
      }
      for (size_t i = 0; i < m; i++)
        CHECK(ref_trace_txn_before(rt, (size_t)ids[i], (size_t)ids[(i + 1) % m]));
      /* every edge: two conflicting events of the trace, in order, chained through the
       * transactions, one closing edge; each joins two distinct transactions in <=Txn order */
      const char *why = cc_check_edges(r, CC_ALL);
      if (why) {
        fprintf(stderr, "velodrome edges, seed %llu: %s (%s)\n", (unsigned long long)seed, why,
                atom_report_message(r));
        rt_write_std(stderr, ev, n);
      }
      CHECK(why == NULL);
      for (size_t i = 0; i < atom_report_edge_count(r); i++) {
        size_t f, t;
        uint64_t fi, ti;
        atom_event fe, te;
        CHECK(atom_report_edge(r, i, &f, &t, NULL) == 0);
        CHECK(atom_report_event(r, f, &fe, &fi) == 0 && atom_report_event(r, t, &te, &ti) == 0);
        CHECK(fi < n && ti < n);
        CHECK(fe.kind == ev[fi].kind && fe.thread == ev[fi].thread && fe.loc == ev[fi].loc);
        CHECK(te.kind == ev[ti].kind && te.thread == ev[ti].thread && te.loc == ev[ti].loc);
        long a = ref_trace_event_txn(rt, (size_t)fi), b = ref_trace_event_txn(rt, (size_t)ti);
        CHECK(a >= 0 && b >= 0 && a != b);
        CHECK(ref_trace_txn_before(rt, (size_t)a, (size_t)b));
      }
      edges_checked += atom_report_edge_count(r);
    }
    CHECK(vstats(s).nodes == 0);
    atom_session_free(s);
    ref_trace_free(rt);
    free(ev);
  }
  *violations_out += violations;
  *edges_out += edges_checked;
}

START_TEST(random_against_reference) {
  size_t violations = 0, runs = 0, edges_checked = 0;
  for (uint64_t seed = 1; seed <= 3000; seed++) {
    rt_params p;
    rt_params_random(&p, seed, 28);
    against_reference(&p, seed, &violations, &edges_checked);
    runs++;
  }
  CHECK(runs == 3000);
  CHECK(violations > 100); /* the generator does produce violations */
  CHECK(violations < 2900);
  CHECK(edges_checked >= 2 * violations);
}
END_TEST

/* Many variables and many readers: 3-8 threads, 8-64 variables, mostly reads, so that a
 * variable often has several readers at once (its readers out of line) and a thread meets a
 * variable it read before; against the reference as above. */
START_TEST(many_readers_against_reference) {
  size_t violations = 0, edges_checked = 0;
  for (uint64_t seed = 1; seed <= 600; seed++) {
    rt_params p;
    rt_params_random(&p, seed ^ 0x77, 60);
    rt_rng r;
    rt_rng_seed(&r, seed);
    p.threads = 3 + (unsigned)rt_rng_below(&r, 6);
    p.vars = 8 + (unsigned)rt_rng_below(&r, 57);
    p.events = 40 + (size_t)rt_rng_below(&r, 40);
    p.p_write = 0.1 + 0.2 * (double)rt_rng_below(&r, 3) / 2.0;
    p.p_fork = 0.4;
    p.p_root = 0.6;
    against_reference(&p, seed, &violations, &edges_checked);
  }
  CHECK(violations > 30);
  CHECK(violations < 590);
  CHECK(edges_checked >= 2 * violations);
}
END_TEST

/* 10^5 variables touched once each (a transaction of thread 1 writes ten, one of thread 2 then
 * reads them): the checker keeps a 64-byte slot per variable id, in an array grown by
 * doubling to 131 072 slots, so its peak stays under 9 MB (90 bytes a variable), and the
 * graph is empty at the end. */
START_TEST(many_variables_memory) {
  enum { NV = 100000 };
  atom_session *s = velodrome_session();
  for (uint64_t x = 0; x < NV; x += 10) {
    CHECK(atom_begin(s, 1, 1) == 0);
    for (uint64_t k = x; k < x + 10; k++) CHECK(atom_write(s, 1, k, 2) == 0);
    CHECK(atom_end(s, 1, 3) == 0);
    CHECK(atom_begin(s, 2, 4) == 0);
    for (uint64_t k = x; k < x + 10; k++) CHECK(atom_read(s, 2, k, 5) == 0);
    CHECK(atom_end(s, 2, 6) == 0);
  }
  atom_checker_stats st = vstats(s);
  ck_assert_msg(st.peak_bytes < 9000000u, "peak %llu bytes for %d variables",
                (unsigned long long)st.peak_bytes, (int)NV);
  ck_assert_uint_eq(atom_report_count(s), 0);
  CHECK(atom_finish(s) == 0);
  ck_assert_uint_eq(vstats(s).nodes, 0);
  atom_session_free(s);
}
END_TEST

/* Allocation failures inside the checker surface as ATOM_ENOMEM, the session stays usable. */

START_TEST(session_out_of_memory) {
  int saw = 0;
  for (long budget = 0; budget < 400; budget += 3) {
    tu_failing f = {.budget = -1};
    atom_options o;
    tu_failing_options(&o, &f);
    atom_session *s = NULL;
    CHECK(atom_session_new(&s, &o) == 0);
    CHECK(atom_session_attach(s, "graph") == 0);
    f.budget = budget;
    int nomem = 0;
    /* three threads in lock step: begin, read, write, end; reads and writes of neighbouring
     * variables close cycles */
    for (int i = 0; i < 240; i++) {
      uint64_t t = 1 + (uint64_t)(i % 3);
      int step = (i / 3) % 4;
      int rc = step == 0   ? atom_begin(s, t, 1)
               : step == 1 ? atom_read(s, t, t % 3, 2)
               : step == 2 ? atom_write(s, t, (t + 1) % 3, 3)
                           : atom_end(s, t, 4);
      if (rc == ATOM_ENOMEM) nomem++;
      CHECK(rc <= 0);
    }
    f.budget = -1;
    atom_finish(s);
    saw |= nomem > 0;
    atom_session_free(s);
  }
  CHECK(saw);
}
END_TEST

Suite *atom_test_suite_velodrome(void) {
  Suite *s = suite_create("velodrome");
  TCase *g = tcase_create("digraph");
  tcase_add_test(g, dg_edges_and_dedupe);
  tcase_add_test(g, dg_cycle_reported_in_order);
  tcase_add_test(g, dg_random_against_closure);
  tcase_add_test(g, dg_delete_and_stale_handles);
  tcase_add_test(g, dg_collection_cascade);
  tcase_add_test(g, dg_out_of_memory);
  suite_add_tcase(s, g);
  TCase *c = tcase_create("checker");
  tcase_set_timeout(c, 120);
  tcase_add_test(c, corpus_cycles);
  tcase_add_test(c, report_contents);
  tcase_add_test(c, keeps_going_after_a_cycle);
  tcase_add_test(c, fork_join_and_open_at_finish);
  tcase_add_test(c, long_cycle);
  tcase_add_test(c, long_run_cycle);
  tcase_add_test(c, memory_flat_2pl);
  tcase_add_test(c, memory_flat_with_open_transaction);
  tcase_add_test(c, unary_events_cost_no_nodes);
  tcase_add_test(c, closing_edge_offered_again);
  tcase_add_test(c, readers_out_of_line_label_edges);
  tcase_add_test(c, random_against_reference);
  tcase_add_test(c, many_readers_against_reference);
  tcase_add_test(c, many_variables_memory);
  tcase_add_test(c, session_out_of_memory);
  suite_add_tcase(s, c);
  return s;
}
