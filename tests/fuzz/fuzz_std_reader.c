/* Fuzz target: the STD reader and atom_trace_feed, on arbitrary bytes. Whatever the input, the
 * reader must return events or a clean error and the session must stay consistent. */
#include <atomicity.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  atom_trace_reader *r = NULL;
  if (atom_trace_reader_open_memory(&r, (const char *)data, size, "fuzz") != 0) return 0;
  atom_session *s = NULL;
  if (atom_session_new(&s, NULL) == 0 && atom_session_attach(s, "aerodrome") == 0 &&
      atom_session_attach(s, "velodrome") == 0) {
    uint64_t pushed = 0;
    int rc;
    do {
      rc = atom_trace_feed(s, r, 64, &pushed, NULL, NULL);
    } while (rc == 1);
    atom_finish(s);
    for (size_t i = 0; i < atom_report_count(s); i++) {
      const atom_report *rep = atom_report_get(s, i);
      if (!atom_report_message(rep)) __builtin_trap();
    }
  }
  /* after an error the reader keeps returning it */
  atom_event ev;
  (void)atom_trace_reader_next(r, &ev);
  (void)atom_trace_reader_line(r);
  atom_session_free(s);
  atom_trace_reader_free(r);
  return 0;
}
