"""The tracer's `differentiable_arguments`: False only for kernels whose arguments, as Warp compiled them, cannot
hold a gradient (integer and bool values, vectors, matrices, arrays and structs of them)."""

from __future__ import annotations

from typing import Any

import pytest
import warp as wp

from warp_fix.probe.inject._warp_fix_tracer.kernels import differentiable_arguments


@wp.struct
class CellRange:
    start: wp.array(dtype=wp.int32)
    count: int


@wp.struct
class Particle:
    cell: wp.vec3i
    mass: float


@wp.kernel
def index_cells(
    cells: wp.array2d(dtype=wp.int32),
    counts: wp.vec3i,
    table_size: wp.uint32,
    linear: wp.array(dtype=wp.int64),
    occupied: wp.array3d(dtype=wp.bool),
    pairs: wp.indexedarray(dtype=wp.vec2i),
    blocks: wp.types.matrix((2, 2), wp.int16),
    ranges: CellRange,
    periodic: bool,
):
    pass


@wp.kernel
def no_arguments():
    pass


@wp.kernel
def float_array(cells: wp.array(dtype=wp.int32), weights: wp.array(dtype=float)):
    pass


@wp.kernel
def float_scalar(cells: wp.array(dtype=wp.int32), scale: wp.float16):
    pass


@wp.kernel
def float_vector(points: wp.vec3):
    pass


@wp.kernel
def generic_array(values: wp.array(dtype=Any)):
    pass


@wp.kernel
def generic_value(value: Any, cells: wp.array(dtype=wp.int32)):
    pass


@wp.kernel
def struct_with_a_float(particles: wp.array(dtype=Particle)):
    pass


@wp.kernel
def mesh_handle(mesh: wp.uint64, cells: wp.array(dtype=wp.int32)):
    pass


def test_integer_and_bool_arguments_of_any_kind_and_dimension_carry_no_gradient():
    assert differentiable_arguments(wp, index_cells) is False
    assert differentiable_arguments(wp, no_arguments) is False


@pytest.mark.parametrize(
    "kernel",
    [float_array, float_scalar, float_vector, generic_array, generic_value, struct_with_a_float, mesh_handle],
    ids=lambda k: k.key,
)
def test_floats_unknown_types_and_object_ids_count_as_differentiable(kernel):
    assert differentiable_arguments(wp, kernel) is True


def test_an_object_warp_did_not_compile_counts_as_differentiable():
    assert differentiable_arguments(wp, object()) is True
