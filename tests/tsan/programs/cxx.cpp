// C++: std::thread, std::mutex, a function-local static, virtual calls, std::atomic, an
// exception through an atomic function. The atomic function is a member function, declared
// with its demangled name (atomic=Account::deposit).
#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

struct Shape {
  virtual ~Shape() {}
  virtual int area() const { return 0; }
};
struct Square : Shape {
  int side;
  explicit Square(int s) : side(s) {}
  int area() const override { return side * side; }
};

static const std::string &greeting() {
  static std::string g("hello");
  return g;
}

class Account {
 public:
  void deposit(int amount) {
    int b = balance_;  // read ...
    if (amount < 0) throw std::invalid_argument("negative");
    pause();
    balance_ = b + amount;  // ... write: not atomic
  }
  int balance() {
    std::lock_guard<std::mutex> g(m_);
    return balance_;
  }
  std::atomic<int> pauses{0};

 private:
  void pause() {
    if (pauses.fetch_add(1) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::mutex m_;
  int balance_ = 0;
};

int main() {
  Account acc;
  std::vector<std::thread> ts;
  for (int i = 0; i < 2; i++)
    ts.emplace_back([&acc, i] {
      if (i == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      acc.deposit(10);
      try {
        acc.deposit(-1);
      } catch (const std::invalid_argument &) {
      }
    });
  for (auto &t : ts) t.join();
  Square sq(3);
  const Shape &sh = sq;
  std::printf("%s %d %d\n", greeting().c_str(), sh.area(), acc.balance());
  return 0;
}
