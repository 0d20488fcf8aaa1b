"""Time `scan_repository` on Warp's installed examples folder against the 10 s target.

    python benchmarks/scan_speed.py [--repeat N]

Prints the median wall time of N scans, the ratio to the target (< 1 is within
target), and what was indexed, so a regression shows as a number rather than a feeling.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import warp

from warp_fix.scan import scan_repository

TARGET_SECONDS = 10.0


def examples_folder() -> Path:
    return Path(os.path.dirname(warp.__file__)) / "examples"


def time_scan(root: Path) -> tuple[float, int, int, int]:
    """(seconds, files, kernels, launches) of one scan."""
    start = time.perf_counter()
    index = scan_repository(root)
    return time.perf_counter() - start, len(index.files), len(index.kernels), len(index.launches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="scans to take the median of (default 3)")
    repeat = max(1, parser.parse_args().repeat)
    root = examples_folder()
    samples = [time_scan(root) for _ in range(repeat)]
    seconds = statistics.median(s[0] for s in samples)
    _, files, kernels, launches = samples[0]
    print(f"scanned {root}: {files} files, {kernels} kernels, {launches} launch sites")
    print(f"seconds: {seconds:.2f} (median of {repeat}; min {min(s[0] for s in samples):.2f})")
    print(f"ratio to target ({TARGET_SECONDS:.0f} s): {seconds / TARGET_SECONDS:.2f}")
    print(f"cpus: {os.cpu_count()}, load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
