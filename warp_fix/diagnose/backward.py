"""CS-10: adjoint code generated for modules no tape ever differentiates."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ruled_out, runtime, static
from warp_fix.findings import Finding

SLUG = "unused-backward"
TITLE = "backward (adjoint) code compiled but never used"


def diagnose(inputs: Inputs) -> Finding:
    trace = inputs.report.trace
    differentiated = {launch.module for launch in trace.launches if launch.adjoint}
    tape_files = {t.file for t in inputs.index.tapes if t.in_repo}
    tape_files |= {inputs.repo_file(t.site.file) for t in trace.tapes if t.site}
    launched_from = {}
    for launch in trace.launches:
        if launch.site:
            launched_from.setdefault(launch.module, set()).add(inputs.repo_file(launch.site.file))
    unused, kept = [], []
    final = {build.module: build for build in inputs.user_builds()}  # the options it ended up with
    for build in final.values():
        if not build.options.get("enable_backward"):
            continue
        near_tape = launched_from.get(build.module, set()) & tape_files
        if build.module in differentiated or near_tape:
            kept.append(build.module)
        elif build.module not in unused:
            unused.append(build.module)
    evidence = [runtime(f"{m}: differentiated by a tape, backward kept", None) for m in sorted(set(kept))]
    evidence += [static("wp.Tape used here", t.file, t.line) for t in inputs.index.tapes if t.in_repo]
    if not unused:
        return ruled_out(
            SLUG,
            TITLE,
            "every module with backward enabled is differentiated (or none has it)",
            evidence=evidence,
        )
    cost = sum(final[m].module_ms for m in unused)
    evidence += [runtime(f"{m}: backward enabled, no adjoint launch, no tape", None) for m in unused]
    return fired(
        SLUG,
        TITLE,
        f"{len(unused)} module(s) compile backward code nobody uses",
        evidence=evidence,
        cost_ms=cost,
        details={
            "modules": unused,
            "differentiated": sorted(set(kept)),
            "repo_uses_tape": bool(tape_files - {None}),
        },
    )
