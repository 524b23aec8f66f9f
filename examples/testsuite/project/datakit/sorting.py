"""A stable merge sort."""


def merge_sort(items, key=None):
    """A new list of `items` in order of `key` (the items themselves by
    default), equal keys in their input order."""
    keyed = [(item if key is None else key(item), i, item) for i, item in enumerate(items)]
    return [item for _, _, item in _sort(keyed)]


def _sort(rows):
    if len(rows) <= 1:
        return rows
    middle = len(rows) // 2
    left, right = _sort(rows[:middle]), _sort(rows[middle:])
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if right[j][:2] < left[i][:2]:
            out.append(right[j])
            j += 1
        else:
            out.append(left[i])
            i += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out
