"""The neighbor-list snippet of nvalchemi-toolkit-ops' README with fewer atoms: `--device cpu|cuda --method NAME`."""

import argparse

import torch
from nvalchemiops.torch.neighbors import neighbor_list

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--method", default="cell_list")
parser.add_argument("--atoms", type=int, default=2_000)
parser.add_argument("--box", type=float, default=40.0, help="cubic cell edge in Å (keep the density physical)")
args = parser.parse_args()

torch.manual_seed(0)
torch.set_default_dtype(torch.float32)
torch.set_default_device(args.device)
positions = torch.rand((args.atoms, 3)) * args.box
cell = (torch.eye(3, dtype=torch.float32) * args.box).unsqueeze(0)
# The README's slab ([True, True, False]); the cluster-tile methods are periodic in all three directions only.
pbc = torch.tensor([True, True, "cluster_tile" in args.method], dtype=torch.bool)
cutoff = 6.0
neighbor_matrix, num_neighbors, shift_matrix = neighbor_list(positions, cutoff, cell=cell, pbc=pbc, method=args.method)
print("matrix", tuple(neighbor_matrix.shape), "pairs", int(num_neighbors.sum()))
edge_index, neighbor_ptr, shifts = neighbor_list(positions, cutoff, cell=cell, pbc=pbc, return_neighbor_list=True)
print("coo", tuple(edge_index.shape), int(neighbor_ptr[-1]))
