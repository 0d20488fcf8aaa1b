"""Run warp-fix on real third-party Warp projects and compare what it says with expectations written by hand.

The fixtures of this repository are written to our own understanding of each mechanism; code written by other
people is the test that counts. Each scenario in `benchmarks/corpus/scenarios/*.toml` stages one project as its
developer's checkout (a fresh git repository holding the package's own source), runs the warp-fix CLI on it as a
user would (measure, plan, optionally apply) and checks the plan against the expectation in the scenario file.
A disagreement is a bug report against warp-fix, not against the expectation.

    python benchmarks/corpus.py [--only NAME ...] [--apply [--apply-only SLUG ...]] [--samples N] [--json FILE]
                                [--device cpu|cuda|all] [--wheels DIR]

Offline (a machine with no package index): `--wheels DIR` (or the directories in PIP_FIND_LINKS) holds the
scenarios' project wheels and any Python package warp-fix or a scenario needs that is not importable; those are
unpacked into a private site directory, never over what is already installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from warp_fix.apply.ledger import read_ledger
from warp_fix.metrics import COLD_MODULE
from warp_fix.wording import noun

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
SCENARIO_DIR = CORPUS_DIR / "scenarios"
SCRIPT_DIR = CORPUS_DIR / "scripts"
WHEEL_CACHE = Path(os.environ.get("WARP_FIX_CORPUS_CACHE", Path.home() / ".cache" / "warp-fix-corpus"))
GIT_IDENTITY = ["-c", "user.name=corpus", "-c", "user.email=corpus@localhost", "-c", "commit.gpgsign=false"]
APPLY_BRANCH = "wf/corpus"
WARP_FIX_NEEDS = ["warp", "numpy", "libcst", "yaml", "git", "gitdb", "smmap"]  # checked before any scenario runs
# Import names whose distribution (and so wheel) is named otherwise.
DISTRIBUTION_OF = {
    "warp": "warp-lang",
    "yaml": "pyyaml",
    "git": "gitpython",
    "PIL": "pillow",
    "nvalchemiops": "nvalchemi-toolkit-ops",
    "plum": "plum-dispatch",
    "physicsnemo": "nvidia-physicsnemo",
}


class CorpusError(Exception):
    """A scenario could not be staged or run; the message is one line for the table."""


@dataclass
class ExpectedFix:
    slug: str
    codemod: str  # codemod name, or "none" for an advisory report
    safety: str  # safe | consent | advisory
    target: str  # repository-relative file the fix edits ("" for none)


@dataclass
class Expectation:
    fires: dict[str, dict[str, str]]  # slug -> {evidence: "file:line", why: "..."}
    must_not_fire: dict[str, str]  # slug -> why
    fixes: list[ExpectedFix]
    verdict: str


@dataclass
class Scenario:
    """One project, staged one way, exercised by one command."""

    name: str
    project: str
    package: str  # PyPI name ("warp-lang" for Warp's own examples)
    version: str
    device: str  # cpu | cuda
    timeout: int  # seconds per run of the command
    command: list[str]
    test: str  # the project's test command for apply ("" for none)
    staging: dict[str, Any]
    expect: Expectation
    path: Path

    @classmethod
    def load(cls, path: Path) -> Scenario:
        data = tomllib.loads(path.read_text())
        exp = data["expect"]
        expectation = Expectation(
            fires=exp.get("fires", {}),
            must_not_fire=exp.get("must_not_fire", {}),
            fixes=[ExpectedFix(**f) for f in exp.get("fixes", [])],
            verdict=exp["verdict"].strip(),
        )
        return cls(
            name=data["name"],
            project=data["project"],
            package=data["package"],
            version=data["version"],
            device=data["device"],
            timeout=int(data["timeout"]),
            command=list(data["command"]),
            test=data.get("test", ""),
            staging=data["staging"],
            expect=expectation,
            path=path,
        )


def load_scenarios(only: list[str] | None = None, device: str = "all") -> list[Scenario]:
    scenarios = [Scenario.load(p) for p in sorted(SCENARIO_DIR.glob("*.toml"))]
    if only:
        unknown = set(only) - {s.name for s in scenarios}
        if unknown:
            raise CorpusError(f"unknown {noun(len(unknown), 'scenario')}: {', '.join(sorted(unknown))}")
        scenarios = [s for s in scenarios if s.name in only]
    if device != "all":
        scenarios = [s for s in scenarios if s.device == device]
    return scenarios


# --- staging: the project as its developer's checkout --------------------------------------------------------


def _run(argv: list[str], cwd: Path, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@dataclass
class Wheels:
    """Where wheels come from: local directories first (offline machines), then pip into a shared cache."""

    dirs: list[Path]
    site: Path  # missing packages are unpacked here and put on PYTHONPATH for every child process

    @classmethod
    def from_environment(cls, wheels_dir: str | None, site: Path) -> Wheels:
        dirs = [Path(wheels_dir)] if wheels_dir else []
        dirs += [Path(d) for d in os.environ.get("PIP_FIND_LINKS", "").split() if Path(d).is_dir()]
        return cls([d.resolve() for d in dirs], site)

    def find(self, distribution: str, version: str | None = None) -> Path | None:
        """A wheel of `distribution` (at `version`) that this interpreter can import, in a local dir or the cache."""
        stem = distribution.replace("-", "_").lower()
        for directory in [*self.dirs, WHEEL_CACHE]:
            for path in sorted(directory.glob("*.whl")):
                parts = path.name[: -len(".whl")].split("-")
                if len(parts) < 5:  # not a wheel name (name-version[-build]-python-abi-platform)
                    continue
                name, found_version, *_, python_tag, _abi, platform_tag = parts
                if name.lower() != stem or (version and found_version != version):
                    continue
                if _python_fits(python_tag) and _platform_fits(platform_tag):
                    return path
        return None

    def project_wheel(self, package: str, version: str) -> Path:
        """The scenario's pinned wheel; downloaded into the cache only when no local directory has it."""
        found = self.find(package, version)
        if found:
            return found
        if os.environ.get("PIP_NO_INDEX"):
            where = ", ".join(str(d) for d in self.dirs) or "no --wheels directory"
            raise CorpusError(f"no wheel of {package}=={version} (PIP_NO_INDEX is set; looked in {where})")
        WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"{package}=={version}"]
        done = _run([*argv, "-d", str(WHEEL_CACHE)], WHEEL_CACHE, timeout=600)
        found = self.find(package, version)
        if done.returncode != 0 or not found:
            raise CorpusError(f"pip could not download {package}=={version}: {done.stderr.strip().splitlines()[-1:]}")
        return found

    def make_importable(self, import_names: list[str]) -> None:
        """Unpack a wheel for each import name this interpreter lacks; what is importable is left alone."""
        missing = [name for name in import_names if importlib.util.find_spec(name) is None]
        if not missing:
            return
        found = {name: self.find(DISTRIBUTION_OF.get(name, name)) for name in missing}
        lacking = [name for name, wheel in found.items() if wheel is None]
        if lacking:
            where = ", ".join(str(d) for d in self.dirs) or "no --wheels directory"
            raise CorpusError(
                f"needs {', '.join(lacking)} in this interpreter ({sys.executable}): pip install them first, "
                f"or put their wheels in --wheels DIR (looked in {where})"
            )
        self.site.mkdir(parents=True, exist_ok=True)
        for wheel in found.values():
            with zipfile.ZipFile(wheel) as archive:  # a wheel's importable files sit at its root
                archive.extractall(self.site, [m for m in archive.namelist() if ".data/" not in m])
        if str(self.site) not in sys.path:
            sys.path.insert(0, str(self.site))
            os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.site), os.environ.get("PYTHONPATH")]))
        importlib.invalidate_caches()


def _python_fits(tag: str) -> bool:
    here = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return any(t in ("py3", f"py{sys.version_info.major}{sys.version_info.minor}", here) for t in tag.split("."))


def _platform_fits(tag: str) -> bool:
    machine = platform.machine()
    return any(t == "any" or (t.startswith(("manylinux", "linux")) and t.endswith(machine)) for t in tag.split("."))


def _warp_package_dir() -> Path:
    import warp

    return Path(warp.__file__).resolve().parent


def installed_warp_version() -> str:
    import warp

    return warp.__version__


def stage(scenario: Scenario, into: Path, wheels: Wheels) -> Path:
    """Create the checkout: the project's own files, committed in a fresh git repository. Returns its root."""
    recipe = scenario.staging
    kind = recipe["kind"]
    # Fetched first: a scenario may list its own project in `requires`, to use it as an installed library.
    project_wheel = wheels.project_wheel(scenario.package, scenario.version) if kind == "wheel" else None
    wheels.make_importable(recipe.get("requires", []))
    repo = into / scenario.name
    repo.mkdir(parents=True)
    if project_wheel is not None:
        with zipfile.ZipFile(project_wheel) as wheel:
            members = [m for m in wheel.namelist() if m.split("/", 1)[0] in recipe["packages"]]
            wheel.extractall(repo, members)
    elif kind == "warp-examples":
        if scenario.version != installed_warp_version():
            raise CorpusError(f"needs warp-lang {scenario.version}, found {installed_warp_version()}")
        source = _warp_package_dir()
        for name in recipe["files"]:
            shutil.copy2(source / name, repo / Path(name).name)
    else:
        raise CorpusError(f"unknown staging kind {kind!r} in {scenario.path.name}")
    for script in recipe.get("scripts", []):
        shutil.copy2(SCRIPT_DIR / script, repo / script)
    message = f"{scenario.package} {scenario.version}"
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", message]):
        done = _run(["git", *GIT_IDENTITY, *argv], repo)
        if done.returncode != 0:
            raise CorpusError(f"git {argv[0]} failed: {done.stderr.strip()}")
    return repo


# --- running warp-fix as its users do ---------------------------------------------------------------------------


def _argv(command: list[str]) -> list[str]:
    """The scenario's command with `python` meaning this interpreter (the one warp-fix and Warp are installed in)."""
    return [sys.executable if part == "python" else part for part in command]


def _warp_fix(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="160", NO_COLOR="1")
    argv = [sys.executable, "-m", "warp_fix", *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


@dataclass
class Outcome:
    """Everything one scenario produced; `--json` writes a list of these."""

    name: str
    device: str
    command: list[str]
    repo: str = ""
    error: str = ""
    seconds: float = 0.0
    samples: int = 0
    builds: int | None = None
    identities: int | None = None
    cold_module_ms: float | None = None
    cold_module_mad: float | None = None
    fired: list[str] = field(default_factory=list)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)  # slug -> status, reason, evidence
    planned: list[dict[str, Any]] = field(default_factory=list)  # id, slug, codemod, safety, files
    not_proposed: list[dict[str, str]] = field(default_factory=list)
    applied: bool = False
    apply_error: str = ""
    ledger: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # outcome -> fix id -> entry
    after_cold_module_ms: float | None = None
    after_n: int | None = None
    kept_diffs: dict[str, str] = field(default_factory=dict)  # commit -> `git show`
    disagreements: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool | None:
        return None if self.error else not self.disagreements


def measure_and_plan(scenario: Scenario, repo: Path, work: Path, samples: int, outcome: Outcome) -> None:
    report_path, plan_path = work / f"{scenario.name}.measure.json", work / f"{scenario.name}.plan.json"
    budget = scenario.timeout * (2 * samples + 1) + 120
    run_args = ["--cwd", str(repo), "--timeout", str(scenario.timeout), "--", *_argv(scenario.command)]
    done = _warp_fix(["measure", "--json", str(report_path), "--samples", str(samples), *run_args], repo, budget)
    if done.returncode != 0 or not report_path.exists():
        raise CorpusError(f"measure failed: {_tail(done)}")
    report = json.loads(report_path.read_text())
    outcome.warnings = list(report.get("warnings", []))
    summary = report.get("summary")
    if not summary:
        raise CorpusError("measure: no good sample")
    outcome.samples = len(summary["cold_module_ms"]["values"])
    outcome.builds = len(report["builds"])
    outcome.identities = summary["identities"]
    outcome.cold_module_ms = summary["cold_module_ms"]["median"]
    outcome.cold_module_mad = summary["cold_module_ms"]["mad"]
    plan_args = ["plan", "--from-report", str(report_path), "--root", str(repo), "--json", str(plan_path)]
    done = _warp_fix(plan_args, repo, 600)
    if done.returncode != 0 or not plan_path.exists():
        raise CorpusError(f"plan failed: {_tail(done)}")
    plan = json.loads(plan_path.read_text())
    outcome.findings = {
        f["slug"]: {
            "status": f["status"],
            "reason": f["reason"],
            "evidence": [_evidence_line(e) for e in f["evidence"]],
        }
        for f in plan["findings"]
    }
    outcome.fired = [f["slug"] for f in plan["findings"] if f["status"] == "fired"]
    outcome.planned = [
        {k: fix[k] for k in ("id", "slug", "codemod", "safety", "files", "lines", "title")} for fix in plan["fixes"]
    ]
    outcome.not_proposed = plan["not_proposed"]


def apply_fixes(
    scenario: Scenario, repo: Path, work: Path, samples: int, outcome: Outcome, only: list[str] | None = None
) -> None:
    ledger_path = work / f"{scenario.name}.ledger.json"
    args = ["apply", "--branch", APPLY_BRANCH, "--cwd", str(repo), "--json", str(ledger_path)]
    args += ["--samples", str(samples), "--timeout", str(scenario.timeout)]
    if only:
        args += ["--only", *only]
    if scenario.test:
        args += ["--test", scenario.test.replace("python ", f"{sys.executable} ")]
    done = _warp_fix([*args, "--", *_argv(scenario.command)], repo, 3600)
    outcome.applied = True
    if not ledger_path.exists():
        outcome.apply_error = f"apply failed: {_tail(done)}"
        return
    ledger = read_ledger(ledger_path)
    if ledger is None:
        outcome.apply_error = f"apply wrote a ledger this version cannot read: {ledger_path}"
        return
    if ledger.status != "complete":
        outcome.apply_error = f"apply {ledger.status}: {_tail(done)}"
    for entry in ledger.entries:
        kept = {"slug": entry.slug, "reason": entry.reason, "files": entry.files, "commit": entry.commit}
        outcome.ledger.setdefault(entry.outcome, {})[entry.fix_id] = kept
        if entry.outcome == "kept" and entry.commit:
            show = _run(["git", "show", "--stat", "--patch", entry.commit], repo)
            outcome.kept_diffs[entry.commit] = show.stdout
    timing = ledger.total.timing_of(COLD_MODULE) if ledger.total else None
    if timing and not timing.not_applicable:
        outcome.after_cold_module_ms = timing.after.median
        outcome.after_n = len(timing.after.values)


# --- agreement -------------------------------------------------------------------------------------------------


def disagreements(scenario: Scenario, outcome: Outcome) -> list[str]:
    """Plan (and ledger) against the written expectation. Each line names the kind of disagreement."""
    expect = scenario.expect
    fired = set(outcome.fired)
    found: list[str] = []
    for slug in sorted(fired - set(expect.fires)):
        why = expect.must_not_fire.get(slug, "not expected")
        found.append(f"false diagnosis: {slug} fired ({outcome.findings[slug]['reason']}); expected not: {why}")
    for slug in sorted(set(expect.fires) - fired):
        status = outcome.findings.get(slug, {}).get("status", "absent")
        found.append(f"missed diagnosis: {slug} is {status}; expected at {expect.fires[slug].get('evidence', '?')}")
    unmatched = list(outcome.planned)
    unmet = []
    for want in expect.fixes:  # exact matches first: a planned fix another expectation wants is not "wrong" here
        match = next((fix for fix in unmatched if fix["slug"] == want.slug and _fix_matches(fix, want)), None)
        if match is None:
            unmet.append(want)
        else:
            unmatched.remove(match)
    for want in unmet:
        same_slug = [fix for fix in unmatched if fix["slug"] == want.slug]
        if same_slug:
            got = same_slug[0]
            found.append(
                f"wrong fix for {want.slug}: planned {got['codemod'] or 'none'}/{got['safety']} on "
                f"{', '.join(got['files']) or '-'}; expected {want.codemod}/{want.safety} on {want.target or '-'}"
            )
            unmatched.remove(got)
        elif not _reported_without_edit(outcome, want):
            found.append(f"missing fix: {want.slug} {want.codemod}/{want.safety} on {want.target or '-'}")
    for fix in unmatched:
        found.append(f"extra fix: {fix['id']} {fix['slug']} {fix['codemod'] or 'none'}/{fix['safety']}")
    wanted = [f for f in expect.fixes if f.safety != "advisory"]
    for fix_id, entry in outcome.ledger.get("kept", {}).items():
        if not any(f.slug == entry["slug"] and (not f.target or f.target in entry["files"]) for f in wanted):
            where = ", ".join(entry["files"]) or "-"
            found.append(f"kept commit a reader would reject: {fix_id} {entry['slug']} on {where}")
    return found


def _reported_without_edit(outcome: Outcome, want: ExpectedFix) -> bool:
    """An expected report with no edit ("none", advisory) is met by a stated reason that names its file too."""
    return want.codemod == "none" and any(
        item["slug"] == want.slug and (not want.target or want.target in item["reason"])
        for item in outcome.not_proposed
    )


def _fix_matches(fix: dict[str, Any], want: ExpectedFix) -> bool:
    codemod = fix["codemod"] or "none"
    on_target = not want.target or want.target in fix["files"]
    return codemod == want.codemod and fix["safety"] == want.safety and on_target


# --- the whole run ---------------------------------------------------------------------------------------------


def run_scenario(
    scenario: Scenario,
    work: Path,
    samples: int,
    with_apply: bool,
    console: Console,
    wheels: Wheels | None = None,
    apply_only: list[str] | None = None,
) -> Outcome:
    outcome = Outcome(scenario.name, scenario.device, scenario.command)
    started = time.monotonic()
    try:
        console.print(f"[bold]{scenario.name}[/]: staging {scenario.package} {scenario.version}")
        repo = stage(scenario, work, wheels or Wheels.from_environment(None, work / "site-packages"))
        outcome.repo = str(repo)
        console.print(f"[bold]{scenario.name}[/]: measure ({samples} samples) and plan")
        measure_and_plan(scenario, repo, work, samples, outcome)
        outcome.disagreements = disagreements(scenario, outcome)
        if with_apply:
            console.print(f"[bold]{scenario.name}[/]: apply")
            apply_fixes(scenario, repo, work, samples, outcome, apply_only)
            outcome.disagreements = disagreements(scenario, outcome)
    except CorpusError as exc:
        outcome.error = str(exc)
    except subprocess.TimeoutExpired as exc:
        outcome.error = f"timed out after {exc.timeout:.0f} s"
    outcome.seconds = time.monotonic() - started
    return outcome


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def print_table(outcomes: list[Outcome], console: Console) -> None:
    table = Table(title="warp-fix on the corpus", show_lines=True)
    for column in ("scenario", "builds / ids", "cold module ms (n)", "after (n)", "fired", "fixes", "agrees"):
        table.add_column(column)
    for o in outcomes:
        if o.error:
            table.add_row(o.name, "-", "-", "-", "-", "-", f"[red]error[/]: {o.error}")
            continue
        if o.applied:
            counts = {k: len(o.ledger.get(k, {})) for k in ("kept", "dropped", "declined", "offered")}
            fixes = "{kept} kept / {dropped} dropped / {declined} declined / {offered} offered".format(**counts)
            if o.apply_error:
                fixes += f"\n{o.apply_error}"
        else:
            fixes = "\n".join(f"{f['id']} {f['slug']} ({f['safety']})" for f in o.planned) or "none planned"
        agrees = "[green]yes[/]" if o.agrees else "[red]no[/]\n" + "\n".join(o.disagreements)
        table.add_row(
            o.name,
            f"{o.builds} / {o.identities}",
            f"{_ms(o.cold_module_ms)} ±{_ms(o.cold_module_mad)} ({o.samples})",
            f"{_ms(o.after_cold_module_ms)} ({o.after_n})" if o.after_cold_module_ms is not None else "-",
            "\n".join(o.fired) or "none",
            fixes,
            agrees,
        )
    console.print(table)



def _evidence_line(evidence: dict[str, Any]) -> str:
    """`file:line detail`, or the detail alone for run-time evidence that has no source line."""
    if evidence.get("file") is None:
        return evidence["detail"]
    return f"{evidence['file']}:{evidence.get('line')} {evidence['detail']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", metavar="NAME", help="run this scenario (repeatable)")
    parser.add_argument("--apply", action="store_true", help="also run apply on a branch of each staged checkout")
    parser.add_argument(
        "--apply-only",
        action="append",
        metavar="SLUG",
        help="apply tries only fixes of this mechanism or id (repeatable; to fit a run into a time limit)",
    )
    parser.add_argument("--samples", type=int, default=3, help="cold+warm pairs for measure and apply (default 3)")
    parser.add_argument("--device", choices=("cpu", "cuda", "all"), default="all", help="scenarios of this device")
    parser.add_argument("--json", metavar="FILE", help="write every outcome here")
    parser.add_argument("--keep", metavar="DIR", help="stage into DIR and keep the checkouts (default: a temp dir)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--wheels", metavar="DIR", help="take wheels from DIR (offline machines; PIP_FIND_LINKS too)")
    args = parser.parse_args(argv)
    console = Console(width=int(os.environ.get("COLUMNS", "200")))
    try:
        scenarios = load_scenarios(args.only, args.device)
    except (CorpusError, tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        console.print(f"error: {exc}")
        return 2
    if args.list:
        for s in scenarios:
            console.print(f"{s.name:32} {s.device:5} {s.package} {s.version}: {' '.join(s.command)}")
        return 0
    if args.wheels and not Path(args.wheels).is_dir():
        console.print(f"error: --wheels {args.wheels}: not a directory")
        return 2
    with tempfile.TemporaryDirectory(prefix="warp-fix-corpus-") as tmp:
        work = Path(args.keep).resolve() if args.keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        wheels = Wheels.from_environment(args.wheels, work / "site-packages")
        try:
            wheels.make_importable(WARP_FIX_NEEDS)
        except CorpusError as exc:
            console.print(f"error: warp-fix {exc}")
            return 2
        outcomes = [
            run_scenario(s, work, args.samples, args.apply, console, wheels, args.apply_only) for s in scenarios
        ]
    print_table(outcomes, console)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(o) | {"agrees": o.agrees} for o in outcomes], indent=1) + "\n")
    return 0 if all(o.agrees for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
