"""An in-run clear_lto_cache() between two tile stages (fixtures/gpu_lto_clear), on a CUDA device.

Run on a GPU machine with `python -m pytest -q tests/gpu/test_gpu_lto_clear.py`.
"""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import FIXTURES, PYTHON
from tests.gpu.test_gpu_fixtures import _cuda_available

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device (GPU fixtures)"),
]

CLEAR_LINE = ("tiles/__main__.py", 14)


@pytest.fixture(scope="module")
def measured_and_planned():
    from warp_fix.plan import make_plan
    from warp_fix.probe import measure

    report = measure([PYTHON, "-m", "tiles"], FIXTURES / "gpu_lto_clear", samples=1)
    return report, make_plan(report, FIXTURES / "gpu_lto_clear")


def test_the_same_gemm_is_linked_twice_and_why_rebuilt_names_the_clear(measured_and_planned):
    report, _ = measured_and_planned
    compiled = [e.symbol for e in report.trace.lto_builds if e.compiled]
    assert compiled and len(compiled) > len(set(compiled)), report.trace.lto_builds
    assert report.summary.lto_builds == len(compiled)
    cleared = [
        reason
        for rebuild in report.rebuilds
        if rebuild.module == "tiles.mix"
        for reason in rebuild.reasons
        if reason.kind == "cache-cleared"
    ]
    assert cleared and "clear_lto_cache()" in cleared[0].detail
    assert (cleared[0].site.file, cleared[0].site.line) == CLEAR_LINE


def test_cache_discarded_fires_with_the_cold_run_cost_and_removes_the_clear(measured_and_planned):
    report, plan = measured_and_planned
    finding = next(f for f in plan.findings if f.slug == "cache-discarded")
    assert finding.status == "fired", finding.reason
    assert finding.facts.lto_relinks >= 1 and finding.facts.cold_ms > 0
    assert "cold run" in finding.reason and report.summary.warm_builds == 0
    (fix,) = [f for f in plan.fixes if f.slug == "cache-discarded"]
    args = fix.args_json()
    assert (fix.codemod, args["file"], args["lines"]) == ("keep_cache", CLEAR_LINE[0], [CLEAR_LINE[1]])
    assert "fewer MathDx LTO link" in fix.expected


def test_removing_the_clear_is_decided_by_structure(measured_and_planned, tmp_path):
    from codemods import run_codemod
    from warp_fix.compare import IMPROVED, compare
    from warp_fix.metrics import LTO_BUILDS
    from warp_fix.probe import measure

    report, plan = measured_and_planned
    (fix,) = [f for f in plan.fixes if f.slug == "cache-discarded"]
    app = tmp_path / "gpu_lto_clear"
    shutil.copytree(FIXTURES / "gpu_lto_clear", app, ignore=shutil.ignore_patterns("__pycache__"))
    run_codemod(fix.codemod, app, fix.places)
    after = measure([PYTHON, "-m", "tiles"], app, samples=1)
    assert after.summary.lto_builds == report.summary.lto_builds - finding_relinks(plan)
    comparison = compare(report, after)
    assert comparison.structure["lto_builds"][1] < comparison.structure["lto_builds"][0]
    assert comparison.verdict == IMPROVED, comparison.reasons
    assert any(LTO_BUILDS.label in reason for reason in comparison.reasons)  # "structure shrank: MathDx LTO builds"


def finding_relinks(plan) -> int:
    return next(f for f in plan.findings if f.slug == "cache-discarded").facts.lto_relinks
