/* A small streaming JSON writer: objects, arrays, strings, numbers, booleans, null.
 *
 * The writer tracks commas and indentation; the caller only says what comes next. Strings are
 * escaped per RFC 8259: quote, backslash and control characters are escaped, valid UTF-8 passes
 * through unchanged, and each byte of an invalid UTF-8 sequence becomes U+FFFD, so the output
 * is always valid UTF-8 JSON whatever bytes the names contain. */
#ifndef ATOMICITY_EXAMPLES_JSON_WRITER_H
#define ATOMICITY_EXAMPLES_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Deepest nesting the writer tracks; deeper documents set the error flag. */
#define ATC_JSON_MAX_DEPTH 32

typedef struct atc_json {
  FILE *out;
  int pretty;                              /* newlines and two-space indentation */
  int depth;                               /* open containers */
  int error;                               /* misuse or nesting too deep */
  unsigned char has_items[ATC_JSON_MAX_DEPTH]; /* the container at each depth is non-empty */
  unsigned char after_key;                 /* a key was written, its value comes next */
} atc_json;

void atc_json_init(atc_json *j, FILE *out, int pretty);

void atc_json_object_begin(atc_json *j);
void atc_json_object_end(atc_json *j);
void atc_json_array_begin(atc_json *j);
void atc_json_array_end(atc_json *j);

/** The key of the next member of the current object. */
void atc_json_key(atc_json *j, const char *key);

/** A string value; NULL writes null. */
void atc_json_string(atc_json *j, const char *s);
/** A string value of @p n bytes (may contain NUL bytes, written as \u0000). */
void atc_json_string_n(atc_json *j, const char *s, size_t n);
void atc_json_uint(atc_json *j, uint64_t v);
void atc_json_int(atc_json *j, int64_t v);
/** A number; NaN and infinities (not representable in JSON) are written as null. */
void atc_json_double(atc_json *j, double v);
void atc_json_bool(atc_json *j, int v);
void atc_json_null(atc_json *j);

/** Shorthands for a member: key then value. */
void atc_json_member_string(atc_json *j, const char *key, const char *s);
void atc_json_member_uint(atc_json *j, const char *key, uint64_t v);

/**
 * End the document with a newline.
 * @return 0, or -1 if the document is incomplete, the writer was misused, or the stream has an
 *         error.
 */
int atc_json_finish(atc_json *j);

#endif
