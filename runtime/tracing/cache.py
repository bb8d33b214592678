"""The trace cache of one ``Function``: cache keys -> concrete functions, safe under threads.

Four tables (``signature.py`` makes the keys):

* ``by_key`` -- call key -> concrete function (a key matched by a general
  one is memoized here);
* ``fast`` -- the flat key of positional numpy/scalar arguments (the hot
  path of ``Function.__call__``) -> ``(cf, index of the array arguments)``;
* ``general`` -- ``(key with None dimensions, cf)`` pairs, tried in order;
* ``traced`` -- ``id(cf) -> (cf, key)`` of the distinct concrete functions
  cached, oldest first (what ``max_traces`` bounds).

Threads: reads take no lock (``dict.get``, and a walk over the ``general``
tuple, which is replaced, never changed); every write, and every walk over
a dict, happens under the function's lock.  Entries for a concrete
function evicted meanwhile are never added back.

Objects held weakly in keys (``signature.WeakIdentity``) are watched: once
one is gone, the next slow call or trace drops the traces keyed by it
(``purge``; the garbage collector's callback only raises a flag).
"""

from __future__ import annotations

import weakref

import numpy as np

from autograph.runtime.tracing import signature


class TraceCache:
    """The tables above, and the lock that guards their writes."""

    def __init__(self, lock):
        self.lock = lock
        self.by_key: dict = {}
        self.fast: dict = {}
        self.general: tuple = ()
        self.traced: dict = {}
        self.stale = False  # a watched object is gone: purge() at the next slow call
        self._watched: list = []

    def lookup(self, key, remember=False):
        """The cached concrete function for ``key`` or None (``remember``, under the lock:
        memoize a match of a general key).  An argument's ``__eq__`` may raise."""
        found = self.by_key.get(key)
        if found is None:
            for general, cf in self.general:
                if signature.keys_match(general, key):
                    if remember:
                        self.by_key[key] = cf
                    return cf
        return found

    def graphs(self) -> list:
        """The distinct concrete functions cached, oldest first."""
        return [cf for cf, _ in list(self.traced.values())]

    def keys(self) -> list:
        with self.lock:
            return list(self.by_key)

    def add(self, key, cf, general: bool) -> None:
        """Caches ``cf`` for ``key`` (under the lock); ``general``: the key has None dimensions."""
        self.by_key[key] = cf
        self.traced[id(cf)] = (cf, key)
        if general:
            self.general = self.general + ((key, cf),)
        self._watch(key)

    def remember_fast(self, args, leaves, cf) -> None:
        """Makes the hot path find ``cf`` for positional calls like ``args``, when the flat key says it all."""
        key = signature.flat_key(args)
        if key is None:
            return
        index = [i for i, a in enumerate(args) if type(a) is np.ndarray or isinstance(a, np.generic)]
        if len(index) != len(leaves) or any(args[i] is not leaf for i, leaf in zip(index, leaves)):
            return  # defaults or signature conversions hold arrays: the flat key does not say it all
        with self.lock:
            if id(cf) in self.traced:  # not evicted meanwhile by another thread
                self.fast[key] = (cf, None if len(index) == len(args) else tuple(index))

    def relaxed(self, key):
        """With reduce_retracing (under the lock): ``key`` relaxed against the keys traced before, if any fits."""
        for previous in list(self.by_key):
            if len(previous) != len(key):
                continue
            relaxed = tuple(signature.relax_key(a, b) for a, b in zip(previous, key))
            if None not in relaxed and relaxed != key:
                return relaxed
        return key

    def forget(self, cf) -> None:
        """Drops ``cf`` (under the lock): out of date."""
        self._drop({id(cf)})

    def evict(self, keep: int) -> None:
        """Drops the oldest cached concrete functions until ``keep`` remain (under the lock)."""
        cached = list(self.traced)
        self._drop(set(cached[: max(0, len(cached) - keep)]))

    def _drop(self, dropped: set) -> None:
        """Forgets the concrete functions whose ids are in ``dropped`` (under the lock)."""
        if not dropped:
            return
        for table, cf_of in ((self.by_key, lambda v: v), (self.fast, lambda v: v[0])):
            for k in [k for k, v in table.items() if id(cf_of(v)) in dropped]:
                del table[k]
        self.general = tuple((k, cf) for k, cf in self.general if id(cf) not in dropped)
        for i in dropped:
            self.traced.pop(i, None)

    def _watch(self, key) -> None:
        parts = []
        for component in key:
            signature.weak_parts(component, parts)
        for part in parts:
            for ref in part.refs:
                obj = ref()
                if obj is not None:
                    self._watched.append(weakref.ref(obj, self._object_freed))

    def _object_freed(self, _ref) -> None:
        self.stale = True  # only a flag: this runs inside the garbage collector, maybe mid-walk

    def purge(self) -> None:
        """Drops the traces keyed by objects that no longer exist."""
        with self.lock:
            self.stale = False
            self._watched = [r for r in self._watched if r() is not None]
            dead = set()
            for i, (_, key) in self.traced.items():
                parts = []
                for component in key:
                    signature.weak_parts(component, parts)
                if not all(part.alive() for part in parts):
                    dead.add(i)
            self._drop(dead)
