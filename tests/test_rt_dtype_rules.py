"""Dtype inference runs no kernel, yet agrees with what numpy computes.

The oracle here runs numpy on one-element arrays of every supported dtype
(pair); the op definitions must infer exactly that dtype (or raise the
TypeError numpy raises).
"""

import itertools
import warnings

import numpy as np
import pytest

from autograph.runtime.core import dtypes, opdef
from autograph.runtime.ops import math as rt_math, reduction as rt_reduction


class _Spec:
    def __init__(self, dtype, shape=(1,)):
        self.dtype, self.shape, self.name, self.weak = np.dtype(dtype), shape, "t:0", False


def _numpy_dtype(fn, *in_dtypes):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(fn(*[np.ones((1,), d) for d in in_dtypes])).dtype
    except TypeError:
        return TypeError


def _inferred(op_type, in_dtypes, attrs=None):
    try:
        return opdef.get(op_type).infer([_Spec(d) for d in in_dtypes], attrs or {})[0][0]
    except TypeError:
        return TypeError


@pytest.mark.parametrize("op_type", sorted(rt_math.BINARY))
def test_binary_dtypes(op_type):
    for a, b in itertools.product(dtypes.SUPPORTED, repeat=2):
        assert _inferred(op_type, [a, b]) == _numpy_dtype(rt_math.BINARY[op_type], a, b), (a, b)


@pytest.mark.parametrize("op_type", sorted(rt_math.UNARY))
def test_unary_dtypes(op_type):
    for a in dtypes.SUPPORTED:
        assert _inferred(op_type, [a]) == _numpy_dtype(rt_math.UNARY[op_type], a), a


def test_matmul_dtypes():
    for a, b in itertools.product(dtypes.SUPPORTED, repeat=2):
        expected = _numpy_dtype(lambda x, y: np.matmul(x.reshape(1, 1), y.reshape(1, 1)), a, b)
        try:
            got = opdef.get("MatMul").infer([_Spec(a, (1, 1)), _Spec(b, (1, 1))], {})[0][0]
        except TypeError:
            got = TypeError
        assert got == expected, (a, b)


@pytest.mark.parametrize("op_type", sorted(rt_reduction.REDUCTIONS) + ["ArgMax", "ArgMin"])
def test_reduction_dtypes(op_type):
    fn = {"ArgMax": np.argmax, "ArgMin": np.argmin}.get(op_type) or rt_reduction.REDUCTIONS[op_type]
    attrs = {"axis": None} if op_type.startswith("Arg") else {"axis": None, "keepdims": False}
    for a in dtypes.SUPPORTED:
        assert _inferred(op_type, [a], attrs) == _numpy_dtype(fn, a), a


# (that every op type has a kernel or an executor rule, in every backend: tests/test_backend_contract.py)
