"""Dense matrices as lists of rows."""


def multiply(a, b):
    """The product of matrices `a` (n x m) and `b` (m x p)."""
    columns = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, column)) for column in columns] for row in a]


def apply(a, vector):
    """`a` times the column `vector`."""
    return [sum(x * y for x, y in zip(row, vector)) for row in a]
