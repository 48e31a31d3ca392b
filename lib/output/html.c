/* The html output: one self-contained page (inline CSS and SVG, one small inline script, no
 * URL outside the page) with a summary table and, per violation, a picture of the
 * interleaving in the manner of the papers' figures: one lane per thread, the witness events
 * on a time axis in trace order, each transaction a box, the cycle's conflict edges as arrows
 * with the closing edge highlighted. doc/html.md describes the page and the classes and data
 * attributes it promises.
 *
 * It reads reports through the public accessors only (report.h, location.h, session.h), so
 * what the picture shows is what any other client of the library can see. Every name that
 * reaches the page goes through atom__out_html_chars(). Nothing is allocated: a report holds
 * at most 256 events and 64 transaction runs (report.h), so the layout fits in fixed arrays;
 * anything beyond HTML_MAX_* is left out of the picture (never out of the table). */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/sys/checker.h" /* ATOM_EDGE_CLOSING */
#include "atomicity/event.h"
#include "atomicity/location.h"
#include "atomicity/report.h"
#include "atomicity/session.h"
#include "output/out.h"

/* Sections after this many are collapsed (<details> without `open`): a page with 10 000
 * reports stays quick to open, and the table still lists every one. */
#define HTML_OPEN_SECTIONS 100

#define HTML_MAX_EVENTS 256                              /* witness events drawn */
#define HTML_MAX_TXNS ATOM_REPORT_MAX_TXNS               /* transaction boxes drawn */
#define HTML_MAX_COLS (HTML_MAX_EVENTS + 2 * HTML_MAX_TXNS) /* distinct event indexes */
#define HTML_MAX_LANES (HTML_MAX_EVENTS + HTML_MAX_TXNS)

/* Geometry of a picture, in SVG user units (pixels at 100 %). */
#define LABEL_MAX 28 /* bytes of a thread label shown in the picture (all in its title) */
#define COL_W 84    /* between two columns of the time axis */
#define GAP_W 96    /* extra room for an elision glyph */
#define LANE_H 92
#define TOP 46      /* room for the index axis */
#define DOT_R 6
#define BOX_HALF 20 /* half the height of a transaction box */
#define BOX_PAD 22  /* box beyond its first and last column */

static const char STYLE[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;margin:1.5em;"
    "max-width:1400px}\n"
    "h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:.2em 0}\n"
    ".meta{color:#555;margin:.2em 0 1em}\n"
    "table{border-collapse:collapse;margin:.5em 0 1.2em}\n"
    "th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\n"
    "th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.msg{max-width:60em}\n"
    ".state-incomplete,.state-disabled{color:#b35900;font-weight:600}\n"
    ".cut-short{border:2px solid #b35900;border-radius:6px;background:#fff4e5;"
    "padding:.5em .8em;margin:.5em 0 1em}\n"
    ".cut-short strong{color:#b35900}\n"
    "details.report{border:1px solid #ccc;border-radius:6px;margin:0 0 1em;padding:.4em .8em}\n"
    "details.report>summary{cursor:pointer;font-weight:600}\n"
    "details.report p.msg{margin:.4em 0}\n"
    ".pic{overflow-x:auto}\n"
    "svg.interleaving{font:12px system-ui,sans-serif;background:#fff}\n"
    "svg .lane line{stroke:#bbb;stroke-width:1}\n"
    "svg .lane text{font-weight:600;font-size:13px;fill:#222}\n"
    "svg .axis{fill:#888;font-size:10px}\n"
    "svg .txn rect{fill:#eef3fb;stroke:#4a6fa5;stroke-width:1.2}\n"
    "svg .txn.unary rect{fill:none;stroke:#999;stroke-dasharray:3 3}\n"
    "svg .txn.run rect{stroke-dasharray:8 3}\n"
    "svg .txn text{fill:#2b4a75;font-size:11px}\n"
    "svg .event circle{fill:#222;stroke:#fff;stroke-width:1.5}\n"
    "svg .event.read circle{fill:#fff;stroke:#222}\n"
    "svg .event text{font-size:11px;fill:#222}\n"
    "svg .edge{fill:none;stroke:#555;stroke-width:1.6}\n"
    "svg .edge.closing{stroke:#d62728;stroke-width:2.6}\n"
    "svg .gap line{stroke:#ccc;stroke-dasharray:2 4}\n"
    "svg .gap text{fill:#888;font-size:11px}\n"
    "svg g:hover>circle,svg g:hover>rect{filter:drop-shadow(0 0 2px #4a6fa5)}\n"
    "#errors{color:#b00;white-space:pre}\n";

/* Errors of the page itself land in #errors (a test reads it back from the DOM); a link to a
 * collapsed report opens it. */
static const char SCRIPT_HEAD[] =
    "window.addEventListener('error',function(e){var d=document.getElementById('errors');"
    "if(!d)return;d.hidden=false;d.textContent+=(e.message||('cannot load '+"
    "(e.target&&e.target.nodeName)))+'\\n';},true);\n";
static const char SCRIPT_TAIL[] =
    "(function(){document.addEventListener('toggle',function(e){var d=e.target;"
    "if(!d.open||!d.querySelector)return;var t=d.querySelector(':scope>template.later');"
    "if(t)t.replaceWith(t.content.cloneNode(true));},true);"
    "function show(){var h=location.hash.slice(1);if(!h)return;"
    "var d=document.getElementById(h);if(d&&d.tagName==='DETAILS'){d.open=true;"
    "d.scrollIntoView();}}window.addEventListener('hashchange',show);show();"
    "function all(v){var l=document.querySelectorAll('details.report');"
    "for(var i=0;i<l.length;i++)l[i].open=v;}"
    "var o=document.getElementById('open-all'),c=document.getElementById('close-all');"
    "if(o)o.onclick=function(){all(true);};if(c)c.onclick=function(){all(false);};})();\n";

static void esc(atom__out *o, const char *s) { atom__out_html_chars(o, s ? s : ""); }

/* A thread as reports name it: its registered name, else "T<key>". */
static void put_thread(atom__out *o, const struct atom_session *s, uint64_t key) {
  const char *name = atom_get_name(s, ATOM_SPACE_THREAD, key);
  if (name) esc(o, name);
  else atom__out_printf(o, "T%" PRIu64, key);
}

static void put_key(atom__out *o, const struct atom_session *s, int space, uint64_t key) {
  const char *name = atom_get_name(s, space, key);
  if (name) esc(o, name);
  else if (space == ATOM_SPACE_THREAD) atom__out_printf(o, "T%" PRIu64, key);
  else atom__out_printf(o, "0x%" PRIx64, key);
}

static void put_location(atom__out *o, const struct atom_session *s, uint64_t loc) {
  char buf[512];
  atom_describe_location(buf, sizeof buf, s, loc);
  esc(o, buf);
}

/* A count with a narrow space between groups of three digits ("2 931"). */
static void put_count(atom__out *o, uint64_t n) {
  char digits[24];
  int len = snprintf(digits, sizeof digits, "%" PRIu64, n);
  for (int i = 0; i < len; i++) {
    if (i && (len - i) % 3 == 0) atom__out_puts(o, "\xe2\x80\xaf");
    atom__out_write(o, digits + i, 1);
  }
}

/* The short form of an event under its dot, as in the papers: "w(x)", "acq(l)", "begin". */
static void put_short_event(atom__out *o, const struct atom_session *s, const atom_event *ev) {
  const char *op = "?";
  int space = 0;
  switch (ev->kind) {
  case ATOM_READ: op = "r"; space = ATOM_SPACE_VAR; break;
  case ATOM_WRITE: op = "w"; space = ATOM_SPACE_VAR; break;
  case ATOM_COMMIT: op = "c"; space = ATOM_SPACE_VAR; break;
  case ATOM_ACQUIRE: op = "acq"; space = ATOM_SPACE_LOCK; break;
  case ATOM_RELEASE: op = "rel"; space = ATOM_SPACE_LOCK; break;
  case ATOM_FORK: op = "fork"; space = ATOM_SPACE_THREAD; break;
  case ATOM_JOIN: op = "join"; space = ATOM_SPACE_THREAD; break;
  case ATOM_BEGIN: op = "begin"; break;
  case ATOM_END: op = "end"; break;
  case ATOM_FENCE: op = "fence"; break;
  default: break;
  }
  atom__out_puts(o, op);
  if (space) {
    atom__out_puts(o, "(");
    put_key(o, s, space, ev->target);
    atom__out_puts(o, ")");
  }
}

static const char *kind_class(uint32_t kind) {
  switch (kind) {
  case ATOM_READ: return "read";
  case ATOM_WRITE: return "write";
  case ATOM_COMMIT: return "commit";
  case ATOM_ACQUIRE: case ATOM_RELEASE: return "sync";
  case ATOM_FORK: case ATOM_JOIN: return "thread";
  default: return "other";
  }
}

/* ---- the picture of one report ---- */

typedef struct layout {
  size_t n_cols;
  uint64_t col_index[HTML_MAX_COLS]; /* sorted distinct event indexes on the axis */
  int col_x[HTML_MAX_COLS];
  size_t n_lanes;
  uint64_t lane_thread[HTML_MAX_LANES];
  uint64_t lane_first[HTML_MAX_LANES]; /* earliest index of the thread in the report */
  size_t n_events;                     /* witness events drawn */
  int label_w;                         /* room for thread labels, left of the lanes */
  int width, height;
} layout;

static void add_col(layout *L, uint64_t index) {
  for (size_t i = 0; i < L->n_cols; i++)
    if (L->col_index[i] == index) return;
  if (L->n_cols < HTML_MAX_COLS) L->col_index[L->n_cols++] = index;
}

static void add_lane(layout *L, uint64_t thread, uint64_t index) {
  for (size_t i = 0; i < L->n_lanes; i++)
    if (L->lane_thread[i] == thread) {
      if (index < L->lane_first[i]) L->lane_first[i] = index;
      return;
    }
  if (L->n_lanes < HTML_MAX_LANES) {
    L->lane_thread[L->n_lanes] = thread;
    L->lane_first[L->n_lanes++] = index;
  }
}

static int col_x(const layout *L, uint64_t index) {
  for (size_t i = 0; i < L->n_cols; i++)
    if (L->col_index[i] == index) return L->col_x[i];
  return L->label_w;
}

/* A thread's label, cut to LABEL_MAX bytes at a character boundary ("…" added). */
static void thread_label(char *buf, size_t size, const struct atom_session *s, uint64_t key) {
  const char *name = atom_get_name(s, ATOM_SPACE_THREAD, key);
  if (!name) {
    snprintf(buf, size, "T%" PRIu64, key);
    return;
  }
  size_t n = strlen(name);
  if (n <= LABEL_MAX) {
    snprintf(buf, size, "%s", name);
    return;
  }
  n = LABEL_MAX - 1;
  while (n && ((unsigned char)name[n] & 0xc0) == 0x80) n--;
  snprintf(buf, size, "%.*s\xe2\x80\xa6", (int)n, name);
}

static int lane_y(const layout *L, uint64_t thread) {
  for (size_t i = 0; i < L->n_lanes; i++)
    if (L->lane_thread[i] == thread) return TOP + (int)i * LANE_H + LANE_H / 2;
  return TOP;
}

static void sort_u64(uint64_t *a, size_t n) {
  for (size_t i = 1; i < n; i++) /* insertion sort: at most a few hundred entries */
    for (size_t j = i; j > 0 && a[j - 1] > a[j]; j--) {
      uint64_t t = a[j];
      a[j] = a[j - 1];
      a[j - 1] = t;
    }
}

/* Lanes ordered by the thread's first index in the report, so the earliest thread is on top
 * as in the papers' figures. */
static void sort_lanes(layout *L) {
  for (size_t i = 1; i < L->n_lanes; i++)
    for (size_t j = i; j > 0 && L->lane_first[j - 1] > L->lane_first[j]; j--) {
      uint64_t t = L->lane_thread[j], f = L->lane_first[j];
      L->lane_thread[j] = L->lane_thread[j - 1];
      L->lane_first[j] = L->lane_first[j - 1];
      L->lane_thread[j - 1] = t;
      L->lane_first[j - 1] = f;
    }
}

static void build_layout(layout *L, const atom_report *r) {
  L->n_cols = L->n_lanes = 0;
  size_t nt = atom_report_txn_count(r);
  if (nt > HTML_MAX_TXNS) nt = HTML_MAX_TXNS;
  for (size_t i = 0; i < nt; i++) {
    uint64_t thread = 0, begin = 0, count = 1, last = 0;
    atom_report_txn(r, i, &thread, &begin, NULL);
    atom_report_txn_run(r, i, NULL, &count, &last);
    add_col(L, begin);
    if (count > 1) add_col(L, last);
    add_lane(L, thread, begin);
  }
  L->n_events = atom_report_event_count(r);
  if (L->n_events > HTML_MAX_EVENTS) L->n_events = HTML_MAX_EVENTS;
  for (size_t i = 0; i < L->n_events; i++) {
    atom_event ev;
    uint64_t index = 0;
    if (atom_report_event(r, i, &ev, &index) != 0) continue;
    add_col(L, index);
    add_lane(L, ev.thread, index);
  }
  sort_u64(L->col_index, L->n_cols);
  sort_lanes(L);
  size_t longest = 2;
  for (size_t i = 0; i < L->n_lanes; i++) {
    char label[LABEL_MAX + 8];
    thread_label(label, sizeof label, atom_report_session(r), L->lane_thread[i]);
    size_t n = strlen(label);
    if (n > longest) longest = n;
  }
  L->label_w = 24 + 8 * (int)longest;
  int x = L->label_w + BOX_PAD + 12;
  for (size_t i = 0; i < L->n_cols; i++) {
    if (i) x += COL_W + (L->col_index[i] - L->col_index[i - 1] > 1 ? GAP_W : 0);
    L->col_x[i] = x;
  }
  L->width = x + BOX_PAD + 150; /* room for the last box's label */
  L->height = TOP + (int)L->n_lanes * LANE_H + 8;
}

static void put_stack(atom__out *o, const struct atom_session *s, uint64_t loc) {
  const uint64_t *frames = NULL;
  size_t n = atom_get_stack(s, loc, &frames);
  for (size_t i = 0; i < n; i++) {
    atom__out_puts(o, "\n  ");
    put_location(o, s, frames[i]);
  }
}

static void draw_lanes(atom__out *o, const struct atom_session *s, const layout *L) {
  for (size_t i = 0; i < L->n_lanes; i++) {
    int y = TOP + (int)i * LANE_H + LANE_H / 2;
    atom__out_printf(o, "<g class=\"lane\" data-thread=\"%" PRIu64 "\"><title>thread ",
                     L->lane_thread[i]);
    put_thread(o, s, L->lane_thread[i]);
    atom__out_printf(o, "</title><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                        "<text x=\"8\" y=\"%d\" dominant-baseline=\"middle\">",
                     L->label_w - 8, y, L->width - 8, y, y);
    char label[LABEL_MAX + 8];
    thread_label(label, sizeof label, s, L->lane_thread[i]);
    esc(o, label);
    atom__out_puts(o, "</text></g>\n");
  }
}

static void draw_axis(atom__out *o, const layout *L) {
  for (size_t i = 0; i < L->n_cols; i++) {
    atom__out_printf(o, "<text class=\"axis\" x=\"%d\" y=\"14\" text-anchor=\"middle\">%" PRIu64
                        "</text>",
                     L->col_x[i], L->col_index[i]);
    if (i && L->col_index[i] - L->col_index[i - 1] > 1) {
      uint64_t n = L->col_index[i] - L->col_index[i - 1] - 1;
      int gx = (L->col_x[i - 1] + L->col_x[i]) / 2;
      atom__out_printf(o, "<g class=\"gap\" data-elided=\"%" PRIu64 "\"><line x1=\"%d\" y1=\"22\" "
                          "x2=\"%d\" y2=\"%d\"/><text x=\"%d\" y=\"32\" text-anchor=\"middle\">"
                          "\xe2\x80\xa6 ",
                       n, gx, gx, L->height - 4, gx);
      put_count(o, n);
      atom__out_puts(o, n == 1 ? " event \xe2\x80\xa6</text></g>" : " events \xe2\x80\xa6</text></g>");
    }
  }
  atom__out_puts(o, "\n");
}

static void draw_txns(atom__out *o, const atom_report *r, const layout *L) {
  const struct atom_session *s = atom_report_session(r);
  size_t nt = atom_report_txn_count(r);
  if (nt > HTML_MAX_TXNS) nt = HTML_MAX_TXNS;
  for (size_t i = 0; i < nt; i++) {
    uint64_t thread = 0, begin = 0, loc = 0, count = 1, last = 0;
    uint32_t flags = 0;
    atom_report_txn(r, i, &thread, &begin, &loc);
    atom_report_txn_run(r, i, &flags, &count, &last);
    uint64_t end = count > 1 ? last : begin;
    for (size_t e = 0; e < L->n_events; e++) {
      uint64_t index = 0;
      if (atom_report_event_txn(r, e) == i && atom_report_event(r, e, NULL, &index) == 0 &&
          index > end)
        end = index;
    }
    int x0 = col_x(L, begin) - BOX_PAD, x1 = col_x(L, end) + BOX_PAD, y = lane_y(L, thread);
    const char *cls = (flags & ATOM_TXN_UNARY) ? " unary" : count > 1 ? " run" : "";
    atom__out_printf(o, "<g class=\"txn%s\" data-txn=\"%zu\" data-thread=\"%" PRIu64 "\" "
                        "data-begin=\"%" PRIu64 "\" data-end=\"%" PRIu64 "\" data-count=\"%" PRIu64
                        "\"><title>",
                     cls, i, thread, begin, end, count);
    char buf[1024];
    atom_report_describe_txn(buf, sizeof buf, r, i);
    esc(o, buf);
    put_stack(o, s, loc);
    atom__out_printf(o, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"5\"/>",
                     x0, y - BOX_HALF, x1 - x0, 2 * BOX_HALF);
    atom__out_printf(o, "<text x=\"%d\" y=\"%d\">", x0 + 2, y - BOX_HALF - 6);
    if (flags & ATOM_TXN_UNARY) atom__out_puts(o, "(no transaction)");
    else {
      if (count > 1) atom__out_printf(o, "%" PRIu64 " \xc3\x97 ", count);
      put_location(o, s, loc);
    }
    atom__out_puts(o, "</text></g>\n");
  }
}

static void draw_events(atom__out *o, const atom_report *r, const layout *L) {
  const struct atom_session *s = atom_report_session(r);
  for (size_t i = 0; i < L->n_events; i++) {
    atom_event ev;
    uint64_t index = 0;
    if (atom_report_event(r, i, &ev, &index) != 0) continue;
    int dup = 0; /* the same event listed twice: one dot */
    for (size_t j = 0; j < i && !dup; j++) {
      uint64_t other = 0;
      dup = atom_report_event(r, j, NULL, &other) == 0 && other == index;
    }
    if (dup) continue;
    int x = col_x(L, index), y = lane_y(L, ev.thread);
    atom__out_printf(o, "<g class=\"event %s\" data-event-index=\"%" PRIu64 "\" data-thread=\"%"
                        PRIu64 "\"><title>",
                     kind_class(ev.kind), index, ev.thread);
    char buf[1024];
    atom_report_describe_event(buf, sizeof buf, r, i);
    esc(o, buf);
    put_stack(o, s, ev.loc);
    atom__out_printf(o, "</title><circle cx=\"%d\" cy=\"%d\" r=\"%d\"/>"
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
                     x, y, DOT_R, x, y + BOX_HALF + 14);
    put_short_event(o, s, &ev);
    atom__out_puts(o, "</text></g>\n");
  }
}

/* Arrows from the earlier access to the later one, stopping at the rim of the dots; between
 * two dots of one lane the arrow bows above it. */
static void draw_edges(atom__out *o, const atom_report *r, const layout *L, size_t section) {
  size_t n = atom_report_edge_count(r);
  for (size_t i = 0; i < n; i++) {
    size_t from = 0, to = 0;
    uint32_t flags = 0;
    atom_event a, b;
    uint64_t ia = 0, ib = 0;
    if (atom_report_edge(r, i, &from, &to, &flags) != 0 || from >= L->n_events ||
        to >= L->n_events || atom_report_event(r, from, &a, &ia) != 0 ||
        atom_report_event(r, to, &b, &ib) != 0)
      continue;
    int closing = (flags & ATOM_EDGE_CLOSING) != 0;
    double x1 = col_x(L, ia), y1 = lane_y(L, a.thread), x2 = col_x(L, ib), y2 = lane_y(L, b.thread);
    atom__out_printf(o, "<path class=\"edge%s\" data-edge=\"%zu\" data-edge-from=\"%" PRIu64
                        "\" data-edge-to=\"%" PRIu64 "\" marker-end=\"url(#%s%zu)\" d=\"",
                     closing ? " closing" : "", i, ia, ib, closing ? "hc" : "ha", section);
    if (y1 == y2) {
      double mx = (x1 + x2) / 2, my = y1 - BOX_HALF - 26;
      atom__out_printf(o, "M%.1f %.1f Q%.1f %.1f %.1f %.1f", x1, y1 - DOT_R - 2, mx, my, x2,
                       y2 - DOT_R - 3);
    } else {
      double dx = x2 - x1, dy = y2 - y1, g = sqrt(dx * dx + dy * dy); /* > 0: two lanes */
      double ux = dx / g, uy = dy / g, s0 = DOT_R + 2, s1 = DOT_R + 3;
      atom__out_printf(o, "M%.1f %.1f L%.1f %.1f", x1 + ux * s0, y1 + uy * s0, x2 - ux * s1,
                       y2 - uy * s1);
    }
    atom__out_puts(o, "\"><title>");
    char buf[1024];
    atom_report_describe_event(buf, sizeof buf, r, from);
    esc(o, buf);
    atom__out_puts(o, closing ? "\n\xe2\x86\x92 (closes the cycle) " : "\n\xe2\x86\x92 ");
    atom_report_describe_event(buf, sizeof buf, r, to);
    esc(o, buf);
    atom__out_puts(o, "</title></path>\n");
  }
}

static void draw_picture(atom__out *o, const atom_report *r, size_t section) {
  layout L; /* about 11 KiB */
  build_layout(&L, r);
  if (!L.n_cols) return;
  atom__out_printf(o, "<div class=\"pic\"><svg class=\"interleaving\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
                   L.width, L.height, L.width, L.height);
  atom__out_printf(o, "<defs><marker id=\"ha%zu\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
                      "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
                      "<path d=\"M0 0L10 5L0 10z\" fill=\"#555\"/></marker>"
                      "<marker id=\"hc%zu\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
                      "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\">"
                      "<path d=\"M0 0L10 5L0 10z\" fill=\"#d62728\"/></marker></defs>\n",
                   section, section);
  draw_lanes(o, atom_report_session(r), &L);
  draw_axis(o, &L);
  draw_txns(o, r, &L);
  draw_edges(o, r, &L, section);
  draw_events(o, r, &L);
  atom__out_puts(o, "</svg></div>\n");
}

/* ---- the page ---- */

static const char *evidence_text(const atom_report *r) {
  const char *e = atom_evidence_name(atom_report_evidence(r));
  return e ? e : "observed";
}

/* Calls fn for every report shown, grouped by checker in attach order, at most
 * opt->max_reports per checker; counts what is left out. */
typedef struct walk {
  size_t shown, suppressed, beyond;
} walk;

typedef void (*report_fn)(atom__out *o, const atom_report *r, size_t number, void *payload);

static walk each_report(atom__out *o, const struct atom_session *s, const atom_output_options *opt,
                        size_t checker, report_fn fn, void *payload, size_t first_number) {
  walk w = {0, 0, 0};
  size_t n = atom_report_count(s);
  for (size_t i = 0; i < n; i++) {
    const atom_report *r = atom_report_get(s, i);
    if (!r || atom_report_checker_index(r) != checker) continue;
    if (!atom__output_shown(opt, r)) {
      w.suppressed++;
      continue;
    }
    if (opt->max_reports && w.shown >= opt->max_reports) {
      w.beyond++;
      continue;
    }
    if (fn) fn(o, r, first_number + w.shown, payload);
    w.shown++;
  }
  return w;
}

static void summary_row(atom__out *o, const atom_report *r, size_t number, void *payload) {
  (void)payload;
  atom__out_printf(o, "<tr><td class=\"n\"><a href=\"#r%zu\">%zu</a></td><td>", number, number);
  esc(o, atom_report_checker(r));
  atom__out_puts(o, "</td><td>");
  esc(o, atom_report_kind(r));
  atom__out_printf(o, "</td><td>%s</td><td class=\"n\">%" PRIu64 "</td><td class=\"msg\">"
                      "<a href=\"#r%zu\">",
                   evidence_text(r), atom_report_occurrences(r), number);
  esc(o, atom_report_message(r));
  atom__out_puts(o, "</a></td></tr>\n");
}

static void section(atom__out *o, const atom_report *r, size_t number, void *payload) {
  (void)payload;
  atom__out_printf(o, "<details class=\"report\" id=\"r%zu\"%s data-checker=\"", number,
                   number <= HTML_OPEN_SECTIONS ? " open" : "");
  esc(o, atom_report_checker(r));
  atom__out_puts(o, "\" data-kind=\"");
  esc(o, atom_report_kind(r));
  atom__out_printf(o, "\" data-count=\"%" PRIu64 "\" data-event=\"%" PRIu64 "\"><summary>#%zu ",
                   atom_report_occurrences(r), atom_report_event_index(r), number);
  esc(o, atom_report_checker(r));
  atom__out_puts(o, ": ");
  esc(o, atom_report_kind(r));
  atom__out_printf(o, " (%s, found at event %" PRIu64, evidence_text(r),
                   atom_report_event_index(r));
  if (atom_report_occurrences(r) > 1)
    atom__out_printf(o, ", %" PRIu64 " times", atom_report_occurrences(r));
  atom__out_puts(o, ")</summary>\n<p class=\"msg\">");
  esc(o, atom_report_message(r));
  atom__out_puts(o, "</p>\n");
  uint64_t omitted = atom_report_txns_omitted(r);
  if (omitted)
    atom__out_printf(o, "<p class=\"omitted\">%" PRIu64 " more transaction runs of the cycle are "
                        "not shown.</p>\n", omitted);
  /* A collapsed section keeps its picture in a <template>: inert, so that thousands of them
   * cost the browser little until one is opened (the script then puts it in place). */
  int later = number > HTML_OPEN_SECTIONS;
  if (later) atom__out_puts(o, "<template class=\"later\">");
  draw_picture(o, r, number);
  if (later) atom__out_puts(o, "</template>");
  atom__out_puts(o, "</details>\n");
}

static const char *state_name(uint32_t state) {
  switch (state) {
  case ATOM_CHECKER_INCOMPLETE: return "incomplete";
  case ATOM_CHECKER_DISABLED: return "disabled";
  default: return "complete";
  }
}

/* The document's head and the page title with what was checked. */
static void page_head(atom__out *o, const char *tool, const atom_output_options *opt,
                      uint64_t events, uint64_t rejected) {
  atom__out_puts(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width\">\n<title>");
  esc(o, tool);
  atom__out_puts(o, ": atomicity violations");
  if (opt->input) {
    atom__out_puts(o, " in ");
    esc(o, opt->input);
  }
  /* puts, not printf: atom__out_printf() cuts at 1 KiB */
  atom__out_puts(o, "</title>\n<style>\n");
  atom__out_puts(o, STYLE);
  atom__out_puts(o, "</style>\n<script>\n");
  atom__out_puts(o, SCRIPT_HEAD);
  atom__out_puts(o, "</script>\n</head>\n<body>\n<div id=\"errors\" hidden></div>\n"
                    "<h1>Atomicity violations");
  if (opt->input) {
    atom__out_puts(o, " in ");
    esc(o, opt->input);
  }
  atom__out_puts(o, "</h1>\n<p class=\"meta\">");
  esc(o, tool);
  atom__out_printf(o, " checked %" PRIu64 " events", events);
  if (rejected) atom__out_printf(o, " (%" PRIu64 " ill-formed, dropped)", rejected);
  if (opt->seconds >= 0) atom__out_printf(o, " in %.3f s", opt->seconds);
  atom__out_puts(o, ".</p>\n");
  if (opt->cut_short) {
    /* a banner before anything else: no verdict below may read as one on the whole run */
    atom__out_puts(o, "<p class=\"cut-short\" id=\"cut-short\"><strong>INCOMPLETE input</strong>, "
                      "cut short: ");
    esc(o, opt->cut_short);
    atom__out_puts(o, ". Everything below is about that part of the run only.</p>\n");
  }
}

/* The row of checker c in the checkers table: its status and how many of its reports the page
 * shows (and why the others are not). @return how many it shows. */
static size_t checker_row(atom__out *o, const struct atom_session *s,
                          const atom_output_options *opt, size_t c) {
  walk w = each_report(o, s, opt, c, NULL, NULL, 0);
  atom_checker_status cs;
  memset(&cs, 0, sizeof cs);
  cs.version = ATOM_CHECKER_STATUS_VERSION;
  atom_checker_status_get(s, c, &cs);
  atom_checker_stats cst;
  memset(&cst, 0, sizeof cst);
  cst.version = ATOM_CHECKER_STATS_VERSION;
  atom_checker_stats_get(s, c, &cst);
  /* distinct reports the session did not store (its caps) are not shown either */
  uint64_t stored = w.shown + w.suppressed + w.beyond;
  uint64_t unstored = cst.reports > stored ? cst.reports - stored : 0;
  atom__out_puts(o, "<tr data-checker=\"");
  esc(o, atom_checker_name(s, c));
  atom__out_puts(o, "\"><td>");
  esc(o, atom_checker_name(s, c));
  atom__out_printf(o, "</td><td class=\"state-%s\">%s", state_name(cs.state),
                   state_name(cs.state));
  if (cs.state != ATOM_CHECKER_COMPLETE && cs.reason) {
    atom__out_printf(o, " at event %" PRIu64 ": ", cs.stopped_at);
    esc(o, cs.reason);
  }
  atom__out_printf(o, "</td><td class=\"n\">%zu</td><td>", w.shown);
  int any = 0;
  if (w.suppressed) {
    atom__out_printf(o, "%zu suppressed or in the baseline", w.suppressed);
    any = 1;
  }
  if (w.beyond) {
    atom__out_printf(o, "%s%zu beyond the first %zu", any ? ", " : "", w.beyond,
                     opt->max_reports);
    any = 1;
  }
  if (unstored) atom__out_printf(o, "%s%" PRIu64 " not stored", any ? ", " : "", unstored);
  atom__out_puts(o, "</td></tr>\n");
  return w.shown;
}

/* The summary table of the `total` violations shown, then a section for each. */
static void violations(atom__out *o, const struct atom_session *s,
                       const atom_output_options *opt, size_t total) {
  size_t nc = atom_checker_count(s);
  atom__out_printf(o, "<h2>%zu violation%s</h2>\n", total, total == 1 ? "" : "s");
  if (total > HTML_OPEN_SECTIONS)
    atom__out_printf(o, "<p>The first %d are open below, the others collapsed: click one to "
                        "open it, or <button id=\"open-all\">open all</button> "
                        "<button id=\"close-all\">close all</button>.</p>\n",
                     HTML_OPEN_SECTIONS);
  atom__out_puts(o, "<table class=\"summary\" id=\"summary\"><thead><tr><th>#</th>"
                    "<th>checker</th><th>kind</th><th>evidence</th><th>count</th>"
                    "<th>message</th></tr></thead><tbody>\n");
  size_t number = 1;
  for (size_t c = 0; c < nc; c++)
    number += each_report(o, s, opt, c, summary_row, NULL, number).shown;
  atom__out_puts(o, "</tbody></table>\n");
  number = 1;
  for (size_t c = 0; c < nc; c++)
    number += each_report(o, s, opt, c, section, NULL, number).shown;
}

int atom__output_html(atom__out *o, const struct atom_session *s, const atom_output_options *opt) {
  const char *tool = opt->tool ? opt->tool : "libatomicity";
  atom_session_stats st;
  memset(&st, 0, sizeof st);
  st.version = ATOM_SESSION_STATS_VERSION;
  atom_session_stats_get(s, &st);
  page_head(o, tool, opt, opt->events ? opt->events : st.events,
            opt->rejected ? opt->rejected : st.rejected);

  /* Checkers: status and how many reports each has in the page. */
  atom__out_puts(o, "<table class=\"checkers\"><thead><tr><th>checker</th><th>status</th>"
                    "<th>reports</th><th>not shown</th></tr></thead><tbody>\n");
  size_t total = 0, nc = atom_checker_count(s);
  for (size_t c = 0; c < nc; c++) total += checker_row(o, s, opt, c);
  atom__out_puts(o, "</tbody></table>\n");

  if (!total) atom__out_puts(o, "<p class=\"none\">No violation.</p>\n");
  else violations(o, s, opt, total);
  atom__out_puts(o, "<script>\n");
  atom__out_puts(o, SCRIPT_TAIL);
  atom__out_puts(o, "</script>\n</body>\n</html>\n");
  return 0;
}
