/* What the benchmark programs share: a clock, a list splitter, and one timed run of a checker
 * over a generated trace. */
#ifndef ATOM_BENCH_BENCHRUN_H
#define ATOM_BENCH_BENCHRUN_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity.h"
#include "tracegen.h"

/** Monotonic time in seconds. */
double br_now(void);

/** Split @p s at @p sep in place into at most @p max items. @return the number of items. */
size_t br_split(char *s, char sep, char **items, size_t max);

typedef struct br_result {
  double push_s, finish_s;   /* time in atom_push_many, in atom_finish */
  uint64_t events;           /* events pushed */
  atom_checker_stats before; /* the checker's figures after the last push */
  atom_checker_stats after;  /* ... and after atom_finish */
  size_t reports;            /* distinct reports, stored or dropped */
  size_t bound_reached;      /* reports of kind "bound-reached", plus 1 if it ended INCOMPLETE */
} br_result;

/**
 * Push the trace of @p p (in blocks of @p block events through @p buf) into a new session
 * with checker @p spec, then finish. Errors are printed with @p prog as prefix.
 * @return 0, an ATOM_E* code, or -1 if the generator failed.
 */
int br_run(const char *prog, const char *spec, const tg_params *p, atom_event *buf,
           size_t block, br_result *r);

#endif
