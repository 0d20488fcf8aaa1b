"""Molecular dynamics the way nvalchemi-toolkit's documentation shows: a batch of periodic argon crystals, the
Lennard-Jones model wrapper, a neighbor-list hook, NVE integration; then the first system is moved into a
pre-allocated buffer (`Batch.empty` + `put`) and the batch compacted (`defrag`), as the pipeline stages do between
them. `--device cpu|cuda`, `--steps N`."""

import argparse
import os

# The neighbor-list hook is torch.compile'd; run it eagerly so the cold start measured is Warp's, not Inductor's.
os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")

import torch
from nvalchemi.data import AtomicData, Batch
from nvalchemi.data.transforms import make_supercell
from nvalchemi.dynamics import NVE
from nvalchemi.dynamics.base import DynamicsStage
from nvalchemi.hooks import NeighborListHook
from nvalchemi.models.lj import LennardJonesModelWrapper

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
parser.add_argument("--steps", type=int, default=10)
args = parser.parse_args()

torch.manual_seed(0)
a = 5.26  # argon FCC lattice constant, Å
basis = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]]) * a
crystals = []
for repeats in [(3, 3, 3), (4, 3, 3)]:
    unit = AtomicData(
        positions=basis.clone(),
        atomic_numbers=torch.full((4,), 18),
        cell=torch.eye(3).unsqueeze(0) * a,
        pbc=torch.tensor([[True, True, True]]),
    )
    crystal = make_supercell(unit, repeats)
    crystal.positions = crystal.positions + 0.05 * torch.randn_like(crystal.positions)
    crystals.append(crystal)
batch = Batch.from_data_list(crystals, device=args.device)

model = LennardJonesModelWrapper(epsilon=0.0104, sigma=3.40, cutoff=8.5)
nve = NVE(model, dt=1.0, n_steps=args.steps)
nve.register_hook(NeighborListHook(model.model_config.neighbor_config, stage=DynamicsStage.BEFORE_COMPUTE))
batch = nve.run(batch)
print("energy", [round(float(e), 4) for e in batch.energy.flatten()])

buffer = Batch.empty(num_systems=4, num_nodes=1024, num_edges=0, template=batch, device=args.device)
moved = torch.tensor([True, False], device=args.device)
buffer.put(batch, moved)
batch.defrag()
print("buffer systems", buffer.num_graphs, "batch systems", batch.num_graphs, "atoms", batch.num_nodes)
