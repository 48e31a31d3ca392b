/* A buffered sink over an atom_write_fn, with the escapes every output format needs
 * (internal). A write error is sticky: once fn returned non-zero, nothing more is written and
 * atom__out_close() returns ATOM_EIO. */
#ifndef ATOM_OUTPUT_OUT_H
#define ATOM_OUTPUT_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/output.h"
#include "atomicity/sys/checker.h" /* ATOM_EDGE_CLOSING */
#include "atomicity/error.h"
#include "atomicity/session.h"

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

/* One attached checker as every renderer sees it: its stored reports split into the shown ones
 * (in order of discovery) and the hidden ones, its figures and its status. */
typedef struct atom__out_checker {
  const char *name;            /* atom_checker_name() */
  const char *label;           /* its attach spec ("aerodrome:variant=basic"), else the name */
  const atom_report **shown;   /* not suppressed, not baselined; owned by the atom__out_run */
  size_t n_shown;
  size_t n_printed;            /* of them, written (max_reports) */
  size_t n_stored;             /* stored reports, shown or hidden */
  size_t suppressed;           /* hidden by the suppressions */
  size_t baselined;            /* hidden because the baseline has their fingerprint */
  size_t dropped;              /* distinct reports counted but not stored (session caps) */
  uint64_t occurrences;        /* of the shown reports and the dropped ones */
  atom_checker_stats stats;
  int have_stats;
  atom_checker_status status;  /* state COMPLETE when the library could not say */
} atom__out_checker;

typedef struct atom__out_run {
  const struct atom_session *session;
  const atom_output_options *opt;
  atom__out_checker *checkers; /* in attach order */
  size_t n_checkers;
  size_t n_shown;              /* all checkers together */
  uint64_t events, rejected;   /* opt's, else the session's */
  const char *tool;            /* opt->tool, else "libatomicity" */
} atom__out_run;

/* Fill run from session s under opt. Memory from malloc, released by atom__out_run_free().
 * @return 0 or ATOM_ENOMEM. */
int atom__out_collect(atom__out_run *run, const struct atom_session *s,
                      const atom_output_options *opt);
void atom__out_run_free(atom__out_run *run);
/* @return 1 if checker c did not decide everything (INCOMPLETE or DISABLED). */
int atom__out_partial(const atom__out_checker *c);
/* @return "INCOMPLETE", "DISABLED", or NULL for a complete checker. */
const char *atom__out_state_name(const atom__out_checker *c);
/* @return "" for 1, "s" otherwise. */
const char *atom__out_plural(uint64_t n);
/* Write key's name in space (registered, else "T<key>" for threads, "0x<hex>" otherwise)
 * through put (one of the escapes above). */
void atom__out_key(atom__out *o, const struct atom_session *s, int space, uint64_t key,
                   void (*put)(atom__out *, const char *));
/* Render with f (an atom_report_describe_* style function with one index) into a malloc'd
 * string; NULL if out of memory. i is ignored by whole-report describers. */
char *atom__out_describe(int (*f)(char *, size_t, const atom_report *, size_t),
                         const atom_report *r, size_t i);
char *atom__out_message(const atom_report *r);
/* A streaming JSON writer over an atom__out (json.c): it places commas, newlines and two-space
 * indentation; strings are escaped by atom__out_json_chars (always valid UTF-8). */
#define ATOM__JSON_MAX_DEPTH 32
typedef struct atom__json {
  atom__out *o;
  int depth;
  int after_key;
  unsigned char items[ATOM__JSON_MAX_DEPTH]; /* the container at each depth is non-empty */
} atom__json;
void atom__json_init(atom__json *j, atom__out *o);
void atom__json_obj(atom__json *j);
void atom__json_obj_end(atom__json *j);
void atom__json_arr(atom__json *j);
void atom__json_arr_end(atom__json *j);
void atom__json_key(atom__json *j, const char *key);
void atom__json_str(atom__json *j, const char *s); /* NULL: null */
void atom__json_uint(atom__json *j, uint64_t v);
void atom__json_double(atom__json *j, double v);
void atom__json_bool(atom__json *j, int v);
void atom__json_null(atom__json *j);
void atom__json_kstr(atom__json *j, const char *key, const char *s);
void atom__json_kuint(atom__json *j, const char *key, uint64_t v);
/* The stack of loc as an array of {function, file, line} frames (atom_get_stack, else the
 * location itself when described); nothing at all when nothing is known. */
void atom__json_stack(atom__json *j, const char *key, const struct atom_session *s, uint64_t loc);
/* The members of report r (checker, kind, ..., transactions, variables, events, edges) into
 * the open object. */
void atom__json_report_members(atom__json *j, const atom_report *r);

/* One report alone (atom_report_write): its text block, labelled with checker label (NULL:
 * the checker's name), or its JSON object. */
void atom__output_text_report(atom__out *o, const atom_report *r, const char *label);
void atom__output_json_report(atom__out *o, const atom_report *r);
/* The evidence name of r ("observed" when unknown). */
const char *atom__out_evidence(const atom_report *r);

#endif
