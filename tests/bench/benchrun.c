#include "benchrun.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

double br_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

size_t br_split(char *s, char sep, char **items, size_t max) {
  size_t n = 0;
  for (char *p = s; n < max;) {
    items[n++] = p;
    char *q = strchr(p, sep);
    if (!q) break;
    *q = '\0';
    p = q + 1;
  }
  return n;
}

int br_run(const char *prog, const char *spec, const tg_params *p, atom_event *buf,
           size_t block, br_result *r) {
  memset(r, 0, sizeof *r);
  r->before.version = r->after.version = ATOM_CHECKER_STATS_VERSION;
  atom_session *s = NULL;
  int rc = atom_session_new(&s, NULL);
  if (rc == 0) rc = atom_session_attach(s, spec);
  if (rc != 0) {
    fprintf(stderr, "%s: %s: %s (%s)\n", prog, spec, atom_strerror(rc), atom_last_error());
    atom_session_free(s);
    return rc;
  }
  tg_gen *g;
  const char *why = NULL;
  if (tg_new(&g, p, &why) != 0) {
    fprintf(stderr, "%s: %s\n", prog, why ? why : "generator failed");
    atom_session_free(s);
    return -1;
  }
  size_t n;
  while ((n = tg_next(g, buf, block)) > 0) {
    size_t done = 0;
    double t0 = br_now();
    rc = atom_push_many(s, buf, n, &done);
    r->push_s += br_now() - t0;
    r->events += done;
    if (rc != 0) {
      fprintf(stderr, "%s: %s: push failed at event %llu: %s\n", prog, spec,
              (unsigned long long)(r->events - 1), atom_last_error());
      break;
    }
  }
  tg_free(g);
  if (rc == 0) rc = atom_checker_stats_get(s, 0, &r->before);
  if (rc == 0) {
    double t0 = br_now();
    rc = atom_finish(s);
    r->finish_s = br_now() - t0;
    if (rc != 0)
      fprintf(stderr, "%s: %s: %s (%s)\n", prog, spec, atom_strerror(rc), atom_last_error());
  }
  if (rc == 0) rc = atom_checker_stats_get(s, 0, &r->after);
  r->reports = atom_report_count(s) + atom_report_dropped(s);
  for (size_t i = 0; i < atom_report_count(s); i++)
    r->bound_reached += strcmp(atom_report_kind(atom_report_get(s, i)), "bound-reached") == 0;
  atom_checker_status st = {.version = ATOM_CHECKER_STATUS_VERSION};
  if (atom_checker_status_get(s, 0, &st) == 0 && st.state == ATOM_CHECKER_INCOMPLETE)
    r->bound_reached++; /* a bound is reported through the status, not as a report */
  atom_session_free(s);
  return rc;
}
