"""The environment a cache is for: read from a traced run, or from the interpreter a later run will use.

Reading it from an interpreter starts Warp once; the result is remembered under the machine's fingerprint
(warp_fix/bake/fingerprint.py), so later restores and keys on the same machine read it in milliseconds.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake import fingerprint
from warp_fix.bake.errors import BakeError
from warp_fix.bake.manifest import Environment, Manifest, ModuleEntry

# The tracer's script, found without executing warp_fix.probe (whose import would load the whole probe and
# the report schema: more than a restore costs). It is the same file the probe injects into traced runs.
ENVIRONMENT_SCRIPT = (
    Path(importlib.util.find_spec("warp_fix.probe").submodule_search_locations[0])
    / "inject"
    / "_warp_fix_tracer"
    / "environment.py"
)
FINGERPRINT_SCRIPT = Path(fingerprint.__file__)
PROBE_TIMEOUT_S = 120.0
STATE_DIR_VARIABLE = "WARP_FIX_STATE_DIR"  # where warp-fix remembers machines (default: the user cache dir)


@dataclass(frozen=True)
class Machine:
    """This machine as a later run of `python` sees it: its environment and the cache dir it would use."""

    environment: Environment
    kernel_cache_dir: Path  # the versioned root (`.../1.19.0`)
    remembered: bool = False  # read from the record of an earlier Warp start with the same fingerprint


def probe_machine(python: str | None = None, cache: Path | None = None, recheck: bool = False) -> Machine:
    """The environment a run of `python` (default: this interpreter) would have, and the cache root it would use
    with WARP_CACHE_PATH=`cache` (default: the variable, else Warp's default).

    Remembered from an earlier Warp start on the same fingerprint unless `recheck`; otherwise Warp starts once
    in a scratch cache (nothing is written elsewhere) and the result is remembered. The cache path is not
    part of it: `WARP_CACHE_PATH/<version>` is where Warp's init puts the root, whatever the machine.
    """
    env = dict(os.environ)
    base = str(cache) if cache is not None else env.pop("WARP_CACHE_PATH", None)
    env.pop("WARP_CACHE_PATH", None)
    seen = _fingerprint(python, env)
    memo = _memo_path(fingerprint.digest(seen)) if seen is not None else None
    machine = _remembered(memo) if memo is not None and not recheck else None
    if machine is None:
        record = _run_json([python or sys.executable, str(ENVIRONMENT_SCRIPT)], env, "read Warp's environment")
        machine = _machine(record)
        if memo is not None:
            _remember(memo, record)
    if base:
        root = Path(os.path.realpath(base)) / machine.environment.warp_version
        machine = dataclasses.replace(machine, kernel_cache_dir=root)
    return machine


def _remembered(memo: Path) -> Machine | None:
    """The machine an earlier Warp start recorded; None when there is none, or it cannot be read."""
    try:
        return _machine(json.loads(memo.read_text()), remembered=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _fingerprint(python: str | None, env: dict[str, str]) -> dict | None:
    if python is None or os.path.abspath(python) == os.path.abspath(sys.executable):
        return fingerprint.fingerprint(env)
    return _run_json([python or sys.executable, str(FINGERPRINT_SCRIPT)], env, "read the machine's fingerprint")


def _run_json(argv: list[str], env: dict[str, str], what: str):
    """The JSON on the last line a helper script printed; BakeError naming the interpreter when it failed."""
    import subprocess  # here: a restore that finds its machine remembered starts no process (~4 ms of import)

    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BakeError(f"cannot {what} with {argv[0]}: {exc}") from None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BakeError(f"cannot {what} with {argv[0]}: {last}")
    return json.loads(lines[-1])


def _machine(record: dict, remembered: bool = False) -> Machine:
    return Machine(Environment.from_json(record["environment"]), Path(record["kernel_cache_dir"]), remembered)


def _memo_path(key: str) -> Path | None:
    base = os.environ.get(STATE_DIR_VARIABLE)
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "warp-fix")
    return Path(base) / "machines" / f"{key}.json"


def _remember(path: Path, record: dict) -> None:
    """Write atomically; a machine whose state dir is read-only just reads Warp again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as handle:
            json.dump(record, handle)
        os.replace(handle.name, path)
    except OSError:
        pass


def environment_from_record(trace_dir: Path) -> tuple[Environment | None, list[dict], list[str]]:
    """The environment, AOT artifacts and AOT errors a baked run wrote at exit (None: it wrote none).

    Each Warp process of the run writes one record (a test suite's workers and subprocesses): the AOT
    binaries and errors of all of them count; the environment is the outermost process's, which exits last.
    """
    records = [json.loads(path.read_text()) for path in sorted(trace_dir.glob("bake-*.json"), key=_mtime)]
    if not records:
        return None, [], []
    last = records[-1]
    environment = Environment.from_json(last["environment"]) if last.get("environment") else None
    artifacts = [a for record in records for a in record.get("aot", {}).get("artifacts", [])]
    errors = [str(e) for record in records for e in record.get("aot", {}).get("errors", [])]
    return environment, artifacts, errors


def _mtime(path: Path) -> float:
    return path.stat().st_mtime


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


@dataclass(frozen=True)
class Applicable:
    """The part of an archive this machine can use: whole entries, each skipped one with the field that rules it out."""

    manifest: Manifest  # the archive's manifest restricted to the entries that apply here
    skipped: tuple[tuple[str, str, str], ...]  # (module, full hash, the field that differs) per entry left out


def applicable(manifest: Manifest, here: Environment) -> Applicable:
    """What still applies under a changed environment: nothing across a Warp version, build or platform; else each
    entry whose every binary is right here: a CPU object only under the same CPU key (never one for another CPU),
    CUDA binaries that include each one this machine's GPUs look up (none on a machine without a GPU)."""
    there = manifest.environment
    overall = refusals(dataclasses.replace(manifest, modules=(), lto=()), here)
    kept, skipped = [], []
    for entry in manifest.modules:
        reasons = list(overall) or _entry_refusals(entry, there, here)
        if reasons:
            skipped.append((entry.name, entry.hash, "; ".join(reasons)))
        else:
            kept.append(entry)
    cuda_kept = any(t.device == "cuda" for entry in kept for t in entry.targets)
    restricted = dataclasses.replace(manifest, modules=tuple(kept), lto=manifest.lto if cuda_kept else ())
    return Applicable(restricted, tuple(skipped))


def _entry_refusals(entry: ModuleEntry, there: Environment, here: Environment) -> list[str]:
    devices = {t.device for t in entry.targets}
    binaries = {t.binary for t in entry.targets}
    reasons = []
    if "cpu" in devices and there.cpu_key != here.cpu_key:
        reasons.append(f"CPU key: archive {there.cpu_key}, here {here.cpu_key}")
    lacking = [target for target in here.cuda_targets if target not in binaries]
    if "cuda" in devices and lacking:
        has = ", ".join(sorted(b for b in binaries if b != "cpu"))
        reasons.append(f"arch: this machine looks up {', '.join(lacking)}, entry has {has}")
    return reasons
