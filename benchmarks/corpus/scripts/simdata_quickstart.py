"""Warp SimData's README quick start: a scalar field on a VTK image grid, a spherical iso-surface, a slice.

`--device cpu|cuda:0`, `--nodes N` (grid nodes per axis; the README uses 101)."""

import argparse

import numpy as np
import warp as wp
import warp_simdata as simdata
from warp_simdata.data_models.vtk import image_data
from warp_simdata.operators import iso_surface, slice

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda:0" if wp.is_cuda_available() else "cpu")
parser.add_argument("--nodes", type=int, default=41)
args = parser.parse_args()
device, n = args.device, args.nodes

# An n^3-node grid on [-1, 1]^3, with distance from the center at each node.
grid = image_data.create_dataset(
    origin=wp.vec3f(-1.0),
    spacing=wp.vec3f(2.0 / (n - 1)),
    extent_min=wp.vec3i(0),
    extent_max=wp.vec3i(n - 1),
    device=device,
)
x = np.linspace(-1.0, 1.0, n, dtype=np.float32)
z, y, x = np.meshgrid(x, x, x, indexing="ij")  # x varies fastest
radius = np.sqrt(x**2 + y**2 + z**2).ravel()
grid.add_field("radius", simdata.Field.from_array(wp.array(radius, device=device), simdata.AssociationType.NODE))

sphere = iso_surface.compute(grid, "radius", 0.5)
plane = slice.compute(grid, origin=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), field_names=["radius"])
print("iso-surface elements", sphere.get_num_elems(), "slice elements", plane.get_num_elems())
