/* A library with an atomic function, loaded by a relative path (dl_main.c). bump() is not
 * atomic: between its read and its write, hook() lets another thread write the counter. */
long counter;
void (*hook)(void);

__attribute__((noinline)) void bump(void) {
  long v = counter;
  hook();
  counter = v + 1;
}
