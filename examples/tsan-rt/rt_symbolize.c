/* Symbolization: program counters to functions and source lines, addresses to global variables.
 *
 * Function and variable names come from each loaded object's ELF symbol table (.symtab, or
 * .dynsym when the object is stripped), read from the file on disk: unlike dladdr() this also
 * names static functions. C++ names are demangled with __cxa_demangle when the program has a
 * C++ runtime loaded. Source lines come from the DWARF line table through libdw (elfutils) when
 * the build found it (RT_HAVE_LIBDW); without it reports show function+offset only. */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"

#ifdef RT_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

typedef struct rt_sym {
  uint64_t addr, size;
  const char *name;
  char *demangled; /* lazily; points to name when it is not a C++ name */
} rt_sym;

typedef struct rt_module {
  char *path;
  uint64_t bias, lo, hi; /* [lo, hi): the object's loaded segments */
  void *map;
  size_t map_size;
  rt_sym *funcs, *objs;
  size_t n_funcs, n_objs;
  int parsed;
} rt_module;

static pthread_mutex_t sym_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_module *mods;
static size_t n_mods;
static unsigned long long seen_adds; /* dlpi_adds when the module list was read */

#ifdef RT_HAVE_LIBDW
static Dwfl *dwfl;
static int dwfl_failed;
static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_cbs = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};
#endif

static void sym_lock(void) { rt_fn.pthread_mutex_lock(&sym_mu); }
static void sym_unlock(void) { rt_fn.pthread_mutex_unlock(&sym_mu); }

/* ---- the list of loaded objects */

typedef struct scan {
  rt_module *v;
  size_t n, cap;
  unsigned long long adds;
} scan;

/* The file mapped at addr, from /proc/self/maps, into out: what the kernel resolved when the
 * object was mapped, whatever name it was loaded by. 0 on success, -1 if none (anonymous
 * memory, the vDSO, no /proc). */
static int mapped_path(uint64_t addr, char *out, size_t size) {
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return -1;
  char line[4096 + 128];
  int found = -1;
  while (found < 0 && fgets(line, sizeof line, f)) {
    unsigned long long lo, hi;
    int at = 0;
    if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || !at) continue;
    if (addr < lo || addr >= hi) continue;
    char *path = line + at, *nl = strchr(path, '\n');
    if (nl) *nl = '\0';
    /* " (deleted)" ends the name of a file removed since: it cannot be read any more */
    size_t n = strlen(path);
    if (path[0] == '/' && n < size && (n < 10 || strcmp(path + n - 10, " (deleted)") != 0)) {
      memcpy(out, path, n + 1);
      found = 0;
    } else {
      break;
    }
  }
  fclose(f);
  return found;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *payload) {
  (void)size;
  scan *sc = payload;
  sc->adds = info->dlpi_adds;
  const char *name = info->dlpi_name;
  char exe[4096];
  if (!name || !*name) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    name = exe;
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uint64_t a = info->dlpi_addr + ph->p_vaddr;
    if (a < lo) lo = a;
    if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
  }
  if (lo >= hi) return 0;
  /* The name is what the object was loaded by: dlopen("./lib.so") or a search of
   * LD_LIBRARY_PATH=. gives a relative one, which the current directory may no longer resolve
   * (and would then be read as another file). Ask the kernel which file is mapped there. */
  char real[4096];
  if (name[0] != '/') {
    if (mapped_path(lo, real, sizeof real) != 0) return 0; /* the vDSO has no file */
    name = real;
  }
  if (sc->n == sc->cap) {
    size_t cap = sc->cap ? sc->cap * 2 : 16;
    rt_module *v = realloc(sc->v, cap * sizeof *v);
    if (!v) return 1;
    sc->v = v;
    sc->cap = cap;
  }
  rt_module *m = &sc->v[sc->n];
  memset(m, 0, sizeof *m);
  m->path = strdup(name);
  if (!m->path) return 1;
  m->bias = info->dlpi_addr;
  m->lo = lo;
  m->hi = hi;
  sc->n++;
  return 0;
}

static void free_module(rt_module *m) {
  free(m->path);
  if (m->map) munmap(m->map, m->map_size);
  for (size_t i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].demangled != m->funcs[i].name) free(m->funcs[i].demangled);
  for (size_t i = 0; i < m->n_objs; i++)
    if (m->objs[i].demangled != m->objs[i].name) free(m->objs[i].demangled);
  free(m->funcs);
  free(m->objs);
}

/* Re-read the list when objects were loaded since; keep what was parsed for the others. */
static void refresh_modules(void) {
  scan sc = {0};
  dl_iterate_phdr(add_module, &sc);
  if (sc.adds == seen_adds && n_mods) {
    for (size_t i = 0; i < sc.n; i++) free(sc.v[i].path);
    free(sc.v);
    return;
  }
  for (size_t i = 0; i < sc.n; i++) {
    for (size_t j = 0; j < n_mods; j++) {
      if (mods[j].path && mods[j].bias == sc.v[i].bias && !strcmp(mods[j].path, sc.v[i].path)) {
        free(sc.v[i].path);
        sc.v[i] = mods[j];
        mods[j].path = NULL; /* moved */
        mods[j].map = NULL;
        mods[j].funcs = mods[j].objs = NULL;
        mods[j].n_funcs = mods[j].n_objs = 0;
        break;
      }
    }
  }
  for (size_t j = 0; j < n_mods; j++) free_module(&mods[j]);
  free(mods);
  mods = sc.v;
  n_mods = sc.n;
  seen_adds = sc.adds;
}

/* ---- ELF symbol tables */

static int cmp_sym(const void *a, const void *b) {
  const rt_sym *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  return 0;
}

static int push_sym(rt_sym **v, size_t *n, size_t *cap, uint64_t addr, uint64_t size,
                    const char *name) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 256;
    rt_sym *nv = realloc(*v, c * sizeof *nv);
    if (!nv) return -1;
    *v = nv;
    *cap = c;
  }
  (*v)[(*n)++] = (rt_sym){addr, size, name, NULL};
  return 0;
}

static void parse_module(rt_module *m) {
  m->parsed = 1;
  int fd = open(m->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
    close(fd);
    return;
  }
  void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return;
  m->map = map;
  m->map_size = (size_t)st.st_size;
  const unsigned char *base = map;
  const Elf64_Ehdr *eh = map;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return;
  if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
      eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > m->map_size)
    return;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
  const Elf64_Shdr *tab = NULL;
  for (int pass = 0; pass < 2 && !tab; pass++)
    for (unsigned i = 0; i < eh->e_shnum; i++)
      if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) {
        tab = &sh[i];
        break;
      }
  if (!tab || tab->sh_link >= eh->e_shnum || tab->sh_entsize != sizeof(Elf64_Sym)) return;
  const Elf64_Shdr *strs = &sh[tab->sh_link];
  if (tab->sh_offset + tab->sh_size > m->map_size || strs->sh_offset + strs->sh_size > m->map_size)
    return;
  const Elf64_Sym *syms = (const Elf64_Sym *)(base + tab->sh_offset);
  size_t n = tab->sh_size / sizeof(Elf64_Sym);
  const char *strtab = (const char *)(base + strs->sh_offset);
  size_t fcap = 0, ocap = 0;
  for (size_t i = 0; i < n; i++) {
    const Elf64_Sym *s = &syms[i];
    int type = ELF64_ST_TYPE(s->st_info);
    if (s->st_shndx == SHN_UNDEF || s->st_value == 0 || s->st_name >= strs->sh_size) continue;
    const char *name = strtab + s->st_name;
    if (!*name) continue;
    uint64_t addr = s->st_value + m->bias;
    if (type == STT_FUNC || type == STT_GNU_IFUNC) {
      if (push_sym(&m->funcs, &m->n_funcs, &fcap, addr, s->st_size, name) != 0) break;
    } else if (type == STT_OBJECT) {
      if (push_sym(&m->objs, &m->n_objs, &ocap, addr, s->st_size, name) != 0) break;
    }
  }
  if (m->funcs) qsort(m->funcs, m->n_funcs, sizeof *m->funcs, cmp_sym);
  if (m->objs) qsort(m->objs, m->n_objs, sizeof *m->objs, cmp_sym);
}

static rt_module *module_of(uint64_t addr) {
  for (int attempt = 0; attempt < 2; attempt++) {
    for (size_t i = 0; i < n_mods; i++)
      if (addr >= mods[i].lo && addr < mods[i].hi) {
        if (!mods[i].parsed) parse_module(&mods[i]);
        return &mods[i];
      }
    refresh_modules();
  }
  return NULL;
}

/* The symbol containing addr: the last one starting at or before it (size 0: open-ended). */
static rt_sym *find_sym(rt_sym *v, size_t n, uint64_t addr) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].addr <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (!lo) return NULL;
  rt_sym *s = &v[lo - 1];
  /* Aliases share an address: prefer the one whose size covers addr. */
  for (rt_sym *t = s; t >= v && t->addr == s->addr; t--)
    if (t->size && addr < t->addr + t->size) return t;
  if (s->size && addr >= s->addr + s->size) return NULL;
  return s;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static const char *demangled(rt_sym *s) {
  if (s->demangled) return s->demangled;
  s->demangled = (char *)s->name;
  if (s->name[0] == '_' && s->name[1] == 'Z') {
    demangle_fn fn = (demangle_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *d = fn ? fn(s->name, NULL, NULL, &status) : NULL;
    if (d && status == 0) s->demangled = d;
    else free(d);
  }
  return s->demangled;
}

/* ---- DWARF lines */

#ifdef RT_HAVE_LIBDW
static int dwfl_report_all(void) {
  dwfl_report_begin(dwfl);
  int rc = dwfl_linux_proc_report(dwfl, getpid());
  dwfl_report_end(dwfl, NULL, NULL);
  return rc;
}

static Dwfl_Module *dwfl_module_of(uint64_t addr) {
  if (dwfl_failed) return NULL;
  if (!dwfl) {
    dwfl = dwfl_begin(&dwfl_cbs);
    if (!dwfl || dwfl_report_all() != 0) {
      if (dwfl) dwfl_end(dwfl);
      dwfl = NULL;
      dwfl_failed = 1;
      return NULL;
    }
  }
  Dwfl_Module *m = dwfl_addrmodule(dwfl, (Dwarf_Addr)addr);
  if (!m && dwfl_report_all() == 0) m = dwfl_addrmodule(dwfl, (Dwarf_Addr)addr); /* dlopen */
  return m;
}
#endif

static int line_of(uint64_t addr, const char **file, unsigned *line) {
#ifdef RT_HAVE_LIBDW
  Dwfl_Module *m = dwfl_module_of(addr);
  if (!m) return -1;
  int ln = 0;
  const char *f = NULL;
  Dwfl_Line *l = dwfl_module_getsrc(m, (Dwarf_Addr)addr);
  if (l) {
    f = dwfl_lineinfo(l, NULL, &ln, NULL, NULL, NULL);
  } else {
    /* clang emits no .debug_aranges, which this lookup relies on: search the compilation
     * units' address ranges instead. */
    Dwarf_Addr bias = 0;
    for (Dwarf_Die *cu = dwfl_module_nextcu(m, NULL, &bias); cu && !f;
         cu = dwfl_module_nextcu(m, cu, &bias)) {
      if (dwarf_haspc(cu, (Dwarf_Addr)addr - bias) != 1) continue;
      Dwarf_Line *dl = dwarf_getsrc_die(cu, (Dwarf_Addr)addr - bias);
      if (dl && dwarf_lineno(dl, &ln) == 0) f = dwarf_linesrc(dl, NULL, NULL);
    }
  }
  if (!f || ln <= 0) return -1;
  *file = f;
  *line = (unsigned)ln;
  return 0;
#else
  (void)addr;
  (void)file;
  (void)line;
  return -1;
#endif
}

int rt_sym_have_lines(void) {
#ifdef RT_HAVE_LIBDW
  return 1;
#else
  return 0;
#endif
}

/* An object of the system (the C and C++ libraries): its source lines are not looked up. Their
 * debug information, when installed, is large and compressed, and a report's headline never
 * shows their frames; reading it cost tens of milliseconds per run. */
int rt_sym_system_object(const char *path) {
  static const char *const dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"};
  for (size_t i = 0; path && i < sizeof dirs / sizeof dirs[0]; i++)
    if (!strncmp(path, dirs[i], strlen(dirs[i]))) return 1;
  return 0;
}

/* ---- public */

int rt_sym_code(uint64_t pc, rt_symbol *out) {
  memset(out, 0, sizeof *out);
  uint64_t a = pc ? pc - 1 : 0; /* a return address: the call is just before it */
  sym_lock();
  rt_module *m = module_of(a);
  if (m) {
    out->module = m->path;
    rt_sym *s = find_sym(m->funcs, m->n_funcs, a);
    if (s) {
      out->raw = s->name;
      out->function = demangled(s);
      out->start = s->addr;
      out->offset = pc - s->addr;
    }
  }
  /* An address in a prologue may have no line of its own: use the function's first line. */
  if (m && rt_sym_system_object(m->path)) {
    /* no lines: the symbol and the object name the frame */
  } else if (line_of(a, &out->file, &out->line) != 0 && out->start) {
    line_of(out->start, &out->file, &out->line);
  }
  sym_unlock();
  return out->function || out->file ? 0 : -1;
}

int rt_sym_data(uint64_t addr, rt_symbol *out) {
  memset(out, 0, sizeof *out);
  sym_lock();
  rt_module *m = module_of(addr);
  rt_sym *s = m ? find_sym(m->objs, m->n_objs, addr) : NULL;
  if (s && (s->size ? addr < s->addr + s->size : addr == s->addr)) {
    out->module = m->path;
    out->raw = s->name;
    out->function = demangled(s);
    out->start = s->addr;
    out->offset = addr - s->addr;
  }
  sym_unlock();
  return out->function ? 0 : -1;
}

int rt_sym_function_line(uint64_t start, const char **file, unsigned *line) {
  sym_lock();
  int rc = line_of(start, file, line);
  sym_unlock();
  return rc;
}
