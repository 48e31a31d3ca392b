/* x++ in an atomic function: with -mllvm -tsan-instrument-read-before-write=1 the increment is
 * recorded as a read and a write, without it as a write only. */
#include <stdio.h>

int hits;

void hit(void) { hits++; }

int main(void) {
  hit();
  hit();
  printf("%d\n", hits);
  return 0;
}
