"""From a module's entry points to the analysed functions: call sites, contexts, the fixpoint.

An entry point (``symbols.entries``) is analysed with its parameters at
``MAYBE`` (possibly tensors), except ``self`` and parameters with a
literal default, which are Python values.  Every call it makes to a
function of the same module (a plain name, or ``self.method``) adds that
function to the analysis, in the caller's mode (``unconverted`` stays
unconverted; ``@ag.do_not_convert`` makes it so), with each parameter at
the highest level any call site passes it.  A ``MAYBE`` parameter the body
uses as an array (``array_evidence``) becomes ``TENSOR``.  Levels only grow,
so repeating until nothing changes terminates.

A ``@ag.do_not_convert`` function that the module's traced code calls is
analysed with the levels of those calls only, not as an entry point: a
helper that receives Python numbers is not told it receives tensors.
"""

from __future__ import annotations

import ast

from autograph.check import symbols as sym
from autograph.check import taint
from autograph.check.taint import MAYBE, PY, UNKNOWN

_MAX_ROUNDS = 50


def entry_levels(symbols, function) -> dict:
    """Parameter levels of an entry point: possibly tensors, but ``self`` and literal defaults are Python."""
    self_name = taint.self_parameter(symbols, function)
    levels = {}
    for name, default in taint.parameters(function):
        python = name == self_name or (default is not None and sym.literal(default))
        levels[name] = PY if python else MAYBE
    return levels


def call_levels(facts, call, callee) -> dict:
    """The level each parameter of ``callee`` receives at ``call``."""
    pairs = taint.parameters(callee)
    names = [n for n, _ in pairs]
    levels = {n: (PY if d is None or sym.literal(d) else UNKNOWN) for n, d in pairs}
    positional = [a.arg for a in callee.args.posonlyargs + callee.args.args]
    if isinstance(call.func, ast.Attribute) and positional:
        levels[positional[0]] = PY  # self.method(...): self is the object
        positional = positional[1:]
    spread = MAYBE if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) else PY
    extra = PY
    for index, argument in enumerate(a for a in call.args if not isinstance(a, ast.Starred)):
        level = facts.level(argument)
        if index < len(positional):
            levels[positional[index]] = level
        else:
            extra = max(extra, min(level, MAYBE))
    for keyword in call.keywords:
        if keyword.arg in levels:
            levels[keyword.arg] = facts.level(keyword.value)
        elif keyword.arg is not None:
            extra = max(extra, min(facts.level(keyword.value), MAYBE))
    args = callee.args
    for star in (args.vararg, args.kwarg):
        if star is not None:
            levels[star.arg] = max(extra, spread)
    if spread == MAYBE:
        levels = {n: max(level, MAYBE) for n, level in levels.items()}
    return {n: levels[n] for n in names}


def analyse_module(symbols, entries) -> list:
    """The ``Facts`` of every function reached from ``entries`` (``{def: mode}``), in a stable order."""
    facts = _fixpoint(symbols, entries)
    helpers = {node for node in entries if symbols.is_do_not_convert(node) and _called(facts, node)}
    if helpers:
        facts = _fixpoint(symbols, {n: m for n, m in entries.items() if n not in helpers})
    return [facts[key] for key in sorted(facts, key=lambda k: (k[0].lineno, k[0].col_offset, k[1]))]


def _called(facts, node) -> bool:
    return any(callee is node for f in facts.values() for callee, _levels in f.calls)


def _fixpoint(symbols, entries):
    evidence: dict = {}
    contexts = {(node, mode): entry_levels(symbols, node) for node, mode in entries.items()}
    returns: dict = {}
    facts: dict = {}

    def returns_of(node, mode):
        return returns.get((node, mode), PY)

    for _ in range(_MAX_ROUNDS):
        changed = False
        for key in sorted(contexts, key=lambda k: (k[0].lineno, k[1])):
            node, mode = key
            if node not in evidence:
                evidence[node] = taint.array_evidence(symbols, node)
            params = {n: (taint.TENSOR if level == MAYBE and n in evidence[node] else level)
                      for n, level in contexts[key].items()}
            parent = symbols.parents.get(node)
            result = taint.analyse(symbols, node, mode, params, facts.get((parent, mode)), returns_of)
            result.calls = _calls(symbols, result)
            facts[key] = result
            if returns.get(key, PY) != result.returns:
                returns[key] = result.returns
                changed = True
            for callee, levels in result.calls:
                if callee in entries:
                    continue  # analysed as an entry point, with its own parameter levels
                callee_key = (callee, "unconverted" if mode == "unconverted"
                              or symbols.decorator_mode(callee) == "unconverted" else "converted")
                old = contexts.get(callee_key)
                new = levels if old is None else {n: max(old[n], levels[n]) for n in levels}
                if new != old:
                    contexts[callee_key] = new
                    changed = True
        if not changed:
            break
    return facts


def _calls(symbols, facts):
    """``(callee def, parameter levels)`` for each call of a same-module function not traced on its own."""
    calls = []
    for node in taint.walk_body(facts.node):
        if not isinstance(node, ast.Call):
            continue
        callee = facts.callee(node)
        if callee is None or symbols.decorator_mode(callee) == "converted":
            continue
        calls.append((callee, call_levels(facts, node, callee)))
    return calls
