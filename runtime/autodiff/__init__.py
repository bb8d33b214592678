"""Reverse-mode differentiation of graphs (``ag.grad``, ``ag.value_and_grad``).

* ``registry.py`` -- the table of gradient rules, keyed by op type, and the
  op types declared not differentiable; a new op's gradient goes here, as an
  entry of one of the rule modules (``math_grads.py``, ``array_grads.py``,
  ``nn_grads.py``, ``random_grads.py``);
* ``backprop.py`` -- the walker: gradient ops of targets with respect to
  sources, added to the current graph, broadcasting undone once;
* ``transforms.py`` -- ``grad`` / ``value_and_grad`` over ``rt.function``;
* ``tape.py`` -- ``rt.GradientTape`` inside a traced function;
* ``grad_graph.py``, ``cond_grad.py``, ``while_grad.py`` -- ``If`` and ``While``.
"""

from autograph.runtime.autodiff import (  # noqa: F401 - they fill the table
    array_grads, cond_grad, math_grads, nn_grads, random_grads, while_grad,
)
from autograph.runtime.autodiff.backprop import gradients
from autograph.runtime.autodiff.tape import GradientTape
from autograph.runtime.autodiff.transforms import grad, value_and_grad

__all__ = ["GradientTape", "gradients", "grad", "value_and_grad"]
