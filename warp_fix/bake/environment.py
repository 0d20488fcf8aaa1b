"""The environment a cache is for: read from a traced run, or from the interpreter a later run will use."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import Environment, Manifest
from warp_fix.probe.runner import INJECT_DIR

ENVIRONMENT_SCRIPT = INJECT_DIR / "_warp_fix_tracer" / "environment.py"
PROBE_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Machine:
    """This machine as a later run of `python` sees it: its environment and the cache dir it would use."""

    environment: Environment
    kernel_cache_dir: Path  # the versioned root (`.../1.19.0`)


def probe_machine(python: str | None = None, cache: Path | None = None) -> Machine:
    """Run Warp once in `python` (default: this interpreter) in a scratch cache; nothing is written elsewhere."""
    import os

    env = dict(os.environ)
    if cache is not None:
        env["WARP_CACHE_PATH"] = str(cache)
    try:
        done = subprocess.run(
            [python or sys.executable, str(ENVIRONMENT_SCRIPT)],
            capture_output=True,
            text=True,
            env=env,
            timeout=PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BakeError(f"cannot read Warp's environment with {python or sys.executable}: {exc}") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BakeError(f"cannot read Warp's environment with {python or sys.executable}: {last}")
    record = json.loads(lines[-1])
    return Machine(Environment.from_json(record["environment"]), Path(record["kernel_cache_dir"]))


def environment_from_record(trace_dir: Path) -> tuple[Environment | None, list[dict], list[str]]:
    """The environment, AOT artifacts and AOT errors a baked run wrote at exit (None: it wrote none)."""
    records = sorted(trace_dir.glob("bake-*.json"), key=lambda path: path.stat().st_mtime)
    if not records:
        return None, [], []
    data = json.loads(records[-1].read_text())  # the outermost Warp process exits, and writes, last
    aot = data.get("aot", {})
    environment = Environment.from_json(data["environment"]) if data.get("environment") else None
    return environment, list(aot.get("artifacts", [])), [str(e) for e in aot.get("errors", [])]


def refusals(manifest: Manifest, here: Environment) -> list[str]:
    """Each field that makes the archive's entries wrong or useless here, as `field: archive X, here Y`."""
    there = manifest.environment
    problems = []
    if there.warp_version != here.warp_version:
        problems.append(f"Warp version: archive {there.warp_version}, here {here.warp_version}")
    if there.warp_build and here.warp_build and there.warp_build != here.warp_build:
        problems.append(f"Warp build: archive {there.warp_build}, here {here.warp_build}")
    if there.platform != here.platform:
        problems.append(f"platform: archive {there.platform}, here {here.platform}")
    if manifest.has_device("cpu") and there.cpu_key != here.cpu_key:
        problems.append(f"CPU key: archive {there.cpu_key}, here {here.cpu_key}")
    missing = missing_cuda_targets(manifest, here)
    if missing:
        have = ", ".join(sorted(baked_cuda_targets(manifest))) or "none"
        problems.append(f"arch: this machine looks up {', '.join(missing)}, archive has {have}")
    return problems


def baked_cuda_targets(manifest: Manifest) -> set[str]:
    return {t.binary for m in manifest.modules for t in m.targets if t.device == "cuda"}


def missing_cuda_targets(manifest: Manifest, here: Environment) -> list[str]:
    """The binaries this machine's GPUs look up that some CUDA identity of the archive lacks."""
    if not manifest.has_device("cuda"):
        return []
    cuda_modules = [m for m in manifest.modules if any(t.device == "cuda" for t in m.targets)]
    return sorted(
        target for target in here.cuda_targets if any(target not in {t.binary for t in m.targets} for m in cuda_modules)
    )
