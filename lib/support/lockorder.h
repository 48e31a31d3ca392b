/* Lock-order graph and potential-deadlock search (goodlock, internal).
 *
 * 000 §5.1 / 004 §2 assume "no potential for deadlock", checked by the goodlock algorithm:
 * an edge r -> s records that a thread acquired s while holding r, with the other resources it
 * held (the gate set). A cycle of edges of pairwise distinct threads whose gate sets are
 * pairwise disjoint (no common lock keeps the acquisitions apart) is a potential deadlock.
 *
 * Resources are locks and, so that a join that waits for a thread which needs a held lock is
 * seen too, thread lives: thread t "holds" ATOM__LO_THREAD|t from its first event to its end,
 * and JOIN(u) "acquires" ATOM__LO_THREAD|u. A cycle is reported only if its acquisitions can
 * all be pending at once: no acquisition of one edge happens before (by fork/join, see
 * periods.h) the acquisition of the held resource of another edge.
 *
 * Edges are deduplicated by (from, to, thread, gate set). Every allocation goes through the
 * owner's atom__mem; on ATOM_ENOMEM the graph is unchanged. Shared by commit-node and block. */
#ifndef ATOM_SUPPORT_LOCKORDER_H
#define ATOM_SUPPORT_LOCKORDER_H

#include <stddef.h>
#include <stdint.h>

#include "support/idindex.h"
#include "support/mem.h"
#include "support/periods.h"

#define ATOM__LO_THREAD 0x80000000u

/** Where a resource was acquired. */
typedef struct atom__lo_site {
  uint64_t index;  /* event index */
  uint64_t loc;
  uint32_t thread;
  uint32_t period; /* atom__periods id, or ATOM__PERIOD_NONE if unknown */
} atom__lo_site;

typedef struct atom__lo_edge {
  uint32_t from, to; /* resources */
  uint32_t gate_off, gate_len;
  atom__lo_site held; /* acquisition of `from` */
  atom__lo_site acq;  /* acquisition of `to` (the thread is acq.thread) */
} atom__lo_edge;

typedef struct atom__lockorder {
  atom__mem *mem;
  atom__lo_edge *e;
  size_t n, cap;
  uint32_t *pool; /* gate sets, sorted */
  size_t pool_len, pool_cap;
  atom__idindex seen; /* hash of (from, to, thread, gate set) -> edge */
} atom__lockorder;

void atom__lo_init(atom__lockorder *lo, atom__mem *mem);
void atom__lo_destroy(atom__lockorder *lo);

/* Thread acq->thread acquires `to` while holding held[0..n) (resources, with the sites where
 * they were acquired in held_sites). One edge per held resource. @return 0 or ATOM_ENOMEM. */
int atom__lo_acquire(atom__lockorder *lo, uint32_t to, const atom__lo_site *acq,
                     const uint32_t *held, const atom__lo_site *held_sites, size_t n);

/* Called for each potential deadlock: the cycle's edges in order (edge i's `to` is edge
 * i+1's `from`). Return non-zero to stop the search (it is returned). */
typedef int (*atom__lo_cycle_fn)(const atom__lo_edge *const *cycle, size_t n, void *payload);

/* Search cycles of up to max_len (>= 2) edges, each reported once.
 * @return 0, what fn returned, or ATOM_ENOMEM. */
int atom__lo_find(atom__lockorder *lo, const atom__periods *ps, size_t max_len,
                  atom__lo_cycle_fn fn, void *payload);

#endif
