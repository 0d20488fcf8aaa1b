"""`warp-fix bake --from PREVIOUS -- COMMAND`: start from the last archive, build only what it lacks, keep only
what the run loaded.

The previous archive is verified whole, then its entries seed the run's private cache: an identity the run
still uses is a cache hit and goes into the new archive byte for byte; only misses compile, each explained
against the previous manifest (verify's reasons); an entry no process loaded is dropped, so the archive never
grows past what the current run needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.archive import ArchiveReader
from warp_fix.bake.environment import refusals
from warp_fix.bake.manifest import Manifest, ModuleEntry
from warp_fix.bake.run import TracedRun
from warp_fix.bake.verify import explain


@dataclass(frozen=True)
class Previous:
    """The archive an incremental bake starts from, verified (every member against its manifest)."""

    archive: Path
    manifest: Manifest

    @staticmethod
    def read(archive: Path) -> Previous:
        return Previous(archive, ArchiveReader(archive).verify())

    def seed(self, warp_cache: Path) -> None:
        """Place its entries where the run's Warp looks: `WARP_CACHE_PATH/<its Warp version>`."""
        ArchiveReader(self.archive).extract(warp_cache / self.manifest.environment.warp_version)


@dataclass(frozen=True)
class Built:
    """An identity the run compiled although it started from the previous archive, and why."""

    module: str
    hash: str
    processes: tuple[str, ...]  # which processes compiled it (a suite's workers may each build it)
    reasons: tuple[str, ...]

    def line(self) -> str:
        where = f" in {', '.join(self.processes)}" if any(self.processes) else ""
        return f"built {self.module} {self.hash[:7]}{where}: {'; '.join(self.reasons)}"


@dataclass(frozen=True)
class Dropped:
    """An entry of the previous archive that no process loaded: left out of the new one."""

    module: str
    hash: str
    bytes: int

    def line(self) -> str:
        return f"dropped {self.module} {self.hash[:7]} ({self.bytes:,} bytes): no process loaded it"


@dataclass(frozen=True)
class Incremental:
    """What an incremental bake carried over, built and dropped, against the archive it started from."""

    previous: Path
    previous_key: str
    carried: tuple[tuple[str, str], ...]  # (module, full hash) of the entries taken over unchanged
    built: tuple[Built, ...]
    dropped: tuple[Dropped, ...]
    environment_changes: tuple[str, ...]  # fields that differ from the previous archive's environment

    @property
    def dropped_bytes(self) -> int:
        return sum(d.bytes for d in self.dropped)

    def to_json(self) -> dict[str, object]:
        return {
            "previous": str(self.previous),
            "previous_key": self.previous_key,
            "carried": [{"module": module, "hash": module_hash} for module, module_hash in self.carried],
            "built": [
                {"module": b.module, "hash": b.hash, "processes": b.processes, "reasons": b.reasons} for b in self.built
            ],
            "dropped": [{"module": d.module, "hash": d.hash, "bytes": d.bytes} for d in self.dropped],
            "dropped_bytes": self.dropped_bytes,
            "environment_changes": list(self.environment_changes),
        }


def compare(previous: Previous, run: TracedRun, manifest: Manifest, cache_dir: str) -> Incremental:
    """The new manifest against the previous one: carried (same identity, not compiled), built, dropped."""
    builds = [b for b in run.trace.builds if b.status != "error" and b.hash]
    compiled = {(b.module, b.hash) for b in builds if b.status == "compiled"}
    before = {(m.name, m.hash): m for m in previous.manifest.modules}
    carried = tuple(
        (m.name, m.hash) for m in manifest.modules if (m.name, m.hash) in before and (m.name, m.hash) not in compiled
    )
    built: dict[tuple[str, str], Built] = {}
    for build in (b for b in builds if b.status == "compiled"):
        key = (build.module, build.hash)
        if key in built:
            built[key] = Built(*key, (*built[key].processes, run.process_of(build)), built[key].reasons)
        else:
            reasons = explain(build, [previous.manifest], run.environment, cache_dir)
            built[key] = Built(*key, (run.process_of(build),), reasons)
    used = {(m.name, m.hash) for m in manifest.modules}
    dropped = tuple(_dropped(entry) for key, entry in before.items() if key not in used)
    changes = tuple(refusals(previous.manifest, run.environment)) if run.environment is not None else ()
    return Incremental(previous.archive, previous.manifest.key, carried, tuple(built.values()), dropped, changes)


def _dropped(entry: ModuleEntry) -> Dropped:
    return Dropped(entry.name, entry.hash, sum(f.size for f in entry.files))
