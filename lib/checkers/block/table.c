/* block: the table of non-atomic interleavings of two 2-blocks (000 §5.3), derived. */
#include <string.h>

#include "checkers/block/block.h"

/* Events 0, 1 are e1, e2 of b; 2, 3 are e1', e2' of b'. The view of a sequence: for each read
 * the event it reads from (-1: initial value), for each variable its final write (-1: none). */
static void view_of(const unsigned seq[4], const unsigned op[4], const unsigned var[4],
                    int rf[4], int fin[2]) {
  int last[2] = {-1, -1};
  for (unsigned i = 0; i < 4; i++) rf[i] = -2;
  for (unsigned k = 0; k < 4; k++) {
    unsigned e = seq[k];
    if (op[e] == ATOM__BLK_R) rf[e] = last[var[e]];
    else last[var[e]] = (int)e;
  }
  fin[0] = last[0];
  fin[1] = last[1];
}

static void order_seq(unsigned order, unsigned seq[4]) {
  unsigned a = 0, c = 2;
  for (unsigned k = 0; k < 4; k++) seq[k] = atom__blk_order_name(order)[k] == 'A' ? a++ : c++;
}

/* 000 §5.3: "All four events in the pair of blocks must be considered." An order is in the
 * table iff its reads-from and final writes differ from those of both serial orders (view
 * equivalence, 000 §3, restricted to the four events; every event of a 2-block is an
 * uninitialized read or a final write, so what happens around them in t and t' cannot change
 * the comparison). */
unsigned atom__blk_2blk_mask(unsigned shape) {
  unsigned op[4], var[4];
  for (unsigned i = 0; i < 4; i++) op[i] = shape >> i & 1u;
  unsigned crossed = shape >> 4 & 1u;
  var[0] = 0;
  var[1] = 1;
  var[2] = crossed ? 1 : 0;
  var[3] = crossed ? 0 : 1;
  int rf[2][4], fin[2][2];
  unsigned seq[4];
  order_seq(0, seq);
  view_of(seq, op, var, rf[0], fin[0]);
  order_seq(ATOM__BLK_ORDERS - 1, seq);
  view_of(seq, op, var, rf[1], fin[1]);
  unsigned mask = 0;
  for (unsigned o = 0; o < ATOM__BLK_ORDERS; o++) {
    int r[4], f[2];
    order_seq(o, seq);
    view_of(seq, op, var, r, f);
    int same_as_serial = 0;
    for (unsigned s = 0; s < 2; s++)
      if (memcmp(r, rf[s], sizeof r) == 0 && memcmp(f, fin[s], sizeof f) == 0) same_as_serial = 1;
    if (!same_as_serial) mask |= 1u << o;
  }
  return mask;
}
