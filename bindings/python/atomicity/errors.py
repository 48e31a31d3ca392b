"""Exceptions and warnings of the atomicity binding.

This module does not touch the shared library, so ``atomicity.Error`` can be caught even when
the library cannot be loaded.
"""

__all__ = ["Error", "TraceWarning"]


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

    def __init__(self, message, code=None, name=None):
        super().__init__(message, code, name)
        self.message = message
        self.code = code
        self.name = name

    def __str__(self):
        if self.name:
            return "%s (%s)" % (self.message, self.name)
        return self.message

    def __repr__(self):
        return "atomicity.Error(%r, code=%r, name=%r)" % (
            self.message, None if self.code is None else int(self.code), self.name)

    def __reduce__(self):
        return (Error, (self.message, None if self.code is None else int(self.code), self.name))


class TraceWarning(UserWarning):
    """An ill-formed event of a trace file was dropped (``check_trace(..., strict=False)``)."""
