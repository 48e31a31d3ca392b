/* atomcheck --convert IN OUT: copy a trace between the STD and .atb formats (doc/atomcheck.md).
 * The reader tells the format of IN by its first bytes, the writer picks that of OUT by its
 * name (".atb" or not). Events, names and #name directives are copied, each directive before
 * the event that followed it; plain comments and blank lines of a STD input are not. */
#include "atomcheck.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Give the writer every name the reader has learned since the last call: the reader's keys are
 * the writer's, so the copy reads back with the same keys and names. */
static int copy_names(atom_trace_reader *r, atom_trace_writer *w, uint64_t named[3]) {
  for (int what = ATOM_SPACE_THREAD; what <= ATOM_SPACE_LOCK; what++) {
    const char *name;
    while ((name = atom_trace_reader_name(r, what, named[what - 1] + 1))) {
      int rc = atom_trace_writer_set_name(w, what, named[what - 1] + 1, name);
      if (rc) return rc;
      named[what - 1]++;
    }
  }
  return 0;
}

static int copy_directives(atom_trace_reader *r, atom_trace_writer *w, uint64_t named[3],
                           size_t *done) {
  int space;
  uint64_t key;
  const char *text;
  while (atom_trace_reader_directive(r, *done, &space, &key, &text)) {
    int rc = copy_names(r, w, named);
    if (!rc) rc = atom_trace_writer_write_name(w, space, key, text);
    if (rc) return rc;
    ++*done;
  }
  return 0;
}

int atc_convert(const char *in, const char *out) {
  atom_trace_reader *r = NULL;
  atom_trace_writer *w = NULL;
  int rc = atom_trace_reader_open(&r, in);
  if (rc) {
    fprintf(stderr, "atomcheck: %s\n", atom_last_error());
    return 2;
  }
  rc = atom_trace_writer_open(&w, out);
  if (rc) {
    fprintf(stderr, "atomcheck: %s\n", atom_last_error());
    atom_trace_reader_free(r);
    return 2;
  }
  uint64_t named[3] = {0, 0, 0};
  size_t dirs = 0;
  atom_event ev;
  int got;
  while ((got = atom_trace_reader_next(r, &ev)) == 1) {
    rc = copy_directives(r, w, named, &dirs);
    if (!rc) rc = copy_names(r, w, named);
    if (!rc) rc = atom_trace_writer_write(w, &ev);
    if (rc) break;
  }
  if (got < 0) rc = got;
  if (!rc) rc = copy_directives(r, w, named, &dirs); /* those after the last event */
  if (rc) fprintf(stderr, "atomcheck: %s\n", atom_last_error());
  int crc = atom_trace_writer_close(w);
  if (crc && !rc) {
    fprintf(stderr, "atomcheck: %s\n", atom_last_error());
    rc = crc;
  }
  atom_trace_reader_free(r);
  /* No half-written copy that looks like a whole one (a STD file has no end marker). */
  if (rc && strcmp(out, "-") != 0) unlink(out);
  return rc ? 2 : 0;
}
