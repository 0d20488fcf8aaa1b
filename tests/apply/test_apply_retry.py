"""A real CPU apply in which a dropped fix is tried again after a kept fix changed its module.

`stage.ops` builds its module twice: `scale` at first launch, then again with backward off and the
lazily defined `shift`. Moving `shift` to module scope alone (F1) only makes the first build bigger:
dropped. Setting the options at module scope (F2) removes the backward code of the first build: kept.
Now F1 removes the second build, so it is tried again and kept: one build is left.
"""

from __future__ import annotations

import pytest

from codemods.specs import HoistOptionsArgs, KernelsToModuleScopeArgs
from tests.apply.conftest import PYTHON, init_repo
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import DROPPED, KEPT
from warp_fix.model import SAFE, Fix, Plan

STAGE = {
    "stage/__init__.py": "",
    "stage/ops.py": """
        import warp as wp


        @wp.kernel
        def scale(a: wp.array(dtype=float)):
            i = wp.tid()
            a[i] = a[i] * 2.0


        def forward_only():
            wp.set_module_options({"enable_backward": False})


        def make_shift():
            @wp.kernel
            def shift(a: wp.array(dtype=float)):
                i = wp.tid()
                a[i] = a[i] + 1.0

            return shift


        def run(a):
            wp.launch(scale, dim=a.shape[0], inputs=[a], device="cpu")
            forward_only()
            wp.launch(make_shift(), dim=a.shape[0], inputs=[a], device="cpu")
    """,
    "stage/__main__.py": """
        import warp as wp

        from stage import ops

        a = wp.full(8, 1.0, dtype=float, device="cpu")
        ops.run(a)
        print("total", float(a.numpy().sum()))
    """,
    ".gitignore": "__pycache__/\n",
}

MOVE = Fix(
    "F1",
    "kernel-after-load",
    "Define shift at module scope",
    "",
    SAFE,
    "kernels_to_module_scope",
    (KernelsToModuleScopeArgs(file="stage/ops.py", factory="make_shift", kernels=["shift"]),),
    ["stage/ops.py"],
)
HOIST = Fix(
    "F2",
    "late-module-options",
    "Set the stage's options at import",
    "",
    SAFE,
    "hoist_options",
    (HoistOptionsArgs(file="stage/ops.py", function="forward_only"),),
    ["stage/ops.py"],
    allow_options=["enable_backward"],
)


@pytest.fixture(scope="module")
def applied(tmp_path_factory):
    repo = init_repo(tmp_path_factory.mktemp("user") / "stage", STAGE)
    # Up to 5 pairs per arm: the retry's structural win must not be dropped because a busy CI machine held its
    # timing against it for three pairs in a row (rule 6); the verdicts here are about the retry, not the rule.
    request = build_request(command=[PYTHON, "-m", "stage"], cwd=repo, branch="wf/retry", samples=5)
    return run_apply(request, planner=lambda report, root, command: Plan([], [MOVE, HOIST]))


def test_dropped_fix_is_kept_when_tried_again_after_the_kept_fix(applied):
    entries = [(e.fix_id, e.title, e.outcome, e.retry_of) for e in applied.ledger.entries]
    assert entries == [
        ("F1", MOVE.title, DROPPED, ""),
        ("F2", HOIST.title, KEPT, ""),
        ("F3", MOVE.title, KEPT, "F1"),
    ], [e.reason for e in applied.ledger.entries]
    assert "structure grew: generated source bytes" in applied.ledger.entries[0].reason
    retried = applied.ledger.entries[2].numbers
    assert retried.structure["identities"] == (2, 1)
    assert applied.ledger.total.structure["identities"] == (2, 1)
    assert "again after F1" in applied.ledger_files[1].read_text()
