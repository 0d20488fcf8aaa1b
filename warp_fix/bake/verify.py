"""`warp-fix bake verify -- COMMAND`: run on the restored cache; every build that compiled is a miss, explained.

The CI guard that keeps a baked start baked: exit 1 when anything compiled, with the field that differs
from the manifest (block_dim, an option, a kernel or generic instance added, the environment), and when
the run loaded a module no manifest names (an entry the bake did not make). The run uses a scratch copy
of the cache (bake/scratch.py): what a failing run compiles never reaches the cache the next check reads.
In a git repository the run is also recorded (bake/verified.py), so that apply's summary can quote it.
The run uses another PYTHONHASHSEED than the bake's; a miss that differs by its hash alone is checked under
the bake's seed, and named as a hash that depends on the process when it loads there (bake/process_hash.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.cold_work import identity
from warp_fix.bake.environment import probe_machine, refusals
from warp_fix.bake.manifest import Environment, Manifest, ModuleEntry, options_from_mapping
from warp_fix.bake.process_hash import Suspect, confirmed, verify_seed
from warp_fix.bake.restore import restored_manifests
from warp_fix.bake.run import run_on_cache
from warp_fix.bake.scratch import scratch_cache
from warp_fix.bake.verified import Verification, now, remember
from warp_fix.report import ModuleBuild


@dataclass(frozen=True)
class Miss:
    """A module the run compiled although a baked cache should have held it, and why it did not."""

    module: str
    hash: str
    device: str
    block_dim: int | None
    reasons: tuple[str, ...]
    process: str = ""  # which process of the command compiled it (a suite's worker, a subprocess); "" unknown

    def line(self) -> str:
        where = f" in {self.process}" if self.process else ""
        return (
            f"{self.module} {self.hash[:7]} on {self.device} (block_dim {self.block_dim}){where}: "
            f"{'; '.join(self.reasons)}"
        )


@dataclass(frozen=True)
class Unnamed:
    """A module the run loaded from the cache although no manifest names it: code the bake did not make."""

    module: str
    hash: str
    device: str

    def line(self) -> str:
        return f"{self.module} {self.hash[:7]} on {self.device}: loaded from the cache, but no manifest names it"


@dataclass(frozen=True)
class VerifyResult:
    misses: tuple[Miss, ...]
    unnamed: tuple[Unnamed, ...]
    cache_hits: int
    manifests: tuple[str, ...]  # keys of the manifests compared against
    cache_dir: str  # where the run's Warp looked

    @property
    def exit_code(self) -> int:
        return 1 if self.misses or self.unnamed else 0

    def to_json(self) -> dict[str, object]:
        return {
            "compiled": len(self.misses),
            "unnamed": [{"module": u.module, "hash": u.hash, "device": u.device} for u in self.unnamed],
            "misses": [
                {
                    "module": m.module,
                    "hash": m.hash,
                    "device": m.device,
                    "block_dim": m.block_dim,
                    "process": m.process,
                    "reasons": m.reasons,
                }
                for m in self.misses
            ],
            "cache_hits": self.cache_hits,
            "manifests": self.manifests,
            "cache_dir": self.cache_dir,
        }


def verify(
    command: list[str], cwd: Path, timeout: float | None, cache: Path | None, manifest: Manifest | None
) -> VerifyResult:
    root = probe_machine(None, cache).kernel_cache_dir
    baked = [manifest] if manifest is not None else restored_manifests(root)
    seed = verify_seed(os.environ, {m.hash_seed for m in baked})
    with scratch_cache(root) as scratch:
        run = run_on_cache(command, cwd, timeout, scratch, seed)
        builds = [b for b in run.trace.builds if b.status != "error"]
        used = next((b.cache_dir for b in builds if b.cache_dir and b.cache_dir != "None"), "")
    copy = str(scratch / root.name)
    cache_dir = str(root) if not used or Path(used).resolve() == Path(copy).resolve() else used
    manifests = [manifest] if manifest is not None else (restored_manifests(Path(cache_dir)) if cache_dir else [])
    clears = tuple(
        f"the run called {op.kind}()" + (f" at {op.site}" if op.site else "") + ": it deletes restored entries"
        for op in run.trace.cache_ops
        if op.kind in ("clear_kernel_cache", "clear_lto_cache")
    )
    compiled = [b for b in builds if b.status == "compiled"]
    suspects = [s for b in compiled if (s := suspect(b, manifests, run.hash_seed)) is not None]
    seed_bound = confirmed(command, cwd, timeout, root, suspects) if suspects else {}
    misses = tuple(
        Miss(
            b.module,
            b.hash,
            b.device,
            b.block_dim,
            clears + _reasons(b, seed_bound, manifests, run.environment, cache_dir),
            run.process_of(b),
        )
        for b in compiled
    )
    named = {(m.name, m.hash) for found in manifests for m in found.modules}
    unnamed = tuple(
        dict.fromkeys(
            Unnamed(b.module, b.hash, b.device)
            for b in builds
            if manifests and b.status == "cached" and (b.module, b.hash) not in named
        )
    )
    hits = sum(1 for b in builds if b.status == "cached")
    keys = tuple(m.key for m in manifests)
    identities = frozenset(map(identity, builds))
    remember(cwd, Verification(tuple(command), identities, len(misses), run.process.wall_ms, now(), keys))
    return VerifyResult(misses, unnamed, hits, keys, cache_dir)


def _reasons(
    build: ModuleBuild,
    seed_bound: dict[tuple[str, str], str],
    manifests: list[Manifest],
    environment: Environment | None,
    cache_dir: str,
) -> tuple[str, ...]:
    """The one reason of a hash confirmed to depend on the process (`seed_bound`), else what `explain` finds."""
    found = seed_bound.get((build.module, build.hash))
    return (found,) if found else explain(build, manifests, environment, cache_dir)


def suspect(build: ModuleBuild, manifests: list[Manifest], seed: str) -> Suspect | None:
    """`build` as a possible process-dependent hash: the closest manifest entry of its module differs from it
    by the hash and at most its kernels' names, and the manifest was baked under a known seed other than
    `seed`, the run's. A changed kernel body looks the same; the confirming run tells them apart."""
    entries = [(manifest, m) for manifest in manifests for m in manifest.modules if m.name == build.module]
    if not entries or any(m.hash == build.hash for _, m in entries):
        return None
    entry = closest(build, [m for _, m in entries])
    baked = next(manifest for manifest, m in entries if m is entry)
    if not same_but_names(build, entry) or not baked.hash_seed or baked.hash_seed == seed:
        return None
    hashes = frozenset(m.hash for m in baked.modules if m.name == build.module)
    return Suspect(build, seed, baked.hash_seed, hashes)


def explain(build: ModuleBuild, manifests: list[Manifest], environment, cache_dir: str) -> tuple[str, ...]:
    """Why `build` compiled, field by field against the closest manifest entry of the same module name."""
    if not manifests:
        return ("no manifest to compare with: pass --manifest or --archive (restore leaves one in the cache)",)
    for manifest in manifests:
        exact = [m for m in manifest.modules if m.name == build.module and m.hash == build.hash]
        if exact:
            problems = refusals(manifest, environment) if environment is not None else []
            return tuple(problems) or (
                f"the manifest has this identity but the cache Warp used ({cache_dir}) lacks it: restore it there",
            )
    same_name = [m for manifest in manifests for m in manifest.modules if m.name == build.module]
    if not same_name:
        return ("a module the manifest does not have (new module, or renamed)",)
    return differences(build, closest(build, same_name))


def closest(build: ModuleBuild, entries: list[ModuleEntry]) -> ModuleEntry:
    def distance(entry: ModuleEntry) -> tuple[int, int]:
        return (entry.block_dim != build.block_dim, len(set(entry.kernels) ^ set(build.kernels)))

    return min(entries, key=distance)


def differences(build: ModuleBuild, entry: ModuleEntry) -> tuple[str, ...]:
    return tuple(changes(build, entry)) or (
        f"same kernels, options and block_dim: a kernel's code (or a function it calls) changed "
        f"(hash {entry.hash[:7]} -> {build.hash[:7]})",
    )


def changes(build: ModuleBuild, entry: ModuleEntry) -> list[str]:
    """The fields `build` differs from `entry` by, one line each: device, block_dim, kernels, generics, options."""
    return [
        *_target_changes(build, entry),
        *_set_changes("kernel", set(build.kernels), set(entry.kernels)),
        *_set_changes("generic instance", set(build.generics), set(entry.generics)),
        *_option_changes(build, entry),
    ]


def same_but_names(build: ModuleBuild, entry: ModuleEntry) -> bool:
    """Whether `build` is `entry` up to its hash and the names of its kernels: what a name or a constant drawn
    from Python's salted hash() changes (the same device, block_dim and options, as many kernels and instances)."""
    return (
        not _target_changes(build, entry)
        and not _option_changes(build, entry)
        and len(set(build.kernels)) == len(set(entry.kernels))
        and len(set(build.generics)) == len(set(entry.generics))
    )


def _target_changes(build: ModuleBuild, entry: ModuleEntry) -> list[str]:
    reasons = []
    device = build.device.split(":")[0]
    if not any(t.device == device for t in entry.targets):
        reasons.append(
            f"device {device}: the manifest has it for {', '.join(sorted({t.device for t in entry.targets}))}"
        )
    if build.block_dim != entry.block_dim:
        reasons.append(f"block_dim {build.block_dim}, manifest {entry.block_dim}")
    return reasons


def _option_changes(build: ModuleBuild, entry: ModuleEntry) -> list[str]:
    theirs = {o.name: o for o in entry.options}
    return [
        f"option {option.name} {option.value_json}, manifest {theirs[option.name].value_json}"
        for option in options_from_mapping(build.options)
        if option.name in theirs and theirs[option.name].value_json != option.value_json and option.name != "block_dim"
    ]


def _set_changes(what: str, now: set[str], baked: set[str]) -> list[str]:
    return [f"{what} added: {name}" for name in sorted(now - baked)] + [
        f"{what} removed: {name}" for name in sorted(baked - now)
    ]
