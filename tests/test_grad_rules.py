"""Every gradient rule against central finite differences in float64, on shapes that broadcast."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.autodiff import registry
from autograph.runtime.core import opdef
from autograph.runtime.ops import apply

MODES = [dict(), dict(optimize=False), dict(jit_compile=True)]


def numeric_grad(f, args, argnum, eps=1e-6):
    """Central finite differences of the scalar ``f(*args)`` with respect to ``args[argnum]``."""
    x = np.array(args[argnum], dtype=np.float64)
    out = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[index] += eps
        lo[index] -= eps
        plus = list(args)
        minus = list(args)
        plus[argnum], minus[argnum] = hi, lo
        out[index] = (float(f(*plus)) - float(f(*minus))) / (2 * eps)
    return out


def check(f, *args, argnums=None, modes=MODES, rtol=1e-5, atol=1e-6):
    """``ag.grad(f)`` in every execution mode equals finite differences of ``ag.function(f)``."""
    argnums = tuple(range(len(args))) if argnums is None else argnums
    forward = ag.function(f)
    expected = [numeric_grad(forward, args, i) for i in argnums]
    for mode in modes:
        got = ag.grad(f, argnums=argnums, **mode)(*args)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(np.asarray(g), e, rtol=rtol, atol=atol, err_msg=str(mode))
            assert np.shape(g) == np.shape(e)


def arrays(shape, low=-2.0, high=2.0):
    return st.builds(lambda seed: np.random.default_rng(seed).uniform(low, high, shape), st.integers(0, 2**32 - 1))


# (x shape, y shape) pairs that broadcast in every way: equal, scalar, size-1 axes, missing leading axes
BROADCAST_PAIRS = [((3,), (3,)), ((2, 3), ()), ((2, 1), (1, 3)), ((3,), (2, 3)), ((2, 3), (2, 1))]


def _pairs(low=-2.0, high=2.0):
    return st.sampled_from(BROADCAST_PAIRS).flatmap(
        lambda shapes: st.tuples(arrays(shapes[0], low, high), arrays(shapes[1], low, high)))


def f_add(x, y):
    return rt.reduce_sum(rt.sin(x + y))


def f_sub(x, y):
    return rt.reduce_sum(rt.sin(x - y))


def f_mul(x, y):
    return rt.reduce_sum(rt.sin(x * y))


def f_div(x, y):
    return rt.reduce_sum(rt.sin(x / y))


def f_pow(x, y):
    return rt.reduce_sum(x ** y)


def f_maximum(x, y):
    return rt.reduce_sum(rt.sin(rt.maximum(x, y)))


def f_minimum(x, y):
    return rt.reduce_sum(rt.sin(rt.minimum(x, y)))


def f_mod(x, y):
    return rt.reduce_sum(rt.sin(x % y))


@settings(max_examples=8, deadline=None)
@given(_pairs())
@pytest.mark.parametrize("f", [f_add, f_sub, f_mul, f_maximum, f_minimum], ids=lambda f: f.__name__)
def test_binary_rules_broadcast(f, pair):
    x, y = pair
    if f in (f_maximum, f_minimum):
        assume(np.min(np.abs(np.subtract(x, y))) > 1e-3)  # at a tie the function has no derivative
    check(f, x, y, modes=[{}])


@settings(max_examples=6, deadline=None)
@given(_pairs(0.5, 2.0))
@pytest.mark.parametrize("f", [f_div, f_pow, f_mod], ids=lambda f: f.__name__)
def test_binary_rules_on_positive_operands(f, pair):
    x, y = pair
    if f is f_mod:  # x % y jumps where it wraps around: no derivative there
        assume(np.min(np.abs(np.remainder(x, y))) > 1e-3 and np.min(np.abs(np.remainder(x, y) - y)) > 1e-3)
    check(f, x, y, modes=[{}])


UNARY = {
    "neg": lambda x: -x,
    "abs": rt.abs,
    "sqrt": lambda x: rt.sqrt(rt.abs(x) + 0.5),
    "exp": rt.exp,
    "log": lambda x: rt.log(rt.abs(x) + 0.5),
    "sin": rt.sin,
    "cos": rt.cos,
    "tanh": rt.tanh,
    "square": rt.square,
    "cast": lambda x: rt.cast(x, "float64"),
    "identity": rt.identity,
}


@settings(max_examples=5, deadline=None)
@given(arrays((2, 3), 0.1, 2.0), st.booleans())
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_rules(name, x, negate):
    op = UNARY[name]
    x = -x if negate else x

    def f(x):
        return rt.reduce_sum(op(x) * np.arange(6.0).reshape(2, 3))

    check(f, x, modes=[{}])


def test_cast_between_floats_casts_the_cotangent_back():
    def f(x):
        return rt.reduce_sum(rt.cast(x, "float32") * np.float32(3.0))

    g = ag.grad(f)(np.ones(3))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, [3.0, 3.0, 3.0])


def test_integer_paths_carry_no_gradient():
    def f(x):
        return rt.reduce_sum(rt.cast(rt.cast(x, "int32"), "float64") + x)

    np.testing.assert_array_equal(ag.grad(f)(np.array([1.5, 2.5])), [1.0, 1.0])


REDUCTIONS = [
    ("sum", lambda x: rt.reduce_sum(x, axis=1)),
    ("sum_keepdims", lambda x: rt.reduce_sum(x, axis=0, keepdims=True)),
    ("mean", lambda x: rt.reduce_mean(x, axis=(0, 2))),
    ("mean_all", lambda x: rt.reduce_mean(x)),
    ("max", lambda x: rt.reduce_max(x, axis=1)),
    ("min", lambda x: rt.reduce_min(x, axis=-1, keepdims=True)),
]


@settings(max_examples=5, deadline=None)
@given(arrays((2, 3, 4)))
@pytest.mark.parametrize("name, op", REDUCTIONS, ids=[n for n, _ in REDUCTIONS])
def test_reduction_rules(name, op, x):
    def f(x):
        return rt.reduce_sum(rt.sin(op(x)))

    check(f, x, modes=[{}])


MATMUL_SHAPES = [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((5, 2, 3), (3, 4)),
                 ((5, 2, 3), (1, 3, 4))]


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_rule(shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])

    def f(a, b):
        return rt.reduce_sum(rt.sin(rt.matmul(a, b)))

    check(f, a, b, modes=[{}])


def f_array_ops(x, y):
    joined = rt.concat([x, y * 2.0], axis=1)  # (2, 5)
    stacked = rt.stack([x[:, 0], y[:, 1]], axis=1)  # (2, 2)
    picked = rt.gather(joined, np.array([4, 0, 4]), axis=1)  # (2, 3)
    chosen = rt.where(x > 0.0, picked, y[:, :1])
    flat = rt.reshape(chosen, (-1,))
    return rt.reduce_sum(rt.sin(flat)) + rt.reduce_sum(stacked ** 2) + rt.reduce_sum(rt.sin(x[1] * y[0, 1]))


@settings(max_examples=6, deadline=None)
@given(arrays((2, 3)), arrays((2, 2)))
def test_array_rules(x, y):
    check(f_array_ops, x, y)


def test_where_broadcasts_its_condition():
    def f(x, y):
        return rt.reduce_sum(rt.sin(rt.where(np.array([True, False, True]), x, y)))

    check(f, np.random.default_rng(0).normal(size=(2, 3)), np.float64(0.3))


def test_every_rule_is_for_a_registered_op_type():
    assert set(registry.GRADIENTS) <= set(opdef.REGISTRY)
    assert registry.NOT_DIFFERENTIABLE <= set(opdef.REGISTRY)
    assert set(registry.WITHOUT_RULE) <= set(opdef.REGISTRY)


def test_every_op_type_is_differentiable_or_declared_otherwise():
    """Each registered op type has a rule, is declared not differentiable, is listed without a rule
    (with the reason its error gives), or is a source (no inputs: never on a path)."""
    tables = [set(registry.GRADIENTS), set(registry.NOT_DIFFERENTIABLE), set(registry.WITHOUT_RULE)]
    for i, a in enumerate(tables):
        for b in tables[i + 1:]:
            assert not a & b
    unaccounted = sorted(t for t, d in opdef.REGISTRY.items() if not t.startswith("Test")
                         and not any(t in table for table in tables) and d.inputs != (0, 0))
    assert unaccounted == []


def f_prod(x):
    return rt.reduce_sum(rt.reduce_prod(x, axis=1)) + rt.reduce_sum(rt.sin(rt.reduce_prod(x, axis=0, keepdims=True)))


@pytest.mark.parametrize("zeros", [0, 1, 2], ids=lambda n: f"{n}_zeros")
def test_prod(zeros):
    x = np.random.default_rng(zeros).uniform(0.5, 1.5, (3, 4))
    x[0, :zeros] = 0.0  # a row with no zero, one or two: the product of the others, by cases
    x[1, 0] = 0.0 if zeros else x[1, 0]
    check(f_prod, x)


def f_choose(x, y):
    chosen = apply.apply_op("Choose", [rt.reduce_sum(x) > 0.0, rt.sin(x) * y, y * y])  # (a lowered If)
    return rt.reduce_sum(chosen * x)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_choose(sign):
    rng = np.random.default_rng(1)
    check(f_choose, sign * rng.uniform(0.1, 1.0, 3), rng.normal(size=3))


def f_range(start, delta):
    return rt.reduce_sum(rt.sin(rt.range(start, 5.0, delta)))


def test_range():
    check(f_range, np.float64(0.5), np.float64(0.7))  # (7 elements: the length stays under the differences)


def normal_samples(mean, stddev):
    s = rt.random.normal((5,), mean=mean, stddev=stddev, dtype="float64")
    return rt.reduce_sum(rt.sin(s)), s


def uniform_samples(low, high):
    s = rt.random.uniform((5,), minval=low, maxval=high, dtype="float64")
    return rt.reduce_sum(rt.sin(s) * s), s


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_random_ops_by_reparameterization(mode):
    """The samples are fresh at every run, so finite differences are taken of the same function of the
    parameters with the noise the run drew (read back from its samples)."""
    for f, a, b, reparameterized in (
            (normal_samples, 0.3, 1.5, lambda a, b, unit: np.sum(np.sin(a + b * unit))),
            (uniform_samples, -0.5, 2.0, lambda a, b, unit: np.sum(np.sin(a + (b - a) * unit) * (a + (b - a) * unit)))):
        (ga, gb), samples = ag.grad(f, argnums=(0, 1), has_aux=True, **mode)(np.float64(a), np.float64(b))
        unit = (samples - a) / b if f is normal_samples else (samples - a) / (b - a)
        fixed = lambda p, q: reparameterized(p, q, unit)  # noqa: E731
        np.testing.assert_allclose(ga, numeric_grad(fixed, [a, b], 0), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(gb, numeric_grad(fixed, [a, b], 1), rtol=1e-5, atol=1e-7)


def test_a_zero_power_has_a_zero_gradient_at_zero():
    # d/dx x**0 is 0 everywhere (jax's rule too), not 0 * 0**-1 = nan: polynomials evaluated at 0
    def poly(x, c):
        return sum(c[i] * x ** i for i in range(3))

    assert ag.grad(poly)(np.float64(0.0), [1.0, 2.0, 3.0]) == 2.0
    assert ag.grad(poly)(np.float64(2.0), [1.0, 2.0, 3.0]) == 14.0
    np.testing.assert_allclose(ag.grad(lambda x: (x ** 2.5).sum())(np.array([0.0, 1.0, 4.0])), [0.0, 2.5, 20.0])
