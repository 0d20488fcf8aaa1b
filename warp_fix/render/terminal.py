"""Terminal views (rich) of a Report and a Comparison.

Text from data (commands, module names, dtypes such as `array[float32]`, option values) is escaped:
rich would read square brackets as markup and drop them.
"""

from __future__ import annotations

import shlex

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from warp_fix.compare import Comparison
from warp_fix.metrics import fmt_ms
from warp_fix.report import Report, Stat
from warp_fix.wording import counted

MAX_BUILD_ROWS = 30


def _ms(stat: Stat) -> str:
    return f"{stat.median:,.0f} ms ± {stat.mad:,.0f} (n={len(stat.values)})"


def print_report(report: Report, console: Console) -> None:
    command = escape(shlex.join(report.command))
    console.print(f"[bold]warp-fix measure[/] {command}  (Warp {escape(report.warp_version or '?')})")
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    summary = report.summary
    if summary is None:
        console.print("[red]no sample succeeded: nothing to report[/]")
        return
    table = Table(title="Summary", show_header=False, box=None)
    table.add_row("cold module work", _ms(summary.cold_module_ms))
    table.add_row("native compile", _ms(summary.native_compile_ms))
    table.add_row("cold wall / warm wall", f"{_ms(summary.cold_wall_ms)} / {_ms(summary.warm_wall_ms)}")
    elapsed = f"n/a ({summary.compile_elapsed_na})" if summary.compile_elapsed_na else _ms(summary.compile_elapsed_ms)
    table.add_row("compile elapsed (cold - warm)", elapsed)
    table.add_row("identities built / modules", f"{summary.identities} / {summary.modules}")
    table.add_row("generated source", f"{summary.generated_source_bytes:,} bytes")
    table.add_row("LTO artifacts", str(summary.lto_artifacts))
    table.add_row("warm builds (cache not reused)", str(summary.warm_builds))
    table.add_row("launches", str(report.trace.launch_count))
    if summary.kernel_ms is not None:
        kernel = summary.kernel_ms
        per_module = ", ".join(f"{t.module} {fmt_ms(t.ms)} ms/{t.launches}" for t in report.warm_trace.kernel_times)
        table.add_row(
            "steady-state kernel time (warm)",
            f"{fmt_ms(kernel.median)} ms ± {fmt_ms(kernel.mad)} (n={len(kernel.values)}): {escape(per_module)}",
        )
    if report.trace.cuda_toolkit:
        table.add_row("CUDA toolkit (Warp runtime)", report.trace.cuda_toolkit)
    console.print(table)
    _print_builds(report, console)
    _print_rebuilds(report, console)
    for line in direct_diagnoses(report):
        console.print(f"[bold magenta]diagnosis:[/] {escape(line)}")


def _print_builds(report: Report, console: Console) -> None:
    builds = sorted(report.trace.builds, key=lambda b: -b.module_ms)
    if not builds:
        return
    table = Table(title=f"Module builds, slowest first ({len(builds)})")
    for column in ("module", "hash", "device", "block_dim", "status", "ms", "native ms", "triggered at"):
        table.add_column(column, justify="right" if column in ("ms", "native ms", "block_dim") else "left")
    for build in builds[:MAX_BUILD_ROWS]:
        cells = (
            build.module,
            build.hash[:7],
            build.device,
            str(build.block_dim),
            build.status,
            f"{build.module_ms:,.0f}",
            f"{build.native_ms:,.0f}",
            str(build.site) if build.site else "",
        )
        table.add_row(*(escape(cell) for cell in cells))
    console.print(table)
    if len(builds) > MAX_BUILD_ROWS:
        console.print(f"... and {len(builds) - MAX_BUILD_ROWS} more (see --json)", markup=False)


def _print_rebuilds(report: Report, console: Console) -> None:
    if not report.rebuilds:
        console.print("why rebuilt: no module was built more than once")
        return
    console.print("[bold]Why rebuilt[/]")
    for rebuild in report.rebuilds:
        console.print(f"  {escape(rebuild.line())}  [dim]{rebuild.module_ms:,.0f} ms[/]")


def direct_diagnoses(report: Report) -> list[str]:
    """Conclusions the measurement supports on its own, before any planning."""
    summary = report.summary
    lines = []
    if summary is None:
        return lines
    if summary.warm_builds:
        lines.append(
            f"cache not reused: the warm run still compiled {counted(summary.warm_builds, 'module')} "
            f"({summary.warm_module_ms.median:,.0f} ms)"
        )
    native = summary.native_compile_ms.median
    module = summary.cold_module_ms.median
    if summary.lto_artifacts and module > 0 and native < 0.5 * module:
        lines.append(
            f"link-dominated build: {summary.lto_artifacts} LTO artifacts and only "
            f"{100 * native / module:.0f}% of module time in the native compiler"
        )
    overlap = overlap_factor(report)
    if summary.warm_builds == 0 and overlap > 1.2:
        lines.append(f"builds overlapped: summed module time is {overlap:.1f}x the time spent building")
    return lines


def overlap_factor(report: Report) -> float:
    """Summed build time over the union of build intervals: > 1 only when builds really ran at once."""
    intervals = sorted((b.t_ms, b.t_ms + b.module_ms) for b in report.trace.builds)
    if not intervals:
        return 1.0
    union, (start, end) = 0.0, intervals[0]
    for s, e in intervals[1:]:
        if s > end:
            union += end - start
            start, end = s, e
        else:
            end = max(end, e)
    union += end - start
    total = sum(e - s for s, e in intervals)
    return total / union if union > 0 else 1.0


def print_comparison(comparison: Comparison, console: Console) -> None:
    colour = {"IMPROVED": "green", "INCONCLUSIVE": "yellow"}.get(comparison.verdict, "red")
    for name, (before, after) in comparison.structure.items():
        console.print(f"  {name}: {before:,} -> {after:,}", markup=False)
    for delta in comparison.timing:
        console.print(f"  {delta.line()}", markup=False)
    workload = {True: "same", False: "CHANGED", None: "unverifiable"}[comparison.workload_same]
    output = {True: "same", False: "CHANGED", None: "not compared"}[comparison.output_same]
    console.print(f"  workload: {workload}; output: {output}")
    for old, new in comparison.renames:
        console.print(f"  kernel key renamed: {old} -> {new}", markup=False)
    for note in comparison.notes:
        console.print(f"  note: {note}", markup=False)
    console.print(f"[bold {colour}]{comparison.verdict}[/]: " + escape("; ".join(comparison.reasons)))
