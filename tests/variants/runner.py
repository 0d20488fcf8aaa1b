"""Measure and plan a fixture and its variants, each in a copy of its own, and compare their verdicts.

A variant is a copy of the fixture with the transformation's files written over it. Both are probed for real
(one cold and one warm run) and planned from a fresh scan of their copy; the fixture's `vendor/` packages are on
PYTHONPATH as installed ones, as in tests/test_fixture_apps.py, after the folders a variant names (its `src/`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.variants.transform import Fixture, Skip, Transformation, Variant
from tests.variants.verdict import Verdict, renamed, unique_module
from warp_fix.apply import build_request, run_apply
from warp_fix.plan import make_plan
from warp_fix.probe import measure
from warp_fix.report import Report
from warp_fix.scan import scan_repository

PYTHON = os.environ.get("WARP_FIX_TARGET_PYTHON", sys.executable)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def cpu_fixtures() -> list[str]:
    return sorted(
        p.name for p in FIXTURES.iterdir() if (p / "pyproject.toml").is_file() and not p.name.startswith("gpu_")
    )


def materialize(fixture: Fixture, variant: Variant | None, directory: Path) -> Path:
    """The fixture copied to `directory`, the variant's files written over the copy."""
    shutil.copytree(fixture.root, directory, ignore=shutil.ignore_patterns("__pycache__", "build", ".warp-fix"))
    if variant is not None:
        for path in fixture.sources:
            (directory / path).unlink()
        for folder in sorted({p.parent for p in map(Path, fixture.sources)}, key=lambda p: -len(p.parts)):
            if folder.parts and not any((directory / folder).iterdir()):
                (directory / folder).rmdir()  # a package the variant moved leaves no folder of its name behind
        for path, text in variant.files.items():
            (directory / path).parent.mkdir(parents=True, exist_ok=True)
            (directory / path).write_text(text)
    return directory


@dataclass(frozen=True)
class Behaviour:
    """What the run did, for the check that a transformation preserved it: its output and its launches."""

    output: str
    launches: tuple[tuple[str, str, tuple[int, ...], tuple[str, ...]], ...]

    @classmethod
    def of(cls, report: Report) -> Behaviour:
        profile = report.output.profile
        output = profile.skeleton_sha256 if profile is not None else report.output.sha256
        launches = tuple(
            (launch.kernel, unique_module(launch.module), tuple(launch.dim), tuple(launch.dtypes))
            for launch in report.trace.launches
        )
        return cls(output, launches)

    def read_back(self, names: Mapping[str, str]) -> Behaviour:
        """The same run with the kernels and modules a transformation renamed read by their original names."""
        launches = tuple(
            (renamed(kernel, names), renamed(module, names), dim, dtypes)
            for kernel, module, dim, dtypes in self.launches
        )
        return Behaviour(self.output, launches)


@dataclass
class Measured:
    verdict: Verdict
    behaviour: Behaviour


def _argv(fixture: Fixture) -> list[str]:
    return [PYTHON if fixture.command[0] in ("python", "python3") else fixture.command[0], *fixture.command[1:]]


def _test_command(fixture: Fixture) -> str:
    """The fixture's own test command, run by this interpreter, leaving no pytest cache in the repository."""
    test = shlex.split(fixture.config["test"])
    if test[0] in ("python", "python3"):
        test[0] = PYTHON
    return shlex.join([*test, "-p", "no:cacheprovider"] if "pytest" in test else test)


def _python_path(root: Path, variant: Variant | None) -> str | None:
    """PYTHONPATH of the run: the variant's own folders, then the fixture's `vendor/` packages; None: neither."""
    folders = [root / folder for folder in (variant.python_path if variant is not None else ())]
    folders += [root / "vendor"] if (root / "vendor").is_dir() else []
    return os.pathsep.join(map(str, folders)) or None


def _environment(root: Path, variant: Variant | None) -> dict[str, str]:
    """The process environment with only the run's own folders on PYTHONPATH."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    path = _python_path(root, variant)
    return {**env, "PYTHONPATH": path} if path else env


def measure_and_plan(fixture: Fixture, variant: Variant | None, directory: Path) -> Measured:
    root = materialize(fixture, variant, directory)
    report = measure(_argv(fixture), root, samples=1, env=_environment(root, variant))
    plan = make_plan(report, root, index=scan_repository(root))
    verdict = Verdict.of(plan, variant.original_place, variant.names) if variant is not None else Verdict.of(plan)
    return Measured(verdict, Behaviour.of(report))


@dataclass
class Outcome:
    """One variant of one fixture: skipped (why), its behaviour changed, or its verdict's differences."""

    fixture: str
    transformation: str
    family: str
    mechanisms: list[str] = field(default_factory=list)  # those that fired on the original
    skipped: str = ""
    behaviour_changed: str = ""
    differences: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return not (self.skipped or self.behaviour_changed or self.differences)


def compare(original: Measured, fixture: Fixture, transformation: Transformation, directory: Path) -> Outcome:
    outcome = Outcome(fixture.name, transformation.NAME, transformation.FAMILY, sorted(original.verdict.mechanisms()))
    variant = transformation.apply(fixture)
    if isinstance(variant, Skip):
        outcome.skipped = variant.reason
        return outcome
    measured = measure_and_plan(fixture, variant, directory)
    measured.behaviour = measured.behaviour.read_back(variant.names)
    if measured.behaviour.output != original.behaviour.output:
        outcome.behaviour_changed = "the program's output differs"
    elif measured.behaviour.launches != original.behaviour.launches:
        outcome.behaviour_changed = "the ordered launches differ"
    outcome.differences = original.verdict.differences(measured.verdict)
    return outcome


# (mechanism, safety, outcome) of each ledger entry, sorted
Applied = tuple[tuple[str, str, str], ...]


def apply_outcomes(fixture: Fixture, variant: Variant | None, directory: Path) -> Applied:
    """apply for real (one sample per arm) on a git repository of the fixture or its variant: what it kept,
    dropped, declined or offered, per mechanism."""
    root = materialize(fixture, variant, directory)
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        identity = ["-c", "user.name=Variant", "-c", "user.email=variant@example.com"]
        subprocess.run(["git", *identity, *command], cwd=root, check=True, capture_output=True)
    saved = os.environ.pop("PYTHONPATH", None)
    path = _python_path(root, variant)
    if path:
        os.environ["PYTHONPATH"] = path
    try:
        request = build_request(
            command=_argv(fixture), cwd=root, branch="wf/variant", samples=1, test=_test_command(fixture)
        )
        ledger = run_apply(request).ledger
    finally:
        os.environ.pop("PYTHONPATH", None)
        if saved is not None:
            os.environ["PYTHONPATH"] = saved
    return tuple(sorted((entry.slug, str(entry.safety), entry.outcome) for entry in ledger.entries))
