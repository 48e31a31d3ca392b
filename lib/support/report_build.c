#include "support/report_build.h"

#include <string.h>

#include "atomicity/error.h"

void atom__rb_init(atom__report_build *rb, atom__mem *mem) {
  memset(rb, 0, sizeof *rb);
  rb->mem = mem;
}

void atom__rb_reset(atom__report_build *rb) {
  rb->n_txns = rb->n_events = rb->n_edges = rb->n_vars = 0;
}

void atom__rb_free(atom__report_build *rb) {
  atom__mem_free(rb->mem, rb->txns, rb->cap_txns * sizeof *rb->txns);
  atom__mem_free(rb->mem, rb->events, rb->cap_events * sizeof *rb->events);
  atom__mem_free(rb->mem, rb->edges, rb->cap_edges * sizeof *rb->edges);
  atom__mem_free(rb->mem, rb->vars, rb->cap_vars * sizeof *rb->vars);
  atom__rb_init(rb, rb->mem);
}

int atom__rb_txn(atom__report_build *rb, const atom_txn_ref *txn) {
  if (ATOM__GROW(rb->mem, rb->txns, rb->cap_txns, rb->n_txns + 1)) return ATOM_ENOMEM;
  rb->txns[rb->n_txns++] = *txn;
  return 0;
}

int atom__rb_event(atom__report_build *rb, const atom_ev *ev, uint32_t *pos) {
  size_t i = 0;
  while (i < rb->n_events && rb->events[i].index != ev->index) i++;
  if (i == rb->n_events) {
    if (ATOM__GROW(rb->mem, rb->events, rb->cap_events, rb->n_events + 1)) return ATOM_ENOMEM;
    rb->events[rb->n_events++] = *ev;
  }
  if (pos) *pos = (uint32_t)i;
  return 0;
}

int atom__rb_edge(atom__report_build *rb, const atom_ev *from, const atom_ev *to,
                  uint32_t flags) {
  uint32_t a, b;
  if (ATOM__GROW(rb->mem, rb->edges, rb->cap_edges, rb->n_edges + 1)) return ATOM_ENOMEM;
  if (atom__rb_event(rb, from, &a) || atom__rb_event(rb, to, &b)) return ATOM_ENOMEM;
  rb->edges[rb->n_edges++] = (atom_edge_ref){a, b, flags, 0};
  return 0;
}

int atom__rb_event_apart(atom__report_build *rb, const atom_ev *ev, uint32_t *pos) {
  if (ATOM__GROW(rb->mem, rb->events, rb->cap_events, rb->n_events + 1)) return ATOM_ENOMEM;
  if (pos) *pos = (uint32_t)rb->n_events;
  rb->events[rb->n_events++] = *ev;
  return 0;
}

int atom__rb_edge_apart(atom__report_build *rb, const atom_ev *from, const atom_ev *to,
                        uint32_t flags) {
  uint32_t a, b;
  if (ATOM__GROW(rb->mem, rb->edges, rb->cap_edges, rb->n_edges + 1)) return ATOM_ENOMEM;
  if (atom__rb_event_apart(rb, from, &a) || atom__rb_event_apart(rb, to, &b)) return ATOM_ENOMEM;
  rb->edges[rb->n_edges++] = (atom_edge_ref){a, b, flags, 0};
  return 0;
}

int atom__rb_edge_at(atom__report_build *rb, uint32_t from, uint32_t to, uint32_t flags) {
  if (ATOM__GROW(rb->mem, rb->edges, rb->cap_edges, rb->n_edges + 1)) return ATOM_ENOMEM;
  rb->edges[rb->n_edges++] = (atom_edge_ref){from, to, flags, 0};
  return 0;
}

int atom__rb_var(atom__report_build *rb, uint32_t var) {
  for (size_t i = 0; i < rb->n_vars; i++)
    if (rb->vars[i] == var) return 0;
  if (ATOM__GROW(rb->mem, rb->vars, rb->cap_vars, rb->n_vars + 1)) return ATOM_ENOMEM;
  rb->vars[rb->n_vars++] = var;
  return 0;
}

int atom__rb_vars_of_events(atom__report_build *rb, size_t max) {
  for (size_t i = 0; i < rb->n_events && rb->n_vars < max; i++) {
    const atom_ev *e = &rb->events[i];
    if (e->kind != ATOM_READ && e->kind != ATOM_WRITE) continue;
    if (atom__rb_var(rb, e->target)) return ATOM_ENOMEM;
  }
  return 0;
}

/* The spec of what rb holds. */
static atom_report_spec spec_of(const atom__report_build *rb, const char *kind,
                                uint64_t event_index, uint32_t flags, const char *message,
                                uint64_t signature_extra) {
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.flags = flags;
  spec.kind = kind;
  spec.event_index = event_index;
  spec.txns = rb->n_txns ? rb->txns : NULL;
  spec.n_txns = rb->n_txns;
  spec.events = rb->n_events ? rb->events : NULL;
  spec.n_events = rb->n_events;
  spec.vars = rb->n_vars ? rb->vars : NULL;
  spec.n_vars = rb->n_vars;
  spec.message = message;
  spec.signature_extra = signature_extra;
  spec.edges = rb->n_edges ? rb->edges : NULL;
  spec.n_edges = rb->n_edges;
  return spec;
}

int atom__rb_submit(const atom__report_build *rb, atom_env *env, const char *kind,
                    uint64_t event_index, uint32_t flags, const char *message,
                    uint64_t signature_extra) {
  atom_report_spec spec = spec_of(rb, kind, event_index, flags, message, signature_extra);
  return atom_env_report(env, &spec);
}

int atom__rb_repeat(const atom__report_build *rb, atom_env *env, const char *kind,
                    uint64_t signature_extra) {
  /* the signature is the transactions' locations, the kind and the extra */
  atom_report_spec spec = spec_of(rb, kind, 0, 0, NULL, signature_extra);
  return atom_env_report_repeat(env, &spec);
}
