"""What `plan --from-report` costs on a large real Warp library, cold and with the kept source index.

Stages a library's own source tree from its PyPI wheel as a fresh git repository (Newton 1.8.0 by default: 973
files, about 820,000 lines; `--tree warp-examples` stages Warp's installed examples folder instead), probes one of
its CPU examples once (`warp-fix measure --samples 1`, a few frames), then runs `warp-fix plan --from-report` as a
child process: cold (no kept index), then twice with the index the first run kept. Each row prints the wall and CPU
seconds of that child, its peak memory (ru_maxrss) and the ratio to the target: <= 10 s cold, <= 2 s with the kept
index, <= 300 MB. `--code DIR` also plans from the same report with another checkout's warp-fix (for example
`git archive main`, unpacked) for today's figures, and says whether every plan's JSON is byte-identical.

    python benchmarks/large_repo_plan.py [--tree newton|warp-examples] [--code DIR] [--keep DIR]

`--keep DIR` stages the tree in DIR/repo and its report in DIR/base.json and leaves them; a later run with the same
DIR reuses both (no second probe).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import GIT_IDENTITY, Wheels  # noqa: E402

THIS_CODE = Path(__file__).resolve().parents[1]
COLD_TARGET_S = 10.0
KEPT_TARGET_S = 2.0
MEMORY_TARGET_MB = 300.0


@dataclass(frozen=True)
class Tree:
    """A library's source tree staged as a repository, and the CPU example probed in it."""

    name: str
    command: list[str]

    def stage(self, into: Path) -> None:
        if self.name == "newton":
            wheel = Wheels.from_environment(None, into.parent / "site").project_wheel("newton", "1.8.0")
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(into, [m for m in archive.namelist() if m.startswith("newton/")])
        else:
            import warp

            shutil.copytree(Path(warp.__file__).resolve().parent / "examples", into / "examples")
        for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", self.name]):
            subprocess.run(["git", *GIT_IDENTITY, *argv], cwd=into, check=True, capture_output=True)


TREES = {
    "newton": Tree("newton", ["-m", "newton.examples", "basic_pendulum", "--viewer", "null", "--num-frames", "3",
                              "--device", "cpu"]),
    "warp-examples": Tree("warp-examples", ["-m", "examples.core.example_wave", "--device", "cpu", "--stage-path",
                                            "None", "--num-frames", "5"]),
}


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    peak_mb: float


def run_child(argv: list[str], cwd: Path, code: Path) -> Run:
    """Run a warp-fix child with `code` first on its path; its own wall and CPU time and peak memory."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "warp_fix", *argv], cwd=cwd, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    error = child.stderr.read().decode() if child.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"warp-fix {argv[0]} failed: {error.strip().splitlines()[-1:] or status}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def plan(repo: Path, report: Path, code: Path, out: Path) -> Run:
    return run_child(["plan", "--from-report", str(report), "--json", str(out)], repo, code)


def row(label: str, run: Run, target_s: float | None) -> str:
    ratio = f"{run.wall_s / target_s:5.2f}" if target_s else "    -"
    return (f"{label:34} {run.wall_s:7.2f} {ratio} {run.cpu_s:7.2f} {run.peak_mb:7.0f} "
            f"{run.peak_mb / MEMORY_TARGET_MB:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", choices=sorted(TREES), default="newton")
    parser.add_argument("--code", help="another warp-fix checkout to plan with as well (today's figures)")
    parser.add_argument("--keep", help="stage the tree and its report here and leave them; reused when there")
    args = parser.parse_args()
    tree = TREES[args.tree]
    work = Path(args.keep or tempfile.mkdtemp(prefix="warp-fix-large-")).resolve()
    repo = work / "repo"
    try:
        if not repo.is_dir():
            tree.stage(repo)
        lines = sum(p.read_bytes().count(b"\n") for p in repo.rglob("*.py"))
        files = sum(1 for _ in repo.rglob("*.py"))
        print(f"{tree.name}: {files} Python files, {lines:,} lines; command: python {' '.join(tree.command)}")
        report = work / "base.json"
        if not report.is_file():
            probe = run_child(["measure", "--samples", "1", "--json", str(report), "--", sys.executable,
                               *tree.command], repo, THIS_CODE)
            print(f"probe (measure --samples 1): {probe.wall_s:.1f} s")
        print(f"cpus {os.cpu_count()}, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print(f"{'plan --from-report':34} {'wall s':>7} {'ratio':>5} {'cpu s':>7} {'peak MB':>7} {'ratio':>5}")
        plans: dict[str, Path] = {}
        codes = [("this code", THIS_CODE)] + ([("--code", Path(args.code).resolve())] if args.code else [])
        for name, code in codes:
            shutil.rmtree(repo / ".git" / "warp-fix", ignore_errors=True)
            runs = [("cold", COLD_TARGET_S), ("kept index", KEPT_TARGET_S), ("kept index, again", KEPT_TARGET_S)]
            for label, target in runs if code == THIS_CODE else runs[:1]:  # another checkout: today's cold figure
                out = work / f"plan-{len(plans)}.json"
                plans[f"{name}, {label}"] = out
                print(row(f"{name}, {label}", plan(repo, report, code, out), target), flush=True)
        first = next(iter(plans.values())).read_bytes()
        same = [label for label, path in plans.items() if path.read_bytes() == first]
        print(f"plan JSON byte-identical: {len(same)} of {len(plans)}"
              + ("" if len(same) == len(plans) else f" (differs: {', '.join(set(plans) - set(same))})"))
        print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
