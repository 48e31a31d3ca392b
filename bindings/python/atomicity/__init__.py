"""Python binding of libatomicity: check atomicity of concurrent executions.

Push the events of an execution into a :class:`Session` (one method per event kind: ``read``,
``write``, ``acquire``, ``release``, ``fork``, ``join``, ``begin``, ``end``, ``fence``,
``commit``), call :meth:`Session.finish`, and read :attr:`Session.reports`; or check a
recorded STD trace file with :func:`check_trace`.

The shared library is loaded through ctypes from ``ATOMICITY_LIBRARY`` when that environment
variable is set, else by its versioned soname ``libatomicity.so.1``, else from the library
directory that pkg-config reports, else from the one recorded by ``meson install``. The package
imports even when the library cannot be found; the first use then raises
:class:`LibraryNotFoundError` (an :class:`Error`).

``Kind`` (event kinds) and ``ErrorCode`` (error codes) are enums read from the loaded library;
their members are also module attributes (``atomicity.READ``, ``atomicity.EENDNOBEGIN``).
"""

from __future__ import annotations

import os
from typing import Any, List, Union

from . import _lib
from .errors import (Error, EventError, LibraryNotFoundError, LimitError, OutOfMemoryError,
                     TraceError, TraceIOError, TraceNotFoundError, TraceWarning, UsageError)
from .report import Event, Report, Transaction
from .session import CheckerStatus, Session, Suppressions, check_trace, read_baseline
from ._atomic import atomic

Space = _lib.Space
FLAG_ACQUIRE = _lib.FLAG_ACQUIRE
FLAG_RELEASE = _lib.FLAG_RELEASE
EVENT_FORMAT = _lib.EVENT_FORMAT  # struct format of one event of Session.push_many()
EVENT_SIZE = _lib.EVENT_SIZE      # its size in bytes (32)

# The binding's version: the library's (meson.build's project version; a test compares them).
# pyproject.toml reads it from here.
__version__ = "0.1.0"

__all__ = [
    "Error", "LibraryNotFoundError", "UsageError", "EventError", "TraceError", "LimitError",
    "OutOfMemoryError", "TraceIOError", "TraceNotFoundError", "TraceWarning",
    "Session", "CheckerStatus", "Suppressions", "read_baseline", "atomic", "check_trace",
    "Report", "Transaction", "Event",
    "Space", "FLAG_ACQUIRE", "FLAG_RELEASE", "EVENT_FORMAT", "EVENT_SIZE", "Kind", "ErrorCode", "load", "library_path",
    "library_version",
]


def load(path: Union[str, "os.PathLike[str]", None] = None) -> str:
    """Load the library now and return the path it was loaded from. ``path`` overrides the
    search (``ATOMICITY_LIBRARY``, the soname, pkg-config, the recorded libdir), but only
    before the library was loaded in this process. Raises LibraryNotFoundError when it cannot
    be loaded, UsageError when another library is already loaded."""
    return _lib.load(path).path


def library_path() -> str:
    """What the library was loaded from: the path, or the soname ``libatomicity.so.1`` when
    the dynamic loader found it by that name; loads it if needed."""
    return _lib.load().path


def library_version() -> str:
    """The version string of the loaded library (``atom_version()``)."""
    return _lib.load().version


def __getattr__(name: str) -> Any:
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


def __dir__() -> List[str]:
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
