"""`warp-fix bake verify -- COMMAND`: run on the restored cache; every build that compiled is a miss, explained.

The CI guard that keeps a baked start baked: exit 1 when anything compiled, with the field that differs
from the manifest (block_dim, an option, a kernel or generic instance added, the environment), and when
the run loaded a module no manifest names (an entry the bake did not make). The run uses a scratch copy
of the cache (bake/scratch.py): what a failing run compiles never reaches the cache the next check reads.
In a git repository the run is also recorded (bake/verified.py), so that apply's summary can quote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.cold_work import identity
from warp_fix.bake.environment import probe_machine, refusals
from warp_fix.bake.manifest import Manifest, ModuleEntry, options_from_mapping
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
    with scratch_cache(root) as scratch:
        run = run_on_cache(command, cwd, timeout, scratch)
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
    misses = tuple(
        Miss(
            b.module,
            b.hash,
            b.device,
            b.block_dim,
            clears + explain(b, manifests, run.environment, cache_dir),
            run.process_of(b),
        )
        for b in builds
        if b.status == "compiled"
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
    reasons = []
    device = build.device.split(":")[0]
    if not any(t.device == device for t in entry.targets):
        reasons.append(
            f"device {device}: the manifest has it for {', '.join(sorted({t.device for t in entry.targets}))}"
        )
    if build.block_dim != entry.block_dim:
        reasons.append(f"block_dim {build.block_dim}, manifest {entry.block_dim}")
    reasons += _set_changes("kernel", set(build.kernels), set(entry.kernels))
    reasons += _set_changes("generic instance", set(build.generics), set(entry.generics))
    theirs = {o.name: o for o in entry.options}
    for option in options_from_mapping(build.options):
        baked = theirs.get(option.name)
        if baked is not None and baked.value_json != option.value_json and option.name != "block_dim":
            reasons.append(f"option {option.name} {option.value_json}, manifest {baked.value_json}")
    if not reasons:
        reasons.append(
            f"same kernels, options and block_dim: a kernel's code (or a function it calls) changed "
            f"(hash {entry.hash[:7]} -> {build.hash[:7]})"
        )
    return tuple(reasons)


def _set_changes(what: str, now: set[str], baked: set[str]) -> list[str]:
    return [f"{what} added: {name}" for name in sorted(now - baked)] + [
        f"{what} removed: {name}" for name in sorted(baked - now)
    ]
