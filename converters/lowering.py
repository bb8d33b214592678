"""Shared machinery of the jump converters (``break``, ``continue``, ``return``).

Not a pass.  ``Lowering.block(statements)`` rewrites a block so that no
jump of one kind is left in it.  A jump becomes an assignment (the flag,
and for ``return`` the value); the code that followed it must then not run:

* if one branch of an ``if`` always jumps and the other does not, the rest
  of the block moves into the other branch (no flag needed for it)::

      if x < 0:                 if x < 0:
          return -1                 retval_ = -1
      y = x * 2         ->      else:
                                    y = x * 2

* otherwise the rest is guarded by the flag: ``if not flag: rest``.

Code right after a jump (dead code) is kept, guarded the same way: it never
runs, but the names it assigns stay local variables, as in the original.

Flag assignments that nothing ends up reading are removed afterwards
(``finish``), so a ``continue`` that only needed the first form leaves no
trace.
"""

from __future__ import annotations

import gast

from autograph.pyct import anno, ast_util, templates

NEVER, MAYBE, ALWAYS = 0, 1, 2

# What a jump lowering may add to a function: flags, guards (``if not flag:``) and
# extra loop tests (``not flag``, joined with ``and``).
EMITTED = frozenset({gast.Assign, gast.Name, gast.Constant, gast.If, gast.UnaryOp, gast.BoolOp, "not"})


def emitted(ctx) -> None:
    """Records in ``ctx.kinds`` what a jump lowering added (later passes then do not skip it)."""
    if ctx.kinds is not None:
        ctx.kinds |= EMITTED


def _combine(a, b):
    return a if a == b else MAYBE


class Lowering:
    """Lowers jumps of type ``jump_type`` using the flag variable ``flag``.

    ``replace(node)`` gives the statements a jump becomes (its flag
    assignment included: mark it with ``flag_assignment``); ``lower_loop``
    (``return`` only) makes a loop stop once the flag is set.
    """

    stop_at_loops = True

    def __init__(self, jump_type, flag):
        self.jump_type = jump_type
        self.flag = flag
        self.flag_used = False
        self.touched_ifs = []
        self._contains = {}

    # -- to override ----------------------------------------------------------

    def replace(self, node) -> list:
        raise NotImplementedError

    def lower_loop(self, loop):
        raise NotImplementedError

    def loop_status(self, loop) -> int:
        """Whether a loop containing a jump of ours always jumps (before ``lower_loop`` changes it)."""
        return MAYBE

    # -- helpers --------------------------------------------------------------

    def flag_assignment(self, origin):
        (statement,) = templates.replace("flag = True", origin=origin, flag=self.flag)
        anno.set(statement, anno.GENERATED, self.flag)
        return statement

    def flag_test(self):
        """``not flag``; marks the flag as needed."""
        self.flag_used = True
        return ast_util.negate(templates.name(self.flag))

    def contains(self, node) -> bool:
        """True if a jump of our kind inside ``node`` leaves ``node``."""
        key = id(node)
        found = self._contains.get(key)
        if found is None:
            found = self._contains[key] = self._search(node)
        return found

    def _search(self, node) -> bool:
        kind = type(node)
        if kind is self.jump_type:
            return True
        if kind in ast_util.SCOPES:
            return False
        if self.stop_at_loops and kind in ast_util.LOOPS:
            return any(self.contains(s) for s in node.orelse)
        for owner, field in ast_util.child_blocks(node):
            for statement in getattr(owner, field):
                if self.contains(statement):
                    return True
        return False

    def status(self, statements) -> int:
        result = NEVER
        for statement in statements:
            current = self._statement_status(statement)
            if current == ALWAYS:
                return ALWAYS
            if current == MAYBE:
                result = MAYBE
        return result

    def _statement_status(self, node) -> int:
        kind = type(node)
        if kind is self.jump_type:
            return ALWAYS
        if not self.contains(node):
            return NEVER
        if kind is gast.If:
            return _combine(self.status(node.body), self.status(node.orelse))
        if kind in ast_util.LOOPS:
            return self.loop_status(node)
        return MAYBE

    # -- the lowering ---------------------------------------------------------

    def block(self, statements):
        """Returns ``(new_statements, status)``: status is NEVER/MAYBE/ALWAYS jumps."""
        out = []
        for index, node in enumerate(statements):
            kind = type(node)
            if kind is self.jump_type:
                out.extend(self.replace(node))
                out.extend(self._dead(statements[index + 1:]))
                return out, ALWAYS
            if not self.contains(node):
                out.append(node)
                continue
            rest = statements[index + 1:]
            if kind is gast.If:
                body_status, orelse_status = self.status(node.body), self.status(node.orelse)
                if rest and body_status == ALWAYS and orelse_status != ALWAYS:
                    node.orelse = node.orelse + rest
                    rest = []
                elif rest and orelse_status == ALWAYS and body_status != ALWAYS:
                    node.body = node.body + rest
                    rest = []
                node.body, body_status = self.block(node.body)
                node.orelse, orelse_status = self.block(node.orelse)
                status = _combine(body_status, orelse_status)
                self.touched_ifs.append(node)
            elif kind in ast_util.LOOPS:
                status = self.loop_status(node)
                node.body, _ = self.block(node.body)
                self.lower_loop(node)
            else:
                status = NEVER
                for owner, field in ast_util.child_blocks(node):
                    lowered, inner = self.block(getattr(owner, field))
                    setattr(owner, field, lowered)
                    status = max(status, inner)
                status = MAYBE if status else NEVER
            out.append(node)
            if status == ALWAYS:
                out.extend(self._dead(rest))
                return out, ALWAYS
            if rest:
                lowered_rest, _ = self.block(rest)
                out.extend(self.guard(lowered_rest, rest[0]))
                return out, MAYBE
            return out, status
        return out, NEVER

    def _dead(self, statements):
        """Code after a jump never runs, but its names stay local: keep it, guarded."""
        if not statements:
            return []
        lowered, _ = self.block(statements)
        return self.guard(lowered, statements[0])

    def guard(self, statements, origin):
        if not statements:
            return []
        return templates.replace(
            """
            if test:
                body
            """,
            origin=origin,
            test=self.flag_test(),
            body=statements,
        )

    def finish(self, function):
        """Removes unread flag assignments, then tidies ``if c: pass else: x``."""
        if not self.flag_used:
            flag = self.flag

            def drop(statements):
                kept = [s for s in statements if anno.get(s, anno.GENERATED, None) != flag]
                if statements and not kept:
                    kept = [gast.Pass()]
                    gast.copy_location(kept[0], statements[0])
                return kept

            ast_util.transform_blocks(function, drop, into_functions=False)
        for node in self.touched_ifs:
            body_is_empty = all(type(s) is gast.Pass for s in node.body)
            if body_is_empty and node.orelse and not all(type(s) is gast.Pass for s in node.orelse):
                node.test = ast_util.negate_condition(node.test)
                node.body, node.orelse = node.orelse, []
