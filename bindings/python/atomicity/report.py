"""Violation reports, copied out of the library into plain Python objects."""

from __future__ import annotations

import ctypes
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

from . import _lib

__all__ = ["Report", "Transaction", "Event"]

Key = Union[int, str]


class Transaction(NamedTuple):
    """A transaction named by a report.

    ``thread`` is the thread's registered name when it has one (string keys, names from a
    trace file, :meth:`Session.set_name`), else its integer key. ``begin_index`` and
    ``begin_loc`` are the event index and ``loc`` of its BEGIN, or of its only event for a
    unary transaction (an access outside any BEGIN..END).
    """

    thread: Key
    begin_index: int
    begin_loc: int


class Event(NamedTuple):
    """A witness event of a report. ``kind`` is an :class:`atomicity.Kind` member; ``thread``
    and ``target`` are names where known, else keys; ``target`` is None for BEGIN, END and
    FENCE."""

    index: int  # type: ignore[assignment]  # a field named as tuple.index, on purpose
    kind: int
    thread: Key
    target: Optional[Key]
    loc: int


# Which key space the target of each event kind lives in, by kind name (event.h).
_TARGET_SPACE = {
    "READ": _lib.Space.VAR,
    "WRITE": _lib.Space.VAR,
    "COMMIT": _lib.Space.VAR,
    "ACQUIRE": _lib.Space.LOCK,
    "RELEASE": _lib.Space.LOCK,
    "FORK": _lib.Space.THREAD,
    "JOIN": _lib.Space.THREAD,
}


def _kind_text(kind: Any) -> Any:
    """"read" for Kind.READ; an int kind unknown to the library stays an int."""
    name = getattr(kind, "name", None)
    return kind if name is None else name.lower()


def target_space(kind: Any) -> Optional[_lib.Space]:
    """The key space of the target of ``kind`` (a Kind member), or None if it has none."""
    name = getattr(kind, "name", None)
    return _TARGET_SPACE.get(name) if isinstance(name, str) else None


class Report:
    """One violation found by a checker. Everything is copied when the object is made, so
    it stays valid after the session is closed.

    Attributes:
        checker: name of the checker that found it (``"aerodrome"``).
        checker_index: position of that checker in the session's attach order.
        kind: stable kind string (``"conflict-cycle"``, ...).
        event_index: 0-based index of the pushed event at which it was first found.
        count: occurrences of the same violation (same checker, kind and begin locations)
            when the report was copied; ``Session.reports`` gives fresh counts.
        message: one line, using registered names.
        evidence: ``"observed"`` (an online checker saw it), ``"predicted"`` (a predictive
            checker found a feasible interleaving) or ``"confirmed"`` (predicted, and an
            observed report of the session involves the same atomic blocks); see
            ``atom_report_evidence``. ``Session.reports`` gives the evidence after finish.
        transactions: list of :class:`Transaction`, in role order (a cycle: its order).
        events: list of witness :class:`Event`.
        variables: list of the variables named by the report (names where known, else keys).
    """

    __slots__ = ("checker", "checker_index", "kind", "event_index", "count", "message",
                 "transactions", "events", "variables", "evidence")

    checker: str
    checker_index: int
    kind: str
    event_index: int
    count: int
    message: str
    transactions: List[Transaction]
    events: List[Event]
    variables: List[Key]
    evidence: str

    def __init__(self, checker: str, checker_index: int, kind: str, event_index: int,
                 count: int, message: str, transactions: List[Transaction],
                 events: List[Event], variables: List[Key], evidence: str = "observed") -> None:
        self.checker = checker
        self.checker_index = checker_index
        self.kind = kind
        self.event_index = event_index
        self.count = count
        self.message = message
        self.transactions = transactions
        self.events = events
        self.variables = variables
        self.evidence = evidence

    def _fields(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Report):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        count = "" if self.count == 1 else " x%d" % self.count
        return "<Report %s %s at event %d%s: %s>" % (
            self.checker, self.kind, self.event_index, count, self.message)

    def __str__(self) -> str:
        return "%s: %s: %s" % (self.checker, self.kind, self.message)

    def as_dict(self) -> Dict[str, Any]:
        """The report as plain dicts, lists, strings and ints (for JSON)."""
        return {
            "checker": self.checker,
            "checker_index": self.checker_index,
            "kind": self.kind,
            "event_index": self.event_index,
            "count": self.count,
            "message": self.message,
            "evidence": self.evidence,
            "transactions": [t._asdict() for t in self.transactions],
            "events": [dict(e._asdict(), kind=_kind_text(e.kind)) for e in self.events],
            "variables": list(self.variables),
        }

    def _with_count(self, count: int, evidence: Optional[str] = None) -> Report:
        fields = list(self._fields())
        fields[self.__slots__.index("count")] = count
        if evidence is not None:
            fields[self.__slots__.index("evidence")] = evidence
        return Report(*fields)


def evidence_of(lib: _lib.Library, rep: int) -> str:
    """"observed", "predicted" or "confirmed" for the report at address ``rep``."""
    name = lib.atom_evidence_name(lib.atom_report_evidence(rep))
    return _lib.text(name) or "observed"


def snapshot(lib: _lib.Library, session: Optional[int], rep: int) -> Report:
    """Copy the report at address ``rep`` of ``session`` (both raw pointers) into a Report."""
    text = _lib.text

    def name_of(space: int, key: int) -> Key:
        name = lib.atom_get_name(session, space, key)
        decoded = text(name)
        return key if decoded is None else decoded

    transactions: List[Transaction] = []
    thread = ctypes.c_uint64()
    index = ctypes.c_uint64()
    loc = ctypes.c_uint64()
    for i in range(lib.atom_report_txn_count(rep)):
        if lib.atom_report_txn(rep, i, ctypes.byref(thread), ctypes.byref(index),
                               ctypes.byref(loc)) != 0:
            continue
        transactions.append(Transaction(name_of(_lib.Space.THREAD, thread.value),
                                        index.value, loc.value))

    events: List[Event] = []
    ev = _lib.CEvent()
    for i in range(lib.atom_report_event_count(rep)):
        if lib.atom_report_event(rep, i, ctypes.byref(ev), ctypes.byref(index)) != 0:
            continue
        try:
            kind = lib.Kind(ev.kind)
        except ValueError:
            kind = ev.kind
        space = target_space(kind)
        target = None if space is None else name_of(space, ev.target)
        events.append(Event(index.value, kind, name_of(_lib.Space.THREAD, ev.thread),
                            target, ev.loc))

    # Variables by their name now, as the events' targets, else the name they had when the
    # report was made, else their key.
    variables: List[Key] = []
    for i in range(lib.atom_report_var_count(rep)):
        var = name_of(_lib.Space.VAR, lib.atom_report_var(rep, i))
        if not isinstance(var, str):
            var = text(lib.atom_report_var_name(rep, i)) or var
        variables.append(var)

    return Report(
        checker=text(lib.atom_report_checker(rep)) or "",
        checker_index=lib.atom_report_checker_index(rep),
        kind=text(lib.atom_report_kind(rep)) or "",
        event_index=lib.atom_report_event_index(rep),
        count=lib.atom_report_occurrences(rep),
        message=text(lib.atom_report_message(rep)) or "",
        transactions=transactions,
        events=events,
        variables=variables,
        evidence=evidence_of(lib, rep),
    )
