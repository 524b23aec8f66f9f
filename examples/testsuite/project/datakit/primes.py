"""Primes by trial division."""


def primes_below(limit):
    """The primes less than `limit`, in order."""
    found = []
    for n in range(2, limit):
        for p in found:
            if p * p > n:
                found.append(n)
                break
            if n % p == 0:
                break
        else:
            found.append(n)
    return found
