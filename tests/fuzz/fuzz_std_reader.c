/* Fuzz target: the STD reader and atom_trace_feed, on arbitrary bytes (read_trace.h). */
#include <stdint.h>

#include "read_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_read_trace(data, size, "fuzz", 1);
  return 0;
}
