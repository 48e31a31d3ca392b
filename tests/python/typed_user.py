"""A user of the package, as its type hints promise it: checked with mypy --strict and run by
test_loading.TestTypes, so a regression of the public typing fails a test.

The lines marked ``# type: ignore[...]`` are calls that must NOT type-check (a wrong argument
type): under --strict an ignore that is not needed is itself an error, so each one proves that
mypy still sees the real signature.
"""

import io
import threading
from typing import Dict, Iterator, List

import atomicity


@atomicity.atomic
def transfer(accounts: Dict[str, int], src: str, dst: str, amount: int) -> int:
    accounts[src] -= amount
    accounts[dst] += amount
    return accounts[src]


@atomicity.atomic()
def lookup(cache: Dict[str, int], key: str) -> int:
    return cache.get(key, 0)


@atomicity.atomic
def numbers(n: int) -> Iterator[int]:
    yield from range(n)


class Counter:
    def __init__(self) -> None:
        self.value = 0
        self.lock = threading.Lock()

    @atomicity.atomic
    def increment(self, by: int = 1) -> int:
        with self.lock:
            self.value += by
            return self.value


def wrong_calls() -> None:
    """Never called: each line is an error the decorator must not hide."""
    transfer({}, "a", "b", "ten")  # type: ignore[arg-type]
    lookup({}, 1)  # type: ignore[arg-type]
    Counter().increment("1")  # type: ignore[arg-type]
    name: str = transfer({}, "a", "b", 1)  # type: ignore[assignment]
    del name


def balance_after_transfer() -> int:
    accounts = {"a": 10, "b": 0}
    left: int = transfer(accounts, "a", "b", 3)
    with atomicity.atomic():
        left += lookup(accounts, "b")
    total = sum(numbers(3)) + Counter().increment(2)
    return left + total


def session_reports() -> List[str]:
    """A check-then-act that thread 2's write interleaves: aerodrome reports it."""
    session = atomicity.Session(["aerodrome"])
    try:
        session.set_name(atomicity.Space.VAR, "x", "x")
        session.begin(1)
        session.read(1, "x")
        session.write(2, "x")
        session.write(1, "x")
        session.end(1)
        reports: List[atomicity.Report] = session.finish()
        return [r.checker + ": " + r.message for r in reports]
    except atomicity.Error as exc:
        return ["error: " + str(exc)]
    finally:
        session.close()


def trace_reports() -> int:
    text = io.StringIO("t1|begin|0\nt1|r(x)|1\nt2|w(x)|2\nt1|w(x)|3\nt1|end|4\n")
    try:
        return len(atomicity.check_trace(text, "aerodrome"))
    except atomicity.TraceNotFoundError:
        return -1


def main() -> List[str]:
    return ["balance %d" % balance_after_transfer()] + session_reports() + \
        ["trace %d" % trace_reports()]


if __name__ == "__main__":
    print("\n".join(main()))
