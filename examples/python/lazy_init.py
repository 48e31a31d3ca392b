"""A lazily created configuration object, with a check-then-act race (the buggy version).

get_config() creates the configuration on first use through a module global. Two threads
that ask at the same time can both find it missing, load it twice and end up holding two
different objects. The fixed twin is lazy_init_fixed.py.

    python3 -m atomicity run --atomic lazy_init:get_config lazy_init.py
"""

import threading

from gate import Gate

_config = None
seen = {}  # thread name -> the configuration object it got


# Force the interleaving that shows the bug: the first thread waits while it loads (after its
# check, before its assignment) until the second thread has got its configuration.
first_loading = Gate()
second_done = Gate()


def load_config():
    """The expensive part: in a real program, reading and parsing a file."""
    if threading.current_thread().name == "first":
        first_loading.open()
        second_done.wait()
    # "loaded_by" only shows the outcome: which thread loaded it.
    return {"retries": 3, "timeout": 10.0, "loaded_by": threading.current_thread().name}


def get_config():
    global _config
    if _config is None:  # access: check
        _config = load_config()  # access: init
    return _config


def first():
    seen["first"] = get_config()


def second():
    first_loading.wait()
    seen["second"] = get_config()
    second_done.open()


def main():
    threads = [threading.Thread(target=first, name="first"),
               threading.Thread(target=second, name="second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shared = "one object" if seen["first"] is seen["second"] else "two different objects"
    loads = len({config["loaded_by"] for config in seen.values()})
    print(f"the configuration was loaded {loads} time(s); the threads hold {shared}")


if __name__ == "__main__":
    main()
