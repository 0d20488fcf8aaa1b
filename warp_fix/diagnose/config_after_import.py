"""The trap: `wp.config.X = V` after the modules that should see it were created is silently ignored."""

from __future__ import annotations

from warp_fix.diagnose.common import Inputs, fired, ruled_out, runtime
from warp_fix.findings import Finding
from warp_fix.probe.inject._warp_fix_tracer import CREATION_TIME_OPTIONS  # the tracer's own list

SLUG = "config-after-import"
TITLE = "a wp.config setting made after the modules it should reach were created (silently ignored)"


def diagnose(inputs: Inputs) -> Finding:
    ignored = []
    evidence = []
    for change in inputs.report.trace.option_changes:
        if change.kind != "config":
            continue
        for key, value in change.values.items():
            stale = [m for m in change.modules_existing if not m.startswith("warp.")]
            if key in CREATION_TIME_OPTIONS and stale:
                evidence.append(
                    runtime(
                        f"wp.config.{key} = {value!r} after {', '.join(stale)} existed", change.site, inputs
                    )
                )
                ignored.append(
                    {
                        "key": key,
                        "value": value,
                        "modules": stale,
                        "file": inputs.repo_file(change.site.file) if change.site else None,
                        "line": change.site.line if change.site else None,
                        "function": change.site.function if change.site else None,
                    }
                )
    if not ignored:
        return ruled_out(
            SLUG, TITLE, "every wp.config option was set before the modules it reaches were created"
        )
    keys = sorted({item["key"] for item in ignored})
    return fired(
        SLUG,
        TITLE,
        f"wp.config.{', '.join(keys)} set too late: the existing modules ignore it",
        evidence=evidence,
        details={"ignored": ignored},
    )
