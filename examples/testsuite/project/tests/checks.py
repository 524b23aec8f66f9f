"""The properties datakit's tests check, each on one random case made from
its seed and against a second way of getting the answer. A test runs one of
these on many cases (tests/test_*.py) and records how many it checked."""
import json
import random
import string

from datakit import graph, jsonenc, lz, matrix, numbers, primes, sorting, store, text


def merge_sort(seed):
    rng = random.Random(seed)
    rows = [(rng.randrange(100), rng.random()) for _ in range(3000)]
    ordered = sorting.merge_sort(rows, key=lambda row: row[0])
    assert ordered == sorted(rows, key=lambda row: row[0]), seed  # both stable


def primes_below(seed):
    limit = 20000 + random.Random(seed).randrange(10000)
    sieve = bytearray([1]) * limit
    sieve[:2] = b"\0\0"
    for n in range(2, int(limit ** 0.5) + 1):
        if sieve[n]:
            sieve[n * n::n] = bytes(len(range(n * n, limit, n)))
    assert primes.primes_below(limit) == [n for n in range(limit) if sieve[n]], limit


def lz_round_trip(seed):
    rng = random.Random(seed)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(60)]
    data = " ".join(rng.choices(words, k=3000)).encode()
    tokens = lz.compress(data)
    assert lz.decompress(tokens) == data, seed
    assert len(tokens) < len(data), seed


def matrix_product(seed):
    rng = random.Random(seed)
    n = 40
    a = [[rng.randrange(-9, 10) for _ in range(n)] for _ in range(n)]
    b = [[rng.randrange(-9, 10) for _ in range(n)] for _ in range(n)]
    v = [rng.randrange(-9, 10) for _ in range(n)]
    assert matrix.apply(matrix.multiply(a, b), v) == matrix.apply(a, matrix.apply(b, v)), seed


def edit_distance(seed):
    rng = random.Random(seed)
    a = "".join(rng.choices("acgt", k=110))
    b = list(a)
    for _ in range(rng.randrange(1, 12)):  # a few substitutions: the distance is at most that
        b[rng.randrange(len(b))] = rng.choice("acgt")
    b = "".join(b)
    changed = sum(x != y for x, y in zip(a, b))
    assert text.edit_distance(a, b) == text.edit_distance(b, a) <= changed, seed
    assert text.edit_distance(a, a) == 0


def word_index(seed):
    rng = random.Random(seed)
    words = ["".join(rng.choices("etaoinshrdlu", k=rng.randint(1, 7))) for _ in range(400)]
    lines = [" ".join(rng.choices(words, k=rng.randint(3, 16))).capitalize() + "."
             for _ in range(250)]
    index = text.word_index(lines)
    for word in rng.sample(sorted(index), 40):
        assert index[word] == [n for n, line in enumerate(lines)
                               if word in line.lower().rstrip(".").split()], word
    assert sum(map(len, index.values())) == sum(len(set(line.lower().rstrip(".").split()))
                                                for line in lines), seed


def store_totals(seed):
    rng = random.Random(seed)
    rows = [(rng.choice(("north", "south", "east", "west")), rng.randint(1, 12),
             rng.randrange(1, 100000)) for _ in range(2500)]
    expected = {}
    for region, month, cents in rows:
        expected[region, month] = expected.get((region, month), 0) + cents
    sales = store.Store()
    try:
        sales.add(rows)
        assert sales.totals() == expected, seed
    finally:
        sales.close()


def fibonacci(seed):
    n = 24000 + random.Random(seed).randrange(4000)
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    assert numbers.fibonacci(n) == a, n


def json_encode(seed):
    rng = random.Random(seed)

    def value(depth):
        kind = rng.randrange(7 if depth < 4 else 5)
        if kind == 0:
            return rng.randrange(-10 ** 12, 10 ** 12)
        if kind == 1:
            return rng.uniform(-1e6, 1e6)
        if kind == 2:
            return "".join(rng.choices(string.printable, k=rng.randrange(12)))
        if kind == 3:
            return rng.choice((True, False, None))
        if kind == 4:
            return rng.randrange(100)
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(8))]
        return {f"k{rng.randrange(1000)}": value(depth + 1) for _ in range(rng.randrange(8))}

    data = {f"record{i}": value(1) for i in range(600)}
    encoded = jsonenc.encode(data)
    assert json.loads(encoded) == data, seed
    assert encoded == json.dumps(data, sort_keys=True, separators=(",", ":")), seed


def graph_components(seed):
    rng = random.Random(seed)
    count = 8000
    edges = [(rng.randrange(count), rng.randrange(count)) for _ in range(3800)]
    neighbours = [[] for _ in range(count)]
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    seen = [False] * count
    expected = []
    for start in range(count):  # depth first from each node not yet seen
        if seen[start]:
            continue
        seen[start], stack, group = True, [start], []
        while stack:
            n = stack.pop()
            group.append(n)
            for m in neighbours[n]:
                if not seen[m]:
                    seen[m] = True
                    stack.append(m)
        expected.append(sorted(group))
    assert graph.components(count, edges) == expected, seed
