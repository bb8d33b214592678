"""Benchmark: how fast autograph converts, and how fast converted code runs.

Usage: ``python benchmarks/conversion.py [--repeat N]``

Over a corpus of 24 ordinary functions of 5-60 lines (defined below, so
their source is real: integer and list loops, string processing, a small
tokenizer/evaluator, a queue simulation, and three numpy routines), prints
for each function:

* the time ``ag.convert`` takes on a cold cache (load the source, analyse,
  run the pipeline, compile, bind; best of ``--repeat`` runs, since the
  machine may be shared and the minimum is the stable figure), and its
  ratio to ``ast.parse`` + ``compile`` of the same source -- the floor: no
  converter can be faster than parsing and compiling what it reads;
* the run time of the converted function on Python values as a ratio to
  the original's (both on the same arguments, best of several runs):
  ``run x orig`` for ``ag.convert(f)`` as users call it (outside a trace it
  runs the original: nothing there can be symbolic), and ``code x orig``
  for the converted code itself (``always_converted=True``: what runs
  while a trace is active, say a Python loop unrolling into a graph).

and the medians over the corpus.  Not part of the test run.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import statistics
import sys
import textwrap
import time

import numpy as np

import autograph as ag
from autograph import api


# -- the corpus -------------------------------------------------------------------


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def gcd(a, b):
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a


def fizzbuzz_count(n):
    fizz = buzz = both = 0
    for i in range(1, n + 1):
        if i % 15 == 0:
            both += 1
        elif i % 3 == 0:
            fizz += 1
        elif i % 5 == 0:
            buzz += 1
    return fizz, buzz, both


def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def primes_below(n):
    primes = []
    for candidate in range(2, n):
        d = 2
        while d * d <= candidate:
            if candidate % d == 0:
                break
            d += 1
        else:
            primes.append(candidate)
    return primes


def bubble_sort(values):
    xs = list(values)
    n = len(xs)
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]
                swapped = True
        if not swapped:
            break
    return xs


def binary_search(xs, target):
    lo, hi = 0, len(xs) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if xs[mid] == target:
            return mid
        elif xs[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def newton_sqrt(x, tolerance=1e-12):
    if x < 0:
        raise ValueError("negative input")
    if x == 0:
        return 0.0
    guess = x if x > 1 else 1.0
    for _ in range(100):
        better = 0.5 * (guess + x / guess)
        if abs(better - guess) < tolerance:
            return better
        guess = better
    return guess


def running_stats(xs):
    n = 0
    mean = 0.0
    m2 = 0.0
    for x in xs:
        n += 1
        delta = x - mean
        mean += delta / n
        m2 += delta * (x - mean)
    variance = m2 / (n - 1) if n > 1 else 0.0
    return mean, variance


def histogram(values, bins, low, high):
    counts = [0] * bins
    width = (high - low) / bins
    for v in values:
        if v < low or v >= high:
            continue
        index = int((v - low) / width)
        counts[index] += 1
    return counts


def matmul(a, b):
    rows, inner, cols = len(a), len(b), len(b[0])
    out = []
    for i in range(rows):
        row = []
        for j in range(cols):
            total = 0
            for k in range(inner):
                total += a[i][k] * b[k][j]
            row.append(total)
        out.append(row)
    return out


def word_counts(text):
    counts = {}
    for word in text.split():
        word = word.strip(".,;:!?").lower()
        if not word:
            continue
        if word in counts:
            counts[word] += 1
        else:
            counts[word] = 1
    return counts


def longest_run(xs):
    best = 0
    current = 0
    previous = None
    for x in xs:
        if x == previous:
            current += 1
        else:
            current = 1
        if current > best:
            best = current
        previous = x
    return best


def two_sum(xs, target):
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[i] + xs[j] == target:
                return i, j
    return None


def max_subarray(xs):
    best = current = xs[0]
    for x in xs[1:]:
        current = max(x, current + x)
        best = max(best, current)
    return best


def caesar(text, shift):
    out = []
    for ch in text:
        if "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 + shift) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 + shift) % 26 + 65))
        else:
            out.append(ch)
    return "".join(out)


def pascal_row(n):
    row = [1]
    for _ in range(n):
        nxt = [1]
        for i in range(len(row) - 1):
            nxt.append(row[i] + row[i + 1])
        nxt.append(1)
        row = nxt
    return row


def moving_average(xs, k):
    if k <= 0 or k > len(xs):
        return []
    window = sum(xs[:k])
    out = [window / k]
    for i in range(k, len(xs)):
        window += xs[i] - xs[i - k]
        out.append(window / k)
    return out


def digit_root(n):
    while n >= 10:
        total = 0
        while n > 0:
            total += n % 10
            n //= 10
        n = total
    return n


def tokenize_and_eval(expression):
    tokens = []
    number = ""
    for ch in expression:
        if ch.isdigit():
            number += ch
            continue
        if number:
            tokens.append(int(number))
            number = ""
        if ch in "+-*":
            tokens.append(ch)
        elif ch == " ":
            continue
        else:
            raise ValueError(f"bad character {ch!r}")
    if number:
        tokens.append(int(number))
    # Evaluate with precedence: first *, then + and -.
    reduced = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "*":
            left = reduced.pop()
            reduced.append(left * tokens[i + 1])
            i += 2
            continue
        reduced.append(token)
        i += 1
    result = reduced[0] if reduced else 0
    i = 1
    while i < len(reduced):
        op, value = reduced[i], reduced[i + 1]
        if op == "+":
            result += value
        elif op == "-":
            result -= value
        i += 2
    return result


def simulate_queue(arrivals, service_time, capacity):
    queue = []
    served = 0
    dropped = 0
    busy_until = 0
    waits = []
    for t, count in enumerate(arrivals):
        while queue and busy_until <= t:
            start = max(busy_until, queue[0])
            waits.append(start - queue.pop(0))
            busy_until = start + service_time
            served += 1
        for _ in range(count):
            if len(queue) >= capacity:
                dropped += 1
                continue
            queue.append(t)
        if not queue:
            continue
        if busy_until <= t:
            start = queue.pop(0)
            waits.append(t - start)
            busy_until = t + service_time
            served += 1
    while queue:
        start = max(busy_until, queue[0])
        waits.append(start - queue.pop(0))
        busy_until = start + service_time
        served += 1
    mean_wait = sum(waits) / len(waits) if waits else 0.0
    longest = 0
    for w in waits:
        if w > longest:
            longest = w
    summary = {"served": served, "dropped": dropped, "mean_wait": mean_wait, "longest_wait": longest}
    if dropped and served:
        summary["drop_rate"] = dropped / (served + dropped)
    elif dropped:
        summary["drop_rate"] = 1.0
    else:
        summary["drop_rate"] = 0.0
    if mean_wait > service_time * 2:
        summary["status"] = "overloaded"
    elif mean_wait > service_time:
        summary["status"] = "busy"
    else:
        summary["status"] = "ok"
    return summary


def power_iteration(matrix, steps):
    v = np.ones(matrix.shape[0]) / np.sqrt(matrix.shape[0])
    eigenvalue = 0.0
    for _ in range(steps):
        w = matrix @ v
        norm = np.linalg.norm(w)
        if norm == 0:
            break
        v = w / norm
        eigenvalue = float(v @ matrix @ v)
    return eigenvalue


def gradient_descent(x, y, rate, epochs):
    w = np.zeros(x.shape[1])
    losses = []
    for epoch in range(epochs):
        error = x @ w - y
        loss = float(np.mean(error ** 2))
        losses.append(loss)
        if loss < 1e-6:
            break
        w -= rate * 2 * x.T @ error / len(y)
    return w, losses[-1]


def normalize_rows(m):
    out = np.empty_like(m)
    for i in range(m.shape[0]):
        row = m[i]
        total = row.sum()
        if total == 0:
            out[i] = row
        else:
            out[i] = row / total
    return out


CORPUS = [
    (collatz, (97,)),
    (gcd, (1071, 462)),
    (fizzbuzz_count, (100,)),
    (is_prime, (7919,)),
    (primes_below, (200,)),
    (bubble_sort, ([5, 3, 8, 1, 9, 2, 7, 4, 6, 0],)),
    (binary_search, (list(range(0, 200, 2)), 138)),
    (newton_sqrt, (2.0,)),
    (running_stats, ([1.0, 2.5, 3.5, 4.0, 7.5, 1.5] * 10,)),
    (histogram, ([0.1 * i for i in range(100)], 5, 0.0, 10.0)),
    (matmul, ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[9, 8, 7], [6, 5, 4], [3, 2, 1]])),
    (word_counts, ("the cat and the hat, and the bat! " * 5,)),
    (longest_run, ([1, 1, 2, 2, 2, 3, 3, 3, 3, 1] * 5,)),
    (two_sum, (list(range(30)), 55)),
    (max_subarray, ([2, -3, 4, -1, 2, 1, -5, 4] * 5,)),
    (caesar, ("Hello, World! autograph" * 3, 3)),
    (pascal_row, (15,)),
    (moving_average, ([float(i % 7) for i in range(60)], 5)),
    (digit_root, (987654321987,)),
    (tokenize_and_eval, ("12 + 3 * 4 - 5 * 2 + 100",)),
    (simulate_queue, ([2, 0, 3, 1, 0, 0, 4, 1, 0, 2], 2, 4)),
    (power_iteration, (np.array([[2.0, 1.0], [1.0, 3.0]]), 20)),
    (gradient_descent, (np.arange(12.0).reshape(6, 2) / 10, np.arange(6.0) / 5, 0.1, 30)),
    (normalize_rows, (np.array([[1.0, 3.0], [0.0, 0.0], [2.0, 2.0]]),)),
]


# -- measurement -------------------------------------------------------------------


def _best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def conversion_time(function, repeat):
    def convert():
        api.clear_cache()
        ag.convert(function)

    return _best_of(convert, repeat)[0]


def floor_time(function, repeat):
    source = textwrap.dedent(inspect.getsource(function))
    filename = function.__code__.co_filename

    def parse_and_compile():
        compile(ast.parse(source), filename, "exec")

    return _best_of(parse_and_compile, repeat)[0]


def run_time(function, args, repeat):
    def once():
        function(*args)

    # Calibrate the loop count so one measurement takes ~2 ms.
    start = time.perf_counter()
    once()
    single = max(time.perf_counter() - start, 1e-7)
    loops = max(1, int(0.002 / single))

    def many():
        for _ in range(loops):
            once()

    return _best_of(many, repeat)[0] / loops


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="measurements per figure (default 21)")
    args = parser.parse_args(argv)
    rows = []
    header = (
        f"{'function':<20} {'lines':>5} {'convert ms':>10} {'x floor':>8} {'run x orig':>10} {'code x orig':>11}"
    )
    print(header)
    print("-" * len(header))
    for function, call_args in CORPUS:
        lines = len(inspect.getsource(function).splitlines())
        converted = ag.convert(function)
        code = ag.convert(function, always_converted=True)
        expected = function(*call_args)
        for which, got in (("converted", converted(*call_args)), ("converted code", code(*call_args))):
            if repr(got) != repr(expected):
                raise AssertionError(f"{function.__name__}: {which} returned {got!r}, original {expected!r}")
        convert_s = conversion_time(function, args.repeat)
        floor_s = floor_time(function, args.repeat)
        original_s = run_time(function, call_args, args.repeat)
        converted_s = run_time(converted, call_args, args.repeat)
        code_s = run_time(code, call_args, args.repeat)
        row = (
            function.__name__, lines, convert_s * 1e3, convert_s / floor_s, converted_s / original_s,
            code_s / original_s,
        )
        rows.append(row)
        print(f"{row[0]:<20} {row[1]:>5} {row[2]:>10.3f} {row[3]:>8.1f} {row[4]:>10.2f} {row[5]:>11.2f}")
    print("-" * len(header))
    median = [statistics.median(r[i] for r in rows) for i in (1, 2, 3, 4, 5)]
    print(
        f"{'median':<20} {median[0]:>5.0f} {median[1]:>10.3f} {median[2]:>8.1f} {median[3]:>10.2f} "
        f"{median[4]:>11.2f}"
    )
    small = [r for r in rows if r[1] <= 12]
    if small:
        print(f"functions of <= 12 lines: median conversion {statistics.median(r[2] for r in small):.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
