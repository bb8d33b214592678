"""Running a pipeline: one rule per dataset kind, each a generator of flat element tuples.

``elements(ds)`` is a generator of the elements of ``ds`` as flat tuples
of numpy leaves.  ``RULES[kind](ds)`` builds the generator of one node
from the generators of its inputs, so a pipeline runs as a chain of
generators pulled by the consumer; closing the outermost one (a ``break``,
an exception, the iterator dropped) closes the whole chain, and the
``finally`` blocks of ``threads.py`` stop the background threads.

In a run of a loaded graph (``exec/limits.py``), an element a node
consumes without passing it on -- skipped, rejected by a filter, merged
into a batch or a chunk -- counts as one iteration of the run's budget
(``_spend``), as each element the ``DatasetReduce`` receives does: a file
cannot make a pipeline spin unbounded between two elements
(``range(10**15).skip(10**14)``).  ``threads.py`` runs its threads in the
context of the run, so the budget reaches them.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from autograph.runtime.data import argument, sources, threads
from autograph.runtime.exec import limits


class EpochCounter:
    """How many times a ``shuffle`` was iterated (each iteration reshuffles, reproducibly), and
    its seed: the user's, or one drawn when the shuffle is made (``seed=None``), so that
    ``reshuffle_each_iteration=False`` repeats one order."""

    def __init__(self, seed=None):
        self._count = itertools.count()
        self.seed = seed if seed is not None else int(np.random.SeedSequence().entropy % 2 ** 63)

    def next(self) -> int:
        return next(self._count)


class CacheStore:
    """The elements of a ``cache``'s first complete iteration."""

    def __init__(self):
        self.elements = None
        self.lock = threading.Lock()


def elements(ds):
    """The elements of ``ds``, as flat tuples of numpy leaves."""
    return RULES[ds.kind](ds)


def _input(ds):
    return elements(ds.inputs[0])


def _spend(budget, count, kind):
    """Counts ``count`` elements a ``kind`` node consumed without passing on (``budget``: the
    run's, from ``limits.current()``; None outside a run of a loaded graph with a limit)."""
    if budget is not None:
        for _ in range(count):
            budget.spend(f"the {kind} of a loaded pipeline")


def _argument(ds):
    """A trace's stand-in for a dataset argument: the elements of that dataset (``argument.py``)."""
    return argument.referent(ds).flat_elements()


def _from_tensor_slices(ds):
    leaves = ds.attrs["leaves"]
    for i in range(len(leaves[0])):
        yield tuple(_row(a, i) for a in leaves)


def _row(array, i):
    row = array[i]
    return row.copy() if isinstance(row, np.ndarray) else row


def _range(ds):
    dtype = ds.element_spec.dtype
    for value in range(ds.attrs["start"], ds.attrs["stop"], ds.attrs["step"]):
        yield (dtype.type(value),)


def _from_generator(ds):
    generator, spec = ds.attrs["generator"], ds.element_spec
    for index, value in enumerate(generator()):
        yield sources.generated_leaves(value, spec, generator, index)


def _zip(ds):
    for parts in zip(*[elements(d) for d in ds.inputs]):
        yield tuple(leaf for part in parts for leaf in part)


def _concatenate(ds):
    yield from elements(ds.inputs[0])
    yield from elements(ds.inputs[1])


def _map(ds):
    fn = ds.attrs["fn"]
    parallel = ds.attrs["num_parallel_calls"]
    if parallel is not None:
        yield from threads.parallel_map(fn, _input(ds), parallel, ds.attrs["deterministic"])
        return
    for leaves in _input(ds):
        yield tuple(fn(leaves))


def _filter(ds):
    predicate, budget = ds.attrs["predicate"], limits.current()
    for leaves in _input(ds):
        if predicate(leaves)[0]:
            yield leaves
        elif budget is not None:
            _spend(budget, 1, "filter")


def _take_while(ds):
    predicate = ds.attrs["predicate"]
    for leaves in _input(ds):
        if not predicate(leaves)[0]:
            return
        yield leaves


def _batch(ds):
    size, drop = ds.attrs["batch_size"], ds.attrs["drop_remainder"]
    source, budget = _input(ds), limits.current()
    while True:
        rows = list(_counted(source, size, budget, "batch"))
        if not rows or (drop and len(rows) < size):
            _spend(budget, 1 if rows else 0, "batch")  # the dropped remainder (its other rows are counted)
            return
        yield stack(rows, ds)


def _counted(source, rows, budget, kind):
    """Up to ``rows`` elements of ``source`` for one batch or chunk; each but the first counted."""
    if budget is None:
        return itertools.islice(source, rows)
    return _counting(itertools.islice(source, rows), budget, kind)


def _counting(rows, budget, kind):
    for i, leaves in enumerate(rows):
        if i:
            _spend(budget, 1, kind)
        yield leaves


def stack(rows, ds):
    """The batch of ``rows`` (flat element tuples): each component stacked along a new first axis."""
    try:
        return tuple(np.stack(column) for column in zip(*rows))
    except ValueError:
        shapes = sorted({str(tuple(np.shape(c))) for column in zip(*rows) for c in column})
        raise ValueError(
            f"batch({ds.attrs['batch_size']}) cannot stack elements of different shapes ({', '.join(shapes)}); "
            "make the elements the same shape first (pad or resize them in a map)"
        ) from None


def _unbatch(ds):
    for leaves in _input(ds):
        lengths = {len(leaf) for leaf in leaves}
        if len(lengths) > 1:
            raise ValueError(f"unbatch(): the components of an element have different first dimensions "
                             f"{sorted(lengths)}; they must agree")
        for i in range(lengths.pop()):
            yield tuple(_row(leaf, i) for leaf in leaves)


def _shuffle(ds):
    size, epochs = ds.attrs["buffer_size"], ds.attrs["epochs"]
    epoch = epochs.next() if ds.attrs["reshuffle_each_iteration"] else 0
    rng = np.random.default_rng([epochs.seed, epoch])
    buffer = []
    for leaves in _input(ds):
        if len(buffer) < size:
            buffer.append(leaves)
            continue
        i = int(rng.integers(size))
        yield buffer[i]
        buffer[i] = leaves
    order = rng.permutation(len(buffer))
    for i in order:
        yield buffer[i]


def _repeat(ds):
    count = ds.attrs["count"]
    epochs = itertools.count() if count == -1 else range(count)
    for _ in epochs:
        produced = False
        for leaves in _input(ds):
            produced = True
            yield leaves
        if not produced:  # an empty dataset repeated forever is empty, not a hang
            return


def _shuffle_repeat(ds):
    """``shuffle`` then ``repeat`` in one node (``rewrites.py``): each epoch a new permutation."""
    count = ds.attrs["count"]
    for _ in itertools.count() if count == -1 else range(count):
        produced = False
        for leaves in _shuffle(ds):
            produced = True
            yield leaves
        if not produced:
            return


def _take(ds):
    count = ds.attrs["count"]
    source = _input(ds)
    yield from source if count == -1 else itertools.islice(source, count)


def _skip(ds):
    count = ds.attrs["count"]
    source, budget = _input(ds), limits.current()
    for _ in source if count == -1 else itertools.islice(source, count):
        _spend(budget, 1, "skip")
    yield from source


def _enumerate(ds):
    for index, leaves in enumerate(_input(ds), ds.attrs["start"]):
        yield (np.int64(index), *leaves)


def _scan(ds):
    yield from ds.attrs["scan"].scan(_input(ds))


def _cache(ds):
    store = ds.attrs["store"]
    cached = store.elements
    if cached is not None:
        yield from cached
        return
    seen = []
    for leaves in _input(ds):
        seen.append(leaves)
        yield leaves
    with store.lock:
        if store.elements is None:
            store.elements = seen


def _options(ds):
    return _input(ds)


def _map_filter(ds):
    fn, budget = ds.attrs["fn"], limits.current()
    for leaves in _input(ds):
        values = fn(leaves)
        if values[-1]:
            yield tuple(values[:-1])
        elif budget is not None:
            _spend(budget, 1, "filter")


def _chunks(ds):
    """The input's rows, ``rows`` at a time, stacked (a ``from_tensor_slices`` source: sliced)."""
    rows, source, budget = ds.attrs["rows"], ds.inputs[0], limits.current()
    if source.kind == "from_tensor_slices":
        leaves = source.attrs["leaves"]
        for start in range(0, len(leaves[0]), rows):
            chunk = tuple(a[start:start + rows] for a in leaves)
            _spend(budget, len(chunk[0]) - 1, "chunks")
            yield chunk
        return
    elements = _input(ds)
    while True:
        chunk = list(_counted(elements, rows, budget, "chunks"))
        if not chunk:
            return
        yield tuple(np.stack(column) for column in zip(*chunk))


def _vectorized(ds):
    stages = ds.attrs["stages"]
    for chunk in _input(ds):
        columns = chunk
        for kind, fn in stages:
            if kind == "map":
                columns = tuple(fn(list(columns)))
            elif kind == "filter":
                mask = fn(list(columns))[0]
                columns = tuple(c[mask] for c in columns)
            else:  # map_filter: the mapped columns, then the verdicts
                values = fn(list(columns))
                mask = values[-1]
                columns = tuple(c[mask] for c in values[:-1])
        # the batches cut from these columns are views: no column may be the source's memory
        yield tuple(c.copy() if any(np.may_share_memory(c, s) for s in chunk) else c for c in columns)


def _rebatch(ds):
    """Exact batches of ``batch_size`` rows cut from the chunks of the input (its own arrays)."""
    size, drop = ds.attrs["batch_size"], ds.attrs["drop_remainder"]
    pending, count = [], 0
    for columns in _input(ds):
        if len(columns[0]) == 0:
            continue
        pending.append(columns)
        count += len(columns[0])
        if count < size:
            continue
        merged = pending[0] if len(pending) == 1 else tuple(np.concatenate(c) for c in zip(*pending))
        start = 0
        while count - start >= size:
            yield tuple(c[start:start + size] for c in merged)
            start += size
        count -= start
        pending = [tuple(c[start:] for c in merged)] if count else []
    if count and not drop:
        yield pending[0] if len(pending) == 1 else tuple(np.concatenate(c) for c in zip(*pending))


def _prefetch(ds):
    size = ds.attrs["buffer_size"]
    if size == 0:
        return _input(ds)
    return threads.prefetched(_input(ds), size)


RULES = {
    "argument": _argument,
    "from_tensor_slices": _from_tensor_slices,
    "range": _range,
    "from_generator": _from_generator,
    "zip": _zip,
    "concatenate": _concatenate,
    "map": _map,
    "filter": _filter,
    "take_while": _take_while,
    "batch": _batch,
    "unbatch": _unbatch,
    "shuffle": _shuffle,
    "repeat": _repeat,
    "take": _take,
    "skip": _skip,
    "enumerate": _enumerate,
    "scan": _scan,
    "cache": _cache,
    "prefetch": _prefetch,
    "options": _options,
    # made by the rewrites (rewrites.py, vectorize.py)
    "map_filter": _map_filter,
    "shuffle_repeat": _shuffle_repeat,
    "chunks": _chunks,
    "vectorized": _vectorized,
    "rebatch": _rebatch,
}
