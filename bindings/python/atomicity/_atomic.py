"""``atomicity.atomic``: declare what is meant to be atomic.

* ``@atomicity.atomic`` on a function: each call is a transaction (BEGIN at the call, with the
  location of the ``def`` line; END when it returns or raises). On a generator or coroutine
  function, each resume is one (the tracer brackets them: its code is registered here).
* ``with atomicity.atomic():``: the block is a transaction (BEGIN at the ``with`` line, END
  where the block is left). ``@atomicity.atomic()`` decorates as well.

Transactions nest: only the outermost one counts. Outside ``python -m atomicity run`` both
forms do nothing but call the function / run the block.
"""

from __future__ import annotations

import functools
import linecache
import sys
from types import CodeType, TracebackType
from typing import (TYPE_CHECKING, Any, Callable, Optional, Set, Type, TypeVar, Union, cast,
                    overload)

from . import _recorder

if TYPE_CHECKING:
    from typing import Literal

__all__ = ["atomic"]

# What @atomic decorates; it gives back a function of the same type (signature kept).
F = TypeVar("F", bound=Callable[..., Any])

# Code objects of decorated generator and coroutine functions: the recorder's is_atomic()
# answers True for them, so the tracer makes each resume a transaction.
resumable_codes: Set[CodeType] = set()

# CO_GENERATOR | CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR
_RESUMABLE = 0x20 | 0x80 | 0x100 | 0x200
_getframe = sys._getframe


def _def_line(code: CodeType) -> int:
    """The line of ``def`` (co_firstlineno is the first decorator's line since 3.8)."""
    first = code.co_firstlineno
    for line in range(first, first + 50):
        text = linecache.getline(code.co_filename, line).lstrip()
        if not text:
            break
        if text.startswith(("def ", "async def ")):
            return line
    return first


class _Block:
    """``with atomicity.atomic():`` (also usable as a decorator)."""

    __slots__ = ()

    def __enter__(self) -> _Block:
        rec = _recorder.current
        if rec is not None and rec.recording:
            frame = _getframe(1)
            rec.begin(frame.f_code, frame.f_lineno)
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> Literal[False]:
        rec = _recorder.current
        if rec is not None and rec.recording:
            frame = _getframe(1)
            rec.end(frame.f_code, frame.f_lineno)
        return False

    def __call__(self, func: F) -> F:
        return atomic(func)

    def __repr__(self) -> str:
        return "atomicity.atomic()"


@overload
def atomic(func: F) -> F: ...


@overload
def atomic(func: None = None) -> _Block: ...


def atomic(func: Optional[F] = None) -> Union[F, _Block]:
    """``@atomic`` makes each call of ``func`` a transaction; ``atomic()`` is a context
    manager whose block is one. See the module's documentation."""
    if func is None:
        return _Block()
    if not callable(func):
        raise TypeError("atomic() takes a function (as a decorator) or nothing (with "
                        "atomic(): ...), not %s" % type(func).__name__)
    return _decorate(func)


def _decorate(func: F) -> F:
    """``@atomic`` on ``func`` (a callable)."""
    code: Optional[CodeType] = getattr(func, "__code__", None)
    if code is not None and code.co_flags & _RESUMABLE:
        resumable_codes.add(code)
        return func
    if code is not None:
        line = _def_line(code)
    else:  # a callable object without code of its own: its call site stands for it
        line = 0

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        rec = _recorder.current
        if rec is None or not rec.recording:
            return func(*args, **kwargs)
        where = code
        at = line
        if where is None:
            frame = _getframe(1)
            where, at = frame.f_code, frame.f_lineno
        rec.begin(where, at)
        try:
            return func(*args, **kwargs)
        finally:
            if rec.recording:
                rec.end(where, at)

    return cast(F, wrapper)
