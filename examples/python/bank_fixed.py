"""A transfer between two accounts in one locked step (the twin of bank.py).

The withdrawal and the deposit happen in one critical section, so an audit sees the money
either before or after the transfer, never in flight.

    python3 -m atomicity run bank_fixed.py
"""

import threading

import atomicity

from gate import Gate


class Account:
    def __init__(self, owner, balance):
        self.owner = owner
        self.balance = balance


lock = threading.Lock()
alice = Account("alice", 100)
bob = Account("bob", 0)
totals = []  # what the audit saw


# The same forcing as in bank.py: the audit starts right after the withdrawal. It cannot
# look before the deposit, because transfer() holds the lock until then: that is the fix.
withdrawn = Gate()


@atomicity.atomic
def transfer(src, dst, amount):
    with lock:  # access: withdraw-lock
        src.balance -= amount  # access: withdraw
        withdrawn.open()
        dst.balance += amount  # access: deposit


@atomicity.atomic
def audit():
    withdrawn.wait()
    with lock:  # access: audit-lock
        totals.append(alice.balance + bob.balance)  # access: audit


def main():
    threads = [threading.Thread(target=transfer, args=(alice, bob, 50), name="transfer"),
               threading.Thread(target=audit, name="audit")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"the audit saw a total of {totals[0]} (the bank holds {alice.balance + bob.balance})")


if __name__ == "__main__":
    main()
