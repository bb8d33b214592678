"""Pictures of graphs: the DOT of ``printer.to_dot`` rendered to SVG or PNG by Graphviz.

Graphviz is optional.  ``render`` uses the ``graphviz`` Python package when it
is installed (``pip install autograph[graph]``), else Graphviz's ``dot``
program found on ``PATH``; both need that program.  Without it ``render``
raises ``GraphvizNotFound``, which says what to install.  The DOT text it
renders escapes every name and value taken from the graph (see
``printer._dot_escape``), so a graph from a file cannot inject DOT, and
Graphviz writes labels into SVG as escaped XML text.
"""

from __future__ import annotations

import shutil
import subprocess

from autograph.runtime.errors import AutoGraphError

FORMATS = ("svg", "png")
_TIMEOUT_SECONDS = 120


class GraphvizNotFound(AutoGraphError, RuntimeError):
    """Graphviz's ``dot`` program, needed to draw a graph as SVG or PNG, is not installed."""


INSTALL_HINT = (
    "Graphviz's `dot` program was not found on PATH. Install Graphviz (Debian/Ubuntu: apt-get install "
    "graphviz; macOS: brew install graphviz; conda: conda install graphviz; others: "
    "https://graphviz.org/download/); `pip install autograph[graph]` adds the `graphviz` Python package, "
    "which needs that program too. Or print the DOT text (--format dot / graph.to_dot()) and render it "
    "elsewhere."
)


def available() -> bool:
    """True when Graphviz's ``dot`` program can be run."""
    return shutil.which("dot") is not None


def render(graph_or_dot, format: str = "svg") -> bytes:
    """``graph_or_dot`` (an ``rt.Graph`` or DOT text) drawn as ``format`` (``svg`` or ``png``)."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    dot_text = graph_or_dot if isinstance(graph_or_dot, str) else graph_or_dot.to_dot()
    data = dot_text.encode("utf-8")
    try:
        import graphviz
    except ImportError:
        graphviz = None
    if graphviz is not None:
        try:
            return graphviz.pipe("dot", format, data, quiet=True)
        except graphviz.ExecutableNotFound:
            raise GraphvizNotFound(f"cannot draw the graph as {format}: {INSTALL_HINT}") from None
        except graphviz.CalledProcessError as e:
            raise AutoGraphError(f"Graphviz failed to draw the graph as {format}: {_stderr(e)}") from None
    program = shutil.which("dot")
    if program is None:
        raise GraphvizNotFound(f"cannot draw the graph as {format}: {INSTALL_HINT}")
    done = subprocess.run([program, f"-T{format}"], input=data, capture_output=True, timeout=_TIMEOUT_SECONDS)
    if done.returncode != 0:
        raise AutoGraphError(f"Graphviz failed to draw the graph as {format}: {_stderr(done)}")
    return done.stdout


def _stderr(result) -> str:
    text = result.stderr.decode("utf-8", "replace") if isinstance(result.stderr, bytes) else str(result.stderr)
    return text.strip() or f"exit status {result.returncode}"


def svg_or_none(graph) -> str | None:
    """SVG text of ``graph``, or None when Graphviz is not installed (Jupyter's ``_repr_svg_``:
    None makes it show the text repr instead)."""
    try:
        return render(graph, "svg").decode("utf-8")
    except GraphvizNotFound:
        return None
