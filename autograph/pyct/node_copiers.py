"""Functions copying one node class field by field, made from a source template.

The tree walks every conversion runs on every node (``gast_conversion``'s
two directions, ``templates``' cloning) are written once as a template and
specialized per node class on first sight: the class's fields unrolled, no
table lookup or loop over fields per node.

    copier("node", body, _new=..., _target=...)

is the function

    def copy(node):
        old = node.__dict__
        new = _new(_target)
        d = new.__dict__
        <body: lines filling d from old>
        return new

with the keyword arguments as its globals.
"""

from __future__ import annotations

_SKELETON = """
def copy({parameters}):
    old = node.__dict__
    new = _new(_target)
    d = new.__dict__
{body}    return new
"""


def copier(parameters: str, body: str, **namespace):
    """The copying function with these ``parameters`` (``node`` among them) and ``body`` (lines
    indented four spaces, filling ``d`` from ``old``); ``namespace``: its globals."""
    exec(_SKELETON.format(parameters=parameters, body=body), namespace)  # noqa: S102 - our own template
    return namespace["copy"]
