"""Static analyses, tested from a code string to a textual dump of their annotations."""

import textwrap

import gast

from autograph.pyct import anno, qual_names
from autograph.pyct.static_analysis import activity, liveness, reaching_definitions


def _parse(source):
    return gast.parse(textwrap.dedent(source)).body[0]


def _analyzed(source):
    node = _parse(source)
    activity.analyze(node)
    liveness.analyze(node)
    reaching_definitions.analyze(node)
    return node


def _fmt(names):
    return "{" + ", ".join(sorted(names)) + "}"


def dump(source, keys):
    """One line per compound statement: `line Kind key={...} ...`."""
    node = _analyzed(source)
    lines = []
    for child in gast.walk(node):
        if type(child) in (gast.If, gast.While, gast.For, gast.Try, gast.With):
            parts = [f"{child.lineno} {type(child).__name__}"]
            for key in keys:
                parts.append(f"{key}={_fmt(anno.get(child, key))}")
            lines.append(" ".join(parts))
    return "\n".join(sorted(lines, key=lambda l: int(l.split()[0])))


def test_qualified_names():
    node = _parse(
        """
        def f(self, a, i):
            self.total.count = a[i] + a[0] + a[i + 1] + g().x
        """
    )
    qns = sorted({qual_names.qn_of(n) for n in gast.walk(node)} - {None})
    assert qns == ["a", "a[0]", "a[i]", "g", "i", "self", "self.total", "self.total.count"]
    assert qual_names.root("self.total.count") == "self"
    assert qual_names.root("a[i]") == "a"
    assert qual_names.is_composite("a.b") and not qual_names.is_composite("a")


def test_scope_symbols():
    node = _analyzed(
        """
        def f(x, *args, k=1, **kw):
            nonlocal outer
            y = 0
            g = lambda: y + z
            for i in range(x):
                pass
            return [q for q in args]
        """
    )
    scope = anno.get(node, anno.SCOPE)
    assert scope.params == ["x", "args", "k", "kw"]
    assert repr(scope) == (
        "Scope(params=['x', 'args', 'k', 'kw'], locals={args, g, i, k, kw, x, y}, globals={}, "
        "nonlocals={outer}, captured={y}, free={outer, range, z})"
    )


def test_modified_symbols_per_block():
    text = dump(
        """
        def f(self, xs):
            total = 0
            for x in xs:
                if x > 0:
                    total += x
                    self.count = 1
                else:
                    y = -x
            return total
        """,
        [anno.MODIFIED],
    )
    assert text == (
        "4 For modified={self.count, total, x, y}\n"
        "5 If modified={self.count, total, y}"
    )


def test_liveness_if_only_live_variables():
    text = dump(
        """
        def f(x):
            if x > 0:
                y = x
                tmp = 2
            else:
                y = -x
                tmp = 3
            return y
        """,
        [anno.LIVE_IN, anno.LIVE_OUT, anno.BODY_LIVE_IN],
    )
    assert text == "3 If live_in={x} live_out={y} body_live_in={x}"


def test_liveness_loop_carried_and_test_reads():
    text = dump(
        """
        def f(n):
            i = 0
            s = 0
            while i < n:
                t = i * 2
                s += t
                i += 1
            return s
        """,
        [anno.LIVE_IN, anno.LIVE_OUT, anno.BODY_LIVE_IN],
    )
    assert text == "5 While live_in={i, n, s} live_out={s} body_live_in={i, n, s}"


def test_liveness_for_target_not_live_after():
    text = dump(
        """
        def f(xs):
            s = 0
            for x in xs:
                s += x
            return s
        """,
        [anno.LIVE_IN, anno.LIVE_OUT],
    )
    assert text == "4 For live_in={s, xs} live_out={s}"


def test_liveness_captured_names_are_always_live():
    text = dump(
        """
        def f(c):
            g = lambda: y
            if c:
                y = 1
            else:
                y = 2
            return g
        """,
        [anno.LIVE_OUT],
    )
    assert text == "4 If live_out={g, y}"


def test_liveness_try_handler_reads_are_live_in_the_body():
    text = dump(
        """
        def f(c):
            x = 0
            try:
                if c:
                    x = 1
                x = 2
                risky()
            except ValueError:
                return x
            return 0
        """,
        [anno.LIVE_OUT],
    )
    # Any statement of the body may raise, so x stays live across `x = 2`.
    assert text == "4 Try live_out={}\n5 If live_out={ValueError, risky, x}"


def test_reaching_definitions_may_be_defined():
    text = dump(
        """
        def f(a, c):
            if c:
                x = 1
            if a:
                y = x
            while a:
                z = 1
            for i in range(3):
                w = z
            return x
        """,
        [anno.DEFINED_IN],
    )
    assert text == (
        "3 If defined_in={a, c}\n"
        "5 If defined_in={a, c, x}\n"
        "7 While defined_in={a, c, x, y}\n"
        "9 For defined_in={a, c, x, y, z}"
    )


def test_reaching_definitions_must_be_defined_at_return():
    node = _analyzed(
        """
        def f(c):
            if c:
                x = 1
                y = 1
            else:
                y = 2
            return x, y
        """
    )
    ret = node.body[-1]
    assert sorted(anno.get(ret, anno.MUST_DEFINED)) == ["c", "y"]


def test_reaching_definitions_stop_at_raise():
    text = dump(
        """
        def f(c):
            if c:
                x = 1
                raise ValueError
            while c:
                x = 2
            return x
        """,
        [anno.DEFINED_IN],
    )
    assert text == "3 If defined_in={c}\n6 While defined_in={c}"
