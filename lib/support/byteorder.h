/* Little-endian loads and stores of unaligned bytes, for file formats and word-at-a-time
 * scanning. memcpy compiles to one move; the swap happens only on big-endian hosts. */
#ifndef ATOM_SUPPORT_BYTEORDER_H
#define ATOM_SUPPORT_BYTEORDER_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ATOM__LE16(x) __builtin_bswap16(x)
#define ATOM__LE32(x) __builtin_bswap32(x)
#define ATOM__LE64(x) __builtin_bswap64(x)
#else
#define ATOM__LE16(x) (x)
#define ATOM__LE32(x) (x)
#define ATOM__LE64(x) (x)
#endif

static inline uint32_t atom__load_le32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return ATOM__LE32(v);
}

static inline uint64_t atom__load_le64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return ATOM__LE64(v);
}

static inline void atom__store_le32(unsigned char *p, uint32_t v) {
  v = ATOM__LE32(v);
  memcpy(p, &v, 4);
}

static inline void atom__store_le64(unsigned char *p, uint64_t v) {
  v = ATOM__LE64(v);
  memcpy(p, &v, 8);
}

#endif
