"""How much each timing signal moves when the machine is loaded: the table behind compare's choice of signals.

    python benchmarks/load_signals.py [--samples 4] [--busy 2] [--fixture serial_modules]

Measures one fixture `--samples` cold+warm pairs on the machine as it is, then the same with `--busy`
processes spinning beside it (one per core makes a 2-core machine fully loaded). Prints, per signal, the
median and the relative spread (half the range over the median) for each condition, and how far the loaded
median moved from the quiet one. Structure (identities, generated source, adjoint kernels) is printed too: it
must not move at all.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from warp_fix.probe import measure
from warp_fix.report import Report, Stat

REPO = Path(__file__).resolve().parents[1]
SIGNALS = [
    ("cold module work (wall)", "cold_module_ms"),
    ("cold module CPU time", "cold_module_cpu_ms"),
    ("compile elapsed (cold - warm wall)", "compile_elapsed_ms"),
    ("cold wall", "cold_wall_ms"),
]


def measured(fixture: str, samples: int) -> Report:
    directory = REPO / "fixtures" / fixture
    package = next(p.parent.name for p in directory.glob("*/__main__.py"))
    return measure([sys.executable, "-m", package], directory, samples=samples)


def spread(stat: Stat | None) -> str:
    if stat is None or not stat.values:
        return "n/a"
    half = (max(stat.values) - min(stat.values)) / 2.0
    return f"{stat.median:8.0f} ms ±{100.0 * half / stat.median:5.1f}%"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--fixture", default="serial_modules")
    args = parser.parse_args()
    quiet = measured(args.fixture, args.samples)
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        loaded = measured(args.fixture, args.samples)
    finally:
        for process in spinners:
            process.kill()
    print(f"{args.fixture}, {args.samples} cold+warm pairs each; loaded = {args.busy} busy processes beside it")
    print(f"{'signal':38} {'as is':>24} {'loaded':>24} {'loaded/as is':>13}")
    for label, name in SIGNALS:
        a, b = getattr(quiet.summary, name), getattr(loaded.summary, name)
        ratio = f"{b.median / a.median:.2f}" if a and b and a.values and b.values and a.median else "n/a"
        print(f"{label:38} {spread(a):>24} {spread(b):>24} {ratio:>13}")
    for name in ("identities", "generated_source_bytes", "adjoint_kernels"):
        print(f"{name:38} {getattr(quiet.summary, name)!s:>24} {getattr(loaded.summary, name)!s:>24}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
