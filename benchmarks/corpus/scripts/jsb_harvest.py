"""Record flight states into warp-jsb's experience buffers as its README shows, in both recording modes."""

import numpy as np
import warp as wp
from warp_jsb.eom import AircraftState, ControlState
from warp_jsb.experience import ExperienceHarvester
from warp_jsb.logger import FleetLogger

num_aircraft = 256
device = "cpu"
states = wp.zeros(num_aircraft, dtype=AircraftState, device=device)
controls = wp.zeros(num_aircraft, dtype=ControlState, device=device)
logger = FleetLogger(num_aircraft, device=device)
for sync_mode in (True, False):
    harvester = ExperienceHarvester(
        num_aircraft, window_size=10, layout="agent_first", sync_mode=sync_mode, device=device
    )
    for _step in range(3):
        harvester.record(states, controls)
    obs, acts = harvester.to_numpy()
    print(f"sync={sync_mode} obs {obs.shape} sum {float(np.abs(obs).sum()):.3f} acts {acts.shape}")
print({k: round(float(v), 3) for k, v in logger.compute(states).items()})
