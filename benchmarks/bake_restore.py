"""Bake, then restore into a fresh cache and run: how close is that to a warm start?

    python benchmarks/bake_restore.py [--runs 5] [--device cpu|cuda] [--arch 86] [--only APP ...]

Per app: modules compiled after restore (target 0); restore and run against the warm run (target <= 1.05,
medians over --runs, interleaved), two ways: `bake run ARCHIVE -- COMMAND` (one step: the app runs in the
restore's own interpreter) and `bake restore` then the command (two processes, as a CI step and a later step).
`bake run` is also timed against its own start without the restore (`warp_fix.bake.start.start` on the warm
cache), which freezes the objects alive at the app's start as `bake run` does: the restore's own share;
archive bytes / needed entry bytes (target <= 1.1).
Each wall is the whole `python -m warp_fix ...` process, as CI or an entrypoint runs it. The first restore on a
machine reads the environment with one Warp start (printed apart, n=1); later ones find it remembered under
the machine's fingerprint (each app starts with an empty WARP_FIX_STATE_DIR).
With --arch, the archive also holds AOT binaries for that arch, and each one is checked against the
path Warp's own name function gives (`Module._get_compile_output_name`, `get_module_identifier`).
CPU apps: the bundled demo app (as shipped, and with its cache clear removed), two fixtures, and three corpus
scenarios staged as the corpus stages them (Warp's own wave and fluid examples as a user's scripts, and Newton's
basic_pendulum example on the installed newton package: eleven library modules, a real application's start);
--device cuda: two multi-module CUDA fixtures, a MathDx one whose archive holds LTO files (for it the module
binaries are deleted after a restore and the run must find every LTO file it needs, none made again), and
Newton's basic_pendulum example on the GPU (where newton is installed).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from warp_fix.bake import bake
from warp_fix.bake.restore import restore

REPO = Path(__file__).resolve().parents[1]
APPS = {
    "cpu": [
        ("demo_app", REPO / "warp_fix" / "demo_app", ["python", "-m", "terrain"]),
        ("serial_modules", REPO / "fixtures" / "serial_modules", ["python", "-m", "sensors"]),
        ("named_modules", REPO / "fixtures" / "named_modules", ["python", "-m", "clothsim"]),
    ],
    "cuda": [
        ("gpu_serial", REPO / "fixtures" / "gpu_serial", ["python", "-m", "stages"]),
        ("gpu_block_dims", REPO / "fixtures" / "gpu_block_dims", ["python", "-m", "raster"]),
        ("gpu_mathdx", REPO / "fixtures" / "gpu_mathdx", ["python", "-m", "spectra"]),
        (
            "newton_pendulum",
            REPO / "benchmarks" / "corpus" / "scripts",
            ["python", "newton_basic_pendulum.py", "--viewer", "null", "--num-frames", "3", "--device", "cuda:0"],
        ),
    ],
}
NEEDS = {"newton_pendulum": "newton"}  # apps that run on an installed package, skipped where it is missing
CORPUS_SCENARIOS = ["warp-example-wave", "warp-example-fluid", "newton-basic-pendulum-cpu"]
COMPILED = re.compile(rb"\(compiled\)")
NAME_CHECK = """
import contextlib, io, json, runpy, sys
import warp as wp
command = json.loads(sys.argv[1])  # the app's argv after `python`: `-m MODULE ARGS` or `SCRIPT ARGS`
entries, root = json.loads(sys.argv[2]), sys.argv[3]
sys.argv = command[1:] if command[0] == "-m" else command
with contextlib.redirect_stdout(io.StringIO()):  # the run's own modules, kernels and generic instances
    if command[0] == "-m":
        runpy.run_module(command[1], run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(command[0], run_name="__main__")
missing, checked = [], 0
for entry in entries:
    module = wp.get_module(entry["name"])
    for arch, use_ptx in entry["binaries"]:
        name = module._get_compile_output_name(None, output_arch=arch, use_ptx=use_ptx, block_dim=entry["block_dim"])
        path = f"{root}/{module.get_module_identifier(entry['block_dim'])}/{name}"
        checked += 1
        if not __import__("os").path.exists(path):
            missing.append(path)
print(json.dumps({"checked": checked, "missing": missing}))
"""


@dataclass
class Run:
    wall_ms: float
    compiled: int


def without_cache_clear(app: Path, scratch: Path) -> Path:
    """The demo app with its `wp.clear_kernel_cache()` line removed (the CS-2 fix `apply` makes)."""
    copy = scratch / "demo_app"
    shutil.copytree(app, copy)
    main = copy / "terrain" / "__main__.py"
    main.write_text("\n".join(line for line in main.read_text().splitlines() if "clear_kernel_cache" not in line))
    return copy


def run(command: list[str], cwd: Path, cache: Path, device: str) -> Run:
    env = {**os.environ, "WARP_CACHE_PATH": str(cache), "FIXTURE_DEVICE": f"{device}:0" if device == "cuda" else device}
    command = [sys.executable if command[0] == "python" else command[0], *command[1:]]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=True)
    return Run((time.perf_counter() - start) * 1000.0, len(COMPILED.findall(done.stdout + done.stderr)))


def restore_cli(archive: Path, cache: Path, state: Path) -> float:
    """Wall of the restore command, as a CI step runs it."""
    env = {**os.environ, "WARP_FIX_STATE_DIR": str(state)}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "warp_fix", "bake", "restore", str(archive), "--cache", str(cache)],
        env=env, capture_output=True, check=True,
    )
    return (time.perf_counter() - start) * 1000.0


def bake_run_cli(archive: Path, cache: Path, state: Path, command: list[str], cwd: Path, device: str) -> Run:
    """Wall of `bake run`: the restore and the app in one step, as an entrypoint runs them."""
    env = {key: value for key, value in os.environ.items() if key != "WARP_CACHE_PATH"}
    env.update(WARP_FIX_STATE_DIR=str(state), FIXTURE_DEVICE=f"{device}:0" if device == "cuda" else device)
    command = [sys.executable if command[0] == "python" else command[0], *command[1:]]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "warp_fix", "bake", "run", str(archive), "--cache", str(cache), "--", *command],
        cwd=cwd, env=env, capture_output=True, check=True,
    )
    return Run((time.perf_counter() - start) * 1000.0, len(COMPILED.findall(done.stdout + done.stderr)))


START_ALONE = "import sys; from warp_fix.bake.start import start; sys.exit(start(sys.argv[1:]))"


def start_alone(command: list[str], cwd: Path, cache: Path, device: str) -> Run:
    """`bake run`'s start without its restore, on the warm cache: what the in-process start alone is worth."""
    python = [sys.executable if command[0] == "python" else command[0], *command[1:]]
    return run([sys.executable, "-c", START_ALONE, *python], cwd, cache, device)


def warp_names_check(cwd: Path, command: list[str], manifest, root: Path, scratch: Path) -> str:
    """Every AOT binary exists where Warp's own name function says a load would look for it."""
    entries = [
        {
            "name": m.name,
            "block_dim": m.block_dim,
            "binaries": [(t.arch, t.output == "ptx") for t in m.targets if t.origin == "aot"],
        }
        for m in manifest.modules
        if any(t.origin == "aot" for t in m.targets)
    ]
    if not entries:
        return "no AOT binaries"
    done = subprocess.run(
        [sys.executable, "-c", NAME_CHECK, json.dumps(command[1:]), json.dumps(entries), str(root)],
        cwd=cwd,
        env={**os.environ, "WARP_CACHE_PATH": str(scratch / "names-check")},
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return f"{result['checked']} AOT binaries, {len(result['missing'])} not where Warp looks"


def lto_check(cwd: Path, command: list[str], archive: Path, scratch: Path, device: str) -> str:
    """Are the archive's MathDx LTO files where Warp looks? Restore, delete the module binaries (not `lto/`) and
    run: the modules compile again, and each LTO file Warp needs is found, not made again (none is rewritten and
    none is added). Timed against a cold run with nothing restored."""
    cache = scratch / "lto-check"
    root = restore(archive, cache, merge=False).root
    lto = root / "lto"
    before = {path: path.stat().st_mtime_ns for path in lto.rglob("*") if path.is_file()}
    for folder in root.glob("wp_*"):
        shutil.rmtree(folder)
    with_lto = run(command, cwd, cache, device)
    after = {path: path.stat().st_mtime_ns for path in lto.rglob("*") if path.is_file()}
    cold = run(command, cwd, scratch / "lto-cold", device)
    remade = sum(1 for path, mtime in after.items() if before.get(path) != mtime)
    return (
        f"LTO files {len(before)}: rebuilt modules {with_lto.compiled}, LTO files made again {remade} "
        f"(run {with_lto.wall_ms:.0f} ms with them vs {cold.wall_ms:.0f} ms cold)"
    )


def bench(name: str, cwd: Path, command: list[str], runs: int, device: str, archs: list[int]) -> None:
    with tempfile.TemporaryDirectory(prefix="bake-bench-") as scratch:
        scratch_path = Path(scratch)
        baked = bake(command, cwd, scratch_path, archs, None)
        warm_cache = scratch_path / "warm"
        run(command, cwd, warm_cache, device)  # fills the warm cache
        first_root = restore(baked.archive, scratch_path / "names", merge=False).root
        names = warp_names_check(cwd, command, baked.manifest, first_root, scratch_path) if archs else "-"
        state = scratch_path / "state"  # nothing remembered: the first restore below starts Warp
        warm, restored, restores, one_step, alone, compiled = [], [], [], [], [], []
        for index in range(runs + 1):
            warm.append(run(command, cwd, warm_cache, device).wall_ms)
            alone.append(start_alone(command, cwd, warm_cache, device).wall_ms)
            cache = scratch_path / f"fresh-{index}"
            restore_ms = restore_cli(baked.archive, cache, state)
            after = run(command, cwd, cache, device)
            restores.append(restore_ms)
            restored.append(restore_ms + after.wall_ms)
            both = bake_run_cli(baked.archive, scratch_path / f"fresh-run-{index}", state, command, cwd, device)
            one_step.append(both.wall_ms)
            compiled += [after.compiled, both.compiled]
        lto = lto_check(cwd, command, baked.archive, scratch_path, device) if baked.manifest.lto else ""
    first = restored[0] / warm[0]
    warm_ms, total_ms, restore_ms, run_ms, alone_ms = (
        statistics.median(x[1:]) for x in (warm, restored, restores, one_step, alone)
    )
    print(
        f"{name:16} modules {len(baked.manifest.modules):2}  compiled after restore {max(compiled)}  "
        f"bake run/warm {run_ms / warm_ms:.3f} ({run_ms:.0f} vs {warm_ms:.0f} ms; against its start without the "
        f"restore {run_ms / alone_ms:.3f}, that start against a plain one {alone_ms / warm_ms:.3f})  "
        f"(restore, then run)/warm {total_ms / warm_ms:.2f} ({restore_ms:.0f} + {total_ms - restore_ms:.0f} ms; "
        f"the restore alone {restore_ms / warm_ms:.0%} of the warm run)  "
        f"first restore on the machine {first:.2f} ({restores[0]:.0f} + "
        f"{restored[0] - restores[0]:.0f} vs {warm[0]:.0f} ms)  "
        f"archive/entries {baked.archive_bytes / baked.entry_bytes:.2f} "
        f"({baked.archive_bytes:,} / {baked.entry_bytes:,} B)  names: {names}" + (f"  {lto}" if lto else ""),
        flush=True,
    )


def corpus_apps(scratch: Path) -> list[tuple[str, Path, list[str]]]:
    """The corpus scenarios, staged as `benchmarks/corpus.py` stages them (Warp's examples need no wheel)."""
    from corpus import Wheels, load_scenarios, stage

    wheels = Wheels.from_environment(None, scratch / "site-packages")
    return [
        (scenario.name.removeprefix("warp-example-"), stage(scenario, scratch, wheels), scenario.command)
        for scenario in load_scenarios(CORPUS_SCENARIOS)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--device", choices=sorted(APPS), default="cpu")
    parser.add_argument("--arch", type=int, action="append", default=[], help="also bake this CUDA arch (AOT)")
    parser.add_argument("--only", nargs="+", metavar="APP", help="only these apps (by the name printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bake-bench-app-") as scratch:
        apps = list(APPS[args.device])
        if args.device == "cpu":
            apps.insert(1, ("demo_app, fixed", without_cache_clear(apps[0][1], Path(scratch)), apps[0][2]))
            apps += corpus_apps(Path(scratch))
        for name, cwd, command in apps:
            if args.only and name not in args.only:
                continue
            if name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None:
                print(f"{name:16} skipped: {NEEDS[name]} is not installed", flush=True)
                continue
            bench(name, cwd, command, args.runs, args.device, args.arch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
