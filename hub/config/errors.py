"""pydantic's validation errors as the hub's one-line config errors with the key's path.

``ValidationError`` lists every problem; a user fixes one at a time, so only the first is
reported, as ``<section>.<key>[index]: <what was expected>, got <value>``.
"""

from __future__ import annotations

from pydantic import ValidationError

_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "dict_type": "a table",
    "tuple_type": "a list",
    "list_type": "a list",
}
"""pydantic error type -> what the TOML value should have been."""


def key_path(section: str, loc: tuple) -> str:
    """``("entities", 0, "name")`` in ``home`` -> ``home.entities[0].name``."""
    path = section
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _bounds(cls, name: str) -> tuple:
    """(low, high) of a field's ``Field(ge=.., le=..)`` constraints; None where unbounded."""
    info = getattr(cls, "__pydantic_fields__", {}).get(name)
    low = high = None
    for item in getattr(info, "metadata", ()):  # annotated_types Ge, Gt, Le, Lt
        low = next((getattr(item, a) for a in ("ge", "gt") if hasattr(item, a)), low)
        high = next((getattr(item, a) for a in ("le", "lt") if hasattr(item, a)), high)
    return low, high


def _range(cls, name: str, err: dict) -> str:
    low, high = _bounds(cls, name)
    if low is None and high is None:  # constraints inside ``X | None``: only the failed one
        ctx = err.get("ctx", {})
        low, high = ctx.get("ge", ctx.get("gt")), ctx.get("le", ctx.get("lt"))
    if err["type"] == "greater_than" and high is None:
        return f"must be more than {low}"
    if high is None:
        return f"must be at least {low}"
    if low is None:
        return f"must be at most {high}"
    return f"must be between {low} and {high}"


def one_line(exc: ValidationError, section: str, cls) -> str:
    """The first error of ``exc`` (raised building ``cls`` for ``[section]``) as one line.

    Returns e.g. ``asr.nbest: expected an integer, got 'x'`` or ``asr.engin: unknown key``.
    """
    err = exc.errors()[0]
    loc, kind, value = tuple(err["loc"]), err["type"], err.get("input")
    path = key_path(section, loc)
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        return f"{path}: unknown key"
    if kind in _EXPECTED:
        return f"{path}: expected {_EXPECTED[kind]}, got {value!r}"
    if kind == "literal_error":
        allowed = err.get("ctx", {}).get("expected", "").replace("'", "").replace(" or ", ", ")
        return f"{path}: must be one of {allowed}, got {value!r}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return f"{path}: {_range(cls, str(loc[0]), err)}, got {value!r}"
    if kind == "value_error":
        return f"{section}.{err['ctx']['error']}"
    return f"{path}: {err['msg'].lower()}, got {value!r}"
