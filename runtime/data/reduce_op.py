"""The ``DatasetReduce`` op: a ``for`` loop over a dataset, staged as one reduction.

``DatasetReduce(*state, *captures; dataset, cond, body, n_state)`` runs, as
``Dataset.reduce`` does, over the elements of ``dataset``:

    while cond(*state, *captures):          # the loop's break/return flags
        element = next(elements) or stop
        state = body(*state, *element_leaves, *captures)

``cond`` and ``body`` are graphs of the function library; the op's outputs
are the final state.  It is stateful (iterating a dataset may run Python
generators or random shuffles), so it runs once, in program order, and is
never folded or pruned.  Its numpy kernel (``backends/numpy/kernels.py``)
iterates ``dataset.flat_elements()`` and closes the iteration (and its
threads) when the loop stops.
"""

from __future__ import annotations

from autograph.runtime.core import dtypes, nest, opdef, shapes
from autograph.runtime.core.graph import current_graph


class PipelineAttr:
    """The ``dataset`` attribute of a ``DatasetReduce``: the pipeline, printed on one line."""

    __slots__ = ("dataset",)

    def __init__(self, dataset):
        self.dataset = dataset

    def flat_elements(self):
        """The pipeline's elements as flat tuples of numpy leaves (a generator; close it to stop)."""
        return self.dataset.flat_elements()

    def __repr__(self):
        kinds, node = [], self.dataset
        while True:
            kinds.append(node.kind)
            if len(node.inputs) != 1:
                break
            node = node.inputs[0]
        return "<" + " <- ".join(kinds) + ">"


def _library_of(inputs):
    return inputs[0].graph.library if inputs else current_graph().library


def _infer(inputs, attrs):
    body = _library_of(inputs)[attrs["body"]]
    return [(t.dtype, t.shape) for t in body.inputs[:attrs["n_state"]]]


def _weak(inputs, attrs):
    body = _library_of(inputs)[attrs["body"]]
    return [init.weak and out.weak for init, out in zip(inputs, body.outputs)]


def _verify(op, library):
    cond_g, body_g = library.get(op.attrs["cond"]), library.get(op.attrs["body"])
    if cond_g is None or body_g is None:
        raise ValueError(f"{op.name} refers to a cond/body missing from the function library")
    n = op.attrs["n_state"]
    if len(cond_g.outputs) != 1 or cond_g.outputs[0].dtype != dtypes.bool_:
        raise ValueError(f"cond {cond_g.name!r} of {op.name} must return one bool")
    if len(cond_g.all_inputs) != len(op.inputs):
        raise ValueError(f"cond {cond_g.name!r} of {op.name} must take the state and the captures")
    if len(body_g.outputs) != n or len(op.outputs) != n:
        raise ValueError(f"body {body_g.name!r} of {op.name} must return the {n} state values")
    for param, out in zip(body_g.inputs, body_g.outputs):
        if param.dtype != out.dtype or not shapes.is_subshape(out.shape, param.shape):
            raise ValueError(f"body {body_g.name!r} returns {out.name} that does not fit the state {param.name}")
    elements = [s for s in nest.flatten(op.attrs["dataset"].dataset.element_spec)]
    params = body_g.inputs[n:]
    if len(params) != len(elements) or any(p.dtype != s.dtype or not shapes.is_compatible(p.shape, s.shape)
                                           for p, s in zip(params, elements)):
        raise ValueError(f"body {body_g.name!r} of {op.name} does not take the elements of its dataset")


opdef.register("DatasetReduce", infer=_infer, weak=_weak, verify=_verify, stateful=True,
               function_attrs=("cond", "body"), cost=1000, inputs=(0, None),
               attrs={"dataset": "pipeline", "cond": "function", "body": "function", "n_state": "plain"})
