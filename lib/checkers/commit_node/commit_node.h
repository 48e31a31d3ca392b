/* commit-node's state (internal to lib/checkers/commit_node/): the access trees and units
 * recorded while events stream in (commit_node.c), read at finish by the analysis that builds
 * inter-edges and decides every transaction (analysis.c). */
#ifndef ATOM_CHECKERS_COMMIT_NODE_H
#define ATOM_CHECKERS_COMMIT_NODE_H

#include <stdint.h>

#include "atomicity/checker.h"
#include "support/idindex.h"
#include "support/lockorder.h"
#include "support/mem.h"
#include "support/periods.h"
#include "support/report_build.h"
#include "support/u64map.h"

#define NONE UINT32_MAX

/* At most this many bits (32 MiB) for the (node, unit) pairs that have an inter-edge; beyond,
 * a set of keys holds the pairs seen (analysis.c, add_edge). */
#define ATTACH_BITS_MAX ((size_t)1 << 28)

enum { K_ROOT, K_LOCK, K_READ, K_WRITE, K_FORK, K_JOIN };
enum { U_TXN, U_LOCK, U_PLAIN };

typedef struct cn_node {
  uint64_t index;  /* event index (LOCK: its acquire; ROOT: the unit's first event) */
  uint64_t loc;
  uint64_t start;  /* LOCK: index where this piece of the block began */
  uint64_t prevw;  /* READ: 1 + index of the unit's previous write of the variable, 0: none */
  uint32_t parent; /* NONE for the root */
  uint32_t end;    /* one past the last node of the subtree (nodes are in pre-order) */
  uint32_t target; /* variable, lock or child thread */
  uint32_t period;
  uint32_t wrep;   /* READ: the leaf standing for that previous write, NONE */
  uint32_t unit;
  uint8_t kind;
  uint8_t final; /* WRITE: last write of its variable in the unit */
  uint8_t pad[2];
} cn_node;

typedef struct cn_unit {
  uint32_t thread;
  uint32_t kind;
  uint32_t first; /* global node id of the root (valid once committed) */
  uint32_t n;     /* nodes (0 while open) */
  uint64_t begin_index, begin_loc;
  uint32_t copies; /* identical committed trees, counted on the first one */
  uint32_t dropped; /* tree dropped as the third identical copy */
} cn_unit;

/* A link endpoint: node `local` of unit `unit` (local ids until the unit is committed). */
typedef struct cn_end {
  uint32_t unit, local;
} cn_end;

typedef struct cn_link {
  cn_end a, b;
} cn_link;

typedef struct cn_lockent {
  uint32_t lock;
  uint32_t node; /* local node of the block in the open unit, NONE if not materialized */
  uint64_t acq_index, acq_loc, start;
  uint32_t acq_period;
  uint32_t pad;
} cn_lockent;

/* Trimming counters of the open unit: per (parent, variable), and per variable (parent NONE)
 * the unit's last write. */
typedef struct cn_trim {
  uint64_t key;
  uint64_t lastw_index;
  uint32_t nr, nw;
  uint32_t extra; /* leaf that stands for the third and later writes */
  uint32_t lastw; /* leaf standing for the unit's last write so far */
  uint32_t period; /* accesses of different thread periods are not interchangeable */
} cn_trim;

typedef struct cn_thread {
  cn_node *b; /* tree of the open unit */
  size_t bn, bcap;
  uint32_t unit;      /* open unit, NONE */
  uint32_t last_unit; /* latest unit of the thread, NONE */
  uint32_t in_txn;
  uint32_t started;
  uint64_t seg_index, seg_loc; /* first event of the current segment (BEGIN, acquire, ...) */
  uint32_t seg_set;
  uint32_t start_period;
  uint64_t start_index, start_loc;
  cn_lockent *ls;
  size_t ls_n, ls_cap;
  cn_end *pend; /* endpoints the next unit's root must be linked to (fork, join) */
  size_t pend_n, pend_cap;
  cn_trim *trim; /* the open unit's trimming counters, in order of first use */
  size_t trim_n, trim_cap;
  atom__idindex trim_ix; /* trim[] by (key, period) */
} cn_thread;

typedef struct cn_edge {
  uint32_t a, b; /* global node ids, different units */
} cn_edge;

/* The latest release write of a variable by one thread: where acquire reads link to. */
typedef struct cn_release {
  uint32_t thread;
  uint32_t period; /* the write's period */
  cn_end end;      /* its leaf */
} cn_release;

typedef struct cn_relvar {
  cn_release *r; /* one entry per releasing thread */
  size_t n, cap;
} cn_relvar;

typedef struct cn_stamp {
  uint32_t stamp, leaf;
} cn_stamp;

typedef struct commit_node {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int view;
  int lock_blocks; /* a lock block outside transactions is a unit (004 §2); else plain events */
  int finished;
  size_t max_edges; /* documented limit on inter-edges (argument max_edges) */
  int lo_truncated;  /* the lock-order graph reached max_edges / 4 edges and stopped growing */
  uint64_t lo_truncated_at; /* the first acquire it did not record */
  atom__periods per;
  atom__lockorder lo;
  cn_thread *th;
  size_t th_cap;
  cn_unit *units;
  size_t nu, ucap;
  cn_node *nodes;
  size_t nn, ncap;
  cn_link *links;
  size_t nl, lcap;
  atom__u64map dedup; /* tree hash -> first unit with it */
  cn_edge *edges;
  size_t ne, ecap;
  /* The same pairs when the bits do not fit: an open-addressing set of the keys
   * node << 32 | other unit, each stored plus one (0: empty), 8 bytes a slot (analysis.c). */
  uint64_t *seen;
  size_t seen_cap, seen_n;
  uint64_t *attach_bits;    /* the same as bits (node * nu + unit), when they fit; else NULL */
  cn_relvar *rel; /* per variable */
  size_t rel_cap;
  uint64_t work, work_done, work_total; /* end-of-run progress (tick) */
  /* scratch of cycle_path(), nu entries each, allocated at the first violation */
  uint32_t *bfs_mark, *bfs_prev, *bfs_queue;
  uint32_t bfs_stamp;
  size_t bfs_n;
  /* scratch */
  cn_stamp *stamp; /* per variable: last write leaf of the unit being closed */
  size_t stamp_cap;
  uint32_t stamp_now;
  atom__report_build rb; /* the report being built, reused from one report to the next */
} commit_node;

/* The thread is inside a unit that counts as a transaction: a transaction is open or, with
 * lock_blocks=yes (004 §2), it holds a lock (a transaction and a lock block that nest or
 * overlap are one unit). Reads the checker `c` of the enclosing function. */
#define INSIDE(th) ((th)->in_txn || (c->lock_blocks && (th)->ls_n > 0))


/* At finish: inter-edges, the unit graph, and a report for every violating transaction and
 * every potential deadlock. @return 0 or the first error. */
int atom__cn_analyze(commit_node *c);

#endif
