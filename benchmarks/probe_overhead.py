"""The probe's costs: tracer overhead on warm wall time, and peak memory on a 1 GB output.

    python benchmarks/probe_overhead.py [--runs 10] [--gigabytes 1]

Targets: warm wall with the tracer / without <= 1.05 (medians of interleaved runs on one warm
cache); probe peak RSS < 200 MB while the command prints 1 GB.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from warp_fix.probe import measure
from warp_fix.probe.runner import INJECT_DIR

APP = """
import warp as wp

@wp.kernel
def step(x: wp.array(dtype=float), v: wp.array(dtype=float), dt: float):
    i = wp.tid()
    v[i] = v[i] - 9.81 * dt
    x[i] = x[i] + v[i] * dt

x = wp.zeros(1024, dtype=float, device="cpu")
v = wp.zeros(1024, dtype=float, device="cpu")
for _ in range(200):
    wp.launch(step, dim=1024, inputs=[x, v, 0.01], device="cpu")
print(f"{x.numpy()[0]:.4f}")
"""


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def tracer_overhead(runs: int) -> float:
    work = Path(tempfile.mkdtemp(prefix="wf-bench-"))
    (work / "app.py").write_text(textwrap.dedent(APP))
    plain = dict(os.environ, WARP_CACHE_PATH=str(work / "cache"))
    traced = dict(plain, PYTHONPATH=str(INJECT_DIR), WARP_FIX_TRACE_DIR=str(work))
    command = [sys.executable, "app.py"]
    timed(command, plain, work)  # fill the cache: every later run is warm
    with_tracer, without = [], []
    for _ in range(runs):
        without.append(timed(command, plain, work))
        with_tracer.append(timed(command, traced, work))
        for trace in work.glob("trace-*.jsonl"):
            trace.unlink()
    ratio = statistics.median(with_tracer) / statistics.median(without)
    print(f"warm wall without tracer: median {statistics.median(without) * 1000:.0f} ms over {runs} runs")
    print(f"warm wall with tracer:    median {statistics.median(with_tracer) * 1000:.0f} ms over {runs} runs")
    print(f"tracer overhead ratio: {ratio:.3f} (target <= 1.05)")
    return ratio


def probe_memory(gigabytes: float) -> float:
    work = Path(tempfile.mkdtemp(prefix="wf-bench-"))
    lines = int(gigabytes * 1024 * 1024)
    (work / "loud.py").write_text(
        "import sys\nimport warp\nline = 'x' * 1023 + '\\n'\n"
        f"for _ in range({lines}):\n    sys.stdout.write(line)\n"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report = measure([sys.executable, "loud.py"], work, samples=1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"command printed {report.output.bytes / 2**30:.2f} GiB (twice: cold and warm)")
    print(f"probe peak RSS: {peak:.0f} MB (before the measurement: {before:.0f} MB; target < 200 MB)")
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--gigabytes", type=float, default=1.0)
    args = parser.parse_args()
    tracer_overhead(args.runs)
    probe_memory(args.gigabytes)


if __name__ == "__main__":
    main()
