"""Nested structures of control-flow values: flatten, pack, map, compare.

Loop variables, branch outputs, the results of ``rt.cond`` /
``rt.while_loop`` and the arguments and results of traced functions are
nests of tuples, lists, dicts and namedtuples whose leaves are tensors or
Python values.  Control flow works on the flat list of leaves and rebuilds
the nest afterwards; other walks map the leaves in place:

    flatten(({"a": x}, [y, 2]))            -> [x, y, 2]
    pack_as(({"a": 0}, [0, 0]), [p, q, r])  -> ({"a": p}, [q, r])
    map_structure(f, ({"a": x}, [y]))       -> ({"a": f(x)}, [f(y)])

How values are treated, decided here once:

* Containers are exactly ``tuple``, ``list``, ``dict`` and namedtuples
  (tuple subclasses with ``_fields``, rebuilt by their type).  Everything
  else is a leaf: ``None`` (a value, not an empty structure), dataclasses
  (their fields are not looked into), strings, arrays, tensors, and other
  subclasses of tuple, list or dict, which a rebuild could not give back
  with their type and attributes.
* A flat list of leaves (``flatten``, ``leaf_paths``, ``pack_as``,
  ``flatten_up_to``) visits a dict's entries in sorted key order (insertion
  order when the keys do not sort): the order depends on the keys alone,
  so the flat lists of two dicts built apart (a loop variable before and
  after the body) line up.  Comparisons (``mismatch``, ``missing_key``)
  match entries by key, in that order.
* ``map_structure`` matches dict entries by key too, and calls ``fn`` in
  the insertion order of the structure it rebuilds.  Every rebuilt dict
  (``pack_as`` too) keeps the insertion order of its structure.
* The boundary of ``rt.function`` is not a nest walk where the traced code
  could tell the difference: the trace-cache key and the placeholders put
  in the arguments (``runtime/tracing/signature.py``) keep a dict's
  insertion order, because the traced code sees it (``for k in d``;
  ``tests/test_cache_keys.py`` pins it), and keep subclassed containers
  (an argument reaches the function with its type).  Its results come back
  as nests: subclassed containers made plain (``as_base_containers``),
  then mapped (``runtime/tracing/trace.py``).

``mismatch(a, b)`` describes the first difference between two structures,
for error messages; ``leaf_paths`` spells where each leaf sits
(``[0]['a']``, ``.field``).
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


def key_order_mismatch(a, b, path: str = ""):
    """``(path, keys of a, keys of b)`` of the first dict that ``a`` and ``b`` (of one structure)
    hold with their keys in another order (Python iterates a dict in insertion order), else None."""
    if type(a) is not type(b) or not is_nested(a):
        return None
    if isinstance(a, dict):
        if list(a) != list(b):
            return path, list(a), list(b)
    elif len(a) != len(b):
        return None
    for step, (x, y) in zip(leaf_steps(a), zip(children(a), children(b))):
        found = key_order_mismatch(x, y, path + step)
        if found:
            return found
    return None


def grown_list(a, b, path: str = ""):
    """``(path, list)`` of the first list of ``a`` that ``b`` holds with another length, or as
    something else (a staged list), where the rest of ``a``'s structure is ``b``'s; else None."""
    if type(a) is list and (type(b) is not list or len(a) != len(b)):
        return path, a
    if type(a) is not type(b) or not is_nested(a):
        return None
    if isinstance(a, dict) and _keys(a) != _keys(b) or not isinstance(a, dict) and len(a) != len(b):
        return None
    for step, (x, y) in zip(leaf_steps(a), zip(children(a), children(b))):
        found = grown_list(x, y, path + step)
        if found is not None:
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


def map_structure(fn, *trees, up_to=None):
    """``fn(*leaves)`` at each leaf position of ``trees``, rebuilt in their structure.

    The trees must have one structure (``ValueError`` naming where they
    differ).  With ``up_to``, a shallower structure, the trees are walked
    only down to its leaves: ``fn`` gets the sub-trees found there, and the
    result has ``up_to``'s structure.  ``fn`` is called in the insertion
    order of the structure walked (see the module docstring).
    """
    if len(trees) == 1 and up_to is None:  # the common case (a packer on every call): no checks, no paths
        return _map_one(fn, trees[0])
    return _map(lambda path, *leaves: fn(*leaves), trees, up_to)


def _map_one(fn, value):
    kind = type(value)
    if kind is tuple:
        return tuple([_map_one(fn, v) for v in value])
    if kind is list:
        return [_map_one(fn, v) for v in value]
    if kind is dict:
        return {k: _map_one(fn, v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(kind, "_fields"):
        return kind(*[_map_one(fn, v) for v in value])
    return fn(value)


def map_structure_with_paths(fn, *trees, up_to=None):
    """``map_structure`` whose ``fn`` also gets where the leaf sits: ``fn(path, *leaves)``,
    ``path`` spelled as in ``leaf_paths`` (``''`` for a tree that is one leaf)."""
    return _map(fn, trees, up_to)


def _map(fn, trees, up_to):
    if not trees:
        raise TypeError("map_structure needs at least one tree")
    shape = trees[0] if up_to is None else up_to
    return _map_at(fn, shape, trees, "", up_to is None)


def _map_at(fn, shape, trees, path, exact):
    if not is_nested(shape):
        if exact:
            for tree in trees:
                if is_nested(tree):
                    raise ValueError(f"map_structure: a single value vs {describe(tree)}{_at(path)}")
        return fn(path, *trees)
    for tree in trees:
        if tree is not shape:
            _check_level(shape, tree, path)
    if isinstance(shape, dict):
        return {k: _map_at(fn, shape[k], [t[k] for t in trees], f"{path}[{k!r}]", exact) for k in shape}
    steps = leaf_steps(shape)
    items = [_map_at(fn, child, [t[i] for t in trees], path + steps[i], exact) for i, child in enumerate(shape)]
    if is_namedtuple(shape):
        return type(shape)(*items)
    return type(shape)(items)


def _check_level(shape, tree, path):
    """Raises ``ValueError`` unless ``tree`` is a container of ``shape``'s type and keys or length."""
    if type(tree) is type(shape):
        same = tree.keys() == shape.keys() if isinstance(shape, dict) else len(tree) == len(shape)
        if same:
            return
    raise ValueError(f"map_structure: {describe(shape)} vs {describe(tree)}{_at(path)}")


def _at(path):
    return f" at {path}" if path else ""


def as_base_containers(value):
    """``value`` with each subclass of tuple, list or dict in it (an ``OrderedDict``, a
    ``defaultdict``) made a plain tuple, list or dict, at any depth; namedtuples kept.

    What ``rt.function`` does to the containers of the results it returns
    and of the input signature it reports.
    """
    if isinstance(value, tuple):
        items = [as_base_containers(v) for v in value]
        return type(value)(*items) if is_namedtuple(value) else tuple(items)
    if isinstance(value, list):
        return [as_base_containers(v) for v in value]
    if isinstance(value, dict):
        return {k: as_base_containers(v) for k, v in value.items()}
    return value
