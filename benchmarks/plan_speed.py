"""What `plan` adds on top of the probe, and how fast the scan reads real code.

    python benchmarks/plan_speed.py [fixture ...]

Targets: scan + diagnose + plan <= 2 s per fixture (the probe's own runs excluded);
scanning the installed `warp/examples` folder < 10 s.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import warp

from warp_fix.plan import make_plan
from warp_fix.probe import measure
from warp_fix.scan import scan_repository

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["late_module_options", "composite", "granular_modules", "unique_on_stable"]


def plan_overhead(name: str) -> float:
    directory = ROOT / "fixtures" / name
    package = next(p.parent.name for p in directory.glob("*/__main__.py"))
    report = measure([sys.executable, "-m", package], directory, samples=1)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        make_plan(report, directory)
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    print(f"{name}: plan adds {seconds:.2f} s to the probe (target <= 2 s, ratio {seconds / 2:.2f})")
    return seconds


def scan_examples() -> float:
    examples = Path(os.path.dirname(warp.__file__)) / "examples"
    start = time.perf_counter()
    index = scan_repository(examples)
    seconds = time.perf_counter() - start
    print(f"scan of {examples}: {len(index.kernels)} kernels in {seconds:.2f} s (target < 10 s, "
          f"ratio {seconds / 10:.2f})")
    return seconds


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.1f}")
    for name in sys.argv[1:] or DEFAULT:
        plan_overhead(name)
    scan_examples()


if __name__ == "__main__":
    main()
