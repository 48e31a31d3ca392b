/* The StringBuffer append bug: appending one buffer to another reads the source's length under
 * its lock, releases it, and copies that many characters under a second acquisition. A thread
 * that truncates the source in between makes the copy ask for characters that are gone (Java's
 * StringBuffer.append(StringBuffer) throws StringIndexOutOfBoundsException there).
 *
 * Nothing forces the schedule (DEMO_NATURAL): a natural run rarely shows the bug; run it with
 * schedule=perturb (doc/tsan-rt.md, "Finding bugs that hide").
 *
 * ATOMICITY_OPTIONS: atomic=sb_append,sb_set_length
 * Buggy: sometimes "append failed". Fixed (-DFIXED, length and copy under one acquisition):
 * "appended 5" or "appended 0". */
#define DEMO_NATURAL
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "demo.h"

struct sbuf {
  pthread_mutex_t lock;
  int len;
  char data[32];
};

struct sbuf src = {PTHREAD_MUTEX_INITIALIZER, 5, "hello"};
struct sbuf dst = {PTHREAD_MUTEX_INITIALIZER, 0, ""};
int append_failed;

int sb_length(struct sbuf *b) {
  pthread_mutex_lock(&b->lock);
  int n = b->len;
  pthread_mutex_unlock(&b->lock);
  return n;
}

/* Copy the first n characters: @return 0 when the buffer is shorter (the copy is refused). */
int sb_get_chars(struct sbuf *b, int n, char *out) {
  pthread_mutex_lock(&b->lock);
  int ok = n <= b->len;
  if (ok) memcpy(out, b->data, (size_t)n);
  pthread_mutex_unlock(&b->lock);
  return ok;
}

int sb_append(struct sbuf *to, struct sbuf *from) {
  char tmp[32];
#ifndef FIXED
  int n = sb_length(from);                    /* the length, under one acquisition ... */
  if (!sb_get_chars(from, n, tmp)) return -1; /* ... the copy under another */
#else
  pthread_mutex_lock(&from->lock);
  int n = from->len;
  memcpy(tmp, from->data, (size_t)n);
  pthread_mutex_unlock(&from->lock);
#endif
  pthread_mutex_lock(&to->lock);
  memcpy(to->data + to->len, tmp, (size_t)n);
  to->len += n;
  pthread_mutex_unlock(&to->lock);
  return n;
}

void sb_set_length(struct sbuf *b, int n) {
  pthread_mutex_lock(&b->lock);
  b->len = n;
  pthread_mutex_unlock(&b->lock);
}

static void append_src(void) {
  if (sb_append(&dst, &src) < 0) append_failed = 1;
}

static void truncate_src(void) { sb_set_length(&src, 0); }

int main(void) {
  if (demo_run(append_src, truncate_src) != 0) return 2;
  if (append_failed) printf("append failed\n");
  else printf("appended %d\n", dst.len);
  return 0;
}
