"""Do apply's verdicts hold on a loaded machine? Repeated applies, quiet and with busy processes beside them.

    python benchmarks/verdict_agreement.py [--repeats 20] [--busy 2] [--samples 3] [--jsonl FILE]
                                           [--slots 1 | --cores 0,1] [--seconds S] [TARGET ...]
    python benchmarks/verdict_agreement.py --summarize FILE [FILE ...]

A TARGET is a fixture (`late_module_options`) or a corpus scenario staged from the installed packages
(`corpus:warp-example-fluid`). Each is copied into a fresh git repository and applied `--repeats` times on the
machine as it is, then `--repeats` times with `--busy` processes spinning beside it (two make a 2-core machine
fully loaded). `--cores` pins the applies and their busy processes to those cores; `--slots N` runs N workers
side by side, each pinned to its own 2 cores, so a 16-core machine is eight 2-core machines (what runs in one
slot, quiet or loaded, never shares its cores; the slots share the memory system). Records go to `--jsonl`,
one per apply; a second invocation with the same file runs only what is missing (`--seconds` stops starting
applies after that long, for machines lent by the call), and `--summarize` prints the table of such files.

Per fix the table gives the verdict the quiet runs gave most often, how many quiet and loaded runs agree with
it, what decided it (the structural counts, or a timing metric with its effect over its noise band), and the
pairs per arm each fix was given (mean, quiet vs loaded). A fix decided by structure should agree every time
whatever the load. The last lines count the timing-decided fixes whose effect was at least 3 times their band
and how many of them were decided within 2 pairs per arm.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import Entry
from warp_fix.config import load_config
from warp_fix.environ import prepended
from warp_fix.metrics import COLD_MODULE, TIMING
from warp_fix.wording import counted

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import corpus  # noqa: E402  (the corpus harness's staging: a scenario's checkout as a user has it)

DEFAULT_TARGETS = [
    "late_module_options",
    "unused_backward",
    "lifecycle_modules",
    "cache_discarded",
    "corpus:warp-example-fluid",
    "corpus:warp-example-wave",
    "corpus:warp-example-fem-diffusion",
]
GIT_IDENTITY = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]


@dataclass(frozen=True)
class FixRecord:
    """One fix's verdict in one apply."""

    slug: str
    outcome: str
    per_arm: int
    decided_by: str  # "structure", a timing metric's label, or "" (declined: never measured)
    effect_over_band: float | None  # |delta| / band of the deciding timing metric
    # Cold module work's change over its band, + slower, whatever decided: how far timing stood against a
    # structural win (a drop by contradiction needs CONTRADICTION_BANDS). None: not measured, or older records.
    cold_module_over_band: float | None = None


@dataclass(frozen=True)
class ApplyRecord:
    target: str
    condition: str  # quiet | loaded
    run: int
    seconds: float
    fixes: list[FixRecord]

    @classmethod
    def from_json(cls, data: dict) -> ApplyRecord:
        return cls(**{**data, "fixes": [FixRecord(**f) for f in data["fixes"]]})


@dataclass(frozen=True)
class Checkout:
    repo: Path
    command: list[str]
    test: str | None
    timeout: float | None
    vendor: Path | None = None  # packages the app has installed beside it (a fixture's `vendor/`)


def checkout(target: str, into: Path) -> Checkout:
    """The target as a user's repository, the command that runs it and its test command."""
    if target.startswith("corpus:"):
        (scenario,) = corpus.load_scenarios([target.removeprefix("corpus:")])
        repo = corpus.stage(scenario, into, corpus.Wheels.from_environment(None, into / "site"))
        test = scenario.test.replace("python ", f"{sys.executable} ") if scenario.test else None
        return Checkout(repo, corpus._argv(scenario.command), test, float(scenario.timeout))
    repo = into / target
    shutil.copytree(REPO / "fixtures" / target, repo)
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *GIT_IDENTITY, *argv], cwd=repo, check=True, capture_output=True)
    vendor = repo / "vendor"
    return Checkout(repo, _fixture_command(repo), None, None, vendor if vendor.is_dir() else None)


def _fixture_command(repo: Path) -> list[str]:
    """`[tool.warp-fix] command` of the fixture (a script: `python quickstart.py`), else `python -m` its package;
    run by this interpreter."""
    configured = load_config(repo, repo).command
    command = list(configured or ["python", "-m", next(p.parent.name for p in repo.glob("*/__main__.py"))])
    return [sys.executable if command[0] == "python" else command[0], *command[1:]]


def fix_record(entry: Entry) -> FixRecord:
    numbers = entry.numbers
    if numbers is None:
        return FixRecord(entry.slug, entry.outcome, 0, "", None)
    timing = next((m for m in TIMING if m.field in numbers.decided_by), None)
    delta = numbers.timing_of(timing) if timing else None
    ratio = abs(delta.delta) / delta.band if delta and delta.band else None
    basis = timing.label if timing else "structure"
    cold = numbers.timing_of(COLD_MODULE)
    cold_ratio = round(cold.delta / cold.band, 2) if cold and cold.band and not cold.not_applicable else None
    return FixRecord(entry.slug, entry.outcome, numbers.per_arm, basis, ratio, cold_ratio)


def one_apply(target: str, samples: int, scratch: Path, run: int, condition: str) -> ApplyRecord:
    started = time.perf_counter()
    place = checkout(target, scratch / f"{condition}{run}")
    request = build_request(
        command=place.command, cwd=place.repo, branch=f"wf/bench{run}", samples=samples, test=place.test,
        timeout=place.timeout,
    )  # fmt: skip
    # A vendored package is importable for the apply's runs and tests, as if installed (a worker runs one apply
    # at a time, so its environment is the apply's).
    beside = prepended("PYTHONPATH", str(place.vendor)) if place.vendor else contextlib.nullcontext()
    with beside:
        ledger = run_apply(request, progress=lambda _text: None).ledger
    fixes = [fix_record(e) for e in ledger.entries]
    return ApplyRecord(target, condition, run, round(time.perf_counter() - started, 1), fixes)


@dataclass(frozen=True)
class Job:
    target: str
    condition: str  # quiet | loaded
    run: int


def jobs_left(targets: list[str], conditions: list[str], repeats: int, done: list[ApplyRecord]) -> list[Job]:
    """Every (target, condition, run) not yet recorded, run index first: a stop at the deadline leaves every
    target and condition about equally far, and the next invocation with the same `--jsonl` goes on."""
    have = {(r.target, r.condition, r.run) for r in done}
    wanted = [Job(t, c, n) for n in range(repeats) for t in targets for c in conditions]
    return [job for job in wanted if (job.target, job.condition, job.run) not in have]


def worker(cores: set[int] | None, busy: int, samples: int, deadline: float, jobs, results) -> None:
    """Takes jobs until none is left or the deadline passed; a loaded job has `busy` spinning processes beside
    it, on the same cores (they inherit the pinning)."""
    if cores:
        os.sched_setaffinity(0, cores)
    with tempfile.TemporaryDirectory(prefix="verdicts-") as scratch:
        while time.time() < deadline:
            try:
                job = jobs.get(timeout=2.0)
            except queue.Empty:
                return
            spinners = [
                subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(busy if job.condition == "loaded" else 0)
            ]
            try:
                results.put(one_apply(job.target, samples, Path(scratch), job.run, job.condition))
            finally:
                for spinner in spinners:
                    spinner.kill()


def slots_of(cores: str | None, slots: int, width: int) -> list[set[int] | None]:
    """The cores each parallel worker is pinned to: `--cores` as given for one worker, else `slots` groups of
    `width` consecutive cores (a 16-core machine makes eight 2-core machines)."""
    if slots > 1:
        return [set(range(i * width, (i + 1) * width)) for i in range(slots)]
    return [{int(c) for c in cores.split(",")} if cores else None]


def run_jobs(jobs: list[Job], slots: list[set[int] | None], busy: int, samples: int, seconds: float, jsonl: Path):
    pending, results = multiprocessing.Queue(), multiprocessing.Queue()
    for job in jobs:
        pending.put(job)
    deadline = time.time() + seconds
    workers = [
        multiprocessing.Process(target=worker, args=(cores, busy, samples, deadline, pending, results))
        for cores in slots
    ]
    for process in workers:
        process.start()
    while any(p.is_alive() for p in workers) or not results.empty():
        try:
            record = results.get(timeout=1.0)
        except queue.Empty:
            continue
        with jsonl.open("a") as out:
            out.write(json.dumps(asdict(record)) + "\n")
        print(f"  {record.target} {record.condition} run {record.run + 1}: {record.seconds:.0f} s", flush=True)
    for process in workers:
        process.join()


def read_records(paths: list[Path]) -> list[ApplyRecord]:
    lines = [line for path in paths if path.exists() for line in path.read_text().splitlines() if line.strip()]
    return [ApplyRecord.from_json(json.loads(line)) for line in lines]


def _labels(fixes: list[FixRecord]) -> list[str]:
    """A fix's row: its slug, numbered when an apply has several fixes of one mechanism (one per module, say;
    the plan lists them in the same order every time)."""
    total = Counter(fix.slug for fix in fixes)
    seen: Counter[str] = Counter()
    labels = []
    for fix in fixes:
        seen[fix.slug] += 1
        labels.append(fix.slug if total[fix.slug] == 1 else f"{fix.slug} ({seen[fix.slug]})")
    return labels


def summarize(records: list[ApplyRecord]) -> None:
    by_fix: dict[tuple[str, str], dict[str, list[FixRecord]]] = defaultdict(lambda: {"quiet": [], "loaded": []})
    applies: dict[tuple[str, str], list[float]] = defaultdict(list)
    where: dict[int, str] = {}  # id(fix) -> "condition run N", for the list of disagreeing applies
    for record in records:
        applies[(record.target, record.condition)].append(record.seconds)
        for fix, label in zip(record.fixes, _labels(record.fixes), strict=True):
            by_fix[(record.target, label)][record.condition].append(fix)
            where[id(fix)] = f"{record.condition} run {record.run + 1}"
    print(
        f"{'target':34} {'fix':24} {'quiet verdict':13} {'quiet':>7} {'loaded':>7} {'decided by':24} "
        f"{'pairs q/l':>9}"
    )
    large, large_in_two = 0, 0
    odd: list[tuple[str, str, FixRecord]] = []
    for (target, slug), by in sorted(by_fix.items()):
        usual = Counter(f.outcome for f in by["quiet"]).most_common(1)[0][0] if by["quiet"] else "-"
        agree = [f"{sum(f.outcome == usual for f in by[c])}/{len(by[c])}" for c in ("quiet", "loaded")]
        bases = Counter(f.decided_by or "not measured" for f in by["quiet"] + by["loaded"]).most_common(1)[0][0]
        ratios = [f.effect_over_band for f in by["quiet"] + by["loaded"] if f.effect_over_band is not None]
        basis = f"{bases} ({statistics.median(ratios):.1f}x band)" if ratios else bases
        pairs = "/".join(
            f"{statistics.mean(f.per_arm for f in by[c]):.1f}" if by[c] else "-" for c in ("quiet", "loaded")
        )
        print(f"{target:34} {slug:24} {usual:13} {agree[0]:>7} {agree[1]:>7} {basis:24} {pairs:>9}")
        odd.extend((target, slug, fix) for fix in by["quiet"] + by["loaded"] if fix.outcome != usual)
        for fix in by["quiet"] + by["loaded"]:
            if fix.effect_over_band is not None and fix.effect_over_band >= 3.0:
                large += 1
                large_in_two += fix.per_arm <= 2
    print()
    for target, slug, fix in odd:
        cold = "not recorded" if fix.cold_module_over_band is None else f"{fix.cold_module_over_band:+.1f}x its band"
        print(f"disagreeing: {target} {slug}, {where[id(fix)]}: {fix.outcome} after {fix.per_arm} pairs per arm "
              f"(cold module work {cold})")
    for (target, condition), seconds in sorted(applies.items()):
        print(f"{target:34} {condition:7} {len(seconds):3} applies, median {statistics.median(seconds):.0f} s each")
    print(
        f"timing-decided fixes with an effect of at least 3x their band: {large}; decided within 2 pairs per "
        f"arm: {large_in_two}"
        + ("" if large else " (every fix here was decided by structure; benchmarks/sequential_rule.py covers timing)")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", default=DEFAULT_TARGETS)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--cores", help="comma-separated CPU numbers to pin to (Linux)")
    parser.add_argument("--slots", type=int, default=1, help="parallel workers, each on its own --slot-width cores")
    parser.add_argument("--slot-width", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=float("inf"), help="start no apply after this long")
    parser.add_argument("--condition", choices=("both", "quiet", "loaded"), default="both")
    parser.add_argument("--jsonl", type=Path, default=Path("verdicts.jsonl"), help="records, appended; resumed")
    parser.add_argument("--summarize", nargs="+", type=Path, metavar="FILE", help="only print the table of records")
    args = parser.parse_args()
    if args.summarize:
        summarize(read_records(args.summarize))
        return 0
    conditions = ["quiet", "loaded"] if args.condition == "both" else [args.condition]
    jobs = jobs_left(args.targets, conditions, args.repeats, read_records([args.jsonl]))
    slots = slots_of(args.cores, args.slots, args.slot_width)
    print(
        f"{len(jobs)} applies left of {args.repeats} per target and condition, on {counted(len(slots), 'worker')}; "
        f"--samples {args.samples}; loaded = {args.busy} busy processes on the worker's cores",
        flush=True,
    )
    run_jobs(jobs, slots, args.busy, args.samples, args.seconds, args.jsonl)
    summarize(read_records([args.jsonl]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
