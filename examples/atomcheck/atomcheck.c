/* atomcheck: check a trace file for atomicity violations (doc/atomcheck.md, atomcheck(1)).
 *
 * Reads a STD trace in chunks into a session with the checkers given by -c, finishes the
 * session, and prints the reports through the library's writer (atom_session_write) as text,
 * JSON, SARIF or dot, leaving out suppressed and baselined ones. Exit status: 0 no violation,
 * 1 violations shown, 2 usage or input error, 3 no violation but some checker stopped early.
 * Uses only the public API of libatomicity. */
#include "atomcheck.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <atomicity/sys/checker.h> /* --list-checkers reads the built-in vtables */

enum { EXIT_CLEAN = 0, EXIT_VIOLATIONS = 1, EXIT_TROUBLE = 2, EXIT_INCOMPLETE = 3 };

/* Events read per atom_trace_feed() call: large enough to make the call overhead vanish, small
 * enough to redraw the progress line a few times per second. */
#define FEED_CHUNK 65536u

/* Ill-formed events printed as warnings; the rest are only counted. */
#define MAX_WARNINGS 20

/* Default of --max-stored: distinct reports kept per checker. A trace can make millions of
 * distinct reports (each costs a few hundred bytes); beyond this they are only counted. */
#define DEFAULT_MAX_STORED 10000u

typedef struct options {
  const char **specs; /* -c arguments, in order */
  size_t n_specs;
  unsigned format;    /* ATOM_FORMAT_* */
  const char *baseline, *suppressions, *locations, *html; /* FILE arguments */
  size_t max_reports;
  size_t max_stored; /* --max-stored: 0 = no limit */
  int stats, progress, quiet;
  int allow_empty; /* --allow-empty: a trace without events is not an error */
  const char *sets; /* --sets FILE */
  int sets_by_prefix; /* --sets-by-prefix, or a -c race-automata:sets=prefix */
  unsigned jobs; /* -j: parser threads; 0 = one per online core */
  const char *path;
  const char *convert; /* --convert IN: copy IN to path */
} options;

/* State of one run, handed to the reject callback. */
typedef struct context {
  atc_run run;
  atc_progress progress;
} context;

/* When a checker decides, from its properties ("?" if its vtable does not say). */
static const char *checker_when(const atom_checker *vt) {
  uint32_t p = vt->abi_version >= 2 ? vt->properties : 0; /* properties came with version 2 */
  uint32_t when = p & (ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_AT_FINISH);
  if (when == (ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_AT_FINISH)) return "online+at finish";
  if (when == ATOM_CHECKER_PROP_ONLINE) return "online";
  if (when == ATOM_CHECKER_PROP_AT_FINISH) return "at finish";
  return "?";
}

/* What its reports promise: "sound, complete, predictive" or a part of it; "-" for none. */
static void checker_guarantees(const atom_checker *vt, char *buf, size_t size) {
  uint32_t p = vt->abi_version >= 2 ? vt->properties : 0;
  static const struct {
    uint32_t bit;
    const char *word;
  } words[] = {{ATOM_CHECKER_PROP_SOUND, "sound"},
               {ATOM_CHECKER_PROP_COMPLETE, "complete"},
               {ATOM_CHECKER_PROP_PREDICTIVE, "predictive"}};
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (p & words[i].bit)
      snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", *buf ? ", " : "", words[i].word);
  if (!*buf) snprintf(buf, size, "%s", p ? "-" : "?");
}

/* The built-in checkers, one line each: name, when it decides, what its reports promise and,
 * with @p summaries, the checker's own one-line summary (--list-checkers; --help leaves it out
 * to stay within 80 columns). */
static void list_checkers(FILE *out, const char *indent, int summaries) {
  for (size_t i = 0;; i++) {
    const atom_checker *vt = atom_checker_builtin(i);
    if (!vt) break;
    char g[64];
    checker_guarantees(vt, g, sizeof g);
    if (summaries)
      fprintf(out, "%s%-14s %-17s %-28s %s\n", indent, vt->name, checker_when(vt), g,
              vt->summary ? vt->summary : "");
    else
      fprintf(out, "%s%-14s %-17s %s\n", indent, vt->name, checker_when(vt), g);
  }
}

/* "aerodrome, velodrome, ...": the names of the built-in checkers, for an error message. */
static void checker_names(FILE *out) {
  for (size_t i = 0; atom_checker_builtin(i); i++)
    fprintf(out, "%s%s", i ? ", " : "", atom_checker_builtin(i)->name);
}

static void usage(FILE *out) {
  fputs("Usage: atomcheck [OPTION]... FILE|-\n"
        "  or:  atomcheck --convert IN OUT\n"
        "Check a trace file (STD or .atb; - reads standard input) for atomicity violations.\n"
        "\n"
        "  -c, --checker=NAME[:ARGS]  attach a checker; repeatable; default aerodrome\n"
        "                             (e.g. -c velodrome -c aerodrome:variant=basic)\n"
        "      --format=FORMAT        text (default), json, sarif or dot\n"
        "      --html=FILE            also write the report as an HTML page to FILE\n"
        "      --baseline=OLD.json    show only violations whose fingerprint is not in OLD.json\n"
        "                             (an earlier --format json or sarif run)\n"
        "      --suppressions=FILE    leave out violations matched by the rules in FILE\n"
        "                             (atomic:, fn:, file:, checker:, kind: lines)\n"
        "      --locations=FILE       what each loc is: lines 'LOC FILE:LINE [FUNCTION]'\n"
        "      --max-reports=N        print at most N reports per checker (counts stay exact)\n"
        "      --max-stored=N         keep at most N distinct reports per checker (default\n"
        "                             10000; 0 = no limit); the others are only counted\n"
        "      --sets=FILE            atomic sets of the variables (race-automata): one\n"
        "                             'variable set' pair per line\n"
        "      --sets-by-prefix       a variable named OBJ.FIELD is in the atomic set of\n"
        "                             every OBJ.* (variables of the sets file excepted)\n"
        "      --stats                per-checker time and memory (on standard error;\n"
        "                             with --format json, a \"stats\" object)\n"
        "      --progress             progress line on standard error if it is a terminal\n"
        "                             (reading, with % and ETA for a file; each\n"
        "                             checker's end-of-run work)\n"
        "      --allow-empty          accept a trace without events (exit 0, not 2)\n"
        "      --list-checkers        list the checkers (as below, with summaries)\n"
        "      --convert IN OUT       copy trace IN to OUT, as .atb if OUT ends in .atb,\n"
        "                             else as STD text (- = standard input/output)\n"
        "  -j, --jobs=N               parse the trace with N threads (default: the number\n"
        "                             of online cores; 1 = one thread; a pipe or standard\n"
        "                             input is always read with one)\n"
        "  -q, --quiet                print nothing on standard output\n"
        "  -h, --help                 print this help and exit\n"
        "      --version              print the version and exit\n"
        "\n"
        "Exit status: 0 no violation, 1 violations shown (not suppressed or in the\n"
        "baseline), 2 usage or input error,\n"
        "3 no violation found but some checker stopped early (INCOMPLETE or DISABLED)\n"
        "(including ill-formed events in the trace, and a trace without events).\n"
        "\n"
        "Checkers (-c NAME): when each decides and what it promises (sound: every report\n"
        "is real; complete: it misses no violation; predictive: it also judges other\n"
        "orders of the same events). Which one to use: doc/choosing.md.\n",
        out);
  list_checkers(out, "  ", 0);
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("atomcheck: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\nTry 'atomcheck --help' for more information.\n", stderr);
  return EXIT_TROUBLE;
}

static int parse_count(const char *s, size_t *out) {
  if (!s || !*s) return -1;
  for (const char *p = s; *p; p++)
    if (*p < '0' || *p > '9') return -1;
  errno = 0;
  unsigned long long v = strtoull(s, NULL, 10);
  if (errno != 0 || v > SIZE_MAX) return -1;
  *out = (size_t)v;
  return 0;
}

/* @return -1 to go on, or an exit status. */
static int parse_options(int argc, char **argv, options *o) {
  enum {
    OPT_FORMAT = 256, OPT_MAX_REPORTS, OPT_STATS, OPT_PROGRESS, OPT_VERSION, OPT_SETS, OPT_SETS_BY_PREFIX,
    OPT_MAX_STORED, OPT_LIST_CHECKERS, OPT_ALLOW_EMPTY, OPT_BASELINE, OPT_SUPPRESSIONS,
    OPT_LOCATIONS, OPT_HTML, OPT_CONVERT
  };
  static const struct option longopts[] = {
      {"checker", required_argument, NULL, 'c'},
      {"format", required_argument, NULL, OPT_FORMAT},
      {"max-reports", required_argument, NULL, OPT_MAX_REPORTS},
      {"max-stored", required_argument, NULL, OPT_MAX_STORED},
      {"sets", required_argument, NULL, OPT_SETS},
      {"sets-by-prefix", no_argument, NULL, OPT_SETS_BY_PREFIX},
      {"baseline", required_argument, NULL, OPT_BASELINE},
      {"suppressions", required_argument, NULL, OPT_SUPPRESSIONS},
      {"locations", required_argument, NULL, OPT_LOCATIONS},
      {"html", required_argument, NULL, OPT_HTML},
      {"stats", no_argument, NULL, OPT_STATS},
      {"progress", no_argument, NULL, OPT_PROGRESS},
      {"allow-empty", no_argument, NULL, OPT_ALLOW_EMPTY},
      {"list-checkers", no_argument, NULL, OPT_LIST_CHECKERS},
      {"jobs", required_argument, NULL, 'j'},
      {"convert", required_argument, NULL, OPT_CONVERT},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, OPT_VERSION},
      {NULL, 0, NULL, 0},
  };
  o->specs = calloc((size_t)argc + 1, sizeof *o->specs);
  if (!o->specs) {
    fputs("atomcheck: out of memory\n", stderr);
    return EXIT_TROUBLE;
  }
  o->format = ATOM_FORMAT_TEXT;
  o->max_reports = SIZE_MAX;
  o->max_stored = DEFAULT_MAX_STORED;
  opterr = 0; /* our own messages */
  int c;
  while ((c = getopt_long(argc, argv, ":c:j:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'c':
      o->specs[o->n_specs++] = optarg;
      break;
    case OPT_FORMAT:
      if (strcmp(optarg, "text") == 0)
        o->format = ATOM_FORMAT_TEXT;
      else if (strcmp(optarg, "json") == 0)
        o->format = ATOM_FORMAT_JSON;
      else if (strcmp(optarg, "sarif") == 0)
        o->format = ATOM_FORMAT_SARIF;
      else if (strcmp(optarg, "dot") == 0)
        o->format = ATOM_FORMAT_DOT;
      else
        return usage_error("unknown format '%s' (text, json, sarif or dot)", optarg);
      break;
    case OPT_BASELINE:
      if (o->baseline) return usage_error("--baseline given twice");
      o->baseline = optarg;
      break;
    case OPT_SUPPRESSIONS:
      if (o->suppressions) return usage_error("--suppressions given twice");
      o->suppressions = optarg;
      break;
    case OPT_LOCATIONS:
      if (o->locations) return usage_error("--locations given twice");
      o->locations = optarg;
      break;
    case OPT_HTML:
      if (o->html) return usage_error("--html given twice");
      o->html = optarg;
      break;
    case OPT_MAX_REPORTS:
      if (parse_count(optarg, &o->max_reports) != 0)
        return usage_error("--max-reports needs a non-negative number, not '%s'", optarg);
      break;
    case OPT_MAX_STORED:
      if (parse_count(optarg, &o->max_stored) != 0)
        return usage_error("--max-stored needs a non-negative number, not '%s'", optarg);
      break;
    case OPT_SETS_BY_PREFIX:
      o->sets_by_prefix = 1;
      break;
    case OPT_SETS:
      if (o->sets) return usage_error("--sets given twice");
      o->sets = optarg;
      break;
    case OPT_STATS:
      o->stats = 1;
      break;
    case OPT_PROGRESS:
      o->progress = 1;
      break;
    case OPT_ALLOW_EMPTY:
      o->allow_empty = 1;
      break;
    case OPT_CONVERT:
      if (o->convert) return usage_error("--convert given twice");
      o->convert = optarg;
      break;
    case OPT_LIST_CHECKERS:
      list_checkers(stdout, "", 1);
      return EXIT_CLEAN;
    case 'j': {
      size_t j;
      if (parse_count(optarg, &j) != 0 || j == 0 || j > 64)
        return usage_error("--jobs needs a number of threads from 1 to 64, not '%s'", optarg);
      o->jobs = (unsigned)j;
      break;
    }
    case 'q':
      o->quiet = 1;
      break;
    case 'h':
      usage(stdout);
      return EXIT_CLEAN;
    case OPT_VERSION:
      printf("atomcheck (libatomicity) %s\n", atom_version());
      return EXIT_CLEAN;
    case ':':
    default: {
      /* getopt_long leaves the short option in optopt, or for a long option its value (>= 256)
       * or 0 if it is unknown; then the option is the element just consumed. */
      char opt[3] = {'-', (char)optopt, '\0'};
      const char *name = optopt > 0 && optopt < 256 ? opt : argv[optind - 1];
      if (c == ':') return usage_error("option '%s' needs an argument", name);
      if (optopt >= 256) return usage_error("option '%s' takes no argument", name);
      return usage_error("unknown option '%s'", name);
    }
    }
  }
  if (o->convert) {
    if (optind >= argc) return usage_error("--convert IN needs an output file OUT");
    if (optind + 1 < argc) return usage_error("--convert IN OUT takes one output file");
    o->path = argv[optind];
    return -1;
  }
  if (optind >= argc) return usage_error("no trace file given (use - for standard input)");
  if (optind + 1 < argc) return usage_error("more than one trace file given ('%s')", argv[optind + 1]);
  o->path = argv[optind];
  if (o->n_specs == 0) o->specs[o->n_specs++] = "aerodrome";
  /* -c race-automata:sets=prefix meant sets by name prefix before the reader declared them:
   * it still does (the checker itself takes it as sets=var). */
  for (size_t i = 0; i < o->n_specs; i++)
    if (strncmp(o->specs[i], "race-automata:", 14) == 0 && strstr(o->specs[i], "sets=prefix"))
      o->sets_by_prefix = 1;
  return -1;
}

/* atom_trace_feed() calls this for every event the session dropped as ill-formed. */
static int on_reject(const atom_trace_reader *r, int err, const char *message, void *payload) {
  (void)r;
  (void)err;
  context *ctx = payload;
  ctx->run.rejected++;
  if (ctx->run.rejected <= MAX_WARNINGS) {
    atc_progress_clear(&ctx->progress);
    fprintf(stderr, "atomcheck: %s\n", message); /* "file:line: event N: ..." */
  }
  return 0;
}

/* Print the last error of the library, or a generic message when it left none. */
static void print_error(const char *what, int err) {
  const char *detail = atom_last_error();
  if (detail && *detail)
    fprintf(stderr, "atomcheck: %s: %s\n", what, detail);
  else
    fprintf(stderr, "atomcheck: %s: %s\n", what, atom_strerror(err));
}

static int attach_checkers(atom_session *s, const options *o) {
  for (size_t i = 0; i < o->n_specs; i++) {
    int rc = atom_session_attach(s, o->specs[i]);
    if (rc == 0) continue;
    const char *detail = atom_last_error();
    if (rc == ATOM_ENOTFOUND) {
      /* The name is what comes before the arguments: "-c foo:mode=x" names 'foo'. */
      const char *colon = strchr(o->specs[i], ':');
      int len = colon ? (int)(colon - o->specs[i]) : (int)strlen(o->specs[i]);
      fprintf(stderr, "atomcheck: no checker named '%.*s'; known: ", len, o->specs[i]);
      checker_names(stderr);
      fputc('\n', stderr);
    } else
      fprintf(stderr, "atomcheck: cannot attach '-c %s': %s\n", o->specs[i],
              *detail ? detail : atom_strerror(rc));
    return -1;
  }
  return 0;
}

/* Read the whole trace into the session. @return 0 or -1 (message printed). */
static int read_trace(context *ctx, atom_trace_reader *reader) {
  atc_run *run = &ctx->run;
  for (;;) {
    uint64_t pushed = 0;
    int rc = atom_trace_feed(run->session, reader, FEED_CHUNK, &pushed, on_reject, ctx);
    run->events += pushed;
    if (rc < 0) {
      atc_progress_clear(&ctx->progress);
      const char *detail = atom_last_error();
      if (detail && *detail && (rc == ATOM_EPARSE || rc == ATOM_EIO))
        fprintf(stderr, "atomcheck: %s\n", detail); /* "file:line: message" */
      else
        print_error(run->path, rc);
      return -1;
    }
    if (rc == 0) break;
    atc_progress_update(&ctx->progress, reader, run->events);
  }
  atc_progress_clear(&ctx->progress);
  return 0;
}

/* Group the session's reports by checker, in attach order. @return 0 or -1 (out of memory). */
static int collect_reports(atc_run *run, const options *o) {
  atom_session *s = run->session;
  size_t n_checkers = atom_checker_count(s);
  run->checkers = calloc(n_checkers ? n_checkers : 1, sizeof *run->checkers);
  if (!run->checkers) return -1;
  run->n_checkers = n_checkers;
  run->n_reports = atom_report_count(s);
  for (size_t i = 0; i < n_checkers; i++) {
    atc_checker *c = &run->checkers[i];
    c->name = atom_checker_name(s, i);
    if (!c->name) c->name = "?";
    c->spec = i < o->n_specs ? o->specs[i] : c->name;
    c->stats.version = ATOM_CHECKER_STATS_VERSION;
    c->have_stats = atom_checker_stats_get(s, i, &c->stats) == 0;
    atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
    if (atom_checker_status_get(s, i, &st) != 0) st.state = ATOM_CHECKER_COMPLETE;
    c->status = st;
  }
  for (size_t k = 0; k < run->n_reports; k++) {
    size_t i = atom_report_checker_index(atom_report_get(s, k));
    if (i < n_checkers) run->checkers[i].n_reports++;
  }
  for (size_t i = 0; i < n_checkers; i++) {
    atc_checker *c = &run->checkers[i];
    c->reports = calloc(c->n_reports ? c->n_reports : 1, sizeof *c->reports);
    if (!c->reports) return -1;
    c->n_reports = 0;
  }
  for (size_t k = 0; k < run->n_reports; k++) {
    const atom_report *r = atom_report_get(s, k);
    size_t i = atom_report_checker_index(r);
    if (i >= n_checkers) continue;
    atc_checker *c = &run->checkers[i];
    c->reports[c->n_reports++] = r;
    c->occurrences += atom_report_occurrences(r);
  }
  /* Reports beyond --max-stored were counted by the session, not stored: the checker's own
   * figures give the true totals. */
  for (size_t i = 0; i < n_checkers; i++) {
    atc_checker *c = &run->checkers[i];
    if (c->have_stats && c->stats.reports > c->n_reports) {
      c->dropped = (size_t)(c->stats.reports - c->n_reports);
      c->occurrences = c->stats.occurrences;
    }
  }
  return 0;
}

int atc_checker_partial(const atc_checker *c) {
  return c->status.state == ATOM_CHECKER_INCOMPLETE || c->status.state == ATOM_CHECKER_DISABLED;
}

const char *atc_checker_state_name(const atc_checker *c) {
  switch (c->status.state) {
  case ATOM_CHECKER_INCOMPLETE: return "INCOMPLETE";
  case ATOM_CHECKER_DISABLED: return "DISABLED";
  default: return NULL;
  }
}

/* Violations that remain after the suppressions and the baseline: only they make exit status 1.
 * Reports counted but not stored cannot be matched, so they count. */
static size_t shown_violations(const atc_run *run, const atom_output_options *out) {
  size_t n = 0;
  for (size_t i = 0; i < run->n_checkers; i++) {
    const atc_checker *c = &run->checkers[i];
    n += c->dropped;
    for (size_t k = 0; k < c->n_reports; k++) {
      const atom_report *r = c->reports[k];
      if (out->suppressions && atom_suppressions_match(out->suppressions, r)) continue;
      uint64_t f = atom_report_fingerprint(r);
      size_t b = 0;
      while (b < out->n_baseline && out->baseline[b] != f) b++;
      if (b == out->n_baseline) n++;
    }
  }
  return n;
}

/* --html FILE: the same reports as one page. @return 0 or -1 (printed). */
static int write_html(const atom_session *s, const atom_output_options *base, const char *path) {
  atom_output_options o = *base;
  o.format = ATOM_FORMAT_HTML;
  o.flags &= ~(unsigned)ATOM_OUTPUT_STATS;
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "atomcheck: %s: %s\n", path, strerror(errno));
    return -1;
  }
  int rc = atom_session_write(s, &o, atom_write_file, f);
  if (fclose(f) != 0 && rc == 0) rc = ATOM_EIO;
  if (rc != 0) {
    fprintf(stderr, "atomcheck: %s: %s\n", path,
            rc == ATOM_EIO ? "write error" : atom_strerror(rc));
    return -1;
  }
  return 0;
}

static void free_run(atc_run *run) {
  for (size_t i = 0; i < run->n_checkers; i++) free(run->checkers[i].reports);
  free(run->checkers);
}

static int run_check(const options *o) {
  context ctx;
  memset(&ctx, 0, sizeof ctx);
  atc_run *run = &ctx.run;
  run->path = o->path;
  run->want_stats = o->stats;
  run->max_reports = o->max_reports;

  atom_options opt;
  if (atom_options_init(&opt, ATOM_OPTIONS_VERSION) != 0) {
    fputs("atomcheck: the library does not accept its own options version\n", stderr);
    return EXIT_TROUBLE;
  }
  if (o->stats) opt.flags |= ATOM_PROFILE;
  /* The checkers' end-of-run work shows on the same line as reading (progress.c). */
  atc_progress_init(&ctx.progress, o->progress);
  if (ctx.progress.enabled) {
    opt.on_progress = atc_progress_finishing;
    opt.progress_payload = &ctx.progress;
  }
  /* Counts stay exact whatever is stored: the session counts the reports it drops. */
  opt.max_reports = 0;
  opt.max_reports_per_checker = o->max_stored;
  run->max_stored = o->max_stored;

  atom_session *s = NULL;
  int rc = atom_session_new(&s, &opt);
  if (rc != 0) {
    print_error("cannot create a session", rc);
    return EXIT_TROUBLE;
  }
  run->session = s;
  ctx.progress.session = s;
  int status = EXIT_TROUBLE;
  atom_trace_reader *reader = NULL;

  uint64_t *baseline = NULL;
  size_t n_baseline = 0;
  atom_suppressions *suppressions = NULL;
  if (attach_checkers(s, o) != 0) goto out;
  if (o->locations && atc_load_locations(s, o->locations) != 0) goto out;
  if (o->baseline && atc_load_baseline(o->baseline, &baseline, &n_baseline) != 0) goto out;
  if (o->suppressions && atc_load_suppressions(o->suppressions, &suppressions) != 0) goto out;
  rc = atom_trace_reader_open(&reader, o->path);
  if (rc != 0) {
    const char *detail = atom_last_error();
    if (detail && *detail)
      fprintf(stderr, "atomcheck: %s\n", detail);
    else
      fprintf(stderr, "atomcheck: %s: %s\n", o->path, atom_strerror(rc));
    goto out;
  }
  run->reader = reader;
  /* 0 (no -j): one thread per online core. */
  if ((rc = atom_trace_reader_set_threads(reader, o->jobs)) != 0) {
    fprintf(stderr, "atomcheck: %s\n", atom_last_error());
    goto out;
  }
  if (o->sets && (rc = atom_trace_reader_load_sets(reader, o->sets)) != 0) {
    const char *detail = atom_last_error();
    if (detail && *detail) /* "file:line: message" or "file: message" */
      fprintf(stderr, "atomcheck: %s\n", detail);
    else
      fprintf(stderr, "atomcheck: %s: %s\n", o->sets, atom_strerror(rc));
    goto out;
  }

  if (o->sets_by_prefix && (rc = atom_trace_reader_sets_by_prefix(reader)) != 0) {
    fprintf(stderr, "atomcheck: %s\n", atom_strerror(rc));
    goto out;
  }
  double start = atc_now();
  if (read_trace(&ctx, reader) != 0) goto out;
  if (run->events == 0 && !o->allow_empty) {
    /* Most often a wrong file or an empty pipe: say so instead of "no violations". */
    fprintf(stderr, "atomcheck: %s: no events read (--allow-empty accepts an empty trace)\n",
            strcmp(o->path, "-") == 0 ? "<stdin>" : o->path); /* as the reader names it */
    goto out;
  }
  int finish_rc = atom_finish(s);
  atc_progress_clear(&ctx.progress);
  run->seconds = atc_now() - start;
  /* A checker that stopped (a limit, out of memory) leaves partial results: the outputs say
   * which checker and why; atom_finish's own message is not repeated here. Any other failure
   * of a checker's finish is an error (exit 2). */
  if (finish_rc != 0 && finish_rc != ATOM_ENOMEM && finish_rc != ATOM_ELIMIT)
    print_error("checking failed", finish_rc);
  if (collect_reports(run, o) != 0) {
    fputs("atomcheck: out of memory\n", stderr);
    goto out;
  }

  atom_output_options wo;
  atom_output_options_init(&wo, ATOM_OUTPUT_OPTIONS_VERSION);
  wo.format = o->format;
  wo.tool = "atomcheck";
  wo.input = o->path;
  wo.events = run->events;
  wo.rejected = run->rejected;
  wo.seconds = run->seconds;
  wo.suppressions = suppressions;
  wo.baseline = baseline;
  wo.n_baseline = n_baseline;
  if (o->max_reports == 0) wo.flags |= ATOM_OUTPUT_NO_REPORTS;
  else if (o->max_reports != SIZE_MAX) wo.max_reports = o->max_reports;
  if (o->stats && o->format == ATOM_FORMAT_JSON) wo.flags |= ATOM_OUTPUT_STATS;
  if (!o->quiet) {
    rc = atom_session_write(s, &wo, atom_write_file, stdout);
    if (rc == 0 && fflush(stdout) != 0) rc = ATOM_EIO;
    if (rc != 0) {
      fprintf(stderr, "atomcheck: cannot write the results: %s\n",
              rc == ATOM_EIO ? strerror(errno) : atom_strerror(rc));
      goto out;
    }
  }
  if (o->html && write_html(s, &wo, o->html) != 0) goto out;
  if (o->stats && (o->format != ATOM_FORMAT_JSON || o->quiet)) atc_stats_text(stderr, run);

  if (run->rejected > 0) {
    if (run->rejected > MAX_WARNINGS)
      fprintf(stderr, "atomcheck: %" PRIu64 " more ill-formed event%s not shown\n",
              run->rejected - MAX_WARNINGS, atc_plural(run->rejected - MAX_WARNINGS));
    fprintf(stderr, "atomcheck: %" PRIu64 " ill-formed event%s dropped\n", run->rejected,
            atc_plural(run->rejected));
    status = EXIT_TROUBLE;
  } else if (finish_rc != 0 && finish_rc != ATOM_ENOMEM && finish_rc != ATOM_ELIMIT) {
    status = EXIT_TROUBLE;
  } else {
    /* 1 for violations found (they are true even when a checker stopped early); else 3 when
     * some checker did not decide everything: no violation found, but the check is partial. */
    int partial = 0;
    for (size_t i = 0; i < run->n_checkers; i++) partial |= atc_checker_partial(&run->checkers[i]);
    status = shown_violations(run, &wo) > 0 ? EXIT_VIOLATIONS
             : partial                       ? EXIT_INCOMPLETE
                                             : EXIT_CLEAN;
  }

out:
  free_run(run);
  free(baseline);
  atom_suppressions_free(suppressions);
  atom_trace_reader_free(reader);
  atom_session_free(s);
  return status;
}

int main(int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof o);
  int status = parse_options(argc, argv, &o);
  if (status < 0) status = o.convert ? atc_convert(o.convert, o.path) : run_check(&o);
  free(o.specs);
  return status;
}
