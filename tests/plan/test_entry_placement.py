"""Where the process-wide setting goes, decided from the run (fixtures/entry_placement, real runs).

A wave-tank library is the repository, with a private sub-package under a namespace folder
(`ripple/_src/solver/kernels.py`) and examples as entry points. One example differentiates the solver's kernels,
so for every forward example unused-backward offers `wp.config.enable_backward = False` at that example only.
The setting must run before the module is created, and the run shows which of the entry's top-level statements
created it: a setup call that imports the library inside, an aliased import, an import of another sub-module whose
package `__init__` imports the kernels, an import written above `import warp`. Each shape gets the same verdict,
the statement the run recorded as its place, and, applied with consent, a module built with backward off and
another hash. `python -m ripple` creates the module in the package's `__init__`, before its `__main__` runs: no
setting there can reach it, so the plan says so instead of proposing one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.apply.conftest import PYTHON, git, init_repo
from tests.conftest import FIXTURES
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.mechanisms._base import Inputs
from warp_fix.model import CONSENT
from warp_fix.plan import make_plan
from warp_fix.probe import measure
from warp_fix.report import Report
from warp_fix.scan import scan_repository

SOLVER = "ripple._src.solver.kernels"
KERNELS_FILE = "ripple/_src/solver/kernels.py"

# entry example -> (the statement the run shows creating the solver's module, its line)
CREATED_BY = {
    "example_setup": ("options = setup(sys.argv[1:])", 9),
    "example_alias": ("import ripple as rp", 6),
    "example_scenario": ("from ripple.scenarios import two_stones", 5),
    "example_before_warp": ("import ripple", 4),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """The fixture as a user's repository (apply needs one)."""
    name = "entry_placement"
    files = {
        Path(path).relative_to(name).as_posix(): (FIXTURES / path).read_text()
        for path in git(FIXTURES, "ls-files", name).splitlines()
    }
    return init_repo(tmp_path_factory.mktemp("ripple") / "ripple", files)


@pytest.fixture(scope="module")
def runs(repo) -> dict[str, Report]:
    """One measured run of each forward example, and of `python -m ripple`."""
    commands = {example: [PYTHON, "-m", f"examples.{example}"] for example in CREATED_BY}
    commands["ripple"] = [PYTHON, "-m", "ripple"]
    return {name: measure(command, repo, samples=1) for name, command in commands.items()}


def entry_fix(report: Report, repo: Path):
    plan = make_plan(report, repo)
    finding = next(f for f in plan.findings if f.slug == "unused-backward")
    return finding, [f for f in plan.fixes if f.slug == "unused-backward"], plan


@pytest.mark.parametrize("example", CREATED_BY)
def test_the_setting_goes_above_the_statement_the_run_shows_creating_the_module(runs, repo, example):
    statement, line = CREATED_BY[example]
    finding, (fix,), _ = entry_fix(runs[example], repo)
    assert finding.status == "fired" and finding.facts.modules == [SOLVER]
    assert finding.facts.differentiated_elsewhere == {SOLVER: "examples/example_sensitivity.py:11"}
    assert (fix.codemod, fix.safety, fix.targets) == ("config_at_entry", CONSENT, [SOLVER])
    assert fix.args_json() == {
        "file": f"examples/{example}.py", "name": "enable_backward", "value": False,
        "before_line": line, "before_statement": statement,
    }
    assert f"above `{statement}` at examples/{example}.py:{line}, the statement that created it in the run" in (
        fix.description
    )


def test_the_run_records_the_creation_stack_down_from_the_entry_statement(runs):
    (build,) = runs["example_scenario"].trace.builds
    assert [(frame.file, frame.line, frame.function) for frame in build.creation_stack] == [
        (KERNELS_FILE, 6, "<module>"),  # the first @wp.kernel
        ("ripple/_src/solver/tank.py", 7, "<module>"),
        ("ripple/__init__.py", 3, "<module>"),  # the package's __init__ imports the solver
        ("examples/example_scenario.py", 5, "<module>"),
    ]


def test_module_names_come_from_the_run_not_from_the_folders(runs, repo):
    """`ripple/_src` has no `__init__.py`: the folders alone name the file `solver.kernels`; Python named it
    `ripple._src.solver.kernels`, and so does every line of the plan."""
    report = runs["example_alias"]
    assert {k.python_module for b in report.trace.builds for k in b.kernel_sources} == {SOLVER}
    inputs = Inputs(report, scan_repository(repo))
    assert inputs.python_module_of(KERNELS_FILE) == SOLVER
    assert inputs.scope.defined_in(report.trace.builds[0]) == SOLVER
    _, _, plan = entry_fix(report, repo)
    text = " ".join(fix.description for fix in plan.fixes) + " ".join(n.reason for n in plan.not_proposed)
    assert not re.search(r"(?<![\w.])solver\.kernels", text)


def test_a_module_the_package_init_created_before_main_ran_is_out_of_reach(runs, repo):
    finding, fixes, plan = entry_fix(runs["ripple"], repo)
    assert finding.status == "fired" and fixes == []
    (reason,) = [n.reason for n in plan.not_proposed if n.slug == "unused-backward"]
    assert reason.startswith(f"{SOLVER} compile unused backward code, but it was created before the entry point ran")
    assert "`from ripple._src.solver.tank import Tank` at ripple/__init__.py:3" in reason


@pytest.mark.slow
@pytest.mark.parametrize("example", CREATED_BY)
def test_apply_with_consent_moves_the_modules_options_and_hash(runs, repo, example):
    branch = f"wf/{example}"
    request = build_request(
        command=[PYTHON, "-m", f"examples.{example}"], cwd=repo, branch=branch, samples=1,
        only=["unused-backward"], allow=["unused-backward"], test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = run_apply(request).ledger.entries
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["adjoint_kernels"] == (3, 0)
    assert git(repo, "diff", "--name-only", f"main..{branch}") == f"examples/{example}.py"
    statement, _ = CREATED_BY[example]
    edited = git(repo, "show", f"{branch}:examples/{example}.py")
    assert edited.index("wp.config.enable_backward = False") < edited.index(statement)

    git(repo, "checkout", "-q", branch)
    try:
        after = measure([PYTHON, "-m", f"examples.{example}"], repo, samples=1)
    finally:
        git(repo, "checkout", "-q", "main")
    (before,), (built,) = runs[example].trace.builds, after.trace.builds
    assert built.module == before.module == SOLVER
    assert (before.options["enable_backward"], built.options["enable_backward"]) == (True, False)
    assert built.hash != before.hash
