"""A fix that trades build time for kernel time (MathDx off, on CUDA) is measured both ways and, without
consent, offered with both numbers instead of committed.

CPU has no MathDx, so a real startup fix of the four-stage pipeline stands in, marked as a trade-off.
"""

from __future__ import annotations

import pytest

from codemods.specs import HoistOptionsArgs
from tests.apply.conftest import PIPELINE, PYTHON, git, init_repo
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import OFFERED
from warp_fix.metrics import COLD_MODULE, KERNEL
from warp_fix.model import CONSENT, Fix, Plan

TRADE_OFF = Fix(
    id="F1",
    slug="late-module-options",
    title="Set the forward stage's options before its first build",
    description="Stands in for a build-time/kernel-time trade-off.",
    safety=CONSENT,
    codemod="hoist_options",
    places=(HoistOptionsArgs(file="pipeline/forward.py", function="forward_only"),),
    files=["pipeline/forward.py"],
    allow_options=["enable_backward"],
    measure_kernels=True,
)


@pytest.fixture(scope="module")
def offered(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("user") / "pipeline", PIPELINE)
    request = build_request(command=[PYTHON, "-m", "pipeline"], cwd=repo, branch="wf/trade", samples=3)
    result = run_apply(request, planner=lambda *a: Plan(command=[], fixes=[TRADE_OFF]))
    return repo, result


def test_without_consent_it_is_measured_and_offered_not_committed(offered):
    repo, result = offered
    (entry,) = result.ledger.entries
    assert entry.outcome == OFFERED, entry.reason
    assert entry.commit is None
    assert not git(repo, "branch", "--list", "wf/trade")  # nothing committed: no empty branch is left
    kernel = entry.numbers.timing_of(KERNEL)
    if kernel is not None and kernel.significant and kernel.delta > 0:  # noise on a loaded machine
        assert "kernels slower beyond the noise band" in entry.reason
    else:
        assert "rerun with --allow late-module-options" in entry.reason


def test_both_numbers_are_there_with_kernel_time_from_three_samples_per_arm(offered):
    _, result = offered
    (entry,) = result.ledger.entries
    kernel = entry.numbers.timing_of(KERNEL)
    assert kernel is not None and kernel.before.median > 0 and kernel.after.median > 0
    assert (len(kernel.before.values), len(kernel.after.values)) == (3, 3)
    assert entry.numbers.timing_of(COLD_MODULE) is not None
    assert COLD_MODULE.label in entry.reason and KERNEL.label in entry.reason
