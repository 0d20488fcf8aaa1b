"""`measure`: cold and warm runs of a command in private caches, folded into a Report."""

from __future__ import annotations

import os
import shlex
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from warp_fix.probe.hash_drift import hash_drifts, hash_seeds
from warp_fix.probe.inventory import take_inventory
from warp_fix.probe.keyuses import kernel_key_uses
from warp_fix.probe.logparse import builds_from_log
from warp_fix.probe.output import merge_profiles
from warp_fix.probe.runner import ProbeError, ProcessRun, Sandbox, run_process
from warp_fix.probe.stats import stat
from warp_fix.probe.trace_file import TraceFacts, read_trace
from warp_fix.probe.why import explain_rebuilds
from warp_fix.report import (
    SCHEMA_VERSION,
    CacheDirEvidence,
    HashDrift,
    ModuleBuild,
    Output,
    Report,
    Sample,
    Stat,
    Summary,
    Trace,
)
from warp_fix.wording import counted


@dataclass(frozen=True)
class SampleStarted:
    """Progress of `measure`: cold+warm sample `index` (from 1) of `total` starts now."""

    label: str | None  # the measurement's label ("baseline", "accepted"...), None when unlabelled
    index: int
    total: int

    def line(self) -> str:
        return f"sample {self.index}/{self.total}"


Progress = Callable[[SampleStarted], None]


@dataclass
class RunPair:
    """One sample: the cold run, the warm run on the cache it filled, and their traces."""

    sample: Sample
    cold: ProcessRun
    warm: ProcessRun | None
    cold_trace: Trace
    warm_trace: Trace
    facts: TraceFacts
    outside_caches: list[str]
    cache_dirs: CacheDirEvidence
    hash_drifts: list[HashDrift]


def measure(
    command: list[str],
    cwd: Path,
    samples: int = 3,
    timeout: float | None = None,
    label: str | None = None,
    progress: Progress | None = None,
    env: dict[str, str] | None = None,
    kernel_timing: bool = False,
) -> Report:
    """Measure `command` `samples` times; raise ProbeError when the baseline itself fails.

    `kernel_timing` also records the steady-state time of the kernels themselves (it adds work to every
    launch, so it is off unless a fix trades build time for kernel time).
    """
    if not command:
        raise ProbeError("no command given (put it after --)")
    cwd = Path(cwd).resolve()
    if not cwd.is_dir():
        raise ProbeError(f"working directory does not exist: {cwd}")
    pairs: list[RunPair] = []
    for index in range(samples):
        if progress:
            progress(SampleStarted(label, index + 1, samples))
        base_env = dict(env or os.environ)
        if kernel_timing:
            base_env["WARP_FIX_KERNEL_TIMING"] = "1"
        pair = _run_sample(index, command, cwd, timeout, base_env)
        if index == 0:
            _check_baseline(command, pair)
        pairs.append(pair)
    return build_report(command, cwd, label, pairs)


def _run_sample(index: int, command, cwd: Path, timeout, base_env) -> RunPair:
    sandbox = Sandbox(Path(tempfile.mkdtemp(prefix="warp-fix-")))
    try:
        replace = {str(sandbox.root).encode(): b"<private>"}
        cold_seed, warm_seed = hash_seeds(base_env)  # two processes, as two starts of the app are
        t0 = time.time()
        since = time.time()
        cold_dir = sandbox.trace_dir("cold")
        cold = run_process(
            command, cwd, {**sandbox.environment(base_env, cold_dir, t0), **cold_seed}, cold_dir, timeout, replace
        )
        cold_trace, facts = _trace(cold, cwd)
        cold_cache = _cache_dir_used(cold_trace)
        cold_cache_exists = cold_cache is not None and os.path.isdir(cold_cache)
        inventory = take_inventory(cold_trace, sandbox.root, since)
        key_uses = kernel_key_uses(cold_trace)
        warm = None
        warm_trace = Trace()
        if cold.exit_code == 0:
            warm_dir = sandbox.trace_dir("warm")
            t0 = time.time()
            warm = run_process(
                command, cwd, {**sandbox.environment(base_env, warm_dir, t0), **warm_seed}, warm_dir, timeout, replace
            )
            warm_trace, _ = _trace(warm, cwd)
        warm_cache = _cache_dir_used(warm_trace)
        cache_dirs = cache_dir_evidence(
            cold_cache, cold_cache_exists, warm_cache, warm_cache is not None and os.path.isdir(warm_cache), sandbox
        )
        sample = _sample(index, cold, warm, cold_trace, warm_trace, inventory, key_uses)
        drifts = hash_drifts(cold_trace, warm_trace, sandbox.warp_cache)
        return RunPair(sample, cold, warm, cold_trace, warm_trace, facts, inventory.outside_dirs, cache_dirs, drifts)
    finally:
        sandbox.remove()


def _cache_dir_used(trace: Trace) -> str | None:
    """The kernel cache directory of the run's last build (where a later run would look)."""
    dirs = [b.cache_dir for b in trace.builds if b.cache_dir and b.cache_dir != "None"]
    return dirs[-1] if dirs else None


def cache_dir_evidence(
    cold: str | None, cold_exists: bool, warm: str | None, warm_exists: bool, sandbox: Sandbox
) -> CacheDirEvidence:
    """Per-run cache, from the runs themselves: the cold and warm runs used different directories, or
    the cold run's directory was gone once it exited (a `mkdtemp` + `atexit` cleanup, whatever made it)."""

    def private(path: str | None) -> str | None:
        return None if path is None else path.replace(str(sandbox.root), "<private>")

    return CacheDirEvidence(
        cold=private(cold),
        warm=private(warm),
        cold_exists_after=cold_exists,
        warm_exists_after=warm_exists,
        per_run=cold is not None and (not cold_exists or (warm is not None and warm != cold)),
    )


def _trace(run: ProcessRun, cwd: Path) -> tuple[Trace, TraceFacts]:
    trace, facts = read_trace(run.trace_dir, cwd)
    if (not trace.builds and run.stdout.log_lines) or not facts.tracer_started:
        trace.builds = builds_from_log(run.stdout.log_lines)
        trace.tracer_mode = "log"
    return trace, facts


def _sample(
    index, cold: ProcessRun, warm, cold_trace: Trace, warm_trace: Trace, inventory, key_uses: dict[str, int]
) -> Sample:
    error = None
    if cold.timed_out or (warm is not None and warm.timed_out):
        error = "timed out"
    elif cold.exit_code != 0:
        error = f"cold run exited {cold.exit_code}"
    elif warm is None or warm.exit_code != 0:
        error = f"warm run exited {None if warm is None else warm.exit_code}"
    elif warm.stdout.sha256 != cold.stdout.sha256:
        error = None  # output nondeterminism is judged over all samples, not per sample
    good_builds = [b for b in cold_trace.builds if b.status != "error"]
    return Sample(
        index=index,
        ok=error is None,
        error=error,
        cold_wall_ms=round(cold.wall_ms, 3),
        warm_wall_ms=round(warm.wall_ms, 3) if warm else 0.0,
        cold_module_ms=round(sum(b.module_ms for b in cold_trace.builds), 3),
        warm_module_ms=round(sum(b.module_ms for b in warm_trace.builds), 3),
        native_compile_ms=round(sum(b.native_ms for b in cold_trace.builds), 3),
        cold_exit=cold.exit_code,
        warm_exit=warm.exit_code if warm else None,
        stdout_sha256=cold.stdout.sha256,
        identities=len({(b.module, b.hash, b.device) for b in good_builds}),
        generated_source_bytes=inventory.generated_source_bytes,
        lto_artifacts=inventory.lto_artifacts,
        warm_builds=sum(1 for b in warm_trace.builds if b.status == "compiled"),
        kernel_ms=round(sum(t.ms for t in warm_trace.kernel_times), 4) if warm_trace.kernel_times else None,
        kernel_key_uses=key_uses,
        lto_builds=sum(1 for event in cold_trace.lto_builds if event.compiled is not False),
        adjoint_kernels=sum(
            b.adjoint_kernels or 0 for b in {(b.module, b.hash, b.device): b for b in good_builds}.values()
        ),
        cold_module_cpu_ms=_cpu_ms(cold_trace.builds),
    )


def _cpu_ms(builds: list[ModuleBuild]) -> float | None:
    """The builds' summed CPU time, or None when a build has none recorded."""
    if any(b.module_cpu_ms is None for b in builds):
        return None
    return round(sum(b.module_cpu_ms or 0.0 for b in builds), 3)


def _check_baseline(command: list[str], pair: RunPair) -> None:
    cold = pair.cold
    name = shlex.join(command)
    if cold.timed_out:
        raise ProbeError(f"the command timed out at baseline: {name}")
    stderr = cold.stderr_tail
    if cold.exit_code != 0:
        if "No module named 'warp'" in stderr or 'No module named "warp"' in stderr:
            interpreter = pair.facts.executables[0] if pair.facts.executables else command[0]
            raise ProbeError(f"Warp is not importable in the target interpreter ({interpreter})")
        raise BaselineFailed(cold.exit_code, stderr)
    if pair.facts.tracer_started and not pair.facts.warp_imported:
        raise ProbeError(f"the command never imported warp: {name}")


class BaselineFailed(ProbeError):
    """The command fails on its own: nothing can be measured."""

    def __init__(self, exit_code: int | None, stderr_tail: str):
        last = [line for line in stderr_tail.strip().splitlines() if line.strip()]
        super().__init__(
            f"the command failed at baseline (exit {exit_code}): {last[-1] if last else 'no stderr'}"
        )
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


def build_report(command: list[str], cwd: Path, label: str | None, pairs: list[RunPair]) -> Report:
    good = [p for p in pairs if p.sample.ok]
    first = good[0] if good else pairs[0]
    warnings = _warnings(pairs, good, first)
    summary = _summary(good) if good else None
    trace = first.cold_trace
    runs = [r for p in good for r in (p.cold, p.warm) if r is not None]
    profile = merge_profiles([r.stdout.profile() for r in runs], [r.stdout.head for r in runs]) if runs else None
    devices = {b.device.split(":")[0] for b in trace.builds}
    return Report(
        schema_version=SCHEMA_VERSION,
        command=list(command),
        cwd=str(cwd),
        label=label,
        warp_version=trace.warp_version,
        backend="mixed" if len(devices) > 1 else (devices.pop() if devices else "cpu"),
        samples=[p.sample for p in pairs],
        summary=summary,
        trace=trace,
        warm_trace=first.warm_trace,
        rebuilds=explain_rebuilds(trace),
        output=Output(
            sha256=first.cold.stdout.sha256,
            head=first.cold.stdout.head,
            bytes=first.cold.stdout.bytes,
            exit_code=first.cold.exit_code,
            deterministic=None if not good else len({r.stdout.sha256 for r in runs}) == 1,
            profile=profile,
        ),
        warnings=warnings,
        cache_dir_evidence=first.cache_dirs,
        hash_drifts=first.hash_drifts,
    )


def _summary(good: list[RunPair]) -> Summary:
    samples = [p.sample for p in good]
    first = good[0]
    return Summary(
        **timing_stats(samples),
        identities=first.sample.identities,
        modules=len({b.module for b in first.cold_trace.builds}),
        generated_source_bytes=first.sample.generated_source_bytes,
        lto_artifacts=first.sample.lto_artifacts,
        warm_builds=first.sample.warm_builds,
        kernel_key_uses=first.sample.kernel_key_uses,
        lto_builds=first.sample.lto_builds,
        adjoint_kernels=first.sample.adjoint_kernels,
    )


def timing_stats(samples: list[Sample]) -> dict[str, Stat | str | None]:
    """The Summary's timing fields over good samples (kernel time: None when kernel timing was off)."""
    kernel = [s.kernel_ms for s in samples if s.kernel_ms is not None]
    cpu = [s.cold_module_cpu_ms for s in samples]
    elapsed, elapsed_na = compile_elapsed(samples)
    return {
        "cold_module_ms": stat([s.cold_module_ms for s in samples]),
        "native_compile_ms": stat([s.native_compile_ms for s in samples]),
        "cold_wall_ms": stat([s.cold_wall_ms for s in samples]),
        "warm_wall_ms": stat([s.warm_wall_ms for s in samples]),
        "compile_elapsed_ms": elapsed,
        "compile_elapsed_na": elapsed_na,
        "warm_module_ms": stat([s.warm_module_ms for s in samples]),
        "kernel_ms": stat(kernel) if kernel else None,
        "cold_module_cpu_ms": stat([c for c in cpu if c is not None]) if cpu and None not in cpu else None,
    }


def compile_elapsed(samples: list[Sample]) -> tuple[Stat, str]:
    """Cold wall - warm wall over the samples whose warm run compiled nothing, or no values and the reason.

    The difference is the time spent compiling only when the warm run found everything in the cache: a warm
    run that compiles too makes it meaningless (it can even come out negative).
    """
    clean = [s for s in samples if s.warm_builds == 0]
    if not clean:
        builds = max((s.warm_builds for s in samples), default=0)
        return stat([]), f"the warm run compiled too ({counted(builds, 'build')}): cold - warm wall is not compile time"
    elapsed = stat([s.cold_wall_ms - s.warm_wall_ms for s in clean])
    if elapsed.median < 0:
        return stat([]), "the cold run was not slower than the warm run: no measurable compile time"
    return elapsed, ""


def _warnings(pairs: list[RunPair], good: list[RunPair], first: RunPair) -> list[str]:
    warnings = []
    failed = [p for p in pairs if not p.sample.ok]
    if failed:
        reasons = ", ".join(sorted({p.sample.error or "?" for p in failed}))
        warnings.append(
            f"{len(failed)} of {len(pairs)} samples failed ({reasons}); figures use the good ones"
        )
    trace = first.cold_trace
    if not first.facts.tracer_started:
        warnings.append(
            "the tracer did not start in the command (not a Python process?): figures come from Warp's log"
        )
    elif trace.tracer_mode == "log":
        warnings.append(f"Warp {trace.warp_version} could not be hooked: figures come from its log lines")
    if trace.launch_count == 0:
        warnings.append("no kernel launches recorded: the workload check is unverifiable")
    if not trace.complete:
        warnings.append(
            "the process ended before the tracer's exit hook (os._exit or a crash): launch record partial"
        )
    for error in sorted(set(trace.tracer_errors))[:5]:
        warnings.append(f"tracer error (recorded, not raised): {error}")
    outside = sorted({d for p in pairs for d in p.outside_caches})
    for directory in outside:
        warnings.append(
            f"the application keeps its kernel cache at {directory}: cold samples may not be cold"
        )
    return warnings
