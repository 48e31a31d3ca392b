/* A compression-like pipeline for the tsan-rt benchmark (bench_tsan_rt.py): a reader thread
 * fills 4 KB blocks with generated data and hands each block through a queue to two
 * compressor threads, which run-length encode it into the block's own output buffer and hand
 * it on through a second queue to the writer (the main thread), which checksums the output in
 * block order. Each compressor adds its byte counts to shared statistics under a mutex (the
 * atomic function account_block). 256 blocks; prints the checksum and the ratio.
 *
 * ATOMICITY_OPTIONS: atomic=account_block */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 256
#define BLOCK 4096
#define COMPRESSORS 2
#define QCAP 8

typedef struct block {
  int seq;
  unsigned char in[BLOCK];
  unsigned char out[2 * BLOCK];
  int out_len;
} block;

typedef struct queue {
  block *items[QCAP];
  int head, count;
  pthread_mutex_t mu;
  pthread_cond_t not_empty, not_full;
} queue;

static queue to_compress = {.mu = PTHREAD_MUTEX_INITIALIZER,
                            .not_empty = PTHREAD_COND_INITIALIZER,
                            .not_full = PTHREAD_COND_INITIALIZER};
static queue to_write = {.mu = PTHREAD_MUTEX_INITIALIZER,
                         .not_empty = PTHREAD_COND_INITIALIZER,
                         .not_full = PTHREAD_COND_INITIALIZER};
static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;
static long bytes_in, bytes_out;

static void q_put(queue *q, block *b) {
  pthread_mutex_lock(&q->mu);
  while (q->count == QCAP) pthread_cond_wait(&q->not_full, &q->mu);
  q->items[(q->head + q->count++) % QCAP] = b;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->mu);
}

static block *q_take(queue *q) {
  pthread_mutex_lock(&q->mu);
  while (q->count == 0) pthread_cond_wait(&q->not_empty, &q->mu);
  block *b = q->items[q->head];
  q->head = (q->head + 1) % QCAP;
  q->count--;
  pthread_cond_signal(&q->not_full);
  pthread_mutex_unlock(&q->mu);
  return b;
}

void account_block(long in, long out) {
  pthread_mutex_lock(&stats_mu);
  bytes_in += in;
  bytes_out += out;
  pthread_mutex_unlock(&stats_mu);
}

static void *reader(void *arg) {
  (void)arg;
  unsigned state = 12345;
  for (int s = 0; s < BLOCKS; s++) {
    block *b = malloc(sizeof *b);
    if (!b) abort();
    b->seq = s;
    for (int i = 0; i < BLOCK; i++) {
      if (i % 16 == 0) state = state * 1103515245u + 12345u;
      b->in[i] = (unsigned char)((state >> 16) % 4); /* runs of 16 equal bytes */
    }
    q_put(&to_compress, b);
  }
  for (int c = 0; c < COMPRESSORS; c++) q_put(&to_compress, NULL);
  return NULL;
}

static void *compressor(void *arg) {
  (void)arg;
  block *b;
  while ((b = q_take(&to_compress)) != NULL) {
    int n = 0;
    for (int i = 0; i < BLOCK;) {
      int j = i;
      while (j < BLOCK && j - i < 255 && b->in[j] == b->in[i]) j++;
      b->out[n++] = (unsigned char)(j - i);
      b->out[n++] = b->in[i];
      i = j;
    }
    b->out_len = n;
    account_block(BLOCK, n);
    q_put(&to_write, b);
  }
  return NULL;
}

int main(void) {
  pthread_t r, c[COMPRESSORS];
  pthread_create(&r, NULL, reader, NULL);
  for (int i = 0; i < COMPRESSORS; i++) pthread_create(&c[i], NULL, compressor, NULL);
  block *pending[BLOCKS] = {0};
  unsigned long sum = 0;
  int next = 0;
  for (int got = 0; got < BLOCKS; got++) {
    block *b = q_take(&to_write);
    pending[b->seq] = b;
    for (; next < BLOCKS && pending[next]; next++) { /* in block order */
      for (int i = 0; i < pending[next]->out_len; i++)
        sum = sum * 31 + pending[next]->out[i];
      free(pending[next]);
    }
  }
  pthread_join(r, NULL);
  for (int i = 0; i < COMPRESSORS; i++) pthread_join(c[i], NULL);
  printf("checksum %lu ratio %.3f\n", sum, (double)bytes_out / (double)bytes_in);
  return 0;
}
