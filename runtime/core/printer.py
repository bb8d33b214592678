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
Graphviz digraph.  The same graph always prints to the same text: names are
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


def _dot_id(graph, op) -> str:
    return _dot_quote(f"{graph.name}/{op.name}")


def _dot_escape(text: str) -> str:
    """``text`` for inside a DOT double-quoted string: every name comes from the graph (maybe from
    a file), so quotes, backslashes and line breaks are escaped and control characters dropped."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return "".join(c for c in text if c.isprintable())


def _dot_quote(text: str) -> str:
    return f'"{_dot_escape(text)}"'


def _dot_graph(graph, lines: list[str], indent: str, done: set) -> None:
    for op in graph.operations:
        label = f"{_dot_escape(op.name)}\\n{_dot_escape(op.type)}"
        expr = format_expr(op)
        if expr is not None:
            label += "\\n" + _dot_escape(expr)
        if op.outputs:
            label += "\\n" + _dot_escape(", ".join(format_type(t) for t in op.outputs))
        shape = "ellipse" if op.type == "Placeholder" else "box"
        lines.append(f'{indent}{_dot_id(graph, op)} [label="{label}", shape={shape}];')
    for op in graph.operations:
        for t in op.inputs:
            edge_label = f' [label="{t.value_index}"]' if len(t.op.outputs) > 1 else ""
            lines.append(f"{indent}{_dot_id(graph, t.op)} -> {_dot_id(graph, op)}{edge_label};")
        for c in op.control_inputs:
            lines.append(f"{indent}{_dot_id(graph, c)} -> {_dot_id(graph, op)} [style=dashed];")
        for attr, fn_name in opdef.function_attrs(op):
            sub = graph.library.get(fn_name)
            if sub is None:
                continue
            anchor = _dot_quote(f"{fn_name}/")
            if fn_name not in done:
                done.add(fn_name)
                lines.append(f"{indent}subgraph {_dot_quote('cluster_' + fn_name)} {{")
                lines.append(f"{indent}  label={_dot_quote(fn_name)};")
                lines.append(f"{indent}  {anchor} [label={_dot_quote(fn_name)}, shape=plaintext];")
                _dot_graph(sub, lines, indent + "  ", done)
                lines.append(f"{indent}}}")
            lines.append(f"{indent}{_dot_id(graph, op)} -> {anchor} [style=dotted, label={_dot_quote(attr)}];")
    for i, t in enumerate(graph.outputs):
        if hasattr(t, "op"):
            node = _dot_quote(f"{graph.name}/output{i}")
            lines.append(f'{indent}{node} [label="output {i}", shape=plaintext];')
            lines.append(f"{indent}{_dot_id(graph, t.op)} -> {node};")


def to_dot(graph) -> str:
    """A Graphviz ``digraph``: ops as boxes, data edges, dashed control edges, sub-graphs as clusters."""
    lines = [f'digraph "{_dot_escape(graph.name)}" {{', "  node [fontname=monospace];"]
    _dot_graph(graph, lines, "  ", {graph.name})
    lines.append("}")
    return "\n".join(lines) + "\n"
