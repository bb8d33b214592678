"""Behaviour corpus: loops, branches and the statements that leave them.

Loops with break / continue / else, early returns from nested loops,
while/else and for/else, if/elif chains, exceptions raised inside loops.
Every function is registered with the argument lists it is checked on;
tests/test_convert_behaviour.py checks convert(f) == f on each.
"""

from corpus_registry import LOG, call, check


@check(0, 1, 5, 10)
def sum_to(n):
    total = 0
    for i in range(n):
        total += i
    return total


@check(0, 1, 7, 27)
def collatz_steps(n):
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@check(([3, 1, 4, 1, 5], 4), ([3, 1, 4], 9), ([], 1), ([7, 7], 7))
def find_index(xs, target):
    for i in range(len(xs)):
        if xs[i] == target:
            return i
    return -1


@check(([3, 1, 4, 1, 5], 4), ([3, 1, 4], 9), ([], 1))
def find_with_for_else(xs, target):
    for i, x in enumerate(xs):
        if x == target:
            found = i
            break
    else:
        found = None
    return found


@check(2, 9, 17, 21, 1, 0)
def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


@check(10, 30, 2, 0)
def primes_below(n):
    primes = []
    for candidate in range(2, n):
        for p in primes:
            if p * p > candidate:
                primes.append(candidate)
                break
            if candidate % p == 0:
                break
        else:
            primes.append(candidate)
    return primes


@check(([[1, 2], [3, 4]], 3), ([[1, 2], [3, 4]], 5), ([], 0), ([[], [0]], 0))
def find_in_grid(grid, target):
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            if value == target:
                return (r, c)
    return None


@check([1, -2, 3, 0, 4, -5], [], [-1, -1], [0])
def sum_positive_skip(xs):
    total = 0
    for x in xs:
        if x < 0:
            continue
        if x == 0:
            continue
        total += x
    return total


@check(([5, 3, 8, 1], 4), ([1, 2], 0), ([], 3))
def first_above_while_else(xs, limit):
    i = 0
    while i < len(xs):
        if xs[i] > limit:
            result = xs[i]
            break
        i += 1
    else:
        result = -1
    return result, i


@check(5, 0, 1)
def while_else_runs(n):
    log = []
    while n > 0:
        log.append(n)
        n -= 2
    else:
        log.append("done")
    return log


@check(3, 4, 0)
def nested_break_outer_flag(n):
    pairs = []
    done = False
    for i in range(n):
        for j in range(n):
            if i * j >= 4:
                done = True
                break
            pairs.append((i, j))
        if done:
            break
    return pairs


@check(4, 1, 0)
def continue_in_nested(n):
    out = []
    for i in range(n):
        for j in range(n):
            if j == i:
                continue
            if (i + j) % 3 == 0:
                continue
            out.append(i * 10 + j)
    return out


@check(1, 5, 12, 100)
def early_return_in_while_in_for(n):
    for a in range(1, n):
        b = a
        while b < n:
            if a * b == n:
                return a, b
            b += 1
    return None


@check(6, 0, -3)
def elif_chain(n):
    if n < 0:
        kind = "negative"
    elif n == 0:
        kind = "zero"
    elif n % 2 == 0:
        kind = "even"
    else:
        kind = "odd"
    return kind


@check(-5, 0, 3, 50, 150)
def classify_grade(score):
    if score < 0 or score > 100:
        raise ValueError(f"score out of range: {score}")
    if score >= 90:
        return "A"
    elif score >= 50:
        return "B"
    return "C"


@check([1, 2, 3], [1, -2, 3], [])
def raise_in_loop(xs):
    total = 0
    for x in xs:
        if x < 0:
            raise ValueError("negative entry %d at total %d" % (x, total))
        total += x
    return total


@check(([4, 2, 0, 5], 100), ([1, 2], 10), ([], 1))
def divide_chain(xs, start):
    value = start
    for x in xs:
        value = value // x
    return value


@check(0, 3, 6)
def while_true_break(limit):
    count = 0
    while True:
        if count >= limit:
            break
        count += 1
    return count


@check(10, 1)
def countdown_print(n):
    while n:
        print("tick", n)
        n -= 3 if n >= 3 else n
    print("liftoff")


@check(([1, 2, 3, 4, 5, 6],), ([],), ([2, 4],))
def split_even_odd(xs):
    evens = []
    odds = []
    for x in xs:
        if x % 2:
            odds.append(x)
        else:
            evens.append(x)
    return evens, odds


@check([3, 1, 2], [5, 4, 3, 2, 1], [], [1])
def bubble_sort(xs):
    xs = list(xs)
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


@check([3, 1, 2], [9, 8, 7, 1], [])
def insertion_sort_in_place(xs):
    for i in range(1, len(xs)):
        key = xs[i]
        j = i - 1
        while j >= 0 and xs[j] > key:
            xs[j + 1] = xs[j]
            j -= 1
        xs[j + 1] = key


@check(([1, 3, 5, 7, 9, 11], 7), ([1, 3, 5], 4), ([], 1), ([2], 2))
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
    return -(lo + 1)


@check(12, 7, 1, 0)
def digits_reversed(n):
    digits = []
    while n > 0:
        n, d = divmod(n, 10)
        digits.append(d)
    return digits


@check((48, 18), (7, 0), (0, 5), (17, 5))
def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


@check(6, 1, 0)
def triangle_rows(n):
    rows = []
    row = [1]
    for _ in range(n):
        rows.append(row)
        row = [1] + [row[k] + row[k + 1] for k in range(len(row) - 1)] + [1]
    return rows


@check([1, 2, 2, 3, 3, 3], [], [5])
def run_lengths(xs):
    runs = []
    i = 0
    while i < len(xs):
        j = i
        while j < len(xs) and xs[j] == xs[i]:
            j += 1
        runs.append((xs[i], j - i))
        i = j
    return runs


@check([4, -1, 2, 1, -7, 3], [-1, -2], [])
def max_subarray(xs):
    if not xs:
        return 0
    best = current = xs[0]
    for x in xs[1:]:
        current = max(x, current + x)
        if current > best:
            best = current
    return best


@check(3, 0, 5)
def for_else_no_break_logs(n):
    for i in range(n):
        LOG.append(i)
    else:
        LOG.append("else")
    return len(LOG)


@check(5, 2)
def while_with_continue_and_else(n):
    i = 0
    seen = []
    while i < n:
        i += 1
        if i == 2:
            continue
        seen.append(i)
    else:
        seen.append(-1)
    return seen


@check((3, 3), (2, 5), (0, 2))
def break_from_inner_else(rows, cols):
    out = []
    for r in range(rows):
        for c in range(cols):
            if r + c > 3:
                break
            out.append((r, c))
        else:
            out.append(("full", r))
            continue
        out.append(("cut", r))
    return out


@check(0, 4, 9)
def return_inside_else_branch(n):
    i = 0
    while i < n:
        if i == 5:
            break
        i += 1
    else:
        return "exhausted", i
    return "broke", i


@check(([1, 2, 3], 2), ([5], 0), ([], 1))
def loop_var_after_loop(xs, k):
    last = None
    for i, x in enumerate(xs):
        last = x
        if i >= k:
            break
    return last, i if xs else None


@check([(1, 2), (3, 4)], [], [(0, 0)])
def nested_unpacking_target(pairs):
    out = []
    for i, (a, b) in enumerate(pairs):
        out.append(i * (a + b))
        LOG.append((i, a, b))
    return out


@check(([2, 3, 4],), ([0, 1],))
def multiply_until_zero(xs):
    product = 1
    for x in xs:
        product *= x
        if product == 0:
            print("zero reached")
            return 0
    print("product", product)
    return product


@check(8, 15, 0)
def fizzbuzz(n):
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out


@check((3, 4), (0, 0), (6, 2))
def nested_while_counters(a, b):
    i = 0
    total = 0
    while i < a:
        j = 0
        while j < b:
            if (i + j) % 4 == 3:
                j += 1
                continue
            total += i * j
            j += 1
        i += 1
    return total


@check(7, 1, 20)
def deep_nest_return(n):
    for i in range(n):
        if i % 2 == 0:
            for j in range(i):
                if j == 3:
                    if i > 5:
                        return i, j
                    else:
                        break
    return -1, -1


@check([("a", 1), ("b", -1), ("c", 2)], [("x", 0)], [])
def validate_pairs(pairs):
    seen = {}
    for key, value in pairs:
        try:
            if value < 0:
                raise ValueError(key)
            seen[key] = 10 // value
        except ZeroDivisionError:
            seen[key] = None
            continue
        except ValueError as err:
            seen["bad"] = str(err)
            break
    return seen


@check(5, 0, 3)
def countdown_range_step(n):
    out = []
    for i in range(n, 0, -2):
        out.append(i)
    return out


@check([1, 4, 9], [], [5])
def deltas_with_previous(xs):
    out = []
    for i, x in enumerate(xs):
        if i > 0:
            out.append(x - prev)
        prev = x
    return out


@check([1, -2, -3], [1], [])
def defined_before_break_used_after(xs):
    for x in xs:
        if x < 0:
            first_negative = x
            break
    else:
        return None
    return first_negative


@check(3, 0)
def defined_and_used_under_same_condition(n):
    if n > 0:
        value = n * 2
    if n > 0:
        value += 1
        return value
    return -1


@check(3, 0)
def defined_in_first_iteration(n):
    total = 0
    for i in range(n):
        if i == 0:
            base = 10
        total += base + i
    return total


@check(2, 0)
def inner_function_reads_later_binding(n):
    def show():
        return label * 2

    label = "x" if n else "y"
    out = []
    for _ in range(n):
        out.append(show())
    return out
