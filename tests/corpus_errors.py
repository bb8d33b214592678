"""Functions that autograph must refuse or report on, for the error-path tests.

Each unsupported construct sits on a line tagged with a ``# <- tag``
comment, so the tests can find the line the error message must point at
without hard-coding line numbers.
"""

import inspect

COUNTER = 0


def uses_yield(n):
    i = 0
    while i < n:
        yield i  # <- yield
        i += 1


def uses_yield_from(xs):
    for x in xs:
        if x:
            yield from range(x)  # <- yield_from


async def is_async(n):  # <- async_def
    total = 0
    for i in range(n):
        total += i
    return total


def rebinds_global(n):
    global COUNTER  # <- global
    for _ in range(n):
        COUNTER += 1
    return COUNTER


def maybe_defined(flag):
    if flag:
        result_value = 1
    return result_value  # <- undefined_after_if


def defined_in_loop(n):
    for i in range(n):
        last_item = i * 2
    return last_item  # <- undefined_after_loop


def defined_in_while(n):
    while n > 0:
        n -= 1
        remainder_seen = n % 3
    return remainder_seen  # <- undefined_after_while


def undefined_copied(n):
    for i in range(n):
        last_seen = i
    snapshot = last_seen  # <- undefined_copied
    return [snapshot]


def undefined_appended(flag):
    out = []
    if flag:
        pending_item = 1
    out.append(pending_item)  # <- undefined_appended
    return out


scale_factor = 100


def local_read_before_assignment(xs):
    # scale_factor is local here (assigned below), so Python raises
    # UnboundLocalError; it must not silently read the global of that name.
    if xs:
        xs[0] += scale_factor  # <- read_before_assignment
    if not xs:
        scale_factor = 0
    return xs


def tagged_line(fn, tag):
    """The file and line number of the ``# <- tag`` comment in ``fn``."""
    lines, start = inspect.getsourcelines(fn)
    for offset, text in enumerate(lines):
        if text.rstrip().endswith("# <- " + tag):
            return inspect.getsourcefile(fn), start + offset
    raise LookupError(f"no line tagged {tag!r} in {fn.__name__}")
