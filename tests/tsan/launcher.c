/* Starts test_tsan_rt.py (argv[1..]) with python3. Under `meson test --setup=valgrind` (which
 * sets ATOM_UNDER_VALGRIND) the suite is skipped: its programs are built and run with clang's
 * instrumentation and the runtime, which is not what Memcheck looks at. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (getenv("ATOM_UNDER_VALGRIND")) {
    puts("tsan: skipped under valgrind");
    return 77;
  }
  char **args = calloc((size_t)argc + 2, sizeof *args);
  if (!args) return 1;
  args[0] = "python3";
  for (int i = 1; i < argc; i++) args[i] = argv[i];
  execvp("python3", args);
  perror("tsan launcher: python3");
  return 1;
}
