"""Graphs to and from JSON-serializable dicts (``graph.as_graph_def()``).

A graph def holds the graph and its whole function library, so a saved
graph runs without the Python source that traced it::

    {"format": "autograph.GraphDef", "version": 1,
     "graph": <function def>, "library": {name: <function def>, ...}}

    function def = {"name", "outer" (enclosing graph's name or None),
                    "nodes": [{"name", "type", "inputs": ["x:0", ...],
                               "control_inputs": ["op", ...], "attrs": {...},
                               "outputs": [{"dtype", "shape"[, "weak": true]}],
                               "location"}],
                    "inputs": ["x:0"], "outputs": ["add:0"],
                    "captures": [["outer_graph", "outer:0", "capture:0"]],
                    "last_stateful": "op" or None}

Attribute values are plain JSON when they are ``str``/``int``/``float``/
``bool``/``None`` or lists of those; every other value is a one-key tagged
object: ``{"tuple": [...]}``, ``{"dict": {...}}``, ``{"dtype": "float32"}``,
``{"array": {"dtype", "shape", "data"}}``, ``{"scalar": {"dtype", "value"}}``
and ``{"unserializable": "<description>"}`` for Python callables (PyFunc):
such a graph saves (with a warning), but ``from_graph_def`` refuses to
load it, naming the op.  Loading checks the whole document first
(``graph_def_schema``, ``graph_def_checks``) under resource limits
(``LoadOptions``); every failure is a ``GraphDefError``.  Other runtime objects (e.g. variable handles) can take part by
registering a codec: ``register_codec(tag, cls, encode, decode)`` where
``encode(obj)`` gives a JSON-serializable value and ``decode(value)`` the
object back.
"""

from __future__ import annotations

import numpy as np

import dataclasses
import math
import warnings

from autograph.runtime.core import dtypes, graph_def_checks, graph_def_schema
from autograph.runtime.core.graph import Graph, Operation
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import AutoGraphWarning, GraphDefError

__all__ = ["as_graph_def", "from_graph_def", "register_codec", "encode_attr", "decode_attr", "GraphDefError",
           "LoadOptions"]
LoadOptions = graph_def_schema.LoadOptions

FORMAT = "autograph.GraphDef"
VERSION = 1

# tag -> (class, encode, decode) for runtime objects stored in attributes
_CODECS: dict[str, tuple] = {}


def register_codec(tag: str, cls: type, encode, decode, *, per_load: bool = False, with_options: bool = False) -> None:
    """Lets attribute values of type ``cls`` be saved as ``{tag: encode(value)}``.

    ``decode(value)`` gets the JSON value back from an untrusted file: it
    must check it (raising any exception, reported as ``GraphDefError``).
    With ``per_load``, ``decode(value, owned)`` also gets a dict private to
    one load (the loaded graph keeps it alive as ``graph.loaded_objects``):
    how the variable codec gives every load its own variables.  With
    ``with_options``, ``decode(value, options)`` gets the load's
    ``LoadOptions``: a codec that loads graphs of its own (a pipeline's
    functions) loads them with the caller's limits.
    """
    if tag in _CODECS or tag in _BUILTIN_TAGS:
        raise ValueError(f"attribute codec tag {tag!r} is already registered")
    _CODECS[tag] = (cls, encode, decode, per_load)
    if with_options:
        _WITH_OPTIONS.add(tag)


_WITH_OPTIONS: set = set()  # tags whose decode gets the LoadOptions


_BUILTIN_TAGS = ("tuple", "dict", "dtype", "array", "scalar", "unserializable")


# -- encoding -----------------------------------------------------------------


def encode_attr(value):
    """A JSON-serializable form of an attribute value (see the module docstring)."""
    if isinstance(value, str):
        return str(value)  # (a ``StreamName`` saves as its text)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, list):
        return [encode_attr(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [encode_attr(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": {str(k): encode_attr(v) for k, v in value.items()}}
    if isinstance(value, np.dtype):
        return {"dtype": value.name}
    if isinstance(value, np.ndarray):
        return {"array": {"dtype": value.dtype.name, "shape": list(value.shape), "data": value.reshape(-1).tolist()}}
    if isinstance(value, np.generic):
        return {"scalar": {"dtype": value.dtype.name, "value": value.item()}}
    for tag, (cls, encode, _, _) in _CODECS.items():
        if isinstance(value, cls):
            return {tag: encode(value)}
    name = getattr(value, "__qualname__", None) or type(value).__name__
    return {"unserializable": f"{type(value).__name__} {name}"}


def _encode_node(op: Operation) -> dict:
    return {
        "name": op.name,
        "type": op.type,
        "inputs": [t.name for t in op.inputs],
        "control_inputs": [c.name for c in op.control_inputs],
        "attrs": {k: encode_attr(op.attrs[k]) for k in sorted(op.attrs)},
        "outputs": [_encode_output(t) for t in op.outputs],
        "location": op.location,
    }


def _encode_output(tensor: Tensor) -> dict:
    """An output's type; ``"weak": true`` only for a weakly typed tensor (older defs stay valid)."""
    out = {"dtype": tensor.dtype.name, "shape": encode_attr(tensor.shape)}
    if tensor.weak:
        out["weak"] = True
    return out


def _encode_graph(graph: Graph) -> dict:
    return {
        "name": graph.name,
        "outer": graph.outer.name if graph.outer is not None else None,
        "nodes": [_encode_node(op) for op in graph.operations],
        "inputs": [t.name for t in graph.inputs],
        "outputs": [t.name for t in graph.outputs],
        "captures": [[outer.graph.name, outer.name, inner.name] for outer, inner in graph.captures],
        "last_stateful": graph.last_stateful.name if graph.last_stateful is not None else None,
    }


def as_graph_def(graph: Graph) -> dict:
    """``graph`` and its function library as a JSON-serializable dict.

    A graph holding Python objects (``rt.py_function``) still saves, with an
    ``AutoGraphWarning`` naming the op: ``from_graph_def`` will refuse it.
    """
    library = {name: _encode_graph(graph.library[name]) for name in sorted(graph.library) if graph.library[name] is not graph}
    graph_def = {"format": FORMAT, "version": VERSION, "graph": _encode_graph(graph), "library": library}
    for fdef in [graph_def["graph"], *library.values()]:
        for node in fdef["nodes"]:
            held = [k for k, v in node["attrs"].items() if isinstance(v, dict) and "unserializable" in v]
            if held:
                warnings.warn(
                    f"graph {graph.name!r}: {node['type']} op {node['name']!r} (created at "
                    f"{node['location'] or '<unknown>'}) holds a Python object in attribute {held[0]!r}; the graph "
                    "def saves, but Graph.from_graph_def will refuse to load it (a graph calling Python, "
                    "rt.py_function, cannot be rebuilt from data)",
                    AutoGraphWarning, stacklevel=3,
                )
                return graph_def
    return graph_def


# -- decoding -----------------------------------------------------------------
#
# A graph def may come from anyone: ``from_graph_def`` checks the document
# against ``graph_def_schema`` (structure, attributes per op type, limits),
# builds the graphs, then ``graph_def_checks`` checks them against shape
# inference and ``graph.verify()``.  Every failure is a ``GraphDefError``.


def decode_attr(value):
    """Inverse of ``encode_attr`` (default limits; for values this process wrote)."""
    session = graph_def_schema.Session(graph_def_schema.LoadOptions(), ())
    return decode_value(value, "attribute", "value", session)


def decode_value(value, where: str, field: str, session, depth: int = 0):
    """One attribute value decoded, every tag checked; GraphDefError naming ``where``/``field``."""
    if depth > _MAX_DEPTH:
        raise GraphDefError(f"{where}: field {field!r} nests deeper than {_MAX_DEPTH} levels")
    if isinstance(value, list):
        return [decode_value(v, where, field, session, depth + 1) for v in value]
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return value
    if not isinstance(value, dict) or len(value) != 1:
        raise GraphDefError(f"{where}: field {field!r} holds {value!r:.60}, not plain data or a tagged object of one key")
    ((tag, body),) = value.items()
    if tag == "tuple" and isinstance(body, list):
        return tuple(decode_value(v, where, field, session, depth + 1) for v in body)
    if tag == "dict" and isinstance(body, dict):
        return {str(k): decode_value(v, where, field, session, depth + 1) for k, v in body.items()}
    if tag == "dtype":
        return graph_def_schema.dtype_of(body, where, field)
    if tag == "array":
        return _decode_array(body, where, field, session.options)
    if tag == "scalar" and isinstance(body, dict) and set(body) == {"dtype", "value"}:
        dtype = graph_def_schema.dtype_of(body["dtype"], where, field + ".dtype")
        return _decode_array({"dtype": dtype.name, "shape": [], "data": [body["value"]]}, where, field,
                             session.options)[()]
    if tag == "unserializable":
        raise GraphDefError(
            f"{where} holds the Python object {body!r:.80} in attribute {field[6:]!r}, which cannot be saved: "
            "a graph calling Python (rt.py_function) cannot be rebuilt from a graph def; trace the function again instead"
        )
    if tag in _CODECS:
        decode, per_load = _CODECS[tag][2], _CODECS[tag][3]
        try:
            if tag in _WITH_OPTIONS:
                return decode(body, session.options)
            return decode(body, session.owned.setdefault(tag, {})) if per_load else decode(body)
        except GraphDefError as e:
            raise GraphDefError(f"{where}: field {field!r}: {e}") from None
        except Exception as e:  # noqa: BLE001 - a codec's failure on untrusted data is the file's fault
            raise GraphDefError(f"{where}: field {field!r} holds a bad {tag} record ({type(e).__name__}: {e})") from None
    raise GraphDefError(
        f"{where}: field {field!r} has the unknown tag {tag!r:.40} (or a body of the wrong type): was the graph saved "
        "by a newer version, or with a codec that is not registered?"
    )


_MAX_DEPTH = 64
_ELEMENT_TYPES = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float)}


def _decode_array(body, where, field, options):
    if not isinstance(body, dict) or set(body) != {"dtype", "shape", "data"}:
        raise GraphDefError(f"{where}: field {field!r} must be an array {{dtype, shape, data}}")
    dtype = graph_def_schema.dtype_of(body["dtype"], where, field + ".dtype")
    shape = graph_def_schema.shape_of(body["shape"], where, field + ".shape")
    if shape is None or None in shape:
        raise GraphDefError(f"{where}: field {field!r} has shape {body['shape']!r}; an array's dimensions are ints")
    graph_def_schema.check_size(shape, where, field, options)
    data = body["data"]
    allowed = _ELEMENT_TYPES[dtype.kind]
    if not isinstance(data, list) or len(data) != math.prod(shape) or not all(type(v) in allowed for v in data):
        raise GraphDefError(
            f"{where}: field {field!r} must hold {math.prod(shape)} {dtype.name} values in 'data' (a flat list of "
            f"{' or '.join(t.__name__ for t in allowed)})"
        )
    try:
        return np.array(data, dtype=dtype).reshape(shape)
    except (OverflowError, ValueError) as e:
        raise GraphDefError(f"{where}: field {field!r} holds a value that is not a {dtype.name} ({e})") from None


def _build_graph(fdef: dict, library: dict, session) -> tuple[Graph, dict]:
    graph = Graph(fdef["name"])
    graph.library = library
    tensors: dict[str, Tensor] = {}
    ops: dict[str, Operation] = {}
    for node in fdef["nodes"]:
        where = f"node {node['name']!r} of graph {fdef['name']!r}"
        if node["name"] in ops:
            raise GraphDefError(f"{where}: two nodes are named {node['name']!r}; node names must be unique")
        attrs = graph_def_schema.decode_attrs(node, where, session)
        inputs, control = [], []
        for ref in node["inputs"]:
            if ref not in tensors:
                raise GraphDefError(f"{where} uses {ref!r} before it is defined (field 'inputs')")
            inputs.append(tensors[ref])
        graph_def_schema.check_arity(node, where)
        for name in node["control_inputs"]:
            if name not in ops:
                raise GraphDefError(f"{where} uses {name!r} before it is defined (field 'control_inputs')")
            control.append(ops[name])
        location = node.get("location")  # shown in error messages: control characters escaped
        location = None if location is None else graph_def_schema.inert(location)
        op = Operation(graph, node["name"], node["type"], inputs, attrs, control, location)
        op.outputs = [
            Tensor(op, i, dtypes.as_dtype(out["dtype"]),
                   graph_def_schema.encoded_shape(out["shape"], where, f"outputs[{i}].shape"), out.get("weak", False))
            for i, out in enumerate(node["outputs"])
        ]
        graph.operations.append(op)
        ops[op.name] = op
        for t in op.outputs:
            tensors[t.name] = t
    graph.recount_names()  # ops added later (by the optimizer) get names none of these have
    for field in ("inputs", "outputs"):
        for ref in fdef[field]:
            if ref not in tensors:
                raise GraphDefError(f"graph {fdef['name']!r} lists {ref!r} in field {field!r}, which no node defines")
    graph.inputs = [tensors[ref] for ref in fdef["inputs"]]
    graph.outputs = [tensors[ref] for ref in fdef["outputs"]]
    if fdef["last_stateful"] is not None:
        if fdef["last_stateful"] not in ops:
            raise GraphDefError(f"graph {fdef['name']!r}: field 'last_stateful' names {fdef['last_stateful']!r}, "
                                "which is not a node of the graph")
        graph.last_stateful = ops[fdef["last_stateful"]]
    return graph, tensors


def from_graph_def(graph_def: dict, options=None, **limits) -> Graph:
    """Rebuilds the graph (and its library) saved by ``as_graph_def``; checks it first.

    ``options`` is a ``LoadOptions`` (or pass its fields as keywords:
    ``max_elements=...``); the defaults are safe for files of unknown origin.
    Raises ``GraphDefError`` naming the node and field of anything wrong.
    """
    if options is None:
        options = graph_def_schema.LoadOptions(**limits)
    elif limits:
        options = dataclasses.replace(options, **limits)
    fdefs = graph_def_schema.check_document(graph_def, options)
    main_name = graph_def["graph"]["name"]
    session = graph_def_schema.Session(options, [n for n in fdefs if n != main_name])
    library: dict[str, Graph] = {}
    built = {name: _build_graph(fdef, library, session) for name, fdef in fdefs.items()}
    main = built[main_name][0]
    for name, (graph, _) in built.items():
        if graph is not main:
            library[name] = graph
    for name, fdef in fdefs.items():
        graph, tensors = built[name]
        outer_name = fdef["outer"]
        graph.outer = built[outer_name][0] if outer_name in built else None
        for outer_graph, outer_tensor, inner in fdef["captures"]:
            if outer_graph not in built or outer_tensor not in built[outer_graph][1] or inner not in tensors:
                raise GraphDefError(f"graph {name!r} captures {outer_graph}/{outer_tensor} as {inner} (field "
                                    "'captures'), which is not defined")
            graph.add_capture(built[outer_graph][1][outer_tensor], tensors[inner])
        graph.load_options = options
    main.loaded_objects = session.owned  # the loaded graph owns the state its records created
    graph_def_checks.check_graphs(main, options)
    return main
