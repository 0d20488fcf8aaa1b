"""Does concurrent first loading on the CPU still race? The evidence behind concurrent-cpu-load's version rule.

    python benchmarks/cpu_load_race.py [--venvs DIR] [--repeats 5] [--modules 8] RELEASE [RELEASE ...]

For each release (an environment made by benchmarks/warp_matrix.py under `--venvs`), runs a program that
defines `--modules` independent modules, loads them all at once with `wp.force_load(device="cpu",
max_workers=4)` in a fresh kernel cache, then launches every kernel and checks its result. A run that raises,
prints Warp's "Failed to find module", or computes a wrong value is a race. Prints per release how many of
`--repeats` runs raced. Releases before 1.11 have no `max_workers` (loads there are serial).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

KERNEL = """
@wp.kernel(module="race_module_{i}")
def scale_{i}(a: wp.array(dtype=float)):
    t = wp.tid()
    a[t] = float(t) * {factor}.0
"""


def program(modules: int) -> str:
    """A script with `modules` one-kernel modules, loaded concurrently on the CPU, then checked."""
    kernels = "".join(KERNEL.format(i=i, factor=i + 1) for i in range(modules))
    return f"""import sys
import warp as wp

wp.config.quiet = True
{kernels}
kernels = [{", ".join(f"scale_{i}" for i in range(modules))}]
wp.force_load(device="cpu", modules=[wp.get_module(f"race_module_{{i}}") for i in range({modules})], max_workers=4)
for i, kernel in enumerate(kernels):
    a = wp.zeros(16, dtype=float, device="cpu")
    wp.launch(kernel, dim=16, inputs=[a], device="cpu")
    if abs(float(a.numpy()[3]) - 3.0 * (i + 1)) > 1e-6:
        print(f"wrong value from module {{i}}")
        sys.exit(3)
print("ok")
"""


def raced(python: Path, modules: int) -> str:
    """'' when every module loaded and computed right, else what went wrong (one line)."""
    with tempfile.TemporaryDirectory() as work:
        script = Path(work) / "race.py"  # Warp refuses kernels defined in `python -c` code
        script.write_text(program(modules))
        env = {**os.environ, "WARP_CACHE_PATH": str(Path(work) / "cache")}
        run = subprocess.run([str(python), str(script)], capture_output=True, text=True, env=env, timeout=600)
    text = run.stdout + run.stderr
    if "Failed to find module" in text:
        return "Failed to find module"
    if run.returncode != 0 or "ok" not in run.stdout:
        return (text.strip().splitlines() or [f"exit {run.returncode}"])[-1][:160]
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="+")
    parser.add_argument("--venvs", type=Path, default=Path("/tmp/warp-matrix"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--modules", type=int, default=8)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.modules} modules, force_load(max_workers=4) on the CPU")
    for release in args.releases:
        python = args.venvs / f"warp-{release}" / "bin" / "python"
        failures = [f for f in (raced(python, args.modules) for _ in range(args.repeats)) if f]
        detail = f" ({'; '.join(sorted(set(failures)))})" if failures else ""
        print(f"{release}: {len(failures)}/{args.repeats} runs raced{detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
