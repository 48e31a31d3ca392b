/* Runs a fuzz target over files and directories of inputs without libFuzzer: the fuzz-smoke
 * tests of the normal test run replay the seed corpora through it. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int run_path(const char *path, size_t *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror(path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) {
    ++*count;
    return run_file(path);
  }
  DIR *d = opendir(path);
  if (!d) return 1;
  int bad = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    bad |= run_path(sub, count);
  }
  closedir(d);
  return bad;
}

int main(int argc, char **argv) {
  size_t count = 0;
  int bad = 0;
  for (int i = 1; i < argc; i++) bad |= run_path(argv[i], &count);
  printf("%zu inputs replayed\n", count);
  return bad || count == 0;
}
