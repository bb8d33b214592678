"""The schema of a graph def: what ``Graph.from_graph_def`` accepts, checked before use.

A graph file is data that someone else may have written, so the loader
treats every field as untrusted.  The check runs in two stages, and every
failure is one ``GraphDefError`` (an ``ag.AutoGraphError`` and a
``ValueError``) naming the graph, the node and the field:

1. **Document** (``check_document``), before anything is built: the shape
   of the JSON itself -- which keys each object has and the type of each
   value, tensor references spelled ``"op:index"``, supported dtype names,
   shapes of non-negative ints or ``None``, at most ``max_nodes`` nodes.
2. **Attributes** (``decode_attrs``), per node, against the op
   definition (``opdef.REGISTRY``): the attributes its type declares
   (``OpDef.attrs``: names, required or not), each value checked by the
   check of its declared kind (``KINDS``), and the number of inputs
   against its ``OpDef.inputs`` (``check_arity``) -- facts of the op
   type, whichever backend runs the graph.  Arrays are bounded
   by ``max_elements`` before numpy sees them.  ``PyFunc`` nodes are
   refused: a graph calling Python cannot be rebuilt from data.

The semantic stage (``check_graphs``, after the graphs are built) re-runs
shape inference on every op, with small constant values propagated so
that a shape computed from constants is known, and rejects a recorded
dtype or shape that inference contradicts, any tensor whose known size
exceeds ``max_elements``, sub-graph references that form a cycle or nest
deeper than ``max_depth``; then ``graph.verify()`` checks the remaining
invariants (sub-graph signatures included).

``LoadOptions`` holds the limits; its defaults are safe for untrusted
files (see the README section "Loading graph files").
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import unicodedata

import numpy as np

from autograph.runtime.core import dtypes, opdef, shapes
from autograph.runtime.core.streams import StreamName
from autograph.runtime.errors import GraphDefError


@dataclasses.dataclass(frozen=True)
class LoadOptions:
    """Resource limits of ``Graph.from_graph_def`` (defaults: safe for untrusted files).

    ``max_elements``: elements of any one tensor of the loaded graph -- those
    the file fixes (constants, variable records, static shapes) are checked
    at load, the others by the kernels that allocate them, before they
    allocate (``exec/limits.py``); ``max_nodes``: nodes in the whole
    document; ``max_depth``: nesting of sub-graphs (an ``If`` inside a
    ``While`` is depth 2), at most ``MAX_DEPTH``; ``max_iterations``: the
    iterations one run of the loaded graph may make, over all its ``While``
    loops (nested ones included), or None for no bound; past it the run
    raises ``ResourceLimitError`` naming the loop.
    """

    max_elements: int = 1 << 24
    max_nodes: int = 100_000
    max_depth: int = 32
    max_iterations: int | None = 1_000_000

    def __post_init__(self):
        for field in ("max_elements", "max_nodes", "max_depth", "max_iterations"):
            value = getattr(self, field)
            if not (value is None and field == "max_iterations") and (type(value) is not int or value < 0):
                raise ValueError(f"LoadOptions({field}={value!r}): a limit is an int >= 0"
                                 + (" (or None: unbounded)" if field == "max_iterations" else ""))
        if self.max_depth > MAX_DEPTH:
            raise ValueError(f"LoadOptions(max_depth={self.max_depth}): at most {MAX_DEPTH}; the walks over a "
                             "graph (verifier, optimizer, code generator, executor) nest a few Python frames "
                             "per level of sub-graphs")


# sub-graphs nesting this deep keep every walk over a graph well inside Python's recursion limit
MAX_DEPTH = 100
_load_ids = itertools.count()
_MAX_NESTING = 64  # nesting of attribute values (tuples in tuples ...)
_MAX_NAME = 256


# -- stage 1: the document ----------------------------------------------------------

_FUNCTION_KEYS = {"name": True, "outer": True, "nodes": True, "inputs": True, "outputs": True,
                  "captures": True, "last_stateful": True}
_NODE_KEYS = {"name": True, "type": True, "inputs": True, "control_inputs": True, "attrs": True,
              "outputs": True, "location": False}


def _fail(where: str, message: str):
    raise GraphDefError(f"{where}: {message}")


def _keys(obj, expected: dict, where: str) -> None:
    if not isinstance(obj, dict):
        _fail(where, f"expected a JSON object, got {type(obj).__name__}")
    for key in obj:
        if key not in expected:
            _fail(where, f"unknown field {key!r} (expected {', '.join(expected)})")
    for key, required in expected.items():
        if required and key not in obj:
            _fail(where, f"field {key!r} is missing")


def _name(value, where: str, field: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value or len(value) > _MAX_NAME or not value.isprintable():
        _fail(where, f"field {field!r} must be a non-empty printable string of at most {_MAX_NAME} "
                     f"characters, got {value!r:.80}")


def _str_list(value, where: str, field: str, ref: bool) -> None:
    if not isinstance(value, list):
        _fail(where, f"field {field!r} must be a list of strings, got {type(value).__name__}")
    for item in value:
        if ref:
            _tensor_ref(item, where, field)
        else:
            _name(item, where, field)


def _tensor_ref(value, where: str, field: str) -> None:
    _name(value, where, field)
    op, sep, index = value.rpartition(":")
    if not sep or not op or not index.isdigit() or not index.isascii():
        _fail(where, f"field {field!r} holds {value!r}, which is not a tensor reference 'op:index'")


def check_document(graph_def, options: LoadOptions) -> dict:
    """Checks the document's structure; returns ``{function name: function def}`` (main first)."""
    if not isinstance(graph_def, dict) or graph_def.get("format") != "autograph.GraphDef":
        raise GraphDefError("not an autograph graph def (expected a dict with format 'autograph.GraphDef')")
    _keys(graph_def, {"format": True, "version": True, "graph": True, "library": True}, "graph def")
    if graph_def["version"] != 1 or type(graph_def["version"]) is not int:
        raise GraphDefError(f"graph def version {graph_def['version']!r:.40} is not supported (this runtime reads 1)")
    library = graph_def["library"]
    if not isinstance(library, dict):
        _fail("graph def", "field 'library' must be an object of function defs")
    fdefs = {}
    total = 0
    for key, fdef in [(None, graph_def["graph"]), *library.items()]:
        where = "graph def field 'graph'" if key is None else f"library function {key!r:.80}"
        _keys(fdef, _FUNCTION_KEYS, where)
        _name(fdef["name"], where, "name")
        if key is not None and fdef["name"] != key:
            _fail(where, f"field 'name' is {fdef['name']!r} but the library lists it as {key!r}")
        if fdef["name"] in fdefs:
            _fail(where, f"two functions are named {fdef['name']!r}")
        where = f"graph {fdef['name']!r}"
        _name(fdef["outer"], where, "outer", optional=True)
        _name(fdef["last_stateful"], where, "last_stateful", optional=True)
        _str_list(fdef["inputs"], where, "inputs", ref=True)
        _str_list(fdef["outputs"], where, "outputs", ref=True)
        if not isinstance(fdef["captures"], list):
            _fail(where, "field 'captures' must be a list of [outer graph, outer tensor, inner tensor]")
        for capture in fdef["captures"]:
            if not isinstance(capture, list) or len(capture) != 3:
                _fail(where, f"field 'captures' holds {capture!r:.80}, not [outer graph, outer tensor, inner tensor]")
            _name(capture[0], where, "captures")
            _tensor_ref(capture[1], where, "captures")
            _tensor_ref(capture[2], where, "captures")
        if not isinstance(fdef["nodes"], list):
            _fail(where, "field 'nodes' must be a list of nodes")
        total += len(fdef["nodes"])
        if total > options.max_nodes:
            _fail("graph def", f"has more than max_nodes={options.max_nodes} nodes; pass "
                               "LoadOptions(max_nodes=...) to load a graph this large")
        for index, node in enumerate(fdef["nodes"]):
            _check_node(node, f"node {index} of graph {fdef['name']!r}")
        fdefs[fdef["name"]] = fdef
    return fdefs


def _check_node(node, where: str) -> None:
    _keys(node, _NODE_KEYS, where)
    _name(node["name"], where, "name")
    where = f"node {node['name']!r} ({where.split(' of ')[1]})"
    _name(node["type"], where, "type")
    if node["type"] not in opdef.REGISTRY:
        _fail(where, f"has op type {node['type']!r}, which is not registered in this runtime")
    if node["type"] == "PyFunc":
        _fail(where, f"is a PyFunc (created at {node.get('location') or '<unknown>'}): a graph calling Python "
                     "(rt.py_function) cannot be rebuilt from a graph def; trace the function again instead")
    _str_list(node["inputs"], where, "inputs", ref=True)
    _str_list(node["control_inputs"], where, "control_inputs", ref=False)
    if not isinstance(node["attrs"], dict) or not all(isinstance(k, str) for k in node["attrs"]):
        _fail(where, "field 'attrs' must be an object with string keys")
    location = node.get("location")
    if location is not None and (not isinstance(location, str) or len(location) > 4096):
        _fail(where, "field 'location' must be a string 'file:line' or null")
    if not isinstance(node["outputs"], list):
        _fail(where, "field 'outputs' must be a list of {dtype, shape}")
    for i, out in enumerate(node["outputs"]):
        _keys(out, {"dtype": True, "shape": True, "weak": False}, f"{where} output {i}")
        dtype_of(out["dtype"], where, f"outputs[{i}].dtype")
        encoded_shape(out["shape"], where, f"outputs[{i}].shape")
        if type(out.get("weak", False)) is not bool:
            _fail(where, f"field 'outputs[{i}].weak' must be true or false")


def dtype_of(value, where: str, field: str) -> np.dtype:
    """The supported dtype named ``value``; GraphDefError naming the field otherwise."""
    if not isinstance(value, str) or value not in _DTYPE_NAMES:
        _fail(where, f"field {field!r} is {value!r:.40}, not a supported dtype ({', '.join(_DTYPE_NAMES)})")
    return dtypes.as_dtype(value)


_DTYPE_NAMES = tuple(d.name for d in dtypes.SUPPORTED)


def shape_of(value, where: str, field: str):
    """A shape from its JSON list (ints >= 0 or null), or None for an unknown rank."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) > 64:
        _fail(where, f"field {field!r} must be a list of at most 64 dimensions, got {value!r:.60}")
    for d in value:
        if d is not None and (type(d) is not int or d < 0 or d > 1 << 62):
            _fail(where, f"field {field!r} has dimension {d!r:.40}: a dimension is an int >= 0 or null")
    return tuple(value)


def encoded_shape(value, where: str, field: str):
    """A shape as ``encode_attr`` writes it: null or ``{"tuple": [...]}``."""
    if value is None:
        return None
    if not isinstance(value, dict) or list(value) != ["tuple"]:
        _fail(where, f"field {field!r} must be null or {{\"tuple\": [dims]}}, got {value!r:.60}")
    return shape_of(value["tuple"], where, field)


def check_size(shape, where: str, field: str, options: LoadOptions) -> None:
    """GraphDefError if the known dimensions of ``shape`` hold more than ``max_elements``."""
    if shape is None:
        return
    known = math.prod(d for d in shape if d is not None)
    if known > options.max_elements:
        _fail(where, f"field {field!r} has shape {shapes.format_shape(shape)}: {known} elements, more than "
                     f"max_elements={options.max_elements}; pass LoadOptions(max_elements=...) if the file is trusted")


# -- stage 2: attributes --------------------------------------------------------------

def check_arity(node: dict, where: str) -> None:
    """GraphDefError if the node lists more or fewer inputs than its op type takes."""
    low, high = arity(node["type"])
    if len(node["inputs"]) < low or (high is not None and len(node["inputs"]) > high):
        takes = f"{low}" if low == high else f"at least {low}" if high is None else f"{low} to {high}"
        _fail(where, f"a {node['type']} takes {takes} input(s), but field 'inputs' lists {len(node['inputs'])}")


def arity(op_type: str) -> tuple[int, int | None]:
    """``(fewest, most)`` inputs an ``op_type`` op takes (most None: any number): its definition's ``inputs``."""
    declared = opdef.get(op_type).inputs
    if declared is None:
        raise TypeError(f"op type {op_type!r} declares no inputs: pass inputs=N or (fewest, most) to opdef.register")
    return declared


def attribute_names(op_type: str) -> tuple[frozenset, frozenset]:
    """``(required, optional)`` attribute names of ``op_type``: its definition's ``attrs``."""
    attrs = opdef.get(op_type).attrs
    return (frozenset(n for n, a in attrs.items() if a.required),
            frozenset(n for n, a in attrs.items() if not a.required))


class Session:
    """What one load shares between nodes: limits, where new objects go, the load's id."""

    def __init__(self, options: LoadOptions, library_names):
        self.options = options
        self.library_names = frozenset(library_names)
        self.load_id = next(_load_ids)
        self.owned: dict = {}  # objects the file's records created (its variables), per codec


def decode_attrs(node: dict, where: str, session: Session) -> dict:
    """The node's attributes, decoded and checked against its op type's schema."""
    from autograph.runtime.core import serialize  # the codecs

    declared = opdef.get(node["type"]).attrs
    required, optional = attribute_names(node["type"])
    attrs = {}
    for key, raw in node["attrs"].items():
        if key not in required and key not in optional:
            allowed = ", ".join(sorted(required | optional)) or "none"
            _fail(where, f"{node['type']} has no attribute {key!r:.80} (its attributes: {allowed})")
        field = f"attrs.{key}"
        value = serialize.decode_value(raw, where, field, session)
        check = KINDS.get(declared[key].kind)
        if check is None:  # (a kind whose module is not imported: refuse rather than guess)
            _fail(where, f"field {field!r} is of kind {declared[key].kind!r}, which this runtime cannot check")
        attrs[key] = check(value, where, field, session)
    missing = required - attrs.keys()
    if missing:
        _fail(where, f"{node['type']} needs attribute(s) {', '.join(sorted(missing))}, which are missing")
    return attrs


def _plain(value, where, field, session, depth=0):
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) in (tuple, list) and depth < _MAX_NESTING:
        for v in value:
            _plain(v, where, field, session, depth + 1)
        return value
    _fail(where, f"field {field!r} must be plain data (numbers, strings, tuples), got {type(value).__name__}")


def _dtype_kind(value, where, field, session, nullable=False):
    """A dtype (``nullable``: or null, the input's dtype, as ``ZerosLike``'s)."""
    if not isinstance(value, np.dtype) and not (nullable and value is None):
        _fail(where, f"field {field!r} must be a dtype {{\"dtype\": name}}{' or null' * nullable}, got {value!r:.60}")
    return value


def _shape_kind(value, where, field, session):
    if value is not None and type(value) is not tuple:
        _fail(where, f"field {field!r} must be a shape {{\"tuple\": [dims]}} or null, got {value!r:.60}")
    shape = shape_of(value, where, field)
    check_size(shape, where, field, session.options)
    return shape


def _bool_kind(value, where, field, session):
    if type(value) is not bool:
        _fail(where, f"field {field!r} must be true or false, got {value!r:.40}")
    return value


def _int_or_none(value, where, field, session):
    if value is not None and type(value) is not int:
        _fail(where, f"field {field!r} must be an int or null, got {value!r:.40}")
    return value


def _count_kind(value, where, field, session):
    if value is not None and (type(value) is not int or value < 0):
        _fail(where, f"field {field!r} must be an int >= 0 or null, got {value!r:.40}")
    return value


def _axis_kind(value, where, field, session):
    items = value if type(value) is tuple else (value,)
    if value is not None and not all(type(a) is int and -64 <= a < 64 for a in items):
        _fail(where, f"field {field!r} must be an axis (an int, a tuple of ints or null), got {value!r:.60}")
    return value


def _str_kind(value, where, field, session):
    if type(value) is not str:
        _fail(where, f"field {field!r} must be a string, got {type(value).__name__}")
    return value


def _function_kind(value, where, field, session):
    if type(value) is not str or value not in session.library_names:
        _fail(where, f"field {field!r} names function {value!r:.80}, which is not in the graph def's library")
    return value


def _array_kind(value, where, field, session):
    if not isinstance(value, np.ndarray):
        _fail(where, f"field {field!r} must be an array {{\"array\": {{dtype, shape, data}}}}")
    return value


def _parts_kind(value, where, field, session):
    if type(value) is not tuple or not all(p is None or type(p) is str for p in value):
        _fail(where, f"field {field!r} must be a tuple of strings and nulls")
    return tuple(None if p is None else inert(p) for p in value)


# kept as they are in text from a file: layout, not terminal control
_LAYOUT = frozenset("\n\t")
_CONTROL = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def inert(text: str) -> str:
    """``text`` from a file with its control characters escaped (``\\x1b``, ``\\u202e``): what a
    loaded graph prints or puts in a message cannot drive the terminal.  Newlines and tabs stay."""
    if text.isprintable():
        return text
    return "".join(c if c in _LAYOUT or unicodedata.category(c) not in _CONTROL
                   else c.encode("unicode_escape").decode("ascii") for c in text)


def _text_kind(value, where, field, session):
    """A string a loaded graph prints or puts in a message (``Print``'s ``sep``/``end``, ``Assert``'s
    message): control characters escaped (``inert``)."""
    return inert(_str_kind(value, where, field, session))


def _print_stream(value, where, field, session):
    if value not in ("stdout", "stderr"):
        _fail(where, f"field {field!r} must be 'stdout' or 'stderr', got {value!r:.40}")
    return value


def _random_stream(value, where, field, session):
    """A random stream of the file, renamed for this load: it never continues a stream of the process
    (and, a ``StreamName``, its state dies with the loaded graph)."""
    _str_kind(value, where, field, session)
    return StreamName(f"load{session.load_id}/{value}")


def _variable_kind(value, where, field, session):
    from autograph.runtime.ops.variables import VariableHandle, lookup_variable

    if not isinstance(value, VariableHandle):
        _fail(where, f"field {field!r} must be a variable record {{\"variable\": {{...}}}}, got {value!r:.60}; "
                     "a graph file cannot refer to variables of the process loading it")
    var = lookup_variable(value)
    check_size(var.shape, where, f"{field} (shape of the variable record)", session.options)
    # (the record's value, as the loader made it: read from storage, as the kernels do, not through an op)
    check_size(np.shape(var._value), where, f"{field} (value of the variable record)", session.options)
    return value


_SLICE_ITEMS = {"index": 1, "slice": 3, "newaxis": 0, "ellipsis": 0}


def _spec_kind(value, where, field, session):
    ok = type(value) is tuple and len(value) <= 64
    for item in value if ok else ():
        ok = (ok and type(item) is tuple and item and type(item[0]) is str and item[0] in _SLICE_ITEMS
              and len(item) == 1 + _SLICE_ITEMS[item[0]])
        for part in item[1:] if ok else ():
            dynamic = type(part) is str and part[:1] == "$" and part[1:].isdigit() and part[1:].isascii()
            ok = ok and ((part is None and item[0] == "slice") or type(part) is int or dynamic)  # (no None index)
    if not ok:
        _fail(where, f"field {field!r} is not an index spec (a tuple of ('index', i) / ('slice', start, stop, "
                     f"step) / ('newaxis',) / ('ellipsis',)), got {value!r:.80}")
    return value


# attribute kind (``opdef.ATTR_KINDS``: an op definition declares each attribute's) -> the check of its value
KINDS = {
    "plain": _plain, "bool": _bool_kind, "int_or_none": _int_or_none, "count": _count_kind, "axis": _axis_kind,
    "dtype": _dtype_kind, "dtype_or_none": functools.partial(_dtype_kind, nullable=True), "shape": _shape_kind, "array": _array_kind,
    "text": _text_kind, "function": _function_kind, "parts": _parts_kind, "variable": _variable_kind,
    "spec": _spec_kind, "random_stream": _random_stream, "print_stream": _print_stream,
}
