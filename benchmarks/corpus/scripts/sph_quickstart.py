"""The Quickstart of warpSPHCore's README: a density and a gradient on a 2-D lattice (`--device cpu|cuda`)."""

import argparse

import torch
import warp as wp
import warpSPHCore as sph
from warpSPHCore import (
    GradientScheme,
    KernelFunctions,
    OperationDirection,
    OperationProperties,
    ParticleState,
    SupportScheme,
    WarpOperation,
)
from warpSPHCore.util import generateNeighborTestData

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--nx", type=int, default=32)
args = parser.parse_args()

wp.init()
device = args.device
nx, target_neighbors, dim, periodic = args.nx, 55, 2, True
positions, supports, n, domain, dx = generateNeighborTestData(nx, target_neighbors, dim, periodic, device)
masses = torch.full((n,), 1.0, device=device)
kinds = torch.zeros(n, dtype=torch.int32, device=device)
particles = ParticleState(positions, supports, masses, kinds)
properties = OperationProperties(
    kernel=KernelFunctions.Wendland2,
    operation=WarpOperation.Density,
    supportMode=SupportScheme.Gather,
    operationMode=OperationDirection.AllToAll,
)
rho = sph.warpOperation(particles, properties, domain)
vec = torch.stack([positions[:, 0], positions[:, 1]], dim=1)
properties = OperationProperties(
    kernel=KernelFunctions.Wendland2,
    operation=WarpOperation.Gradient,
    supportMode=SupportScheme.Gather,
    operationMode=OperationDirection.AllToAll,
    gradientMode=GradientScheme.Difference,
)
grad = sph.warpOperation(particles, properties, domain, queryValues=vec, referenceValues=vec)
print("rho", tuple(rho.shape), f"{float(rho.mean()):.6f}", "grad", tuple(grad.shape), f"{float(grad.abs().mean()):.6f}")
