"""Loading libatomicity and declaring its C prototypes.

The library is looked up once per process, in this order (the first that loads wins):

1. ``ATOMICITY_LIBRARY`` (environment), when set and non-empty: the path (or name) handed to
   the dynamic loader, and nothing else is tried (a failure is an error);
2. the versioned soname ``libatomicity.so.1``, which the dynamic loader finds in its usual
   places (``LD_LIBRARY_PATH``, the system directories, the ld.so cache);
3. ``libatomicity.so.1`` in the directory that ``pkg-config --variable=libdir atomicity``
   reports (``PKG_CONFIG_PATH`` honoured), when pkg-config is installed;
4. ``libatomicity.so.1`` in the library directory recorded by ``meson install`` in the
   generated module ``atomicity/_installed.py`` (the source tree and a pip install have none).

The unversioned ``libatomicity.so`` development symlink is never used, and no build tree is
guessed. Every function the binding calls gets ``argtypes`` and ``restype`` here; the event
kinds and error codes are read from the library itself (``atom_kind_name``,
``atom_error_name``), so the C lists in event.h and error.h stay the only tables.
"""

from __future__ import annotations

import ctypes
import enum
import importlib
import os
import shutil
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any, List, Optional, Tuple, Union, overload

from .errors import Error, LibraryNotFoundError, UsageError, error_class

LIBRARY_ENV = "ATOMICITY_LIBRARY"

if sys.platform == "darwin":
    SONAME = "libatomicity.1.dylib"
else:
    SONAME = "libatomicity.so.1"

# Values of C macros, which a shared library cannot export (session.h). They are pinned by
# the ABI of soname 1, so copying them is safe.
OPTIONS_VERSION = 1          # ATOM_OPTIONS_VERSION
SESSION_STATS_VERSION = 1    # ATOM_SESSION_STATS_VERSION
CHECKER_STATS_VERSION = 1    # ATOM_CHECKER_STATS_VERSION
CHECKER_STATUS_VERSION = 1   # ATOM_CHECKER_STATUS_VERSION
# atom_checker_status::state: ATOM_CHECKER_COMPLETE, _INCOMPLETE, _DISABLED
CHECKER_STATES = {1: "complete", 2: "incomplete", 3: "disabled"}
THREADSAFE = 0x1             # ATOM_THREADSAFE
PROFILE = 0x2                # ATOM_PROFILE
FLAG_ACQUIRE = 0x1           # ATOM_FLAG_ACQUIRE (atom_event::flags on a READ)
FLAG_RELEASE = 0x2           # ATOM_FLAG_RELEASE (atom_event::flags on a WRITE)


class Space(enum.IntEnum):
    """Key spaces (``enum atom_space`` in event.h): threads, variables and locks are separate."""

    THREAD = 1
    VAR = 2
    LOCK = 3


# -- C types -------------------------------------------------------------------------------

c_uint32 = ctypes.c_uint32
c_uint64 = ctypes.c_uint64
c_int = ctypes.c_int
c_uint = ctypes.c_uint
c_size_t = ctypes.c_size_t
c_void_p = ctypes.c_void_p
c_char_p = ctypes.c_char_p
P_uint64 = ctypes.POINTER(c_uint64)
P_void_p = ctypes.POINTER(c_void_p)


class CEvent(ctypes.Structure):
    """``atom_event``: 32 bytes, layout frozen."""

    _fields_ = [
        ("kind", c_uint32),
        ("flags", c_uint32),
        ("thread", c_uint64),
        ("target", c_uint64),
        ("loc", c_uint64),
    ]


# void (*atom_report_fn)(const atom_report *report, void *payload)
REPORT_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
# int (*atom_trace_reject_fn)(const atom_trace_reader *r, int err, const char *message, void *payload)
REJECT_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_char_p, c_void_p)


class COptions(ctypes.Structure):
    """``atom_options`` of version 1. The allocator members are never set from Python."""

    _fields_ = [
        ("version", c_uint32),
        ("flags", c_uint32),
        ("on_report", REPORT_FN),
        ("report_payload", c_void_p),
        ("max_reports", c_size_t),
        ("malloc_fn", c_void_p),
        ("realloc_fn", c_void_p),
        ("free_fn", c_void_p),
        ("alloc_payload", c_void_p),
    ]


class COptions2(COptions):
    """``atom_options`` of version 2: appends ``max_reports_per_checker`` (used only when it
    is set, so that a version-1 library still serves every other session)."""

    _fields_ = [("max_reports_per_checker", c_size_t)]


class CSessionStats(ctypes.Structure):
    """``atom_session_stats`` of version 1."""

    _fields_ = [
        ("version", c_uint32),
        ("reserved", c_uint32),
        ("events", c_uint64),
        ("rejected", c_uint64),
        ("threads", c_uint64),
        ("vars", c_uint64),
        ("locks", c_uint64),
        ("bytes", c_uint64),
    ]


class CCheckerStats(ctypes.Structure):
    """``atom_checker_stats`` of version 1."""

    _fields_ = [
        ("version", c_uint32),
        ("reserved", c_uint32),
        ("bytes", c_uint64),
        ("peak_bytes", c_uint64),
        ("time_ns", c_uint64),
        ("reports", c_uint64),
        ("occurrences", c_uint64),
        ("nodes", c_uint64),
        ("edges", c_uint64),
        ("clocks", c_uint64),
        ("disabled", c_uint64),
    ]


class CCheckerStatus(ctypes.Structure):
    """``atom_checker_status`` of version 1."""

    _fields_ = [
        ("version", c_uint32),
        ("state", c_uint32),
        ("stopped_at", c_uint64),
        ("reason", c_char_p),
        ("error", ctypes.c_int32),
        ("reserved", c_uint32),
    ]


P_CEvent = ctypes.POINTER(CEvent)

# atom_event as packed bytes, for Session.push_many: kind, flags, thread, target, loc in native
# byte order, no padding (CEvent has none either).
EVENT_FORMAT = "=IIQQQ"
EVENT_SIZE = 32
assert ctypes.sizeof(CEvent) == EVENT_SIZE

# output.h: ATOM_OUTPUT_OPTIONS_VERSION and the ATOM_FORMAT_* values (pinned).
OUTPUT_OPTIONS_VERSION = 2
OUTPUT_NO_REPORTS = 0x4      # ATOM_OUTPUT_NO_REPORTS: counts and statuses only
FORMATS = {"text": 1, "json": 2, "sarif": 3, "html": 4, "dot": 5}
# int (*atom_write_fn)(const char *data, size_t len, void *payload); data is not
# NUL-terminated, so it is taken as a raw pointer.
WRITE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_size_t, c_void_p)


class COutputOptions(ctypes.Structure):
    """``atom_output_options`` of version 2 (fields are only appended: version 1 ends at
    ``n_baseline``)."""

    _fields_ = [
        ("version", c_uint32),
        ("format", c_uint32),
        ("flags", c_uint32),
        ("reserved", c_uint32),
        ("tool", c_char_p),
        ("input", c_char_p),
        ("max_reports", c_size_t),
        ("events", c_uint64),
        ("rejected", c_uint64),
        ("seconds", ctypes.c_double),
        ("suppressions", c_void_p),
        ("baseline", P_uint64),
        ("n_baseline", c_size_t),
        ("cut_short", c_char_p),  # version 2
    ]

# name, restype, argtypes: every public function the binding uses (checker.h, the plugin
# layer, is not bound).
_PROTOTYPES = (
    # version.h
    ("atom_version", c_char_p, ()),
    ("atom_version_number", c_uint, ()),
    # error.h
    ("atom_strerror", c_char_p, (c_int,)),
    ("atom_error_name", c_char_p, (c_int,)),
    ("atom_last_error", c_char_p, ()),
    # event.h
    ("atom_kind_name", c_char_p, (c_int,)),
    # session.h
    ("atom_options_init", c_int, (ctypes.POINTER(COptions), c_uint)),
    ("atom_session_new", c_int, (P_void_p, ctypes.POINTER(COptions))),
    ("atom_session_free", None, (c_void_p,)),
    ("atom_session_attach", c_int, (c_void_p, c_char_p)),
    ("atom_push", c_int, (c_void_p, P_CEvent)),
    ("atom_push_many", c_int, (c_void_p, P_CEvent, c_size_t, ctypes.POINTER(c_size_t))),
    ("atom_read", c_int, (c_void_p, c_uint64, c_uint64, c_uint64)),
    ("atom_write", c_int, (c_void_p, c_uint64, c_uint64, c_uint64)),
    ("atom_acquire", c_int, (c_void_p, c_uint64, c_uint64, c_uint64)),
    ("atom_release", c_int, (c_void_p, c_uint64, c_uint64, c_uint64)),
    ("atom_fork", c_int, (c_void_p, c_uint64, c_uint64, c_uint64)),
    ("atom_join", c_int, (c_void_p, c_uint64, c_uint64, c_uint64)),
    ("atom_begin", c_int, (c_void_p, c_uint64, c_uint64)),
    ("atom_end", c_int, (c_void_p, c_uint64, c_uint64)),
    ("atom_fence", c_int, (c_void_p, c_uint64, c_uint64)),
    ("atom_commit", c_int, (c_void_p, c_uint64, c_uint64, c_uint64)),
    ("atom_set_name", c_int, (c_void_p, c_int, c_uint64, c_char_p)),
    ("atom_get_name", c_char_p, (c_void_p, c_int, c_uint64)),
    ("atom_declare_set", c_int, (c_void_p, c_uint64, c_uint64)),
    ("atom_finish", c_int, (c_void_p,)),
    ("atom_report_count", c_size_t, (c_void_p,)),
    ("atom_report_get", c_void_p, (c_void_p, c_size_t)),
    ("atom_report_dropped", c_size_t, (c_void_p,)),
    ("atom_session_stats_get", c_int, (c_void_p, ctypes.POINTER(CSessionStats))),
    ("atom_checker_count", c_size_t, (c_void_p,)),
    ("atom_checker_name", c_char_p, (c_void_p, c_size_t)),
    ("atom_checker_stats_get", c_int, (c_void_p, c_size_t, ctypes.POINTER(CCheckerStats))),
    ("atom_checker_status_get", c_int, (c_void_p, c_size_t, ctypes.POINTER(CCheckerStatus))),
    # report.h
    ("atom_report_checker", c_char_p, (c_void_p,)),
    ("atom_report_checker_index", c_size_t, (c_void_p,)),
    ("atom_report_kind", c_char_p, (c_void_p,)),
    ("atom_report_event_index", c_uint64, (c_void_p,)),
    ("atom_report_occurrences", c_uint64, (c_void_p,)),
    ("atom_report_message", c_char_p, (c_void_p,)),
    ("atom_report_txn_count", c_size_t, (c_void_p,)),
    ("atom_report_txn", c_int, (c_void_p, c_size_t, P_uint64, P_uint64, P_uint64)),
    ("atom_report_event_count", c_size_t, (c_void_p,)),
    ("atom_report_event", c_int, (c_void_p, c_size_t, P_CEvent, P_uint64)),
    ("atom_report_var_count", c_size_t, (c_void_p,)),
    ("atom_report_var", c_uint64, (c_void_p, c_size_t)),
    ("atom_report_var_name", c_char_p, (c_void_p, c_size_t)),
    ("atom_report_evidence", c_int, (c_void_p,)),
    ("atom_evidence_name", c_char_p, (c_int,)),
    # output.h
    ("atom_output_options_init", c_int, (ctypes.POINTER(COutputOptions), c_uint)),
    ("atom_session_write", c_int, (c_void_p, ctypes.POINTER(COutputOptions), WRITE_FN, c_void_p)),
    ("atom_suppressions_parse", c_int, (P_void_p, c_char_p, c_size_t)),
    ("atom_suppressions_free", None, (c_void_p,)),
    ("atom_suppressions_match", c_int, (c_void_p, c_void_p)),
    ("atom_report_fingerprint", c_uint64, (c_void_p,)),
    # trace.h
    ("atom_trace_reader_open", c_int, (P_void_p, c_char_p)),
    ("atom_trace_reader_open_memory", c_int, (P_void_p, c_void_p, c_size_t, c_char_p)),
    ("atom_trace_reader_free", None, (c_void_p,)),
    ("atom_trace_reader_name", c_char_p, (c_void_p, c_int, c_uint64)),
    ("atom_trace_reader_line", c_uint64, (c_void_p,)),
    ("atom_trace_feed", c_int, (c_void_p, c_void_p, c_uint64, P_uint64, REJECT_FN, c_void_p)),
    # location.h
    ("atom_set_location", c_int, (c_void_p, c_uint64, c_char_p, c_char_p, c_uint32)),
    ("atom_get_location", c_int, (c_void_p, c_uint64, ctypes.POINTER(c_char_p),
                                  ctypes.POINTER(c_char_p), ctypes.POINTER(c_uint32))),
    ("atom_set_stack", c_int, (c_void_p, c_uint64, P_uint64, c_size_t)),
    ("atom_get_stack", c_size_t, (c_void_p, c_uint64, ctypes.POINTER(P_uint64))),
)

# ATOM_MAX_STACK (location.h): the most frames atom_set_stack() keeps.
MAX_STACK = 64

# Upper bound on the table scans below, in case a broken library never returns NULL.
_SCAN_LIMIT = 4096


@overload
def text(raw: bytes) -> str: ...
@overload
def text(raw: None) -> None: ...
@overload
def text(raw: Optional[bytes]) -> Optional[str]: ...


def text(raw: Optional[bytes]) -> Optional[str]:
    """Decode a C string returned by the library (bytes or None)."""
    if raw is None:
        return None
    return raw.decode("utf-8", "replace")


class Library:
    """The loaded library: its prototyped functions as attributes, and its tables.

    ``path`` is what was handed to the dynamic loader (a path, or the soname when the loader
    searched for it) and ``origin`` says where it came from: ``"argument"`` (load(path)),
    ``"env"`` (ATOMICITY_LIBRARY), ``"soname"``, ``"pkg-config"`` or ``"install"`` (the path
    recorded by meson install)."""

    # Kind and ErrorCode are IntEnum classes built from the library's tables at load time.
    Kind: Any
    ErrorCode: Any

    if TYPE_CHECKING:
        # The atom_* functions are set from _PROTOTYPES in __init__.
        def __getattr__(self, name: str) -> Any: ...

    def __init__(self, cdll: ctypes.CDLL, path: str, origin: str = "argument") -> None:
        self.cdll = cdll
        self.path = path
        self.origin = origin
        for name, restype, argtypes in _PROTOTYPES:
            try:
                fn = getattr(cdll, name)
            except AttributeError:
                raise LibraryNotFoundError(
                    "the atomicity library %r lacks the function %s; it is not a "
                    "compatible libatomicity (soname 1)" % (path, name)) from None
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)
        self.version: str = text(self.atom_version()) or ""
        self.Kind = self._kinds()
        self.ErrorCode = self._error_codes()

    def _kinds(self) -> Any:
        members = []
        for value in range(1, _SCAN_LIMIT):
            name = text(self.atom_kind_name(value))
            if name is None:
                break
            members.append((name.upper(), value))
        kind = enum.IntEnum("Kind", members, module="atomicity")  # type: ignore[misc]
        kind.__doc__ = "Event kinds, as listed by the loaded library (ATOM_KIND_MAP)."
        return kind

    def _error_codes(self) -> Any:
        members = []
        for value in range(-1, -_SCAN_LIMIT, -1):
            name = text(self.atom_error_name(value))
            if name is None:
                break
            if name.startswith("ATOM_"):
                name = name[5:]
            members.append((name, value))
        codes = enum.IntEnum("ErrorCode", members, module="atomicity")  # type: ignore[misc]
        codes.__doc__ = "Error codes, as listed by the loaded library (ATOM_ERROR_MAP)."
        return codes

    def code(self, value: int) -> int:
        """``value`` as an ErrorCode member when the library knows it, else as an int."""
        try:
            return self.ErrorCode(value)  # type: ignore[no-any-return]
        except ValueError:
            return value

    def make_error(self, code: int, message: Optional[str] = None) -> Error:
        """The Error for ``code`` with ``message`` (default: the library's description), of
        the subclass the code belongs to (errors.py: EventError, LimitError ...)."""
        name = text(self.atom_error_name(code))
        if not message:
            message = text(self.atom_strerror(code)) or "unknown error"
        return error_class(name)(message, self.code(code), name)

    def error(self, code: int) -> Error:
        """The Error for a call that just returned ``code``; reads atom_last_error() at once,
        so call it before any other library call."""
        detail = text(self.atom_last_error())
        return self.make_error(code, detail)


_lock = threading.Lock()
_loaded: Optional[Library] = None

# The seconds pkg-config may take before the look-up gives up on it.
_PKG_CONFIG_TIMEOUT = 10


def _pkg_config_libdir() -> Tuple[Optional[str], str]:
    """(libdir of the atomicity pkg-config module or None, why not when None)."""
    exe = shutil.which("pkg-config")
    if exe is None:
        return None, "pkg-config is not installed"
    try:
        proc = subprocess.run([exe, "--variable=libdir", "atomicity"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=_PKG_CONFIG_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, "pkg-config failed: %s" % exc
    libdir = proc.stdout.strip()
    if proc.returncode != 0 or not libdir:
        return None, "pkg-config knows no module atomicity (set PKG_CONFIG_PATH?)"
    return libdir, ""


def _installed_libdir() -> Tuple[Optional[str], str]:
    """(libdir recorded by meson install or None, why not when None)."""
    try:
        # Generated by meson install (bindings/python/meson.build); absent in the source tree
        # and in a pip install.
        installed = importlib.import_module(__name__.rpartition(".")[0] + "._installed")
    except ImportError:
        return None, "no library directory was recorded (the package was not installed by meson)"
    libdir = getattr(installed, "LIBDIR", None)
    if not isinstance(libdir, str) or not libdir:
        return None, "atomicity/_installed.py records no LIBDIR"
    return libdir, ""


def _try(path: str, tried: List[str], how: str) -> Optional[ctypes.CDLL]:
    try:
        return ctypes.CDLL(path)
    except OSError as exc:
        tried.append("%s %r: %s" % (how, path, exc))
        return None


def _search() -> Tuple[ctypes.CDLL, str, str]:
    """Load by the documented order; (cdll, path, origin), or raise LibraryNotFoundError
    naming every place tried."""
    env = os.environ.get(LIBRARY_ENV)
    tried: List[str] = []
    if env:
        cdll = _try(env, tried, "%s=" % LIBRARY_ENV)
        if cdll is None:
            raise LibraryNotFoundError("cannot load the atomicity library: %s (unset %s to "
                                       "search the usual places)" % (tried[0], LIBRARY_ENV))
        return cdll, env, "env"
    cdll = _try(SONAME, tried, "the soname")
    if cdll is not None:
        return cdll, SONAME, "soname"
    for origin, (libdir, why) in (("pkg-config", _pkg_config_libdir()),
                                  ("install", _installed_libdir())):
        if libdir is None:
            tried.append(why)
            continue
        path = os.path.join(libdir, SONAME)
        how = "the pkg-config libdir:" if origin == "pkg-config" else "the installed libdir:"
        cdll = _try(path, tried, how)
        if cdll is not None:
            return cdll, path, origin
    raise LibraryNotFoundError(
        "cannot load the atomicity library; tried: %s. Install libatomicity, or set %s to "
        "the path of %s" % ("; ".join(tried), LIBRARY_ENV, SONAME))


def load(path: Union[str, "os.PathLike[str]", None] = None) -> Library:
    """Load the library (once per process) and return the Library.

    ``path`` overrides the search (ATOMICITY_LIBRARY, the soname, pkg-config, the recorded
    libdir); it is only accepted before the library was loaded, or when it names the same
    path. Raises LibraryNotFoundError when the library cannot be loaded.
    """
    global _loaded
    with _lock:
        if _loaded is not None:
            if path is not None and os.fspath(path) != _loaded.path:
                raise UsageError("the atomicity library is already loaded from %r; cannot "
                                 "switch to %r in this process" % (_loaded.path, os.fspath(path)))
            return _loaded
        if path is not None:
            spath = os.fspath(path)
            try:
                cdll = ctypes.CDLL(spath)
            except OSError as exc:
                raise LibraryNotFoundError("cannot load the atomicity library %r: %s"
                                           % (spath, exc)) from None
            found: Tuple[ctypes.CDLL, str, str] = (cdll, spath, "argument")
        else:
            found = _search()
        _loaded = Library(*found)
        return _loaded


def loaded() -> Optional[Library]:
    """The Library if it was loaded, else None (never tries to load)."""
    return _loaded
