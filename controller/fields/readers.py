"""Read typed fields out of decoded JSON (a journal row's data, a feed message, a profile
table) with no untyped values: each reader checks the value's type and raises :class:`FieldError`
naming the field, so bad input is a clear error and never a ``KeyError`` deep in a caller."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TypeAlias

#: A value ``json.loads`` can return.
JSONValue: TypeAlias = "None | bool | int | float | str | list[JSONValue] | dict[str, JSONValue]"
#: A decoded JSON object.
JSONObject: TypeAlias = "dict[str, JSONValue]"
#: What the readers accept: any mapping of field names (a JSON object, a TOML table).
Fields: TypeAlias = Mapping[str, object]


class FieldError(ValueError):
    """A field is missing or has the wrong type; the message names it."""


def parse_object(text: str | bytes) -> dict[str, object]:
    """Decode ``text`` as JSON and insist on an object (``ValueError`` if it is not JSON)."""
    value: object = json.loads(text)
    return as_map(value, "the message")


def as_map(value: object, what: str) -> dict[str, object]:
    """``value`` as an object with string keys, or :class:`FieldError` naming ``what``."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise FieldError(f"{what} must be an object, not {type(value).__name__}")
    return {str(k): v for k, v in value.items()}


def as_list(value: object, what: str) -> list[object]:
    """``value`` as a list, or :class:`FieldError` naming ``what``."""
    if not isinstance(value, list):
        raise FieldError(f"{what} must be a list, not {type(value).__name__}")
    return list(value)


def as_int(value: object, what: str) -> int:
    """``value`` as an integer (``True``/``False`` are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(f"{what} must be an integer, not {type(value).__name__}")
    return value


def as_float(value: object, what: str) -> float:
    """``value`` as a number (an integer is taken as a float; booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError(f"{what} must be a number, not {type(value).__name__}")
    return float(value)


def as_str(value: object, what: str) -> str:
    """``value`` as a string."""
    if not isinstance(value, str):
        raise FieldError(f"{what} must be a string, not {type(value).__name__}")
    return value


def as_bool(value: object, what: str) -> bool:
    """``value`` as a boolean."""
    if not isinstance(value, bool):
        raise FieldError(f"{what} must be true or false, not {type(value).__name__}")
    return value


def _field(obj: Fields, key: str) -> object:
    if key not in obj:
        raise FieldError(f"{key!r} is missing")
    return obj[key]


def int_of(obj: Fields, key: str) -> int:
    """The integer field ``key`` of ``obj``."""
    return as_int(_field(obj, key), repr(key))


def float_of(obj: Fields, key: str) -> float:
    """The numeric field ``key`` of ``obj``."""
    return as_float(_field(obj, key), repr(key))


def str_of(obj: Fields, key: str) -> str:
    """The string field ``key`` of ``obj``."""
    return as_str(_field(obj, key), repr(key))


def bool_of(obj: Fields, key: str) -> bool:
    """The boolean field ``key`` of ``obj``."""
    return as_bool(_field(obj, key), repr(key))


def map_of(obj: Fields, key: str) -> dict[str, object]:
    """The object field ``key`` of ``obj``."""
    return as_map(_field(obj, key), repr(key))


def list_of(obj: Fields, key: str) -> list[object]:
    """The list field ``key`` of ``obj``."""
    return as_list(_field(obj, key), repr(key))


def opt_int_of(obj: Fields, key: str) -> int | None:
    """The integer field ``key``, or None when it is missing or null."""
    value = obj.get(key)
    return None if value is None else as_int(value, repr(key))


def opt_float_of(obj: Fields, key: str) -> float | None:
    """The numeric field ``key``, or None when it is missing or null."""
    value = obj.get(key)
    return None if value is None else as_float(value, repr(key))


def opt_str_of(obj: Fields, key: str) -> str | None:
    """The string field ``key``, or None when it is missing or null."""
    value = obj.get(key)
    return None if value is None else as_str(value, repr(key))


def opt_map_of(obj: Fields, key: str) -> dict[str, object] | None:
    """The object field ``key``, or None when it is missing or null."""
    value = obj.get(key)
    return None if value is None else as_map(value, repr(key))


def opt_list_of(obj: Fields, key: str) -> list[object] | None:
    """The list field ``key``, or None when it is missing or null."""
    value = obj.get(key)
    return None if value is None else as_list(value, repr(key))


def ints_of(obj: Fields, key: str) -> list[int]:
    """The list-of-integers field ``key`` of ``obj``."""
    return [as_int(v, f"{key!r}[{i}]") for i, v in enumerate(list_of(obj, key))]


def strs_of(obj: Fields, key: str) -> list[str]:
    """The list-of-strings field ``key`` of ``obj``."""
    return [as_str(v, f"{key!r}[{i}]") for i, v in enumerate(list_of(obj, key))]
