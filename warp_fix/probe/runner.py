"""Runs the measured command once, isolated, with the tracer injected, and collects its trace."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from warp_fix.probe.output import OutputDigest, Tail
from warp_fix.process_group import kill_group, start_group

INJECT_DIR = Path(__file__).with_name("inject")


class ProbeError(Exception):
    """The measurement cannot go on; the message is one line for the user."""


@dataclass
class ProcessRun:
    exit_code: int | None
    wall_ms: float
    timed_out: bool
    stdout: OutputDigest
    stderr_tail: str
    trace_dir: Path


class Sandbox:
    """A private temp space for one cold+warm pair: Warp cache, CUDA cache, TMPDIR, pycache, traces.

    Always removed on exit, also on Ctrl-C or a timeout; nothing is written into the project.
    """

    def __init__(self, parent: Path):
        self.root = Path(os.path.realpath(parent))
        for name in ("warp-cache", "cuda-cache", "tmp", "pycache"):
            (self.root / name).mkdir(parents=True, exist_ok=True)

    @property
    def warp_cache(self) -> Path:
        return self.root / "warp-cache"

    def trace_dir(self, name: str) -> Path:
        path = self.root / f"trace-{name}"
        path.mkdir(exist_ok=True)
        return path

    def environment(self, base: dict[str, str], trace_dir: Path, t0: float) -> dict[str, str]:
        env = dict(base)
        existing = env.get("PYTHONPATH")
        env["PYTHONPATH"] = str(INJECT_DIR) + (os.pathsep + existing if existing else "")
        env["WARP_FIX_TRACE_DIR"] = str(trace_dir)
        env["WARP_FIX_T0"] = repr(t0)
        env["WARP_CACHE_PATH"] = str(self.warp_cache)
        env["CUDA_CACHE_PATH"] = str(self.root / "cuda-cache")
        env["TMPDIR"] = str(self.root / "tmp")
        env["PYTHONPYCACHEPREFIX"] = str(self.root / "pycache")
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def run_process(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    trace_dir: Path,
    timeout: float | None,
    replace: dict[bytes, bytes],
) -> ProcessRun:
    """Run argv (no shell) in its own process group, streaming stdout/stderr; kill the group on timeout."""
    stdout = OutputDigest(replace)
    stderr = Tail()
    start = time.perf_counter()
    try:
        proc = start_group(command, cwd, env)
    except FileNotFoundError as exc:
        raise ProbeError(f"command not found: {command[0]}") from exc
    except PermissionError as exc:
        raise ProbeError(f"command is not executable: {command[0]}") from exc
    readers = [
        threading.Thread(target=_pump, args=(proc.stdout, stdout.feed), daemon=True),
        threading.Thread(target=_pump, args=(proc.stderr, stderr.feed), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        if proc.poll() is None or timed_out:
            kill_group(proc)
        for reader in readers:
            reader.join(timeout=10)
    wall_ms = (time.perf_counter() - start) * 1000.0
    stdout.close()
    return ProcessRun(
        exit_code=None if timed_out else proc.returncode,
        wall_ms=wall_ms,
        timed_out=timed_out,
        stdout=stdout,
        stderr_tail=stderr.text(),
        trace_dir=trace_dir,
    )


def _pump(stream, sink) -> None:
    with stream:
        for chunk in iter(lambda: stream.read1(1 << 16), b""):
            sink(chunk)
