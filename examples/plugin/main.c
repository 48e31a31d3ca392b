/* overwrite-demo: run the overwrite checker (overwrite.c) on a trace file and print its
 * reports the way atomcheck does (atom_session_write, text).
 *
 *     overwrite-demo TRACE [ARGS]      ARGS: the checker's arguments, e.g. writers=txn
 *
 * Exit status: 0 no report, 1 reports, 2 error. */
#include <atomicity.h>
#include <stdio.h>

#include "overwrite.h"

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: overwrite-demo TRACE [ARGS]\n");
    return 2;
  }
  /* The vtable must outlive the session: static storage. */
  static atom_checker vt;
  atom_session *s = NULL;
  atom_trace_reader *r = NULL;
  int rc = overwrite_checker_init(&vt);
  if (!rc) rc = atom_session_new(&s, NULL);
  if (!rc) rc = atom_session_attach_checker(s, &vt, argc > 2 ? argv[2] : NULL);
  if (!rc) rc = atom_trace_reader_open(&r, argv[1]);
  while (!rc && (rc = atom_trace_feed(s, r, 0, NULL, NULL, NULL)) == 1) rc = 0;
  if (!rc) rc = atom_finish(s);
  atom_output_options o;
  if (!rc) rc = atom_output_options_init(&o, ATOM_OUTPUT_OPTIONS_VERSION);
  if (!rc) {
    o.tool = "overwrite-demo";
    o.input = argv[1];
    rc = atom_session_write(s, &o, atom_write_file, stdout);
  }
  if (rc) fprintf(stderr, "overwrite-demo: %s\n", atom_last_error());
  int status = rc ? 2 : atom_report_count(s) ? 1 : 0;
  atom_trace_reader_free(r);
  atom_session_free(s);
  return status;
}
