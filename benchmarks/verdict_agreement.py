"""Do apply's verdicts hold on a loaded machine? Repeated applies, quiet and with busy processes beside them.

    python benchmarks/verdict_agreement.py [--repeats 20] [--busy 2] [--samples 3] [FIXTURE ...]

Each named fixture (default: a few CPU fixtures whose fixes are decided in different ways) is copied into a
fresh git repository and applied `--repeats` times on the machine as it is, then `--repeats` times with
`--busy` processes spinning beside it (two make a 2-core machine fully loaded). Per fix it prints the
verdict the quiet runs gave most often, how many quiet and loaded runs agree with it, and the pairs per arm
each fix was given (mean, quiet vs loaded). A fix decided by structure should agree 20 of 20 whatever the
load; a timing-decided one shows what the sequential rule and the CPU-time signal buy.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from warp_fix.apply import build_request, run_apply

REPO = Path(__file__).resolve().parents[1]
DEFAULT_FIXTURES = ["late_module_options", "unused_backward", "lifecycle_modules", "cache_discarded"]
GIT_IDENTITY = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]


def spin() -> None:
    while True:
        pass


def checkout(fixture: str, into: Path) -> tuple[Path, list[str]]:
    """The fixture as a user's repository, and the command that runs it."""
    repo = into / fixture
    shutil.copytree(REPO / "fixtures" / fixture, repo)
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *GIT_IDENTITY, *argv], cwd=repo, check=True, capture_output=True)
    package = next(p.parent.name for p in repo.glob("*/__main__.py"))
    return repo, [sys.executable, "-m", package]


def verdicts(fixture: str, samples: int, scratch: Path, run: int) -> dict[str, tuple[str, int]]:
    """fix slug -> (outcome, pairs per arm) of one apply."""
    repo, command = checkout(fixture, scratch / f"run{run}")
    request = build_request(command=command, cwd=repo, branch=f"wf/bench{run}", samples=samples)
    ledger = run_apply(request, progress=lambda _text: None).ledger
    return {e.slug: (e.outcome, e.numbers.per_arm if e.numbers else 0) for e in ledger.entries}


def repeated(fixture: str, repeats: int, samples: int, busy: int) -> list[dict[str, tuple[str, int]]]:
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(busy)]
    for process in spinners:
        process.start()
    try:
        with tempfile.TemporaryDirectory(prefix="verdicts-") as scratch:
            return [verdicts(fixture, samples, Path(scratch), run) for run in range(repeats)]
    finally:
        for process in spinners:
            process.terminate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fixtures", nargs="*", default=DEFAULT_FIXTURES)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--samples", type=int, default=3)
    args = parser.parse_args()
    print(f"{args.repeats} applies per condition, --samples {args.samples}; loaded = {args.busy} busy processes")
    print(f"{'fixture':22} {'fix':26} {'quiet verdict':14} {'quiet agree':>12} {'loaded agree':>13} {'pairs q/l':>10}")
    for fixture in args.fixtures:
        quiet = repeated(fixture, args.repeats, args.samples, 0)
        loaded = repeated(fixture, args.repeats, args.samples, args.busy)
        outcomes: dict[str, dict[str, list[tuple[str, int]]]] = defaultdict(lambda: {"quiet": [], "loaded": []})
        for condition, runs in (("quiet", quiet), ("loaded", loaded)):
            for run in runs:
                for slug, result in run.items():
                    outcomes[slug][condition].append(result)
        for slug, by in sorted(outcomes.items()):
            usual = Counter(o for o, _ in by["quiet"]).most_common(1)[0][0] if by["quiet"] else "-"
            agree_q = sum(o == usual for o, _ in by["quiet"])
            agree_l = sum(o == usual for o, _ in by["loaded"])
            pairs = "/".join(
                f"{statistics.mean(p for _, p in by[c]):.1f}" if by[c] else "-" for c in ("quiet", "loaded")
            )
            print(
                f"{fixture:22} {slug:26} {usual:14} {agree_q:>5}/{len(by['quiet']):<6} "
                f"{agree_l:>6}/{len(by['loaded']):<6} {pairs:>10}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
