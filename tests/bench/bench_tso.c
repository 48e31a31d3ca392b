/* stub benchmark: to be written */
#include <stdio.h>
int main(void) {
  puts("not yet implemented");
  return 0;
}
