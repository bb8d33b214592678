"""Quickstart: ordinary Python functions, converted by autograph.

Run it with ``python examples/quickstart.py``: it prints the code autograph
generates for ``collatz`` and checks that every converted function returns
what the original returns.  ``autograph show examples/quickstart.py:collatz``
prints the same code without running this file.
"""

import autograph as ag


def collatz(n):
    """Number of Collatz steps from n down to 1."""
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def first_negative(values):
    """Index of the first negative value, or -1."""
    for i, v in enumerate(values):
        if v < 0:
            return i
    return -1


def sum_odd_until(limit, stop):
    """Sum of the odd numbers below limit, stopping early at stop."""
    total = 0
    for i in range(limit):
        if i % 2 == 0:
            continue
        if i >= stop:
            break
        total += i
    return total


def clip(x, low, high):
    """x clipped to [low, high]."""
    if x < low:
        return low
    elif x > high:
        return high
    return x


def primes_below(n):
    """The primes below n (trial division, with a while/else)."""
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


def main():
    print(ag.to_code(collatz))
    checks = [
        (collatz, (27,)),
        (first_negative, ([3, 1, -4, 1, -5],)),
        (sum_odd_until, (20, 11)),
        (clip, (7, 0, 5)),
        (primes_below, (30,)),
    ]
    for function, args in checks:
        converted = ag.convert(function)
        expected, got = function(*args), converted(*args)
        assert got == expected, (function.__name__, got, expected)
        print(f"{function.__name__}{args} = {got}")


if __name__ == "__main__":
    main()
