/* Test-side helpers over library internals (tests/unit/inspect.c): not part of the library. */
#ifndef ATOM_TESTS_INSPECT_H
#define ATOM_TESTS_INSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "support/digraph.h"
#include "support/vclock.h"

/* Set (or clear, with NULL) the hook called for every node the graph deletes. */
void atom__dg_set_collect_hook(atom__dg *g, atom__dg_collect_fn fn, void *ctx);

/* @return non-zero if the edge u -> v is present. */
int atom__dg_has_edge(const atom__dg *g, atom__dg_node u, atom__dg_node v);

/* @return the in-/out-degree of a live node (0 for a stale handle). */
size_t atom__dg_in_degree(const atom__dg *g, atom__dg_node n);
size_t atom__dg_out_degree(const atom__dg *g, atom__dg_node n);

/* @return non-zero if a live node is marked complete. */
int atom__dg_is_complete(const atom__dg *g, atom__dg_node n);

/* Check the graph's internal invariants (degrees, lists, edge hash, topological order, no
 * collectable node left). @return 0 if they hold, else a negative code naming the check. */
int atom__dg_verify(const atom__dg *g);

/* c(i) := c(i) + 1. 0, ATOM_ENOMEM, or ATOM_ELIMIT if the component would overflow (then the
 * clock is unchanged). */
int atom__vc_inc(atom__mem *m, atom__vc *c, uint32_t i);

/* c := ⊥, keeping the storage. */
void atom__vc_clear(atom__vc *c);

/* a == b component-wise (lengths may differ: missing components are 0). */
int atom__vc_equal(const atom__vc *a, const atom__vc *b);

/* Write "<1,0,2>" into buf (always NUL-terminated when size > 0); returns the length it needs,
 * as snprintf. */
int atom__vc_format(const atom__vc *c, char *buf, size_t size);

#endif
