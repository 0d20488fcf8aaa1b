"""An occupancy query before the launches, on CUDA: needs a GPU (skipped with the reason elsewhere).

Run on a GPU machine with `python -m pytest -q tests/gpu/test_gpu_early_load.py`.
"""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import FIXTURES, PYTHON
from tests.gpu.test_gpu_fixtures import _cuda_available

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device")]

COMMAND = [PYTHON, "-m", "occupancy"]


@pytest.fixture(scope="module")
def measured_and_planned():
    from warp_fix.plan import make_plan
    from warp_fix.probe import measure

    report = measure(COMMAND, FIXTURES / "gpu_occupancy_query", samples=1)
    return report, make_plan(report, FIXTURES / "gpu_occupancy_query")


def test_the_occupancy_query_builds_the_module_at_the_default_block_size(measured_and_planned):
    report, plan = measured_and_planned
    builds = [b for b in report.trace.builds if b.module == "occupancy.step"]
    assert sorted((b.block_dim, b.cause) for b in builds) == [(128, ""), (256, "get_suggested_block_size")]
    finding = next(f for f in plan.findings if f.slug == "early-load-block-size")
    assert finding.status == "fired", finding.reason
    (load,) = finding.facts.loads
    assert (load.block_dim, load.launch_block_dims) == (256, [128])


def test_the_module_takes_its_launches_block_size_as_its_default(measured_and_planned):
    """Every launch names block_dim=128: the module's default becomes 128, so the query loads that variant."""
    _, plan = measured_and_planned
    (fix,) = [f for f in plan.fixes if f.slug == "early-load-block-size"]
    assert (fix.codemod, fix.safety) == ("module_options", "safe")
    assert fix.args_json()["file"] == "occupancy/step.py"
    assert fix.args_json()["options"] == {"block_dim": 128}


def test_after_the_fix_the_module_builds_once_with_the_same_output(measured_and_planned, tmp_path):
    from codemods import run_codemod
    from warp_fix.compare import IMPROVED, compare
    from warp_fix.probe import measure

    report, plan = measured_and_planned
    (fix,) = [f for f in plan.fixes if f.slug == "early-load-block-size"]
    app = tmp_path / "gpu_occupancy_query"
    shutil.copytree(FIXTURES / "gpu_occupancy_query", app, ignore=shutil.ignore_patterns("__pycache__"))
    run_codemod(fix.codemod, app, fix.places)
    after = measure(COMMAND, app, samples=1)
    builds = [b for b in after.trace.builds if b.module == "occupancy.step"]
    assert [(b.block_dim, b.cause) for b in builds] == [(128, "get_suggested_block_size")]
    assert after.samples[0].stdout_sha256 == report.samples[0].stdout_sha256  # "height ..." unchanged
    assert compare(report, after).verdict == IMPROVED


def test_apply_keeps_the_default_block_size_as_one_commit(tmp_path):
    """apply for real: the last build is the launches' 128 in both arms; the proof of effect is that the
    query's build at 256 is gone (its build set moved), so the fix is kept, not "no effect"."""
    from tests.apply.conftest import fixture_repo, git
    from warp_fix.apply import build_request, run_apply
    from warp_fix.apply.ledger import KEPT

    repo = fixture_repo(tmp_path, "gpu_occupancy_query")
    request = build_request(command=COMMAND, cwd=repo, branch="wf/gpu", samples=1, only=["early-load-block-size"])
    (entry,) = [e for e in run_apply(request).ledger.entries if e.slug == "early-load-block-size"]
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["identities"] == (2, 1)
    assert git(repo, "diff", "--name-only", "main..wf/gpu").split() == ["occupancy/step.py"]


def test_plan_leaves_the_query_s_build_to_early_load_not_to_a_block_size_split(measured_and_planned):
    _, plan = measured_and_planned
    assert not [f for f in plan.fixes if f.slug == "block-dim-spread"]
