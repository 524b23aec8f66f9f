"""A JSON encoder for plain data (dicts, lists, strings, whole numbers,
floats, booleans and None), keys sorted, no spaces."""

ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
           "\b": "\\b", "\f": "\\f"}


def encode(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return '"' + "".join(ESCAPES.get(c) or (c if c >= " " else f"\\u{ord(c):04x}")
                             for c in value) + '"'
    if isinstance(value, list):
        return "[" + ",".join(encode(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(encode(k) + ":" + encode(value[k]) for k in sorted(value)) + "}"
    raise TypeError(f"cannot encode {type(value).__name__}")
