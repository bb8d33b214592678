"""Loading: from a live function (or a file and a name) to its definition's ``ast`` node.

The source comes from ``linecache`` (what ``inspect`` reads; files, and
code ``exec``'d under a name registered in ``linecache``).  Each file is
parsed once with ``ast`` and indexed by the first line of every ``def``
(its first decorator's line, as in ``co_firstlineno``) and every
``lambda`` (the last ``MAX_INDEXED_FILES`` files are kept); the caller converts the node found to
``gast`` on its own, so the AST keeps the original file's line numbers and needs no dedenting.

``SourceUnavailable`` means the function runs unconverted (with a warning);
``ConversionError`` means the source exists but cannot be converted.
"""

from __future__ import annotations

import ast
import collections
import linecache

from autograph.runtime import errors


class SourceUnavailable(Exception):
    """The source of a function cannot be found or parsed; message says why."""


_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


class _FileIndex:
    __slots__ = ("lines", "tree", "defs", "_lambdas")

    def __init__(self, lines, tree):
        self.lines = lines
        self.tree = tree
        self.defs = {}
        self._lambdas = None
        statements = list(reversed(tree.body))  # defs are statements: the expressions need no walk
        while statements:
            node = statements.pop()
            if type(node) in _FUNCTION_NODES:
                first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                self.defs.setdefault((first, node.name), node)
                self.defs.setdefault((node.lineno, node.name), node)
            for field in _BLOCKS:
                block = getattr(node, field, None)
                if block:
                    statements.extend(reversed(block))

    @property
    def lambdas(self) -> dict:
        """First line -> the lambdas starting there (indexed when a lambda is first looked up)."""
        if self._lambdas is None:
            lambdas = {}
            for node in ast.walk(self.tree):
                if type(node) is ast.Lambda:
                    lambdas.setdefault(node.lineno, []).append(node)
            self._lambdas = lambdas
        return self._lambdas


# filename -> its index, most recently used last; bounded, so code exec'd under
# ever new names (notebook cells) does not keep every parsed tree alive.
_INDEX: "collections.OrderedDict[str, _FileIndex]" = collections.OrderedDict()
MAX_INDEXED_FILES = 128


def _index(filename, module_globals=None) -> _FileIndex:
    # a file changed since linecache read it (a module edited and reloaded, a notebook's %autoreload)
    # is read again, as inspect does: its functions are the new source's, not the cached one's
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        raise SourceUnavailable(f"no source is available for file {filename!r}")
    index = _INDEX.get(filename)
    if index is not None and index.lines is lines:
        _INDEX.move_to_end(filename)
        return index
    try:
        tree = ast.parse("".join(lines), filename)
    except SyntaxError as e:
        raise SourceUnavailable(f"the source of {filename!r} does not parse ({e.msg}, line {e.lineno})") from None
    index = _INDEX[filename] = _FileIndex(lines, tree)
    _INDEX.move_to_end(filename)
    while len(_INDEX) > MAX_INDEXED_FILES:
        _INDEX.popitem(last=False)
    return index


def _arg_names(args: ast.arguments):
    names = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg:
        names.append(args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def _code_arg_names(code):
    count = code.co_argcount + code.co_kwonlyargcount
    flags = code.co_flags
    count += bool(flags & 0x04) + bool(flags & 0x08)  # *args, **kwargs
    names = list(code.co_varnames[:count])
    return names


def find_node(function):
    """The ``ast`` node of ``function``'s definition (a def or a lambda)."""
    code = function.__code__
    filename = code.co_filename
    index = _index(filename, getattr(function, "__globals__", None))
    if code.co_name == "<lambda>":
        candidates = index.lambdas.get(code.co_firstlineno, [])
        if len(candidates) > 1:
            wanted = sorted(_code_arg_names(code))
            candidates = [c for c in candidates if sorted(_arg_names(c.args)) == wanted]
        if not candidates:
            raise SourceUnavailable(f"no lambda found at {errors.at(filename, code.co_firstlineno)}")
        if len(candidates) > 1:
            raise SourceUnavailable(
                f"{len(candidates)} lambdas with the same parameters are on line "
                f"{errors.at(filename, code.co_firstlineno)}, so autograph cannot tell which one this is; "
                "put each lambda on its own line (or use a def) to have it converted"
            )
        return candidates[0]
    node = index.defs.get((code.co_firstlineno, code.co_name))
    if node is None:
        raise SourceUnavailable(
            f"no definition of '{code.co_name}' found at {errors.at(filename, code.co_firstlineno)} "
            "(was the file changed after it was imported?)"
        )
    return node


def parse_file(path):
    """Parses a file without importing it: ``(source_lines, ast.Module)``.

    Raises OSError if the file cannot be read, SyntaxError if it does not parse.
    """
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return ast.parse(text, path)


def find_in_module(tree: ast.Module, qualname: str):
    """The def named ``qualname`` (``func``, ``Class.method``, ``outer.inner``) in ``tree``."""
    body = tree.body
    node = None
    for part in qualname.split("."):
        node = None
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == part:
                node = statement
        if node is None:
            return None
        body = node.body
    if not isinstance(node, _FUNCTION_NODES):
        return None
    return node
