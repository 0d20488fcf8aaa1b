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
from warp_fix.apply.ledger import DROPPED, KEPT, Entry
from warp_fix.model import CONSENT, SAFE
from warp_fix.plan import make_plan
from warp_fix.probe import measure
from warp_fix.report import Report


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


def measured_app(name: str, package: str, root: Path) -> tuple[Path, Path, Report]:
    """The fixture as a user's repository, its site directory, and one real measurement of `python -m package`."""
    repo, site = installed(name, root)
    return repo, site, measure([PYTHON, "-m", package], repo, samples=1, env={"PYTHONPATH": str(site)})


def apply_unused_backward(
    app: tuple[Path, Path, Report], package: str, monkeypatch, outcomes: tuple[str, ...] = (KEPT,), **flags
) -> Entry:
    """apply for real, unused-backward only, the app's installed packages on PYTHONPATH; its one ledger entry."""
    repo, site, _ = app
    monkeypatch.setenv("PYTHONPATH", str(site))
    request = build_request(
        command=[PYTHON, "-m", package], cwd=repo, branch=f"wf/{package}", samples=1, only=["unused-backward"],
        test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests", **flags,
    )
    (entry,) = run_apply(request).ledger.entries
    assert entry.outcome in outcomes, entry.reason
    return entry


@pytest.fixture(scope="module")
def walker(tmp_path_factory):
    return measured_app("tape_rollout", "walker", tmp_path_factory.mktemp("walker"))


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
    entry = apply_unused_backward(walker, "walker", monkeypatch)
    assert entry.numbers.structure["adjoint_kernels"] == (4, 3)
    assert git(walker[0], "diff", "--name-only", "main..wf/walker") == "walker/optim.py"


@pytest.fixture(scope="module")
def denoise(tmp_path_factory):
    return measured_app("installed_kernels", "denoise", tmp_path_factory.mktemp("denoise"))


def test_an_installed_packages_backward_is_turned_off_at_the_entry_above_its_import(denoise):
    repo, _, report = denoise
    found, (fix,) = unused_backward(make_plan(report, repo))
    assert found.status == "fired" and found.facts.modules == ["imgkit.filters"]
    assert found.facts.off_per_kernel == ["denoise.mask"]
    assert (fix.codemod, fix.safety) == ("config_at_entry", CONSENT)
    assert fix.args_json() == {
        "file": "denoise/__main__.py", "name": "enable_backward", "value": False,
        "before_line": 3, "before_statement": "import imgkit",
    }


@pytest.mark.slow
def test_apply_proves_the_entry_setting_reached_the_packages_module(denoise, monkeypatch):
    repo = denoise[0]
    entry = apply_unused_backward(denoise, "denoise", monkeypatch, allow=["unused-backward"])
    assert entry.numbers.structure["adjoint_kernels"] == (3, 0)
    assert git(repo, "diff", "--name-only", "main..wf/denoise") == "denoise/__main__.py"
    main = git(repo, "show", "wf/denoise:denoise/__main__.py")
    assert main.index("wp.config.enable_backward = False") < main.index("import imgkit")
    assert main.index("import warp as wp") < main.index("wp.config.enable_backward = False")


@pytest.fixture(scope="module")
def survey(tmp_path_factory):
    return measured_app("small_project_module", "survey", tmp_path_factory.mktemp("survey"))


def test_a_small_project_module_beside_a_large_library_gets_its_own_fix(survey):
    repo, _, report = survey
    assert report.summary.generated_source_bytes > 300_000  # spectra's unrolled DFT, beside ~10 KB of survey's
    found, (fix,) = unused_backward(make_plan(report, repo))
    assert found.status == "fired" and found.facts.modules == ["survey.bands"]
    assert (fix.codemod, fix.safety, fix.files) == ("module_options", SAFE, ["survey/bands.py"])


@pytest.mark.slow
def test_apply_judges_the_fix_on_its_own_module_not_the_librarys_bulk(survey, monkeypatch):
    repo = survey[0]
    # One kernel's adjoint is a small win: beside the suite's other real runs, timing may stand against it for 3
    # pairs, and the contradiction rule then drops it (the safe error, docs/apply.md). Either way the structure
    # it was judged on must be its own module's.
    entry = apply_unused_backward(survey, "survey", monkeypatch, outcomes=(KEPT, DROPPED))
    assert entry.numbers.structure["adjoint_kernels"] == (1, 0)
    before, after = entry.numbers.structure["generated_source_bytes"]
    assert 0 < before - after < 0.02 * before
    if entry.outcome == DROPPED:
        assert entry.reason.startswith("structure and timing disagree"), entry.reason
    else:
        assert git(repo, "diff", "--name-only", "main..wf/survey") == "survey/bands.py"
