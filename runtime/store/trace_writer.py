"""The server's trace writer: traces are staged (redacted, serialized) and written in batches on a
thread of their own, off the event loop and the request threads.

* **Bounded.** At most ``capacity`` traces wait (``UMMAYA_TRACE_QUEUE``, default 1024). A trace
  that finds the queue full is refused at once with ``TraceBacklog`` (code ``trace_backlog``) and
  counted (``rejected``) — memory never grows without bound; ``full()`` lets a caller refuse new
  work before it starts (the server answers 503 ``trace_backlog``).
* **Batched.** The thread takes up to ``batch`` waiting traces (``UMMAYA_TRACE_BATCH``, default 64)
  and writes them in one transaction (``Store.put_staged_traces``; SQLite: on a connection of the
  writer's own, so session reads never wait behind it). If the batch fails, each trace is retried
  alone, so one bad trace never costs the others theirs.
* **Nothing completed is lost.** ``submit`` returns a future that resolves once the trace is
  committed; the server sends ``completed`` (with the trace id) only after it resolves, so a
  crash loses only traces whose answers were never sent as completed. ``close()`` drains the queue
  (the server calls it on shutdown) — traces submitted without waiting (a client that left
  mid-turn) are written too.
* **No fork after threads.** The thread starts on the first ``submit``, i.e. inside the serving
  process, after any worker fork.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from .records import StoreFault

log = logging.getLogger("ummaya.store.traces")

QUEUE_ENV = "UMMAYA_TRACE_QUEUE"
BATCH_ENV = "UMMAYA_TRACE_BATCH"

# What one queued job yields: (trace, policy, personal values) or None (nothing to store).
Job = Callable[[], "tuple[Any, Any, Any] | None"]


class TraceBacklog(StoreFault):
    """The trace queue is full: the store is not keeping up with the answers."""

    def __init__(self, capacity: int):
        super().__init__("trace_backlog", f"{capacity} traces are already waiting to be stored; "
                                          "try again shortly")


def _env_int(name: str, default: int) -> int:
    try:
        return max(1, int(os.environ.get(name) or default))
    except ValueError:
        return default


class TraceWriter:
    def __init__(self, store: Any, *, capacity: int | None = None, batch: int | None = None):
        self.store = store
        self.capacity = capacity or _env_int(QUEUE_ENV, 1024)
        self.batch = batch or _env_int(BATCH_ENV, 64)
        self._queue: collections.deque[tuple[Job, Future[Any]]] = collections.deque()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._busy = 0  # traces taken off the queue and not yet resolved
        self.submitted = self.stored = self.failed = self.rejected = self.batches = 0
        self.max_depth = 0

    # -- the caller's side
    def submit(self, job: Job) -> Future[Any]:
        """Queue one trace; the future resolves to what was stored (or None), or to the error."""
        fut: Future[Any] = Future()
        with self._cv:
            if self._closed:  # after shutdown began: write in the caller's thread
                self._write([(job, fut)])
                return fut
            if len(self._queue) >= self.capacity:
                self.rejected += 1
                fut.set_exception(TraceBacklog(self.capacity))
                return fut
            self._queue.append((job, fut))
            self.submitted += 1
            self.max_depth = max(self.max_depth, len(self._queue))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ummaya-trace-writer", daemon=True)
                self._thread.start()
            self._cv.notify()
        return fut

    def full(self) -> bool:
        return len(self._queue) >= self.capacity

    def stats(self) -> dict[str, int]:
        return {"queued": len(self._queue), "capacity": self.capacity, "submitted": self.submitted,
                "stored": self.stored, "failed": self.failed, "rejected": self.rejected,
                "batches": self.batches, "max_queued": self.max_depth}

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Wait until every trace submitted so far is resolved; False on timeout."""
        with self._cv:
            return self._cv.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self, timeout: float | None = 30.0) -> None:
        """Drain the queue and stop the thread (shutdown): every queued trace is written."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._cv:  # the thread never started or gave up: write what is left here
            left = list(self._queue)
            self._queue.clear()
        if left:
            self._write(left)

    # -- the writer's side
    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._closed:
                    self._cv.wait()
                if not self._queue:
                    return
                n = min(len(self._queue), self.batch)
                items = [self._queue.popleft() for _ in range(n)]
                self._busy += n
            try:
                self._write(items)
            finally:
                with self._cv:
                    self._busy -= n
                    self._cv.notify_all()

    def _write(self, items: list[tuple[Job, Future[Any]]]) -> None:
        staged: list[tuple[Any, Any, Future[Any]]] = []  # (stored row or None, original args, future)
        for job, fut in items:
            try:
                args = job()
                row = None if args is None else self.store._stage_trace(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                self._fail(fut, exc)
                continue
            if row is None:
                self._done(fut, None)
            else:
                staged.append((row, args, fut))
        if not staged:
            return
        self.batches += 1
        try:
            self.store.put_staged_traces([row for row, _, _ in staged])
        except BaseException as exc:  # noqa: BLE001 - retried one by one below
            if len(staged) == 1:
                self._fail(staged[0][2], exc)
                return
            for row, _, fut in staged:
                try:
                    self.store.put_staged_traces([row])
                except BaseException as one:  # noqa: BLE001
                    self._fail(fut, one)
                else:
                    self._done(fut, row)
            return
        for row, _, fut in staged:
            self._done(fut, row)

    def _done(self, fut: Future[Any], row: Any) -> None:
        self.stored += row is not None
        if not fut.done():
            fut.set_result(row)

    def _fail(self, fut: Future[Any], exc: BaseException) -> None:
        self.failed += 1
        if not fut.done():
            fut.set_exception(exc)
