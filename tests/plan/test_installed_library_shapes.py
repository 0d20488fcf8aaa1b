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
from warp_fix.model import CONSENT, SAFE
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


@pytest.fixture(scope="module")
def denoise(tmp_path_factory):
    repo, site = installed("installed_kernels", tmp_path_factory.mktemp("denoise"))
    return repo, site, measure([PYTHON, "-m", "denoise"], repo, samples=1, env={"PYTHONPATH": str(site)})


def test_an_installed_packages_backward_is_turned_off_at_the_entry_above_its_import(denoise):
    repo, _, report = denoise
    found, (fix,) = unused_backward(make_plan(report, repo))
    assert found.status == "fired" and found.facts.modules == ["imgkit.filters"]
    assert found.facts.off_per_kernel == ["denoise.mask"]
    assert (fix.codemod, fix.safety) == ("config_at_entry", CONSENT)
    assert fix.args_json() == {
        "file": "denoise/__main__.py", "name": "enable_backward", "value": False, "before_import": "imgkit",
    }


@pytest.mark.slow
def test_apply_proves_the_entry_setting_reached_the_packages_module(denoise, monkeypatch):
    repo, site, _ = denoise
    monkeypatch.setenv("PYTHONPATH", str(site))
    request = build_request(
        command=[PYTHON, "-m", "denoise"], cwd=repo, branch="wf/denoise", samples=1, only=["unused-backward"],
        allow=["unused-backward"], test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = run_apply(request).ledger.entries
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["adjoint_kernels"] == (3, 0)
    assert git(repo, "diff", "--name-only", "main..wf/denoise") == "denoise/__main__.py"
    main = git(repo, "show", "wf/denoise:denoise/__main__.py")
    assert main.index("wp.config.enable_backward = False") < main.index("import imgkit")
    assert main.index("import warp as wp") < main.index("wp.config.enable_backward = False")


@pytest.fixture(scope="module")
def survey(tmp_path_factory):
    repo, site = installed("small_project_module", tmp_path_factory.mktemp("survey"))
    return repo, site, measure([PYTHON, "-m", "survey"], repo, samples=1, env={"PYTHONPATH": str(site)})


def test_a_small_project_module_beside_a_large_library_gets_its_own_fix(survey):
    repo, _, report = survey
    assert report.summary.generated_source_bytes > 300_000  # spectra's unrolled DFT, beside ~10 KB of survey's
    found, (fix,) = unused_backward(make_plan(report, repo))
    assert found.status == "fired" and found.facts.modules == ["survey.bands"]
    assert (fix.codemod, fix.safety, fix.files) == ("module_options", SAFE, ["survey/bands.py"])


@pytest.mark.slow
def test_apply_judges_the_fix_on_its_own_module_not_the_librarys_bulk(survey, monkeypatch):
    repo, site, _ = survey
    monkeypatch.setenv("PYTHONPATH", str(site))
    request = build_request(
        command=[PYTHON, "-m", "survey"], cwd=repo, branch="wf/survey", samples=1, only=["unused-backward"],
        test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = run_apply(request).ledger.entries
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["adjoint_kernels"] == (1, 0)
    before, after = entry.numbers.structure["generated_source_bytes"]
    assert 0 < before - after < 0.02 * before
    assert git(repo, "diff", "--name-only", "main..wf/survey") == "survey/bands.py"
