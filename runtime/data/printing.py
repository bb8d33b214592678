"""The printer of pipelines: one transformation per line, sources first, with the element spec.

    from_tensor_slices(rows=10)                       -> int64[]
    map(the map function 'double' defined at f.py:3) -> int64[]
    batch(batch_size=2, drop_remainder=False)         -> int64[?]

A node with several inputs (``zip``, ``concatenate``) prints its inputs as
indented blocks above itself.
"""

from __future__ import annotations

from autograph.runtime.data import structure

_FUNCTION_ATTRS = ("fn", "predicate", "scan")
_HIDDEN_ATTRS = ("leaves", "epochs", "store", "structure", "generator", "parts", "dataset")


def describe_node(ds) -> str:
    """``map(fn='double' defined at f.py:3)``: one node, without its inputs."""
    parts = []
    if ds.kind == "from_tensor_slices":
        parts.append(f"rows={len(ds.attrs['leaves'][0])}")
    if ds.kind == "argument":
        parts.append("the dataset passed to the function")
    if ds.kind == "from_generator":
        parts.append(f"generator={getattr(ds.attrs['generator'], '__qualname__', '?')!r}, not portable")
    for key, value in ds.attrs.items():
        if key in _HIDDEN_ATTRS:
            continue
        if key in _FUNCTION_ATTRS:
            value = getattr(value, "function", value).label
        elif key == "stages":
            value = "[" + ", ".join(f"{kind} {fn.label}" for kind, fn in value) + "]"
        elif key == "options":
            value = ", ".join(f"{k}=False" for k, v in vars(value).items() if v is False) or "defaults"
        elif value is None or value is False and key == "deterministic":
            continue
        parts.append(f"{key}={value}")
    return f"{ds.kind}({', '.join(parts)})"


def _lines(ds, indent):
    lines = []
    if len(ds.inputs) > 1:
        for i, child in enumerate(ds.inputs):
            lines.append((indent + 1, f"input {i}:"))
            lines.extend(_lines(child, indent + 2))
    elif ds.inputs:
        lines.extend(_lines(ds.inputs[0], indent))
    lines.append((indent, f"{describe_node(ds)}  -> {structure.format_spec(ds.element_spec)}"))
    return lines


def to_text(ds) -> str:
    return "\n".join("  " * depth + text for depth, text in _lines(ds, 0))
