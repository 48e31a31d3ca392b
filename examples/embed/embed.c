/* The smallest complete program that embeds libatomicity: push the events of a run in which
 * two threads interleave inside their atomic blocks, and print what the checker found.
 * Exits with 1 when a violation was found (this run has one: expected-output.txt is what it
 * prints), 0 when none, 2 when the session cannot be set up. */
#include <atomicity.h>
#include <stdio.h>

enum { T1 = 1, T2 = 2, X = 10, Y = 11 };

int main(void) {
  atom_session *s;
  if (atom_session_new(&s, NULL) != 0 || atom_session_attach(s, "aerodrome") != 0) {
    fprintf(stderr, "embed: %s\n", atom_last_error());
    return 2;
  }
  atom_set_name(s, ATOM_SPACE_THREAD, T1, "t1");
  atom_set_name(s, ATOM_SPACE_THREAD, T2, "t2");
  atom_set_name(s, ATOM_SPACE_VAR, X, "x");
  atom_set_name(s, ATOM_SPACE_VAR, Y, "y");

  atom_begin(s, T1, 100);  /* t1: atomic { x = ...; ... = y; } */
  atom_begin(s, T2, 200);  /* t2: atomic { ... = x; y = ...; } */
  atom_write(s, T1, X, 101);
  atom_read(s, T2, X, 201);
  atom_write(s, T2, Y, 202);
  atom_read(s, T1, Y, 102); /* t1 sees t2's write, t2 saw t1's: no serial order */
  atom_end(s, T1, 103);
  atom_end(s, T2, 203);
  atom_finish(s);

  size_t n = atom_report_count(s);
  for (size_t i = 0; i < n; i++) {
    const atom_report *r = atom_report_get(s, i);
    printf("%s %s at event %llu: %s\n", atom_report_checker(r), atom_report_kind(r),
           (unsigned long long)atom_report_event_index(r), atom_report_message(r));
  }
  printf("%zu violation(s)\n", n);
  atom_session_free(s);
  return n ? 1 : 0;
}
