/* Fuzz target: the .atb reader and atom_trace_feed, on arbitrary bytes. Each input is read
 * twice: as it is (truncation, sizes, the checksum check), and with the checksum of every
 * block it can walk repaired, so that mutations inside blocks reach the checks of names,
 * directives and records instead of stopping at the checksum. Whatever the input, the reader
 * must return events or a clean error and the session must stay consistent; read with a
 * thread of its own, the same events and end. */
#include <atomicity.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read_trace.h"
#include "support/checksum.h"
#include "trace/atb_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Read by a thread of its own (-j 2) the same events and end as serially. */
  if (fuzz_read_trace(data, size, "fuzz.atb", 1) != fuzz_read_trace(data, size, "fuzz.atb", 2))
    __builtin_trap();
  if (size < ATB_HEADER_SIZE || memcmp(data, ATB_MAGIC, 4) != 0) return 0;
  uint8_t *copy = malloc(size);
  if (!copy) return 0;
  memcpy(copy, data, size);
  size_t at = ATB_HEADER_SIZE;
  while (size - at >= ATB_BLOCK_HEADER) {
    uint8_t *b = copy + at;
    uint64_t payload = (uint64_t)atom__load_le32(b + 8) + (uint64_t)atom__load_le32(b + 12) * ATB_RECORD;
    if (payload > size - at - ATB_BLOCK_HEADER) break;
    atom__store_le32(b + 4, atom__checksum32(atom__load_le32(b), b + 8, 8 + (size_t)payload));
    at += ATB_BLOCK_HEADER + (size_t)payload;
  }
  if (fuzz_read_trace(copy, size, "fuzz.atb", 1) != fuzz_read_trace(copy, size, "fuzz.atb", 2))
    __builtin_trap();
  free(copy);
  return 0;
}
