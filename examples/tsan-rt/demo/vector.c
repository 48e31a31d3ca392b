/* The Vector bug (the constructor Vector(Collection c) of Java's library, the example of the
 * commit-node paper): a vector is created as a copy of another one, which another thread
 * clears meanwhile. Every method of the source is synchronized, but the copy calls two of them
 * (size, then copy the elements) and the clear runs in between: the copy gets the old size and
 * the cleared elements.
 *
 * ATOMICITY_OPTIONS: atomic=vector_init_copy,vector_clear
 * Buggy: the copy has 3 elements, all 0. Fixed (-DFIXED): 3 elements 1 2 3. */
#define _POSIX_C_SOURCE 200809L /* pipes */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "demo.h"

#define CAPACITY 16

struct vector {
  pthread_mutex_t lock;
  size_t size;
  int data[CAPACITY];
};

size_t vector_size(struct vector *v) {
  pthread_mutex_lock(&v->lock);
  size_t n = v->size;
  pthread_mutex_unlock(&v->lock);
  return n;
}

/* Copy the first n elements into dst (like toArray into an array of the size seen before). */
void vector_copy_out(struct vector *v, int *dst, size_t n) {
  pthread_mutex_lock(&v->lock);
  memcpy(dst, v->data, n * sizeof *dst);
  pthread_mutex_unlock(&v->lock);
}

void vector_clear(struct vector *v) {
  pthread_mutex_lock(&v->lock);
  v->size = 0;
  memset(v->data, 0, sizeof v->data);
  pthread_mutex_unlock(&v->lock);
}

#ifndef FIXED
void vector_init_copy(struct vector *dst, struct vector *src) {
  pthread_mutex_init(&dst->lock, NULL);
  size_t n = vector_size(src); /* synchronized ... */
  window();                    /* ... the source is cleared here ... */
  dst->size = n;
  vector_copy_out(src, dst->data, n); /* ... synchronized again: old size, new contents */
}
#else
void vector_init_copy(struct vector *dst, struct vector *src) {
  pthread_mutex_init(&dst->lock, NULL);
  pthread_mutex_lock(&src->lock); /* size and elements under one lock */
  dst->size = src->size;
  memcpy(dst->data, src->data, src->size * sizeof *dst->data);
  pthread_mutex_unlock(&src->lock);
  window();
}
#endif

static struct vector source = {PTHREAD_MUTEX_INITIALIZER, 3, {1, 2, 3}};
static struct vector copy;

static void make_copy(void) { vector_init_copy(&copy, &source); }
static void clear_source(void) { vector_clear(&source); }

int main(void) {
  if (demo_run(make_copy, clear_source) != 0) return 2;
  printf("copy has %zu elements:", copy.size);
  for (size_t i = 0; i < copy.size; i++) printf(" %d", copy.data[i]);
  printf("\n");
  return 0;
}
