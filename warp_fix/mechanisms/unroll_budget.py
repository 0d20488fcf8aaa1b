"""CS-11: loop unrolling makes the generated source large; reported with its evidence, never changed."""

from __future__ import annotations

from collections.abc import Iterator

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import fired, ruled_out
from warp_fix.model import ADVISORY, FIRED, RULED_OUT, Finding, Fix, Proposal

LARGE_SOURCE = 1_000_000


class UnrollBudget(Mechanism):
    SLUG = "unroll-budget"
    CS = "CS-11"
    TITLE = "large generated source from loop unrolling"
    SAFETY = (ADVISORY,)
    CODEMODS = ()

    def diagnose(self, inputs: Inputs) -> Finding:
        summary = inputs.report.summary
        size = summary.generated_source_bytes if summary else 0
        unrolls = sorted({b.options.get("max_unroll") for b in inputs.user_builds()} - {None})
        if size < LARGE_SOURCE:
            return ruled_out(self.SLUG, self.TITLE, f"generated source is {size:,} bytes (< {LARGE_SOURCE:,})")
        return fired(
            self.SLUG,
            self.TITLE,
            f"{size:,} bytes of generated source at max_unroll {unrolls}: cutting it "
            "cut source 39% but gave no measured cold-start gain in a study; report only",
            details={"bytes": size, "max_unroll": unrolls},
        )

    def propose(self, finding: Finding, inputs: Inputs) -> Iterator[Proposal]:
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
            "1.5 MB of generated source",
            case.run(builds=[case.build("sim", options={"max_unroll": 16})], generated_source_bytes=1_500_000),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example("10 kB of generated source", case.run(builds=[case.build("sim")]), RULED_OUT),
    )

