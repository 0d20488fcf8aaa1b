"""Shapes met on real packages: late-overloads turns Warp's own type codes back into wp.overload types."""

from __future__ import annotations

import pytest
import warp as wp

from warp_fix.mechanisms.late_overloads import _type_expression

ROUND_TRIP_TYPES = [
    wp.float32,
    wp.float64,
    wp.int32,
    wp.uint8,
    wp.bool,
    wp.array(dtype=wp.float32),
    wp.array(dtype=wp.float64, ndim=2),
    wp.array(dtype=wp.vec3i),
    wp.array(dtype=wp.mat33f),
    wp.array(dtype=wp.vec3f, ndim=2),
    wp.vec3f,
    wp.vec4ub,
    wp.mat22d,
    wp.types.vector(length=5, dtype=wp.float32),
    wp.types.matrix(shape=(2, 3), dtype=wp.float64),
    wp.types.matrix(shape=(3, 3), dtype=wp.int32),
]


@pytest.mark.parametrize("warp_type", ROUND_TRIP_TYPES, ids=str)
def test_decoded_type_has_the_same_signature_code(warp_type: type) -> None:
    code = wp._src.types.get_type_code(warp_type)
    expression = _type_expression(code)
    assert expression is not None, code
    assert wp._src.types.get_type_code(eval(expression, {"wp": wp})) == code


@pytest.mark.parametrize("code", ["a1?", "ia1f4", "tr33f4", "a1a1f4", "SomeStruct_1a2b"])
def test_codes_without_an_overload_spelling_are_refused(code: str) -> None:
    assert _type_expression(code) is None
