"""runtime/core/nest.py: what is a container, dict order, map_structure (and up_to)."""

import collections
import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from autograph.runtime.core import nest

Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Pair:
    a: int
    b: int


@dataclasses.dataclass(frozen=True)
class Box:
    value: object


leaves = st.one_of(st.integers(-5, 5), st.none(), st.text(max_size=2), st.floats(allow_nan=False))
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from("cab"), inner, max_size=3),
        st.tuples(inner, inner).map(lambda t: Point(*t)),
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(trees)
def test_map_structure_with_identity_rebuilds_an_equal_tree(tree):
    mapped = nest.map_structure(lambda v: v, tree)
    assert mapped == tree and nest.mismatch(mapped, tree) is None
    if isinstance(tree, dict):
        assert list(mapped) == list(tree)  # insertion order kept


@settings(max_examples=200, deadline=None)
@given(trees)
def test_map_structure_agrees_with_flatten_and_pack_as(tree):
    wrapped = nest.map_structure(Box, tree)
    assert nest.flatten(wrapped) == [Box(v) for v in nest.flatten(tree)]
    assert nest.pack_as(tree, nest.flatten(wrapped)) == wrapped


@settings(max_examples=100, deadline=None)
@given(trees)
def test_paths_are_the_leaf_paths(tree):
    found = {}
    nest.map_structure_with_paths(lambda path, v: found.setdefault(path, v), tree)
    assert sorted(found) == sorted(nest.leaf_paths(tree))


def test_several_trees_are_matched_by_key_and_walked_in_the_first_ones_order():
    calls = []

    def add(a, b):
        calls.append((a, b))
        return a + b

    result = nest.map_structure(add, {"b": 1, "a": [2, 3]}, {"a": [20, 30], "b": 10})
    assert result == {"b": 11, "a": [22, 33]} and list(result) == ["b", "a"]
    assert calls == [(1, 10), (2, 20), (3, 30)]


def test_flat_lists_use_sorted_keys_so_dicts_built_apart_line_up():
    first, second = {"b": 1, "a": 2}, {"a": 20, "b": 10}
    assert nest.flatten(first) == [2, 1] and nest.flatten(second) == [20, 10]
    assert list(nest.pack_as(first, [0, 9])) == ["b", "a"]  # rebuilt in the structure's order


def test_namedtuples_are_rebuilt_by_their_type_and_spelled_by_field():
    result = nest.map_structure_with_paths(lambda path, v: (path, v * 2), Point(1, [2]))
    assert result == Point((".x", 2), [(".y[0]", 4)]) and type(result) is Point


@pytest.mark.parametrize("leaf", [None, Pair(1, 2), "ab", collections.OrderedDict(a=1), type("T", (tuple,), {})((1,))])
def test_none_dataclasses_strings_and_other_subclasses_are_leaves(leaf):
    assert nest.map_structure(lambda v: ("leaf", v), leaf) == ("leaf", leaf)
    assert nest.flatten([leaf]) == [leaf]


def test_different_structures_are_a_value_error_saying_where():
    with pytest.raises(ValueError, match=r"a list of 2 vs a list of 1 at \['a'\]"):
        nest.map_structure(lambda a, b: a, {"a": [1, 2]}, {"a": [1]})
    with pytest.raises(ValueError, match=r"a tuple of 2 vs a list of 2"):
        nest.map_structure(lambda a, b: a, (1, 2), [1, 2])
    with pytest.raises(ValueError, match=r"a dict with keys \['a'\] vs a dict with keys \['b'\]"):
        nest.map_structure(lambda a, b: a, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match=r"a single value vs a list of 1 at \[0\]"):
        nest.map_structure(lambda a, b: a, [1], [[1]])
    with pytest.raises(TypeError, match="at least one tree"):
        nest.map_structure(lambda: 0)


def test_up_to_stops_at_the_leaves_of_a_shallower_structure():
    seen = []
    result = nest.map_structure(lambda sub: seen.append(sub) or len(sub), {"a": [1, 2], "b": (3,)}, up_to={"a": 0, "b": 0})
    assert result == {"a": 2, "b": 1} and seen == [[1, 2], (3,)]
    invariants = nest.map_structure(lambda spec, value: (spec, value), [None, "s"], [[1, 2], 3], up_to=[0, 0])
    assert invariants == [(None, [1, 2]), ("s", 3)]
    with pytest.raises(ValueError, match=r"a list of 2 vs a list of 1"):
        nest.map_structure(lambda sub: sub, [1], up_to=[0, 0])


def test_as_base_containers_makes_subclasses_plain_and_keeps_namedtuples():
    class Items(list):
        pass

    value = collections.OrderedDict(b=Items([1, Point(2, collections.defaultdict(int, k=3))]), a=())
    plain = nest.as_base_containers(value)
    assert plain == {"b": [1, Point(2, {"k": 3})], "a": ()} and list(plain) == ["b", "a"]
    assert type(plain) is dict and type(plain["b"]) is list and type(plain["b"][1]) is Point
    assert type(plain["b"][1].y) is dict


# -- the boundary of rt.function (tracing/trace.py, signature.py, binding.py) -----------------


def test_results_in_subclassed_containers_come_back_as_their_base_type():
    import numpy as np

    from autograph import runtime as rt

    @rt.function
    def f(x):
        return collections.OrderedDict(b=Point(x, [x + 1]), a=type("Row", (tuple,), {})((x,)))

    result = f(np.float32(1.0))
    assert type(result) is dict and list(result) == ["b", "a"] and type(result["a"]) is tuple
    assert type(result["b"]) is Point and result["b"].y == [np.float32(2.0)]
    assert f.get_concrete_function(np.float32(1.0)).structured_input_signature[0][0].dtype == np.float32


def test_a_namedtuple_in_an_input_signature_reaches_the_function_as_that_namedtuple():
    import numpy as np

    from autograph import runtime as rt

    @rt.function(input_signature=[Point(rt.TensorSpec((), "float32"), {"k": rt.TensorSpec((2,), "int32")})])
    def f(p):
        assert type(p) is Point
        return p.x + rt.cast(rt.reduce_sum(p.y["k"]), "float32")

    assert f(Point(np.float32(1.0), {"k": np.array([2, 3], np.int32)})) == np.float32(6.0)
    assert [t.name for t in f.get_concrete_function().graph.inputs] == ["p_0:0", "p_1_k:0"]
    with pytest.raises(TypeError, match=r"input_signature entries must be rt.TensorSpec .*got 3"):
        rt.function(input_signature=[Point(rt.TensorSpec(()), [3])])(lambda p: p)


def test_a_returned_leaf_that_cannot_be_an_output_is_named_by_its_path():
    import numpy as np

    from autograph import runtime as rt

    @rt.function
    def f(x):
        return {"a": Point(x, object())}

    with pytest.raises(TypeError, match=r"returned a object as result\['a'\]\.y"):
        f(np.float32(1.0))
