"""``autograph graph FILE.py:FUNC --arg float32[3] ...``: trace one function and print its graph.

Unlike ``autograph show``, this IMPORTS (runs) FILE: tracing needs the
function object.  The function is traced with ``ag.function`` (or used as it
is if FILE already decorates it) for the argument specs given by ``--arg``,
one per positional parameter, in order:

* ``float32[3]``, ``int32[]``, ``float64[?,2]`` (``?``, ``None`` or ``-1``
  for an unknown dimension), or a bare dtype for a scalar: an input tensor;
* anything else is read as a Python literal (``3``, ``2.5``, ``True``,
  ``"'mode'"``): a constant the function sees as a Python value.

FUNC may be ``Class.method``: it is traced on the one module-level instance
of ``Class`` if FILE has exactly one, else on a new ``Class()`` (stderr says
which); ``instance.method`` names an instance of FILE directly.

Output (``--format``): ``text`` (the readable listing), ``json`` (the graph
def), ``dot`` (Graphviz), ``svg`` / ``png`` (the DOT drawn by Graphviz, which
must be installed; ``-o FILE`` writes it to FILE), ``python`` (the graph
compiled by ``jit_compile``).  ``--optimized`` shows the graph as it runs
(after the optimizer) rather than as traced; ``--optimize-report`` prints the
op counts before and after each optimizer pass.  When every argument is a
Python value and the trace staged nothing, the function ran as plain Python
while tracing: stderr says so and stdout gets its result.

Exit status: 0 on success, 1 when FILE raises or the function cannot be
converted or traced (message on stderr), 2 on bad usage (unknown file or
function, malformed ``--arg``).

Interface for ``autograph/cli.py``: ``add_parser(subparsers)`` registers the
``graph`` sub-command, ``run(args) -> int`` executes it; ``main(argv)``
runs it standalone.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import json
import os
import re
import sys
import warnings

import autograph as ag
from autograph.runtime import errors, optimizer
from autograph.runtime.core import dtypes, render
from autograph.runtime.errors import AutoGraphError
from autograph.runtime.tracing.function import BoundFunction, Function, function
from autograph.runtime.core.tensor import TensorSpec

HELP = "trace FUNC of FILE (IMPORTS and runs FILE) and print its graph"

DESCRIPTION = (
    "Trace one function with ag.function for the given argument specs and print the graph. "
    "WARNING: this IMPORTS FILE, executing its module-level code (unlike `autograph show`, which "
    "only reads the source)."
)

_SPEC = re.compile(r"^\s*([a-z_]+[0-9]*)\s*(?:\[\s*([^\]]*)\s*\])?\s*$")


class UsageError(Exception):
    """Bad command line: exit status 2."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Registers ``graph`` on an ``argparse`` sub-parsers object; returns its parser."""
    parser = subparsers.add_parser("graph", help=HELP, description=DESCRIPTION)
    configure(parser)
    return parser


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="FILE.py:FUNC", help="the file (imported!) and the function to trace")
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="SPEC",
        help="one per positional parameter: DTYPE[SHAPE] (e.g. float32[3], int32[], float32[?,2]) "
        "or a Python literal constant (e.g. 3, True, \"'mode'\")",
    )
    parser.add_argument("--format", choices=("text", "json", "dot", "svg", "png", "python"), default="text",
                        help="svg and png need Graphviz (its `dot` program)")
    parser.add_argument("-o", "--output", metavar="PATH", help="write the output to PATH instead of stdout")
    parser.add_argument("--optimized", action="store_true", help="show the optimized graph (as it runs)")
    parser.add_argument("--no-autograph", action="store_true", help="trace the function without converting it")
    parser.add_argument(
        "--optimize-report", action="store_true", help="print op counts before/after each optimizer pass"
    )
    parser.set_defaults(handler=run)


def parse_arg(text: str):
    """``float32[3]`` -> TensorSpec; other text -> the Python literal it spells."""
    match = _SPEC.match(text)
    if match is not None:
        name, dims = match.group(1), match.group(2)
        try:
            dtype = dtypes.as_dtype(name)
        except TypeError:
            dtype = None
        if dtype is not None:
            shape = []
            for dim in (dims or "").split(","):
                dim = dim.strip()
                if not dim:
                    continue
                if dim in ("?", "None", "-1"):
                    shape.append(None)
                elif dim.isdigit():
                    shape.append(int(dim))
                else:
                    raise UsageError(f"--arg {text!r}: dimension {dim!r} must be a non-negative int or ?")
            if dims is not None and dims.strip() == "" and "," in dims:
                raise UsageError(f"--arg {text!r}: empty dimension")
            return TensorSpec(tuple(shape), dtype)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise UsageError(
            f"--arg {text!r} is neither a tensor spec (DTYPE[SHAPE], e.g. float32[3], int32[]) nor a Python "
            "literal (e.g. 3, 2.5, True, \"'text'\")"
        ) from None


def _split_target(target: str):
    path, sep, qualname = target.rpartition(":")
    if not sep or not path or not qualname:
        raise UsageError(f"target {target!r} must be FILE.py:FUNC (e.g. model.py:step)")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    return path, qualname


def _load_module(path: str):
    """Imports FILE as a module (its directory first on sys.path, as `python FILE` would)."""
    try:
        with open(path, encoding="utf-8") as f:
            compile(f.read(), path, "exec")
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    directory = os.path.dirname(os.path.abspath(path))
    name = "_autograph_graph_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    finally:
        if sys.path and sys.path[0] == directory:
            sys.path.pop(0)
    return module


def _resolve(module, qualname: str, path: str):
    """The function ``qualname`` names in ``module``; ``Class.method`` bound to an instance."""
    obj, owner = module, None
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{path} has no {qualname!r} (no attribute {part!r})")
        owner, obj = obj, getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{path}:{qualname} is a {type(obj).__name__}, not a function")
    if isinstance(owner, type) and not isinstance(obj, type):
        name = qualname.rpartition(".")[2]
        if not isinstance(inspect.getattr_static(owner, name), (staticmethod, classmethod)):
            return getattr(_instance_of(module, owner, path), name)
    return obj


def _instance_of(module, cls: type, path: str):
    """The ``self`` to trace a method of ``cls`` on: FILE's one instance of it, else ``cls()``."""
    instances = sorted(name for name, value in vars(module).items() if type(value) is cls)
    if len(instances) == 1:
        print(f"autograph graph: tracing {cls.__name__} methods on the module-level instance "
              f"{instances[0]!r} of {path} as self", file=sys.stderr)
        return getattr(module, instances[0])
    try:
        instance = cls()
    except Exception as e:  # noqa: BLE001 - the user's constructor: report it as usage
        which = f"FILE has {len(instances)} instances of it ({', '.join(instances)}); " if instances else ""
        raise UsageError(
            f"{cls.__name__}() raised {type(e).__name__}: {e}; a method is traced on an instance: {which}"
            f"name one as {path}:INSTANCE.method, or make {cls.__name__}() work without arguments"
        ) from None
    print(f"autograph graph: tracing on a new instance {cls.__name__}() as self", file=sys.stderr)
    return instance


def _traceable(obj, no_autograph: bool):
    """``obj`` as a traced function: as it is if FILE decorated it, else through ag.function."""
    if isinstance(obj, (Function, BoundFunction)):
        return obj
    if no_autograph:
        return function(obj)
    return ag.function(obj)


def _innermost_line_in(error: BaseException, path: str) -> str:
    """`` at FILE:LINE`` of the innermost frame of ``error``'s traceback in FILE ('' if none)."""
    target = os.path.abspath(path)
    found = ""
    tb = error.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == target:
            found = f" at {errors.at(tb.tb_frame.f_code.co_filename, tb.tb_lineno)}"
        tb = tb.tb_next
    return found


def run(args) -> int:
    """Executes ``autograph graph`` for parsed ``args``; returns the exit status."""
    try:
        path, qualname = _split_target(args.target)
        specs = [parse_arg(a) for a in args.arg]
        try:
            module = _load_module(path)
        except UsageError:
            raise
        except SystemExit as e:  # the file ran sys.exit at import: say so instead of exiting silently
            print(f"autograph graph: importing {path} called sys.exit({e.code!r}); guard the script part "
                  "of the file with `if __name__ == \"__main__\":` so it can be imported", file=sys.stderr)
            return 1
        except Exception as e:  # noqa: BLE001 - the user's module failed: report it, no traceback
            print(f"autograph graph: importing {path} raised {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        fn = _resolve(module, qualname, path)
    except UsageError as e:
        print(f"autograph graph: {e}", file=sys.stderr)
        return 2
    traced = _traceable(fn, args.no_autograph)
    try:
        traced.check_arguments(*specs)
    except (TypeError, ValueError) as e:  # the --arg list does not fit the function: bad usage
        print(f"autograph graph: {e}", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            cf = traced.get_concrete_function(*specs)
    except AutoGraphError as e:
        print(f"autograph graph: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the user's function failed while tracing
        where = _innermost_line_in(e, path)
        print(f"autograph graph: tracing {qualname} raised {type(e).__name__}{where}: {e}", file=sys.stderr)
        return 1
    graph = cf.execution_graph if args.optimized else cf.graph
    if args.optimize_report:
        _, report = optimizer.optimize(cf.graph, report=True)
        print(report.to_text())
        return 0
    if not any(isinstance(spec, TensorSpec) for spec in specs) and _staged_nothing(cf.graph):
        return _print_python_result(traced, specs, qualname)
    if args.format in render.FORMATS:
        try:
            picture = render.render(graph, args.format)
        except AutoGraphError as e:
            print(f"autograph graph: {e}", file=sys.stderr)
            return 1
        return _write(args.output, picture)
    if args.format == "text":
        text = graph.to_text()
    elif args.format == "json":
        text = json.dumps(graph.as_graph_def(), indent=1, sort_keys=True) + "\n"
    elif args.format == "dot":
        text = graph.to_dot()
    else:
        text = cf.compiled_source()
    return _write(args.output, text if text.endswith("\n") else text + "\n")


def _staged_nothing(graph) -> bool:
    return not graph.operations


def _print_python_result(traced, specs, qualname: str) -> int:
    """Every argument was a Python value and nothing was staged: the function ran as plain Python
    while tracing, so its result is the answer (a graph would be empty)."""
    shown = ", ".join(repr(s) for s in specs)
    print(
        f"autograph graph: nothing was staged: every argument is a Python value, so {qualname}({shown}) ran as "
        "plain Python while tracing and its graph is empty. Its result is below; to trace a graph, give "
        "tensor specs for the arguments that vary (e.g. --arg int32[] instead of --arg 27).",
        file=sys.stderr,
    )
    print(repr(traced(*specs)))
    return 0


def _write(output, data) -> int:
    """``data`` (text, or bytes for a picture) to the file ``output``, or to stdout."""
    if output is not None:
        with open(output, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
    elif isinstance(data, str):
        sys.stdout.write(data)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return 0


def main(argv=None) -> int:
    """``python -m autograph.cli_graph FILE.py:FUNC ...`` (the same as ``autograph graph ...``)."""
    parser = argparse.ArgumentParser(prog="autograph graph", description=DESCRIPTION)
    configure(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
