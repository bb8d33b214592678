"""Behaviour corpus: numerics-flavoured functions on Python and numpy values.

Iterative solvers, reductions, running statistics, array updates in loops,
early exits on convergence.  Registered with their argument lists;
tests/test_convert_behaviour.py checks convert(f) == f on each, bit for bit.
"""

import numpy as np

from corpus_registry import call, check


@check(2.0, 9.0, 0.0, 1e-8)
def newton_sqrt(a):
    if a == 0.0:
        return 0.0
    x = a
    for _ in range(50):
        nxt = 0.5 * (x + a / x)
        if abs(nxt - x) < 1e-12:
            break
        x = nxt
    return x


@check((1.0, 2.0), (0.0, 3.0), (-2.0, 0.5))
def bisection_root(lo, hi):
    def f(x):
        return x * x * x - x - 1.0

    if f(lo) * f(hi) > 0:
        raise ValueError("root is not bracketed by [%r, %r]" % (lo, hi))
    iterations = 0
    while hi - lo > 1e-10:
        mid = (lo + hi) / 2
        if f(lo) * f(mid) <= 0:
            hi = mid
        else:
            lo = mid
        iterations += 1
    return (lo + hi) / 2, iterations


@check([1.0, 2.0, 3.0, 4.0], [5.0], [])
def mean_and_variance(xs):
    if not xs:
        return None
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


@check(np.array([1.0, 2.0, 3.0]), np.array([], dtype=np.float64), np.array([4, 5], dtype=np.int32))
def numpy_cumulative(arr):
    out = np.zeros_like(arr)
    running = 0
    for i in range(arr.shape[0]):
        running = running + arr[i]
        out[i] = running
    return out


@check(np.arange(6.0).reshape(2, 3), np.eye(3))
def numpy_row_norms(m):
    norms = []
    for row in m:
        s = 0.0
        for v in row:
            s += v * v
        norms.append(np.sqrt(s))
    return np.array(norms)


@check((np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])), (np.eye(2), np.array([3.0, -1.0])))
def jacobi_solve(a, b):
    x = np.zeros_like(b)
    for it in range(200):
        x_new = np.empty_like(x)
        for i in range(a.shape[0]):
            s = 0.0
            for j in range(a.shape[1]):
                if j != i:
                    s += a[i, j] * x[j]
            x_new[i] = (b[i] - s) / a[i, i]
        if np.max(np.abs(x_new - x)) < 1e-12:
            return x_new, it
        x = x_new
    return x, -1


@check(np.array([3, -1, 4, -1, 5]), np.array([-2, -3]))
def numpy_argmax_loop(arr):
    best_i = -1
    best = None
    for i, v in enumerate(arr):
        if best is None or v > best:
            best = v
            best_i = i
    return best_i, best


@check((np.zeros(4), [0, 1, 1, 3]), (np.ones(2), []))
def numpy_scatter_add(target, idx):
    for k, i in enumerate(idx):
        target[i] += k + 1
    return target


@check(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.0, 1.0], [1.0, 0.0]]))
def matrix_power_loop(m):
    result = np.eye(m.shape[0])
    n = 5
    base = m.copy()
    while n > 0:
        if n & 1:
            result = result @ base
        base = base @ base
        n >>= 1
    return result


@check(10, 1, 0)
def trapezoid_integral(steps):
    if steps <= 0:
        raise ValueError(f"steps must be positive, got {steps}")
    h = 1.0 / steps
    total = 0.5 * (0.0 + 1.0)
    for k in range(1, steps):
        x = k * h
        total += x * x
    return total * h


@check(0.5, 1.0, 3.0)
def exp_series(x):
    term = 1.0
    total = 1.0
    k = 1
    while abs(term) > 1e-15 and k < 100:
        term *= x / k
        total += term
        k += 1
    return total, k


@check((0.1, 1.0), (0.5, 4.0), (2.5, 1.0))
def gradient_descent_quadratic(lr, start):
    x = start
    history = [x]
    for step in range(100):
        grad = 2.0 * (x - 3.0)
        if abs(grad) < 1e-9:
            break
        x = x - lr * grad
        if abs(x) > 1e6:
            return "diverged", step
        history.append(x)
    return round(x, 9), len(history)


@check([3.0, -1.0, 2.5], [], [0.0])
def clip_values(xs):
    lo, hi = -0.5, 2.0
    out = []
    for x in xs:
        out.append(lo if x < lo else hi if x > hi else x)
    return out


@check(([1.0, 2.0, 3.0, 4.0, 5.0], 2), ([1.0], 3))
def moving_average(xs, window):
    out = []
    acc = 0.0
    for i, x in enumerate(xs):
        acc += x
        if i >= window:
            acc -= xs[i - window]
        if i >= window - 1:
            out.append(acc / window)
    return out


@check(([[1, 2], [3, 4]], [[5, 6], [7, 8]]), ([[1, 0, 2]], [[1], [2], [3]]))
def matmul_lists(a, b):
    n, m, p = len(a), len(b), len(b[0])
    c = [[0] * p for _ in range(n)]
    for i in range(n):
        for j in range(p):
            for k in range(m):
                c[i][j] += a[i][k] * b[k][j]
    return c


@check(np.array([1.0, 2.0, np.inf]), np.array([1.0, 2.0]))
def finite_sum_or_error(arr):
    total = 0.0
    for v in arr:
        if not np.isfinite(v):
            raise FloatingPointError(f"non-finite value {v}")
        total += float(v)
    return total


@check(np.array([5, 3, 8, 1], dtype=np.int64), np.array([1], dtype=np.int64))
def numpy_selection_sort(arr):
    a = arr.copy()
    for i in range(len(a)):
        m = i
        for j in range(i + 1, len(a)):
            if a[j] < a[m]:
                m = j
        if m != i:
            a[i], a[m] = a[m], a[i]
    return a


@check(np.array([0.2, 0.5, 0.3]), np.array([1.0]))
def softmax_entropy(p):
    logits = np.log(p)
    shifted = logits - logits.max()
    e = np.exp(shifted)
    probs = e / e.sum()
    entropy = 0.0
    for q in probs:
        if q > 0:
            entropy -= q * np.log(q)
    return probs, entropy


@check(call(np.array([1.0, 2.0, 3.0]), tol=0.5), call(np.array([1.0, 1.0])))
def power_iteration_like(v, tol=1e-3, max_iter=20):
    v = v / np.linalg.norm(v)
    m = np.array([[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.5]])[: v.shape[0], : v.shape[0]]
    it = 0
    while it < max_iter:
        w = m @ v
        w = w / np.linalg.norm(w)
        if np.linalg.norm(w - v) < tol:
            v = w
            break
        v = w
        it += 1
    return v, it


@check(([1, 2, 3, 4, 5, 6, 7, 8, 9, 10],), ([],))
def percentile_median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    mid = n // 2
    median = s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2
    return median, s[0], s[-1]


@check(100, 1, 30)
def sieve(n):
    is_p = [True] * (n + 1)
    is_p[0] = False
    if n >= 1:
        is_p[1] = False
    p = 2
    while p * p <= n:
        if is_p[p]:
            for k in range(p * p, n + 1, p):
                is_p[k] = False
        p += 1
    return [i for i in range(n + 1) if is_p[i]]


@check(np.float32(1.5), np.float64(-2.0), 3)
def numpy_scalar_loop(x):
    acc = x * 0
    for i in range(4):
        acc = acc + x * i
        if acc > 10:
            break
    return acc


@check(([1.0, 5.0, 2.0],), ([],))
def normalise_in_place(xs):
    if not xs:
        return xs
    top = max(xs)
    for i in range(len(xs)):
        xs[i] /= top
    return xs


@check((np.array([1, 2, 3]), 2), (np.array([4]), 0))
def numpy_masked_update(arr, k):
    out = arr.copy()
    mask = arr > k
    out[mask] += 10
    out[~mask] -= 1
    return out, int(mask.sum())


@check(12, 1, 97)
def prime_factors(n):
    factors = []
    d = 2
    while n > 1:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 1
        if d * d > n:
            if n > 1:
                factors.append(n)
            break
    return factors
