"""Whole numbers: Fibonacci by fast doubling."""


def fibonacci(n):
    """F(n), F(0) = 0, F(1) = 1, in O(log n) multiplications."""
    def pair(k):  # (F(k), F(k + 1))
        if k == 0:
            return 0, 1
        a, b = pair(k // 2)
        c = a * (2 * b - a)
        d = a * a + b * b
        return (d, c + d) if k % 2 else (c, d)
    return pair(n)[0]
