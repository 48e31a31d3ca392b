/* The binary trace format .atb, version 1 (doc/trace-format.md, "Binary format (.atb)"):
 * constants and little-endian field access shared by its reader (atb_reader.c) and writer
 * (atb_writer.c). Everything here is part of the file format: change it only with a new
 * version.
 *
 *   file   = header block* end-block
 *   header = magic[8] u32 version u32 flags                                      (16 bytes)
 *   block  = u32 type, u32 checksum, u32 names_size, u32 n_events                (16 bytes)
 *            names[names_size]  (entries, zero-padded to a multiple of 8)
 *            event[n_events]    (16 bytes each)
 *   entry  = u8 what (1 name, 2 directive), u8 space, u16 pos, u32 len, u64 key, len bytes
 *            (pos: a directive comes before record pos of its block; 0 for a name)
 *   event  = u32 thread, u32 target, u64 loc | kind << 56 | flags << 60
 *
 * The checksum covers names_size, n_events and the payload (atom__checksum32, seeded with the
 * block type). Every block starts at a multiple of 8 bytes, so a mapped file has its event
 * records aligned. */
#ifndef ATOM_TRACE_ATB_FORMAT_H
#define ATOM_TRACE_ATB_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "support/byteorder.h"

#include "atomicity/trace.h"

#define ATB_MAGIC "ATB\0\r\n\x1a\n" /* 8 bytes: CR LF and ^Z catch text-mode mangling */
#define ATB_MAGIC_LEN 8
#define ATB_VERSION 1u
#define ATB_HEADER_SIZE 16
#define ATB_BLOCK_HEADER 16
#define ATB_RECORD 16
#define ATB_ENTRY_HEADER 16

#define ATB_BLOCK_DATA 1u /* names and events */
#define ATB_BLOCK_END 2u  /* the last block: names_size and n_events are 0 */

#define ATB_ENTRY_NAME 1u      /* the name of the next key of `space` (key = count + 1) */
#define ATB_ENTRY_DIRECTIVE 2u /* a #name directive: display name of key in space (1..4) */

/* Bounds (doc/limits.md). */
#define ATB_MAX_EVENTS ((uint32_t)1 << 16)      /* events per block */
#define ATB_MAX_NAMES_SIZE ((uint32_t)64 << 20) /* bytes of a block's name entries */
#define ATB_MAX_KEY (UINT32_MAX - 1)            /* names per space */
#define ATB_LOC_BITS 56
#define ATB_LOC_MASK (((uint64_t)1 << ATB_LOC_BITS) - 1)

/* What the writer puts in one block: many events per checksum, small enough to stream. */
#define ATB_WRITER_EVENTS 4096u
#define ATB_WRITER_NAMES ((size_t)1 << 20)

/* The space of an event's target by kind (0: the kind has no target); kinds 1..10. */
static const unsigned char atb_target_space[16] = {
    0, ATOM_SPACE_VAR, ATOM_SPACE_VAR, ATOM_SPACE_LOCK, ATOM_SPACE_LOCK, ATOM_SPACE_THREAD,
    ATOM_SPACE_THREAD, 0, 0, 0, ATOM_SPACE_VAR, 0, 0, 0, 0, 0};

/* The one non-zero flag each kind may carry (0: none). */
static const unsigned char atb_allowed_flag[16] = {0, ATOM_FLAG_ACQUIRE, ATOM_FLAG_RELEASE};

/* ---- reader side, called by the generic reader (reader_input.c, std_reader.c) ---------- */

struct atom__atb;

/* 1 if the first bytes p[0..n) are those of an .atb file (its magic's first 4 bytes). */
static inline int atom__atb_sniff(const void *p, size_t n) {
  return n >= 4 && memcmp(p, ATB_MAGIC, 4) == 0;
}

/* Make r read .atb: from data[0..size) (memory), or from fd after the `have` bytes already
 * read from it into `head`. The header is checked by the first read, so that its problems are
 * parse errors like any other. Returns 0 or ATOM_ENOMEM. */
int atom__atb_open(atom_trace_reader *r, const unsigned char *data, size_t size, int fd,
                   const unsigned char *head, size_t have, uint64_t total);
void atom__atb_free(atom_trace_reader *r);
/* atom_trace_reader_next() and atom__trace_reader_fill() of an .atb reader. */
int atom__atb_next(atom_trace_reader *r, atom_event *ev);
int atom__atb_fill(atom_trace_reader *r, size_t max);
uint64_t atom__atb_name_count(const atom_trace_reader *r, int what);
const char *atom__atb_name(const atom_trace_reader *r, int what, uint64_t key);
void atom__atb_progress(const atom_trace_reader *r, uint64_t *consumed, uint64_t *total);

/* ---- writer side, called by std_writer.c ----------------------------------------------- */

struct atom__atb_writer;
/* A writer of .atb to fd (not owned); `display` names it in messages (borrowed: it must
 * outlive the writer). NULL when out of memory. Writes the header on the first flush. */
struct atom__atb_writer *atom__atb_writer_new(int fd, const char *display);
/* The checks of the STD writer have been made by the caller. */
int atom__atb_writer_set_name(struct atom__atb_writer *w, int what, uint64_t key, const char *name,
                              size_t len);
int atom__atb_writer_write_name(struct atom__atb_writer *w, int what, uint64_t key,
                                const char *text, size_t len);
int atom__atb_writer_write(struct atom__atb_writer *w, const atom_event *ev);
/* Write what is buffered and the end block, then free w (also on error). 0 or ATOM_EIO. */
int atom__atb_writer_close(struct atom__atb_writer *w);

#endif
