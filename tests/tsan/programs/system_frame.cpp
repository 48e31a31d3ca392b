// One bug twice, under library frames: update() (atomic) reads the balance and, after the
// other thread has written it, writes what it computed. The other thread's write, outside any
// atomic function, is made by std::fill_n, a function of the C++ library's headers (not
// inlined at -fno-inline): the write's innermost frame is a library frame, and the user's line
// (marked below) is the frame above it. The two rounds call two different instantiations of
// fill_n from that one line, so their stacks differ in the library frame and in the address of
// the call in reset(), yet both are the same bug at the same line: one report with two
// occurrences. The schedule is forced with
// pipes (not recorded).
#include <algorithm>
#include <cstdio>
#include <thread>
#include <unistd.h>

static int balance = 100;
static int go[2], done[2];

static void pass(int fd) {
  char c = 0;
  if (write(fd, &c, 1) != 1) std::perror("write");
}

static void await(int fd) {
  char c;
  if (read(fd, &c, 1) != 1) std::perror("read");
}

void update(int amount) {
  int seen = balance;
  pass(go[1]);
  await(done[0]);
  balance = seen - amount;
}

static void reset(int round) {
  round ? (void)std::fill_n(&balance, 1L, 0) : (void)std::fill_n(&balance, 1, 0); // RESET-LINE
}

static void victim() {
  for (int i = 0; i < 2; i++) update(10);
}

static void interferer() {
  for (int i = 0; i < 2; i++) {
    await(go[0]);
    reset(i);
    pass(done[1]);
  }
}

int main() {
  if (pipe(go) != 0 || pipe(done) != 0) return 2;
  std::thread a(victim), b(interferer);
  a.join();
  b.join();
  std::printf("balance %d\n", balance);
  return 0;
}
