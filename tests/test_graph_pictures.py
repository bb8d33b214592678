"""Graphs as pictures: the DOT of ``Graph.to_dot``, SVG/PNG through Graphviz, the CLI.

The SVG tests need Graphviz's ``dot`` program and are skipped without it.
"""

from __future__ import annotations

import re
import sys
import textwrap

import numpy as np
import pytest

import autograph as ag
from autograph import cli_graph
from autograph import runtime as rt
from autograph.runtime.core import render

needs_dot = pytest.mark.skipif(not render.available(), reason="Graphviz's `dot` program is not installed")

MODULE = textwrap.dedent(
    """
    import numpy as np
    from autograph import runtime as rt

    def looped(x, n):
        total = x * 0.0
        i = 0
        while i < n:
            total = total + x * 2.0
            i += 1
        return total

    def nested(x):
        if x > 0:
            if x > 1:
                x = x + 1.0
            else:
                x = x - 1.0
        return x

    def deep(x, y):
        if x > 0:
            y = y + 1.0
            if x > 1:
                y = y * 2.0
                if x > 2:
                    y = y - 3.0
                    if x > 3:
                        y = y + 4.0
                        if x > 4:
                            y = y * 5.0
                            if x > 5:
                                y = y - 6.0
                                if x > 6:
                                    y = y + 7.0
                                    if x > 7:
                                        y = y * 8.0
                                        if x > 8:
                                            y = y - 9.0
        return y

    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps

    class Model:
        def __init__(self):
            self.w = 2.0

        def step(self, x):
            return x * self.w

    class Needy:
        def __init__(self, w):
            self.w = w

        def step(self, x):
            return x * self.w

    needy = Needy(5.0)
    """
)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("pictures") / "model.py"
    path.write_text(MODULE)
    module = cli_graph._load_module(str(path))
    return str(path), module


def graph_of(model, name, *args):
    return ag.function(getattr(model[1], name)).get_concrete_function(*args).graph


def counts(dot: str) -> tuple[int, int]:
    """(nodes, clusters) declared in a DOT text."""
    nodes = len(re.findall(r'^\s*"[^"]*" \[label=', dot, re.M))
    return nodes, dot.count("subgraph ")


def run(capsys, *argv):
    code = cli_graph.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- DOT ----------------------------------------------------------------------------


def test_while_edges_say_loop_var_or_capture_and_reach_the_placeholders(model):
    dot = graph_of(model, "looped", rt.TensorSpec((3,), "float32"), rt.TensorSpec((), "int32")).to_dot()
    assert '"looped/mul" -> "while_body/loop_var_1" [label="loop var 1", style=dashed];' in dot
    assert '"looped/x" -> "while_body/capture" [label="capture", style=dashed];' in dot
    assert '"looped/n" -> "while_cond/capture" [label="capture", style=dashed];' in dot
    assert '"while_body/add" -> "looped/while" [label="body 1", style=dotted];' in dot
    assert '"while_cond/less" -> "looped/while" [label="cond", style=dotted];' in dot
    assert '"looped/while" -> "looped/return" [label="out 1"];' in dot


def test_labels_show_op_constants_types_and_the_users_line(model):
    dot = graph_of(model, "looped", rt.TensorSpec((3,), "float32"), rt.TensorSpec((), "int32")).to_dot()
    assert '"while_body/mul" [label="mul = capture * 2.0\\nfloat32[3]  model.py:9", shape=box];' in dot
    assert '"looped/const_2" [label="const_2 = 0\\nweak int32[]  model.py:8", shape=box];' in dot  # a loop var's start
    assert '[label="while = While\\nweak int32[], float32[3]  model.py:8", shape=box, style="rounded,bold"];' in dot


def test_nested_branches_are_nested_clusters(model):
    dot = graph_of(model, "nested", rt.TensorSpec((), "float32")).to_dot()
    outer = dot.index('subgraph "cluster_op:nested/if"')
    inner = dot.index('subgraph "cluster_op:if_true_1/if"')
    assert outer < dot.index('subgraph "cluster_fn:if_true_1"') < inner
    # the else of the outer if changes nothing: an edge, no cluster
    assert '"nested/x" -> "nested/if" [label="else: unchanged", style=dotted];' in dot
    assert counts(dot) == (11, 5)


def test_large_constants_are_cut_and_names_stay_escaped():
    graph = rt.function(lambda x: x + np.arange(100, dtype=np.float32)).get_concrete_function(
        rt.TensorSpec((100,), "float32")).graph
    assert "const = <float32[100]>" in graph.to_dot()


# -- pictures -------------------------------------------------------------------------


@needs_dot
@pytest.mark.parametrize("name, specs, want", [
    ("looped", [rt.TensorSpec((3,), "float32"), rt.TensorSpec((), "int32")], (16, 3)),
    ("nested", [rt.TensorSpec((), "float32")], (11, 5)),
    ("deep", [rt.TensorSpec((), "float32")] * 2, (47, 18)),
])
def test_svg_has_the_nodes_and_clusters_of_the_dot(model, name, specs, want):
    graph = graph_of(model, name, *specs)
    assert counts(graph.to_dot()) == want
    svg = graph._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert (svg.count('class="node"'), svg.count('class="cluster"')) == want


@needs_dot
def test_nine_nested_branches_stay_readable(model):
    svg = render.render(graph_of(model, "deep", *[rt.TensorSpec((), "float32")] * 2)).decode()
    width, height = (float(v) for v in re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    assert width < 3000 and height < 3000, (width, height)  # 6299 x 1582 before clusters nested


@needs_dot
def test_png(model):
    assert render.render(graph_of(model, "nested", rt.TensorSpec((), "float32")), "png")[:8] == b"\x89PNG\r\n\x1a\n"


def without_graphviz(monkeypatch):
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    monkeypatch.setitem(sys.modules, "graphviz", None)  # `import graphviz` raises ImportError


def test_without_graphviz_the_error_says_what_to_install(model, monkeypatch):
    without_graphviz(monkeypatch)
    graph = graph_of(model, "nested", rt.TensorSpec((), "float32"))
    with pytest.raises(render.GraphvizNotFound, match=r"`dot` program was not found.*apt-get install graphviz"):
        render.render(graph, "svg")
    assert graph._repr_svg_() is None  # Jupyter then shows the text repr
    assert repr(graph).startswith("graph nested(")
    with pytest.raises(ValueError, match="svg, png"):
        render.render(graph, "pdf")


# -- the CLI ------------------------------------------------------------------------------


@needs_dot
def test_cli_svg_and_png_output(capsys, model, tmp_path):
    path = model[0]
    code, out, err = run(capsys, f"{path}:nested", "--arg", "float32[]", "--format", "svg")
    assert code == 0, err
    assert out.count('class="cluster"') == 5
    target = tmp_path / "g.png"
    code, out, err = run(capsys, f"{path}:looped", "--arg", "float32[3]", "--arg", "int32[]", "--format", "png",
                         "--optimized", "-o", str(target))
    assert code == 0 and out == "", err
    assert target.read_bytes()[:4] == b"\x89PNG"


def test_cli_svg_without_graphviz_exits_1(capsys, model, monkeypatch):
    without_graphviz(monkeypatch)
    code, out, err = run(capsys, f"{model[0]}:nested", "--arg", "float32[]", "--format", "svg")
    assert code == 1 and out == ""
    assert "cannot draw the graph as svg" in err and "Install Graphviz" in err


def test_cli_dot_to_a_file(capsys, model, tmp_path):
    target = tmp_path / "g.dot"
    code, out, err = run(capsys, f"{model[0]}:nested", "--arg", "float32[]", "--format", "dot", "-o", str(target))
    assert code == 0 and out == "", err
    assert target.read_text().startswith('digraph "nested" {')


def test_cli_python_arguments_print_the_value(capsys, model):
    with pytest.warns(ag.TracingWarning, match="a Python loop unrolled"):  # 111 iterations while tracing
        code, out, err = run(capsys, f"{model[0]}:collatz", "--arg", "27")
    assert code == 0, err
    assert out == "111\n"
    assert "nothing was staged: every argument is a Python value, so collatz(27) ran as plain Python" in err
    assert "--arg int32[]" in err


def test_cli_method_of_a_class_uses_a_new_instance(capsys, model):
    code, out, err = run(capsys, f"{model[0]}:Model.step", "--arg", "float32[]")
    assert code == 0, err
    assert "tracing on a new instance Model() as self" in err
    assert out.startswith("graph step(%x:0 float32[])") and "value=2.0" in out


def test_cli_method_of_a_class_uses_the_module_instance(capsys, model):
    code, out, err = run(capsys, f"{model[0]}:Needy.step", "--arg", "float32[]")
    assert code == 0, err
    assert "on the module-level instance 'needy'" in err and "value=5.0" in out
    code, out, err = run(capsys, f"{model[0]}:needy.step", "--arg", "float32[]")
    assert code == 0 and "value=5.0" in out, err


def test_cli_method_without_an_instance_is_bad_usage(capsys, tmp_path):
    path = tmp_path / "lonely.py"
    path.write_text("class Lonely:\n    def __init__(self, w):\n        self.w = w\n\n    def step(self, x):\n"
                    "        return x * self.w\n")
    code, out, err = run(capsys, f"{path}:Lonely.step", "--arg", "float32[]")
    assert code == 2
    assert "Lonely() raised TypeError" in err and f"{path}:INSTANCE.method" in err
