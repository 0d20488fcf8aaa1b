"""CS-8: concurrent first loads on the CPU can succeed, then fail with "Failed to find module".

Before Warp 1.17 (warp_fix.warp_releases.SAFE_PARALLEL_CPU_LOADS): from 1.17 on a failed parallel load
raises where it happened, so a parallel CPU preload is no longer a hidden correctness hazard."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from codemods.specs import CpuMaxWorkersArgs
from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._attribution import Location
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import fired, ruled_out, runtime
from warp_fix.model import FIRED, RULED_OUT, SAFE, Finding, Fix, NotProposed, Proposal
from warp_fix.warp_releases import SAFE_PARALLEL_CPU_LOADS, holds
from warp_fix.wording import counted


@dataclass(frozen=True)
class ConcurrentLoads:
    """The load calls with several workers that can target the CPU: as the run made them, and as the scan sees
    them (a value it cannot read counts)."""

    sites: list[Location]
    static: list[Location]
    # calls made by code no fix edits (an installed package, Warp's own): each with the scope's reason
    outside: list[str] = field(default_factory=list)


class ConcurrentCpuLoad(Mechanism[ConcurrentLoads]):
    SLUG = "concurrent-cpu-load"
    CS = "CS-8"
    TITLE = "modules loaded concurrently on the CPU"
    SAFETY = (SAFE,)
    CODEMODS = ("cpu_max_workers",)

    def diagnose(self, inputs: Inputs) -> Finding[ConcurrentLoads]:
        risky = [c for c in inputs.report.trace.load_calls if _parallel(c.max_workers) and _may_be_cpu(c.devices)]
        static_risky = [
            p
            for p in inputs.index.preloads
            if inputs.scope.in_project(p)
            and p.max_workers is not None
            and (not p.max_workers.is_constant or _parallel(p.max_workers.value))
        ]
        if not risky:
            return ruled_out(self.SLUG, self.TITLE, "no load call used several workers on a device that can be the CPU")
        warp_version = inputs.report.warp_version
        if holds(SAFE_PARALLEL_CPU_LOADS, warp_version):
            return ruled_out(
                self.SLUG,
                self.TITLE,
                f"{counted(len(risky), 'load call')} with max_workers > 1 can target the CPU, safe on Warp "
                f"{warp_version}: {SAFE_PARALLEL_CPU_LOADS.evidence}",
            )
        sites = sorted({(inputs.repo_file(c.site.file), c.site.line) for c in risky if c.site})
        outside = sorted({
            f"{c.function}() at {Location.of(c.site, inputs)} is {inputs.scope.file(c.site.file).reason}"
            for c in risky if c.site and inputs.repo_file(c.site.file) is None
        })
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(len(risky), 'load call')} with max_workers > 1 can target the CPU",
            evidence=[
                runtime(f"{c.function}(max_workers={c.max_workers}, device={c.devices})", c.site, inputs)
                for c in risky
            ],
            facts=ConcurrentLoads(
                sites=[Location(f, line) for f, line in sites if f],
                static=[Location(p.file, p.line) for p in static_risky],
                outside=outside,
            ),
        )

    def propose(self, finding: Finding[ConcurrentLoads], inputs: Inputs) -> Iterator[Proposal]:
        for call in finding.facts.outside:
            yield NotProposed(finding.slug, f"{call}: not edited")
        by_file: dict[str, list[int]] = {}
        for site in finding.facts.sites:
            by_file.setdefault(site.file, []).append(site.line)
        for file, lines in by_file.items():
            yield Fix(
                id="",
                slug=finding.slug,
                title="Load modules one at a time where the CPU can be the device",
                description="Concurrent first loads on the CPU can report success and then fail with 'Failed to find "
                "module'; max_workers=1 keeps them sequential.",
                safety=SAFE,
                codemod="cpu_max_workers",
                places=(CpuMaxWorkersArgs(file=file, lines=sorted(lines)),),
                files=[file],
                lines=[f"{file}:{line}" for line in lines],
                expected="correctness: no concurrent first CPU load",
            )

    EXAMPLES = (
        Example(
            "wp.force_load(device=\"cpu\", max_workers=4) in the program, on Warp 1.16",
            case.run(
                builds=[case.build("sim")],
                load_calls=[case.load_call(["cpu"], 4, site=case.site("app.py", 8))],
                warp_version="1.16.0",
            ),
            FIRED,
            fixes=(("cpu_max_workers", SAFE),),
            places=((CpuMaxWorkersArgs(file="app.py", lines=[8]),),),
        ),
        Example(
            "the same program on Warp 1.17 or later: a failed parallel load raises where it happens",
            case.run(builds=[case.build("sim")], load_calls=[case.load_call(["cpu"], 4, site=case.site("app.py", 8))]),
            RULED_OUT,
            reason="safe on Warp 1.19.0",
        ),
        Example(
            "parallel loads on a CUDA device only",
            case.run(
                builds=[case.build("sim", device="cuda:0")],
                load_calls=[case.load_call(["cuda:0"], 4, site=case.site("app.py", 8))],
            ),
            RULED_OUT,
        ),
    )


def _parallel(workers) -> bool:
    return isinstance(workers, int) and workers > 1


def _may_be_cpu(devices: list[str]) -> bool:
    return any(d in ("None", "cpu") or d.startswith("cpu") for d in devices)
