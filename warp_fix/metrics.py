"""The measured quantities, defined once.

Each `Metric` knows its `Summary` field, its commit trailer, the label a person reads and its unit; lower is
better for every one. compare judges them, the commit records them, `warp-fix log` totals and shows them: all by
iterating these tables, so a metric added here reaches every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass


def fmt_ms(value: float) -> str:
    """Whole milliseconds for build times; three significant digits below 100 ms (kernel times)."""
    return f"{value:.0f}" if abs(value) >= 100 or value == 0 else f"{value:.3g}"


@dataclass(frozen=True)
class Metric:
    field: str  # the Summary attribute it is read from (and the key of Comparison.structure)
    trailer: str | None  # the commit trailer key after "Warp-Fix-"; None: not recorded in commits
    label: str  # what a person reads
    unit: str  # "ms", "bytes", or "" for a count
    timing: bool  # noisy, judged against a noise band; else structural: deterministic, and it decides first
    in_cache_dir: bool = False  # counted from the files the run left in its kernel cache directory

    def format(self, value: float) -> str:
        """A value as the trailers and `log` write it: milliseconds to useful precision, counts whole."""
        return fmt_ms(value) if self.timing else f"{value:.0f}"


IDENTITIES = Metric("identities", "Identities", "module identities built", "", timing=False)
SOURCE_BYTES = Metric(
    "generated_source_bytes", "Source-Bytes", "generated source bytes", "bytes", timing=False, in_cache_dir=True
)
LTO_ARTIFACTS = Metric("lto_artifacts", "LTO-Artifacts", "LTO artifacts", "", timing=False, in_cache_dir=True)
# MathDx builds counted as events of the cold run: a clear_lto_cache() in the run that makes a later module link
# the same GEMM again leaves the artifacts at exit unchanged, but not this count.
LTO_BUILDS = Metric("lto_builds", "LTO-Builds", "MathDx LTO builds", "", timing=False)
WARM_BUILDS = Metric("warm_builds", "Warm-Builds", "warm builds", "", timing=False)
# Per kernel, not a share of the run: turning backward off in one small module moves it even beside a large library.
ADJOINT_KERNELS = Metric("adjoint_kernels", "Adjoint-Kernels", "kernels compiled with adjoint code", "", timing=False)

COLD_MODULE = Metric("cold_module_ms", "Cold-Module-Ms", "cold module work", "ms", timing=True)
# The loading threads' CPU time over the same builds: two busy neighbours on the machine stretch the wall-clock
# module work, not this. It decides whether a wall-clock slowdown contradicts a structural win (compare.py).
COLD_CPU = Metric("cold_module_cpu_ms", "Cold-Module-Cpu-Ms", "cold module CPU time", "ms", timing=True)
COMPILE_ELAPSED = Metric("compile_elapsed_ms", "Compile-Elapsed-Ms", "compile elapsed", "ms", timing=True)
# Reported next to the startup verdict, never part of it: a fix that trades build time for kernel time
# (MathDx off) is offered with both numbers and kept only with consent.
KERNEL = Metric("kernel_ms", "Kernel-Ms", "steady-state kernel time", "ms", timing=True)
# Judged only when the warm run's builds alone changed; not a commit trailer.
WARM_MODULE = Metric("warm_module_ms", None, "warm module work", "ms", timing=True)

STRUCTURE = (IDENTITIES, SOURCE_BYTES, LTO_ARTIFACTS, LTO_BUILDS, WARM_BUILDS, ADJOINT_KERNELS)
TIMING = (COLD_MODULE, COLD_CPU, COMPILE_ELAPSED, KERNEL, WARM_MODULE)
# What a commit records, in the order its trailers list them.
TRAILED = tuple(m for m in (*TIMING, *STRUCTURE) if m.trailer)
