/* atomcheck: the pieces its source files share.
 *
 * atomcheck.c reads the trace into a session and fills an atc_run; the reports themselves are
 * written by the library (atom_session_write); stats.c prints the --stats lines. */
#ifndef ATOMCHECK_H
#define ATOMCHECK_H

#include <stdint.h>
#include <stdio.h>

#include <atomicity.h>


/* One attached checker and the reports it made, in order of discovery. */
typedef struct atc_checker {
  const char *name;            /* atom_checker_name(): "aerodrome" */
  const char *spec;            /* as given with -c: "aerodrome:variant=basic" */
  const atom_report **reports; /* borrowed from the session */
  size_t n_reports;            /* stored (at most --max-stored) */
  size_t dropped;              /* distinct reports beyond --max-stored: counted, not stored */
  uint64_t occurrences;        /* all occurrences, of dropped reports too */
  atom_checker_stats stats;    /* valid when have_stats */
  int have_stats;
  atom_checker_status status;  /* state COMPLETE if the library could not say */
} atc_checker;

/** @return 1 if checker @p c did not decide everything (INCOMPLETE or DISABLED). */
int atc_checker_partial(const atc_checker *c);
/** @return "INCOMPLETE" or "DISABLED" for a partial checker, NULL for a complete one. */
const char *atc_checker_state_name(const atc_checker *c);

/* Everything the outputs need. */
typedef struct atc_run {
  const char *path;            /* the trace file as given ("-" = standard input) */
  atom_session *session;
  const atom_trace_reader *reader;
  uint64_t events;             /* events read (accepted or not) */
  uint64_t rejected;           /* ill-formed events the session dropped */
  double seconds;              /* wall time of reading, checking and finishing */
  int want_stats;              /* --stats */
  size_t max_reports;          /* reports printed per checker (SIZE_MAX: all) */
  size_t max_stored;           /* --max-stored (0: no limit) */
  atc_checker *checkers;       /* in attach order */
  size_t n_checkers;
  size_t n_reports;            /* all checkers together */
} atc_run;

/* convert.c */

/** --convert: copy trace @p in to @p out (format of @p out by its name). @return exit status. */
int atc_convert(const char *in, const char *out);

/* names.c */

/**
 * The readable name of @p key in @p space (an atom_space): the name registered with the session,
 * else the reader's, else "0x" and the key in hex written into @p buf. For ATOM_SPACE_LOC:
 * the location's name or NULL.
 * @return a string valid until @p buf is reused or the session freed.
 */
const char *atc_name(const atc_run *run, int space, uint64_t key, char *buf, size_t size);

/**
 * The name of program location @p loc (a "#name loc" directive of the trace, e.g. "increment at
 * counter.c:12"), or NULL. atc_name() gives the same for ATOM_SPACE_LOC (NULL if unnamed).
 */
const char *atc_loc_name(const atc_run *run, uint64_t loc);

/** @return the plural suffix for a count of @p n: "" for 1, "s" otherwise. */
const char *atc_plural(uint64_t n);
/* Write s for a terminal: control characters a name or message could carry are written as
 * \xNN per byte (C0 and DEL; C1, U+0080-U+009F, as UTF-8 0xC2 0x80-0x9F; and bytes that are not
 * valid UTF-8, such as a raw 0x9B, which some terminals take as a C1 CSI), so a trace cannot send
 * escape sequences to the user's terminal. Everything else, other UTF-8 included, is written
 * as is. */
void atc_put_text(FILE *out, const char *s);

/** @return a string formatted as by printf, allocated with malloc (free it), or NULL. */
char *atc_strdup_printf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* inputs.c: the side files. Each prints its own error ("atomcheck: FILE:LINE: ...") and
 * returns -1, or 0. */
/** Describe locs from a map of lines "LOC FILE:LINE [FUNCTION]" (atom_set_location). */
int atc_load_locations(atom_session *s, const char *path);
/** The fingerprints of an earlier JSON or SARIF run; *fps is malloc'd (free it). */
int atc_load_baseline(const char *path, uint64_t **fps, size_t *n);
/** Suppression rules (free with atom_suppressions_free). */
int atc_load_suppressions(const char *path, atom_suppressions **out);

/* stats.c: the --stats lines (text, on standard error). */
void atc_stats_text(FILE *out, const atc_run *run);

/* progress.c: the --progress line on standard error, for reading and for the checkers'
 * end-of-run work. */
typedef struct atc_progress {
  FILE *out;             /* standard error (a test's file for atc_progress_init_stream) */
  int enabled;           /* --progress given and standard error is a terminal */
  int shown;             /* a line is on the screen and must be cleared before other output */
  double start;          /* when reading started (atc_now) */
  double last;           /* when the line was last drawn */
  atom_session *session; /* borrowed, for the checkers' names; set before atom_finish() */
  size_t phase;          /* 1 + index of the checker whose finishing line is shown; 0 none */
  double phase_start;    /* when that checker's first progress call came */
  unsigned spin;         /* spinner position when the checker gives no total */
} atc_progress;

/** @return a monotonic time in seconds. */
double atc_now(void);
/** Start the line's clock; it is drawn only if @p requested and standard error is a terminal. */
void atc_progress_init(atc_progress *p, int requested);
/** The same, always drawn, on @p out (for tests). */
void atc_progress_init_stream(atc_progress *p, FILE *out);
/** Redraw the reading line if enough time passed since the last one. */
void atc_progress_update(atc_progress *p, const atom_trace_reader *r, uint64_t events);
/** An atom_progress_fn (atom_options::on_progress) with an atc_progress as @p payload: draws
 *  "checker: finishing 37 % (ETA 4 s)", or a spinner with the count when @p total is 0. */
void atc_progress_finishing(size_t checker_index, uint64_t done, uint64_t total, void *payload);
/** Erase the line, so that other messages start on a clean line. */
void atc_progress_clear(atc_progress *p);

/* The texts of the two lines (without "\r" and erase), NUL-terminated, cut at @p size.
 * @p elapsed is the time since reading (or the checker's end-of-run work) started; @p spin the
 * spinner position. @return the length written. */
size_t atc_progress_format_read(char *buf, size_t size, uint64_t events, uint64_t consumed,
                                uint64_t total, double elapsed);
size_t atc_progress_format_finish(char *buf, size_t size, const char *checker, uint64_t done,
                                  uint64_t total, double elapsed, unsigned spin);

#endif
