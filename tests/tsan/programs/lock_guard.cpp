// The same pattern with std::mutex and std::lock_guard: bump()'s lock block is named after
// bump() and the line of its lock_guard, not std::mutex::lock or gthr-default.h.
#include <cstdio>
#include <mutex>
#include <thread>

static std::mutex mu;
static int counter;

static void bump() {
  std::lock_guard<std::mutex> g(mu); // BUMP-LOCK
  int c = counter;
  counter = c + 1;
}

static void reset() { counter = 0; }

int main() {
  std::thread a(bump), b(reset);
  a.join();
  b.join();
  std::printf("done\n");
  return 0;
}
