/* Writes a JSON document that exercises every corner of atomcheck's JSON writer; the checks are
 * in test_atomcheck.py (JsonWriter), which parses the output with Python's json module.
 * `json-writer-test pretty|compact`. Exit status 1 if atc_json_finish() reports a problem. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_writer.h"

static void member_raw(atc_json *j, const char *key, const char *bytes, size_t n) {
  atc_json_key(j, key);
  atc_json_string_n(j, bytes, n);
}

int main(int argc, char **argv) {
  int pretty = argc > 1 && strcmp(argv[1], "pretty") == 0;
  atc_json j;
  atc_json_init(&j, stdout, pretty);
  atc_json_object_begin(&j);

  atc_json_member_string(&j, "escapes", "quote\" backslash\\ slash/ tab\t nl\n cr\r bs\b ff\f");
  static const char controls[] = "\x01\x02\x1f\x7f";
  member_raw(&j, "controls", controls, sizeof controls - 1);
  static const char nul[] = "a\0b";
  member_raw(&j, "nul", nul, sizeof nul - 1);
  atc_json_member_string(&j, "utf8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  static const char invalid[] = "\xff";
  member_raw(&j, "invalid_byte", invalid, sizeof invalid - 1);
  static const char overlong[] = "\xc0\xaf";
  member_raw(&j, "overlong", overlong, sizeof overlong - 1);
  static const char surrogate[] = "\xed\xa0\x80";
  member_raw(&j, "surrogate", surrogate, sizeof surrogate - 1);
  static const char truncated[] = "x\xe2\x82";
  member_raw(&j, "truncated", truncated, sizeof truncated - 1);
  static const char too_big[] = "\xf4\x90\x80\x80";
  member_raw(&j, "too_big", too_big, sizeof too_big - 1);
  atc_json_member_string(&j, "empty", "");
  atc_json_key(&j, "null_string");
  atc_json_string(&j, NULL);

  atc_json_member_uint(&j, "uint_max", UINT64_MAX);
  atc_json_key(&j, "int_min");
  atc_json_int(&j, INT64_MIN);
  atc_json_key(&j, "half");
  atc_json_double(&j, 0.5);
  atc_json_key(&j, "nan");
  atc_json_double(&j, NAN);
  atc_json_key(&j, "inf");
  atc_json_double(&j, INFINITY);
  atc_json_key(&j, "yes");
  atc_json_bool(&j, 1);
  atc_json_key(&j, "no");
  atc_json_bool(&j, 0);
  atc_json_key(&j, "nothing");
  atc_json_null(&j);

  atc_json_key(&j, "empty_object");
  atc_json_object_begin(&j);
  atc_json_object_end(&j);
  atc_json_key(&j, "empty_array");
  atc_json_array_begin(&j);
  atc_json_array_end(&j);
  atc_json_key(&j, "nested");
  atc_json_array_begin(&j);
  atc_json_uint(&j, 1);
  atc_json_array_begin(&j);
  atc_json_array_end(&j);
  atc_json_object_begin(&j);
  atc_json_member_uint(&j, "k", 2);
  atc_json_object_end(&j);
  atc_json_array_begin(&j);
  atc_json_string(&j, "deep");
  atc_json_array_end(&j);
  atc_json_array_end(&j);
  atc_json_key(&j, "key \"with\" escapes\n");
  atc_json_uint(&j, 3);

  atc_json_object_end(&j);
  return atc_json_finish(&j) == 0 ? 0 : 1;
}
