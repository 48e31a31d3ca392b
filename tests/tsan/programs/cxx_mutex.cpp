// A stale read with std::mutex on a heap object: withdraw() reads the balance under the lock,
// lets it go, and writes a balance computed from what it read. The schedule is forced with
// pipes (not recorded): the victim stops between its two lock blocks until the other thread
// has withdrawn. Reports must name withdraw() and its lines, not std::mutex::lock or
// gthr-default.h, and the account as a heap block allocated in make_account().
#include <cstdio>
#include <mutex>
#include <thread>
#include <unistd.h>

struct Account {
  std::mutex mu;
  int balance = 100;
};

static Account *account;
static int go[2], done[2];

static Account *make_account() {
  return new Account(); // ACCOUNT-NEW
}

static void pass(int fd) {
  char c = 0;
  if (write(fd, &c, 1) != 1) std::perror("write");
}

static void await(int fd) {
  char c;
  if (read(fd, &c, 1) != 1) std::perror("read");
}

void withdraw(int amount, bool victim) {
  account->mu.lock(); // WITHDRAW-LOCK
  int seen = account->balance;
  account->mu.unlock();
  if (victim) {
    pass(go[1]);
    await(done[0]);
  }
  account->mu.lock(); // WITHDRAW-LOCK2
  account->balance = seen - amount; // WITHDRAW-WRITE
  account->mu.unlock();
}

static void victim() { withdraw(60, true); }

static void interferer() {
  await(go[0]);
  withdraw(60, false);
  pass(done[1]);
}

int main() {
  if (pipe(go) != 0 || pipe(done) != 0) return 2;
  account = make_account();
  std::thread a(victim), b(interferer);
  a.join();
  b.join();
  std::printf("balance %d\n", account->balance);
  delete account;
  return 0;
}
