"""Applications that use an installed package's kernels, on real runs: the package lives outside the repository
(on PYTHONPATH, as a user's site-packages), so no fix may edit it, and what the run itself did with its modules
decides."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.apply.conftest import PYTHON, git, init_repo
from tests.conftest import FIXTURES
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.model import SAFE
from warp_fix.plan import make_plan
from warp_fix.probe import measure


def installed(name: str, root: Path) -> tuple[Path, Path]:
    """The fixture as a user's repository (without `vendor/`) and its `vendor/` packages as a site directory."""
    source = FIXTURES / name
    tracked = git(FIXTURES, "ls-files", name).splitlines()
    files = {
        Path(path).relative_to(name).as_posix(): (FIXTURES / path).read_text()
        for path in tracked
        if Path(path).relative_to(name).parts[0] != "vendor"
    }
    site = root / "site"
    shutil.copytree(source / "vendor", site, ignore=shutil.ignore_patterns("__pycache__"))
    return init_repo(root / name, files), site


def unused_backward(plan):
    found = next(f for f in plan.findings if f.slug == "unused-backward")
    return found, [f for f in plan.fixes if f.slug == "unused-backward"]


@pytest.fixture(scope="module")
def walker(tmp_path_factory):
    repo, site = installed("tape_rollout", tmp_path_factory.mktemp("walker"))
    report = measure([PYTHON, "-m", "walker"], repo, samples=1, env={"PYTHONPATH": str(site)})
    return repo, site, report


def test_modules_the_runs_tape_records_are_differentiated_wherever_they_are_launched_from(walker):
    repo, _, report = walker
    recorded = {(use.module, use.kind) for use in report.trace.gradient_uses}
    assert {("tinynet.layers", "recorded"), ("walker.rollout", "recorded"), ("walker.train", "recorded")} <= recorded
    found, (fix,) = unused_backward(make_plan(report, repo))
    assert found.status == "fired" and found.facts.modules == ["walker.optim"]
    assert sorted(found.facts.differentiated) == ["tinynet.layers", "walker.rollout", "walker.train"]
    assert found.facts.differentiated_elsewhere == {}  # sgd_step() runs after the `with tape:` block
    assert (fix.codemod, fix.safety, fix.files) == ("module_options", SAFE, ["walker/optim.py"])
    assert not any("tinynet" in f.title + f.description for f in unused_backward(make_plan(report, repo))[1])


@pytest.mark.slow
def test_apply_turns_backward_off_in_the_optimizer_only(walker, monkeypatch):
    repo, site, _ = walker
    monkeypatch.setenv("PYTHONPATH", str(site))
    request = build_request(
        command=[PYTHON, "-m", "walker"], cwd=repo, branch="wf/walker", samples=1, only=["unused-backward"],
        test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = run_apply(request).ledger.entries
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["adjoint_kernels"] == (4, 3)
    assert git(repo, "diff", "--name-only", "main..wf/walker") == "walker/optim.py"
