"""For `bake verify`: a module whose hash depends on the process, told apart from a changed kernel.

Verify runs under another PYTHONHASHSEED than the bake did (the user's own when their environment pins one:
that is what production runs under), as the probe's warm run does. A module named from Python's salted
`hash()` then compiles under a hash the manifest lacks, with the same kernels, options and block_dim, which
is also what an edited kernel looks like. One more run under the bake's seed, on another scratch copy of the
cache, tells them apart: a module that loads from the cache there, under a hash the manifest has, changed
with the seed, not with the code. That run happens only when such a miss exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.run import TracedRun, run_on_cache
from warp_fix.bake.scratch import scratch_cache
from warp_fix.probe.hash_drift import COLD_HASH_SEED, WARM_HASH_SEED
from warp_fix.report import ModuleBuild


@dataclass(frozen=True)
class Suspect:
    """A module verify compiled that differs from its closest manifest entry by the hash alone, under another
    seed than the bake's."""

    build: ModuleBuild
    seed: str  # the PYTHONHASHSEED verify ran under
    bake_seed: str  # the one the manifest records
    baked_hashes: frozenset[str]  # the module's hashes in that manifest


def verify_seed(env: Mapping[str, str], baked: set[str]) -> dict[str, str]:
    """What verify sets: nothing where the environment pins PYTHONHASHSEED (production keeps it too), else a
    seed no bake ran under, so that a hash that moves with the process moves here rather than in production."""
    if "PYTHONHASHSEED" in env:
        return {}
    seed = next((s for s in (WARM_HASH_SEED, COLD_HASH_SEED) if s not in baked), WARM_HASH_SEED)
    return {"PYTHONHASHSEED": seed}


def confirmed(
    command: list[str], cwd: Path, timeout: float | None, root: Path, suspects: list[Suspect]
) -> dict[tuple[str, str], str]:
    """The reason for each suspect (by module and hash) that loads from the cache under the bake's seed: one run
    per bake seed (nearly always one), on a fresh scratch copy of the versioned cache root `root`."""
    reasons: dict[tuple[str, str], str] = {}
    for bake_seed in sorted({s.bake_seed for s in suspects}):
        with scratch_cache(root) as scratch:
            run = run_on_cache(command, cwd, timeout, scratch, {"PYTHONHASHSEED": bake_seed})
        for suspect in (s for s in suspects if s.bake_seed == bake_seed):
            baked = _cached_hash(run, suspect)
            if baked:
                reasons[(suspect.build.module, suspect.build.hash)] = _reason(suspect, baked)
    return reasons


def _cached_hash(run: TracedRun, suspect: Suspect) -> str:
    """The hash under which the run loaded the suspect's module from the cache, one the manifest has; else ""."""
    return next(
        (
            b.hash
            for b in run.trace.builds
            if b.module == suspect.build.module and b.status == "cached" and b.hash in suspect.baked_hashes
        ),
        "",
    )


def _reason(suspect: Suspect, baked: str) -> str:
    return (
        f"its hash depends on the process: under PYTHONHASHSEED={suspect.bake_seed} (the bake's) it is "
        f"{baked[:7]} and loads from the cache, under {suspect.seed} it is {suspect.build.hash[:7]}; no cache is "
        "reused for it where the seed differs (`warp-fix plan` names the line: process-hash)"
    )
