/* Abnormal ends: the reports are written whatever ends the program.
 *
 * A normal end (exit, main returning) is finished by rt_core.c's atexit handler. This file
 * handles the others:
 *
 *  - Fatal signals SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL. The runtime installs its handler
 *    for them at initialization, on an alternate signal stack in every thread it knows (so that
 *    a stack overflow is handled too). The program's own action for them, installed before or
 *    after, is remembered: sigaction() and signal() are intercepted for these five signals, so
 *    the program's handler cannot replace the runtime's; it runs after it.
 *  - _exit() and _Exit(), intercepted.
 *  - Two threads calling exit() at once: the second caller waits until the first one's end is
 *    finished and printed (rt_core.c's finish()), so that its own exit does not cut the output.
 *
 * At a fatal signal or _exit, the program may be in any state: another thread may hold the C
 * library's malloc or stdio locks, or die holding them. So the work is not done in the process
 * itself. The handler
 *   1. does nothing to the session when the signal hit the runtime itself (rt_busy set in this
 *      thread: its state may be half updated), except for a stack overflow (below), or when
 *      another thread already ends the run;
 *   2. takes the event lock with a bounded wait (1 s), which stops the other threads at their
 *      next event and lets the one inside a push complete it;
 *   3. forks a child with the raw fork system call (no atfork handlers run, nothing of the C
 *      library is called in between). The child is a copy of the process with one thread. On
 *      a stack of its own, it closes the open transactions, flushes the recording, runs the
 *      checkers' end (the predictive ones report there), writes the text reports, the summary
 *      and the JSON report file, and tells the parent through a pipe whether there were
 *      violations;
 *   4. waits for that answer at most crash_timeout seconds (default 10), then kills the child
 *      if it is late (a lock of the C library held by a thread that no longer exists in the
 *      child can hang it: the program still ends, with what was written so far);
 *   5. hands the signal to the program: it restores the program's action (its handler, or the
 *      default) as the real one and returns, so the faulting instruction runs again and
 *      raises the signal again (a signal sent with kill/raise/abort is raised again). A program
 *      killed by a signal keeps dying by it, with the program's handler run first if it has one.
 * For _exit, steps 2 to 4 run the same way, then the process exits with exitcode= when a
 * violation was found.
 *
 * The parent's work is only async-signal-safe system calls (pipe, fork, poll, read, kill,
 * waitpid, sigaction, nanosleep) plus a try-lock, so it is bounded whatever the program's
 * state. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

#define ALT_STACK_SIZE ((size_t)64 << 10)    /* the handler in the parent needs little */
#define CHILD_STACK_SIZE ((size_t)16 << 20)  /* the checkers' end and symbolization need more */
#define LOCK_WAIT_MS 1000

static const int fatal_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define N_FATAL (sizeof fatal_signals / sizeof fatal_signals[0])

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*exit_fn)(int) __attribute__((noreturn));

static sigaction_fn real_sigaction;
static exit_fn real_exit, real__exit, real__Exit;

static int installed;                    /* the handlers are in place */
static struct sigaction program_action[SIGSYS + 1]; /* the program's action per fatal signal */
static int handed_back[SIGSYS + 1];      /* the program's action is the real one again */
static int timeout_s = 10;
static void *child_stack;                /* CHILD_STACK_SIZE bytes, reserved, not committed */
static int exit_callers;                 /* threads that called exit() */
static RT_TLS void *alt_stack;           /* this thread's alternate signal stack, if ours */
static RT_TLS uintptr_t stack_low;       /* lowest address of this thread's stack, 0 unknown */

static int is_fatal(int sig) {
  for (size_t i = 0; i < N_FATAL; i++)
    if (fatal_signals[i] == sig) return 1;
  return 0;
}

/* Resolved once at initialization (dlsym is not for signal handlers); lazily for calls that
 * come before it. */
static void resolve(void) {
  if (!real_sigaction) real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  if (!real_exit) real_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
  if (!real__exit) real__exit = (exit_fn)dlsym(RTLD_NEXT, "_exit");
  if (!real__Exit) real__Exit = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
}

void rt_real_exit(int status) {
  if (real__exit) real__exit(status);
  for (;;) syscall(SYS_exit_group, status);
}

/* Messages from a signal handler: write(2) only. */
static void say(const char *a, const char *b, const char *c, const char *d) {
  char buf[256];
  size_t n = 0;
  const char *parts[] = {"atomicity-rt: ", a, b, c, d, "\n"};
  for (size_t i = 0; i < 6; i++)
    for (const char *p = parts[i]; p && *p && n < sizeof buf; p++) buf[n++] = *p;
  ssize_t k = write(2, buf, n);
  (void)k;
}

static void decimal(char out[16], long v) {
  char tmp[16];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v && n < sizeof tmp - 1);
  size_t i = 0;
  while (n) out[i++] = tmp[--n];
  out[i] = '\0';
}

/* ---- the child */

static int child_pipe = -1;

static void child_main(void) {
  char answer = rt_end_child() ? '1' : '0';
  ssize_t k = write(child_pipe, &answer, 1);
  (void)k;
  syscall(SYS_exit_group, 0);
  for (;;) {
  }
}

/* Run child_main on a stack of its own: the handler runs on the small alternate stack (or on
 * what is left of an overflowed one), and the checkers' end needs room. x86_64 only, as the
 * runtime. */
static void run_child(void) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (size_t i = 0; i < N_FATAL; i++) real_sigaction(fatal_signals[i], &dfl, NULL);
  real_sigaction(SIGALRM, &dfl, NULL);
  alarm((unsigned)timeout_s + 1); /* if the parent is gone, the child still ends */
  if (!child_stack) child_main();
  uintptr_t top = ((uintptr_t)child_stack + CHILD_STACK_SIZE) & ~(uintptr_t)15;
  __asm__ volatile("mov %0, %%rsp\n\tcall *%1\n\tud2" : : "r"(top), "r"(child_main) : "memory");
  __builtin_unreachable();
}

/* Steps 2-4 of the head comment. @p why names the end in a timeout message.
 * @return 1 when a violation was found, 0 when none, -1 when not known. */
static int end_in_child(const char *why, long lock_wait_ms) {
  if (!rt_end_usable()) return -1;
  if (!rt_end_claim()) {
    /* Another thread ends the run (normally or at a crash): let it finish, within bounds. */
    rt_end_wait(2000L * timeout_s);
    return -1;
  }
  int locked = rt_end_trylock(lock_wait_ms);
  int fds[2];
  int answer = -1;
  if (syscall(SYS_pipe2, fds, O_CLOEXEC) == 0) {
    child_pipe = fds[1];
    long pid = syscall(SYS_fork);
    if (pid == 0) run_child();
    close(fds[1]);
    if (pid > 0) {
      struct timespec start, now;
      clock_gettime(CLOCK_MONOTONIC, &start);
      for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = (now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000L;
        long left = timeout_s * 1000L - spent;
        if (left <= 0) {
          char n[16];
          decimal(n, timeout_s);
          say("reporting at ", why, " was cut after crash_timeout=", n);
          kill((pid_t)pid, SIGKILL);
          break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        char c;
        ssize_t k = read(fds[0], &c, 1);
        if (k < 0 && errno == EINTR) continue;
        if (k == 1) answer = c == '1';
        break; /* the answer, or end of file: the child died without one */
      }
      waitpid((pid_t)pid, NULL, 0); /* fails with ECHILD if the program ignores SIGCHLD */
    }
    close(fds[0]);
  }
  rt_end_done(answer, locked);
  return answer;
}

/* ---- fatal signals */

static const char *signal_name(int sig) {
  switch (sig) {
  case SIGABRT: return "SIGABRT";
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  default: return "SIGILL";
  }
}

static void on_fatal(int sig, siginfo_t *info, void *context) {
  (void)context;
  int saved_errno = errno;
  int busy = rt_busy;
  rt_busy = 1; /* whatever runs here is not recorded */
  int sent = !info || info->si_code <= 0; /* kill, raise, abort: not a fault */
  const struct sigaction *prog = &program_action[sig];
  if (sent && !(prog->sa_flags & SA_SIGINFO) && prog->sa_handler == SIG_IGN) {
    rt_busy = busy; /* the program ignores it: so does the runtime */
    errno = saved_errno;
    return;
  }
  /* A stack overflow nearly always happens in the runtime's frames (they are the deepest):
   * its state may then be half updated, but the child is a copy that cannot harm the program,
   * so it still tries (without waiting for the lock, which this thread may hold). */
  uintptr_t addr = info ? (uintptr_t)info->si_addr : 0;
  int overflow = sig == SIGSEGV && stack_low && addr < stack_low + ((uintptr_t)64 << 10) &&
                 addr + ((uintptr_t)1 << 20) >= stack_low;
  if (!busy) end_in_child(signal_name(sig), LOCK_WAIT_MS);
  else if (overflow) end_in_child("a stack overflow", 0);
  /* Step 5: the program's action becomes the real one, and the signal comes again. */
  handed_back[sig] = 1;
  real_sigaction(sig, prog, NULL);
  if (sent) raise(sig); /* blocked until this handler returns */
  rt_busy = busy;
  errno = saved_errno;
}

void rt_crash_init(int timeout_seconds) {
  resolve();
  timeout_s = timeout_seconds > 0 ? timeout_seconds : 10;
  if (!real_sigaction || installed) return;
  void *p = mmap(NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  child_stack = p == MAP_FAILED ? NULL : p;
  struct sigaction ours;
  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = on_fatal;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  for (size_t i = 0; i < N_FATAL; i++) {
    int sig = fatal_signals[i];
    real_sigaction(sig, &ours, &program_action[sig]); /* what the program had, if anything */
  }
  installed = 1;
}

void rt_crash_thread_start(void) {
  if (!installed || alt_stack) return;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *lo;
    size_t size;
    if (pthread_attr_getstack(&attr, &lo, &size) == 0) stack_low = (uintptr_t)lo;
    pthread_attr_destroy(&attr);
  }
  stack_t old;
  if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE)) return; /* the program's */
  void *p = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  stack_t st = {.ss_sp = p, .ss_flags = 0, .ss_size = ALT_STACK_SIZE};
  if (sigaltstack(&st, NULL) != 0) {
    munmap(p, ALT_STACK_SIZE);
    return;
  }
  alt_stack = p;
}

void rt_crash_thread_end(void) {
  if (!alt_stack) return;
  stack_t cur, off = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
  /* Not while running on it, and only if it is still ours. */
  if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == alt_stack && !(cur.ss_flags & SS_ONSTACK) &&
      sigaltstack(&off, NULL) == 0) {
    munmap(alt_stack, ALT_STACK_SIZE);
    alt_stack = NULL;
  }
}

/* ---- interceptors */

/* The program's action for a fatal signal is kept, not installed, while the runtime's handler
 * is in place; it becomes the real one when the runtime hands the signal back. */
static int managed(int sig) {
  return installed && is_fatal(sig) && !handed_back[sig] && rt_end_state() != RT_END_DONE;
}

RT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (!real_sigaction) resolve();
  if (!real_sigaction) {
    errno = ENOSYS;
    return -1;
  }
  if (!managed(sig)) return real_sigaction(sig, act, old);
  struct sigaction prev = program_action[sig];
  if (act) program_action[sig] = *act;
  if (old) *old = prev;
  return 0;
}

static sighandler_t set_handler(int sig, sighandler_t handler, int flags) {
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  if (!(flags & SA_NODEFER)) sigaddset(&act.sa_mask, sig);
  act.sa_flags = flags;
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

/* signal() and bsd_signal(): BSD semantics (the handler stays, interrupted calls restart).
 * __sysv_signal()/sysv_signal(), which <signal.h> calls signal() in strict ISO/POSIX modes:
 * System V semantics (the handler is reset when it runs, the signal is not blocked). */
RT_EXPORT sighandler_t signal(int sig, sighandler_t handler);
sighandler_t signal(int sig, sighandler_t handler) { return set_handler(sig, handler, SA_RESTART); }

RT_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler);
sighandler_t bsd_signal(int sig, sighandler_t handler) {
  return set_handler(sig, handler, SA_RESTART);
}

RT_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler);
sighandler_t sysv_signal(int sig, sighandler_t handler) {
  return set_handler(sig, handler, (int)(SA_RESETHAND | SA_NODEFER));
}

RT_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler);
sighandler_t __sysv_signal(int sig, sighandler_t handler) { return sysv_signal(sig, handler); }

RT_EXPORT void _exit(int status) __attribute__((noreturn));
void _exit(int status) {
  if (!real__exit) resolve();
  if (!rt_busy) {
    rt_busy = 1;
    end_in_child("_exit", LOCK_WAIT_MS);
    status = rt_exit_status(status);
  }
  rt_real_exit(status);
}

RT_EXPORT void _Exit(int status) __attribute__((noreturn));
void _Exit(int status) {
  if (!real__Exit) resolve();
  if (!rt_busy) {
    rt_busy = 1;
    end_in_child("_Exit", LOCK_WAIT_MS);
    status = rt_exit_status(status);
  }
  if (real__Exit) real__Exit(status);
  rt_real_exit(status);
}

/* A second exit() waits until the run is finished and printed (rt_core.c's finish(), run by
 * the first caller's atexit handlers); until that end has begun, it waits at most
 * crash_timeout seconds (the first caller may still be in the program's own handlers, which
 * might wait for this thread). */
RT_EXPORT void exit(int status) __attribute__((noreturn));
void exit(int status) {
  if (!real_exit) resolve();
  if (!rt_busy && rt_end_usable() && __atomic_fetch_add(&exit_callers, 1, __ATOMIC_ACQ_REL)) {
    int busy = rt_busy;
    rt_busy = 1;
    for (long waited = 0; rt_end_state() == RT_END_RUNNING && waited < 1000L * timeout_s;
         waited++) {
      struct timespec ts = {0, 1000000L};
      nanosleep(&ts, NULL);
    }
    if (rt_end_state() == RT_END_FINISHING) rt_end_wait(-1);
    rt_busy = busy;
  }
  if (real_exit) real_exit(status);
  rt_real_exit(status);
}
