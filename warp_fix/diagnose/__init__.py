"""Diagnosis: every mechanism of WARP_FACTS.md, each a small module with one `diagnose(Inputs) -> Finding`."""

from __future__ import annotations

from collections.abc import Callable

from warp_fix.diagnose import (
    advisory,
    backward,
    block_dim,
    cache,
    concurrent_cpu_load,
    config_after_import,
    granular,
    kernel_after_load,
    late_options,
    mathdx,
    overloads,
    serial,
    unique,
)
from warp_fix.diagnose.common import Inputs
from warp_fix.findings import Finding
from warp_fix.report import Report
from warp_fix.scan import SourceIndex

DIAGNOSES: tuple[Callable[[Inputs], Finding], ...] = (
    kernel_after_load.diagnose,
    cache.diagnose,
    late_options.diagnose,
    config_after_import.diagnose,
    granular.diagnose,
    block_dim.diagnose,
    overloads.diagnose,
    mathdx.diagnose,
    concurrent_cpu_load.diagnose,
    unique.diagnose,
    backward.diagnose,
    advisory.diagnose_unroll,
    advisory.diagnose_precompiled_header,
    serial.diagnose,
)


def diagnose_all(report: Report, index: SourceIndex) -> list[Finding]:
    """One Finding per mechanism, in the order of the mechanism table."""
    inputs = Inputs(report, index)
    return [diagnose(inputs) for diagnose in DIAGNOSES]


__all__ = ["DIAGNOSES", "Inputs", "diagnose_all"]
