"""Deterministic text and DOT printers for graphs.

``format_op(op)`` prints one operation on one line::

    %add:0 float32[3] = Add(%x:0, %const:0)  # f.py:3

(outputs with dtype and static shape, the op type, its inputs, then its
attributes in sorted order, control inputs as ``^name``, and the basename of
the user's ``file:line``).  A weakly typed tensor (one standing for a
Python number, ``Tensor.weak``) prints its type as ``weak float64[]``.  ``format_expr(op)`` spells an operator op the
way Python writes it (``%x:0 + %const:0``, from ``runtime/core/spellings.py``);
DOT labels show it.  ``to_text(graph)`` prints a whole graph, with
the library functions an op calls (``If`` branches, ``While`` cond/body)
printed inline and indented under that op.  ``to_dot(graph)`` prints a
Graphviz digraph (see the notes above ``to_dot``; ``core/render.py`` draws it).  The same graph always prints to the same text: names are
assigned deterministically while tracing, attributes are sorted and arrays
are printed with fixed options.
"""

from __future__ import annotations

import os

import numpy as np

from autograph.runtime.core import opdef, shapes, spellings

_INLINE_ARRAY_SIZE = 8  # Const values up to this many elements are printed in full


def format_tensor(tensor) -> str:
    """``%add:0``."""
    return f"%{tensor.name}"


def format_type(tensor) -> str:
    """``float32[3,?]``; ``weak float64[]`` for a weakly typed tensor."""
    weak = "weak " if getattr(tensor, "weak", False) else ""
    return f"{weak}{tensor.dtype.name}{shapes.format_shape(tensor.shape)}"


def format_value(value) -> str:
    """A deterministic, compact spelling of an attribute value."""
    if isinstance(value, np.ndarray):
        if value.size <= _INLINE_ARRAY_SIZE:
            return _format_array(value)
        return f"<{value.dtype.name}{shapes.format_shape(value.shape)}>"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, np.generic):
        return _format_array(np.asarray(value))
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(value[k])}" for k in sorted(value, key=str)) + "}"
    if isinstance(value, str):
        return value if value.isidentifier() else repr(value)
    if callable(value) and not isinstance(value, type):
        name = getattr(value, "__qualname__", None) or type(value).__name__
        return f"<callable {name}>"
    return repr(value)


def _format_array(value: np.ndarray) -> str:
    """Nested brackets of the shortest round-tripping spelling of each element (``[0.1, 2.0]``)."""
    if value.ndim == 0:
        scalar = value[()]
        if value.dtype.kind == "f":
            return str(scalar)  # numpy's shortest repr for the element's own precision
        return repr(scalar.item())
    return "[" + ", ".join(_format_array(v) for v in value) + "]"


# attributes already visible in the output types
_IMPLIED_ATTRS = {"Const": ("dtype", "weak"), "Cast": ("weak",), "Placeholder": ("dtype", "shape")}


def format_location(location, full: bool = False) -> str:
    """``file:line`` shortened to the file's basename unless ``full``."""
    if not location or full:
        return location or ""
    path, sep, line = location.rpartition(":")
    if not sep or not line.isdigit():
        return os.path.basename(location)
    return f"{os.path.basename(path)}:{line}"


def format_op(op, *, locations: bool = True) -> str:
    """One line: ``%out:0 dtype[shape] = Type(%in:0, ...) {attr=value}  # file:line``."""
    if op.outputs:
        lhs = ", ".join(f"{format_tensor(t)} {format_type(t)}" for t in op.outputs) + " = "
    else:
        lhs = ""
    args = [format_tensor(t) for t in op.inputs] + [f"^{c.name}" for c in op.control_inputs]
    text = f"{lhs}{op.type}({', '.join(args)})"
    implied = _IMPLIED_ATTRS.get(op.type, ())
    attrs = [f"{k}={format_value(op.attrs[k])}" for k in sorted(op.attrs) if k not in implied]
    if attrs:
        text += " {" + ", ".join(attrs) + "}"
    if locations and op.location:
        text += f"  # {format_location(op.location)}"
    return text


def format_expr(op) -> str | None:
    """``op`` as the Python expression that builds it (``%x:0 + %const:0``), from the spellings table."""
    template = spellings.template(op.type)
    if template is None or template.count("{") != len(op.inputs):
        return None
    return template.format(*[format_tensor(t) for t in op.inputs])


def _header(keyword: str, graph) -> str:
    params = [f"{format_tensor(t)} {format_type(t)}" for t in graph.inputs]
    for outer, inner in graph.captures:
        params.append(f"{format_tensor(inner)} {format_type(inner)} <- {format_tensor(outer)}")
    return f"{keyword} {graph.name}({', '.join(params)}) {{"


def _graph_lines(graph, keyword: str, indent: str, printed: set, locations: bool) -> list[str]:
    lines = [indent + _header(keyword, graph)]
    body = indent + "  "
    for op in graph.operations:
        if op.type == "Placeholder":
            continue
        lines.append(body + format_op(op, locations=locations))
        for attr, fn_name in opdef.function_attrs(op):
            sub = graph.library.get(fn_name)
            if sub is None:
                lines.append(f"{body}  {attr} {fn_name}: <missing from the library>")
            elif fn_name in printed:
                lines.append(f"{body}  {attr} {fn_name}: (printed above)")
            else:
                printed.add(fn_name)
                lines.extend(_graph_lines(sub, attr, body + "  ", printed, locations))
    outputs = ", ".join(format_tensor(t) if hasattr(t, "op") else repr(t) for t in graph.outputs)
    lines.append(f"{body}return ({outputs})")
    lines.append(indent + "}")
    return lines


def to_text(graph, *, locations: bool = True) -> str:
    """The whole graph, one op per line, called library functions inline."""
    printed: set[str] = {graph.name}
    lines = _graph_lines(graph, "graph", "", printed, locations)
    for name in sorted(graph.library):
        if name not in printed:
            printed.add(name)
            lines.extend(_graph_lines(graph.library[name], "function", "", printed, locations))
    return "\n".join(lines) + "\n"


# -- DOT -----------------------------------------------------------------------
#
# A picture reads top to bottom like the code: the inputs, the ops in data flow
# order, each ``If``/``While`` as a cluster holding its sub-graphs (nested clusters
# for nested control flow) above the op's own node, which gathers the sub-graphs'
# results.  Edges into a sub-graph start at the outer tensor a placeholder stands
# for and say what it is (``loop var 0``, ``capture``); the predicate of an ``If``
# goes to the op's node.  Placeholders a sub-graph does not use are left out.
# Every name and value comes from the graph (maybe from a file): it goes into DOT
# only through ``_dot_quote`` / ``_dot_escape``.

_DOT_VALUE_CHARS = 40  # longer Const values and attributes are cut, with an ellipsis


def _dot_escape(text: str) -> str:
    """``text`` for inside a DOT double-quoted string: every name comes from the graph (maybe from
    a file), so quotes, backslashes and line breaks are escaped and control characters dropped."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return "".join(c for c in text if c.isprintable())


def _dot_quote(text: str) -> str:
    return f'"{_dot_escape(text)}"'


def _dot_id(graph, op) -> str:
    return _dot_quote(f"{graph.name}/{op.name}")


def _cut(text: str) -> str:
    return text if len(text) <= _DOT_VALUE_CHARS else text[: _DOT_VALUE_CHARS - 1] + "\u2026"


_INLINE_CONST_CHARS = 12  # a Const spelled in this many characters is written into its consumers


def _short(tensor) -> str:
    """``add`` for the only output of ``add``, ``while:1`` for one of several."""
    return tensor.op.name if len(tensor.op.outputs) == 1 else f"{tensor.op.name}:{tensor.value_index}"


def _inlined_consts(graph) -> dict:
    """id(Const op) -> its value, for the small constants of ``graph`` drawn inside the labels of
    the ops that read them (all plain ops of the same graph) instead of as nodes of their own."""
    readers: dict[int, list] = {}
    for op in graph.operations:
        for t in op.inputs:
            readers.setdefault(id(t.op), []).append(op)
    returned = {id(t.op) for t in graph.outputs if hasattr(t, "op")}
    found = {}
    for op in graph.operations:
        if op.type != "Const" or id(op) in returned or id(op) not in readers:
            continue
        value = format_value(op.attrs.get("value"))
        if len(value) <= _INLINE_CONST_CHARS and not any(
            opdef.function_attr_names(r.type) or r.graph is not graph for r in readers[id(op)]
        ):
            found[id(op)] = value
    return found


def _dot_label(op, inlined: dict) -> str:
    """Three lines at most: ``name = expression`` (its Python spelling with the small constants
    written in, or its constant value), its attributes, ``dtype[shape]  file:line``; escaped."""
    template = spellings.template(op.type)
    args = [inlined.get(id(t.op)) or _short(t) for t in op.inputs]
    if op.type == "Const":
        head = f"{op.name} = {_cut(format_value(op.attrs.get('value')))}"
    elif op.type == "Placeholder":
        head = op.name
    elif opdef.function_attr_names(op.type):
        head = f"{op.name} = {op.type}"  # its inputs are the labelled edges
    elif template is not None and template.count("{") == len(op.inputs):
        head = _cut(f"{op.name} = " + template.format(*args))
    else:
        head = _cut(f"{op.name} = {op.type}({', '.join(args)})")
    lines = [head]
    implied = {*_IMPLIED_ATTRS.get(op.type, ()), *opdef.function_attr_names(op.type)}
    if op.type == "Const":
        implied.add("value")
    attrs = [f"{k}={format_value(op.attrs[k])}" for k in sorted(op.attrs) if k not in implied]
    if attrs:
        lines.append(_cut(", ".join(attrs)))
    tail = ", ".join(format_type(t) for t in op.outputs)
    if op.location:
        tail = f"{tail}  {format_location(op.location)}".strip()
    if tail:
        lines.append(tail)
    return "\\n".join(_dot_escape(line) for line in lines)


def _input_roles(op, library) -> list[str]:
    """What each input of ``op`` is to it: ``pred``/``capture`` (If), ``loop var k``/``capture`` (While)."""
    if op.type == "If":
        return ["pred"] + ["capture"] * (len(op.inputs) - 1)
    if op.type == "While":
        body = library.get(op.attrs.get("body"))
        n = len(body.inputs) if body is not None else len(op.outputs)
        return [f"loop var {i}" if i < n else "capture" for i in range(len(op.inputs))]
    return [""] * len(op.inputs)


def _edge_label(tensor, role: str) -> str:
    out = f"out {tensor.value_index}" if len(tensor.op.outputs) > 1 else ""
    return ", ".join(x for x in (out, role) if x)


def _used(graph) -> set:
    """ids of the tensors of ``graph`` that an op or the return reads."""
    used = {id(t) for op in graph.operations for t in op.inputs}
    used.update(id(t) for t in graph.outputs if hasattr(t, "op"))
    return used


def _passes_through(graph) -> bool:
    """A sub-graph that computes nothing: it returns some of its inputs as they are."""
    return all(op.type == "Placeholder" for op in graph.operations)


class _Dot:
    """Writes one DOT document: ``lines`` nest the clusters, ``edges`` come after them, at the top
    level (an edge written inside a cluster would pull both of its nodes into that cluster)."""

    def __init__(self, graph):
        self.lines = [
            f"digraph {_dot_quote(graph.name)} {{",
            "  graph [fontname=monospace, fontsize=10, nodesep=0.2, ranksep=0.3, labeljust=l];",
            '  node [fontname=monospace, fontsize=10, height=0.3, margin="0.08,0.03"];',
            "  edge [fontname=monospace, fontsize=8, arrowsize=0.6];",
        ]
        self.edges: list[str] = []
        self.done = {graph.name}  # library functions drawn (or being drawn): each once
        self.graph(graph, "  ", inner=False)
        self.lines.extend(self.edges)
        self.lines.append("}")

    def edge(self, source, target, label="", style=""):
        attrs = [f"label={_dot_quote(label)}"] if label else []
        if style:
            attrs.append(style)
        self.edges.append(f"  {source} -> {target}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")

    def graph(self, graph, indent: str, inner: bool) -> None:
        """The nodes of ``graph`` and their edges; ``inner`` for a sub-graph (its unused
        placeholders are left out, its results go to the op that calls it)."""
        used = _used(graph) if inner else None
        inlined = _inlined_consts(graph)
        for op in graph.operations:
            if id(op) in inlined or (op.type == "Placeholder" and inner and id(op.outputs[0]) not in used):
                continue
            calls = [(attr, graph.library.get(fn), fn) for attr, fn in opdef.function_attrs(op)]
            shape = "ellipse" if op.type == "Placeholder" else 'box, style="rounded,bold"' if calls else "box"
            node = f"{_dot_id(graph, op)} [label=\"{_dot_label(op, inlined)}\", shape={shape}];"
            drawn: set[int] = set()  # inputs drawn into a sub-graph, to the placeholders standing for them
            clusters = [c for c in calls if c[1] is not None and c[2] not in self.done and not _passes_through(c[1])]
            if clusters:
                title = f"{op.name} = {op.type}" + (f"  {format_location(op.location)}" if op.location else "")
                self.lines.append(f"{indent}subgraph {_dot_quote('cluster_op:' + graph.name + '/' + op.name)} {{")
                self.lines.append(f'{indent}  label={_dot_quote(title)}; style="rounded"; color=gray40;')
                self.lines.append(f"{indent}  {node}")
            else:
                self.lines.append(indent + node)
            for attr, sub, fn in calls:
                if sub is None or fn in self.done:
                    continue
                self.done.add(fn)
                drawn |= self.subgraph(op, attr, sub, indent + "  ")
            if clusters:
                self.lines.append(f"{indent}}}")
            roles = _input_roles(op, graph.library)
            for k, t in enumerate(op.inputs):
                if k not in drawn and id(t.op) not in inlined:
                    self.edge(_dot_id(graph, t.op), _dot_id(graph, op), _edge_label(t, roles[k]))
            for c in op.control_inputs:
                self.edge(_dot_id(graph, c), _dot_id(graph, op), style="style=dashed")
        if not inner:
            outputs = [(i, t) for i, t in enumerate(graph.outputs) if hasattr(t, "op")]
            if outputs:
                node = _dot_quote(f"{graph.name}/return")
                self.lines.append(f'{indent}{node} [label="return", shape=plaintext];')
                for i, t in outputs:
                    self.edge(_dot_id(graph, t.op), node, _edge_label(t, str(i) if len(graph.outputs) > 1 else ""))

    def subgraph(self, op, attr, sub, indent) -> set[int]:
        """``sub`` (the ``attr`` function of ``op``) as a cluster: the outer tensors flow into the
        placeholders that stand for them, its results flow to ``op``'s node.  A sub-graph that
        passes its inputs through is no cluster: those inputs flow to ``op`` (``else: unchanged``).
        Returns the indices of the inputs of ``op`` drawn that way."""
        outer = op.graph
        first = 1 if op.type == "If" else 0  # op.inputs[first:] are sub.all_inputs, in order
        roles = _input_roles(op, outer.library)
        short = {"then_branch": "then", "else_branch": "else"}.get(attr, attr)
        params = {id(p): k for k, p in enumerate(sub.all_inputs, start=first)}
        drawn = set()
        if _passes_through(sub):
            for i, t in enumerate(sub.outputs):
                k = params.get(id(t)) if hasattr(t, "op") else None
                if k is not None and k < len(op.inputs):
                    what = short if len(sub.outputs) == 1 else f"{short} {i}"
                    label = _edge_label(op.inputs[k], f"{what}: unchanged")
                    self.edge(_dot_id(outer, op.inputs[k].op), _dot_id(outer, op), label, "style=dotted")
                    drawn.add(k)
            return drawn
        self.lines.append(f"{indent}subgraph {_dot_quote('cluster_fn:' + sub.name)} {{")
        self.lines.append(f"{indent}  label={_dot_quote(attr + ': ' + sub.name)}; style=dashed; color=gray50;")
        body = len(self.lines)
        self.graph(sub, indent + "  ", inner=True)
        if len(self.lines) == body:  # nothing drawn: keep the cluster visible
            self.lines.append(f'{indent}  {_dot_quote(sub.name + "/")} [label="(empty)", shape=plaintext];')
        self.lines.append(f"{indent}}}")
        used = _used(sub)
        for param in sub.all_inputs:
            k = params[id(param)]
            if k < len(op.inputs) and id(param) in used:
                arg = op.inputs[k]
                self.edge(_dot_id(outer, arg.op), _dot_id(sub, param.op), _edge_label(arg, roles[k] or "capture"),
                          "style=dashed")
                drawn.add(k)
        for i, t in enumerate(sub.outputs):
            if hasattr(t, "op"):
                self.edge(_dot_id(sub, t.op), _dot_id(outer, op), short if len(sub.outputs) == 1 else f"{short} {i}",
                          "style=dotted")
        return drawn


def to_dot(graph) -> str:
    """A Graphviz ``digraph``: ops as boxes, data edges, dashed control edges, ``If``/``While``
    as clusters of their sub-graphs (nested for nested control flow); see the notes above."""
    return "\n".join(_Dot(graph).lines) + "\n"
