/* A buffered sink over an atom_write_fn, with the escapes every output format needs
 * (internal). A write error is sticky: once fn returned non-zero, nothing more is written and
 * atom__out_close() returns ATOM_EIO. */
#ifndef ATOM_OUTPUT_OUT_H
#define ATOM_OUTPUT_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/output.h"

typedef struct atom__out {
  atom_write_fn fn;
  void *payload;
  char buf[8192];
  size_t len;
  int failed;
} atom__out;

void atom__out_init(atom__out *o, atom_write_fn fn, void *payload);
void atom__out_write(atom__out *o, const char *data, size_t len);
void atom__out_puts(atom__out *o, const char *s);
void atom__out_printf(atom__out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* s as the inside of a JSON string (quotes not included). */
void atom__out_json_chars(atom__out *o, const char *s);
/* s with & < > " ' escaped (HTML text and attributes, SVG, XML). */
void atom__out_html_chars(atom__out *o, const char *s);
/* s for a terminal: control characters and invalid UTF-8 as \xNN, so a name cannot send
 * escape sequences; other UTF-8 as is. */
void atom__out_text_chars(atom__out *o, const char *s);
/* Flush. @return 0, or ATOM_EIO if a write failed. */
int atom__out_close(atom__out *o);

/* One renderer per format (lib/output/FORMAT.c). Each writes the whole document for session s
 * (reports filtered by atom__output_shown) and returns 0 or ATOM_ENOMEM; I/O errors are left
 * in o. */
struct atom_session;
int atom__output_text(atom__out *o, const struct atom_session *s, const atom_output_options *opt);
int atom__output_json(atom__out *o, const struct atom_session *s, const atom_output_options *opt);
int atom__output_sarif(atom__out *o, const struct atom_session *s, const atom_output_options *opt);
int atom__output_html(atom__out *o, const struct atom_session *s, const atom_output_options *opt);
int atom__output_dot(atom__out *o, const struct atom_session *s, const atom_output_options *opt);

/* Is report r shown under opt (not suppressed, not in the baseline)? */
int atom__output_shown(const atom_output_options *opt, const atom_report *r);

#endif
