"""Behaviour corpus: syntax variety inside converted control flow.

``match`` statements, annotated assignments, user names that look like the
generated ones (``break_``, ``retval_``, ``loop_body``...), chained and
starred assignments, every augmented operator on subscripts (lists and 2-d
numpy arrays), lazy assert messages, try/except/else in while/else,
exception chaining, f-strings, walrus, identity and membership tests.
Registered with their argument lists; tests/test_convert_behaviour.py checks
convert(f) == f on each.
"""

import numpy as np

from corpus_registry import LOG, call, check


@check(
    [("add", 2), ("mul", 3), "reset", ("add", 1), "stop", ("add", 5)],
    [("mul", 4)],
    [],
)
def match_commands_in_loop(commands):
    x = 0
    for command in commands:
        match command:
            case ("add", n):
                x += n
            case ("mul", n):
                x *= n
            case "reset":
                x = 0
            case _:
                break
    return x


@check({"kind": "circle", "r": 2}, {"kind": "square", "side": 3}, {"kind": "blob"})
def match_mapping_with_return(shape):
    match shape:
        case {"kind": "circle", "r": r}:
            area = 3 * r * r
        case {"kind": "square", "side": s}:
            area = s * s
        case _:
            return None
    return area


@check(3, 0)
def annotated_assignments(n):
    total: int = 0
    for i in range(n):
        step: int = i * 2
        total += step
    return total


@check(4, 1)
def user_names_like_generated_ones(n):
    break_ = 0
    do_return = []
    retval_ = "mine"
    get_state = 5
    for i in range(n):
        if i == 2:
            break
        break_ += 1
        do_return.append(get_state)
    return break_, do_return, retval_


@check([1, 2], [])
def user_function_named_loop_body(xs):
    def loop_body(v):
        return v * 2

    def if_body(v):
        return -v

    out = []
    for x in xs:
        out.append(loop_body(x) if x > 1 else if_body(x))
    return out


@check(4, 0)
def chained_assignment(n):
    a = b = 0
    for i in range(n):
        a = b = a + i
    return a, b


@check([5, 8], [])
def every_augmented_operator(xs):
    for i in range(len(xs)):
        xs[i] //= 2
        xs[i] **= 2
        xs[i] |= 1
        xs[i] -= 3
        xs[i] %= 7
        xs[i] <<= 1
    return xs


@check(np.arange(6).reshape(2, 3), np.zeros((1, 1), dtype=np.int64))
def numpy_2d_augassign(m):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if (i + j) % 2:
                m[i, j] += 10
    m[1:] *= 2
    return m


@check([1, 2], [1, -1, -2])
def lazy_assert_message(xs):
    for x in xs:
        assert x >= 0, LOG.append(f"bad {x}")
    return len(LOG)


@check(3, 0)
def try_except_else_in_while_else(n):
    i = 0
    out = []
    while i < n:
        i += 1
        try:
            if i == 2:
                raise RuntimeError("two")
        except RuntimeError as err:
            out.append(str(err))
        else:
            out.append(i)
    else:
        out.append("done")
    return out


@check(["1", "x"], ["7"])
def raise_from_in_loop(texts):
    values = []
    for t in texts:
        try:
            values.append(int(t))
        except ValueError as e:
            raise KeyError(t) from e
    return values


@check([[1, 2], [3, 4]], [])
def zip_star_columns(matrix):
    cols = []
    for col in zip(*matrix):
        cols.append(sum(col))
    return cols


@check([1, 2], [])
def print_with_star_and_keywords(xs):
    for i in range(2):
        print(*xs, i, sep=",", end=";\n")


@check([1, 2, -1, 3], [], [4])
def while_walrus_break(xs):
    i = 0
    while (v := xs[i] if i < len(xs) else None) is not None:
        if v < 0:
            break
        i += 1
    return i


@check([0, 7, -1.5], [])
def fstrings_with_nested_quotes(xs):
    out = []
    for x in xs:
        out.append(f"{x!r:>5}|{'yes' if x else 'no'}|{x:{'>'}6}")
    return out


@check([1, 2, 3], [])
def nonlocal_function_defined_in_loop(xs):
    total = 0
    for x in xs:
        def add():
            nonlocal total
            total += x

        add()
    return total


@check([[1, 2, 3], [4]], [])
def starred_assignment_in_loop(rows):
    heads = []
    for row in rows:
        head, *tail = row
        heads.append((head, len(tail)))
    return heads


@check([1, 2, 3, 4], [])
def continue_in_while_true(xs):
    i = -1
    out = []
    while True:
        i += 1
        if i >= len(xs):
            break
        if xs[i] % 2:
            continue
        out.append(xs[i])
    return out


@check([None, False, True, 1, "s"], [])
def identity_checks(xs):
    out = []
    for x in xs:
        if x is None:
            out.append("none")
        elif x is not True and isinstance(x, bool):
            out.append("false")
        else:
            out.append(type(x).__name__)
    return out


@check(([1, 2, 2, 3], [2, 3]), ([], [1]))
def membership_checks(xs, ys):
    both = []
    for x in xs:
        if x in ys and x not in both:
            both.append(x)
    return both


@check(5, 2)
def method_updates_subscript_of_attribute(n):
    class Buffer:
        def __init__(self):
            self.data = [0] * 3

        def fill(self, k):
            for i in range(k):
                self.data[i % 3] += i
            return self.data

    return Buffer().fill(n)


@check(call(3, sep="-"), call(0), call(2, sep=""))
def keyword_only_join(n, *, sep=","):
    parts = []
    i = 0
    while i < n:
        parts.append(str(i))
        i += 1
    return sep.join(parts) or None
