/* block checker: the parts its tests look at directly (internal).
 *
 * 000 §5.3 leaves out the table of non-atomic 2-block pairs ("a few dozen specific cases ...
 * enumerated in [WS03]"). block.c derives it instead of copying it: for every shape of a pair
 * of 2-blocks it enumerates the six interleavings of the four events and keeps those that are
 * view-equivalent to neither serial order. These functions expose that derivation so that the
 * tests can check every entry against the brute-force reference. */
#ifndef ATOM_CHECKERS_BLOCK_H
#define ATOM_CHECKERS_BLOCK_H

#include <stdint.h>

/* Operation codes inside a shape. */
#define ATOM__BLK_R 0u
#define ATOM__BLK_W 1u

/* Shape of a pair of 2-blocks b = (e1, e2) of t and b' = (e1', e2') of t', var(e1) = x,
 * var(e2) = y (2B1: x != y). b' accesses the same two variables, in the same order
 * (crossed = 0: var(e1') = x, var(e2') = y) or the other way round (crossed = 1). */
#define ATOM__BLK_SHAPE(op1, op2, op1p, op2p, crossed) \
  ((unsigned)(op1) | (unsigned)(op2) << 1 | (unsigned)(op1p) << 2 | (unsigned)(op2p) << 3 | \
   (unsigned)(crossed) << 4)
#define ATOM__BLK_SHAPES 32u

/* The interleavings of b and b' that keep each block's order. Order k is described by
 * atom__blk_order_name(k): four letters, 'A' for an event of b and 'C' for one of b'
 * ("ACCA": e1, e1', e2', e2). Order 0 is the serial order t t', order 5 is t' t. */
#define ATOM__BLK_ORDERS 6u
const char *atom__blk_order_name(unsigned order);

/* Bit k set iff order k of a pair of 2-blocks of this shape is view-equivalent to neither
 * t t' nor t' t (derived, see block.c). */
unsigned atom__blk_2blk_mask(unsigned shape);

#endif
