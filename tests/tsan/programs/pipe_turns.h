/* Turns between the threads of a test program, forced through pipes: one byte passes each
 * turn. The runtime does not record read() and write() on pipes, so the turns order the
 * threads without adding a synchronization the checkers would see. */
#ifndef PIPE_TURNS_H
#define PIPE_TURNS_H

#include <stdio.h>
#include <unistd.h>

/* Give the turn: write one byte to the pipe's write end @p fd. */
static inline void pass(int fd) {
  char c = 0;
  if (write(fd, &c, 1) != 1) perror("write");
}

/* Wait for the turn: read one byte from the pipe's read end @p fd. */
static inline void await(int fd) {
  char c;
  if (read(fd, &c, 1) != 1) perror("read");
}

#endif
