"""A transfer between two accounts in two locked steps (the buggy version).

Every access to a balance holds the bank's lock, so there is no data race, yet transfer() is
not atomic: it releases the lock between the withdrawal and the deposit, and an audit that
runs in between sees money missing. The fixed twin is bank_fixed.py.

    python3 -m atomicity run bank.py
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


# Force the interleaving that shows the bug: the audit runs between the two steps.
withdrawn = Gate()
audited = Gate()


@atomicity.atomic
def transfer(src, dst, amount):
    with lock:  # access: withdraw-lock
        src.balance -= amount  # access: withdraw
    withdrawn.open()
    audited.wait()
    with lock:  # access: deposit-lock
        dst.balance += amount  # access: deposit


@atomicity.atomic
def audit():
    withdrawn.wait()
    with lock:  # access: audit-lock
        totals.append(alice.balance + bob.balance)  # access: audit
    audited.open()


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
