"""A test suite as the baked command: cold, baked, after a one-file change, and after many bakes with churn.

    python benchmarks/bake_suite.py [--runs 3] [--churn 10] [--project DIR --command "..." --change FILE OLD NEW]

Default: fixtures/suite_project's suite under `pytest -n 2` (two xdist workers and an example in a
subprocess), in a temp copy. Prints, each as a ratio or count:
- cold: modules baked and the cold suite's wall time (`warp-fix bake`, its private empty cache);
- baked: modules compiled after a restore (`bake verify`, target 0), and the suite's wall time after a restore
  into a fresh cache, restore included (`bake restore` then the suite, two processes) against the suite on a
  warm local cache (medians of --runs interleaved repetitions; target <= 1.05);
- one-file change (--change FILE OLD NEW, default the fixture's helper that two modules call): the modules an
  incremental bake (`--from` the cold archive) rebuilt, carried over and dropped;
- churn: --churn successive incremental bakes, each after adding a kernel to one module (in turn): archive
  bytes / the bytes of the entries the run needed, the largest over all bakes (target <= 1.1), and the entries.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from warp_fix.bake import bake

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "fixtures" / "suite_project"
COMMAND = "python -m pytest -q -n 2 -p no:cacheprovider tests"
CHANGE = ("flock/common.py", "wp.min(wp.max(x, -1.0), 1.0)", "wp.max(wp.min(x, 1.0), -1.0)")
CHURN_FILES = ("flock/boids.py", "flock/grid.py", "flock/decay.py", "flock/energy.py")


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000.0


def churn(project: Path, files: tuple[str, ...], step: int) -> None:
    """A kernel added to one module: that module's identity changes, the others stay."""
    path = project / files[step % len(files)]
    path.write_text(
        path.read_text() + f"\n\n@wp.kernel\ndef churn_{step}(x: wp.array(dtype=float)):\n    x[wp.tid()] = {step}.0\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=SUITE)
    parser.add_argument("--command", default=COMMAND)
    parser.add_argument("--change", nargs=3, metavar=("FILE", "OLD", "NEW"), default=CHANGE)
    parser.add_argument("--churn-files", nargs="+", default=CHURN_FILES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--churn", type=int, default=10)
    args = parser.parse_args()
    command = shlex.split(args.command)
    work = Path(tempfile.mkdtemp(prefix="bake-suite-"))
    try:
        project = work / "project"
        shutil.copytree(args.project, project, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        cli = [sys.executable, "-m", "warp_fix"]

        cold = bake(command, project, str(work / "cold") + "/", [], None)
        print(f"cold: {len(cold.manifest.modules)} modules baked, suite {cold.run_wall_ms:,.0f} ms (bake's cold run)")

        warm = {**env, "WARP_CACHE_PATH": str(work / "warm-cache")}
        subprocess.run(command, cwd=project, env=warm, check=True, capture_output=True)  # fills the warm cache
        check = work / "verify-cache"
        subprocess.run(
            [*cli, "bake", "restore", str(cold.archive), "--cache", str(check)],
            env=env,
            check=True,
            capture_output=True,
        )
        verified = subprocess.run(
            [*cli, "bake", "verify", "--cache", str(check), "--", *command],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
        )
        print(f"baked: {verified.stdout.strip().splitlines()[0]} (exit {verified.returncode})")
        warm_ms, baked_ms = [], []
        for run in range(args.runs):  # interleaved
            warm_ms.append(timed(command, project, warm))
            cache = work / f"baked-cache-{run}"
            restore_ms = timed([*cli, "bake", "restore", str(cold.archive), "--cache", str(cache)], project, env)
            baked_ms.append(restore_ms + timed(command, project, {**env, "WARP_CACHE_PATH": str(cache)}))
        w, b = statistics.median(warm_ms), statistics.median(baked_ms)
        print(
            f"baked suite / warm local cache: {b / w:.2f} ({b:,.0f} vs {w:,.0f} ms, medians of {args.runs}, "
            "restore included)"
        )

        name, old, new = args.change
        changed = project / name
        assert old in changed.read_text(), f"{old!r} is not in {name}"
        changed.write_text(changed.read_text().replace(old, new))
        after = bake(command, project, str(work / "changed") + "/", [], None, previous=cold.archive)
        change = after.incremental
        print(
            f"after changing {name}: rebuilt {sorted(b.module for b in change.built)}, "
            f"carried {sorted(m for m, _ in change.carried)}, dropped {len(change.dropped)}"
        )

        previous, ratios = after.archive, []
        for step in range(args.churn):
            churn(project, tuple(args.churn_files), step)
            result = bake(command, project, str(work / f"churn-{step}") + "/", [], None, previous=previous)
            ratios.append(result.archive_bytes / result.entry_bytes)
            print(
                f"  churn {step + 1}: {len(result.manifest.modules)} entries, archive {result.archive_bytes:,} B / "
                f"needed {result.entry_bytes:,} B = {ratios[-1]:.2f}; built {len(result.incremental.built)}, "
                f"dropped {len(result.incremental.dropped)}"
            )
            previous = result.archive
        if ratios:
            print(f"after {len(ratios)} bakes with churn: archive / needed bytes at most {max(ratios):.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
