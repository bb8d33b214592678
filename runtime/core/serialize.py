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
such a graph saves, but ``from_graph_def`` refuses to load it, naming the
op.  Other runtime objects (e.g. variable handles) can take part by
registering a codec: ``register_codec(tag, cls, encode, decode)`` where
``encode(obj)`` gives a JSON-serializable value and ``decode(value)`` the
object back.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime.core import dtypes, opdef

from autograph.runtime.core.graph import Graph, Operation
from autograph.runtime.core.tensor import Tensor

FORMAT = "autograph.GraphDef"
VERSION = 1

# tag -> (class, encode, decode) for runtime objects stored in attributes
_CODECS: dict[str, tuple[type, object, object]] = {}


def register_codec(tag: str, cls: type, encode, decode) -> None:
    """Lets attribute values of type ``cls`` be saved as ``{tag: encode(value)}``."""
    if tag in _CODECS or tag in _BUILTIN_TAGS:
        raise ValueError(f"attribute codec tag {tag!r} is already registered")
    _CODECS[tag] = (cls, encode, decode)


_BUILTIN_TAGS = ("tuple", "dict", "dtype", "array", "scalar", "unserializable")


class _Unserializable:
    """Stands for an attribute that could not be saved, until from_graph_def finds it."""

    __slots__ = ("description",)

    def __init__(self, description: str):
        self.description = description


# -- encoding -----------------------------------------------------------------


def encode_attr(value):
    """A JSON-serializable form of an attribute value (see the module docstring)."""
    if value is None or isinstance(value, (str, bool, int, float)):
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
    for tag, (cls, encode, _) in _CODECS.items():
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
    """``graph`` and its function library as a JSON-serializable dict."""
    library = {name: _encode_graph(graph.library[name]) for name in sorted(graph.library) if graph.library[name] is not graph}
    return {"format": FORMAT, "version": VERSION, "graph": _encode_graph(graph), "library": library}


# -- decoding -----------------------------------------------------------------


class GraphDefError(ValueError):
    """A graph def that cannot be loaded: names the node and what is wrong."""


def decode_attr(value):
    """Inverse of ``encode_attr``."""
    if isinstance(value, list):
        return [decode_attr(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise GraphDefError(f"attribute value {value!r} is not a tagged object of one key")
    ((tag, body),) = value.items()
    if tag == "tuple":
        return tuple(decode_attr(v) for v in body)
    if tag == "dict":
        return {k: decode_attr(v) for k, v in body.items()}
    if tag == "dtype":
        return dtypes.as_dtype(body)
    if tag == "array":
        dtype = dtypes.as_dtype(body["dtype"])
        return np.array(body["data"], dtype=dtype).reshape(body["shape"])
    if tag == "scalar":
        return dtypes.as_dtype(body["dtype"]).type(body["value"])
    if tag == "unserializable":
        return _Unserializable(body)
    if tag in _CODECS:
        return _CODECS[tag][2](body)
    raise GraphDefError(f"unknown attribute tag {tag!r}: was the graph saved by a newer version, or with a codec that is not registered?")


def _decode_shape(value):
    shape = decode_attr(value)
    return None if shape is None else tuple(shape)


def _build_graph(fdef: dict, library: dict) -> tuple[Graph, dict]:
    graph = Graph(fdef["name"])
    graph.library = library
    tensors: dict[str, Tensor] = {}
    ops: dict[str, Operation] = {}
    for node in fdef["nodes"]:
        where = f"node {node.get('name')!r} of graph {fdef['name']!r}"
        if node["type"] not in opdef.REGISTRY:
            raise GraphDefError(f"{where} has op type {node['type']!r}, which is not registered in this runtime")
        attrs = {k: decode_attr(v) for k, v in node["attrs"].items()}
        for k, v in attrs.items():
            if isinstance(v, _Unserializable):
                raise GraphDefError(
                    f"{where} ({node['type']}, created at {node.get('location') or '<unknown>'}) holds the "
                    f"Python object {v.description} in attribute {k!r}, which cannot be saved: "
                    "a graph calling Python (rt.py_function) cannot be rebuilt from a graph def; "
                    "trace the function again instead"
                )
        try:
            inputs = [tensors[name] for name in node["inputs"]]
            control = [ops[name] for name in node["control_inputs"]]
        except KeyError as e:
            raise GraphDefError(f"{where} uses {e.args[0]!r} before it is defined") from None
        op = Operation(graph, node["name"], node["type"], inputs, attrs, control, node.get("location"))
        op.outputs = [
            Tensor(op, i, dtypes.as_dtype(out["dtype"]), _decode_shape(out["shape"]), bool(out.get("weak", False)))
            for i, out in enumerate(node["outputs"])
        ]
        graph.operations.append(op)
        graph.unique_name(op.name)
        ops[op.name] = op
        for t in op.outputs:
            tensors[t.name] = t
    try:
        graph.inputs = [tensors[name] for name in fdef["inputs"]]
        graph.outputs = [tensors[name] for name in fdef["outputs"]]
    except KeyError as e:
        raise GraphDefError(f"graph {fdef['name']!r} lists {e.args[0]!r}, which no node defines") from None
    if fdef.get("last_stateful") is not None:
        graph.last_stateful = ops[fdef["last_stateful"]]
    return graph, tensors


def from_graph_def(graph_def: dict) -> Graph:
    """Rebuilds the graph (and its library) saved by ``as_graph_def``."""
    if not isinstance(graph_def, dict) or graph_def.get("format") != FORMAT:
        raise GraphDefError(f"not an autograph graph def (expected a dict with format {FORMAT!r})")
    if graph_def.get("version") != VERSION:
        raise GraphDefError(f"graph def version {graph_def.get('version')!r} is not supported (this runtime reads {VERSION})")
    library: dict[str, Graph] = {}
    fdefs = {graph_def["graph"]["name"]: graph_def["graph"], **graph_def["library"]}
    built: dict[str, tuple[Graph, dict]] = {}
    for name, fdef in fdefs.items():
        built[name] = _build_graph(fdef, library)
    main = built[graph_def["graph"]["name"]][0]
    for name, (graph, _) in built.items():
        if graph is not main:
            library[name] = graph
    for name, fdef in fdefs.items():
        graph, tensors = built[name]
        outer_name = fdef.get("outer")
        graph.outer = built[outer_name][0] if outer_name in built else None
        for outer_graph, outer_tensor, inner in fdef["captures"]:
            if outer_graph not in built or outer_tensor not in built[outer_graph][1] or inner not in tensors:
                raise GraphDefError(f"graph {name!r} captures {outer_graph}/{outer_tensor} as {inner}, which is not defined")
            graph.captures.append((built[outer_graph][1][outer_tensor], tensors[inner]))
            graph._capture_map[id(built[outer_graph][1][outer_tensor])] = tensors[inner]
    return main
