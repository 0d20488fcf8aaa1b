"""A module whose f16 and f32 tile GEMMs both link MathDx code is split by kernel, measured both ways.

The fixture `gpu_mathdx_split` forces MathDx on for one module holding both GEMMs. On the H200 the f16 GEMM
runs 3.6x faster with MathDx and the f32 one no faster (benchmarks/gpu_mathdx_sets.py), while each LTO build
costs seconds. The tracer attributes each LTO build to the kernel whose code generation asked for it, the plan
proposes one consent split per kernel, and apply (with `--allow mathdx-lto`) keeps the f32 move, which saves
its LTO build and loses no kernel time, and only offers MathDx off for the f16 GEMM, which makes the kernels
slower. Run on a GPU machine with `python -m pytest -q tests/gpu`.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import FIXTURES, PYTHON
from tests.gpu.test_gpu_fixtures import pytestmark  # noqa: F401  (skipped without CUDA)
from warp_fix.metrics import KERNEL


@pytest.fixture(scope="module")
def applied(tmp_path_factory):
    from warp_fix.apply import build_request, run_apply
    from warp_fix.plan import make_plan

    repo = tmp_path_factory.mktemp("split") / "gemms"
    shutil.copytree(FIXTURES / "gpu_mathdx_split", repo, ignore=shutil.ignore_patterns("__pycache__"))
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "Ada Tester"],
        ["config", "user.email", "ada@example.com"],
        ["add", "-A"],
        ["commit", "-q", "-m", "fixture"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    # the fixture's own tests ran on the CPU after the same edit (tests/codemods/test_split_by_options_runs.py);
    # here each of them would be one more MathDx build
    # Moving one kernel out is a mixed structure change (one more module, one LTO build fewer): timing decides,
    # so three samples per arm. The f32 move is tried first (the planner lists the f16 one first): once it is
    # kept, the module holds one MathDx kernel and the plan turns MathDx off for it instead, which the cheaper
    # state then measures within one device call.
    plans = []

    def planner(report, root, command):
        plan = make_plan(report, root, command)
        plan.fixes.sort(key=lambda fix: "gemm32" not in fix.args_json().get("kernels", []))
        plans.append(plan)
        return plan

    request = build_request(
        command=[PYTHON, "-m", "gemms"], cwd=repo, branch="wf/split", samples=3, allow=["mathdx-lto"], test=""
    )
    result = run_apply(request, planner=planner, progress=print)
    print(subprocess.run(["git", "log", "-p", "main..wf/split"], cwd=repo, capture_output=True, text=True).stdout)
    return plans[0], result  # the first plan (apply plans again after a kept fix)


def test_each_lto_build_is_attributed_to_its_kernel(applied):
    plan, _ = applied
    finding = next(f for f in plan.findings if f.slug == "mathdx-lto")
    (module,) = finding.facts.modules
    assert module.module == "gemms.kernels"
    assert {key: used.options for key, used in module.kernels.items()} == {
        "gemm16": ["enable_mathdx_gemm"],
        "gemm32": ["enable_mathdx_gemm"],
    }


def test_the_plan_splits_by_kernel_instead_of_turning_mathdx_off_for_the_module(applied):
    plan, _ = applied
    splits = [f for f in plan.fixes if f.codemod == "split_by_options"]
    assert sorted(f.args_json()["kernels"][0] for f in splits) == ["gemm16", "gemm32"]
    for fix in splits:
        assert fix.safety == "consent" and fix.measure_kernels
        assert fix.args_json()["module"] == "gemms.kernels_without_mathdx"
        assert fix.args_json()["options"] == {"enable_mathdx_gemm": False, "enable_backward": False}
    assert not [f for f in plan.fixes if f.slug == "mathdx-lto" and f.codemod == "module_options"]


def test_the_f32_move_is_kept_and_mathdx_off_for_the_f16_gemm_only_offered(applied):
    from warp_fix.apply.ledger import KEPT, OFFERED

    _, result = applied
    first, *rest = result.ledger.entries
    assert first.title == "Build gemm32 without MathDx, in a module of its own"
    assert first.outcome == KEPT, first.reason
    lto_before, lto_after = first.numbers.structure["lto_builds"]
    assert lto_after < lto_before
    kernel = first.numbers.timing_of(KERNEL)
    assert kernel is not None and not (kernel.significant and kernel.delta > 0)
    (f16,) = [e for e in rest if e.slug == "mathdx-lto"]  # after the move: MathDx off for the module's f16 GEMM
    assert f16.outcome == OFFERED, f16.reason
    assert "kernels slower beyond the noise band" in f16.reason
