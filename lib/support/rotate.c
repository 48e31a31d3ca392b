#include "support/rotate.h"

#include <string.h>

/* Reverse elements [lo, hi) by swapping byte-wise through a small buffer. */
static void reverse(unsigned char *base, size_t size, size_t lo, size_t hi) {
  unsigned char tmp[64];
  while (hi > lo + 1) {
    hi--;
    unsigned char *a = base + lo * size, *b = base + hi * size;
    for (size_t off = 0; off < size; off += sizeof tmp) {
      size_t len = size - off < sizeof tmp ? size - off : sizeof tmp;
      memcpy(tmp, a + off, len);
      memcpy(a + off, b + off, len);
      memcpy(b + off, tmp, len);
    }
    lo++;
  }
}

void atom__rotate(void *base, size_t n, size_t size, size_t k) {
  if (n < 2) return;
  k %= n;
  if (!k) return;
  reverse(base, size, 0, k);
  reverse(base, size, k, n);
  reverse(base, size, 0, n);
}
