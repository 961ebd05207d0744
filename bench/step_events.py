"""What a run's step events cost each step (docs/benchmarks.md, Runs): CPU time of `StepEvents.add`, the call
a run makes at every step's start and end, with no reader and with a reader following.

    .venv/bin/python bench/step_events.py [--events 100000] [--repeat 5]

CPU time of this process (``time.process_time``), so that the load of other processes on the
machine moves the figure little; the reader, when there is one, is a thread of this process.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from workrail_engine.runs.step_events import StepEvents


def one_round(events: int, follow: bool) -> float:
    feeds = StepEvents()
    feeds.open("wf-bench")
    stop = threading.Event()

    def reader() -> None:
        cursor = 0
        while not stop.is_set():
            read = feeds.read("wf-bench", cursor, 0.5, stop)
            if read is None:
                return
            cursor = read.cursor

    thread = threading.Thread(target=reader) if follow else None
    if thread is not None:
        thread.start()
    started = time.process_time()
    for i in range(events):
        feeds.add("wf-bench", "started" if i % 2 == 0 else "ended", f"s{i // 2}", title="Step")
    spent = time.process_time() - started
    stop.set()
    feeds.close("wf-bench")
    if thread is not None:
        thread.join()
    return spent / events * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    alone, followed = [], []
    for _ in range(args.repeat):  # interleaved
        alone.append(one_round(args.events, follow=False))
        followed.append(one_round(args.events, follow=True))
    for name, figures in (("no reader", alone), ("a reader following", followed)):
        shown = ", ".join(f"{f:.2f}" for f in figures)
        print(f"{name}: {shown} µs CPU per event (median {statistics.median(figures):.2f})")


if __name__ == "__main__":
    main()
