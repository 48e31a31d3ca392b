"""Producer and consumers handing jobs over through queue.Queue, done right (the control).

The producer fills in each job before it puts it in the queue; a consumer reads the job only
after it got it from the queue, and records its result under a lock in one step. Nothing here
is a violation, and the checkers must say so.

    python3 -m atomicity run queue_control.py
"""

import queue
import threading

import atomicity

CONSUMERS = 2
JOBS = 20


class Job:
    def __init__(self, number):
        self.number = number
        self.payload = None


results = {}
results_lock = threading.Lock()


@atomicity.atomic
def make_job(number):
    job = Job(number)
    job.payload = list(range(number))  # access: fill
    return job


@atomicity.atomic
def handle(job):
    total = sum(job.payload)  # access: use
    with results_lock:
        results[job.number] = total  # access: record


def producer(jobs):
    for number in range(JOBS):
        jobs.put(make_job(number))
    for _ in range(CONSUMERS):
        jobs.put(None)  # one "no more jobs" per consumer


def consumer(jobs):
    while True:
        job = jobs.get()
        if job is None:
            break
        handle(job)


def main():
    jobs = queue.Queue(maxsize=4)
    threads = [threading.Thread(target=producer, args=(jobs,))]
    threads += [threading.Thread(target=consumer, args=(jobs,)) for _ in range(CONSUMERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    right = all(results[n] == n * (n - 1) // 2 for n in range(JOBS))
    print(f"{len(results)} of {JOBS} jobs handled, every result right: {right}")


if __name__ == "__main__":
    main()
