"""Pipelines in graph files: the ``dataset`` attribute codec of ``DatasetReduce``.

A graph that loops over a dataset saves the pipeline *as it runs* (after
the static rewrites: fused and vectorized functions included) as data:

    {"nodes": [{"kind", "inputs": [earlier node indices], "spec", "attrs"}, ...], "root": index}

with each function saved as its graph def.  Loading rebuilds the nodes and
the function graphs (``Graph.from_graph_def``, with its checks and limits),
so the loop reruns in a process that never imports the user's code; the
loaded pipeline is not rewritten again.  A ``from_generator`` source runs
Python code: the graph saves (with a warning) but does not load.

The file is untrusted: every record is checked -- kinds, input indices
(earlier nodes only, so no cycles), integer attributes and their ranges,
array sources against their spec, each function graph's inputs and outputs
against the specs around it -- and anything wrong is a ``ValueError`` that
the loader reports as a ``GraphDefError`` naming the node.  (The codec and
the check of the attribute are entries of the loader's tables, registered
when ``rt.data`` is imported -- which importing the runtime does.)
"""

from __future__ import annotations

import contextvars
import warnings

from autograph.runtime.core import graph_def_schema, serialize, shapes
from autograph.runtime.core.graph import Graph
from autograph.runtime.core.tensor import TensorSpec
from autograph.runtime.data import argument, execution, node_specs, rewrites, structure
from autograph.runtime.data.functions import DataFunction
from autograph.runtime.data.reduce_op import PipelineAttr
from autograph.runtime.data.state_functions import StateFunction
from autograph.runtime.errors import AutoGraphWarning

MAX_NODES = 10_000
_LOAD_OPTIONS = contextvars.ContextVar("autograph_pipeline_load_options", default=None)  # set by decode
_INT_ATTRS = {  # kind -> {attribute: smallest allowed value}
    "range": {"start": None, "stop": None, "step": None},
    "batch": {"batch_size": 1}, "rebatch": {"batch_size": 1}, "chunks": {"rows": 1},
    "shuffle": {"buffer_size": 1}, "shuffle_repeat": {"buffer_size": 1, "count": -1}, "repeat": {"count": -1}, "take": {"count": -1}, "skip": {"count": -1},
    "enumerate": {"start": None}, "prefetch": {"buffer_size": -1},
}
_BOOL_ATTRS = {"batch": ("drop_remainder",), "rebatch": ("drop_remainder",), "shuffle": ("reshuffle_each_iteration",),
               "shuffle_repeat": ("reshuffle_each_iteration",),
               "map": ("deterministic",)}
_FUNCTION_ATTRS = {"map": "fn", "filter": "predicate", "take_while": "predicate", "map_filter": "fn"}
_ARITY = {"from_tensor_slices": 0, "range": 0, "from_generator": 0, "zip": None, "concatenate": 2}


# -- specs ---------------------------------------------------------------------------------


def encode_spec(spec):
    if isinstance(spec, TensorSpec):
        return {"spec": [serialize.encode_attr(spec.shape), spec.dtype.name]}
    if isinstance(spec, dict):
        return {"dict": {str(k): encode_spec(v) for k, v in spec.items()}}
    kind = "list" if type(spec) is list else "tuple"  # a namedtuple saves as a tuple
    return {kind: [encode_spec(v) for v in spec]}


def decode_spec(value, depth=0):
    if depth > 32 or not isinstance(value, dict) or len(value) != 1:
        raise ValueError(f"an element spec must be a tagged record, got {value!r:.60}")
    ((tag, body),) = value.items()
    if tag == "spec" and isinstance(body, list) and len(body) == 2:
        shape = serialize.decode_attr(body[0])
        return TensorSpec(shape if shape is None else tuple(shape), serialize.decode_attr({"dtype": body[1]}))
    if tag == "dict" and isinstance(body, dict):
        return {k: decode_spec(v, depth + 1) for k, v in body.items()}
    if tag in ("list", "tuple") and isinstance(body, list):
        items = [decode_spec(v, depth + 1) for v in body]
        return items if tag == "list" else tuple(items)
    raise ValueError(f"unknown element spec record {tag!r:.40}")


# -- functions -------------------------------------------------------------------------------


def _encode_function(function):
    return {"graph": serialize.as_graph_def(function.graph), "order": function.order, "role": function.role,
            "label": function.label, "arg_spec": encode_spec(function.arg_specs),
            "output_spec": encode_spec(function.output_spec)}


def _decode_function(record, where):
    _keys(record, {"graph", "order", "role", "label", "arg_spec", "output_spec"}, where)
    graph = Graph.from_graph_def(record["graph"], _LOAD_OPTIONS.get())  # the caller's limits
    arg_spec, output_spec = decode_spec(record["arg_spec"]), decode_spec(record["output_spec"])
    if graph.captures or not _fits(structure.flat(arg_spec), graph.inputs, exact=False):
        raise ValueError(f"{where}: the function graph's inputs do not match its argument spec")
    order = record["order"]
    outputs = graph.outputs if order is None else _ordered(graph.outputs, order, where)
    if not _fits(structure.flat(output_spec), outputs, exact=True):
        raise ValueError(f"{where}: the function graph's outputs do not match its output spec")
    function = DataFunction(None, str(record["role"])[:200], arg_spec, output_spec, graph, order)
    function.label = str(record["label"])[:400]
    return function


def _ordered(outputs, order, where):
    if not isinstance(order, list) or not all(type(i) is int and 0 <= i < len(outputs) for i in order):
        raise ValueError(f"{where}: field 'order' must list output positions")
    return [outputs[i] for i in order]


def _fits(specs, tensors, exact) -> bool:
    if len(specs) != len(tensors):
        return False
    for s, t in zip(specs, tensors):
        if s.dtype != t.dtype or not (s.shape == t.shape if exact else shapes.is_subshape(s.shape, t.shape)):
            return False
    return True


# -- nodes ---------------------------------------------------------------------------------


def _encode_attrs(node) -> dict:
    kind, attrs = node.kind, node.attrs
    out = {k: attrs[k] for k in _INT_ATTRS.get(kind, {})}
    out.update({k: attrs[k] for k in _BOOL_ATTRS.get(kind, ())})
    if kind in _FUNCTION_ATTRS:
        out["function"] = _encode_function(attrs[_FUNCTION_ATTRS[kind]])
    if kind == "map":
        out["num_parallel_calls"] = attrs["num_parallel_calls"]
    elif kind == "from_tensor_slices":
        out["leaves"] = [serialize.encode_attr(a) for a in attrs["leaves"]]
    elif kind == "from_generator":
        name = getattr(attrs["generator"], "__qualname__", "?")
        warnings.warn(f"the pipeline reads the Python generator {name!r}: the graph saves, but it cannot be "
                      "loaded (Python code is not portable)", AutoGraphWarning, stacklevel=2)
        out["generator"] = str(name)
    elif kind in ("shuffle", "shuffle_repeat"):
        out["seed"] = attrs["seed"]
    elif kind == "scan":
        scan = attrs["scan"]
        out.update(function=_encode_function(scan.function), state_spec=encode_spec(scan.state_spec),
                   initial=[serialize.encode_attr(a) for a in scan.initial])
    elif kind == "vectorized":
        out["stages"] = [[k, _encode_function(f)] for k, f in attrs["stages"]]
    return out


def encode(attr: PipelineAttr) -> dict:
    nodes, index = [], {}

    def visit(node):
        if node.kind == argument.KIND:  # a dataset argument's stand-in: the dataset passed in is saved
            return visit(rewrites.optimized(argument.referent(node)))
        if id(node) not in index:
            inputs = [visit(i) for i in node.inputs]
            index[id(node)] = len(nodes)
            nodes.append({"kind": node.kind, "inputs": inputs, "spec": encode_spec(node.element_spec),
                          "attrs": _encode_attrs(node)})
        return index[id(node)]

    return {"nodes": nodes, "root": visit(rewrites.optimized(attr.dataset))}


def _keys(record, keys, where):
    if not isinstance(record, dict) or set(record) != set(keys):
        raise ValueError(f"{where} must be a record with the fields {sorted(keys)}")


def _int(attrs, key, low, where):
    value = attrs.get(key)
    if type(value) is not int or (low is not None and value < low) or abs(value) > 2 ** 62:
        raise ValueError(f"{where}: field {key!r} must be an integer" + (f" >= {low}" if low is not None else ""))
    return value


def _decoded_attrs(kind, attrs, inputs, spec, where) -> dict:
    """The node's attributes from its record, each checked."""
    expected = set(_INT_ATTRS.get(kind, {})) | set(_BOOL_ATTRS.get(kind, ())) | set(_EXTRA_FIELDS.get(kind, ()))
    if kind in _FUNCTION_ATTRS or kind == "scan":
        expected.add("function")
    _keys(attrs, expected, f"{where}: field 'attrs'")
    out = {k: _int(attrs, k, low, where) for k, low in _INT_ATTRS.get(kind, {}).items()}
    for key in _BOOL_ATTRS.get(kind, ()):
        if type(attrs[key]) is not bool:
            raise ValueError(f"{where}: field {key!r} must be true or false")
        out[key] = attrs[key]
    if kind in _FUNCTION_ATTRS:
        function = _decode_function(attrs["function"], f"{where} ({kind} function)")
        _check_arguments(function.arg_specs, inputs[0].element_spec, where)
        _check_verdict(kind, function, (), where)
        out[_FUNCTION_ATTRS[kind]] = function
    return _SPECIAL.get(kind, lambda a, o, i, s, w: o)(attrs, out, inputs, spec, where)


def _check_arguments(arg_spec, element_spec, where):
    flat_args = structure.flat(arg_spec)
    if not _fits(flat_args, [_Leaf(s) for s in structure.flat(element_spec)], exact=False):
        raise ValueError(f"{where}: the function's arguments {structure.format_spec(arg_spec)} do not match the "
                         f"elements {structure.format_spec(element_spec)} of its input")


def _check_verdict(kind, function, rows, where):
    """A predicate (``filter``, ``take_while``; the second output of a ``map_filter``) must give one
    bool per element (``rows``: ``()``, or ``(None,)`` for a vectorized stage's rows)."""
    if kind not in ("filter", "take_while", "map_filter"):
        return
    verdict = function.output_spec
    if kind == "map_filter":
        verdict = verdict[1] if isinstance(verdict, tuple) and len(verdict) == 2 else None
    if not isinstance(verdict, TensorSpec) or verdict.dtype.kind != "b" or verdict.shape != rows:
        shown = "nothing" if verdict is None else structure.format_spec(verdict)
        raise ValueError(f"{where}: the {kind} predicate must return a bool of shape {list(rows)}, not {shown}")


class _Leaf:
    def __init__(self, spec):
        self.dtype, self.shape = spec.dtype, spec.shape


def _map(attrs, out, inputs, spec, where):
    parallel = attrs["num_parallel_calls"]
    if parallel is not None and (type(parallel) is not int or not (parallel == -1 or 1 <= parallel <= 1024)):
        raise ValueError(f"{where}: field 'num_parallel_calls' must be null, -1 or 1..1024")
    out["num_parallel_calls"] = parallel
    return out


def _slices(attrs, out, inputs, spec, where):
    leaves = attrs["leaves"]
    arrays = tuple(serialize.decode_attr(a) for a in leaves) if isinstance(leaves, list) else ()
    specs = structure.flat(spec)
    if not arrays or len(arrays) != len(specs) or len({a.shape[:1] for a in arrays}) != 1:
        raise ValueError(f"{where}: field 'leaves' must hold one array per component, of one first dimension")
    for a, s in zip(arrays, specs):
        if a.ndim == 0 or a.dtype != s.dtype or a.shape[1:] != s.shape:
            raise ValueError(f"{where}: an array of shape {a.shape} and dtype {a.dtype} does not fit its spec")
    out["leaves"] = arrays
    return out


def _generator(attrs, out, inputs, spec, where):
    raise ValueError(f"{where} reads the Python generator {str(attrs['generator'])[:80]!r}, which cannot be "
                     "rebuilt from a graph file (Python code is not portable); build the pipeline in this process")


def _shuffle(attrs, out, inputs, spec, where):
    if attrs["seed"] is not None and (type(attrs["seed"]) is not int or attrs["seed"] < 0):
        raise ValueError(f"{where}: field 'seed' must be null or a non-negative integer")
    out.update(seed=attrs["seed"], epochs=execution.EpochCounter(attrs["seed"]))
    return out


def _scan(attrs, out, inputs, spec, where):
    function = _decode_function(attrs["function"], f"{where} (scan function)")
    state_spec = decode_spec(attrs["state_spec"])
    initial = [serialize.decode_attr(a) for a in attrs["initial"]] if isinstance(attrs["initial"], list) else None
    states = structure.flat(state_spec)
    if initial is None or len(initial) != len(states) or not _fits(states, initial, exact=True):
        raise ValueError(f"{where}: field 'initial' does not match the state spec")
    _check_arguments(function.arg_specs, (state_spec, inputs[0].element_spec), where)
    out["scan"] = StateFunction(function, state_spec, initial, has_output=True)
    return out


def _vectorized(attrs, out, inputs, spec, where):
    stages = attrs["stages"]
    if not isinstance(stages, list) or not stages:
        raise ValueError(f"{where}: field 'stages' must list the vectorized functions")
    decoded = []
    for i, stage in enumerate(stages):
        if not (isinstance(stage, list) and len(stage) == 2 and stage[0] in ("map", "filter", "map_filter")):
            raise ValueError(f"{where}: stage {i} must be [kind, function]")
        decoded.append((stage[0], _decode_function(stage[1], f"{where} (stage {i})")))
    columns = inputs[0].element_spec
    for i, (kind, function) in enumerate(decoded):  # each stage takes what the one before gives
        _check_arguments(function.arg_specs, columns, f"{where} (stage {i})")
        _check_verdict(kind, function, (None,), f"{where} (stage {i})")
        if kind != "filter":
            columns = function.output_spec if kind == "map" else function.output_spec[0]
    out["stages"] = tuple(decoded)
    return out


def _store(attrs, out, inputs, spec, where):
    out["store"] = execution.CacheStore()
    return out


_EXTRA_FIELDS = {"map": ("num_parallel_calls",), "from_tensor_slices": ("leaves",), "from_generator": ("generator",),
                 "shuffle": ("seed",), "shuffle_repeat": ("seed",), "scan": ("state_spec", "initial"),
                 "vectorized": ("stages",)}
_SPECIAL = {"map": _map, "from_tensor_slices": _slices, "from_generator": _generator, "shuffle": _shuffle,
            "shuffle_repeat": _shuffle, "scan": _scan, "vectorized": _vectorized, "cache": _store}


def decode(body, options=None):
    """The pipeline saved by ``encode``, checked, its functions loaded with ``options`` (the
    ``LoadOptions`` of the graph file's load); its root dataset (not rewritten again)."""
    token = _LOAD_OPTIONS.set(options)
    try:
        return _decode(body)
    finally:
        _LOAD_OPTIONS.reset(token)


def _decode(body):
    from autograph.runtime.data.dataset import Dataset  # dataset.py builds on this package's modules

    _keys(body, {"nodes", "root"}, "a dataset record")
    records = body["nodes"]
    if not isinstance(records, list) or not 0 < len(records) <= MAX_NODES:
        raise ValueError(f"a dataset record must hold 1 to {MAX_NODES} nodes")
    built = []
    for i, record in enumerate(records):
        where = f"dataset node {i}"
        _keys(record, {"kind", "inputs", "spec", "attrs"}, where)
        kind, inputs = record["kind"], record["inputs"]
        if kind not in execution.RULES or kind == "options":
            raise ValueError(f"{where} has the unknown kind {str(kind)[:40]!r}")
        if not isinstance(inputs, list) or not all(type(j) is int and 0 <= j < i for j in inputs):
            raise ValueError(f"{where}: field 'inputs' must list earlier nodes")
        arity = _ARITY.get(kind, 1)
        if (arity is None and not inputs) or (arity is not None and len(inputs) != arity):
            raise ValueError(f"{where} ({kind}) takes {arity if arity is not None else 'one or more'} inputs")
        nodes = [built[j] for j in inputs]
        spec = decode_spec(record["spec"])
        attrs = _decoded_attrs(kind, record["attrs"], nodes, spec, where)
        node_specs.check(kind, attrs, nodes, spec, where)  # what it declares is what its inputs make it yield
        built.append(Dataset(kind, nodes, attrs, spec))
    root = body["root"]
    if type(root) is not int or not 0 <= root < len(built):
        raise ValueError("a dataset record's field 'root' must name one of its nodes")
    dataset = built[root]
    dataset.optimized = (dataset, [])  # saved as it runs: rewritten already
    return PipelineAttr(dataset)


def _dataset_kind(value, where, field, session):
    """The loader's check of ``DatasetReduce``'s ``dataset`` attribute: a pipeline record."""
    if not isinstance(value, PipelineAttr):
        raise serialize.GraphDefError(f"{where}: field {field!r} must be a dataset record {{\"dataset\": {{...}}}}, "
                                      f"got {type(value).__name__}")
    return value


serialize.register_codec("dataset", PipelineAttr, encode, decode, with_options=True)
graph_def_schema.KINDS["pipeline"] = _dataset_kind  # the schema's table of attribute checks
