/* Block checksum of the binary trace format (support/checksum.h). The algorithm is part of
 * the file format: doc/trace-format.md specifies it, so it never changes for version 1. */
#include "support/checksum.h"

#include "support/byteorder.h"

#define P1 0x9E3779B97F4A7C15ull /* odd multipliers with well mixed bits */
#define P2 0xC2B2AE3D27D4EB4Full

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* One word into a lane: the multiply spreads low bits up, the rotation brings high bits down,
 * so every input bit reaches every lane bit after a few rounds. */
static inline uint64_t round64(uint64_t lane, uint64_t w) { return rotl64(lane ^ (w * P2), 31) * P1; }

/* Final avalanche of a lane: every bit of x affects every bit of the result. */
static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= P2;
  x ^= x >> 29;
  x *= P1;
  x ^= x >> 32;
  return x;
}

uint32_t atom__checksum32(uint32_t seed, const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t v[4];
  for (int i = 0; i < 4; i++) v[i] = ((uint64_t)seed + (uint64_t)i + 1) * P1;
  size_t words = n / 8, i = 0;
  for (; i + 4 <= words; i += 4) {
    v[0] = round64(v[0], atom__load_le64(p + 8 * i));
    v[1] = round64(v[1], atom__load_le64(p + 8 * i + 8));
    v[2] = round64(v[2], atom__load_le64(p + 8 * i + 16));
    v[3] = round64(v[3], atom__load_le64(p + 8 * i + 24));
  }
  for (int k = 0; i < words; i++, k++) v[k] = round64(v[k], atom__load_le64(p + 8 * i));
  uint64_t h = (uint64_t)n * P1;
  for (int k = 0; k < 4; k++) h = (h ^ mix64(v[k])) * P2;
  h = mix64(h);
  return (uint32_t)(h ^ (h >> 32));
}
