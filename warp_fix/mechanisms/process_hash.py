"""A module whose hash changes from one process to the next: no cache is ever reused for it; reported, never changed.

The probe runs the warm repeat under another PYTHONHASHSEED than the cold run (warp_fix.probe.hash_drift).
Seen in the field: kernel names or constants derived from Python's salted `hash()` or `id()`, code generated in
set order. Every start then misses the kernel cache, and a shared or baked cache only grows. The fix is the
user's choice of a stable value (hashlib of the name, a counter, sorted iteration), so it is advisory: the
finding names the module, the first generated line that differs between the two processes and the Python
line Warp's codegen says produced it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import fired, ruled_out, runtime
from warp_fix.model import ADVISORY, FIRED, RULED_OUT, Finding, Fix, Proposal
from warp_fix.report import HashDrift, Site
from warp_fix.wording import counted


@dataclass(frozen=True)
class DriftingModules:
    """The modules whose hash moved between two processes, with where it moved first."""

    drifts: list[HashDrift]


def _with_drifts(inputs: Inputs, drifts: list[HashDrift]) -> Inputs:
    return Inputs(dataclasses.replace(inputs.report, hash_drifts=drifts), inputs.index)


class ProcessHash(Mechanism[DriftingModules]):
    SLUG = "process-hash"
    CS = None  # seen in the field after WARP_FACTS.md's table of thirteen
    TITLE = "a module hash that changes from one process to the next"
    SAFETY = (ADVISORY,)
    CODEMODS = ()

    def diagnose(self, inputs: Inputs) -> Finding[DriftingModules]:
        drifts = inputs.report.hash_drifts
        if not drifts:
            return ruled_out(
                self.SLUG, self.TITLE, "every module the warm run built under another hash seed kept its hash"
            )
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(len(drifts), 'module')} changed hash between two processes ({_names(drifts)}): "
            "every start misses the kernel cache",
            evidence=[runtime(_detail(d), d.site, inputs) for d in drifts],
            cost_ms=sum(b.module_ms for b in inputs.report.warm_trace.builds if b.module in _modules(drifts)),
            extra_builds=len(drifts),
            facts=DriftingModules(drifts=list(drifts)),
        )

    def propose(self, finding: Finding[DriftingModules], inputs: Inputs) -> Iterator[Proposal]:
        for drift in finding.facts.drifts:
            where = (
                f"{inputs.repo_file(drift.site.file) or drift.site.file}:{drift.site.line}" if drift.site else "?"
            )
            yield Fix(
                id="",
                slug=finding.slug,
                title=f"Give {drift.module} a hash that does not depend on the process",
                description=f"{_detail(drift)}. A value from Python's salted hash() or id(), or set order, differs "
                f"in every process; derive it from something stable (hashlib of the name, a counter, sorted "
                f"iteration), or pin PYTHONHASHSEED for the application.",
                safety=ADVISORY,
                codemod=None,
                lines=[where] if drift.site else [],
                expected="warm starts reuse the kernel cache for this module (untested estimate)",
            )

    EXAMPLES = (
        Example(
            "a kernel named from hash(name): the warm run, under another seed, built the module again",
            _with_drifts(
                case.run(builds=[case.build("shading.curves")]),
                [
                    HashDrift(
                        "shading.curves", "cpu", None, "b3f983c", "51cd53b", 12,
                        "void curve_271828_cpu_kernel_forward(", "void curve_314159_cpu_kernel_forward(",
                        "curve_271828", Site("shading/curves.py", 8, "apply_curve"),
                    )
                ],
            ),
            FIRED,
            fixes=((None, ADVISORY),),
            reason="1 module changed hash",
        ),
        Example(
            "the same modules under both seeds",
            case.run(builds=[case.build("shading.curves")]),
            RULED_OUT,
        ),
    )


def _modules(drifts: list[HashDrift]) -> set[str]:
    return {d.module for d in drifts}


def _names(drifts: list[HashDrift]) -> str:
    return ", ".join(sorted(_modules(drifts)))


def _detail(drift: HashDrift) -> str:
    if not drift.generated_line:
        return f"{drift.module}: {drift.cold_hash[:7]} in one process, {drift.warm_hash[:7]} in the next"
    return (
        f"{drift.module}: {drift.cold_hash[:7]} in one process, {drift.warm_hash[:7]} in the next; generated line "
        f"{drift.generated_line} `{drift.cold_text}` became `{drift.warm_text}`"
        + (f" (kernel {drift.kernel})" if drift.kernel else "")
    )
