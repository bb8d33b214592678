"""Static shapes: a tuple of dimension sizes, ``None`` for an unknown size.

An unknown rank is the shape ``None``.  Functions here combine shapes the
way ops and control flow need: compatibility, merging (the most specific
shape two compatible shapes agree on), relaxing (the most general shape
covering both) and numpy broadcasting.
"""

from __future__ import annotations

Shape = "tuple[int | None, ...] | None"


def as_shape(value) -> tuple | None:
    """Normalizes ``value`` (None, int, iterable of int/None) to a shape."""
    if value is None:
        return None
    if isinstance(value, int):
        return (value,)
    dims = []
    for d in value:
        if d is None or d == -1:
            dims.append(None)
        else:
            d = int(d)
            if d < 0:
                raise ValueError(f"invalid dimension {d} in shape {tuple(value)!r}")
            dims.append(d)
    return tuple(dims)


def format_shape(shape) -> str:
    """``(3, None)`` -> ``[3,?]``; unknown rank -> ``[*]``."""
    if shape is None:
        return "[*]"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def is_fully_defined(shape) -> bool:
    return shape is not None and None not in shape  # (dimensions are ints or None: no other == None)


def is_compatible(a, b) -> bool:
    """True if some concrete shape matches both ``a`` and ``b``."""
    if a is None or b is None:
        return True
    if len(a) != len(b):
        return False
    return all(x is None or y is None or x == y for x, y in zip(a, b))


def merge(a, b):
    """The most specific shape compatible with both; ValueError if none is."""
    if not is_compatible(a, b):
        raise ValueError(f"shapes {format_shape(a)} and {format_shape(b)} are incompatible")
    if a is None:
        return b
    if b is None:
        return a
    return tuple(x if x is not None else y for x, y in zip(a, b))


def relax(a, b):
    """The most specific shape that covers both ``a`` and ``b``."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def is_subshape(a, general) -> bool:
    """True if every shape matching ``a`` also matches ``general``."""
    if general is None:
        return True
    if a is None or len(a) != len(general):
        return False
    return all(g is None or g == x for x, g in zip(a, general))


def broadcast(a, b):
    """Static numpy broadcasting of two shapes; ValueError if they cannot broadcast."""
    if a is None or b is None:
        return None
    out = []
    for x, y in zip(reversed(a), reversed(b)):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        else:
            raise ValueError(f"shapes {format_shape(a)} and {format_shape(b)} cannot be broadcast together")
    longer = a if len(a) > len(b) else b
    out.extend(reversed(longer[: abs(len(a) - len(b))]))
    return tuple(reversed(out))
