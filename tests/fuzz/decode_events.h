/* The event encoding the push and callback fuzz targets share (and their seeds are written in):
 * 3 bytes per event -- kind (0..11, so 0 and 11 are invalid), thread (1..4), target (1..6);
 * a high nibble of 0xf in the first byte sets flags 1 (valid only on a READ), the top bit of the
 * second byte makes the target a big key. Keys are folded into small ranges so that threads,
 * variables and locks meet often. */
#ifndef FUZZ_DECODE_EVENTS_H
#define FUZZ_DECODE_EVENTS_H

#include <atomicity.h>
#include <stddef.h>
#include <stdint.h>

/* Decode at most @p max events from @p data into @p ev. @return how many. */
static inline size_t fuzz_decode_events(const uint8_t *data, size_t size, atom_event *ev,
                                        size_t max) {
  size_t n = 0;
  for (size_t i = 0; i + 3 <= size && n < max; i += 3) {
    uint8_t a = data[i], b = data[i + 1], c = data[i + 2];
    atom_event e;
    e.kind = a % 12u;
    e.flags = (a & 0xf0) == 0xf0 ? 1u : 0u;
    e.thread = 1u + b % 4u;
    e.target = (b & 0x80) ? (uint64_t)c << 40 : 1u + c % 6u;
    e.loc = i;
    ev[n++] = e;
  }
  return n;
}

#endif
