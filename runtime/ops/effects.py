"""Effects: ``rt.print`` and ``rt.py_function``, ops that act outside the graph.

Both op types are registered ``stateful=True`` (see ``ops/__init__.py``):
they run in program order at every execution of the graph, and the
executor and the optimizer never drop them even when their results are
unused.

* ``print`` -- ``Print`` prints at every execution (Python's ``print`` in a
  traced function prints once, at trace time).  Non-tensor arguments are
  formatted when the op is created and kept as strings in the attrs.
* ``py_function`` -- ``PyFunc`` calls a Python function on numpy values at
  execution time.  Its ``func`` attr is a Python callable, so a graph
  holding one cannot be loaded back from a graph def.
"""

from __future__ import annotations

import sys

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.opdef import optional, register
from autograph.runtime.ops.apply import apply_op
from autograph.runtime.core.tensor import SHOWN, Tensor
from autograph.runtime.ops.variables import Variable

__all__ = ["print", "py_function"]


# --------------------------------------------------------------------------
# print
# --------------------------------------------------------------------------

def _stream_name(output_stream) -> str:
    if output_stream is None or output_stream == "stdout" or output_stream is sys.stdout:
        return "stdout"
    if output_stream == "stderr" or output_stream is sys.stderr:
        return "stderr"
    raise ValueError(
        f"rt.print: output_stream must be 'stdout' or 'stderr' (or sys.stdout / sys.stderr), got "
        f"{output_stream!r}"
    )


def _contains_tensor(value) -> bool:
    if isinstance(value, (Tensor, Variable)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_contains_tensor(v) for v in value.values())
    return False


# How ``Print`` formats each value: "str" (an argument, as ``print`` does), "repr" (an element of
# a printed container: numpy's scalar or array repr) or "number" (an element standing for a Python
# number: that number's repr).
FORMATS = ("str", "repr", "number")


def _refuse(what):
    raise TypeError(
        f"print at {user_location_text()}: cannot print {what} holding tensors (lists, tuples and dicts of "
        "tensors print their values when the graph runs); pass the tensors as separate arguments: print(a, b)"
    )


def text_of(value, spell=str) -> str:
    """``spell(value)`` (``str`` or ``repr``) of a value holding no tensor a print can reach; a
    TypeError when the text shows a symbolic tensor (a deque or a dataclass of tensors)."""
    shown = SHOWN.count
    text = spell(value)
    if SHOWN.count != shown:
        _refuse(f"a {type(value).__name__}")
    return text


def _container_pieces(value, seen) -> list:
    """Python's ``repr`` of ``value`` as pieces: text, and ``(tensor, format)`` where a value goes
    when the graph runs.  Lists, tuples and dicts are spelled out as their ``repr`` does."""
    if isinstance(value, Variable):
        value = value.read_value()
    if isinstance(value, Tensor):
        return [(value, "number" if value.weak else "repr")]
    if not _contains_tensor(value):
        return [text_of(value, repr)]
    kind = type(value)
    if id(value) in seen:
        _refuse("itself")
    if kind not in (list, tuple, dict):
        _refuse(f"a {kind.__name__}")
    seen = seen | {id(value)}
    if kind is dict:
        items = [[text_of(k, repr) + ": ", *_container_pieces(v, seen)] for k, v in value.items()]
    else:
        items = [_container_pieces(v, seen) for v in value]
    pieces = ["{" if kind is dict else "[" if kind is list else "("]
    for i, item in enumerate(items):
        pieces += ([", "] if i else []) + item
    pieces.append("}" if kind is dict else "]" if kind is list else ",)" if len(items) == 1 else ")")
    return pieces


def print(*values, sep=" ", end="\n", output_stream=None):  # noqa: A001 - rt.print mirrors print
    """Prints ``values`` like Python's ``print``, at every execution of the graph.

    Tensors, variables and numpy values are printed with their value at run
    time; other Python values are formatted once, when the op is created.  A
    list, tuple or dict holding tensors prints as Python prints it, with the
    tensors' values at run time (``[np.float32(1.5), 2]``); other objects
    whose text would show a symbolic tensor are a TypeError.
    """
    values = [v.read_value() if isinstance(v, Variable) else v for v in values]
    if any(_contains_tensor(v) and not isinstance(v, Tensor) for v in values):
        return _print_containers(values, str(sep), str(end), _stream_name(output_stream))
    parts = []
    inputs = []
    for value in values:
        if isinstance(value, (Tensor, np.ndarray, np.generic)):
            parts.append(None)
            inputs.append(value)
        else:
            parts.append(text_of(value))
    attrs = {"parts": tuple(parts), "sep": str(sep), "end": str(end), "stream": _stream_name(output_stream)}
    apply_op("Print", inputs, attrs)
    return None


def _print_containers(values, sep, end, stream):
    """``Print`` of arguments some of which are containers holding tensors: the separators are
    spelled out in ``parts`` (``sep`` is empty), and each value has its format."""
    pieces = []
    for i, value in enumerate(values):
        if i:
            pieces.append(sep)
        if isinstance(value, (Tensor, np.ndarray, np.generic)):
            pieces.append((value, "str"))
        elif _contains_tensor(value):
            pieces += _container_pieces(value, frozenset())
        else:
            pieces.append(text_of(value))
    parts, inputs, formats = [], [], []
    for piece in pieces:
        if type(piece) is str:
            if parts and type(parts[-1]) is str:
                parts[-1] += piece
            else:
                parts.append(piece)
        else:
            parts.append(None)
            inputs.append(piece[0])
            formats.append(piece[1])
    attrs = {"parts": tuple(parts), "sep": "", "end": end, "stream": stream, "formats": tuple(formats)}
    apply_op("Print", inputs, attrs)


def _infer_print(inputs, attrs):
    holes = sum(p is None for p in attrs["parts"])
    if holes != len(inputs):
        raise ValueError(f"Print has {len(inputs)} value(s) but {holes} null part(s) to put them in")
    formats = attrs.get("formats", ())
    if formats and (len(formats) != len(inputs) or any(f not in FORMATS for f in formats)):
        raise ValueError(f"Print's formats must give one of {', '.join(FORMATS)} for each of its {len(inputs)} value(s)")
    return []


register("Print", infer=_infer_print, stateful=True, inputs=(0, None),
         attrs={"parts": "parts", "sep": "text", "end": "text", "stream": "print_stream",
                "formats": optional("plain", ())})


# --------------------------------------------------------------------------
# py_function
# --------------------------------------------------------------------------


def _infer_pyfunc(inputs, attrs):
    return list(zip(attrs["Tout"], attrs["output_shapes"]))


register("PyFunc", infer=_infer_pyfunc, stateful=True, inputs=(0, None),
         attrs={"func": "plain", "Tout": "plain", "output_shapes": "plain", "single": "plain", "func_name": "plain",
                "grad": optional("plain", None)})


def py_function(func, inp, Tout, shape=None, name=None, grad=None):
    """Calls ``func(*numpy values of inp)`` at every execution; returns its results as tensors.

    ``Tout`` is a dtype (one output), a list of dtypes (a list of outputs)
    or ``None`` (no output).  ``shape`` (one shape, or a list matching
    ``Tout``) declares the static shape of the outputs; unknown otherwise.
    ``grad``, if given, makes it differentiable: ``grad(*inputs, *output
    cotangents)`` returns one cotangent per input (numpy values, ``None`` for
    none), and runs as a py_function itself (``autodiff/array_grads.py``).
    """
    if grad is not None and not callable(grad):
        raise TypeError(f"rt.py_function: grad must be callable or None, got {grad!r}")
    if not callable(func):
        raise TypeError(f"rt.py_function: func must be callable, got {func!r}")
    single = Tout is not None and not isinstance(Tout, (list, tuple))
    touts = () if Tout is None else tuple(dtypes.as_dtype(d) for d in ([Tout] if single else Tout))
    if shape is None:
        out_shapes = (None,) * len(touts)
    elif single:
        out_shapes = (shapes.as_shape(shape),)
    else:
        out_shapes = tuple(shapes.as_shape(s) for s in shape)
        if len(out_shapes) != len(touts):
            raise ValueError(f"rt.py_function: {len(out_shapes)} shapes given for {len(touts)} outputs")
    inputs = [v.read_value() if isinstance(v, Variable) else v for v in inp]
    attrs = {
        "func": func,
        "Tout": touts,
        "output_shapes": out_shapes,
        "single": single,
        "func_name": name or getattr(func, "__name__", type(func).__name__),
    }
    if grad is not None:
        attrs["grad"] = grad
    result = apply_op("PyFunc", inputs, attrs)
    if single:
        return result
    if not touts:
        return None
    return list(result) if isinstance(result, tuple) else [result]
