"""Graphs: connected components by union-find."""


def components(count, edges):
    """The connected components of nodes 0..count-1 joined by `edges`
    ((a, b) pairs): a list of sorted lists, ordered by their least node."""
    parent = list(range(count))

    def root(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups = {}
    for n in range(count):
        groups.setdefault(root(n), []).append(n)
    return [groups[r] for r in sorted(groups)]
