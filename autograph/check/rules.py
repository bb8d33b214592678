"""The codes of ``autograph check``: one table, the only place their wording lives.

Each ``Rule`` has a ``summary`` (the README table's wording), a ``message``
and a ``fix``: templates whose ``{placeholders}`` the detectors fill in
(``detect.py`` passes the fields; it never spells a message itself).  Codes
are stable: a rule that goes away keeps its number retired.

``README.md``'s section "Checking the tracing rules" holds
``markdown_table()``; ``tests/test_check.py`` keeps the two identical.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    summary: str
    message: str
    fix: str
    informational: bool = False  # behaviour that may well be intended; marked "(info)" in the README


RULES = {
    "AG100": Rule(
        summary="the file does not parse (nothing in it was checked)",
        message="{error}",
        fix="fix the syntax error, then run autograph check again",
    ),
    "AG101": Rule(
        summary="a numpy / math / time call on a tensor runs once, while tracing, not in the graph",
        message="{call} on tensor {arg!r} runs once, while tracing, on a symbolic tensor (it fails or "
        "bakes in a constant) instead of running in the graph",
        fix="{replacement}",
    ),
    "AG102": Rule(
        summary="a `np.random` / `random` / clock value is computed while tracing: a constant in the graph",
        message="{call} runs once, while tracing: what it drew (or set) then is fixed into the graph, the "
        "same at every call",
        fix="{replacement}",
    ),
    "AG103": Rule(
        summary="`print` / `logging` / `warnings` output happens once per trace, not at every call",
        message="{call} runs once per trace, not at every call{why}",
        fix="use rt.print(...) to print at every call, or log outside the traced function",
    ),
    "AG104": Rule(
        summary="mutating a global or an object defined outside the function happens once per trace",
        message="{what} mutates {name!r}, defined outside the traced function: that runs once per trace, "
        "not at every call",
        fix="return the value instead, or keep the state in an rt.Variable created once (assign it with .assign)",
    ),
    "AG105": Rule(
        summary="a `global` / `nonlocal` counter is updated once per trace",
        message="{kind} {name!r} is rebound in the traced function: the update runs once, while tracing, "
        "not at every call{note}",
        fix="keep the count in an rt.Variable created once and update it with .assign_add(...)",
    ),
    "AG106": Rule(
        summary="`rt.Variable(...)` created in the body without a first-call guard",
        message="{call} creates a variable on every trace: the first trace keeps it, a retrace (a new input "
        "signature) raises ag.TracingError",
        fix="create it outside the function (in `__init__` or at module level), or only on the first call: "
        "`if self.v is None: self.v = rt.Variable(...)`",
    ),
    "AG107": Rule(
        summary="a Python loop over a bound that comes from a Python argument unrolls while tracing",
        message="{loop} has a Python bound from argument {arg!r}: it runs while tracing, copying its body "
        "into the graph once per iteration (and each new value of {arg!r} traces again)",
        fix="fine for a small fixed count; for one While op pass the bound as a tensor or loop over rt.range(...)",
        informational=True,
    ),
    "AG108": Rule(
        summary="a loop bound read from `x.shape` unrolls when the shape is static",
        message="{loop} takes its bound from the static shape {shape}: the loop unrolls into one copy of "
        "its body per element when that dimension is known while tracing (a While op when it is not)",
        fix="use range(len({tensor})) (staged when the size is unknown) or rt.range(rt.shape({tensor})[0]) "
        "(always one While op)",
        informational=True,
    ),
    "AG109": Rule(
        summary="a condition on a static shape stays Python: the branch is chosen once, while tracing",
        message="the condition {test} tests a static shape, so it is a Python bool: the branch is chosen "
        "while tracing and only that branch is in the graph",
        fix="if the size may vary at run time, test rt.shape({tensor})[...] instead (a tensor: both branches "
        "are staged)",
        informational=True,
    ),
    "AG110": Rule(
        summary="a tensor used as a Python bool / length / iterable where autograph does not convert it",
        message="{use} of tensor {arg!r} {where} raises ag.TracingError while tracing",
        fix="{replacement}",
    ),
    "AG111": Rule(
        summary="type introspection of a tensor that sees the symbolic tensor, not the array (a `match` class "
        "pattern; `isinstance` / `type` where autograph does not convert)",
        message="{construct} of tensor {arg!r} {where} is decided once, while tracing, by the class of the symbolic "
        "tensor (never np.ndarray or a numpy scalar type): it may take another branch than Python would",
        fix="{replacement}",
    ),
    "AG112": Rule(
        summary="`str()` / f-string / `%` / `.format()` of a tensor makes its text once, while tracing",
        message="{construct} of tensor {arg!r} makes its text once, while tracing: it shows the symbolic tensor, "
        "never its value at a call",
        fix="use rt.print(...) to print values at every call, or format the function's result",
    ),
    "AG113": Rule(
        summary="an attribute of an argument, read by a traced function, is assigned after calling it: the "
        "graph keeps the value read while tracing",
        message="{target} is assigned after {call}, but {function} read {param}.{attr} while tracing: its graph "
        "keeps the value read then, and later calls with the same {arg!r} reuse that graph",
        fix="pass the value as an argument (a new Python value traces again, a tensor is read at every call), "
        "or keep it in an rt.Variable and .assign() it",
        informational=True,
    ),
}


def describe(code: str, fields: dict) -> tuple[str, str]:
    """``(message, fix)`` of ``code`` with ``fields`` filled in."""
    rule = RULES[code]
    return rule.message.format(**fields), rule.fix.format(**fields)


def markdown_table() -> str:
    """The README's table of codes, generated from ``RULES``."""
    rows = ["| code | reports | fix |", "|---|---|---|"]
    for code, rule in sorted(RULES.items()):
        fix = rule.fix if "{" not in rule.fix else _GENERIC_FIX[code]
        summary = rule.summary + (" (info)" if rule.informational else "")
        rows.append(f"| `{code}` | {summary} | {fix} |")
    return "\n".join(rows) + "\n"


# The README's fix column for rules whose fix depends on the call found.
_GENERIC_FIX = {
    "AG101": "use the `rt.*` op the message names (`rt.exp`, `rt.reduce_sum`, ...), or `rt.py_function`",
    "AG102": "`rt.random.uniform` / `rt.random.normal`; pass clock values in as arguments",
    "AG108": "`range(len(x))` (staged when the size is unknown) or `rt.range(rt.shape(x)[0])`",
    "AG109": "test `rt.shape(x)[...]` when the size may vary at run time",
    "AG110": "remove `@ag.do_not_convert` / use `ag.function`, or `rt.cond`, `rt.where`, `rt.shape(x)[0]`",
    "AG111": "`isinstance(x, ...)` / `type(x)` in converted code (answered as numpy's types), or test `x.ndim` / `x.dtype`",
}
