"""The pipeline's threads: ``prefetch`` (a bounded buffer filled by a background thread) and
``map(num_parallel_calls=...)`` (a thread pool; numpy releases the GIL on large arrays).

Both are generators whose ``finally`` stops and joins their threads, so a
consumer that breaks out of its loop, raises, or drops its iterator leaves
no thread behind.  An exception raised upstream or in a map function
reaches the consumer with its own type (and the notes of
``functions.DataFunction``).

Handing an element to another thread costs a wakeup of each thread and a
GIL handover (tens of microseconds, milliseconds on a loaded machine), so
a prefetch and an ``AUTOTUNE`` map time their first elements inline
(``_inline_while_cheap``): elements cheaper than that (``INLINE_SECONDS``)
are made inline, timed again every ``REPROBE_ELEMENTS``; costlier ones
move to a thread (a prefetch) or one thread per core (a map).  The
elements and their order are the same either way.  ``AUTOTUNE`` prefetch:
the buffer starts with room for one element and grows (doubling, up to
``MAX_AUTOTUNED_BUFFER``) each time the consumer finds it empty, i.e. each
time the producer is the bottleneck.

The threads run in a copy of the context that starts them, so what the
pipeline reads from its run's context (a loaded graph's iteration budget,
``exec/limits.py``) reaches them.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextvars
import os
import itertools
import queue
import threading
import time

from autograph.runtime.data.checks import AUTOTUNE

MAX_AUTOTUNED_BUFFER = 64
THREAD_PREFIX = "autograph-data"
_ITEM, _END, _ERROR = "item", "end", "error"
_POLL_SECONDS = 0.05


class Room:
    """A counting semaphore whose capacity can grow (the prefetch buffer's free slots)."""

    def __init__(self, capacity):
        self.capacity = capacity
        self._free = threading.Semaphore(capacity)

    def take(self, stop) -> bool:
        """Waits for a free slot; False once ``stop`` is set."""
        while not self._free.acquire(timeout=_POLL_SECONDS):
            if stop.is_set():
                return False
        return not stop.is_set()

    def give(self):
        self._free.release()

    def grow(self, limit):
        if self.capacity < limit:
            added = min(self.capacity, limit - self.capacity)
            self.capacity += added
            self._free.release(added)


def _produce(source, items, room, stop):
    try:
        for element in source:
            if not room.take(stop):
                return
            items.put((_ITEM, element))
        items.put((_END, None))
    except BaseException as e:  # noqa: BLE001 - handed to the consumer, which raises it
        items.put((_ERROR, e))
    finally:
        source.close()  # closes the upstream generators (and their threads) in this thread


def prefetched(source, buffer_size):
    """The elements of the generator ``source``, computed up to ``buffer_size`` ahead on a thread
    once producing one costs more than handing it over; cheaper ones are produced inline."""
    yield from _inline_while_cheap(source, lambda rest: _prefetched_on_thread(rest, buffer_size))


def _prefetched_on_thread(source, buffer_size):
    autotune = buffer_size == AUTOTUNE
    room = Room(1 if autotune else buffer_size)
    items = queue.Queue()
    stop = threading.Event()
    context = contextvars.copy_context()
    producer = threading.Thread(target=context.run, args=(_produce, source, items, room, stop), daemon=True,
                                name=f"{THREAD_PREFIX}-prefetch")
    producer.start()
    try:
        while True:
            if autotune and items.empty():
                room.grow(MAX_AUTOTUNED_BUFFER)
            kind, value = items.get()
            if kind == _ITEM:
                room.give()
                yield value
            elif kind == _END:
                return
            else:
                raise value
    finally:
        stop.set()
        producer.join()


def workers(num_parallel_calls) -> int:
    return os.cpu_count() or 1 if num_parallel_calls == AUTOTUNE else num_parallel_calls


def parallel_map(fn, source, num_parallel_calls, deterministic):
    """``fn`` over the elements of ``source`` on a pool of threads, at most twice as many
    elements in flight as workers; in input order unless ``deterministic`` is false.
    ``AUTOTUNE``: ``autotuned_map``."""
    if num_parallel_calls == AUTOTUNE:
        yield from autotuned_map(fn, source, deterministic)
        return
    yield from _pooled(fn, source, num_parallel_calls, deterministic)


def _pooled(fn, source, n, deterministic):
    pool = concurrent.futures.ThreadPoolExecutor(n, thread_name_prefix=f"{THREAD_PREFIX}-map")
    pending = collections.deque()
    try:
        for leaves in source:
            pending.append(pool.submit(contextvars.copy_context().run, fn, leaves))
            if len(pending) >= 2 * n:
                yield _next_done(pending, deterministic)
        while pending:
            yield _next_done(pending, deterministic)
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)
        source.close()


# AUTOTUNE: elements cheaper than this run inline (handing one to a thread costs about as much)
INLINE_SECONDS = 200e-6
PROBE_ELEMENTS = 8  # elements timed inline before choosing, and again every REPROBE_ELEMENTS
REPROBE_ELEMENTS = 512


def autotuned_map(fn, source, deterministic):
    """``num_parallel_calls=AUTOTUNE``: cheap calls stay inline (``_inline_while_cheap``), costly
    ones go to one thread per core."""
    source = iter(source)
    calls = (tuple(fn(leaves)) for leaves in source)
    try:
        yield from _inline_while_cheap(calls, lambda _: _pooled(fn, source, workers(AUTOTUNE), deterministic))
    finally:
        source.close()


_DONE = object()


def _inline_while_cheap(elements, threaded):
    """The items of the generator ``elements``: ``PROBE_ELEMENTS`` timed inline; while they cost
    less than ``INLINE_SECONDS`` each (or there is one core) the next ``REPROBE_ELEMENTS`` are made
    inline too, then timed again; once costlier, the rest come from ``threaded(elements)``."""
    try:
        while True:
            spent = 0.0
            for _ in range(PROBE_ELEMENTS):
                start = time.perf_counter()
                item = next(elements, _DONE)
                spent += time.perf_counter() - start
                if item is _DONE:
                    return
                yield item
            if spent / PROBE_ELEMENTS < INLINE_SECONDS or workers(AUTOTUNE) == 1:
                yield from itertools.islice(elements, REPROBE_ELEMENTS)
                continue
            yield from threaded(elements)
            return
    finally:
        elements.close()


def _next_done(pending, deterministic):
    if deterministic:
        return tuple(pending.popleft().result())
    done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
    first = next(f for f in pending if f in done)
    pending.remove(first)
    return tuple(first.result())
