/* What both reader fuzz targets do with one input: open it from memory (the format is told by
 * its first bytes), feed it to aerodrome and velodrome in pieces, then check that the reader
 * keeps returning its end or error and that its names and directives are readable. Whatever the
 * input, the reader must return events or a clean error and the session must stay consistent. */
#ifndef ATOM_FUZZ_READ_TRACE_H
#define ATOM_FUZZ_READ_TRACE_H

#include <atomicity.h>
#include <stdint.h>

static void fuzz_read_trace(const uint8_t *data, size_t size, const char *name) {
  atom_trace_reader *r = NULL;
  if (atom_trace_reader_open_memory(&r, (const char *)data, size, name) != 0) return;
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

#endif
