"""What a bake would remove from a measured run: its cold module work (for apply's summary, and `bake key`)."""

from __future__ import annotations

from dataclasses import dataclass

from warp_fix.report import ModuleBuild, Report


@dataclass(frozen=True)
class ColdWork:
    """The builds a run on an empty cache compiles; a restored bake makes each a cache hit."""

    identities: int
    module_ms: float  # summed Warp module time of those builds in the report's first good cold run
    builds: tuple[ModuleBuild, ...]


def cold_work_removed(report: Report) -> ColdWork:
    """The compiled builds of the report's cold run: all of them are what a restored bake leaves out."""
    compiled = tuple(b for b in report.trace.builds if b.status == "compiled")
    identities = len({(b.module, b.hash, b.device.split(":")[0]) for b in compiled})
    return ColdWork(identities, round(sum(b.module_ms for b in compiled), 3), compiled)
