/* Fuzz target: the .atb reader and atom_trace_feed, on arbitrary bytes. Each input is read
 * twice: as it is (truncation, sizes, the checksum check), and with the checksum of every
 * block it can walk repaired, so that mutations inside blocks reach the checks of names,
 * directives and records instead of stopping at the checksum. Whatever the input, the reader
 * must return events or a clean error and the session must stay consistent. */
#include <atomicity.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/checksum.h"
#include "trace/atb_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_one(const uint8_t *data, size_t size) {
  atom_trace_reader *r = NULL;
  if (atom_trace_reader_open_memory(&r, (const char *)data, size, "fuzz.atb") != 0) return;
  atom_session *s = NULL;
  if (atom_session_new(&s, NULL) == 0 && atom_session_attach(s, "aerodrome") == 0 &&
      atom_session_attach(s, "velodrome") == 0) {
    uint64_t pushed = 0;
    int rc;
    do {
      rc = atom_trace_feed(s, r, 64, &pushed, NULL, NULL);
    } while (rc == 1);
    atom_finish(s);
    for (size_t i = 0; i < atom_report_count(s); i++)
      if (!atom_report_message(atom_report_get(s, i))) __builtin_trap();
  }
  /* after an error or the end the reader keeps returning it; names and directives readable */
  atom_event ev;
  (void)atom_trace_reader_next(r, &ev);
  (void)atom_trace_reader_line(r);
  for (int what = ATOM_SPACE_THREAD; what <= ATOM_SPACE_LOCK; what++)
    for (uint64_t k = 1; k < 64; k++) {
      const char *n = atom_trace_reader_name(r, what, k);
      if (!n) break;
      if (!*n) __builtin_trap();
    }
  int sp;
  uint64_t key;
  const char *text;
  for (size_t i = 0; atom_trace_reader_directive(r, i, &sp, &key, &text); i++)
    if (!text || !*text) __builtin_trap();
  atom_session_free(s);
  atom_trace_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  read_one(data, size);
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
  read_one(copy, size);
  free(copy);
  return 0;
}
