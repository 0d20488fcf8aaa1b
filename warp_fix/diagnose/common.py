"""What every diagnosis reads: the Report and the SourceIndex, joined on repo-relative sites."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from warp_fix.findings import FIRED, NOT_APPLICABLE, RULED_OUT, Evidence, Finding
from warp_fix.report import ModuleBuild, Rebuild, Report, Site
from warp_fix.scan import SourceIndex


@dataclass
class Inputs:
    """The one argument of every `diagnose`: the runtime report and the static index."""

    report: Report
    index: SourceIndex

    @property
    def on_cpu_only(self) -> bool:
        return all(b.device.startswith("cpu") for b in self.report.trace.builds)

    def repo_file(self, file: str) -> str | None:
        """A report path (relative to the measured cwd, or absolute) as a repo-relative path, if inside."""
        path = Path(file) if os.path.isabs(file) else Path(self.report.cwd) / file
        root = os.path.realpath(self.index.root)
        real = os.path.realpath(path)
        if real == root or not real.startswith(root + os.sep):
            return None
        return Path(os.path.relpath(real, root)).as_posix()

    def rebuilds_because(self, kind: str) -> list[Rebuild]:
        return [r for r in self.report.rebuilds if any(reason.kind == kind for reason in r.reasons)]

    def user_builds(self) -> list[ModuleBuild]:
        return [
            b for b in self.report.trace.builds if not b.module.startswith("warp.") and b.status != "error"
        ]


def runtime(detail: str, site: Site | None, inputs: Inputs | None = None) -> Evidence:
    if site is None:
        return Evidence("runtime", detail)
    file = (inputs.repo_file(site.file) if inputs else None) or site.file
    return Evidence("runtime", detail, file, site.line)


def static(detail: str, file: str, line: int) -> Evidence:
    return Evidence("static", detail, file, line)


def fired(slug: str, title: str, reason: str, **kwargs) -> Finding:
    return Finding(slug, FIRED, title, reason, **kwargs)


def ruled_out(slug: str, title: str, reason: str, **kwargs) -> Finding:
    return Finding(slug, RULED_OUT, title, reason, **kwargs)


def not_applicable(slug: str, title: str, reason: str) -> Finding:
    return Finding(slug, NOT_APPLICABLE, title, reason)


def ms(value: float) -> str:
    return f"{value:,.0f} ms"
