"""The ``autograph`` command line.

``autograph show FILE.py:FUNC`` prints the code autograph generates for one
function (``FUNC`` may be ``Class.method`` or ``outer.inner``) WITHOUT
importing or running FILE: the file is parsed and the definition converted
as an AST.  Callees are then resolved only when they are builtins (no live
globals), so calls to user functions, numpy, etc. show the generic
``ag__.converted_call`` form.  ``--after PASS`` prints the code as it is
after one pass of the pipeline.

Sub-commands live in their own modules: ``graph`` is registered from
``autograph.cli_graph`` and ``check`` from ``autograph.check.cli``
(``add_parser(subparsers)``, whose parser sets a ``handler(args) -> exit
status`` default).

Exit status: 0 success, 1 conversion error, 2 bad usage (missing file,
unknown function, syntax error in FILE); messages go to stderr, one
paragraph, without a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

import gast

from autograph import api, cli_graph, compiling, loading, pipeline
from autograph.pyct import context
from autograph.check import cli as cli_check
from autograph.runtime import errors

_USAGE, _CONVERSION = 2, 1


class _Failure(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _split_target(target: str):
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise _Failure(_USAGE, f"expected FILE.py:FUNC (e.g. examples/quickstart.py:collatz), got {target!r}")
    return path, name


def show(args) -> int:
    path, name = _split_target(args.target)
    try:
        tree = loading.parse_file(path)
    except FileNotFoundError:
        raise _Failure(_USAGE, f"no such file: {path}") from None
    except OSError as e:
        raise _Failure(_USAGE, f"cannot read {path}: {e.strerror}") from None
    except SyntaxError as e:
        raise _Failure(
            _USAGE, f"{errors.at(path, e.lineno)}: syntax error: {e.msg}; fix the file, then run autograph show again"
        ) from None
    node = loading.find_in_module(tree, name)
    if node is None:
        raise _Failure(
            _USAGE,
            f"no function named {name!r} in {path} (give a top-level function, Class.method or outer.inner)",
        )
    converted = api.convert_node(
        gast.ast_to_gast(node), path, context.Options(), name=name, stop_after=args.after
    )
    sys.stdout.write(compiling.to_source(converted) + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograph",
        description="autograph: turn Python control flow into functional graph control flow.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    show_parser = commands.add_parser(
        "show",
        help="print the code generated for FUNC of FILE (FILE is parsed, not imported)",
        description="Print the code autograph generates for one function. FILE is parsed, never imported "
        "or run; calls that need the module's live globals to resolve keep the generic "
        "ag__.converted_call form.",
    )
    show_parser.add_argument("target", metavar="FILE.py:FUNC", help="FUNC may be Class.method or outer.inner")
    show_parser.add_argument(
        "--after", metavar="PASS", choices=pipeline.PASS_NAMES,
        help="print the code after this pass instead: " + ", ".join(pipeline.PASS_NAMES),
    )
    show_parser.set_defaults(handler=show)
    cli_graph.add_parser(commands)
    cli_check.add_parser(commands)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except _Failure as failure:
        print(f"autograph {args.command}: {failure}", file=sys.stderr)
        return failure.status
    except errors.ConversionError as e:
        print(f"autograph {args.command}: {e}", file=sys.stderr)
        return _CONVERSION
    except BrokenPipeError:
        # The reader went away (`autograph show ... | head`): stop quietly, as other tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
