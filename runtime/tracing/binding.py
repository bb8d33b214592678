"""Argument binding: a call's arguments -> bound parameters -> a cache key and array leaves.

A ``Binding`` belongs to one ``Function``.  It binds a call's arguments to
the Python function's signature (``bind``: defaults applied; for a method,
the instance first), then computes the call's key (``key_of``):

* without an ``input_signature``, each parameter's value is encoded by
  ``signature.Encoder`` (arrays by dtype and shape, Python scalars by type
  and value, containers walked, variables by dtype and shape, other objects
  static);
* with one (``check_signature`` validates it against the parameters), each
  value must match its ``TensorSpec``: arrays of its dtype whose shape fits,
  Python numbers of a compatible kind (converted), sequences and dicts of
  the same structure (dict keys in the signature's order); the key is the
  signature itself.

Errors name the function, the argument's path (``x[0]['a']``), the value,
the caller's ``file:line`` and the fix.
"""

from __future__ import annotations

import inspect

import numpy as np

from autograph.runtime import errors
from autograph.runtime.core import nest, shapes
from autograph.runtime.core.location import user_location_text
from autograph.runtime.core.tensor import TensorSpec
from autograph.runtime.tracing import signature


class Binding:
    """The signature of ``python_function`` (called ``name``), as a ``Function`` binds it.

    ``method``: the function is a method bound to an instance, whose first
    parameter is not part of the key.  ``label`` names the function in
    messages; ``input_signature`` is set once checked (``check_signature``).
    """

    def __init__(self, python_function, name, method=False):
        self.python_function = python_function
        self.name = name
        self.method = method
        code = getattr(python_function, "__code__", None)
        where = f" (defined at {errors.at(code.co_filename, code.co_firstlineno)})" if code is not None else ""
        self.label = f"function {name!r}{where}"
        self.input_signature = None
        self._signature = None
        self._param_names = None

    def bad_arg(self, path, value, problem) -> str:
        """The message for argument ``path`` = ``value``, which cannot be traced (``problem``)."""
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return (
            f"{self.label}: argument {path!r} = {shown} {problem} (called at {user_location_text()}). "
            "Arrays are graph inputs and other values static parts of the trace: convert the value to a "
            "numpy array or a hashable value, or close over it instead of passing it."
        )

    def describe_key(self, key) -> str:
        """``key`` spelled for messages: ``(x=float32[3], n=2 (int))``."""
        names = self.names()
        return "(" + ", ".join(f"{n}={signature.describe(k)}" for n, k in zip(names, key)) + ")"

    def signature(self) -> inspect.Signature:
        """The Python function's signature (``(*args, **kwargs)`` when it has none)."""
        if self._signature is None:
            try:
                sig = inspect.signature(self.python_function)
            except (TypeError, ValueError):
                sig = inspect.Signature(
                    [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                     inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)]
                )
            self._signature = sig
        return self._signature

    def names(self):
        """Names of the parameters that make up the key (the instance of a method excluded)."""
        if self._param_names is None:
            names = list(self.signature().parameters)
            self._param_names = names[1:] if self.method else names
        return self._param_names

    def check_signature(self, input_signature) -> list:
        """Validates ``input_signature`` against the parameters and keeps it (``self.input_signature``)."""
        if not isinstance(input_signature, (list, tuple)):
            raise TypeError(
                f"{self.label}: input_signature must be a list of rt.TensorSpec, got {input_signature!r}"
            )

        def check(spec):
            if not isinstance(spec, TensorSpec):
                raise TypeError(
                    f"{self.label}: input_signature entries must be rt.TensorSpec (or nested "
                    f"lists/dicts of them), got {spec!r}"
                )

        for spec in input_signature:
            nest.map_structure(check, nest.as_base_containers(spec))
        params = list(self.signature().parameters.values())[1 if self.method else 0:]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(input_signature) > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in params):
            raise TypeError(
                f"{self.label}: input_signature has {len(input_signature)} entries but the function takes "
                f"{len(positional)} positional argument(s)"
            )
        self.input_signature = list(input_signature)
        return self.input_signature

    def bind(self, args, kwargs, instance=None) -> inspect.BoundArguments:
        """The arguments bound to the parameters (``instance`` first for a method), defaults applied."""
        try:
            if instance is not None:
                bound = self.signature().bind(instance, *args, **kwargs)
            else:
                bound = self.signature().bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(
                f"{self.label}: cannot call {self.name}{self.signature()} with these arguments: {e} (called at "
                f"{user_location_text()}); pass the arguments the function declares"
            ) from None
        bound.apply_defaults()
        return bound

    def defaults_immutable(self, bound, n_args) -> bool:
        """True if the parameters that ``n_args`` positional arguments leave to their defaults
        hold constants only: a default list, dict or object can change between calls (``L.append``),
        which a key made from the positional arguments alone would not see."""
        filled = n_args + (1 if self.method else 0)
        for i, param in enumerate(self.signature().parameters.values()):
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue  # made afresh by each call
            if i >= filled and not signature.is_immutable_constant(bound.arguments.get(param.name)):
                return False
        return True

    def bound_values(self, bound) -> list:
        """``(name, value)`` of the bound parameters that make up the key."""
        values = list(bound.arguments.items())
        return values[1:] if self.method else values

    def key_of(self, args, kwargs, instance=None, allow_specs=False):
        """(key, array leaves, bound arguments, variables) of a call.

        ``variables``: the distinct ``rt.Variable`` arguments, in the order
        their key components number them (none with an ``input_signature``).
        """
        bound = self.bind(args, kwargs, instance)
        values = self.bound_values(bound)
        if self.input_signature is not None:
            key, leaves = self._match_signature(values, bound, allow_specs)
            return key, leaves, bound, ()
        encoder = signature.Encoder(self, allow_specs)
        key = tuple(encoder.encode(v, name) for name, v in values)
        return key, encoder.leaves, bound, encoder.variables

    def _match_signature(self, values, bound, allow_specs):
        sig = self.input_signature
        for name, value in values[len(sig):]:
            param = self.signature().parameters[name]
            unused = (
                (param.kind is param.VAR_POSITIONAL and value == ())
                or (param.kind is param.VAR_KEYWORD and value == {})
                or (param.default is not param.empty and value is param.default)
            )
            if not unused:
                raise TypeError(
                    f"{self.label}: argument {name!r} is not covered by input_signature ({len(sig)} "
                    f"entries), called at {user_location_text()}; pass only the argument(s) the "
                    "signature describes"
                )
        leaves = []
        key = tuple(self._match(value, spec, name, leaves, allow_specs) for (name, value), spec in zip(values, sig))
        if len(key) < len(sig):
            raise TypeError(
                f"{self.label}: input_signature has {len(sig)} entries but only {len(key)} argument(s) "
                f"were bound, called at {user_location_text()}"
            )
        return key, leaves

    def _match(self, value, spec, path, leaves, allow_specs):
        if isinstance(spec, TensorSpec):
            expected = f"{spec.dtype.name}{shapes.format_shape(spec.shape)} (input_signature)"
            if isinstance(value, TensorSpec) and allow_specs:
                if not spec.is_compatible_with(value):
                    raise TypeError(
                        f"{self.label}: argument {path!r}: expected {expected}, got {value!r} (called at "
                        f"{user_location_text()}); pass a TensorSpec of that dtype whose shape fits"
                    )
                leaves.append(spec)
                return ("A", spec.dtype, spec.shape)
            array = self._signature_array(value, spec, path, expected)
            if not shapes.is_subshape(array.shape, spec.shape):
                raise ValueError(
                    f"{self.label}: argument {path!r} has shape {shapes.format_shape(array.shape)} but "
                    f"expected {expected} (called at {user_location_text()}); pass a value of "
                    "that shape, or use None in the TensorSpec for dimensions that vary"
                )
            leaves.append(array)
            return ("A", spec.dtype, spec.shape)
        if isinstance(spec, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(spec):
                raise TypeError(
                    f"{self.label}: argument {path!r} must be a sequence of {len(spec)} values matching "
                    f"input_signature {spec!r}, got {value!r} (called at {user_location_text()}); pass one "
                    "value per entry"
                )
            items = enumerate(zip(value, spec))
            children = tuple(self._match(v, s, f"{path}[{i}]", leaves, allow_specs) for i, (v, s) in items)
            return ("T", type(spec), children)
        keys = tuple(spec)
        if not isinstance(value, dict) or tuple(value) != keys:
            # the graph iterates the signature's keys in its order: another order would change `for k in d`
            same_keys = isinstance(value, dict) and set(value) == set(keys)
            fix = "pass the keys in the signature's order" if same_keys else "pass a dict with exactly those keys"
            raise TypeError(
                f"{self.label}: argument {path!r} must be a dict with keys {list(keys)}, in that order, matching "
                f"input_signature, got {value!r:.80} (called at {user_location_text()}); {fix}"
            )
        children = tuple(self._match(value[k], spec[k], f"{path}[{k!r}]", leaves, allow_specs) for k in keys)
        return ("D", (dict, tuple((type(k), k) for k in keys)), children)

    def _signature_array(self, value, spec, path, expected):
        if isinstance(value, (np.ndarray, np.generic)):
            problem = signature.subclass_problem(value)
            if problem is not None:
                raise TypeError(self.bad_arg(path, value, problem))
            if value.dtype != spec.dtype:
                raise TypeError(
                    f"{self.label}: argument {path!r} has dtype {value.dtype} but expected {expected} "
                    f"(called at {user_location_text()}); convert it with .astype({spec.dtype.name!r})"
                )
            return value
        kind = type(value)
        fits = (
            (kind is bool and spec.dtype.kind == "b")
            or (kind is int and spec.dtype.kind in "iuf")
            or (kind is float and spec.dtype.kind == "f")
        )
        if fits:
            return np.asarray(value, dtype=spec.dtype)[()]
        if isinstance(value, (list, tuple)) and value:
            array = np.asarray(value)
            if array.dtype != object and np.can_cast(array.dtype, spec.dtype, "same_kind"):
                return array.astype(spec.dtype)
        raise TypeError(
            f"{self.label}: argument {path!r} = {value!r} does not match {expected} (called at "
            f"{user_location_text()}); pass a numpy value of dtype {spec.dtype.name}"
        )
