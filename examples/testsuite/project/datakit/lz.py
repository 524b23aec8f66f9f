"""A small LZ77 codec: literals and back references in a 4 KiB window."""

WINDOW = 4096
MIN_MATCH = 4
MAX_MATCH = 255


def compress(data):
    """`data` (bytes) as a list of tokens: an int for a literal byte, a
    (distance, length) pair for a copy of earlier bytes."""
    tokens = []
    last = {}  # the last position of each 4-byte prefix
    i = 0
    while i < len(data):
        prefix = data[i:i + MIN_MATCH]
        start = last.get(prefix)
        last[prefix] = i
        if start is not None and i - start <= WINDOW and len(prefix) == MIN_MATCH:
            length = MIN_MATCH
            while (i + length < len(data) and length < MAX_MATCH
                   and data[start + length] == data[i + length]):
                length += 1
            tokens.append((i - start, length))
            for j in range(i + 1, i + length):
                last[data[j:j + MIN_MATCH]] = j
            i += length
        else:
            tokens.append(data[i])
            i += 1
    return tokens


def decompress(tokens):
    """The bytes `tokens` stand for."""
    out = bytearray()
    for token in tokens:
        if isinstance(token, int):
            out.append(token)
        else:
            distance, length = token
            for _ in range(length):
                out.append(out[-distance])
    return bytes(out)
