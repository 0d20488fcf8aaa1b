"""CS-11: a raised loop-unrolling budget makes the generated source large; reported, never changed.

Only the run's total generated source is measured, not each module's, so the size alone says nothing about
unrolling: 25 library modules of warp.fem reach a megabyte at Warp's default budget. The finding fires only when
the repository's own modules were built with `max_unroll` above Warp's default, the one part of the size the
repository chose; it stays report-only because cutting the budget cut source 39% with no measured cold gain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import fired, ruled_out
from warp_fix.model import ADVISORY, FIRED, RULED_OUT, Finding, Fix, Proposal
from warp_fix.report import ModuleBuild

LARGE_SOURCE = 1_000_000
WARP_DEFAULT_MAX_UNROLL = 16  # warp.config.max_unroll in every Warp release this tool supports


def _repository_builds(inputs: Inputs) -> list[ModuleBuild]:
    """Builds with a kernel defined in the repository: library modules' unrolling is not the repository's."""
    return [b for b in inputs.user_builds() if any(inputs.repo_file(k.file) for k in b.kernel_sources)]


@dataclass(frozen=True)
class RaisedUnroll:
    """The run's generated source size and the repository modules built with max_unroll above Warp's default."""

    bytes: int
    max_unroll: dict[str, int]  # module -> its max_unroll


class UnrollBudget(Mechanism[RaisedUnroll]):
    SLUG = "unroll-budget"
    CS = "CS-11"
    TITLE = "large generated source from a raised unroll budget"
    SAFETY = (ADVISORY,)
    CODEMODS = ()

    def diagnose(self, inputs: Inputs) -> Finding[RaisedUnroll]:
        summary = inputs.report.summary
        size = summary.generated_source_bytes if summary else 0
        if size < LARGE_SOURCE:
            return ruled_out(self.SLUG, self.TITLE, f"generated source is {size:,} bytes (< {LARGE_SOURCE:,})")
        raised = {
            b.module: b.options["max_unroll"]
            for b in _repository_builds(inputs)
            if (b.options.get("max_unroll") or 0) > WARP_DEFAULT_MAX_UNROLL
        }
        if not raised:
            return ruled_out(
                self.SLUG,
                self.TITLE,
                f"{size:,} bytes of generated source over {len(inputs.report.trace.builds)} builds, but no "
                f"repository module raises max_unroll above Warp's default {WARP_DEFAULT_MAX_UNROLL}: "
                "the size is not the unroll budget's doing",
            )
        listed = ", ".join(f"{module} (max_unroll {value})" for module, value in sorted(raised.items()))
        return fired(
            self.SLUG,
            self.TITLE,
            f"{size:,} bytes of generated source; repository modules unroll beyond Warp's default "
            f"{WARP_DEFAULT_MAX_UNROLL}: {listed}. Cutting the budget cut source 39% but gave no measured "
            "cold-start gain in a study; report only",
            facts=RaisedUnroll(size, raised),
        )

    def propose(self, finding: Finding[RaisedUnroll], inputs: Inputs) -> Iterator[Proposal]:
        yield Fix(
            id="",
            slug=finding.slug,
            title=finding.title[:1].upper() + finding.title[1:],
            description=finding.reason,
            safety=ADVISORY,
            codemod=None,
            expected="report only: measure both ways before changing it",
        )

    EXAMPLES = (
        Example(
            "1.5 MB of generated source, the repository's module at max_unroll 64",
            case.run(
                builds=[
                    case.sourced(case.build("sim", options={"max_unroll": 64}), case.kernel_source("step", "sim.py"))
                ],
                generated_source_bytes=1_500_000,
            ),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example(
            "1.5 MB of generated source at Warp's default max_unroll: nothing points at unrolling",
            case.run(
                builds=[
                    case.sourced(case.build("sim", options={"max_unroll": 16}), case.kernel_source("step", "sim.py"))
                ],
                generated_source_bytes=1_500_000,
            ),
            RULED_OUT,
        ),
        Example(
            "1.5 MB, max_unroll raised only for a module whose kernels live outside the repository",
            case.run(
                builds=[
                    case.sourced(
                        case.build("lib.solver", options={"max_unroll": 64}),
                        case.kernel_source("solve", "/site-packages/lib/solver.py"),
                    ),
                    case.sourced(case.build("sim"), case.kernel_source("step", "sim.py")),
                ],
                generated_source_bytes=1_500_000,
            ),
            RULED_OUT,
        ),
        Example(
            "10 kB of generated source",
            case.run(
                builds=[
                    case.sourced(case.build("sim", options={"max_unroll": 64}), case.kernel_source("step", "sim.py"))
                ]
            ),
            RULED_OUT,
        ),
    )
