"""The typed readers: right types pass through, anything else is a FieldError naming the field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.fields import readers as r

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


def test_fields_of_the_right_type_are_returned() -> None:
    obj = r.parse_object('{"n": 3, "x": 1.5, "s": "a", "b": true, "m": {"k": 1}, "l": [1, 2]}')
    assert r.int_of(obj, "n") == 3
    assert r.float_of(obj, "x") == 1.5 and r.float_of(obj, "n") == 3.0
    assert r.str_of(obj, "s") == "a" and r.bool_of(obj, "b") is True
    assert r.map_of(obj, "m") == {"k": 1} and r.ints_of(obj, "l") == [1, 2]
    assert r.opt_int_of(obj, "absent") is None and r.opt_str_of({"s": None}, "s") is None


@pytest.mark.parametrize(
    ("reader", "value"),
    [
        (r.int_of, True),  # a boolean is not a count of cents
        (r.int_of, 1.0),
        (r.int_of, "1"),
        (r.float_of, False),
        (r.str_of, 1),
        (r.bool_of, 0),
        (r.map_of, [1]),
        (r.list_of, {"a": 1}),
        (r.ints_of, [1, "2"]),
        (r.strs_of, ["a", 2]),
    ],
)
def test_a_wrong_type_names_the_field(reader: object, value: object) -> None:
    with pytest.raises(r.FieldError, match="'f'"):
        reader({"f": value}, "f")  # type: ignore[operator]


def test_a_missing_field_names_it() -> None:
    with pytest.raises(r.FieldError, match="'gone' is missing"):
        r.int_of({}, "gone")


def test_a_document_that_is_not_an_object_is_refused() -> None:
    for text in ("[1]", "3", '"s"', "null"):
        with pytest.raises(r.FieldError):
            r.parse_object(text)
    with pytest.raises(ValueError):
        r.parse_object("{not json")


@given(st.dictionaries(st.text(max_size=3), json_values, max_size=4), st.text(max_size=3))
def test_any_decoded_json_gives_a_value_of_the_type_or_a_field_error(
    obj: dict[str, object], key: str
) -> None:
    obj = r.parse_object(json.dumps(obj))
    for reader, kind in (
        (r.int_of, int),
        (r.str_of, str),
        (r.map_of, dict),
        (r.list_of, list),
        (r.float_of, float),
        (r.bool_of, bool),
    ):
        try:
            value = reader(obj, key)
        except r.FieldError as err:
            assert repr(key) in str(err)
        else:
            assert isinstance(value, kind)
            if kind is int:
                assert not isinstance(value, bool)
