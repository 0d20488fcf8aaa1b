"""What a bake would remove from a measured run: its cold module work (for apply's summary, and `bake key`)."""

from __future__ import annotations

from dataclasses import dataclass

from warp_fix.report import ModuleBuild, Report

Identity = tuple[str, str, str]  # module, full hash, device kind ("cpu", "cuda"): what a cache entry is for


def identity(build: ModuleBuild) -> Identity:
    return (build.module, build.hash, build.device.split(":")[0])


@dataclass(frozen=True)
class ColdWork:
    """The builds a run on an empty cache compiles; a restored bake makes each a cache hit."""

    identities: int
    module_ms: float  # summed Warp module time of those builds in the report's first good cold run
    builds: tuple[ModuleBuild, ...]

    def identity_set(self) -> frozenset[Identity]:
        return frozenset(map(identity, self.builds))


def cold_work_removed(report: Report) -> ColdWork:
    """The compiled builds of the report's cold run: all of them are what a restored bake leaves out."""
    compiled = tuple(b for b in report.trace.builds if b.status == "compiled")
    identities = len(set(map(identity, compiled)))
    return ColdWork(identities, round(sum(b.module_ms for b in compiled), 3), compiled)
