/* What both reader fuzz targets do with one input: open it from memory (the format is told by
 * its first bytes), feed it to aerodrome and velodrome in pieces, then check that the reader
 * keeps returning its end or error and that its names and directives are readable. Whatever the
 * input, the reader must return events or a clean error and the session must stay consistent. */
#ifndef ATOM_FUZZ_READ_TRACE_H
#define ATOM_FUZZ_READ_TRACE_H

#include <atomicity.h>
#include <stdint.h>

/* Read with `threads` threads (1: serial). Returns the events pushed, times 256, plus the
 * feed's final code plus 128: what a serial and a threaded reading must agree on. */
static uint64_t fuzz_read_trace(const uint8_t *data, size_t size, const char *name,
                                unsigned threads) {
  atom_trace_reader *r = NULL;
  if (atom_trace_reader_open_memory(&r, (const char *)data, size, name) != 0) return 0;
  if (atom_trace_reader_set_threads(r, threads) != 0) __builtin_trap();
  uint64_t total = 0;
  int rc = 0;
  atom_session *s = NULL;
  if (atom_session_new(&s, NULL) == 0 && atom_session_attach(s, "aerodrome") == 0 &&
      atom_session_attach(s, "velodrome") == 0) {
    uint64_t pushed = 0;
    do {
      rc = atom_trace_feed(s, r, 64, &pushed, NULL, NULL);
      total += pushed;
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
  return total * 256 + (uint64_t)(rc + 128);
}

#endif
