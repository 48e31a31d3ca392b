/* ATOM_THREADSAFE under load: P producer threads push N events each into one session (with real
 * mutexes around their lock events, so the pushed order is a real linearization). A recorder
 * checker keeps the order the session saw; the recorded stream is then replayed serially into a
 * fresh session with the same checkers, and everything must match: event count, rejected count,
 * and every report (checker, kind, event index, occurrences). Built with clang's
 * ThreadSanitizer in CI, which must report no data race.
 *
 * usage: threadsafe-stress [PRODUCERS] [EVENTS_PER_PRODUCER]   (defaults 16 and 1000000) */
#include <atomicity.h>
#include <atomicity/sys/checker.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VARS 64
#define LOCKS 8

static const char *const checkers[] = {"aerodrome", "velodrome", "null", NULL};

typedef struct rec { /* 8 bytes per event: 16 x 10^6 events fit in 128 MB */
  uint8_t kind;
  uint8_t thread; /* producer number + 1 */
  uint16_t loc;   /* the producers use small locations */
  uint32_t target;
} rec;

typedef struct recorder {
  rec *events;
  size_t n, cap;
  atom_env *env;
} recorder;

static recorder *the_recorder; /* this program attaches one recorder */

static int rec_create(void **self, atom_env *env) {
  recorder *r = calloc(1, sizeof *r);
  if (!r) return ATOM_ENOMEM;
  r->env = env;
  *self = the_recorder = r;
  return 0;
}

static int rec_event(void *self, const atom_ev *ev) {
  recorder *r = self;
  if (ev->flags & ATOM_EV_SYNTHETIC) return 0; /* the replay's finish makes its own */
  if (r->n == r->cap) {
    size_t ncap = r->cap ? r->cap * 2 : 1 << 20;
    rec *m = realloc(r->events, ncap * sizeof *m);
    if (!m) return ATOM_ENOMEM;
    r->events = m;
    r->cap = ncap;
  }
  int space = ev->kind == ATOM_ACQUIRE || ev->kind == ATOM_RELEASE ? ATOM_SPACE_LOCK
              : ev->kind == ATOM_READ || ev->kind == ATOM_WRITE     ? ATOM_SPACE_VAR
                                                                    : 0;
  rec e = {(uint8_t)ev->kind, (uint8_t)atom_env_key(r->env, ATOM_SPACE_THREAD, ev->thread),
           (uint16_t)ev->loc, space ? (uint32_t)atom_env_key(r->env, space, ev->target) : 0};
  r->events[r->n++] = e;
  return 0;
}

static void rec_destroy(void *self) {
  recorder *r = self;
  free(r->events);
  free(r);
}

static const atom_checker recorder_checker = {
    ATOM_CHECKER_ABI_VERSION, 0x7feu, "recorder", "records the serialized order", NULL,
    rec_create, rec_event, NULL, rec_destroy, NULL, 0, NULL};

typedef struct producer {
  atom_session *s;
  pthread_mutex_t *locks;
  unsigned id;
  size_t events;  /* at least this many */
  size_t pushed;  /* exactly this many */
  int failures;
} producer;

static uint64_t next_rand(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static void *produce(void *arg) {
  producer *p = arg;
  uint64_t t = p->id + 1, rng = 0x9e3779b97f4a7c15ULL * (p->id + 1);
  size_t done = 0;
  while (done < p->events) {
    /* a transaction: lock, a few accesses (mostly to the lock's variables, sometimes not),
     * unlock; now and then an access outside any transaction */
    unsigned l = (unsigned)(next_rand(&rng) % LOCKS);
    pthread_mutex_lock(&p->locks[l]);
    p->failures += atom_begin(p->s, t, 1) != 0;
    p->failures += atom_acquire(p->s, t, 1000 + l, 2) != 0;
    done += 2;
    for (int k = 0; k < 4 && done < p->events; k++, done++) {
      uint64_t r = next_rand(&rng);
      uint64_t v = r % 16 == 0 ? r % VARS : (r % (VARS / LOCKS)) * LOCKS + l;
      p->failures += (r & 64 ? atom_write(p->s, t, v, 3) : atom_read(p->s, t, v, 4)) != 0;
    }
    p->failures += atom_release(p->s, t, 1000 + l, 5) != 0;
    pthread_mutex_unlock(&p->locks[l]);
    p->failures += atom_end(p->s, t, 6) != 0;
    done += 2;
    if (next_rand(&rng) % 8 == 0) {
      p->failures += atom_read(p->s, t, next_rand(&rng) % VARS, 7) != 0;
      done++;
    }
  }
  p->pushed = done;
  return NULL;
}

static atom_session *new_session(unsigned flags, int with_recorder) {
  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  o.flags = flags;
  atom_session *s = NULL;
  if (atom_session_new(&s, &o) != 0) return NULL;
  for (size_t i = 0; checkers[i]; i++)
    if (atom_session_attach(s, checkers[i]) != 0) {
      fprintf(stderr, "attach %s: %s\n", checkers[i], atom_last_error());
      atom_session_free(s);
      return NULL;
    }
  if (with_recorder && atom_session_attach_checker(s, &recorder_checker, NULL) != 0) {
    atom_session_free(s);
    return NULL;
  }
  return s;
}

static int same_reports(const atom_session *a, const atom_session *b) {
  if (atom_report_count(a) != atom_report_count(b)) {
    printf("report counts differ: %zu vs %zu\n", atom_report_count(a), atom_report_count(b));
    return 0;
  }
  for (size_t i = 0; i < atom_report_count(a); i++) {
    const atom_report *x = atom_report_get(a, i), *y = atom_report_get(b, i);
    if (strcmp(atom_report_checker(x), atom_report_checker(y)) ||
        strcmp(atom_report_kind(x), atom_report_kind(y)) ||
        atom_report_event_index(x) != atom_report_event_index(y) ||
        atom_report_occurrences(x) != atom_report_occurrences(y)) {
      printf("report %zu differs: %s/%s@%llu x%llu vs %s/%s@%llu x%llu\n", i,
             atom_report_checker(x), atom_report_kind(x),
             (unsigned long long)atom_report_event_index(x),
             (unsigned long long)atom_report_occurrences(x), atom_report_checker(y),
             atom_report_kind(y), (unsigned long long)atom_report_event_index(y),
             (unsigned long long)atom_report_occurrences(y));
      return 0;
    }
  }
  return 1;
}

int main(int argc, char **argv) {
  unsigned producers = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
  size_t per = argc > 2 ? (size_t)atoll(argv[2]) : 1000000;
  if (producers < 1 || producers > 200 || per < 1) {
    fprintf(stderr, "usage: threadsafe-stress [PRODUCERS 1..200] [EVENTS_PER_PRODUCER]\n");
    return 2;
  }
  atom_session *s = new_session(ATOM_THREADSAFE, 1);
  if (!s) return 1;
  pthread_mutex_t locks[LOCKS];
  for (int i = 0; i < LOCKS; i++) pthread_mutex_init(&locks[i], NULL);
  pthread_t *th = calloc(producers, sizeof *th);
  producer *p = calloc(producers, sizeof *p);
  if (!th || !p) return 1;
  for (unsigned i = 0; i < producers; i++) {
    p[i] = (producer){s, locks, i, per, 0, 0};
    if (pthread_create(&th[i], NULL, produce, &p[i]) != 0) return 1;
  }
  int failures = 0;
  uint64_t total = 0;
  for (unsigned i = 0; i < producers; i++) {
    pthread_join(th[i], NULL);
    failures += p[i].failures;
    total += p[i].pushed;
  }
  atom_finish(s);
  atom_session_stats st = {.version = ATOM_SESSION_STATS_VERSION};
  atom_session_stats_get(s, &st);
  recorder *r = the_recorder;

  atom_session *replay = new_session(0, 0);
  if (!replay || !r) return 1;
  for (size_t i = 0; i < r->n; i++) {
    atom_event e = {r->events[i].kind, 0, r->events[i].thread, r->events[i].target,
                    r->events[i].loc};
    if (atom_push(replay, &e) != 0) {
      printf("replay rejected event %zu: %s\n", i, atom_last_error());
      return 1;
    }
  }
  atom_finish(replay);
  atom_session_stats st2 = {.version = ATOM_SESSION_STATS_VERSION};
  atom_session_stats_get(replay, &st2);
  printf("%u producers x %zu events: %llu events, %llu rejected, %zu recorded, %d push failures\n",
         producers, per, (unsigned long long)st.events, (unsigned long long)st.rejected, r->n,
         failures);
  int ok = failures == 0 && st.rejected == 0 && st.events == total &&
           r->n == st.events && st2.events == st.events && st2.rejected == 0;
  int same = same_reports(s, replay);
  printf("reports: %zu live, %zu replayed: %s\n", atom_report_count(s), atom_report_count(replay),
         same ? "identical" : "DIFFERENT");
  atom_session_free(replay);
  atom_session_free(s);
  for (int i = 0; i < LOCKS; i++) pthread_mutex_destroy(&locks[i]);
  free(th);
  free(p);
  return ok && same ? 0 : 1;
}
