"""Python binding of libatomicity: check atomicity of concurrent executions.

Push the events of an execution into a :class:`Session` (one method per event kind: ``read``,
``write``, ``acquire``, ``release``, ``fork``, ``join``, ``begin``, ``end``, ``fence``,
``commit``), call :meth:`Session.finish`, and read :attr:`Session.reports`; or check a
recorded STD trace file with :func:`check_trace`.

The shared library is loaded through ctypes from ``ATOMICITY_LIBRARY`` when that environment
variable is set, else by its versioned soname ``libatomicity.so.1``. The package imports even
when the library cannot be found; the first use then raises :class:`Error`.

``Kind`` (event kinds) and ``ErrorCode`` (error codes) are enums read from the loaded library;
their members are also module attributes (``atomicity.READ``, ``atomicity.EENDNOBEGIN``).
"""

from . import _lib
from .errors import Error, TraceWarning
from .report import Event, Report, Transaction
from .session import CheckerStatus, Session, check_trace

Space = _lib.Space
FLAG_ACQUIRE = _lib.FLAG_ACQUIRE
FLAG_RELEASE = _lib.FLAG_RELEASE
EVENT_FORMAT = _lib.EVENT_FORMAT  # struct format of one event of Session.push_many()
EVENT_SIZE = _lib.EVENT_SIZE      # its size in bytes (32)

__version__ = "0.1.0"

__all__ = [
    "Error", "TraceWarning", "Session", "CheckerStatus", "check_trace", "Report", "Transaction", "Event",
    "Space", "FLAG_ACQUIRE", "FLAG_RELEASE", "EVENT_FORMAT", "EVENT_SIZE", "Kind", "ErrorCode", "load", "library_path", "library_version",
]


def load(path=None):
    """Load the library now and return the path it was loaded from. ``path`` overrides
    ``ATOMICITY_LIBRARY`` and the default soname, but only before the library was loaded in
    this process. Raises Error when it cannot be loaded."""
    return _lib.load(path).path


def library_path():
    """The path (or soname) the library was loaded from; loads it if needed."""
    return _lib.load().path


def library_version():
    """The version string of the loaded library (``atom_version()``)."""
    return _lib.load().version


def __getattr__(name):
    # Kind, ErrorCode and their members come from the library, loaded on first need.
    if name in ("Kind", "ErrorCode"):
        return getattr(_lib.load(), name)
    if name.isupper() and not name.startswith("_"):
        lib = _lib.load()
        for table in (lib.Kind, lib.ErrorCode):
            member = table.__members__.get(name)
            if member is not None:
                return member
    raise AttributeError("module 'atomicity' has no attribute %r" % name)


def __dir__():
    names = set(globals()) | {"Kind", "ErrorCode"}
    lib = _lib.loaded()
    if lib is not None:
        names.update(lib.Kind.__members__)
        names.update(lib.ErrorCode.__members__)
    return sorted(names)


# Build the tables at import when the library is there; if it is not, keep importing so
# that callers can catch atomicity.Error at first use.
try:
    _lib.load()
except Error:
    pass
