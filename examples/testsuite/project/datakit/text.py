"""Text: edit distance and a word index."""
import re

WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def edit_distance(a, b):
    """Levenshtein's distance between strings `a` and `b`."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def word_index(lines):
    """Each word of `lines` (lower-cased) -> the numbers of the lines it is on,
    in order, each once."""
    index = {}
    for number, line in enumerate(lines):
        for word in WORD.findall(line.lower()):
            places = index.setdefault(word, [])
            if not places or places[-1] != number:
                places.append(number)
    return index
