/* Program locations described by the producer (a runtime's symbolizer, a trace's location
 * map). Reports are rendered when asked for, so a description may come after the report. */
#include "core/location.h"

#include <string.h>

#include "atomicity/location.h"
#include "core/error.h"
#include "core/session.h"

/* The entry of loc, created empty if new. NULL if out of memory. */
static atom__location *entry(atom_session *s, uint64_t loc) {
  atom__locations *l = &s->locations;
  uint32_t at;
  if (atom__u64map_get(&l->index, loc, &at)) return &l->list[at];
  if (l->count >= UINT32_MAX - 1 || ATOM__GROW(&s->mem, l->list, l->cap, l->count + 1) ||
      atom__u64map_put(&l->index, &s->mem, loc, (uint32_t)l->count))
    return NULL;
  atom__location *e = &l->list[l->count++];
  memset(e, 0, sizeof *e);
  return e;
}

static const atom__location *find(const atom_session *s, uint64_t loc) {
  uint32_t at;
  return atom__u64map_get(&s->locations.index, loc, &at) ? &s->locations.list[at] : NULL;
}

/* Allowed from the session's own callbacks: checkers never read locations (only rendering
 * does), so a runtime can describe the locations of a report in on_report before printing. */
ATOM_API int atom_set_location(atom_session *s, uint64_t loc, const char *function,
                               const char *file, uint32_t line) {
  if (!s || (!function && !file && !line))
    return atom__error(ATOM_EINVAL, "atom_set_location: NULL session or nothing to set");
  char *fn = NULL, *fl = NULL;
  if ((function && !(fn = atom__mem_strdup(&s->mem, function))) ||
      (file && !(fl = atom__mem_strdup(&s->mem, file))))
    goto oom;
  atom__location *e = entry(s, loc);
  if (!e) goto oom;
  atom__mem_strfree(&s->mem, e->function);
  atom__mem_strfree(&s->mem, e->file);
  e->function = fn;
  e->file = fl;
  e->line = line;
  s->names.generation++;
  return 0;
oom:
  atom__mem_strfree(&s->mem, fn);
  atom__mem_strfree(&s->mem, fl);
  return atom__error(ATOM_ENOMEM, "atom_set_location: out of memory");
}

ATOM_API int atom_get_location(const atom_session *s, uint64_t loc, const char **function,
                               const char **file, uint32_t *line) {
  const atom__location *e = s ? find(s, loc) : NULL;
  int known = e && (e->function || e->file || e->line);
  if (function) *function = known ? e->function : NULL;
  if (file) *file = known ? e->file : NULL;
  if (line) *line = known ? e->line : 0;
  return known;
}

ATOM_API int atom_set_stack(atom_session *s, uint64_t loc, const uint64_t *frames, size_t n) {
  if (!s || (n && !frames)) return atom__error(ATOM_EINVAL, "atom_set_stack: NULL argument");
  if (n > ATOM_MAX_STACK) n = ATOM_MAX_STACK;
  uint64_t *copy = NULL;
  if (n && !(copy = atom__mem_alloc(&s->mem, n * sizeof *copy)))
    return atom__error(ATOM_ENOMEM, "atom_set_stack: out of memory");
  if (n) memcpy(copy, frames, n * sizeof *copy);
  atom__location *e = entry(s, loc);
  if (!e) {
    atom__mem_free(&s->mem, copy, n * sizeof *copy);
    return atom__error(ATOM_ENOMEM, "atom_set_stack: out of memory");
  }
  atom__mem_free(&s->mem, e->frames, e->n_frames * sizeof *e->frames);
  e->frames = copy;
  e->n_frames = (uint32_t)n;
  s->names.generation++;
  return 0;
}

ATOM_API size_t atom_get_stack(const atom_session *s, uint64_t loc, const uint64_t **frames) {
  const atom__location *e = s ? find(s, loc) : NULL;
  if (frames) *frames = e ? e->frames : NULL;
  return e ? e->n_frames : 0;
}

void atom__locations_free(atom__locations *l, atom__mem *mem) {
  for (size_t i = 0; i < l->count; i++) {
    atom__mem_strfree(mem, l->list[i].function);
    atom__mem_strfree(mem, l->list[i].file);
    atom__mem_free(mem, l->list[i].frames, l->list[i].n_frames * sizeof *l->list[i].frames);
  }
  atom__mem_free(mem, l->list, l->cap * sizeof *l->list);
  atom__u64map_free(&l->index, mem);
  memset(l, 0, sizeof *l);
}
