"""Nested structures of control-flow values: flatten, pack, compare.

Loop variables, branch outputs and the results of ``rt.cond`` /
``rt.while_loop`` are nests of tuples, lists, dicts and namedtuples whose
leaves are tensors or Python values.  Control flow works on the flat list
of leaves and rebuilds the nest afterwards:

    flatten(({"a": x}, [y, 2]))          -> [x, y, 2]
    pack_as(({"a": 0}, [0, 0]), [p, q, r]) -> ({"a": p}, [q, r])

Dict entries are visited in sorted key order (insertion order when keys do
not sort), so two dicts with the same keys flatten alike.  ``mismatch(a,
b)`` describes the first difference between two structures, for error
messages; ``leaf_paths`` spells where each leaf sits (``[0]['a']``).
"""

from __future__ import annotations


def is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _keys(mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError:
        return list(mapping)


def is_nested(value) -> bool:
    """True for the containers control flow looks into."""
    return type(value) in (tuple, list, dict) or is_namedtuple(value)


def children(value) -> list:
    """The direct sub-values of a container, in flattening order."""
    if isinstance(value, dict):
        return [value[k] for k in _keys(value)]
    return list(value)


def flatten(value) -> list:
    """The leaves of ``value`` in a deterministic order."""
    if not is_nested(value):
        return [value]
    out = []
    for child in children(value):
        out.extend(flatten(child))
    return out


def leaf_paths(value, prefix: str = "") -> list[str]:
    """Where each leaf of ``value`` sits: ``''`` for a leaf, ``'[1]'``, ``"['a']"``, ``'.x'``."""
    if not is_nested(value):
        return [prefix]
    if isinstance(value, dict):
        steps = [f"[{k!r}]" for k in _keys(value)]
    elif is_namedtuple(value):
        steps = [f".{field}" for field in type(value)._fields]
    else:
        steps = [f"[{i}]" for i in range(len(value))]
    out = []
    for step, child in zip(steps, children(value)):
        out.extend(leaf_paths(child, prefix + step))
    return out


def pack_as(structure, flat):
    """Rebuilds ``structure`` with its leaves replaced, in order, by ``flat``."""
    flat = list(flat)
    result, used = _pack(structure, flat, 0)
    if used != len(flat):
        raise ValueError(f"pack_as: structure has {used} leaves, got {len(flat)} values")
    return result


def _pack(structure, flat, index):
    if not is_nested(structure):
        return flat[index], index + 1
    if isinstance(structure, dict):
        packed = {}
        for k in _keys(structure):
            packed[k], index = _pack(structure[k], flat, index)
        return {k: packed[k] for k in structure}, index
    items = []
    for child in structure:
        item, index = _pack(child, flat, index)
        items.append(item)
    if is_namedtuple(structure):
        return type(structure)(*items), index
    return type(structure)(items), index


def describe(value) -> str:
    """A short description of a structure's outer shape: ``a tuple of 2``."""
    if is_namedtuple(value):
        return f"a {type(value).__name__} namedtuple"
    if isinstance(value, dict):
        return f"a dict with keys {_keys(value)!r}"
    if type(value) in (tuple, list):
        return f"a {type(value).__name__} of {len(value)}"
    return "a single value"


def mismatch(a, b, path: str = "") -> str | None:
    """None if ``a`` and ``b`` have the same structure, else where and how they differ."""
    nested_a, nested_b = is_nested(a), is_nested(b)
    if not nested_a and not nested_b:
        return None
    where = f" at {path}" if path else ""
    if nested_a != nested_b or type(a) is not type(b):
        return f"{describe(a)} vs {describe(b)}{where}"
    if isinstance(a, dict):
        if _keys(a) != _keys(b):
            return f"{describe(a)} vs {describe(b)}{where}"
    elif len(a) != len(b):
        return f"{describe(a)} vs {describe(b)}{where}"
    for step, (x, y) in zip(leaf_steps(a), zip(children(a), children(b))):
        found = mismatch(x, y, path + step)
        if found:
            return found
    return None


def missing_key(a, b, path: str = ""):
    """``(path, in_a)`` of the first dict key that only one of ``a`` and ``b`` has, else None.

    ``in_a`` tells whether ``a`` (rather than ``b``) has it:
    ``missing_key({'a': 1, 'b': 2}, {'a': 1})`` is ``("['b']", True)``.
    """
    if type(a) is not type(b) or not is_nested(a):
        return None
    if isinstance(a, dict):
        for k in _keys({**a, **b}):
            if (k in a) != (k in b):
                return f"{path}[{k!r}]", k in a
    elif len(a) != len(b):
        return None
    for step, (x, y) in zip(leaf_steps(a), zip(children(a), children(b))):
        found = missing_key(x, y, path + step)
        if found:
            return found
    return None


def copy_containers(value):
    """``value`` with every list and dict in it copied (the leaves are shared)."""
    kind = type(value)
    if kind is list:
        return [copy_containers(v) for v in value]
    if kind is dict:
        return {k: copy_containers(v) for k, v in value.items()}
    if kind is tuple:
        return tuple(copy_containers(v) for v in value)
    return value


def write_back(original, new):
    """Makes ``original``'s lists and dicts hold ``new``'s contents, in place; returns the value to bind.

    The objects the user holds keep their identity (an alias sees the
    update); where ``new`` is no longer a container of the same kind (a
    staged list became a tensor), ``new`` itself is the value.
    """
    kind = type(original)
    if kind is dict and type(new) is dict:
        merged = {k: write_back(original[k], v) if k in original else v for k, v in new.items()}
        original.clear()
        original.update(merged)
        return original
    if kind is list and type(new) is list:
        if len(new) == len(original):
            original[:] = [write_back(o, n) for o, n in zip(original, new)]
        else:
            original[:] = new
        return original
    return new


def leaf_steps(value) -> list[str]:
    """The path step to each direct child of a container."""
    if isinstance(value, dict):
        return [f"[{k!r}]" for k in _keys(value)]
    if is_namedtuple(value):
        return [f".{field}" for field in type(value)._fields]
    return [f"[{i}]" for i in range(len(value))]


def flatten_up_to(structure, other) -> list:
    """The values of ``other`` at the leaf positions of ``structure``.

    ``other`` may stop early: a non-container where ``structure`` has a
    container applies to every leaf below it (``None`` for "no invariant").
    """
    if not is_nested(structure):
        return [other]
    if not is_nested(other):
        return [other] * len(flatten(structure))
    if isinstance(structure, dict):
        if not isinstance(other, dict):
            raise ValueError(f"expected a dict matching {describe(structure)}, got {describe(other)}")
        subs = [other.get(k) for k in _keys(structure)]
    else:
        subs = children(other)
        if len(subs) != len(structure):
            raise ValueError(f"expected {describe(structure)}, got {describe(other)}")
    out = []
    for child, sub in zip(children(structure), subs):
        out.extend(flatten_up_to(child, sub))
    return out
