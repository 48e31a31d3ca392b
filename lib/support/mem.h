/* Accounted allocation through the user's allocator (internal).
 *
 * Every internal allocation goes through an atom__mem so that (a) the user's allocator is
 * used everywhere, (b) each checker's memory can be reported, and (c) allocation failures
 * injected by tests surface as ATOM_ENOMEM. Sizes are passed back on free and realloc (as in
 * Lua's allocator), so no header is stored per block. */
#ifndef ATOM_SUPPORT_MEM_H
#define ATOM_SUPPORT_MEM_H

#include <stddef.h>
#include <stdint.h>

typedef struct atom__allocator {
  void *(*malloc_fn)(size_t size, void *payload);
  void *(*realloc_fn)(void *ptr, size_t size, void *payload);
  void (*free_fn)(void *ptr, void *payload);
  void *payload;
} atom__allocator;

/** The system allocator (malloc/realloc/free). */
extern const atom__allocator atom__system_allocator;

struct atom_env;

typedef struct atom__mem {
  const atom__allocator *alloc; /* NULL when env is set */
  struct atom_env *env;         /* allocate through atom_env_realloc (see atom__mem_init_env) */
  size_t bytes; /* held now */
  size_t peak;  /* most ever held */
} atom__mem;

void atom__mem_init(atom__mem *m, const atom__allocator *alloc);

/* A mem whose blocks come from a checker instance's accounted allocator, atom_env_realloc():
 * the way a checker (built-in or plugin) gets its memory. The session counts the bytes against
 * the checker; m counts them too (m->bytes, m->peak). */
void atom__mem_init_env(atom__mem *m, struct atom_env *env);

/* A checker instance's state: a zeroed `size`-byte block from env's allocator, with the
 * atom__mem at byte `mem_offset` inside it set up as atom__mem_init_env() does (and counting
 * the block itself). NULL without memory. Free the block last, through that mem. */
void *atom__mem_new_state(struct atom_env *env, size_t size, size_t mem_offset);
#define ATOM__NEW_STATE(env, type, mem_field) \
  ((type *)atom__mem_new_state((env), sizeof(type), offsetof(type, mem_field)))

/* ptr NULL allocates; new_size 0 frees (returns NULL). On failure returns NULL and leaves
 * ptr untouched. old_size must be the size ptr was allocated with. */
void *atom__mem_realloc(atom__mem *m, void *ptr, size_t old_size, size_t new_size);

static inline void *atom__mem_alloc(atom__mem *m, size_t size) {
  return atom__mem_realloc(m, NULL, 0, size);
}
/* Zero-filled allocation of n * size bytes; NULL on overflow or failure. Never ask for 0
 * bytes: a zero-size block is allocated as 1 byte and would be freed with the wrong size. */
void *atom__mem_calloc(atom__mem *m, size_t n, size_t size);
static inline void atom__mem_free(atom__mem *m, void *ptr, size_t size) {
  if (ptr) atom__mem_realloc(m, ptr, size, 0);
}
/* A NUL-terminated copy of s (length+1 bytes accounted); NULL on failure. */
char *atom__mem_strdup(atom__mem *m, const char *s);
static inline void atom__mem_strfree(atom__mem *m, char *s) {
  if (s) atom__mem_free(m, s, __builtin_strlen(s) + 1);
}

/* Make room for at least `need` elements of `elem` bytes in *arr (capacity *cap, grown
 * geometrically; new elements zeroed). Returns 0 or ATOM_ENOMEM (then *arr, *cap unchanged). */
int atom__grow(atom__mem *m, void **arr, size_t *cap, size_t need, size_t elem);

#define ATOM__GROW(m, arr, cap, need) \
  atom__grow((m), (void **)&(arr), &(cap), (need), sizeof *(arr))

#endif
