"""Static rewrites of a pipeline, run once before it is first iterated (``optimized``).

A short walker (inputs first, then the node, until no rule applies) and a
rule table keyed by node kind; a rule returns ``None`` or the replacement
node.  Every rewrite keeps the elements identical, in the same order:

* ``noop_elimination``: ``take(-1)``, ``skip(0)``, ``repeat(1)``,
  ``prefetch(0)`` and a ``map`` whose graph returns its arguments unchanged
  are dropped;
* ``map_fusion``: ``map(f).map(g)`` -> ``map(g . f)``, one graph;
* ``filter_fusion``: ``filter(p).filter(q)`` -> ``filter(p and q)``;
* ``map_filter_fusion``: ``map(f).filter(p)`` -> ``map_filter``: one graph
  gives the mapped element and the verdict;
* ``shuffle_and_repeat_fusion``: ``shuffle(n).repeat(k)`` -> ``shuffle_repeat``:
  one node draws each epoch's permutation (the same ones, from the same
  epoch counter), one generator less per element;
* ``map_batch_vectorization``: a chain of maps and filters before
  ``batch(n)`` whose graphs are batch-polymorphic (``vectorize.py``) runs
  once per chunk of rows on the stacked rows instead of once per element;
* ``inject_prefetch``: a final ``prefetch(AUTOTUNE)``, unless the pipeline has
  effects (``has_effects``): their order relative to the consumer's is kept.

Fusions apply to sequential maps only (``num_parallel_calls=None``): a
parallel map keeps its threads.  ``explain(ds)`` prints the pipeline before
and after, with the rewrites applied.
"""

from __future__ import annotations

import threading

from autograph.runtime.data import argument, fusion, options as options_module, printing, vectorize
from autograph.runtime.data.checks import AUTOTUNE
from autograph.runtime.core import walk

_LOCK = threading.Lock()


def _with(node, inputs):
    """``node`` with other inputs (the same attributes, so caches and shuffle epochs are shared)."""
    if all(a is b for a, b in zip(inputs, node.inputs)):
        return node
    return type(node)(node.kind, inputs, node.attrs, node.element_spec)


def _sequential(node) -> bool:
    return node.kind == "map" and node.attrs["num_parallel_calls"] is None


def _noop(node, options):
    attrs = node.attrs
    if node.kind in ("take", "repeat") and attrs["count"] == (-1 if node.kind == "take" else 1):
        return node.inputs[0]
    if (node.kind == "skip" and attrs["count"] == 0) or (node.kind == "prefetch" and attrs["buffer_size"] == 0):
        return node.inputs[0]
    if node.kind == "map" and _is_identity(attrs["fn"], node):
        return node.inputs[0]
    return None


def _is_identity(function, node) -> bool:
    graph = function.graph  # an identity that asserts or prints is not a no-op
    same = len(graph.outputs) == len(graph.inputs) and all(o is i for o, i in zip(graph.outputs, graph.inputs))
    same = same and not graph.is_stateful()
    return same and function.order is None and node.element_spec == node.inputs[0].element_spec


def _map_map(node, options):
    first = node.inputs[0]
    if not (_sequential(node) and _sequential(first)):
        return None
    fused = fusion.map_map(first.attrs["fn"], node.attrs["fn"])
    if fused.output_spec != node.element_spec:
        return None
    return type(node)("map", first.inputs, {**node.attrs, "fn": fused}, node.element_spec)


def _filter_filter(node, options):
    first = node.inputs[0]
    if first.kind != "filter":
        return None
    fused = fusion.filter_filter(first.attrs["predicate"], node.attrs["predicate"])
    parts = (*_parts(first), *_parts(node))  # vectorized, they are masks applied one after the other
    return type(node)("filter", first.inputs, {"predicate": fused, "parts": parts}, node.element_spec)


def _parts(node):
    return node.attrs.get("parts", (node.attrs["predicate"],))


def _map_filter(node, options):
    first = node.inputs[0]
    if not _sequential(first):
        return None
    fused = fusion.map_filter(first.attrs["fn"], node.attrs["predicate"])
    if fused.output_spec[0] != first.element_spec:
        return None
    return type(node)("map_filter", first.inputs, {"fn": fused}, node.element_spec)


def _shuffle_repeat(node, options):
    first = node.inputs[0]
    if first.kind != "shuffle":
        return None
    return type(node)("shuffle_repeat", first.inputs, {**first.attrs, "count": node.attrs["count"]},
                      node.element_spec)


# rewrite -> {node kind: rule}; the rewrites run in this order at each node
RULES = {
    "noop_elimination": {"take": _noop, "skip": _noop, "repeat": _noop, "prefetch": _noop, "map": _noop},
    "map_fusion": {"map": lambda n, o: _map_map(n, o) if n.inputs[0].kind == "map" else None},
    "filter_fusion": {"filter": _filter_filter},
    "map_filter_fusion": {"filter": lambda n, o: _map_filter(n, o) if n.inputs[0].kind == "map" else None},
    "shuffle_and_repeat_fusion": {"repeat": _shuffle_repeat},
    "map_batch_vectorization": {"batch": vectorize.rule},
}


def _rewrite(node, options, applied):
    if node.kind == "options":  # read by options_of; nothing to run
        return _rewrite(node.inputs[0], options, applied)
    node = _with(node, [_rewrite(i, options, applied) for i in node.inputs])
    for _ in range(100):
        for name, table in RULES.items():
            rule = table.get(node.kind)
            if rule is None or not options.enabled(name):
                continue
            replacement = rule(node, options)
            if replacement is not None:
                applied.append(name)
                node = _with(replacement, [_rewrite(i, options, applied) for i in replacement.inputs])
                break
        else:
            return node
    return node


def options_of(ds):
    """The options set with ``with_options`` nearest the end of the pipeline (else the defaults)."""
    node = ds
    while True:
        if node.kind == "options":
            return node.attrs["options"]
        if len(node.inputs) != 1:
            return options_module.DEFAULT
        node = node.inputs[0]


def optimize(ds):
    """``(optimized pipeline, names of the rewrites applied)``."""
    options = options_of(ds)
    applied = []
    result = _rewrite(ds, options, applied)
    if options.enabled("inject_prefetch") and result.kind != "prefetch" and not has_effects(result):
        result = result.prefetch(AUTOTUNE)
        applied.append("inject_prefetch")
    return result, applied


def _functions(node):
    attrs = node.attrs
    found = [attrs[k] for k in ("fn", "predicate") if k in attrs]
    if "scan" in attrs:
        found.append(attrs["scan"].function)
    found.extend(f for _, f in attrs.get("stages", ()))
    return found


def nodes(ds):
    """Every node of the pipeline ``ds`` once (for a dataset argument's stand-in, the dataset it
    stands for: ``argument.py``)."""
    return walk.each_once(ds, _links)


def _links(node):
    """The nodes ``node`` reads from: its inputs, and a stand-in's referent."""
    if node.kind == argument.KIND:
        return [*node.inputs, argument.referent(node)]
    return node.inputs


def has_effects(ds) -> bool:
    """True if running ``ds`` has effects (a generator source, a function that prints, draws random
    numbers, reads a variable, ...): a prefetch would run them ahead of the consumer's own."""
    return any(node.kind == "from_generator" or any(f.graph.is_stateful() for f in _functions(node))
               for node in nodes(ds))


def varies(ds) -> bool:
    """True if iterating ``ds`` twice may give other elements: it has effects, or a shuffle reshuffles."""
    reshuffles = ("shuffle", "shuffle_repeat")
    return has_effects(ds) or any(n.kind in reshuffles and n.attrs["reshuffle_each_iteration"] for n in nodes(ds))


def optimized(ds):
    """The optimized pipeline of ``ds``, computed once (it traces the fused functions)."""
    found = ds.optimized
    if found is None:
        with _LOCK:
            found = ds.optimized
            if found is None:
                found = ds.optimized = optimize(ds)
    return found[0]


def explain(ds) -> str:
    result, applied = ds.optimized if ds.optimized is not None else optimize(ds)
    done = ", ".join(applied) if applied else "none"
    return (f"pipeline as written:\n{printing.to_text(ds)}\n\noptimized (rewrites: {done}):\n"
            f"{printing.to_text(result)}")
