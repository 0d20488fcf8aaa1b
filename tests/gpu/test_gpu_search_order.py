"""apply on block-size variants plus late generic instances reaches the fewest identities in either plan order.

The fixture `gpu_overloads` launches generic kernels at two CUDA block sizes and instantiates new types after
its module loaded (3 identities). `lerp_into` runs at 128 and 256, so a split by block size would make three
modules and leave the late instances' rebuilds. Measured here while the split was still proposed: the order
that tried it first kept it and not the overloads, the other order kept the overloads alone and reached 2
identities: one build per block size with every instance registered. The split is not
proposed for that shape, and the planner's order must not matter. Run on a GPU machine with
`python -m pytest -q tests/gpu`.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import FIXTURES, PYTHON
from tests.gpu.test_gpu_fixtures import pytestmark  # noqa: F401  (skipped without CUDA)


def applied(tmp_path, order: str):
    from warp_fix.apply import build_request, run_apply
    from warp_fix.apply.ledger import KEPT
    from warp_fix.plan import make_plan

    repo = tmp_path / order / "blend"
    shutil.copytree(FIXTURES / "gpu_overloads", repo, ignore=shutil.ignore_patterns("__pycache__"))
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "Ada Tester"],
        ["config", "user.email", "ada@example.com"],
        ["add", "-A"],
        ["commit", "-q", "-m", "fixture"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    listed: list[list[str]] = []

    def planner(report, root, command):
        plan = make_plan(report, root, command)
        if order == "reversed":
            plan.fixes.reverse()
        listed.append([f.slug for f in plan.fixes])
        return plan

    request = build_request(command=[PYTHON, "-m", "blend"], cwd=repo, branch="wf/order", samples=1)
    result = run_apply(request, planner=planner)
    kept = [e.slug for e in result.ledger.entries if e.outcome == KEPT]
    declined = [n.reason for n in result.plan.not_proposed if n.slug == "block-dim-spread"]
    return listed[0], kept, result.ledger.total.structure["identities"], declined


@pytest.fixture(scope="module")
def both_orders(tmp_path_factory):
    root = tmp_path_factory.mktemp("order")
    return {order: applied(root, order) for order in ("planned", "reversed")}


def test_both_orders_keep_the_overloads_and_decline_the_split(both_orders):
    first_listed = {order: listed[0] for order, (listed, *_) in both_orders.items()}
    assert first_listed["planned"] != first_listed["reversed"]  # the planner's lists really differ
    for _, kept, _, declined in both_orders.values():
        assert "late-overloads" in kept and "block-dim-spread" not in kept
        assert any("would build 3 modules where it builds 2 now" in reason for reason in declined)


def test_both_orders_reach_one_build_per_block_size(both_orders):
    (before, after), (before_r, after_r) = (both_orders[o][2] for o in ("planned", "reversed"))
    assert before == before_r == 3 and after == after_r == 2
