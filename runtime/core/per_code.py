"""``per_code(fn)``: ``fn(code)`` remembered per code object, by identity.

``functools.lru_cache`` keys by equality, and a code object's hash walks its
constants -- every function nested in it, again for each of them -- which a
trace paid at every tensor statement of a freshly converted function.  Here
the key is ``id(code)``; the entry holds the code object, so the id is not
reused while it is remembered.
"""

from __future__ import annotations

import functools

_LIMIT = 4096  # code objects remembered per function; all are forgotten past it


def per_code(fn):
    """``fn`` (a function of one code object) with its results remembered."""
    cache: dict = {}

    @functools.wraps(fn)
    def cached(code):
        found = cache.get(id(code))
        if found is not None and found[0] is code:
            return found[1]
        result = fn(code)
        if len(cache) >= _LIMIT:
            cache.clear()
        cache[id(code)] = (code, result)
        return result

    return cached
