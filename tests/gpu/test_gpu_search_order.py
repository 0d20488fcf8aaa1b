"""apply on block-size variants plus late generic instances reaches the fewest identities in either plan order.

The fixture `gpu_overloads` launches generic kernels at two CUDA block sizes and instantiates new types after
its module loaded. Registering the overloads on the unsplit module grows every block-size variant; after the
split by block size it removes the late rebuilds. apply tries splits first and retries what a kept fix changed,
so the planner's order must not matter. Run on a GPU machine with `python -m pytest -q tests/gpu`.
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
    return listed[0], kept, result.ledger.total.structure["identities"]


@pytest.fixture(scope="module")
def both_orders(tmp_path_factory):
    root = tmp_path_factory.mktemp("order")
    return {order: applied(root, order) for order in ("planned", "reversed")}


def test_both_orders_keep_the_split_and_the_overloads(both_orders):
    first_listed = {order: listed[0] for order, (listed, _, _) in both_orders.items()}
    assert first_listed["planned"] != first_listed["reversed"]  # the planner's lists really differ
    for _, kept, _ in both_orders.values():
        assert {"block-dim-spread", "late-overloads"} <= set(kept)
        assert kept.index("block-dim-spread") < kept.index("late-overloads")  # the split, then overloads on its parts


def test_both_orders_reach_the_same_fewest_identities(both_orders):
    (before, after), (before_r, after_r) = (both_orders[o][2] for o in ("planned", "reversed"))
    assert before == before_r and after == after_r < before
