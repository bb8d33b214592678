"""Behaviour corpus: general Python inside converted functions.

Closures and nonlocal, methods updating ``self`` in loops, list building
with append/pop, comprehensions, ``x[i] += v``, short-circuit logic with
side effects, ternaries, asserts, calls to other user functions (recursion
too), every parameter kind, generators consumed inside, try/except,
with-statements, strings and dicts.  Registered with their argument lists;
tests/test_convert_behaviour.py checks convert(f) == f on each.
"""

import contextlib
import functools
import math

from corpus_registry import LOG, call, check


def noisy(value, tag):
    """Logs a visit and returns ``value``: makes evaluation order visible."""
    LOG.append(tag)
    return value


@check((True, True), (True, False), (False, True), (False, False))
def and_short_circuit(a, b):
    return noisy(a, "a") and noisy(b, "b")


@check((0, 5), (3, 0), (0, 0), (2, 2))
def or_short_circuit(a, b):
    return noisy(a, "a") or noisy(b, "b")


@check(([1, 2],), ([],), ([0],))
def guarded_index(xs):
    if xs and xs[0] > 0:
        return "positive head"
    if not xs or xs[0] == 0:
        return "empty or zero head"
    return "other"


@check((1, 2, 3), (0, 0, 0), (0, 1, 0))
def mixed_logic_values(a, b, c):
    first = a and b or c
    second = not (a or b) and c
    third = (a or b) and not c
    return first, second, third


@check(3, -3, 0)
def ternary_chain(x):
    sign = "pos" if x > 0 else "neg" if x < 0 else "zero"
    return sign, (noisy(1, "then") if x else noisy(2, "else"))


@check(([1, 2, 3], 1), ([1, 2, 3], -1), ([], 0))
def ternary_guarded_access(xs, i):
    return xs[i] if 0 <= i < len(xs) else None


@check(4, 0, -2)
def assert_positive(n):
    assert n >= 0, f"n must be non-negative, got {n}"
    total = 0
    for i in range(n):
        assert i < n
        total += i
    return total


@check([1, 2, 3], [2, -1], [])
def assert_in_loop_without_message(xs):
    for x in xs:
        assert x > 0
    return sum(xs)


def square(x):
    return x * x


def add(a, b=10):
    return a + b


@check(3, 0, -2)
def calls_helpers(x):
    return add(square(x)), add(x, b=square(x))


@check(0, 1, 10)
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


@check(0, 1, 7, 15)
def fib_memo(n, memo=None):
    if memo is None:
        memo = {}
    if n < 2:
        return n
    if n in memo:
        return memo[n]
    value = fib_memo(n - 1, memo) + fib_memo(n - 2, memo)
    memo[n] = value
    return value


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


@check(0, 5, 8)
def mutual_recursion(n):
    return is_even(n), is_odd(n)


@check([1, [2, [3, 4]], 5], [], [[[]]])
def flatten(nested):
    out = []
    for item in nested:
        if isinstance(item, list):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out


@check((1,), (1, 2, 3), call(1, 2, scale=3), call(4, scale=0))
def star_args(first, *rest, scale=1):
    total = first
    for r in rest:
        total += r
    return total * scale


@check(call(a=1, b=2), call(), call(z=-1, a=5))
def star_kwargs(**options):
    keys = []
    for key in sorted(options):
        if options[key] < 0:
            continue
        keys.append(key)
    return keys


@check(call(3), call(3, 4), call(3, step=2), call(3, 4, 5, verbose=True))
def every_parameter_kind(n, m=2, *extra, step=1, verbose=False, **rest):
    out = []
    i = 0
    while i < n * m:
        out.append(i)
        i += step
    if verbose:
        print("extra", extra, "rest", rest)
    return out, extra, rest


@check(call(1, 2), call(1, 2, c=9), call(0, 0, c=0, d=1))
def keyword_only_defaults(a, b, *, c=3, d=None):
    result = a + b + c
    if d is not None:
        result *= d
    return result


def countdown_gen(n):
    while n > 0:
        yield n
        n -= 1


def pairs_gen(xs):
    for i in range(0, len(xs) - 1, 2):
        yield xs[i], xs[i + 1]


@check(4, 0)
def consume_generator(n):
    total = 0
    for v in countdown_gen(n):
        if v == 2:
            continue
        total += v
    return total, list(countdown_gen(n))


@check([1, 2, 3, 4, 5], [], [9, 8])
def consume_generator_with_break(xs):
    out = []
    for a, b in pairs_gen(xs):
        if a > 5:
            break
        out.append(a * b)
    return out


@check(5, 0)
def generator_expression_sum(n):
    return sum(i * i for i in range(n) if i % 2), max((i for i in range(n)), default=-1)


@check([3, 1, 2], [])
def comprehensions(xs):
    squares = [x * x for x in xs]
    index = {x: i for i, x in enumerate(xs)}
    unique = {x % 2 for x in xs}
    pairs = [(a, b) for a in xs for b in xs if a < b]
    return squares, index, unique, pairs


@check(3, 0)
def make_adders(n):
    adders = []
    for i in range(n):
        adders.append(lambda x, i=i: x + i)
    return [f(10) for f in adders]


@check(5, 0, 1)
def nested_function_closure(n):
    scale = 3

    def scaled(v):
        return v * scale

    out = []
    for i in range(n):
        out.append(scaled(i))
    return out


@check(4, 0)
def nonlocal_counter(n):
    count = 0

    def bump(by):
        nonlocal count
        count += by
        return count

    for i in range(n):
        if i % 2:
            bump(i)
    return count


def make_accumulator(start):
    total = start

    def accumulate(xs):
        nonlocal total
        for x in xs:
            if x is None:
                break
            total += x
        return total

    return accumulate


@check([1, 2, 3], [1, None, 5], [], factory=True)
def accumulator_closure():
    return make_accumulator(100)


def make_threshold_filter(threshold):
    def keep(xs):
        out = []
        for x in xs:
            if x > threshold or x == -threshold:
                out.append(x)
        return out

    return keep


@check([1, 5, -3, 10], [], factory=True)
def threshold_closure():
    return make_threshold_filter(3)


class Accumulator:
    def __init__(self):
        self.total = 0
        self.count = 0
        self.history = []

    def add_all(self, xs):
        for x in xs:
            if x < 0:
                continue
            self.total += x
            self.count += 1
            self.history.append(self.total)
        return self.mean()

    def mean(self):
        return self.total / self.count if self.count else 0.0


@check([1, 2, 3], [-1, 4], [], factory=True)
def bound_method():
    return Accumulator().add_all


@check([1, 2, 3], [-1, -2])
def uses_object(xs):
    acc = Accumulator()
    first = acc.add_all(xs)
    second = acc.add_all([10])
    return first, second, acc.history


class Matrix:
    def __init__(self, rows):
        self.rows = [list(r) for r in rows]

    def transpose(self):
        out = []
        for c in range(len(self.rows[0]) if self.rows else 0):
            col = []
            for r in self.rows:
                col.append(r[c])
            out.append(col)
        return Matrix(out)

    def __eq__(self, other):
        return isinstance(other, Matrix) and self.rows == other.rows


@check([[1, 2], [3, 4]], [[1, 2, 3]], [])
def matrix_method(rows):
    return Matrix(rows).transpose().rows


@check([1, 2, 3], [], [5])
def stack_push_pop(xs):
    stack = []
    out = []
    for x in xs:
        stack.append(x)
        stack.append(x * 10)
    while stack:
        out.append(stack.pop())
        if len(out) > 4:
            break
    return out, stack


@check("(a[b]{c})", "(]", "((", "")
def balanced_brackets(text):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack


@check(([0, 0, 0], [0, 2, 2, 1]), ([1], [0, 0]), ([], []))
def histogram_augassign(counts, indices):
    for i in indices:
        counts[i] += 1
    return counts


@check(({"a": 1, "b": 2}, "a"), ({}, "z"))
def dict_augassign(d, key):
    for _ in range(3):
        d[key] = d.get(key, 0)
        d[key] += 2
    return d


@check(("the cat and the hat",), ("",), ("a a a",))
def word_counts(text):
    counts = {}
    for word in text.split():
        if word in counts:
            counts[word] += 1
        else:
            counts[word] = 1
    return counts


@check({"x": 3, "y": -1, "z": 0}, {})
def dict_iteration(d):
    pos = []
    for key, value in d.items():
        if value > 0:
            pos.append(key.upper())
        elif value == 0:
            continue
        else:
            pos.append(key * 2)
    for key in d:
        LOG.append(key)
    return pos


@check("Hello World", "", "abc")
def string_ops(s):
    out = ""
    for ch in s:
        if ch.isupper():
            out += ch.lower()
        elif ch == " ":
            out += "_"
        else:
            out += ch.upper()
    return out, s[::-1], "-".join(s.split()), f"{len(s):03d}"


@check("racecar", "palindrome", "", "ab")
def is_palindrome(s):
    i, j = 0, len(s) - 1
    while i < j:
        if s[i] != s[j]:
            return False
        i += 1
        j -= 1
    return True


@check(("1,2,x,4",), ("",), ("7",))
def parse_ints(text):
    values = []
    errors = 0
    for part in text.split(","):
        try:
            values.append(int(part))
        except ValueError:
            errors += 1
    return values, errors


@check(([1, 2, 0, 4],), ([0],), ([],))
def try_finally_in_loop(xs):
    out = []
    for x in xs:
        try:
            out.append(12 // x)
        except ZeroDivisionError as e:
            out.append(str(e))
            break
        finally:
            LOG.append(x)
    return out


class Recorder:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        LOG.append("enter " + self.name)
        return self

    def __exit__(self, exc_type, exc, tb):
        LOG.append("exit " + self.name + (" with " + exc_type.__name__ if exc_type else ""))
        return exc_type is KeyError


@check(3, 0)
def with_statement_in_loop(n):
    for i in range(n):
        with Recorder(str(i)) as rec:
            if i == 1:
                continue
            LOG.append(rec.name)
    return n


@check(({"a": 1}, "a"), ({"a": 1}, "b"))
def with_suppresses_error(d, key):
    value = -1
    with Recorder("lookup"):
        value = d[key]
    return value


@check(2, 5)
def with_contextlib_suppress(n):
    results = []
    for i in range(n):
        with contextlib.suppress(ZeroDivisionError):
            results.append(10 // (i - 2))
    return results


@check(0, 3)
def raise_custom_error(n):
    class TooSmall(Exception):
        pass

    try:
        if n < 1:
            raise TooSmall("need at least 1, got %d" % n)
        return n
    except TooSmall as e:
        return "caught: " + str(e)


@check(([1, 2, 3],), ([],))
def uncaught_key_error(xs):
    table = {x: x * x for x in xs}
    total = 0
    for k in range(1, 4):
        total += table[k]
    return total


@check(2, 0)
def lambda_and_sorted(n):
    words = ["pear", "fig", "banana", "kiwi"]
    by_len = sorted(words, key=lambda w: (len(w), w))
    return by_len[:n], list(map(lambda w: w[0], words))


@check(3, 0)
def print_formatting(n):
    for i in range(n):
        print(f"{i}:", "*" * i, sep="", end="|")
    print()
    return n


@check(([3, 1, 2],), ([],))
def builtins_mix(xs):
    return (
        len(xs),
        sorted(xs, reverse=True),
        list(zip(xs, range(len(xs)))),
        any(x > 2 for x in xs),
        all(x > 0 for x in xs),
        min(xs, default=None),
        list(reversed(xs)),
    )


@check((5, 3), (2, 7))
def swap_and_tuple_unpack(a, b):
    if a > b:
        a, b = b, a
    (lo, hi), mid = (a, b), (a + b) / 2
    return lo, mid, hi


@check(([1, 2, 3, 4],), ([],))
def slicing_and_star(xs):
    if len(xs) >= 2:
        first, *middle, last = xs
    else:
        first, middle, last = None, [], None
    return first, middle, last, xs[1:3], xs[::2]


@check(4, 0)
def chained_comparison(n):
    inside = []
    for i in range(-2, n + 2):
        if 0 <= i < n and not i == 2:
            inside.append(i)
    return inside


@check(([1, 2], [3]), ([], []))
def walrus_in_loop(a, b):
    merged = a + b
    out = []
    i = 0
    while (n := len(merged)) > i:
        out.append(merged[i] * n)
        i += 1
    return out


@check(5, 12)
def math_module_calls(n):
    return [round(math.sqrt(i), 6) for i in range(n)], math.gcd(n, 8), math.floor(n / 7)


@check(([1, 2, 3],), ([],))
def pop_front_queue(xs):
    queue = list(xs)
    order = []
    while queue:
        item = queue.pop(0)
        order.append(item)
        if item == 2:
            queue.append(20)
    return order


@check([3, 2, 1], [1])
def mutate_argument_list(xs):
    xs.append(len(xs))
    xs[0] += 100
    del xs[1]
    xs.sort()


@check(([1, 2, 3], 2), ([], 1))
def while_pop_until(xs, stop):
    popped = []
    while xs:
        v = xs.pop()
        if v == stop:
            break
        popped.append(v)
    return popped


@check(1, 4)
def conditional_function_definition(n):
    if n > 2:
        def pick(x):
            return x * 2
    else:
        def pick(x):
            return -x
    return [pick(i) for i in range(n)]


@check(3, 0)
def nested_closures_two_levels(n):
    base = 10

    def outer(k):
        def inner(j):
            return base + k * j

        return [inner(j) for j in range(k)]

    results = []
    for i in range(n):
        results.append(outer(i))
    return results


@check(([5, 1, 4],), ([],))
def global_read_only(xs):
    return [x for x in xs if x > THRESHOLD], THRESHOLD


THRESHOLD = 2


@check(4, 1)
def integer_and_float_division(n):
    out = []
    for i in range(1, n + 1):
        out.append((n // i, n % i, n / i, -n // i, divmod(-n, i)))
    return out


@check(0, 2)
def raise_from_nested_call(n):
    def check_nonzero(v):
        if v == 0:
            raise ZeroDivisionError("v is zero")
        return 1 / v

    results = []
    for i in range(n, -1, -1):
        results.append(check_nonzero(i))
    return results


@check(3, 0)
def del_statement(n):
    data = {"a": 1, "b": 2, "c": 3}
    keys = sorted(data)
    for k in keys[:n]:
        del data[k]
    tmp = n
    del tmp
    return data


@check(([1, 2, 3], [4, 5, 6]), ([], []))
def zip_dot_product(a, b):
    acc = 0
    for x, y in zip(a, b):
        acc += x * y
    return acc


@check("hello", "")
def string_builder_with_join(s):
    parts = []
    for i, ch in enumerate(s):
        parts.append(ch * (i + 1))
    return "-".join(parts).title()


@check(([[3, 1], [2, 5]],), ([],))
def matrix_in_place_augassign(m):
    for i in range(len(m)):
        for j in range(len(m[i])):
            m[i][j] *= 2
            m[i][j] -= i
    return m


def logged(fn):
    """A user decorator (functools.wraps) that records each call."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        LOG.append(fn.__name__)
        return fn(*args, **kwargs)

    return wrapper


@check(5, 0)
@logged
def decorated_by_user(n):
    total = 0
    for i in range(n):
        if i % 2:
            total += i
    return total


class Scaler:
    scale = 3

    @classmethod
    def scale_all(cls, xs):
        out = []
        for x in xs:
            out.append(x * cls.scale)
        return out

    @staticmethod
    def first_negative(xs):
        for x in xs:
            if x < 0:
                return x
        return None


@check([1, 2], [])
def calls_class_and_static_methods(xs):
    return Scaler.scale_all(xs), Scaler.first_negative(xs + [-1])
