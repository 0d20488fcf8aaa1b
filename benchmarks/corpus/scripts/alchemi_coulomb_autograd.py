"""Relax a jittered rock-salt crystal a few steps with forces from autograd through nvalchemi-toolkit-ops' Coulomb op.

The damped (Ewald real-space) Coulomb energy is a torch custom op around a Warp kernel: `energies.sum().backward()`
runs Warp's adjoint of it. The DSF energy and its analytic forces are computed alongside for comparison (no gradient
taken). The neighbour list is built once in torch with a skin, as a Verlet list; nvalchemiops' own neighbour list is
exercised by the neighbor-list scenario. `--device cpu|cuda`.
"""

import argparse

import torch
from nvalchemiops.torch.interactions.electrostatics import coulomb_energy, dsf_coulomb

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--cells", type=int, default=6, help="ions per edge of the cubic lattice")
parser.add_argument("--steps", type=int, default=5)
args = parser.parse_args()

torch.manual_seed(0)
device = torch.device(args.device)
spacing, cutoff, skin, alpha = 2.8, 6.0, 1.0, 0.3
n = args.cells
box = n * spacing
grid = torch.stack(torch.meshgrid(*[torch.arange(n)] * 3, indexing="ij"), dim=-1).reshape(-1, 3)
positions = (grid * spacing + 0.1 * torch.randn(grid.shape)).to(torch.float64).to(device)
charges = torch.where(grid.sum(dim=1) % 2 == 0, 1.0, -1.0).to(torch.float64).to(device)
cell = (torch.eye(3, dtype=torch.float64) * box).unsqueeze(0).to(device)

# Full CSR neighbour list within cutoff + skin, minimum image (cutoff + skin < box / 2).
delta = positions[:, None, :] - positions[None, :, :]
shifts = torch.round(delta / box)
distance = (delta - shifts * box).norm(dim=-1)
within = (distance < cutoff + skin) & ~torch.eye(len(positions), dtype=torch.bool, device=device)
i, j = within.nonzero(as_tuple=True)
neighbor_list = torch.stack([i, j]).to(torch.int32)
neighbor_shifts = shifts[i, j].to(torch.int32).contiguous()
neighbor_ptr = torch.zeros(len(positions) + 1, dtype=torch.int32, device=device)
neighbor_ptr[1:] = torch.cumsum(within.sum(dim=1), dim=0)
print("ions", len(positions), "pairs", neighbor_list.shape[1])

step_size = 0.01
for step in range(args.steps):
    positions.requires_grad_(True)
    energy = coulomb_energy(
        positions, charges, cell, cutoff, alpha,
        neighbor_list=neighbor_list, neighbor_ptr=neighbor_ptr, neighbor_shifts=neighbor_shifts,
    ).sum()
    energy.backward()
    forces = -positions.grad
    dsf_energy, dsf_forces = dsf_coulomb(
        positions.detach(), charges, cutoff, alpha, cell=cell,
        neighbor_list=neighbor_list, neighbor_ptr=neighbor_ptr, unit_shifts=neighbor_shifts,
    )
    print(
        f"step {step} coulomb {energy.item():.4f} |F| {forces.norm():.4f} "
        f"dsf {dsf_energy.sum().item():.4f} |F_dsf| {dsf_forces.norm():.4f}"
    )
    with torch.no_grad():
        positions = positions + step_size * forces
