"""Running the user's command for bake: cold in a private cache (bake), or on the user's cache (verify).

Reuses the probe's sandbox, process runner and tracer; the tracer also writes the environment record
(`WARP_FIX_BAKE=1`) and, with `--arch`, compiles those archs at exit. The bake runs under the probe's cold
PYTHONHASHSEED (unless the user's environment pins one), so that the manifest can say which seed its hashes
came from and verify can run under another: a hash that depends on the process then shows before production.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.environment import environment_from_record
from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import Environment
from warp_fix.probe.hash_drift import hash_seeds
from warp_fix.probe.runner import INJECT_DIR, ProbeError, ProcessRun, Sandbox, run_process
from warp_fix.probe.trace_file import TracedProcess, read_trace
from warp_fix.report import ModuleBuild, Trace


@dataclass(frozen=True)
class TracedRun:
    """One traced run of the command, with what the tracer wrote at its exit."""

    process: ProcessRun
    trace: Trace
    environment: Environment | None
    aot_artifacts: tuple[dict, ...]  # raw AOT records: read once by bake.collect_aot
    aot_errors: tuple[str, ...]
    build_process: dict[int, TracedProcess]  # a build's seq -> the process (of a suite's many) that loaded it
    hash_seed: str  # the PYTHONHASHSEED the command ran under; "" when unset (another in every process)

    def process_of(self, build: ModuleBuild) -> str:
        process = self.build_process.get(build.seq)
        return process.label if process is not None else ""


@contextmanager
def cold_run(
    command: list[str],
    cwd: Path,
    timeout: float | None,
    archs: list[int],
    seed: Callable[[Path], None] | None = None,
) -> Iterator[tuple[TracedRun, Path]]:
    """Run in a private cache, empty unless `seed` fills it first (given WARP_CACHE_PATH: an incremental bake);
    yield the run and the versioned cache root; remove everything after."""
    sandbox = Sandbox(Path(tempfile.mkdtemp(prefix="warp-fix-bake-")))
    try:
        if seed is not None:
            seed(sandbox.warp_cache)
        cold_seed, _ = hash_seeds(dict(os.environ))
        env = {**sandbox.environment(dict(os.environ), sandbox.trace_dir("bake"), time.time()), **cold_seed}
        env["WARP_FIX_BAKE"] = "1"
        if archs:
            env["WARP_FIX_BAKE_ARCHS"] = ",".join(str(a) for a in archs)
        run = _run(command, cwd, env, sandbox.trace_dir("bake"), timeout, {str(sandbox.root).encode(): b"<private>"})
        roots = {b.cache_dir for b in run.trace.builds if b.cache_dir and b.cache_dir != "None"}
        outside = sorted(r for r in roots if not Path(r).resolve().is_relative_to(sandbox.warp_cache.resolve()))
        if outside:
            raise BakeError(
                f"the command keeps its kernel cache at {outside[0]}, not in WARP_CACHE_PATH: bake cannot "
                "tell its entries from older ones (let Warp choose the cache dir)"
            )
        root = Path(sorted(roots)[0]) if roots else sandbox.warp_cache
        yield run, root
    finally:
        sandbox.remove()


def run_on_cache(
    command: list[str], cwd: Path, timeout: float | None, cache: Path | None, hash_seed: dict[str, str]
) -> TracedRun:
    """Run with the tracer on the user's cache (`cache` as WARP_CACHE_PATH when given), under `hash_seed`
    (PYTHONHASHSEED, or nothing to keep the environment's): what verify checks."""
    trace_dir = Path(tempfile.mkdtemp(prefix="warp-fix-verify-"))
    try:
        env = {**os.environ, **hash_seed}
        existing = env.get("PYTHONPATH")
        env["PYTHONPATH"] = str(INJECT_DIR) + (os.pathsep + existing if existing else "")
        env["WARP_FIX_TRACE_DIR"] = str(trace_dir)
        env["WARP_FIX_T0"] = repr(time.time())
        env["WARP_FIX_BAKE"] = "1"
        if cache is not None:
            env["WARP_CACHE_PATH"] = str(cache)
        return _run(command, cwd, env, trace_dir, timeout, {})
    finally:
        shutil.rmtree(trace_dir, ignore_errors=True)


def _run(command, cwd: Path, env: dict[str, str], trace_dir: Path, timeout, replace) -> TracedRun:
    if not command:
        raise BakeError("no command given: put it after --, e.g. warp-fix bake -- python -m app")
    if not Path(cwd).is_dir():
        raise BakeError(f"working directory does not exist: {cwd}")
    try:
        process = run_process(command, Path(cwd).resolve(), env, trace_dir, timeout, replace)
    except ProbeError as exc:
        raise BakeError(str(exc)) from None
    if process.timed_out:
        raise BakeError(f"the command timed out: {shlex.join(command)}")
    if process.exit_code != 0:
        last = [line for line in process.stderr_tail.strip().splitlines() if line.strip()]
        raise BakeError(f"the command failed (exit {process.exit_code}): {last[-1] if last else 'no stderr'}")
    trace, facts = read_trace(trace_dir, Path(cwd).resolve())
    if not facts.warp_imported:
        raise BakeError(f"the command never imported warp: {shlex.join(command)}")
    environment, artifacts, errors = environment_from_record(trace_dir)
    seed = env.get("PYTHONHASHSEED", "")
    return TracedRun(process, trace, environment, tuple(artifacts), tuple(errors), facts.build_process, seed)
