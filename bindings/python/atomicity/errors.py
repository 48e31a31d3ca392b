"""Exceptions and warnings of the atomicity binding.

Every exception the binding raises for a failure of the library, of loading it, or of reading
a trace file is an :class:`Error`; the subclasses say which kind of failure it was::

    Error
    +-- LibraryNotFoundError      the shared library cannot be loaded (or is not libatomicity 1)
    +-- UsageError                EINVAL, ENOTFOUND, ESTATE, EREENTRANT: a wrong call
    +-- EventError                EKIND ... EJOIN: an ill-formed event (END without BEGIN ...)
    +-- TraceError                EPARSE: a malformed trace file
    +-- LimitError                ELIMIT: a documented limit was exceeded
    +-- OutOfMemoryError          ENOMEM; also a MemoryError
    +-- TraceIOError              a trace cannot be read; also an OSError
        +-- TraceNotFoundError    the trace does not exist; also a FileNotFoundError

Other codes (ECALLBACK, ECHECKER, EIO outside trace files) raise :class:`Error` itself.

This module does not touch the shared library, so ``atomicity.Error`` can be caught even when
the library cannot be loaded.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Type

__all__ = [
    "Error", "LibraryNotFoundError", "UsageError", "EventError", "TraceError", "LimitError",
    "OutOfMemoryError", "TraceIOError", "TraceNotFoundError", "TraceWarning", "error_class",
]


class Error(Exception):
    """A failure reported by libatomicity, or a failure to load it.

    Attributes:
        code: the negative ``ATOM_E*`` value (an :class:`atomicity.ErrorCode` member when the
            code is known to the loaded library), or ``None`` when the error did not come from
            the library (it could not be loaded).
        name: the symbolic name of the code (``"ATOM_EENDNOBEGIN"``), or ``None``.
        message: the library's detailed message (``atom_last_error()``, read right after the
            failing call), or its description of the code when there was no detail.
    """

    message: str
    code: Optional[int]
    name: Optional[str]

    # Session.push_many(): the failing event's index in the batch and how many events the
    # library consumed; None for every other call.
    index: Optional[int] = None
    pushed: Optional[int] = None

    def __init__(self, message: str, code: Optional[int] = None,
                 name: Optional[str] = None) -> None:
        super().__init__(message, code, name)
        self.message = message
        self.code = code
        self.name = name

    def __str__(self) -> str:
        if self.name:
            return "%s (%s)" % (self.message, self.name)
        return self.message

    def __repr__(self) -> str:
        return "atomicity.%s(%r, code=%r, name=%r)" % (
            type(self).__name__, self.message, None if self.code is None else int(self.code),
            self.name)

    def __reduce__(self) -> Tuple[Any, ...]:
        # The code is pickled as a plain int: the ErrorCode enum is built at run time from the
        # loaded library and cannot be pickled by reference.
        return (type(self), (self.message, None if self.code is None else int(self.code),
                             self.name))


class LibraryNotFoundError(Error):
    """The shared library could not be loaded (every place tried is in the message), or the
    library found is not a compatible libatomicity (soname 1). ``code`` is None."""


class UsageError(Error):
    """A call the library refused: an invalid argument (``EINVAL``), an unknown checker
    (``ENOTFOUND``), a call in the wrong session state (``ESTATE``, e.g. a closed session) or
    from inside the session's own callback (``EREENTRANT``)."""


class EventError(Error):
    """An ill-formed event: unknown kind or bad flags (``EKIND``), END without BEGIN
    (``EENDNOBEGIN``), RELEASE of a lock not held (``ENOTHELD``), ACQUIRE of a lock held by
    another thread (``EHELD``), an event of a joined thread (``EJOINED``), COMMIT with nothing
    pending (``ENOPENDING``), a bad FORK (``EFORK``) or JOIN (``EJOIN``). The session rejected
    the event and goes on."""


class TraceError(Error):
    """A malformed trace file (``EPARSE``); the message starts with ``file:line:``."""


class LimitError(Error):
    """A documented limit of the library was exceeded (``ELIMIT``)."""


class OutOfMemoryError(Error, MemoryError):
    """The library ran out of memory (``ENOMEM``). Also a :class:`MemoryError`, so that
    ``except MemoryError`` sees it; unlike Python's own MemoryError the process is usually fine
    (the library failed one allocation and left the session consistent)."""


class TraceIOError(Error, OSError):
    """A trace file cannot be read. Also an :class:`OSError` with ``errno``, ``strerror`` and
    ``filename`` set as ``open()`` would (``errno`` is None when the operating system gave no
    number); ``code`` is ``EIO``."""

    def __init__(self, errno: Optional[int], strerror: str, filename: Any = None,
                 code: Optional[int] = None, name: Optional[str] = None) -> None:
        # OSError's own constructor sets errno, strerror and filename; Error's attributes are
        # set by hand (Error.__init__ would hand its arguments to OSError's as well).
        OSError.__init__(self, errno, strerror, filename)
        self.code = code
        self.name = name
        where = "" if filename is None else "%s: " % (filename,)
        self.message = "%s%s" % (where, strerror)

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.errno, self.strerror, self.filename,
                             None if self.code is None else int(self.code), self.name))


class TraceNotFoundError(TraceIOError, FileNotFoundError):
    """The trace file does not exist. Also a :class:`FileNotFoundError`."""


class TraceWarning(UserWarning):
    """An ill-formed event of a trace file was dropped (``check_trace(..., strict=False)``)."""


# Error class of each code the library returns, by the code's name (error.h).
_CLASSES: Dict[str, Type[Error]] = {
    "ATOM_EINVAL": UsageError,
    "ATOM_ENOTFOUND": UsageError,
    "ATOM_ESTATE": UsageError,
    "ATOM_EREENTRANT": UsageError,
    "ATOM_EKIND": EventError,
    "ATOM_EENDNOBEGIN": EventError,
    "ATOM_ENOTHELD": EventError,
    "ATOM_EHELD": EventError,
    "ATOM_EJOINED": EventError,
    "ATOM_ENOPENDING": EventError,
    "ATOM_EFORK": EventError,
    "ATOM_EJOIN": EventError,
    "ATOM_EPARSE": TraceError,
    "ATOM_ELIMIT": LimitError,
    "ATOM_ENOMEM": OutOfMemoryError,
}


def error_class(name: Optional[str]) -> Type[Error]:
    """The Error subclass for the code named ``name`` ("ATOM_ELIMIT"); Error for the others."""
    if name is None:
        return Error
    return _CLASSES.get(name, Error)
