"""Every supported Warp release: the CPU fixtures' plans on each, compared with the newest release's.

    python benchmarks/warp_matrix.py [--floor 1.9] [--venvs DIR] [--workers 2] [--json FILE]
                                     [--releases 1.12.1,1.19.0] [FIXTURE ...]

Lists the warp-lang releases the package index serves (`pip index versions warp-lang`), keeps the newest
patch of every minor release from `--floor` on, and gives each its own virtual environment under `--venvs`
(made once: `warp-lang==X` and numpy, nothing else; warp-fix itself runs from this interpreter and probes
the fixture with that environment's python, as a user's application runs in its own environment). Each
fixture is probed once (one cold+warm pair) and planned. Per release it prints which verdicts differ from
the newest release's and why: a mechanism whose status differs (with both reasons), a fix proposed on one
side only, a tracer error or a log-only fallback. Verdicts are structural (statuses, fix slugs and codemod
arguments): milliseconds are not compared, so a loaded machine does not move them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import venv
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# One fixture per mechanism that fires on the CPU, and the clean one.
DEFAULT_FIXTURES = [
    "clean", "kernel_after_load", "cache_discarded", "late_module_options", "config_after_import",
    "serial_modules", "late_overloads", "unique_on_stable", "unused_backward", "precompiled_header",
    "factory_in_loop", "noop_options", "salted_kernel_names", "early_load_block_size",
]


@dataclass(frozen=True)
class FixtureOutcome:
    """What one release made of one fixture: the verdict of every mechanism and the fixes proposed."""

    release: str
    fixture: str
    warp_version: str = ""
    statuses: dict[str, str] = field(default_factory=dict)  # mechanism slug -> fired | ruled-out | n/a
    reasons: dict[str, str] = field(default_factory=dict)
    fixes: list[str] = field(default_factory=list)  # "slug codemod {args}"
    warnings: list[str] = field(default_factory=list)  # tracer errors and fallbacks the probe reported
    builds: int = 0
    error: str = ""


def releases_on_index(floor: tuple[int, int]) -> list[str]:
    """The newest patch of each minor release from `floor` on, oldest first, as pip's index lists them."""
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "warp-lang"], capture_output=True, text=True, check=True
    ).stdout
    line = next(x for x in listing.splitlines() if x.startswith("Available versions:"))
    newest: dict[tuple[int, int], tuple[int, ...]] = {}
    for text in line.split(":", 1)[1].split(","):
        if not re.fullmatch(r"\d+\.\d+\.\d+", text.strip()):
            continue  # pre-releases and odd spellings
        version = tuple(int(part) for part in text.strip().split("."))
        minor = version[:2]
        if minor >= floor and version > newest.get(minor, ()):
            newest[minor] = version
    return [".".join(map(str, newest[minor])) for minor in sorted(newest)]


def release_python(venvs: Path, release: str) -> Path:
    """The python of an environment holding warp-lang==release (created on first use)."""
    directory = venvs / f"warp-{release}"
    python = directory / "bin" / "python"
    probe = [str(python), "-c", "import warp; print(warp.config.version)"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == release:
        return python
    venv.create(directory, with_pip=True, clear=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"warp-lang=={release}", "numpy"], check=True
    )
    return python


def _command(fixture: str, python: Path) -> list[str]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with open(FIXTURES / fixture / "pyproject.toml", "rb") as f:
        command = list(tomllib.load(f)["tool"]["warp-fix"]["command"])
    return [str(python), *command[1:]]


def plan_fixture(release: str, python: Path, fixture: str) -> FixtureOutcome:
    from warp_fix.plan import make_plan
    from warp_fix.probe import ProbeError, measure

    directory = FIXTURES / fixture
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if (directory / "vendor").is_dir():  # packages the fixture has installed beside it
        env["PYTHONPATH"] = str(directory / "vendor")
    try:
        report = measure(_command(fixture, python), directory, samples=1, env=env)
    except ProbeError as exc:
        return FixtureOutcome(release, fixture, error=str(exc))
    plan = make_plan(report, directory)
    return FixtureOutcome(
        release=release,
        fixture=fixture,
        warp_version=report.warp_version,
        statuses={f.slug: f.status for f in plan.findings},
        reasons={f.slug: f.reason for f in plan.findings},
        fixes=sorted(f"{x.slug} {x.codemod} {json.dumps(x.to_json()['args'], sort_keys=True)}" for x in plan.fixes),
        warnings=[w for w in report.warnings if "tracer" in w or "could not be hooked" in w],
        builds=len(report.builds),
    )


def differences(outcome: FixtureOutcome, reference: FixtureOutcome) -> list[str]:
    """Why `outcome` is not the reference's verdict, one line each; empty when they agree."""
    if outcome.error or reference.error:
        return [f"probe failed: {outcome.error}"] if outcome.error else [f"reference failed: {reference.error}"]
    lines = [f"warning: {w}" for w in outcome.warnings]
    for slug in sorted(set(outcome.statuses) | set(reference.statuses)):
        mine, theirs = outcome.statuses.get(slug, "absent"), reference.statuses.get(slug, "absent")
        if mine != theirs:
            lines.append(
                f"{slug}: {mine} ({outcome.reasons.get(slug, '')}) where the reference is {theirs} "
                f"({reference.reasons.get(slug, '')})"
            )
    for fix in sorted(set(outcome.fixes) ^ set(reference.fixes)):
        lines.append(("only here: " if fix in outcome.fixes else "only in the reference: ") + fix)
    return lines


def _run(job: tuple[str, str, str]) -> FixtureOutcome:
    release, python, fixture = job
    try:
        outcome = plan_fixture(release, Path(python), fixture)
    except Exception as exc:  # one fixture's failure is a row of the table, not the end of the matrix
        outcome = FixtureOutcome(release, fixture, error=f"{type(exc).__name__}: {exc}")
    print(f"done {release} {fixture}{' (failed)' if outcome.error else ''}", file=sys.stderr, flush=True)
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixtures", nargs="*", default=DEFAULT_FIXTURES)
    parser.add_argument("--floor", default="1.9", help="oldest minor release (default: 1.9)")
    parser.add_argument("--releases", help="these releases (comma-separated) instead of the index's")
    parser.add_argument("--venvs", type=Path, default=Path("/tmp/warp-matrix"), help="where the environments go")
    parser.add_argument("--workers", type=int, default=2, help="fixtures probed at once (default 2)")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    args = parser.parse_args()
    floor = tuple(int(part) for part in args.floor.split("."))[:2]
    releases = args.releases.split(",") if args.releases else releases_on_index(floor)
    print(f"{datetime.date.today()}: releases {', '.join(releases)}; fixtures {', '.join(args.fixtures)}")
    pythons = {release: release_python(args.venvs, release) for release in releases}
    jobs = [(release, str(pythons[release]), fixture) for release in releases for fixture in args.fixtures]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        outcomes = list(pool.map(_run, jobs))
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    newest = releases[-1]
    reference = {o.fixture: o for o in outcomes if o.release == newest}
    print(f"\n| release | fixtures agreeing with {newest} | differences |\n|---|---|---|")
    for release in releases:
        mine = [o for o in outcomes if o.release == release]
        found = {o.fixture: differences(o, reference[o.fixture]) for o in mine}
        agreeing = sum(1 for lines in found.values() if not lines)
        detail = "; ".join(f"{fixture}: {' / '.join(lines)}" for fixture, lines in found.items() if lines)
        print(f"| {release} | {agreeing}/{len(mine)} | {detail or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
