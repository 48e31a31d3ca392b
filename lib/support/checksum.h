/* The block checksum of the binary trace format (doc/trace-format.md, "Binary format"). */
#ifndef ATOM_SUPPORT_CHECKSUM_H
#define ATOM_SUPPORT_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* A 32-bit checksum of n bytes (n a multiple of 8) read as little-endian 64-bit words, in four
 * interleaved multiply-rotate lanes folded at the end. Four lanes keep the multiplier busy: it
 * costs well under a cycle per byte, so checking every block does not slow the reader down the
 * way a byte-at-a-time FNV-1a or table CRC would. Not cryptographic: it detects truncation,
 * bit rot and stray writes, not tampering. `seed` separates kinds of blocks. */
uint32_t atom__checksum32(uint32_t seed, const void *data, size_t n);

#endif
