"""CS-12: precompiled headers turned off make every module compile Warp's headers; reported, never changed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from warp_fix.mechanisms import _situation as case
from warp_fix.mechanisms._base import Example, Inputs, Mechanism
from warp_fix.mechanisms._common import fired, first_option_source, option_origin, ruled_out, runtime
from warp_fix.model import ADVISORY, FIRED, RULED_OUT, Finding, Fix, NotProposed, Proposal
from warp_fix.scan.index import ConfigAssignment, Value
from warp_fix.warp_releases import PRECOMPILED_HEADER_OPTION, holds
from warp_fix.wording import counted


@dataclass(frozen=True)
class Assignment:
    """A `wp.config.use_precompiled_headers = False` of the repository."""

    file: str
    line: int
    function: str | None


@dataclass(frozen=True)
class HeadersOff:
    assignments: list[Assignment]


class PrecompiledHeader(Mechanism[HeadersOff]):
    SLUG = "precompiled-header"
    CS = "CS-12"
    TITLE = "precompiled headers turned off"
    SAFETY = (ADVISORY,)
    CODEMODS = ()

    def diagnose(self, inputs: Inputs) -> Finding[HeadersOff]:
        """CPU builds always use the precompiled header; CUDA builds only below toolkit 13 (13 ignores the knob)."""
        off = [b for b in inputs.user_builds() if b.options.get("use_precompiled_headers") is False]
        if not off and not holds(PRECOMPILED_HEADER_OPTION, inputs.report.warp_version):
            return ruled_out(
                self.SLUG,
                self.TITLE,
                f"Warp {inputs.report.warp_version or '?'} records no precompiled-header option (from "
                f"{PRECOMPILED_HEADER_OPTION.release} on): {PRECOMPILED_HEADER_OPTION.evidence}",
            )
        if not off:
            return ruled_out(self.SLUG, self.TITLE, "precompiled headers are on (the default)")
        toolkit = inputs.report.trace.cuda_toolkit
        if all(b.device.startswith("cuda") for b in off) and toolkit_at_least(toolkit, 13):
            return ruled_out(
                self.SLUG,
                self.TITLE,
                f"{counted(len(off), 'CUDA build')} ran without precompiled headers, but CUDA toolkit {toolkit} "
                "ignores the setting: nothing to gain",
            )
        # where the value came from, as each build recorded it (a wp.config line set before any module existed
        # leaves no option change behind)
        sites = {
            (source.site.file, source.site.line): source.site
            for b in off
            if (source := b.option_source("use_precompiled_headers")).site is not None
        }
        sites.update(
            {
                (c.site.file, c.site.line): c.site
                for c in inputs.report.trace.option_changes
                if c.kind == "config" and "use_precompiled_headers" in c.values and c.site is not None
            }
        )
        assignments = inputs.index.config_assignments_for("use_precompiled_headers")
        static = [a for a in assignments if inputs.scope.in_project(a)]
        source = first_option_source(inputs, off[0].module, "use_precompiled_headers")
        by_config = source is not None and source.kind == "config"
        return fired(
            self.SLUG,
            self.TITLE,
            f"{counted(len(off), 'build')} ran without precompiled headers"
            + (f" (set by {option_origin(inputs, off[0].module, 'use_precompiled_headers')})" if by_config else ""),
            evidence=[runtime("wp.config.use_precompiled_headers = False", site, inputs) for site in sites.values()],
            facts=HeadersOff([Assignment(a.file, a.line, a.function) for a in static]),
        )

    def propose(self, finding: Finding[HeadersOff], inputs: Inputs) -> Iterator[Proposal]:
        for item in finding.facts.assignments:
            yield Fix(
                id="",
                slug=finding.slug,
                title="Restore precompiled headers",
                description=f"wp.config.use_precompiled_headers = False at {item.file}:{item.line} makes every "
                "CPU module (and, below CUDA toolkit 13, every CUDA module) compile Warp's headers from scratch; "
                "remove it unless a measurement justifies it.",
                safety=ADVISORY,
                codemod=None,
                files=[item.file],
                lines=[f"{item.file}:{item.line}"],
                expected="untested estimate: most of the per-module native compile time on CPU",
            )
        if not finding.facts.assignments:
            yield NotProposed(
                finding.slug,
                "no statement of the repository sets wp.config.use_precompiled_headers = False "
                "(an installed package or the environment does): nothing of the project to change",
            )

    EXAMPLES = (
        Example(
            "the same setting on Warp 1.12: no build records the option, nothing is claimed",
            case.run(builds=[case.build("sim")], warp_version="1.12.1"),
            RULED_OUT,
            reason="records no precompiled-header option",
        ),
        Example(
            "wp.config.use_precompiled_headers = False in the repository, CPU builds",
            case.run(
                builds=[case.build("sim", options={"use_precompiled_headers": False})],
                source=case.index(
                    files=["app.py"],
                    config_assignments=[
                        ConfigAssignment(
                            file="app.py", line=3, key="use_precompiled_headers", value=Value("False", True, False)
                        )
                    ],
                ),
            ),
            FIRED,
            fixes=((None, ADVISORY),),
        ),
        Example(
            "precompiled headers off, but no statement of the repository turns them off",
            case.run(builds=[case.build("sim", options={"use_precompiled_headers": False})]),
            FIRED,
            fixes=(),
            declined="nothing of the project to change",
        ),
        Example(
            "CUDA builds without precompiled headers on toolkit 13, which ignores the setting",
            case.run(
                builds=[case.build("sim", device="cuda:0", options={"use_precompiled_headers": False})],
                cuda_toolkit="13.0",
            ),
            RULED_OUT,
        ),
        Example("precompiled headers on (the default)", case.run(builds=[case.build("sim")]), RULED_OUT),
    )


def toolkit_at_least(version: str, major: int) -> bool:
    """True when a "major.minor" toolkit version is known and at least `major`."""
    head = version.split(".", 1)[0]
    return head.isdigit() and int(head) >= major
